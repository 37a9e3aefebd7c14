// The tree view's reading of the payload: columns, labels, colours, the
// node details, the layout of the visible nodes and the search.

// Node boxes are sized to their text: every line of every node is measured
// at the base font (world units = pixels at zoom 1), long feature names are
// wrapped, never cut.
import { bttColumn, bttClassColour, bttTintRGB, bttDivergingRGB, bttSequentialRGB, bttFormat, bttElement, bttThreshold } from "./common.js";
import { readHistograms, HIST_H } from "./tree_node_pictures.js";

export const FONT_PX = 12;
export const LINE_H = 15;
export const MIN_BOX_W = 84;
const MAX_TEXT_W = 200; // wider feature names wrap onto more lines
const GAP_X = 18; // between neighbouring boxes
const GAP_Y = 46; // between levels: room for the edge labels
const MEASURED_NODES = 20000; // big trees: boxes sized from the first nodes
export const MARK_PRUNED = 1;
export const MARK_REMOVED = 2;
export const MARK_RESPLIT = 3;
export const MARK_CHANGED = 4;
const MARK_TEXT = ["", "pruned: now a leaf", "removed with a pruned ancestor", "re-split", "replaced below a re-split"];

let bttMeasureContext = null;
export function textWidth(text) {
  if (!bttMeasureContext) {
    bttMeasureContext = document.createElement("canvas").getContext("2d");
    bttMeasureContext.font = `${FONT_PX}px sans-serif`;
  }
  return bttMeasureContext.measureText(text).width;
}

// Break text into lines no wider than width: at spaces, underscores,
// dots or brackets when possible, else anywhere.
function wrapText(text, width) {
  if (textWidth(text) <= width) return [text];
  const lines = [];
  let rest = text;
  while (rest.length && textWidth(rest) > width) {
    let cut = 1;
    while (cut < rest.length && textWidth(rest.slice(0, cut + 1)) <= width) cut++;
    const soft = Math.max(rest.lastIndexOf(" ", cut), rest.lastIndexOf("_", cut - 1) + 1,
      rest.lastIndexOf(".", cut - 1) + 1, rest.lastIndexOf("(", cut));
    if (soft > cut / 3) cut = soft;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length) lines.push(rest);
  return lines;
}

export function readTree(model) {
  const t = model.get("tree");
  if (!t || !t.n_nodes) return null;
  const tree = {
    n: t.n_nodes,
    width: t.n_values,
    left: bttColumn(t.children_left, Int32Array),
    right: bttColumn(t.children_right, Int32Array),
    feature: bttColumn(t.feature, Int32Array),
    threshold: bttColumn(t.threshold, Float64Array),
    isCategorical: bttColumn(t.is_categorical, Uint8Array),
    value: bttColumn(t.value, Float32Array),
    samples: bttColumn(t.n_node_samples, Float32Array),
    weighted: bttColumn(t.weighted_n_node_samples, Float32Array),
    impurity: bttColumn(t.impurity, Float32Array),
    depth: bttColumn(t.depth, Int32Array),
    marks: bttColumn(t.marks, Uint8Array),
    dataCount: bttColumn(t.data_count, Float32Array),
    dataTarget: bttColumn(t.data_target, Float32Array),
    dataWidth: t.data_width || 0,
    nWords: t.n_words || 0,
    categoryLeft: bttColumn(t.category_left, Uint32Array),
    hist: readHistograms(t), // the split nodes' pictures (null: none sent)
  };
  // colour scales need the range of leaf values and of counts
  let limit = 0;
  let maxSamples = 0;
  let maxLeafSamples = 0;
  let maxImpurity = 0;
  tree.parent = new Int32Array(tree.n).fill(-1);
  for (let i = 0; i < tree.n; i++) {
    if (tree.left[i] < 0) {
      limit = Math.max(limit, Math.abs(tree.value[i * tree.width]));
      if (tree.samples[i] > maxLeafSamples) maxLeafSamples = tree.samples[i];
    } else {
      tree.parent[tree.left[i]] = i;
      tree.parent[tree.right[i]] = i;
    }
    if (tree.samples[i] > maxSamples) maxSamples = tree.samples[i];
    if (tree.impurity[i] > maxImpurity) maxImpurity = tree.impurity[i];
  }
  tree.valueLimit = limit;
  tree.maxSamples = maxSamples;
  tree.maxLeafSamples = maxLeafSamples;
  tree.maxImpurity = maxImpurity;
  groupMultiway(model, tree);
  measureTree(model, tree);
  return tree;
}

