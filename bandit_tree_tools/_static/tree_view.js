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
// coordinates), tree_draw.js (the canvas frame, minimap, overview, legend).


import { bttElement, bttCanvas, bttReadableFill, bttTheme, bttOnThemeChange } from "./common.js";
import { textWidth, readTree, drawnNode, measureTree, featureName, splitText, leafText, countText, nodeColour, nodeDetails, histogramView, layoutTree, findNodes } from "./tree_model.js";
import { treeCamera, LEGIBLE, AUTO_HEIGHT } from "./tree_camera.js";
import { drawTreeFrame, drawTreeOverview, drawTreeLegend } from "./tree_draw.js";
import { buildTreeViewDom, bindTreePointer, treeViewHandle } from "./tree_page.js";

export default {
  render({ model, el }) {
    const { root, title, search, buttons, errorBox, pathReading, overviewBox, overviewLabel, body, stage, details,
      tooltip, status, legend } = buildTreeViewDom(el);
    const showPathReading = () => {
      const text = model.get("path_text") || "";
      pathReading.textContent = text;
      pathReading.style.display = text ? "block" : "none";
    };
    // the whole title also in its tooltip (a narrow view cuts it with an ellipsis)
    const showTitle = () => {
      title.textContent = model.get("title") || "";
      title.title = title.textContent;
    };
    let overviewHover = -1;
    const overview = bttCanvas(overviewBox, 56, (ctx, width, height) => drawTreeOverview(state, ctx, width, height));

    let tree = null;
    let collapsed = null; // 1 where an internal node hides its children
    let x = null; // world x of visible nodes
    let visible = null; // ids of visible nodes, in preorder
    let onPath = null;
    let matches = null; // search hits (1 per node)
    let matchList = [];
    let matchAt = -1;
    const bounds = { minX: 0, maxX: 0, maxDepth: 0 };
    // separate x and y scales: a wide, shallow tree can fill the width and
    // the height at once
    const view = { sx: 1, sy: 1, tx: 0, ty: 0, fitted: false, minSx: 0.01, minSy: 0.01 };
    let theme = bttTheme(root);
    let drawn = []; // what the last frame wrote on the canvas (for tests)
    const canvas = bttCanvas(stage, model.get("height") > 0 ? model.get("height") : AUTO_HEIGHT[0], drawTree);
    // what the drawing functions (tree_draw.js) read: getters give the
    // current values of the view's variables, which load() and layout() replace
    const state = {
      model,
      root,
      view,
      bounds,
      canvas,
      stage,
      overviewLabel,
      get tree() { return tree; },
      get x() { return x; },
      get visible() { return visible; },
      get collapsed() { return collapsed; },
      get onPath() { return onPath; },
      get matches() { return matches; },
      get theme() { return theme; },
      get colours() { return colours; },
      get overviewHover() { return overviewHover; },
      get drawn() { return drawn; },
      set drawn(items) { drawn = items; },
      colourOf: (i) => colourOf(i),
      screenOf: (i) => screenOf(i),
      firstView: () => firstView(),
      resetColours: () => resetColours(),
      worldHeight: (maxDepth) => worldHeight(maxDepth),
    };
    const { worldHeight, zoomLimits, clampView, autoHeight, viewport, fitAll, fitNodes, screenOf, nodeAt, centreOn, zoomAt } =
      treeCamera(state);

    function resetCollapsed() {
      collapsed = new Uint8Array(tree.n);
      const depth = model.get("initial_depth");
      for (let i = 0; i < tree.n; i++) if (tree.left[i] >= 0 && tree.depth[i] >= depth) collapsed[i] = 1;
    }

    function layout() {
      const placed = layoutTree(tree, collapsed);
      x = placed.x;
      visible = placed.visible;
      bounds.minX = 0;
      bounds.maxX = placed.maxX;
      bounds.maxDepth = placed.maxDepth;
      root.dataset.visibleNodes = String(visible.length);
      zoomLimits();
    }

    // node colours: computed when a node is first drawn, kept until the tree
    // or the colouring changes (never per frame)
    let colours = null;
    let coloured = null;
    function colourOf(i) {
      if (!coloured[i]) {
        colours[i] = bttReadableFill(nodeColour(model, tree, i));
        coloured[i] = 1;
      }
      return colours[i];
    }
    function resetColours() {
      colours = new Uint32Array(tree.n);
      coloured = new Uint8Array(tree.n);
    }

    function pathNodes() {
      const path = (model.get("path") || []).filter((i) => i >= 0 && i < tree.n);
      const nodes = [...path];
      for (const i of path) if (tree.left[i] >= 0 && !collapsed[i] && !tree.hidden[i]) nodes.push(...tree.kids(i));
      return [nodes, path.length ? path[path.length - 1] : undefined];
    }

    // the first view: the row's path when there is one, else the top of the tree
    // (or the node selected before the view was drawn, revealed)
    function firstView() {
      const selected = model.get("selected_node");
      if (selected > 0 && selected < tree.n) reveal(selected);
      const [nodes, end] = pathNodes();
      if (!nodes.length) frameTopLevels();
      for (let pass = 0; pass < 2; pass++) {
        if (nodes.length) fitNodes(nodes, end);
        else fitNodes(visible, 0);
        if (pass === 0) autoHeight();
      }
      if (selected > 0 && selected < tree.n) centreOn(selected);
    }

    // Without a row's path, the first view shows the whole visible tree
    // when it fits at a legible scale, else as many top levels as fit whole
    // (the deeper nodes collapsed): no box is cut at the canvas edge.
    function frameTopLevels() {
      const width = viewport()[0];
      const height = model.get("height") > 0 ? model.get("height") : AUTO_HEIGHT[1];
      const fits = () => {
        const scale = Math.min(width / (bounds.maxX - bounds.minX + tree.slot), (height - 10) / (worldHeight(bounds.maxDepth)));
        return scale >= LEGIBLE;
      };
      let depth = bounds.maxDepth;
      while (depth > 1 && !fits()) {
        depth -= 1;
        for (let i = 0; i < tree.n; i++) if (tree.left[i] >= 0 && tree.depth[i] >= depth) collapsed[i] = 1;
        layout();
      }
    }

    // each frame's drawing time, for the benchmark (bttView.frameMs)
    let lastFrameMs = 0;
    function drawTree(ctx, width, height) {
      const start = performance.now();
      drawTreeFrame(state, ctx, width, height);
      lastFrameMs = performance.now() - start;
    }

    function overviewIndex(event) {
      const values = (model.get("overview") || {}).values || [];
      const rect = overview.canvas.getBoundingClientRect();
      const k = Math.floor(((event.clientX - rect.left) / rect.width) * values.length);
      return k >= 0 && k < values.length ? k : -1;
    }
    overview.canvas.addEventListener("mousemove", (event) => {
      overviewHover = overviewIndex(event);
      overview.redraw();
    });
    overview.canvas.addEventListener("mouseleave", () => {
      overviewHover = -1;
      overview.redraw();
    });
    overview.canvas.addEventListener("click", (event) => {
      const k = overviewIndex(event);
      if (k < 0) return;
      model.set("selected_tree", k);
      model.set("selected_node", -1);
      model.save_changes();
    });

    function showDetails() {
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
      if (internal && histogram.node === i && histogram.edges) details.appendChild(histogramView(model, histogram));
      if (internal) {
        const toggle = bttElement("button", "btt-button btt-button-toggle", collapsed[i] ? "Expand" : "Collapse");
        toggle.addEventListener("click", () => toggleNode(i));
        details.appendChild(toggle);
      }
    }

    function toggleNode(i) {
      if (tree.left[i] < 0) return;
      const [before] = screenOf(i);
      collapsed[i] = collapsed[i] ? 0 : 1;
      layout();
      const [after] = screenOf(i);
      view.tx += before - after; // keep the toggled node under the pointer
      clampView();
      canvas.redraw();
      showDetails();
    }

    // expand the ancestors of node i; true when the layout changed
    function reveal(i) {
      let changed = false;
      for (let p = tree.up[i]; p >= 0; p = tree.up[p]) {
        if (collapsed[p]) {
          collapsed[p] = 0;
          changed = true;
        }
      }
      if (changed) layout();
      return changed;
    }

    function applyPath() {
      const path = model.get("path") || [];
      onPath = null;
      if (!tree || !path.length) return;
      onPath = new Uint8Array(tree.n);
      for (const i of path) if (i >= 0 && i < tree.n) onPath[i] = 1;
      let changed = false;
      for (const i of path) {
        if (i >= 0 && i < tree.n && collapsed[i] && i !== path[path.length - 1]) {
          collapsed[i] = 0;
          changed = true;
        }
      }
      if (changed) layout();
    }

    function runSearch(next) {
      const text = search.value.trim();
      matches = null;
      matchList = [];
      if (!tree || !text) {
        status.style.display = "none";
        canvas.redraw();
        return;
      }
      matchList = findNodes(model, tree, text);
      matches = new Uint8Array(tree.n);
      for (const i of matchList) matches[i] = 1;
      if (!matchList.length) {
        status.textContent = `no node matches "${text}"`;
        status.style.display = "block";
        root.dataset.matches = "0";
        canvas.redraw();
        return;
      }
      matchAt = next ? (matchAt + 1) % matchList.length : 0;
      const i = drawnNode(tree, matchList[matchAt]);
      reveal(i);
      centreOn(i, true);
      status.textContent = `${matchAt + 1} of ${matchList.length}: node ${i}` + (tree.left[i] >= 0 ? ` (${splitText(model, tree, i)})` : "");
      status.style.display = "block";
      root.dataset.matches = String(matchList.length);
      model.set("selected_node", i);
      model.save_changes();
    }
    search.addEventListener("keydown", (event) => {
      if (event.key === "Enter") runSearch(true);
      else if (event.key === "Escape") {
        search.value = "";
        runSearch(false);
      }
    });
    search.addEventListener("input", () => {
      matchAt = -1;
      if (!search.value.trim()) runSearch(false);
    });

    function drawLegend() {
      drawTreeLegend(model, legend, tree);
    }

    function load() {
      tree = readTree(model);
      theme = bttTheme(root);
      const error = model.get("error") || "";
      errorBox.textContent = error;
      errorBox.style.display = error ? "block" : "none";
      showTitle();
      const values = (model.get("overview") || {}).values || [];
      overviewBox.style.display = values.length > 1 ? "block" : "none";
      if (!tree) {
        body.style.display = "none";
        return;
      }
      body.style.display = "";
      colours = null;
      matches = null;
      resetCollapsed();
      layout();
      applyPath();
      buttons.path.style.display = (model.get("path") || []).length ? "" : "none";
      view.fitted = false;
      canvas.redraw();
      overview.redraw();
      showDetails();
      drawLegend();
      root.dataset.nodes = String(tree.n);
    }

    // a "no node matches" note belongs to that search: navigating clears it
    function clearMissNote() {
      if (root.dataset.matches !== "0") return;
      status.style.display = "none";
      delete root.dataset.matches;
    }
    bindTreePointer(state, { canvas, tooltip, clearMissNote, clampView, nodeAt, toggleNode, zoomAt });
    buttons.fit.addEventListener("click", () => {
      clearMissNote();
      fitAll();
    });
    buttons.path.addEventListener("click", () => {
      if (!tree) return;
      applyPath();
      const [nodes, end] = pathNodes();
      if (nodes.length) fitNodes(nodes, end);
    });
    buttons.expand.addEventListener("click", () => {
      if (!tree) return;
      collapsed.fill(0);
      layout();
      fitAll();
      showDetails();
    });
    // Map: the minimap on or off (pressed: shown)
    buttons.minimap.setAttribute("aria-pressed", "true");
    buttons.minimap.addEventListener("click", () => {
      state.minimapOff = !state.minimapOff;
      buttons.minimap.setAttribute("aria-pressed", state.minimapOff ? "false" : "true");
      canvas.redraw();
    });
    // Save: the canvas as it is, as a PNG download (no server round trip)
    buttons.save.addEventListener("click", () => {
      if (!tree) return;
      const link = document.createElement("a");
      link.download = `${(model.get("title") || "tree").split(" · ")[0].replace(/[^\w.-]+/g, "_")}.png`;
      link.href = canvas.canvas.toDataURL("image/png");
      root.dataset.saved = link.download;
      link.click();
    });
    buttons.reset.addEventListener("click", () => {
      if (!tree) return;
      resetCollapsed();
      layout();
      applyPath();
      firstView();
      showDetails();
    });

    // a handle for automation and tests (see treeViewHandle)
    root.bttView = treeViewHandle(state, { canvas, screenOf, zoomAt, frameMs: () => lastFrameMs });

    const onTree = () => load();
    const onSelected = () => {
      clearMissNote();
      const i = tree ? drawnNode(tree, model.get("selected_node")) : -1;
      if (tree && i >= 0 && i < tree.n) {
        // a node chosen elsewhere (a list, Python, a search) is revealed and
        // brought into view
        if (reveal(i) || Number.isNaN(x[i])) centreOn(i, true);
        else centreOn(i);
      }
      canvas.redraw();
      showDetails();
    };
    const onStyle = () => {
      colours = null;
      canvas.redraw();
      drawLegend();
      showDetails();
    };
    const onNames = () => {
      if (!tree) return;
      measureTree(model, tree);
      layout();
      view.fitted = false;
      onStyle();
    };
    const onPathChange = () => {
      applyPath();
      buttons.path.style.display = (model.get("path") || []).length ? "" : "none";
      const [nodes, end] = pathNodes();
      if (nodes.length) fitNodes(nodes, end);
      canvas.redraw();
      drawLegend();
    };
    const onOverview = () => {
      const values = (model.get("overview") || {}).values || [];
      overviewBox.style.display = values.length > 1 ? "block" : "none";
      overview.redraw();
    };
    const onHeight = () => {
      if (model.get("height") > 0) canvas.setHeight(model.get("height"));
      else autoHeight();
    };
    const onError = () => {
      const error = model.get("error") || "";
      errorBox.textContent = error;
      errorBox.style.display = error ? "block" : "none";
    };
    const stopWatchingTheme = bttOnThemeChange(() => {
      theme = bttTheme(root);
      canvas.redraw();
      overview.redraw();
    });
    const onTitle = () => showTitle();
    const onHistogram = () => showDetails();
    const onPathText = () => {
      showPathReading();
      canvas.redraw();
    };
    const events = {
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
      "change:error": onError,
      "change:title": onTitle,
      "change:histogram": onHistogram,
      "change:multiway": onTree,
      "change:path_text": onPathText,
    };
    for (const [name, handler] of Object.entries(events)) model.on(name, handler);
    load();
    showPathReading();
    return () => {
      for (const [name, handler] of Object.entries(events)) model.off(name, handler);
      stopWatchingTheme();
      canvas.dispose();
      overview.dispose();
    };
  },
};
