// The tree view's pictures: the canvas frame (edges, boxes, text, marks),
// the dense dot view of a zoomed-out tree, the minimap, the ensemble's
// overview bars and the colour legend.
//
// The canvas functions take the view's state `s`, built in tree_view.js
// (newViewState): it holds the view's current tree, layout, colours and
// theme, and it carries the view's own helpers (colourOf, screenOf, firstView, ...). What a
// frame wrote is left in `s.drawn` for tests and automation.

import { bttClassColour, bttRGBString, bttTint, bttDiverging, bttSequential, bttFormat, bttElement, bttTextOn } from "./common.js";
import { FONT_PX, LINE_H, MIN_BOX_W, MARK_PRUNED, MARK_REMOVED, MARK_RESPLIT, MARK_CHANGED, className, featureName, lessThan, nodeLines, edgeLabels } from "./tree_model.js";
import { TEXT_MIN_SCALE } from "./tree_camera.js";
import { drawSplitHistogram, HIST_MIN_SCALE } from "./tree_node_pictures.js";

export function drawTreeFrame(s, ctx, width, height) {
  const { model, root, tree, view, x, visible, collapsed, onPath, matches, theme, colours } = s;
  const { colourOf, screenOf, firstView, resetColours } = s;
  if (!tree) return;
  if (!view.fitted) {
    firstView();
    return;
  }
  if (!colours) resetColours();
  const drawn = (s.drawn = []); // what this frame writes (for tests)
  s.leafMixes = []; // the leaves' class-mix bars of this frame (for tests)
  s.histograms = []; // the split nodes' histograms of this frame (for tests)
  const sx = view.sx;
  const ts = Math.min(view.sx, view.sy); // text scale
  const boxW = tree.boxW * sx;
  const boxH = tree.boxH * view.sy;
  const levelH = tree.level * view.sy;
  const minWX = (-view.tx - tree.slot * sx) / sx;
  const maxWX = (width - view.tx + tree.slot * sx) / sx;
  const selected = model.get("selected_node");
  const dense = boxW < 3 || boxH < 2;
  if (dense && root.dataset.histograms !== "0") root.dataset.histograms = "0";
  const withText = ts >= TEXT_MIN_SCALE && boxW >= 30;
  root.dataset.textShown = withText ? "1" : "0";
  if (dense) drawTreeDense(s, ctx, width, height);
  // edges: one path for all, one for edges into removed nodes, then the decision path
  const labels = [];
  const edge = (i, child, path, label) => {
    const cx = x[child];
    const px = x[i];
    if ((px < minWX && cx < minWX) || (px > maxWX && cx > maxWX)) return;
    const top = tree.depth[i] * levelH + view.ty;
    if (top > height || top + levelH + boxH < 0) return;
    const x0 = px * sx + view.tx;
    const x1 = cx * sx + view.tx;
    path.moveTo(x0, top + boxH);
    path.lineTo(x1, top + levelH);
    if (label) labels.push([label, x0 + 0.5 * (x1 - x0), top + boxH + 0.5 * (levelH - boxH)]);
  };
  const solid = new Path2D();
  const faded = new Path2D();
  const onPathEdges = new Path2D();
  let anyFaded = false;
  let anyPath = false;
  if (!dense) {
    for (let k = 0; k < visible.length; k++) {
      const i = visible[k];
      if (tree.left[i] < 0 || collapsed[i]) continue;
      const kids = tree.kids(i);
      const words = withText ? edgeLabels(tree, i) : [];
      if (tree.marks[kids[0]] === MARK_REMOVED || tree.marks[kids[0]] === MARK_CHANGED) {
        kids.forEach((kid, k) => edge(i, kid, faded, words[k]));
        anyFaded = true;
        continue;
      }
      kids.forEach((kid, k) => {
        if (onPath && onPath[i] && onPath[kid]) {
          edge(i, kid, onPathEdges, words[k]);
          anyPath = true;
        } else edge(i, kid, solid, words[k]);
      });
    }
  } else if (onPath) {
    for (let k = 0; k < visible.length; k++) {
      const i = visible[k];
      if (tree.left[i] < 0 || collapsed[i] || !onPath[i]) continue;
      for (const kid of tree.kids(i)) if (onPath[kid]) edge(i, kid, onPathEdges);
      anyPath = true;
    }
  }
  ctx.lineWidth = 1;
  ctx.strokeStyle = theme.edge;
  ctx.stroke(solid);
  if (anyFaded) {
    ctx.strokeStyle = theme.edge;
    ctx.globalAlpha = 0.5;
    ctx.setLineDash([3, 3]);
    ctx.stroke(faded);
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
  }
  if (anyPath) {
    ctx.strokeStyle = theme.path;
    ctx.lineWidth = 3;
    ctx.stroke(onPathEdges);
  }
  if (dense) return;
  // edge labels on a patch of background, so lines do not cross the text
  const font = `${(FONT_PX * ts).toFixed(2)}px sans-serif`;
  ctx.font = font;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  if (withText) {
    for (const [label, lx, ly] of labels) {
      const w = ctx.measureText(label).width + 6 * ts;
      ctx.fillStyle = theme.background;
      ctx.fillRect(lx - w / 2, ly - 7 * ts, w, 14 * ts);
      ctx.fillStyle = theme.muted;
      ctx.fillText(label, lx, ly);
      if (drawn.length < 4000) drawn.push({ edge: true, lines: [label], font: FONT_PX * ts, fg: theme.muted, bg: theme.background, scale: ts, width: w });
    }
  }
  const tiny = boxW < 6;
  // level of detail: large enough, split nodes show their histogram above
  // their text (leaves are shorter: no picture above their text)
  const pictures = withText && tree.hist && ts >= HIST_MIN_SCALE;
  const histH = tree.histH * view.sy;
  const rowValues = pictures && onPath ? new Map((model.get("path_values") || []).map(([name, value]) => [name, value])) : null;
  for (let k = 0; k < visible.length; k++) {
    const i = visible[k];
    if (x[i] < minWX || x[i] > maxWX) continue;
    const [cx, top] = screenOf(i);
    if (top > height || top + boxH < 0) continue;
    const mark = tree.marks[i];
    const isFaded = mark === MARK_REMOVED || mark === MARK_CHANGED;
    ctx.globalAlpha = isFaded ? 0.45 : 1;
    const fill = bttRGBString(colourOf(i));
    ctx.fillStyle = fill;
    if (tiny) {
      ctx.fillRect(cx - Math.max(2, boxW) / 2, top, Math.max(2, boxW), Math.max(2, boxH));
      continue;
    }
    const w = tree.boxWidths[i] * sx;
    const left = cx - w / 2;
    const isLeaf = tree.left[i] < 0;
    const h = isLeaf ? boxH - histH : boxH;
    ctx.fillRect(left, top, w, h);
    let border = "#6b6b6b";
    let lineWidth = 1;
    if (mark === MARK_PRUNED) {
      border = "#c62828";
      lineWidth = 2.5;
      ctx.setLineDash([5, 3]);
    } else if (mark === MARK_RESPLIT) {
      border = "#e08a00";
      lineWidth = 2.5;
    }
    if (onPath && onPath[i]) {
      border = theme.path;
      lineWidth = 3;
    }
    if (matches && matches[i]) {
      border = "#d81b60";
      lineWidth = 3;
    }
    if (i === selected) {
      border = theme.text;
      lineWidth = 3.5;
    }
    ctx.strokeStyle = border;
    ctx.lineWidth = lineWidth;
    ctx.strokeRect(left, top, w, h);
    ctx.setLineDash([]);
    const picture = pictures && !isLeaf;
    if (picture) {
      const value = rowValues && onPath[i] ? rowValues.get(featureName(model, tree.feature[i])) : undefined;
      drawSplitHistogram(s, ctx, i, left, top, w, histH, ts, value);
    }
    if (tree.left[i] >= 0 && collapsed[i]) {
      // a collapsed subtree: a small "+" tab below the box
      ctx.fillStyle = theme.muted;
      ctx.fillRect(cx - 6, top + boxH + 1, 12, 9);
      ctx.fillStyle = theme.background;
      ctx.fillRect(cx - 3, top + boxH + 5, 6, 1.5);
      ctx.fillRect(cx - 0.75, top + boxH + 2.5, 1.5, 6);
    }
    if (withText) {
      const lines = nodeLines(model, tree, i);
      const fg = bttTextOn(colourOf(i));
      ctx.fillStyle = fg;
      const lineH = LINE_H * ts;
      const textTop = picture ? top + histH : top;
      const first = textTop + (picture ? h - histH : h) / 2 - ((lines.length - 1) * lineH) / 2;
      for (let k2 = 0; k2 < lines.length; k2++) ctx.fillText(lines[k2], cx, first + k2 * lineH);
      if (drawn.length < 4000) drawn.push({ node: i, lines, font: FONT_PX * ts, fg, bg: fill, faded: isFaded, scale: ts, width: w });
      if (ts >= LEAF_BAR_SCALE && isLeaf) drawLeafMix(s, ctx, i, left, top + h, w, ts);
    }
  }
  ctx.globalAlpha = 1;
  if (root.dataset.histograms !== String(s.histograms.length)) root.dataset.histograms = String(s.histograms.length);
  if (withText && onPath) drawPathValues(s, ctx, ts, boxH);
  drawTreeMinimap(s, ctx, width, height);
}

