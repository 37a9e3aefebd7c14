// The tree view's reading of the payload: columns, labels, colours and the
// node details. Prepended (with common.js) to tree_view.js by the Python side.

const SLOT = 100; // world units per leaf slot
const LEVEL = 90; // world units per depth level
const BOX_W = 92;
const BOX_H = 44;
const MARK_PRUNED = 1;
const MARK_REMOVED = 2;
const MARK_RESPLIT = 3;
const MARK_CHANGED = 4;
const MARK_TEXT = ["", "pruned: now a leaf", "removed with a pruned ancestor", "re-split", "replaced below a re-split"];

function readTree(model) {
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
  };
  // colour scales need the range of leaf values and of counts
  let limit = 0;
  let maxSamples = 0;
  let maxImpurity = 0;
  for (let i = 0; i < tree.n; i++) {
    if (tree.left[i] < 0) limit = Math.max(limit, Math.abs(tree.value[i * tree.width]));
    if (tree.samples[i] > maxSamples) maxSamples = tree.samples[i];
    if (tree.impurity[i] > maxImpurity) maxImpurity = tree.impurity[i];
  }
  tree.valueLimit = limit;
  tree.maxSamples = maxSamples;
  tree.maxImpurity = maxImpurity;
  return tree;
}

function featureName(model, index) {
  const names = model.get("feature_names") || [];
  return index >= 0 && index < names.length ? String(names[index]) : `x[${index}]`;
}

function className(model, index) {
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

function conditionText(tree, i) {
  return tree.isCategorical[i] ? `in ${categorySet(tree, i)}` : `<= ${bttFormat(tree.threshold[i], 5)}`;
}

function splitText(model, tree, i) {
  return `${featureName(model, tree.feature[i])} ${conditionText(tree, i)}`;
}

function leafText(model, tree, i) {
  const kind = model.get("value_kind");
  if (kind === "fractions" && tree.width > 1) return className(model, argmax(tree.value, i * tree.width, tree.width));
  return `value ${bttFormat(tree.value[i * tree.width], 3)}`;
}

// The fill of node i as 0xRRGGBB.
function nodeColour(model, tree, i) {
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
function nodeDetails(model, tree, i) {
  const details = document.createDocumentFragment();
  const internal = tree.left[i] >= 0;
  const table = bttElement("table", "btt-details-table");
  const row = (key, value) => {
    const tr = bttElement("tr");
    tr.append(bttElement("th", "", key), bttElement("td", "", value));
    table.appendChild(tr);
  };
  if (internal) {
    row("split", splitText(model, tree, i));
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
