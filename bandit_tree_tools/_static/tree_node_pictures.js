// The split nodes' pictures: drawn large enough, a split node shows the
// histogram of its split feature over the rows of X that reach it, stacked
// by class of y (one series without y; for regression, the mean of y in
// each bin as dots), the threshold as a dashed line with a wedge under the
// axis, and, on the chosen row's path, the row's value in pink.
//
// The counts come from Python (_payload.split_histograms), only for trees
// small enough to send them: hist_index maps a node to its split number k;
// bins [k * bins, (k + 1) * bins) of hist_counts (x series) split
// [hist_low[k], hist_high[k]] evenly.

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
    hist.peak[k] = peak;
  }
  return hist;
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