// Large enough (ts >= LEAF_BAR_SCALE), a leaf shows its class mix under its
// box: a bar of the classes' shares, as long as the box for the leaf with the
// most training rows (MIN_BOX_W) and shorter in proportion (a regression leaf: its value's
// place between the smallest and largest leaf values).
const LEAF_BAR_SCALE = 1;
function drawLeafMix(s, ctx, i, left, bottom, w, ts) {
  const { model, tree } = s;
  const h = 5 * ts;
  const y = bottom + 2 * ts;
  const rows = tree.samples[i] >= 0 && tree.maxLeafSamples > 0 ? tree.samples[i] / tree.maxLeafSamples : 1;
  const length = Math.max(2, MIN_BOX_W * s.view.sx * rows); // every box is at least MIN_BOX_W wide
  const segments = [];
  if (model.get("value_kind") === "fractions" && tree.width > 1) {
    let at = left;
    for (let c = 0; c < tree.width; c++) {
      const share = tree.value[i * tree.width + c];
      if (!(share > 0)) continue;
      ctx.fillStyle = bttClassColour(c);
      ctx.fillRect(at, y, share * length, h);
      segments.push([c, share]);
      at += share * length;
    }
  } else {
    const limit = tree.valueLimit || 1;
    const place = (tree.value[i * tree.width] / limit + 1) / 2; // -limit .. +limit -> 0 .. 1
    ctx.fillStyle = s.theme.border;
    ctx.fillRect(left, y + h / 2 - 0.5, length, 1);
    ctx.fillStyle = s.theme.path;
    ctx.fillRect(left + Math.max(0, Math.min(1, place)) * length - 1.5, y, 3, h);
    segments.push(["value", place]);
  }
  ctx.strokeStyle = s.theme.border;
  ctx.lineWidth = 1;
  ctx.strokeRect(left, y, length, h);
  if (s.leafMixes.length < 4000) s.leafMixes.push({ node: i, rows, segments, width: length });
}