// Multiway splits (TSDT) arrive as chains of binary category-set splits on
// one feature: each link sends one category left, the rest right, and the
// last right child takes every other category. With the "multiway" trait
// a chain is drawn as one node with a child per category. Members after
// the chain's head are hidden; tree.kids(i) lists the drawn children;
// tree.up[i] is the drawn parent; depths become drawn depths.
function groupMultiway(model, tree) {
  tree.groups = new Map();
  tree.hidden = new Uint8Array(tree.n);
  if (model.get("multiway")) {
    for (let i = 0; i < tree.n; i++) {
      if (tree.left[i] < 0 || !tree.isCategorical[i] || tree.hidden[i]) continue;
      const members = [i];
      let last = i;
      for (;;) {
        const next = tree.right[last];
        if (tree.left[next] < 0 || !tree.isCategorical[next] || tree.feature[next] !== tree.feature[i]) break;
        members.push(next);
        tree.hidden[next] = 1;
        last = next;
      }
      if (members.length < 2) continue;
      const kids = members.map((m) => tree.left[m]);
      // the "other" branch: kept unless it is a leaf no training row (and no row of X) reached
      const other = tree.right[last];
      const empty = tree.left[other] < 0 && tree.samples[other] === 0 && (!tree.dataCount || tree.dataCount[other] === 0);
      if (empty) tree.hidden[other] = 1;
      else kids.push(other);
      tree.groups.set(i, { members, kids });
    }
  }
  tree.kids = (i) => {
    const group = tree.groups.get(i);
    if (group) return group.kids;
    return tree.left[i] >= 0 ? [tree.left[i], tree.right[i]] : [];
  };
  tree.up = new Int32Array(tree.n).fill(-1);
  if (!tree.groups.size) {
    tree.up.set(tree.parent);
    return;
  }
  // drawn depths and parents, from the root down
  const depth = new Int32Array(tree.n);
  const stack = [0];
  while (stack.length) {
    const i = stack.pop();
    const group = tree.groups.get(i);
    if (group) for (const m of group.members) depth[m] = depth[i];
    for (const kid of tree.kids(i)) {
      depth[kid] = depth[i] + 1;
      tree.up[kid] = i;
      stack.push(kid);
    }
  }
  for (let i = 0; i < tree.n; i++) if (tree.hidden[i]) tree.up[i] = tree.parent[i];
  tree.depth = depth;
}

// The node drawn for node i: itself, or the head of the chain holding it.
export function drawnNode(tree, i) {
  while (i > 0 && tree.hidden[i]) i = tree.parent[i];
  return i;
}

// Box size, slot width and level height of a tree, from its labels.
export function measureTree(model, tree) {
  tree.lines = new Array(tree.n);
  let widest = 0;
  let most = 1;
  const n = Math.min(tree.n, MEASURED_NODES);
  const own = new Float32Array(tree.n);
  for (let i = 0; i < n; i++) {
    const lines = nodeLines(model, tree, i);
    most = Math.max(most, lines.length);
    let wide = 0;
    for (const line of lines) wide = Math.max(wide, textWidth(line));
    own[i] = Math.ceil(Math.max(MIN_BOX_W, wide + 12));
    widest = Math.max(widest, wide);
  }
  tree.boxW = Math.ceil(Math.max(MIN_BOX_W, widest + 12));
  // each box as wide as its own text (nodes past MEASURED_NODES: the widest)
  if (n < tree.n) own.fill(tree.boxW, n);
  tree.boxWidths = own;
  // split nodes with a picture are taller by HIST_H (leaves keep textH)
  tree.textH = most * LINE_H + 8;
  tree.histH = tree.hist ? HIST_H : 0;
  tree.boxH = tree.textH + tree.histH;
  tree.slot = tree.boxW + GAP_X;
  tree.level = tree.boxH + GAP_Y;
}

