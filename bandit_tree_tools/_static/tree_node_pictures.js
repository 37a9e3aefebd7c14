// The split nodes' pictures: drawn large enough, a split node shows the
// histogram of its split feature over the rows of X that reach it, stacked
// by class of y (one series without y; for regression, the mean of y in
// each bin as dots), the threshold as a dashed line with a wedge under the
// axis, and, on the chosen row's path, the row's value in pink.
//
// A categorical split node (a category set sends rows left) shows one bar
// per category instead, stacked the same way, the categories it sends left
// marked with a wedge under their bars (not on a multiway node: each of its
// categories has its own branch), and the chosen row's category in pink.
//
// The counts come from Python (_payload.split_histograms), only for trees
// small enough to send them: hist_index maps a node to its split number k;
// bins [k * bins, (k + 1) * bins) of hist_counts (x series) split
// [hist_low[k], hist_high[k]] evenly. A categorical split's categories are
// entries [hist_cat_start[k], hist_cat_start[k + 1]) of hist_cat_value and
// hist_cat_counts (x series).

import { bttColumn, bttClassColour } from "./common.js";

export const HIST_H = 46; // world height of the picture above a split node's text
export const HIST_MIN_SCALE = 0.6; // smaller: the boxes of text alone
const ROW_COLOUR = "#d81b60";

export function readHistograms(t) {
  if (!t.hist_counts || !t.hist_index) return null;
  const hist = {
    bins: t.hist_bins,
    series: t.hist_series,
    index: bttColumn(t.hist_index, Int32Array),
    low: bttColumn(t.hist_low, Float64Array),
    high: bttColumn(t.hist_high, Float64Array),
    counts: bttColumn(t.hist_counts, Uint32Array),
    missing: bttColumn(t.hist_missing, Uint32Array),
    target: bttColumn(t.hist_target, Float32Array),
    targetLow: t.hist_target_low,
    targetHigh: t.hist_target_high,
    catStart: bttColumn(t.hist_cat_start, Int32Array),
    catValue: bttColumn(t.hist_cat_value, Float64Array),
    catCounts: bttColumn(t.hist_cat_counts, Uint32Array),
    catTarget: bttColumn(t.hist_cat_target, Float32Array),
    catOther: bttColumn(t.hist_cat_other, Uint32Array),
  };
  // the tallest stacked bar of each split: its histogram's own scale
  const splits = hist.low.length;
  const cells = hist.bins * hist.series;
  hist.peak = new Float64Array(splits);
  for (let k = 0; k < splits; k++) {
    let peak = 0;
    for (let b = 0; b < hist.bins; b++) {
      let total = 0;
      for (let c = 0; c < hist.series; c++) total += hist.counts[k * cells + b * hist.series + c];
      if (total > peak) peak = total;
    }
    if (hist.catStart) {
      for (let e = hist.catStart[k]; e < hist.catStart[k + 1]; e++) {
        let total = 0;
        for (let c = 0; c < hist.series; c++) total += hist.catCounts[e * hist.series + c];
        if (total > peak) peak = total;
      }
    }
    hist.peak[k] = peak;
  }
  return hist;
}

// Whether categorical node i sends category c left (its bitset).
function sendsLeft(tree, i, c) {
  if (!(c >= 0) || c >= 32 * tree.nWords) return false;
  return ((tree.categoryLeft[i * tree.nWords + Math.floor(c / 32)] >>> c % 32) & 1) === 1;
}