// The end of a row's path: a box under its last node with the row's values
// of the features split on along the path.
function drawPathValues(s, ctx, ts, boxH) {
  const { model, tree, x, theme, screenOf, drawn } = s;
  const path = model.get("path") || [];
  const values = model.get("path_values") || [];
  const end = path.length ? path[path.length - 1] : -1;
  if (!values.length || end < 0 || end >= tree.n || Number.isNaN(x[end])) return;
  const lines = ["this row:", ...values.map(([name, value]) => `${name} = ${value === null ? "missing" : bttFormat(value, 4)}`)];
  const lineH = LINE_H * ts;
  const widest = Math.max(...lines.map((line) => ctx.measureText(line).width));
  const w = widest + 12 * ts;
  const h = lines.length * lineH + 8 * ts;
  const [cx, top] = screenOf(end);
  const left = cx - w / 2;
  const y0 = top + boxH + 8 * ts;
  ctx.fillStyle = theme.background;
  ctx.fillRect(left, y0, w, h);
  ctx.strokeStyle = theme.path;
  ctx.lineWidth = 2;
  ctx.strokeRect(left, y0, w, h);
  ctx.fillStyle = theme.text;
  ctx.textAlign = "left";
  lines.forEach((line, k) => ctx.fillText(line, left + 6 * ts, y0 + 4 * ts + (k + 0.5) * lineH));
  ctx.textAlign = "center";
  if (drawn.length < 4000) drawn.push({ pathValues: true, lines, font: FONT_PX * ts, fg: theme.text, bg: theme.background, scale: ts, width: w });
}