export function featureName(model, index) {
  const names = model.get("feature_names") || [];
  return index >= 0 && index < names.length ? String(names[index]) : `x[${index}]`;
}

export function className(model, index) {
  const names = model.get("class_names") || [];
  return index < names.length ? String(names[index]) : `class ${index}`;
}

function argmax(values, offset, width) {
  let best = 0;
  for (let j = 1; j < width; j++) if (values[offset + j] > values[offset + best]) best = j;
  return best;
}

// The categories a categorical node sends left, as "{0, 2, 5}".
function categorySet(tree, i, limit = 8) {
  const found = [];
  for (let word = 0; word < tree.nWords; word++) {
    const bits = tree.categoryLeft[i * tree.nWords + word];
    for (let bit = 0; bit < 32; bit++) {
      if ((bits >>> bit) & 1) found.push(word * 32 + bit);
    }
  }
  const shown = found.slice(0, limit).join(", ");
  return `{${shown}${found.length > limit ? ", …" : ""}}`;
}

// The comparison each library makes: sklearn and LightGBM send x <= t left,
// XGBoost x < t.
export function lessThan(model) {
  return model.get("split_rule") === "lt";
}

function conditionText(model, tree, i, digits = 6) {
  if (tree.isCategorical[i]) return `in ${categorySet(tree, i)}`;
  return `${lessThan(model) ? "<" : "≤"} ${bttThreshold(tree.threshold[i], model.get("split_rule"), digits)}`;
}

export function splitText(model, tree, i, digits = 6) {
  return `${featureName(model, tree.feature[i])} ${conditionText(model, tree, i, digits)}`;
}

function signed(value, digits = 4) {
  const text = bttFormat(value, digits);
  return value > 0 ? `+${text}` : text;
}

// A leaf's value in the model's own terms: the class and its share
// (classifiers storing fractions), the margin a boosted tree adds, or the
// regression value.
export function leafText(model, tree, i) {
  const kind = model.get("value_kind");
  const offset = i * tree.width;
  if (kind === "fractions" && tree.width > 1) {
    const best = argmax(tree.value, offset, tree.width);
    return `${className(model, best)} ${Math.round(100 * tree.value[offset + best])}%`;
  }
  if (kind === "margin") return `margin ${signed(tree.value[offset])}`;
  if (tree.width > 1) {
    const shown = Array.from(tree.value.slice(offset, offset + Math.min(3, tree.width)), (v) => bttFormat(v, 3));
    return `value ${shown.join(", ")}${tree.width > 3 ? ", …" : ""}`;
  }
  return `value ${bttFormat(tree.value[offset], 4)}`;
}

// Rows at a node: the training count (or the cover where the library keeps
// only that) and, when X was given, the rows of X.
export function countText(tree, i) {
  const parts = [];
  if (tree.samples[i] >= 0) parts.push(`train ${bttFormat(tree.samples[i])}`);
  else if (Number.isFinite(tree.weighted[i])) parts.push(`cover ${bttFormat(tree.weighted[i], 3)}`);
  if (tree.dataCount) parts.push(`X ${bttFormat(tree.dataCount[i])}`);
  return parts.length ? parts.join(" · ") : `#${i}`;
}