// Node i's picture in the box area (left, top, w x h pixels); rowValue: the
// chosen row's value of the split feature (undefined: none). What was drawn
// is added to s.histograms (for tests).
export function drawSplitHistogram(s, ctx, i, left, top, w, h, ts, rowValue) {
  const { tree, theme } = s;
  const hist = tree.hist;
  const k = hist.index[i];
  if (k < 0) return;
  const pad = 5 * ts;
  const x0 = left + pad;
  const x1 = left + w - pad;
  const y0 = top + 4 * ts;
  const y1 = top + h - 3 * ts; // the axis
  ctx.fillStyle = theme.background;
  ctx.fillRect(left + 1, top + 1, w - 2, h - 1);
  if (tree.isCategorical[i] && hist.catStart) {
    drawCategoryBars(s, ctx, i, k, { x0, x1, y0, y1 }, ts, rowValue);
    return;
  }
  const bins = hist.bins;
  const series = hist.series;
  const base = k * bins * series;
  const peak = hist.peak[k] || 1;
  const barW = (x1 - x0) / bins;
  const gap = barW > 3 ? 0.5 : 0;
  let total = 0;
  for (let b = 0; b < bins; b++) {
    let stacked = 0;
    for (let c = 0; c < series; c++) {
      const n = hist.counts[base + b * series + c];
      if (!n) continue;
      const barH = (n / peak) * (y1 - y0);
      ctx.fillStyle = series > 1 ? bttClassColour(c) : theme.edge;
      ctx.fillRect(x0 + b * barW + gap, y1 - stacked - barH, Math.max(1, barW - 2 * gap), barH);
      stacked += barH;
      total += n;
    }
  }
  const low = hist.low[k];
  const span = hist.high[k] - low || 1;
  const px = (value) => x0 + ((Math.max(low, Math.min(low + span, value)) - low) / span) * (x1 - x0);
  if (hist.target) {
    // regression: the mean of y in each bin, between the smallest and largest y
    const tLow = hist.targetLow;
    const tSpan = hist.targetHigh - tLow || 1;
    ctx.fillStyle = theme.path;
    for (let b = 0; b < bins; b++) {
      const mean = hist.target[k * bins + b];
      if (!Number.isFinite(mean)) continue;
      const y = y1 - ((mean - tLow) / tSpan) * (y1 - y0);
      ctx.fillRect(x0 + (b + 0.5) * barW - 1.5 * ts, y - 1.5 * ts, 3 * ts, 3 * ts);
    }
  }
  ctx.strokeStyle = theme.muted;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x0, y1 + 0.5);
  ctx.lineTo(x1, y1 + 0.5);
  ctx.stroke();
  let thresholdX = null;
  if (!tree.isCategorical[i] && Number.isFinite(tree.threshold[i])) {
    thresholdX = px(tree.threshold[i]);
    ctx.strokeStyle = theme.text;
    ctx.setLineDash([3, 2]);
    ctx.beginPath();
    ctx.moveTo(thresholdX, y0);
    ctx.lineTo(thresholdX, y1);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = theme.text;
    ctx.beginPath();
    ctx.moveTo(thresholdX, y1);
    ctx.lineTo(thresholdX - 3 * ts, y1 + 3 * ts);
    ctx.lineTo(thresholdX + 3 * ts, y1 + 3 * ts);
    ctx.fill();
  }
  let rowX = null;
  if (rowValue !== undefined && rowValue !== null && Number.isFinite(rowValue)) {
    rowX = px(rowValue);
    ctx.strokeStyle = ROW_COLOUR;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(rowX, y0 + 3 * ts);
    ctx.lineTo(rowX, y1);
    ctx.stroke();
    ctx.fillStyle = ROW_COLOUR;
    ctx.beginPath();
    ctx.moveTo(rowX - 3.5 * ts, y0 - 1 * ts);
    ctx.lineTo(rowX + 3.5 * ts, y0 - 1 * ts);
    ctx.lineTo(rowX, y0 + 4 * ts);
    ctx.fill();
  }
  if (s.histograms.length < 4000) {
    s.histograms.push({ node: i, bins, series, rows: total, missing: hist.missing[k], left: x0, right: x1, top: y0, bottom: y1, thresholdX, rowX });
  }
}

// A categorical node's picture: one bar per category of the rows reaching
// it (ascending codes), stacked by class, in the plot box { x0, x1, y0, y1 }.
function drawCategoryBars(s, ctx, i, k, box, ts, rowValue) {
  const { tree, theme } = s;
  const hist = tree.hist;
  const { x0, x1, y0, y1 } = box;
  const series = hist.series;
  const first = hist.catStart[k];
  const n = hist.catStart[k + 1] - first;
  const peak = hist.peak[k] || 1;
  const slot = (x1 - x0) / Math.max(1, n);
  const barW = Math.max(1, slot * 0.7);
  const multiway = tree.groups && tree.groups.has(i);
  let total = 0;
  let marked = 0;
  let rowX = null;
  const rowCategory = rowValue !== undefined && rowValue !== null && Number.isFinite(rowValue) ? Math.trunc(rowValue) : null;
  const bars = [];
  for (let b = 0; b < n; b++) {
    const e = first + b;
    const centre = x0 + (b + 0.5) * slot;
    let stacked = 0;
    for (let c = 0; c < series; c++) {
      const count = hist.catCounts[e * series + c];
      if (!count) continue;
      const barH = (count / peak) * (y1 - y0);
      ctx.fillStyle = series > 1 ? bttClassColour(c) : theme.edge;
      ctx.fillRect(centre - barW / 2, y1 - stacked - barH, barW, barH);
      stacked += barH;
      total += count;
    }
    if (hist.catTarget) {
      // regression: the mean of y in the category, between the smallest and largest y
      const mean = hist.catTarget[e];
      if (Number.isFinite(mean)) {
        const tSpan = hist.targetHigh - hist.targetLow || 1;
        const y = y1 - ((mean - hist.targetLow) / tSpan) * (y1 - y0);
        ctx.fillStyle = theme.path;
        ctx.fillRect(centre - 1.5 * ts, y - 1.5 * ts, 3 * ts, 3 * ts);
      }
    }
    const category = hist.catValue[e];
    bars.push({ category, x: centre, width: barW });
    if (!multiway && sendsLeft(tree, i, category)) {
      // sent left: a wedge under the axis, as a threshold's
      ctx.fillStyle = theme.text;
      ctx.beginPath();
      ctx.moveTo(centre, y1);
      ctx.lineTo(centre - 3 * ts, y1 + 3 * ts);
      ctx.lineTo(centre + 3 * ts, y1 + 3 * ts);
      ctx.fill();
      marked += 1;
    }
    if (rowCategory !== null && category === rowCategory) {
      rowX = centre;
      ctx.fillStyle = ROW_COLOUR;
      ctx.beginPath();
      ctx.moveTo(centre - 3.5 * ts, y0 - 1 * ts);
      ctx.lineTo(centre + 3.5 * ts, y0 - 1 * ts);
      ctx.lineTo(centre, y0 + 4 * ts);
      ctx.fill();
    }
  }
  ctx.strokeStyle = theme.muted;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x0, y1 + 0.5);
  ctx.lineTo(x1, y1 + 0.5);
  ctx.stroke();
  if (s.histograms.length < 4000) {
    s.histograms.push({ node: i, categorical: true, bins: n, bars, series, rows: total, missing: hist.missing[k],
      other: hist.catOther ? hist.catOther[k] : 0, left: x0, right: x1, top: y0, bottom: y1, leftMarks: marked, thresholdX: null, rowX });
  }
}