function drawTreeDense(s, ctx, width, height) {
  const { tree, view, visible, x, matches, colourOf } = s;
  // every node smaller than a few pixels: plot 2x2 dots into an image
  const ratio = window.devicePixelRatio || 1;
  const w = Math.round(width * ratio);
  const h = Math.round(height * ratio);
  const image = ctx.createImageData(w, h);
  const data = image.data;
  const sx = view.sx;
  const levelH = tree.level * view.sy;
  for (let k = 0; k < visible.length; k++) {
    const i = visible[k];
    const px = Math.round((x[i] * sx + view.tx) * ratio);
    const py = Math.round((tree.depth[i] * levelH + view.ty) * ratio);
    if (px < 0 || py < 0 || px >= w - 1 || py >= h - 1) continue;
    const rgb = matches && matches[i] ? 0xd81b60 : colourOf(i);
    const faded = tree.marks[i] === MARK_REMOVED || tree.marks[i] === MARK_CHANGED;
    const alpha = faded ? 90 : 255;
    for (let dy = 0; dy < 2; dy++) {
      for (let dx = 0; dx < 2; dx++) {
        const o = 4 * ((py + dy) * w + px + dx);
        data[o] = (rgb >> 16) & 255;
        data[o + 1] = (rgb >> 8) & 255;
        data[o + 2] = rgb & 255;
        data[o + 3] = alpha;
      }
    }
  }
  ctx.putImageData(image, 0, 0);
}

// The first corner (bottom right, bottom left, top right, top left) where a
// minimap of mw x mh pixels hides no node box; null when each would.
function minimapCorner(s, width, height, mw, mh) {
  const { tree, view, visible, x } = s;
  const halfW = (tree.boxW * view.sx) / 2 + 2; // the widest box: a bound for every node
  const boxH = tree.boxH * view.sy + 2;
  const levelH = tree.level * view.sy;
  const corners = [[width - mw - 8, height - mh - 8], [8, height - mh - 8], [width - mw - 8, 8], [8, 8]];
  for (const [ox, oy] of corners) {
    let free = true;
    for (let k = 0; k < visible.length && free; k++) {
      const i = visible[k];
      const cx = x[i] * view.sx + view.tx;
      if (cx + halfW < ox || cx - halfW > ox + mw) continue;
      const top = tree.depth[i] * levelH + view.ty;
      if (top + boxH < oy || top > oy + mh) continue;
      free = false;
    }
    if (free) return [ox, oy];
  }
  return null;
}

// "You are here": the whole visible tree in a corner, the view as a frame.
function drawTreeMinimap(s, ctx, width, height) {
  const { root, tree, view, bounds, visible, x, theme, worldHeight } = s;
  const worldW = bounds.maxX - bounds.minX + tree.slot;
  const worldH = worldHeight(bounds.maxDepth);
  const left = (bounds.minX - tree.slot / 2) * view.sx + view.tx;
  const top = view.ty;
  const shownAll = left >= -1 && left + worldW * view.sx <= width + 1 && top >= -1 && top + worldH * view.sy <= height + 1;
  root.dataset.minimap = shownAll ? "0" : "1";
  s.minimap = null;
  if (shownAll) return;
  if (s.minimapOff) {
    root.dataset.minimap = "off"; // hidden with the Map button
    return;
  }
  const mw = Math.min(160, width * 0.25);
  const mh = Math.max(24, Math.min(90, (mw * worldH) / worldW));
  const corner = minimapCorner(s, width, height, mw, mh);
  root.dataset.minimap = corner ? "1" : "hidden";
  if (!corner) return; // every corner would hide a node: no minimap
  const [ox, oy] = corner;
  s.minimap = { left: ox, top: oy, right: ox + mw, bottom: oy + mh };
  ctx.globalAlpha = 0.92;
  ctx.fillStyle = theme.background;
  ctx.fillRect(ox, oy, mw, mh);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = theme.border;
  ctx.lineWidth = 1;
  ctx.strokeRect(ox, oy, mw, mh);
  const kx = mw / worldW;
  const ky = mh / worldH;
  ctx.fillStyle = theme.edge;
  const step = Math.max(1, Math.floor(visible.length / 4000));
  for (let k = 0; k < visible.length; k += step) {
    const i = visible[k];
    ctx.fillRect(ox + (x[i] - bounds.minX + tree.slot / 2) * kx, oy + tree.depth[i] * tree.level * ky, 1.5, 1.5);
  }
  // the part of the world on screen
  const fx = ox + ((-view.tx) / view.sx - bounds.minX + tree.slot / 2) * kx;
  const fy = oy + ((-view.ty) / view.sy) * ky;
  ctx.strokeStyle = theme.path;
  ctx.lineWidth = 1.5;
  const x0 = Math.max(ox, fx);
  const y0 = Math.max(oy, fy);
  const x1 = Math.min(ox + mw, fx + (width / view.sx) * kx);
  const y1 = Math.min(oy + mh, fy + (height / view.sy) * ky);
  if (x1 > x0 && y1 > y0) ctx.strokeRect(x0, y0, Math.max(2, x1 - x0), Math.max(2, y1 - y0));
}