// What a node's box says, line by line (cached per node).
export function nodeLines(model, tree, i) {
  let lines = tree.lines[i];
  if (lines) return lines;
  const group = tree.groups && tree.groups.get(i);
  if (group) {
    lines = wrapText(featureName(model, tree.feature[i]), MAX_TEXT_W);
    lines.push(`${group.kids.length} branches`);
  } else if (tree.left[i] >= 0) {
    lines = wrapText(featureName(model, tree.feature[i]), MAX_TEXT_W);
    lines.push(...wrapText(conditionText(model, tree, i), MAX_TEXT_W));
  } else {
    lines = wrapText(leafText(model, tree, i), MAX_TEXT_W);
  }
  lines.push(countText(tree, i));
  tree.lines[i] = lines;
  return lines;
}

// The labels of the edges below a split, one per drawn child.
export function edgeLabels(tree, i) {
  const group = tree.groups && tree.groups.get(i);
  if (group) {
    return group.kids.map((_, k) => (k < group.members.length ? `= ${categorySet(tree, group.members[k], 4).slice(1, -1)}` : "other"));
  }
  return tree.isCategorical[i] ? ["in", "not in"] : ["yes", "no"];
}

// The fill of node i as 0xRRGGBB.
export function nodeColour(model, tree, i) {
  const by = model.get("color_by");
  const kind = model.get("value_kind");
  if (by === "none") return 0xf4f4f4;
  if (by === "impurity") return bttSequentialRGB(tree.maxImpurity > 0 ? tree.impurity[i] / tree.maxImpurity : NaN);
  if (by === "samples") {
    const samples = tree.samples[i];
    return bttSequentialRGB(samples >= 0 && tree.maxSamples > 0 ? Math.log1p(samples) / Math.log1p(tree.maxSamples) : NaN);
  }
  if (by === "data") {
    if (!tree.dataCount) return 0xf4f4f4;
    const root = tree.dataCount[0] || 1;
    return bttSequentialRGB(tree.dataCount[i] / root);
  }
  // "prediction": class colour (strength = purity) or a diverging value scale
  if (kind === "fractions" && tree.width > 1) {
    const offset = i * tree.width;
    const best = argmax(tree.value, offset, tree.width);
    const chance = 1 / tree.width;
    const purity = (tree.value[offset + best] - chance) / (1 - chance);
    return bttTintRGB(bttClassColour(best), 0.2 + 0.8 * purity);
  }
  return bttDivergingRGB(tree.value[i * tree.width], tree.valueLimit);
}

// The rows of the details pane for node i (a fragment to append).
export function nodeDetails(model, tree, i) {
  const details = document.createDocumentFragment();
  const internal = tree.left[i] >= 0;
  const table = bttElement("table", "btt-details-table");
  const row = (key, value) => {
    const tr = bttElement("tr");
    tr.append(bttElement("th", "", key), bttElement("td", "", value));
    table.appendChild(tr);
  };
  const group = tree.groups && tree.groups.get(i);
  if (group) {
    row("split", `${featureName(model, tree.feature[i])}: ${group.kids.length} branches`);
    const labels = edgeLabels(tree, i);
    group.kids.forEach((kid, k) => row(labels[k], `node ${kid}`));
  } else if (internal) {
    row("split", splitText(model, tree, i, 9));
    row("left child", `${tree.left[i]} (condition true)`);
    row("right child", String(tree.right[i]));
  }
  row("training samples", tree.samples[i] >= 0 ? bttFormat(tree.samples[i]) : "not recorded");
  if (Number.isFinite(tree.weighted[i])) row("weight / cover", bttFormat(tree.weighted[i]));
  row("impurity", Number.isFinite(tree.impurity[i]) ? bttFormat(tree.impurity[i]) : "not recorded");
  const kind = model.get("value_kind");
  if (kind !== "fractions" || tree.width === 1) {
    const values = Array.from(tree.value.slice(i * tree.width, (i + 1) * tree.width), (v) => bttFormat(v));
    row(kind === "margin" ? "value (margin)" : "value", values.join(", "));
  }
  if (model.get("output_label")) row("adds to", model.get("output_label"));
  if (tree.dataCount) row("rows of X here", bttFormat(tree.dataCount[i]));
  if (tree.marks[i]) row("edit", MARK_TEXT[tree.marks[i]]);
  const notes = model.get("notes") || {};
  if (notes[i] !== undefined) row("before the edit", notes[i]);
  details.appendChild(table);
  if (kind === "fractions" && tree.width > 1) {
    details.appendChild(bttElement("div", "btt-details-sub", "class distribution (training)"));
    details.appendChild(classBars(model, tree.value, i * tree.width, tree.width));
  }
  if (tree.dataTarget && tree.dataCount && tree.dataCount[i] > 0) {
    if (tree.dataWidth > 1) {
      details.appendChild(bttElement("div", "btt-details-sub", "class distribution (your y)"));
      details.appendChild(classBars(model, tree.dataTarget, i * tree.dataWidth, tree.dataWidth));
    } else {
      details.appendChild(bttElement("div", "btt-details-sub", `mean of your y: ${bttFormat(tree.dataTarget[i])}`));
    }
  }
  return details;
}

