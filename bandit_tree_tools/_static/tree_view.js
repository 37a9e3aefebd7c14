// The interactive tree: a canvas with zoom, pan, collapse/expand, node
// details, colours, the decision path of a row, pruned/re-split marks,
// search, and for ensembles an overview strip with one bar per tree.
//
// Synced traits (Python: bandit_tree_tools/widgets/_tree_view.py):
//   tree            dict of columns as binary buffers (see _payload.py)
//   feature_names, class_names, value_kind, split_rule, output_label, title
//   initial_depth, color_by, path, selected_node, selected_tree
//   n_trees, overview {metric, values}, height (0: follows the tree), error
//   histogram       the split feature's histogram at the selected node

// The other parts, joined before this file into one module (see
// bandit_tree_tools/widgets/_assets.py): tree_model.js (reading the tree,
// labels, colours, node details, layout, search), tree_camera.js (zoom, fit,
// coordinates), tree_draw.js (the canvas frame, minimap, overview, legend),
// tree_page.js (the page's elements, the pointer, the test handle).
//
// One view's state `s` (built by newViewState) holds the model, the page's
// elements, the camera's view and bounds, and what loadTree() and layout()
// replace: the tree, the layout (x, visible), collapsed nodes, the path,
// search hits, colours and theme. The functions below take it as their
// first argument; tree_draw.js and tree_camera.js read the same object.

import { bttElement, bttCanvas, bttReadableFill, bttTheme, bttOnThemeChange } from "./common.js";
import { readTree, drawnNode, measureTree, splitText, nodeColour, nodeDetails, histogramView, layoutTree, findNodes } from "./tree_model.js";
import { treeCamera, LEGIBLE, AUTO_HEIGHT } from "./tree_camera.js";
import { drawTreeFrame, drawTreeOverview, drawTreeLegend } from "./tree_draw.js";
import { buildTreeViewDom, bindTreePointer, treeViewHandle } from "./tree_page.js";

// The view's state: its page, canvases and camera; no tree until loadTree().
function newViewState(model, el) {
  const dom = buildTreeViewDom(el);
  const s = {
    model,
    ...dom,
    // separate x and y scales: a wide, shallow tree can fill the width and
    // the height at once
    view: { sx: 1, sy: 1, tx: 0, ty: 0, fitted: false, minSx: 0.01, minSy: 0.01 },
    bounds: { minX: 0, maxX: 0, maxDepth: 0 },
    tree: null,
    collapsed: null, // 1 where an internal node hides its children
    x: null, // world x of visible nodes
    visible: null, // ids of visible nodes, in preorder
    onPath: null,
    matches: null, // search hits (1 per node)
    matchList: [],
    matchAt: -1,
    theme: bttTheme(dom.root),
    // node colours: computed when a node is first drawn, kept until the tree
    // or the colouring changes (never per frame)
    colours: null,
    coloured: null,
    overviewHover: -1,
    drawn: [], // what the last frame wrote on the canvas (for tests)
    lastFrameMs: 0, // the last frame's drawing time (bttView.frameMs, for the benchmark)
  };
  s.overview = bttCanvas(dom.overviewBox, 56, (ctx, width, height) => drawTreeOverview(s, ctx, width, height));
  const height = model.get("height") > 0 ? model.get("height") : AUTO_HEIGHT[0];
  s.canvas = bttCanvas(dom.stage, height, (ctx, width, height) => drawTree(s, ctx, width, height));
  // what tree_draw.js calls back
  s.colourOf = (i) => nodeFill(s, i);
  s.firstView = () => frameFirstView(s);
  s.resetColours = () => newColourCache(s);
  Object.assign(s, treeCamera(s)); // worldHeight, zoomLimits, clampView, autoHeight, viewport, fitAll, ...
  return s;
}

function drawTree(s, ctx, width, height) {
  const start = performance.now();
  drawTreeFrame(s, ctx, width, height);
  s.lastFrameMs = performance.now() - start;
}

function nodeFill(s, i) {
  if (!s.coloured[i]) {
    s.colours[i] = bttReadableFill(nodeColour(s.model, s.tree, i));
    s.coloured[i] = 1;
  }
  return s.colours[i];
}

function newColourCache(s) {
  s.colours = new Uint32Array(s.tree.n);
  s.coloured = new Uint8Array(s.tree.n);
}

// ---- collapsing, layout, the row's path

function resetCollapsed(s) {
  const { tree } = s;
  s.collapsed = new Uint8Array(tree.n);
  const depth = s.model.get("initial_depth");
  for (let i = 0; i < tree.n; i++) if (tree.left[i] >= 0 && tree.depth[i] >= depth) s.collapsed[i] = 1;
}

