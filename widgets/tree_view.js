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

// Constants, labels, colours and node details: tree_model.js.

const READABLE = 0.8; // first views never zoom below this (12 px text -> 9.6 px)
const TEXT_MIN_SCALE = 0.55; // below this, boxes without text
const MAX_SCALE = 3;
const AUTO_HEIGHT = [240, 720]; // canvas height range when it follows the tree

export default {
  render({ model, el }) {
    const root = bttElement("div", "btt-tree-view-canvas");
    el.appendChild(root);
    const header = bttElement("div", "btt-tree-header");
    const title = bttElement("span", "btt-tree-title");
    const toolbar = bttElement("span", "btt-toolbar");
    const search = bttElement("input", "btt-search");
    search.type = "search";
    search.placeholder = "find feature or #node";
    search.title = "Find nodes by feature name or node id (Enter: next match)";
    toolbar.appendChild(search);
    const buttons = {};
    for (const [name, label, tip] of [
      ["path", "Row path", "Centre on the decision path of the chosen row"],
      ["fit", "Fit", "Show every visible node (width and height scaled separately)"],
      ["expand", "Expand all", "Show every node (large trees: zoom in to read)"],
      ["reset", "Reset", "Back to the initial depth and zoom"],
    ]) {
      const button = bttElement("button", `btt-button btt-button-${name}`, label);
      button.title = tip;
      toolbar.appendChild(button);
      buttons[name] = button;
    }
    header.append(title, toolbar);
    root.appendChild(header);
    const errorBox = bttElement("div", "btt-error");
    root.appendChild(errorBox);

    // ensemble overview strip
    const overviewBox = bttElement("div", "btt-overview");
    const overviewLabel = bttElement("div", "btt-overview-label");
    overviewBox.appendChild(overviewLabel);
    root.appendChild(overviewBox);
    let overviewHover = -1;
    const overview = bttCanvas(overviewBox, 56, drawOverview);

    const body = bttElement("div", "btt-tree-body");
    root.appendChild(body);
    const stage = bttElement("div", "btt-tree-stage");
    body.appendChild(stage);
    const details = bttElement("div", "btt-tree-details");
    body.appendChild(details);
    const tooltip = bttElement("div", "btt-tooltip");
    stage.appendChild(tooltip);
    const status = bttElement("div", "btt-tree-status");
    stage.appendChild(status);
    const legend = bttElement("div", "btt-legend");
    root.appendChild(legend);

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

    function resetCollapsed() {
      collapsed = new Uint8Array(tree.n);
      const depth = model.get("initial_depth");
      for (let i = 0; i < tree.n; i++) if (tree.left[i] >= 0 && tree.depth[i] >= depth) collapsed[i] = 1;
    }

    // Leaves (and collapsed nodes) take consecutive slots in preorder; a
    // parent sits midway between its children.
    function layout() {
      x = new Float64Array(tree.n).fill(NaN);
      const order = new Int32Array(tree.n);
      const stack = new Int32Array(tree.n + 1);
      let top = 0;
      let count = 0;
      let slot = 0;
      let maxDepth = 0;
      stack[top++] = 0;
      while (top > 0) {
        const i = stack[--top];
        order[count++] = i;
        if (tree.depth[i] > maxDepth) maxDepth = tree.depth[i];
        if (tree.left[i] >= 0 && !collapsed[i]) {
          const kids = tree.kids(i);
          for (let k = kids.length - 1; k >= 0; k--) stack[top++] = kids[k];
        } else {
          x[i] = slot * tree.slot;
          slot += 1;
        }
      }
      for (let k = count - 1; k >= 0; k--) {
        const i = order[k];
        if (tree.left[i] >= 0 && !collapsed[i]) {
          const kids = tree.kids(i);
          x[i] = (x[kids[0]] + x[kids[kids.length - 1]]) / 2;
        }
      }
      visible = order.subarray(0, count);
      bounds.minX = 0;
      bounds.maxX = (slot - 1) * tree.slot;
      bounds.maxDepth = maxDepth;
      root.dataset.visibleNodes = String(count);
      zoomLimits();
    }

    function worldHeight(maxDepth) {
      return maxDepth * tree.level + tree.boxH + 20;
    }

    // zooming out stops at half the scale that shows everything (so the
    // tree never shrinks to a dot), and never above the readable scale
    function zoomLimits() {
      const width = canvas.state.width || stage.clientWidth || 800;
      const height = canvas.state.height;
      view.minSx = Math.min(READABLE, (0.5 * width) / (bounds.maxX - bounds.minX + tree.slot));
      view.minSy = Math.min(READABLE, (0.5 * height) / worldHeight(bounds.maxDepth));
    }

    // Keep part of the tree in view: panning or zooming can never leave an
    // empty canvas.
    function clampView() {
      if (!tree) return;
      const width = canvas.state.width || 800;
      const height = canvas.state.height;
      const margin = 60;
      const left = (bounds.minX - tree.boxW / 2) * view.sx + view.tx;
      const right = (bounds.maxX + tree.boxW / 2) * view.sx + view.tx;
      const bottom = worldHeight(bounds.maxDepth) * view.sy + view.ty;
      if (right < margin) view.tx += margin - right;
      if (left > width - margin) view.tx -= left - (width - margin);
      if (bottom < margin) view.ty += margin - bottom;
      if (view.ty > height - margin) view.ty = height - margin;
    }

    // the canvas height follows the visible tree at the readable scale
    function autoHeight() {
      if (model.get("height") > 0) return;
      const wanted = worldHeight(bounds.maxDepth) * Math.max(READABLE, Math.min(1, view.sy)) + 16;
      const height = Math.round(Math.max(AUTO_HEIGHT[0], Math.min(AUTO_HEIGHT[1], wanted)));
      if (height !== canvas.state.height) canvas.setHeight(height);
      root.dataset.canvasHeight = String(height);
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

    function viewport() {
      return [canvas.state.width || stage.clientWidth || 800, canvas.state.height];
    }

    // Fit: every visible node, width and height scaled separately.
    function fitAll() {
      if (!tree) return;
      const [width, height] = viewport();
      const worldW = bounds.maxX - bounds.minX + tree.slot;
      view.sx = Math.min(1.2, width / worldW);
      view.sy = Math.min(1.2, (height - 10) / worldHeight(bounds.maxDepth));
      view.tx = (width - (bounds.maxX + bounds.minX) * view.sx) / 2;
      view.ty = 8;
      view.fitted = true;
      canvas.redraw();
    }

    // Show nodes at one scale that keeps text readable; when they do not
    // fit, centre on `focus` (the root, or the end of a row's path).
    function fitNodes(nodes, focus) {
      const [width, height] = viewport();
      let minX = Infinity;
      let maxX = -Infinity;
      let minD = Infinity;
      let maxD = 0;
      for (const i of nodes) {
        if (Number.isNaN(x[i])) continue;
        minX = Math.min(minX, x[i]);
        maxX = Math.max(maxX, x[i]);
        minD = Math.min(minD, tree.depth[i]);
        maxD = Math.max(maxD, tree.depth[i]);
      }
      if (!Number.isFinite(minX)) return;
      const spanH = (maxD - minD) * tree.level + tree.boxH + 20;
      let s = Math.min(1.2, width / (maxX - minX + tree.slot), (height - 10) / spanH);
      view.sx = view.sy = Math.max(s, READABLE);
      s = view.sx;
      if (s > READABLE || focus === undefined) {
        view.tx = (width - (maxX + minX) * s) / 2;
        view.ty = 8 - minD * tree.level * s;
      } else {
        view.tx = width / 2 - x[focus] * s;
        const focusTop = tree.depth[focus] * tree.level * s;
        // the focus and its ancestors above it, as many as fit
        view.ty = focus === 0 ? 8 : Math.min(8 - minD * tree.level * s, height - 16 - tree.boxH * s - focusTop);
      }
      view.fitted = true;
      clampView();
      canvas.redraw();
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
      for (let pass = 0; pass < 2; pass++) {
        if (nodes.length) fitNodes(nodes, end);
        else fitNodes(visible, 0);
        if (pass === 0) autoHeight();
      }
      if (selected > 0 && selected < tree.n) centreOn(selected);
    }

    function screenOf(i) {
      return [x[i] * view.sx + view.tx, tree.depth[i] * tree.level * view.sy + view.ty];
    }

    function nodeAt(px, py) {
      if (!tree) return -1;
      const halfW = Math.max(5, (tree.boxW * view.sx) / 2);
      const halfH = Math.max(5, (tree.boxH * view.sy) / 2);
      const levelH = tree.level * view.sy;
      let best = -1;
      let bestDistance = Infinity;
      for (let k = 0; k < visible.length; k++) {
        const i = visible[k];
        const dx = Math.abs(px - (x[i] * view.sx + view.tx));
        if (dx > halfW) continue;
        const dy = Math.abs(py - (tree.depth[i] * levelH + view.ty + halfH));
        if (dy > halfH) continue;
        if (dx + dy < bestDistance) {
          best = i;
          bestDistance = dx + dy;
        }
      }
      return best;
    }

    function drawDense(ctx, width, height) {
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

    // each frame's drawing time, for the benchmark (bttView.frameMs)
    let lastFrameMs = 0;
    function drawTree(ctx, width, height) {
      const start = performance.now();
      drawFrame(ctx, width, height);
      lastFrameMs = performance.now() - start;
    }

    function drawFrame(ctx, width, height) {
      if (!tree) return;
      if (!view.fitted) {
        firstView();
        return;
      }
      if (!colours) resetColours();
      drawn = [];
      const sx = view.sx;
      const ts = Math.min(view.sx, view.sy); // text scale
      const boxW = tree.boxW * sx;
      const boxH = tree.boxH * view.sy;
      const levelH = tree.level * view.sy;
      const minWX = (-view.tx - tree.slot * sx) / sx;
      const maxWX = (width - view.tx + tree.slot * sx) / sx;
      const selected = model.get("selected_node");
      const dense = boxW < 3 || boxH < 2;
      const withText = ts >= TEXT_MIN_SCALE && boxW >= 30;
      root.dataset.textShown = withText ? "1" : "0";
      if (dense) drawDense(ctx, width, height);
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
        const left = cx - boxW / 2;
        ctx.fillRect(left, top, boxW, boxH);
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
        ctx.strokeRect(left, top, boxW, boxH);
        ctx.setLineDash([]);
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
          const first = top + boxH / 2 - ((lines.length - 1) * lineH) / 2;
          for (let k2 = 0; k2 < lines.length; k2++) ctx.fillText(lines[k2], cx, first + k2 * lineH);
          if (drawn.length < 4000) drawn.push({ node: i, lines, font: FONT_PX * ts, fg, bg: fill, faded: isFaded, scale: ts, width: boxW });
        }
      }
      ctx.globalAlpha = 1;
      drawMinimap(ctx, width, height);
    }

    // "You are here": the whole visible tree in a corner, the view as a frame.
    function drawMinimap(ctx, width, height) {
      const worldW = bounds.maxX - bounds.minX + tree.slot;
      const worldH = worldHeight(bounds.maxDepth);
      const left = (bounds.minX - tree.slot / 2) * view.sx + view.tx;
      const top = view.ty;
      const shownAll = left >= -1 && left + worldW * view.sx <= width + 1 && top >= -1 && top + worldH * view.sy <= height + 1;
      root.dataset.minimap = shownAll ? "0" : "1";
      if (shownAll) return;
      const mw = Math.min(160, width * 0.25);
      const mh = Math.max(24, Math.min(90, (mw * worldH) / worldW));
      const ox = width - mw - 8;
      const oy = height - mh - 8;
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

    function drawOverview(ctx, width, height) {
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

    // bring node i on screen (at a readable zoom) unless it already is
    function centreOn(i, always = false) {
      const [width, height] = viewport();
      const [cx, top] = screenOf(i);
      const inside = cx > 20 && cx < width - 20 && top > 0 && top + tree.boxH * view.sy < height;
      const readable = Math.min(view.sx, view.sy) >= READABLE;
      if (inside && readable && !always) return;
      view.sx = view.sy = Math.max(READABLE, Math.min(view.sx, view.sy, 1.2));
      view.tx = width / 2 - x[i] * view.sx;
      view.ty = height / 2 - (tree.depth[i] * tree.level + tree.boxH / 2) * view.sy;
      clampView();
      canvas.redraw();
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
      const id = /^#?(\d+)$/.exec(text);
      if (id && Number(id[1]) < tree.n) matchList = [Number(id[1])];
      else {
        const wanted = text.toLowerCase();
        const names = (model.get("feature_names") || []).map((name) => String(name).toLowerCase());
        for (let i = 0; i < tree.n; i++) {
          if (tree.left[i] < 0) continue;
          const name = names[tree.feature[i]] || `x[${tree.feature[i]}]`;
          if (name.includes(wanted)) matchList.push(i);
        }
        matchList.sort((a, b) => tree.depth[a] - tree.depth[b] || a - b);
      }
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

    function load() {
      tree = readTree(model);
      theme = bttTheme(root);
      const error = model.get("error") || "";
      errorBox.textContent = error;
      errorBox.style.display = error ? "block" : "none";
      title.textContent = model.get("title") || "";
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

    // pointer: drag pans, a click selects, a double-click toggles
    let drag = null;
    canvas.canvas.addEventListener("pointerdown", (event) => {
      drag = { x: event.clientX, y: event.clientY, tx: view.tx, ty: view.ty, moved: false };
      canvas.canvas.setPointerCapture(event.pointerId);
    });
    canvas.canvas.addEventListener("pointermove", (event) => {
      const rect = canvas.canvas.getBoundingClientRect();
      if (drag) {
        const dx = event.clientX - drag.x;
        const dy = event.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 4) drag.moved = true;
        if (drag.moved) {
          view.tx = drag.tx + dx;
          view.ty = drag.ty + dy;
          clampView();
          canvas.redraw();
        }
        return;
      }
      const i = nodeAt(event.clientX - rect.left, event.clientY - rect.top);
      if (i < 0) {
        tooltip.style.display = "none";
        return;
      }
      const group = tree.groups.get(i);
      const what = group ? `${featureName(model, tree.feature[i])}: ${group.kids.length} branches`
        : tree.left[i] >= 0 ? splitText(model, tree, i) : leafText(model, tree, i);
      tooltip.textContent = `#${i}: ${what} (${countText(tree, i)})`;
      tooltip.style.display = "block";
      tooltip.style.left = `${event.clientX - rect.left + 12}px`;
      tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    });
    canvas.canvas.addEventListener("pointerleave", () => {
      tooltip.style.display = "none";
    });
    canvas.canvas.addEventListener("pointerup", (event) => {
      const wasDrag = drag && drag.moved;
      drag = null;
      if (wasDrag || !tree) return;
      const rect = canvas.canvas.getBoundingClientRect();
      const i = nodeAt(event.clientX - rect.left, event.clientY - rect.top);
      if (i >= 0) {
        model.set("selected_node", i);
        model.save_changes();
      }
    });
    canvas.canvas.addEventListener("dblclick", (event) => {
      const rect = canvas.canvas.getBoundingClientRect();
      const i = nodeAt(event.clientX - rect.left, event.clientY - rect.top);
      if (i >= 0) toggleNode(i);
    });
    function zoomAt(px, py, factor) {
      const sx = Math.max(view.minSx, Math.min(MAX_SCALE, view.sx * factor));
      const sy = Math.max(view.minSy, Math.min(MAX_SCALE, view.sy * factor));
      view.tx = px - ((px - view.tx) * sx) / view.sx;
      view.ty = py - ((py - view.ty) * sy) / view.sy;
      view.sx = sx;
      view.sy = sy;
      clampView();
      canvas.redraw();
    }
    canvas.canvas.addEventListener(
      "wheel",
      (event) => {
        if (!tree) return;
        event.preventDefault();
        const rect = canvas.canvas.getBoundingClientRect();
        zoomAt(event.clientX - rect.left, event.clientY - rect.top, Math.exp(-event.deltaY * 0.0015));
      },
      { passive: false },
    );
    buttons.fit.addEventListener("click", () => fitAll());
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
    buttons.reset.addEventListener("click", () => {
      if (!tree) return;
      resetCollapsed();
      layout();
      applyPath();
      firstView();
      showDetails();
    });

    // a handle for automation and tests: where a node is drawn, in page
    // pixels, and what the last frame wrote (text, sizes, colours)
    root.bttView = {
      nodeCenter(i) {
        if (!tree || !x || Number.isNaN(x[i])) return null;
        const rect = canvas.canvas.getBoundingClientRect();
        const [sx, sy] = screenOf(i);
        return { x: rect.left + sx, y: rect.top + sy + (tree.boxH * view.sy) / 2 };
      },
      visibleCount: () => (visible ? visible.length : 0),
      labels: () => drawn.map((item) => ({
        ...item,
        textWidth: Math.max(...item.lines.map((line) => textWidth(line))) * item.scale,
      })),
      view: () => ({ ...view, canvasWidth: canvas.state.width, canvasHeight: canvas.state.height,
        boxW: tree ? tree.boxW : 0, boxH: tree ? tree.boxH : 0 }),
      // the drawn extent of the visible tree, in canvas pixels
      extent() {
        if (!tree) return null;
        return {
          left: (bounds.minX - tree.boxW / 2) * view.sx + view.tx,
          right: (bounds.maxX + tree.boxW / 2) * view.sx + view.tx,
          top: view.ty,
          bottom: (bounds.maxDepth * tree.level + tree.boxH) * view.sy + view.ty,
        };
      },
      zoom: (px, py, factor) => zoomAt(px, py, factor),
      frameMs: () => lastFrameMs,
      theme: () => theme,
    };

    const onTree = () => load();
    const onSelected = () => {
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
    const onTitle = () => (title.textContent = model.get("title") || "");
    const onHistogram = () => showDetails();
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
    };
    for (const [name, handler] of Object.entries(events)) model.on(name, handler);
    load();
    return () => {
      for (const [name, handler] of Object.entries(events)) model.off(name, handler);
      stopWatchingTheme();
      canvas.dispose();
      overview.dispose();
    };
  },
};