function classBars(model, values, offset, width) {
  const box = bttElement("div", "btt-class-bars");
  for (let j = 0; j < width; j++) {
    const line = bttElement("div", "btt-class-bar");
    const label = bttElement("span", "btt-class-name", className(model, j));
    const track = bttElement("span", "btt-class-track");
    const fill = bttElement("span", "btt-class-fill");
    fill.style.width = `${Math.round(100 * Math.max(0, Math.min(1, values[offset + j])))}%`;
    fill.style.background = bttClassColour(j);
    track.appendChild(fill);
    line.append(label, track, bttElement("span", "btt-class-value", bttFormat(values[offset + j], 3)));
    box.appendChild(line);
  }
  return box;
}

// The split feature at a node, for the rows of X that reach it: bars
// stacked by class of y (a plain histogram without y, a density for
// regression), the threshold and the chosen row's value marked. The numbers
// come from Python (TreeView._send_histogram).
export function histogramView(model, h) {
  const box = bttElement("div", "btt-histogram");
  const what = h.kind === "classes" ? "by class of your y" : h.kind === "density" ? "density" : "rows";
  box.appendChild(bttElement("div", "btt-details-sub", `${featureName(model, h.feature)} of the ${bttFormat(h.n_rows)} rows of X here (${what})`));
  if (h.missing > 0) {
    const right = h.missing - h.missing_left;
    box.appendChild(bttElement("div", "btt-details-sub btt-histogram-missing",
      `${bttFormat(h.missing)} of them NaN or infinite, not drawn: ${bttFormat(h.missing_left)} go left, ${bttFormat(right)} right`));
  }
  const width = 232;
  const height = 118;
  const pad = { left: 30, right: 6, top: 6, bottom: 30 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  // a categorical node: one bar per category, in slots 0..n of the axis
  const cats = h.categories;
  const edges = cats ? [...cats.keys(), cats.length] : h.edges;
  const bins = edges.length - 1;
  const stacks = h.counts; // [series][bin]
  const totals = new Array(bins).fill(0);
  for (const series of stacks) for (let b = 0; b < bins; b++) totals[b] += series[b];
  const top = Math.max(...totals) || 1;
  const low = edges[0];
  const span = edges[bins] - low || 1;
  const px = (value) => pad.left + ((value - low) / span) * plotW;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("class", "btt-histogram-svg");
  const add = (tag, attributes, text) => {
    const element = document.createElementNS(ns, tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text !== undefined) element.textContent = text;
    svg.appendChild(element);
    return element;
  };
  for (let b = 0; b < bins; b++) {
    let base = 0;
    stacks.forEach((series, k) => {
      const value = series[b];
      if (!(value > 0)) return;
      const y0 = pad.top + plotH - ((base + value) / top) * plotH;
      add("rect", {
        x: px(edges[b]) + 0.5, y: y0, width: Math.max(1, px(edges[b + 1]) - px(edges[b]) - 1),
        height: (value / top) * plotH, fill: stacks.length > 1 ? bttClassColour(k) : "#7c9cc4",
      });
      base += value;
    });
  }
  add("line", { x1: pad.left, y1: pad.top + plotH, x2: pad.left + plotW, y2: pad.top + plotH, stroke: "currentColor", "stroke-opacity": 0.6 });
  const tick = (value, anchor) => add("text", { x: px(value), y: pad.top + plotH + 12, "text-anchor": anchor, fill: "currentColor", "font-size": 10 }, bttFormat(value, 3));
  if (!cats) {
    tick(edges[0], "start");
    tick(edges[bins], "end");
  } else {
    const step = Math.ceil(bins / 16); // at most 16 category labels
    for (let b = 0; b < bins; b += step) add("text", { x: px(b + 0.5), y: pad.top + plotH + 12, "text-anchor": "middle", fill: "currentColor", "font-size": 10 }, String(cats[b]));
  }
  add("text", { x: pad.left - 3, y: pad.top + 8, "text-anchor": "end", fill: "currentColor", "font-size": 10 }, bttFormat(h.kind === "density" ? top : Math.round(top), 2));
  add("text", { x: pad.left - 3, y: pad.top + plotH, "text-anchor": "end", fill: "currentColor", "font-size": 10 }, "0");
  if (Number.isFinite(h.threshold)) {
    const tx = px(h.threshold);
    add("line", { x1: tx, y1: pad.top, x2: tx, y2: pad.top + plotH, stroke: "currentColor", "stroke-dasharray": "4,3", class: "btt-histogram-threshold" });
    add("text", { x: tx, y: pad.top + plotH + 24, "text-anchor": "middle", fill: "currentColor", "font-size": 10 }, `${lessThan(model) ? "<" : "≤"} ${bttThreshold(h.threshold, model.get("split_rule"))}`);
  }
  const rowAt = !cats ? h.row_value : cats.indexOf(Math.trunc(h.row_value)) + 0.5; // a category: its bar's middle
  if (h.row_value !== null && h.row_value !== undefined && Number.isFinite(h.row_value) && rowAt >= 0) {
    const rx = px(Math.max(low, Math.min(edges[bins], rowAt)));
    add("path", { d: `M${rx - 5},${pad.top} L${rx + 5},${pad.top} L${rx},${pad.top + 8} Z`, fill: "#d81b60", class: "btt-histogram-row" });
    add("line", { x1: rx, y1: pad.top + 8, x2: rx, y2: pad.top + plotH, stroke: "#d81b60", "stroke-width": 1.5 });
  }
  box.appendChild(svg);
  if (stacks.length > 1 && h.kind === "classes") {
    const keys = bttElement("div", "btt-histogram-keys");
    stacks.forEach((_, k) => {
      const item = bttElement("span", "btt-legend-item");
      const swatch = bttElement("span", "btt-swatch");
      swatch.style.background = bttClassColour(k);
      item.append(swatch, document.createTextNode(className(model, k)));
      keys.appendChild(item);
    });
    box.appendChild(keys);
  }
  if (h.row_value !== null && h.row_value !== undefined) {
    box.appendChild(bttElement("div", "btt-details-sub", `row ${h.row}: ${featureName(model, h.feature)} = ${bttFormat(h.row_value, 5)} (pink)`));
  }
  return box;
}

// Every visible node reserves an interval of world x as wide as its own box
// or its children's intervals side by side (GAP_X apart), whichever is wider;
// leaves (and collapsed nodes) follow each other in preorder, and a parent
// sits midway between its first and last child, kept inside its interval.
// The first interval starts at -boxW / 2, so that, as with equal boxes, the
// world spans [minX - boxW / 2, maxX + boxW / 2] for minX = 0. Returns the
// world x of every visible node (NaN for hidden ones), the visible nodes in
// preorder, maxX and the deepest visible level.
export function layoutTree(tree, collapsed) {
  const x = new Float64Array(tree.n).fill(NaN);
  const order = new Int32Array(tree.n);
  const stack = new Int32Array(tree.n + 1);
  const width = tree.boxWidths;
  let top = 0;
  let count = 0;
  let maxDepth = 0;
  stack[top++] = 0;
  while (top > 0) {
    const i = stack[--top];
    order[count++] = i;
    if (tree.depth[i] > maxDepth) maxDepth = tree.depth[i];
    if (tree.left[i] >= 0 && !collapsed[i]) {
      const kids = tree.kids(i);
      for (let k = kids.length - 1; k >= 0; k--) stack[top++] = kids[k];
    }
  }
  // bottom-up: the width each subtree reserves
  const reserved = new Float64Array(tree.n);
  for (let k = count - 1; k >= 0; k--) {
    const i = order[k];
    if (tree.left[i] >= 0 && !collapsed[i]) {
      const kids = tree.kids(i);
      let sum = GAP_X * (kids.length - 1);
      for (const kid of kids) sum += reserved[kid];
      reserved[i] = Math.max(width[i], sum);
    } else reserved[i] = width[i];
  }
  // top-down: each node's interval starts at start[i]; children centred in it
  const start = new Float64Array(tree.n);
  start[0] = -tree.boxW / 2;
  for (let k = 0; k < count; k++) {
    const i = order[k];
    if (tree.left[i] >= 0 && !collapsed[i]) {
      const kids = tree.kids(i);
      let sum = GAP_X * (kids.length - 1);
      for (const kid of kids) sum += reserved[kid];
      let at = start[i] + (reserved[i] - sum) / 2;
      for (const kid of kids) {
        start[kid] = at;
        at += reserved[kid] + GAP_X;
      }
    } else x[i] = start[i] + reserved[i] / 2;
  }
  for (let k = count - 1; k >= 0; k--) {
    const i = order[k];
    if (tree.left[i] >= 0 && !collapsed[i]) {
      const kids = tree.kids(i);
      const mid = (x[kids[0]] + x[kids[kids.length - 1]]) / 2;
      const half = width[i] / 2;
      x[i] = Math.min(Math.max(mid, start[i] + half), start[i] + reserved[i] - half);
    }
  }
  return { x, visible: order.subarray(0, count), maxX: start[0] + reserved[0] - tree.boxW / 2, maxDepth };
}

// Nodes a search finds: "12" or "#12" is node 12; other text, every node
// whose label holds it (any case): a split's feature name or threshold
// ("0.93"), a leaf's class or value; shallowest first. The count line
// ("train 40") is not searched.
export function findNodes(model, tree, text) {
  const id = /^#(\d+)$/.exec(text);
  if (id && Number(id[1]) < tree.n) return [Number(id[1])];
  const found = [];
  const wanted = text.toLowerCase().replace(/<=/g, "≤");
  const names = (model.get("feature_names") || []).map((name) => String(name).toLowerCase());
  for (let i = 0; i < tree.n; i++) {
    if (tree.hidden[i]) continue;
    if (tree.left[i] >= 0) {
      const name = names[tree.feature[i]] || `x[${tree.feature[i]}]`;
      if (name.includes(wanted) || conditionText(model, tree, i).toLowerCase().includes(wanted)) found.push(i);
    } else if (leafText(model, tree, i).toLowerCase().includes(wanted)) found.push(i);
  }
  if (!found.length && /^\d+$/.test(text) && Number(text) < tree.n) return [Number(text)];
  return found.sort((a, b) => tree.depth[a] - tree.depth[b] || a - b);
}