function layout(s) {
  const placed = layoutTree(s.tree, s.collapsed);
  s.x = placed.x;
  s.visible = placed.visible;
  s.bounds.minX = 0;
  s.bounds.maxX = placed.maxX;
  s.bounds.maxDepth = placed.maxDepth;
  s.root.dataset.visibleNodes = String(s.visible.length);
  s.zoomLimits();
}

// expand the ancestors of node i; true when the layout changed
function reveal(s, i) {
  const { tree, collapsed } = s;
  let changed = false;
  for (let p = tree.up[i]; p >= 0; p = tree.up[p]) {
    if (collapsed[p]) {
      collapsed[p] = 0;
      changed = true;
    }
  }
  if (changed) layout(s);
  return changed;
}

function toggleNode(s, i) {
  if (s.tree.left[i] < 0) return;
  const [before] = s.screenOf(i);
  s.collapsed[i] = s.collapsed[i] ? 0 : 1;
  layout(s);
  const [after] = s.screenOf(i);
  s.view.tx += before - after; // keep the toggled node under the pointer
  s.clampView();
  s.canvas.redraw();
  showDetails(s);
}

// the row's path marked, and opened down to its last node
function applyPath(s) {
  const { tree } = s;
  const path = s.model.get("path") || [];
  s.onPath = null;
  if (!tree || !path.length) return;
  s.onPath = new Uint8Array(tree.n);
  for (const i of path) if (i >= 0 && i < tree.n) s.onPath[i] = 1;
  let changed = false;
  for (const i of path) {
    if (i >= 0 && i < tree.n && s.collapsed[i] && i !== path[path.length - 1]) {
      s.collapsed[i] = 0;
      changed = true;
    }
  }
  if (changed) layout(s);
}

// the path's nodes and their drawn children, and the path's last node
function pathNodes(s) {
  const { tree } = s;
  const path = (s.model.get("path") || []).filter((i) => i >= 0 && i < tree.n);
  const nodes = [...path];
  for (const i of path) if (tree.left[i] >= 0 && !s.collapsed[i] && !tree.hidden[i]) nodes.push(...tree.kids(i));
  return [nodes, path.length ? path[path.length - 1] : undefined];
}

function showPathButton(s) {
  s.buttons.path.style.display = (s.model.get("path") || []).length ? "" : "none";
}

// ---- the first view

// the row's path when there is one, else the top of the tree (or the node
// selected before the view was drawn, revealed)
function frameFirstView(s) {
  const { model, tree } = s;
  const selected = model.get("selected_node");
  if (selected > 0 && selected < tree.n) reveal(s, selected);
  const [nodes, end] = pathNodes(s);
  if (!nodes.length) frameTopLevels(s);
  for (let pass = 0; pass < 2; pass++) {
    if (nodes.length) s.fitNodes(nodes, end);
    else s.fitNodes(s.visible, 0);
    if (pass === 0) s.autoHeight();
  }
  if (selected > 0 && selected < tree.n) s.centreOn(selected);
}

// Without a row's path, the first view shows the whole visible tree when it
// fits at a legible scale, else as many top levels as fit whole (the deeper
// nodes collapsed): no box is cut at the canvas edge.
function frameTopLevels(s) {
  const { tree, bounds } = s;
  const width = s.viewport()[0];
  const height = s.model.get("height") > 0 ? s.model.get("height") : AUTO_HEIGHT[1];
  const fits = () => {
    const scale = Math.min(width / (bounds.maxX - bounds.minX + tree.slot), (height - 10) / s.worldHeight(bounds.maxDepth));
    return scale >= LEGIBLE;
  };
  let depth = bounds.maxDepth;
  while (depth > 1 && !fits()) {
    depth -= 1;
    for (let i = 0; i < tree.n; i++) if (tree.left[i] >= 0 && tree.depth[i] >= depth) s.collapsed[i] = 1;
    layout(s);
  }
}

// ---- the page around the canvas: details, title, error, path reading

function showDetails(s) {
  const { model, tree, details, root } = s;
  details.textContent = "";
  const i = model.get("selected_node");
  if (!tree || i < 0 || i >= tree.n) {
    details.appendChild(bttElement("div", "btt-hint", "Click a node to see its details; double-click to collapse or expand it. Scroll to zoom, drag to pan."));
    root.dataset.selectedNode = "-1";
    return;
  }
  root.dataset.selectedNode = String(i);
  const internal = tree.left[i] >= 0;
  details.appendChild(bttElement("div", "btt-details-title", `Node ${i} · depth ${tree.depth[i]} · ${internal ? "split" : "leaf"}`));
  details.appendChild(nodeDetails(model, tree, i));
  const histogram = model.get("histogram") || {};
  if (internal && histogram.node === i && (histogram.edges || histogram.categories)) details.appendChild(histogramView(model, histogram));
  if (internal) {
    const toggle = bttElement("button", "btt-button btt-button-toggle", s.collapsed[i] ? "Expand" : "Collapse");
    toggle.addEventListener("click", () => toggleNode(s, i));
    details.appendChild(toggle);
  }
}