export function drawTreeOverview(s, ctx, width, height) {
  const { model, overviewHover, overviewLabel } = s;
  const info = model.get("overview") || {};
  const values = info.values || [];
  if (values.length < 2) return;
  let low = 0;
  let high = 0;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  const span = high - low || 1;
  const zero = height - 4 - ((0 - low) / span) * (height - 8);
  const barW = width / values.length;
  const chosen = model.get("selected_tree");
  values.forEach((value, k) => {
    const top = height - 4 - ((value - low) / span) * (height - 8);
    ctx.fillStyle = k === chosen ? "#c8453b" : k === overviewHover ? "#2d5a8c" : "#7c9cc4";
    ctx.fillRect(k * barW + (barW > 3 ? 0.5 : 0), Math.min(top, zero), Math.max(1, barW - (barW > 3 ? 1 : 0)), Math.max(1, Math.abs(zero - top)));
  });
  overviewLabel.textContent =
    `${values.length} trees, bar height: ${info.metric || ""}. Click a bar to show that tree` +
    (overviewHover >= 0 ? `: tree ${overviewHover} = ${bttFormat(values[overviewHover])}` : ".");
}

export function drawTreeLegend(model, legend, tree) {
  legend.textContent = "";
  if (!tree) return;
  const by = model.get("color_by");
  const kind = model.get("value_kind");
  const add = (colour, text, className = "btt-swatch") => {
    const item = bttElement("span", "btt-legend-item");
    const swatch = bttElement("span", className);
    swatch.style.background = colour;
    item.append(swatch, document.createTextNode(text));
    legend.appendChild(item);
  };
  const note = (text) => legend.appendChild(bttElement("span", "btt-legend-note", text));
  if (by === "prediction" && kind === "fractions" && tree.width > 1) {
    for (let j = 0; j < Math.min(tree.width, 10); j++) add(bttClassColour(j), className(model, j));
    add(bttTint(bttClassColour(0), 0.2), "pale: mixed classes", "btt-swatch");
    note("Colour: the node's majority class; the stronger the colour, the purer the node.");
  } else if (by === "prediction") {
    const what = kind === "margin" ? "margin (added to the raw score)" : "value";
    add(bttDiverging(-1, 1), `negative ${what}`);
    add(bttDiverging(1, 1), `positive ${what}`);
    note("The stronger the colour, the larger the value's size.");
  } else if (by === "data") {
    add(bttSequential(0.1), "few rows of X");
    add(bttSequential(1), "many rows of X");
  } else if (by !== "none") {
    add(bttSequential(0.1), `low ${by}`);
    add(bttSequential(1), `high ${by}`);
  }
  let pruned = 0;
  let resplit = 0;
  for (let i = 0; i < tree.n; i++) {
    if (tree.marks[i] === MARK_PRUNED) pruned++;
    if (tree.marks[i] === MARK_RESPLIT) resplit++;
  }
  if (pruned) add("transparent", `${pruned} pruned (red dashed)`, "btt-swatch btt-swatch-pruned");
  if (resplit) add("transparent", `${resplit} re-split (orange)`, "btt-swatch btt-swatch-resplit");
  if ((model.get("path") || []).length) add("transparent", "decision path of the chosen row", "btt-swatch btt-swatch-path");
  const counts = [];
  counts.push(tree.samples[0] >= 0 ? "train: training rows at the node" : "cover: the library's hessian sum (no row counts stored)");
  if (tree.dataCount) counts.push("X: rows of the X you passed");
  counts.push(`edges: yes / no, whether the node's condition holds (${lessThan(model) ? "x < t" : "x ≤ t"})`);
  note(counts.join(" · ") + ".");
}