// the whole title also in its tooltip (a narrow view cuts it with an ellipsis)
function showTitle(s) {
  s.title.textContent = s.model.get("title") || "";
  s.title.title = s.title.textContent;
}

function showError(s) {
  const error = s.model.get("error") || "";
  s.errorBox.textContent = error;
  s.errorBox.style.display = error ? "block" : "none";
}

function showPathReading(s) {
  const text = s.model.get("path_text") || "";
  s.pathReading.textContent = text;
  s.pathReading.style.display = text ? "block" : "none";
}

function showOverviewBox(s) {
  const values = (s.model.get("overview") || {}).values || [];
  s.overviewBox.style.display = values.length > 1 ? "block" : "none";
}

// a new tree (or none): read, laid out at the initial depth, drawn afresh
function loadTree(s) {
  const { model } = s;
  s.tree = readTree(model);
  s.theme = bttTheme(s.root);
  showError(s);
  showTitle(s);
  showOverviewBox(s);
  if (!s.tree) {
    s.body.style.display = "none";
    return;
  }
  s.body.style.display = "";
  s.colours = null;
  s.matches = null;
  resetCollapsed(s);
  layout(s);
  applyPath(s);
  showPathButton(s);
  s.view.fitted = false;
  s.canvas.redraw();
  s.overview.redraw();
  showDetails(s);
  drawTreeLegend(model, s.legend, s.tree);
  s.root.dataset.nodes = String(s.tree.n);
}

// ---- the overview strip (ensembles): hover, click a bar to show that tree

function overviewIndex(s, event) {
  const values = (s.model.get("overview") || {}).values || [];
  const rect = s.overview.canvas.getBoundingClientRect();
  const k = Math.floor(((event.clientX - rect.left) / rect.width) * values.length);
  return k >= 0 && k < values.length ? k : -1;
}

function bindOverview(s) {
  const strip = s.overview.canvas;
  strip.addEventListener("mousemove", (event) => {
    s.overviewHover = overviewIndex(s, event);
    s.overview.redraw();
  });
  strip.addEventListener("mouseleave", () => {
    s.overviewHover = -1;
    s.overview.redraw();
  });
  strip.addEventListener("click", (event) => {
    const k = overviewIndex(s, event);
    if (k < 0) return;
    s.model.set("selected_tree", k);
    s.model.set("selected_node", -1);
    s.model.save_changes();
  });
}

// ---- search

function runSearch(s, next) {
  const { model, tree, status, root } = s;
  const text = s.search.value.trim();
  s.matches = null;
  s.matchList = [];
  if (!tree || !text) {
    status.style.display = "none";
    s.canvas.redraw();
    return;
  }
  s.matchList = findNodes(model, tree, text);
  s.matches = new Uint8Array(tree.n);
  for (const i of s.matchList) s.matches[i] = 1;
  if (!s.matchList.length) {
    status.textContent = `no node matches "${text}"`;
    status.style.display = "block";
    root.dataset.matches = "0";
    s.canvas.redraw();
    return;
  }
  s.matchAt = next ? (s.matchAt + 1) % s.matchList.length : 0;
  const i = drawnNode(tree, s.matchList[s.matchAt]);
  reveal(s, i);
  s.centreOn(i, true);
  status.textContent = `${s.matchAt + 1} of ${s.matchList.length}: node ${i}` + (tree.left[i] >= 0 ? ` (${splitText(model, tree, i)})` : "");
  status.style.display = "block";
  root.dataset.matches = String(s.matchList.length);
  model.set("selected_node", i);
  model.save_changes();
}

function bindSearch(s) {
  s.search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") runSearch(s, true);
    else if (event.key === "Escape") {
      s.search.value = "";
      runSearch(s, false);
    }
  });
  s.search.addEventListener("input", () => {
    s.matchAt = -1;
    if (!s.search.value.trim()) runSearch(s, false);
  });
}

// a "no node matches" note belongs to that search: navigating clears it
function clearMissNote(s) {
  if (s.root.dataset.matches !== "0") return;
  s.status.style.display = "none";
  delete s.root.dataset.matches;
}

// ---- the toolbar's buttons

function bindButtons(s) {
  const { buttons, model } = s;
  buttons.fit.addEventListener("click", () => {
    clearMissNote(s);
    s.fitAll();
  });
  buttons.path.addEventListener("click", () => {
    if (!s.tree) return;
    applyPath(s);
    const [nodes, end] = pathNodes(s);
    if (nodes.length) s.fitNodes(nodes, end);
  });
  buttons.expand.addEventListener("click", () => {
    if (!s.tree) return;
    s.collapsed.fill(0);
    layout(s);
    s.fitAll();
    showDetails(s);
  });
  // Map: the minimap on or off (pressed: shown)
  buttons.minimap.setAttribute("aria-pressed", "true");
  buttons.minimap.addEventListener("click", () => {
    s.minimapOff = !s.minimapOff;
    buttons.minimap.setAttribute("aria-pressed", s.minimapOff ? "false" : "true");
    s.canvas.redraw();
  });
  // Save: the canvas as it is, as a PNG download (no server round trip)
  buttons.save.addEventListener("click", () => {
    if (!s.tree) return;
    const link = document.createElement("a");
    link.download = `${(model.get("title") || "tree").split(" · ")[0].replace(/[^\w.-]+/g, "_")}.png`;
    link.href = s.canvas.canvas.toDataURL("image/png");
    s.root.dataset.saved = link.download;
    link.click();
  });
  buttons.reset.addEventListener("click", () => {
    if (!s.tree) return;
    resetCollapsed(s);
    layout(s);
    applyPath(s);
    frameFirstView(s);
    showDetails(s);
  });
}

// ---- the model's traits: what each change redraws

function traitHandlers(s) {
  const { model, canvas } = s;
  const onTree = () => loadTree(s);
  const onSelected = () => {
    clearMissNote(s);
    const i = s.tree ? drawnNode(s.tree, model.get("selected_node")) : -1;
    if (s.tree && i >= 0 && i < s.tree.n) {
      // a node chosen elsewhere (a list, Python, a search) is revealed and
      // brought into view
      if (reveal(s, i) || Number.isNaN(s.x[i])) s.centreOn(i, true);
      else s.centreOn(i);
    }
    canvas.redraw();
    showDetails(s);
  };
  const onStyle = () => {
    s.colours = null;
    canvas.redraw();
    drawTreeLegend(model, s.legend, s.tree);
    showDetails(s);
  };
  const onNames = () => {
    if (!s.tree) return;
    measureTree(model, s.tree);
    layout(s);
    s.view.fitted = false;
    onStyle();
  };
  const onPathChange = () => {
    applyPath(s);
    showPathButton(s);
    const [nodes, end] = pathNodes(s);
    if (nodes.length) s.fitNodes(nodes, end);
    canvas.redraw();
    drawTreeLegend(model, s.legend, s.tree);
  };
  const onOverview = () => {
    showOverviewBox(s);
    s.overview.redraw();
  };
  const onHeight = () => {
    if (model.get("height") > 0) canvas.setHeight(model.get("height"));
    else s.autoHeight();
  };
  const onPathText = () => {
    showPathReading(s);
    canvas.redraw();
  };
  return {
    "change:tree": onTree,
    "change:selected_node": onSelected,
    "change:color_by": onStyle,
    "change:feature_names": onNames,
    "change:class_names": onNames,
    "change:value_kind": onNames,
    "change:split_rule": onNames,
    "change:path": onPathChange,
    "change:overview": onOverview,
    "change:selected_tree": onOverview,
    "change:height": onHeight,
    "change:error": () => showError(s),
    "change:title": () => showTitle(s),
    "change:histogram": () => showDetails(s),
    "change:multiway": onTree,
    "change:path_text": onPathText,
  };
}

export default {
  render({ model, el }) {
    const s = newViewState(model, el);
    bindOverview(s);
    bindSearch(s);
    bindTreePointer(s, {
      canvas: s.canvas,
      tooltip: s.tooltip,
      clearMissNote: () => clearMissNote(s),
      clampView: s.clampView,
      nodeAt: s.nodeAt,
      toggleNode: (i) => toggleNode(s, i),
      zoomAt: s.zoomAt,
    });
    bindButtons(s);
    // a handle for automation and tests (see treeViewHandle)
    s.root.bttView = treeViewHandle(s, { canvas: s.canvas, screenOf: s.screenOf, zoomAt: s.zoomAt, frameMs: () => s.lastFrameMs });
    const events = traitHandlers(s);
    for (const [name, handler] of Object.entries(events)) model.on(name, handler);
    const stopWatchingTheme = bttOnThemeChange(() => {
      s.theme = bttTheme(s.root);
      s.canvas.redraw();
      s.overview.redraw();
    });
    loadTree(s);
    showPathReading(s);
    return () => {
      for (const [name, handler] of Object.entries(events)) model.off(name, handler);
      stopWatchingTheme();
      s.canvas.dispose();
      s.overview.dispose();
    };
  },
};
