// The interactive tree: a canvas with zoom, pan, collapse/expand, node
// details, colours, the decision path of a row, pruned/re-split marks, and
// for ensembles an overview strip with one bar per tree.
//
// Synced traits (Python: bandit_tree_tools/widgets/_tree_view.py):
//   tree            dict of columns as binary buffers (see _payload.py)
//   feature_names, class_names, value_kind, output_label, title
//   initial_depth, color_by, path, selected_node, selected_tree
//   n_trees, overview {metric, values}, height, error

// Constants, labels, colours and node details: tree_model.js.

export default {
  render({ model, el }) {
    const root = bttElement("div", "btt-tree-view-canvas");
    el.appendChild(root);
    const header = bttElement("div", "btt-tree-header");
    const title = bttElement("span", "btt-tree-title");
    const toolbar = bttElement("span", "btt-toolbar");
    const buttons = {};
    for (const [name, label, tip] of [
      ["fit", "Fit", "Zoom to show every visible node"],
      ["expand", "Expand all", "Show every node (large trees: zoom in to read)"],
      ["reset", "Reset", "Back to the initial depth"],
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
    const legend = bttElement("div", "btt-legend");
    root.appendChild(legend);

    let tree = null;
    let collapsed = null; // 1 where an internal node hides its children
    let x = null; // world x of visible nodes
    let visible = null; // ids of visible nodes, in preorder
    let onPath = null;
    const view = { scale: 1, tx: 0, ty: 0, fitted: false };
    const canvas = bttCanvas(stage, model.get("height") || 460, drawTree);

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
      stack[top++] = 0;
      while (top > 0) {
        const i = stack[--top];
        order[count++] = i;
        if (tree.left[i] >= 0 && !collapsed[i]) {
          stack[top++] = tree.right[i];
          stack[top++] = tree.left[i];
        } else {
          x[i] = slot * SLOT;
          slot += 1;
        }
      }
      for (let k = count - 1; k >= 0; k--) {
        const i = order[k];
        if (tree.left[i] >= 0 && !collapsed[i]) x[i] = (x[tree.left[i]] + x[tree.right[i]]) / 2;
      }
      visible = order.subarray(0, count);
      root.dataset.visibleNodes = String(count);
    }

    // node colours: computed when a node is first drawn, kept until the tree
    // or the colouring changes (never per frame)
    let colours = null;
    let coloured = null;
    function colourOf(i) {
      if (!coloured[i]) {
        colours[i] = nodeColour(model, tree, i);
        coloured[i] = 1;
      }
      return colours[i];
    }
    function resetColours() {
      colours = new Uint32Array(tree.n);
      coloured = new Uint8Array(tree.n);
    }

    // readable: on first display, keep labels legible (scale >= READABLE) and
    // show the top of the tree, rather than fitting a wide tree into dots
    const READABLE = 0.42;
    function fit(readable = false) {
      if (!tree) return;
      let minX = Infinity;
      let maxX = -Infinity;
      let maxDepth = 0;
      for (const i of visible) {
        minX = Math.min(minX, x[i]);
        maxX = Math.max(maxX, x[i]);
        maxDepth = Math.max(maxDepth, tree.depth[i]);
      }
      const width = canvas.state.width || stage.clientWidth || 800;
      const height = canvas.state.height;
      const worldW = maxX - minX + SLOT;
      const worldH = maxDepth * LEVEL + BOX_H + 24;
      view.scale = Math.min(1.4, width / worldW, height / worldH);
      view.tx = (width - (maxX + minX) * view.scale) / 2;
      view.ty = 14;
      if (readable && view.scale < READABLE) {
        view.scale = READABLE;
        view.tx = width / 2 - x[0] * view.scale; // the root at the centre
      }
      view.fitted = true;
      canvas.redraw();
    }

    function screenOf(i) {
      return [x[i] * view.scale + view.tx, tree.depth[i] * LEVEL * view.scale + view.ty];
    }

    function nodeAt(px, py) {
      if (!tree) return -1;
      const halfW = Math.max(5, (BOX_W * view.scale) / 2);
      const halfH = Math.max(5, (BOX_H * view.scale) / 2);
      const levelH = LEVEL * view.scale;
      let best = -1;
      let bestDistance = Infinity;
      for (let k = 0; k < visible.length; k++) {
        const i = visible[k];
        const dx = Math.abs(px - (x[i] * view.scale + view.tx));
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
      const s = view.scale;
      for (let k = 0; k < visible.length; k++) {
        const i = visible[k];
        const px = Math.round((x[i] * s + view.tx) * ratio);
        const py = Math.round((tree.depth[i] * LEVEL * s + view.ty) * ratio);
        if (px < 0 || py < 0 || px >= w - 1 || py >= h - 1) continue;
        const rgb = colourOf(i);
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

    function drawTree(ctx, width, height) {
      if (!tree) return;
      if (!view.fitted) {
        fit(true);
        return;
      }
      if (!colours) resetColours();
      const s = view.scale;
      const boxW = BOX_W * s;
      const boxH = BOX_H * s;
      const minWX = (-view.tx - SLOT * s) / s;
      const maxWX = (width - view.tx + SLOT * s) / s;
      const selected = model.get("selected_node");
      const dense = boxW < 3;
      if (dense) drawDense(ctx, width, height);
      // edges: one path for all, one for edges into removed nodes, then the decision path
      const levelH = LEVEL * s;
      const edge = (i, child, path) => {
        const cx = x[child];
        const px = x[i];
        if ((px < minWX && cx < minWX) || (px > maxWX && cx > maxWX)) return;
        const sy = tree.depth[i] * levelH + view.ty;
        if (sy > height || sy + levelH + boxH < 0) return;
        path.moveTo(px * s + view.tx, sy + boxH);
        path.lineTo(cx * s + view.tx, sy + levelH);
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
          const l = tree.left[i];
          const r = tree.right[i];
          if (tree.marks[l] === MARK_REMOVED || tree.marks[l] === MARK_CHANGED) {
            edge(i, l, faded);
            edge(i, r, faded);
            anyFaded = true;
            continue;
          }
          if (onPath && onPath[i] && onPath[l]) { edge(i, l, onPathEdges); anyPath = true; } else edge(i, l, solid);
          if (onPath && onPath[i] && onPath[r]) { edge(i, r, onPathEdges); anyPath = true; } else edge(i, r, solid);
        }
      } else if (onPath) {
        for (let k = 0; k < visible.length; k++) {
          const i = visible[k];
          if (tree.left[i] < 0 || collapsed[i] || !onPath[i]) continue;
          if (onPath[tree.left[i]]) edge(i, tree.left[i], onPathEdges);
          if (onPath[tree.right[i]]) edge(i, tree.right[i], onPathEdges);
          anyPath = true;
        }
      }
      ctx.lineWidth = 1;
      ctx.strokeStyle = "#9a9a9a";
      ctx.stroke(solid);
      if (anyFaded) {
        ctx.strokeStyle = "#c9c9c9";
        ctx.setLineDash([3, 3]);
        ctx.stroke(faded);
        ctx.setLineDash([]);
      }
      if (anyPath) {
        ctx.strokeStyle = "#1f5fbf";
        ctx.lineWidth = 3;
        ctx.stroke(onPathEdges);
      }
      if (dense) return;
      // nodes
      ctx.font = `${Math.max(9, Math.min(13, 11 * s))}px sans-serif`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const tiny = boxW < 6;
      for (let k = 0; k < visible.length; k++) {
        const i = visible[k];
        if (x[i] < minWX || x[i] > maxWX) continue;
        const [sx, sy] = screenOf(i);
        if (sy > height || sy + boxH < 0) continue;
        const mark = tree.marks[i];
        ctx.globalAlpha = mark === MARK_REMOVED || mark === MARK_CHANGED ? 0.35 : 1;
        ctx.fillStyle = bttRGBString(colourOf(i));
        if (tiny) {
          const size = Math.max(2, boxW);
          ctx.fillRect(sx - size / 2, sy, size, Math.max(2, boxH));
          continue;
        }
        const left = sx - boxW / 2;
        ctx.fillRect(left, sy, boxW, boxH);
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
          border = "#1f5fbf";
          lineWidth = 3;
        }
        if (i === selected) {
          border = "#111";
          lineWidth = 3;
        }
        ctx.strokeStyle = border;
        ctx.lineWidth = lineWidth;
        ctx.strokeRect(left, sy, boxW, boxH);
        ctx.setLineDash([]);
        if (tree.left[i] >= 0 && collapsed[i]) {
          // a collapsed subtree: a small "+" tab below the box
          ctx.fillStyle = "#555";
          ctx.fillRect(sx - 6, sy + boxH + 1, 12, 9);
          ctx.fillStyle = "#fff";
          ctx.fillRect(sx - 3, sy + boxH + 5, 6, 1.5);
          ctx.fillRect(sx - 0.75, sy + boxH + 2.5, 1.5, 6);
        }
        if (boxW >= 34) {
          ctx.fillStyle = "#111";
          const lines = [];
          if (tree.left[i] >= 0) {
            lines.push(featureName(model, tree.feature[i]));
            lines.push(conditionText(tree, i));
          } else {
            lines.push(leafText(model, tree, i));
          }
          const n = tree.samples[i];
          lines.push(n >= 0 ? `n=${bttFormat(n)}` : `#${i}`);
          // three lines when they fit; else the split (or the leaf and its count)
          const shown = boxH >= 33 ? lines : boxH >= 22 ? lines.slice(0, 2) : [lines[0]];
          const lineHeight = boxH / shown.length;
          shown.forEach((line, k2) => {
            ctx.fillText(fitText(ctx, line, boxW - 4), sx, sy + lineHeight * (k2 + 0.5));
          });
        }
      }
      ctx.globalAlpha = 1;
    }

    function fitText(ctx, text, width) {
      if (ctx.measureText(text).width <= width) return text;
      let low = 0;
      let high = text.length;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (ctx.measureText(text.slice(0, mid) + "…").width <= width) low = mid;
        else high = mid - 1;
      }
      return low > 0 ? text.slice(0, low) + "…" : "";
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
      canvas.redraw();
      showDetails();
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
      if (by === "prediction" && kind === "fractions" && tree.width > 1) {
        for (let j = 0; j < Math.min(tree.width, 10); j++) add(bttClassColour(j), className(model, j));
      } else if (by === "prediction") {
        add(bttDiverging(-1, 1), "negative value");
        add(bttDiverging(1, 1), "positive value");
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
    }

    function load() {
      tree = readTree(model);
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
      resetCollapsed();
      layout();
      applyPath();
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
          canvas.redraw();
        }
        return;
      }
      const i = nodeAt(event.clientX - rect.left, event.clientY - rect.top);
      if (i < 0) {
        tooltip.style.display = "none";
        return;
      }
      tooltip.textContent = `#${i}: ${tree.left[i] >= 0 ? splitText(model, tree, i) : leafText(model, tree, i)}` +
        (tree.samples[i] >= 0 ? ` (n=${bttFormat(tree.samples[i])})` : "");
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
    canvas.canvas.addEventListener(
      "wheel",
      (event) => {
        if (!tree) return;
        event.preventDefault();
        const rect = canvas.canvas.getBoundingClientRect();
        const px = event.clientX - rect.left;
        const py = event.clientY - rect.top;
        const factor = Math.exp(-event.deltaY * 0.0015);
        const scale = Math.max(0.002, Math.min(4, view.scale * factor));
        view.tx = px - ((px - view.tx) * scale) / view.scale;
        view.ty = py - ((py - view.ty) * scale) / view.scale;
        view.scale = scale;
        canvas.redraw();
      },
      { passive: false },
    );
    buttons.fit.addEventListener("click", () => fit());
    buttons.expand.addEventListener("click", () => {
      if (!tree) return;
      collapsed.fill(0);
      layout();
      fit();
      showDetails();
    });
    buttons.reset.addEventListener("click", () => {
      if (!tree) return;
      resetCollapsed();
      layout();
      applyPath();
      fit();
      showDetails();
    });

    // a handle for automation and tests: where a node is drawn, in page pixels
    root.bttView = {
      nodeCenter(i) {
        if (!tree || !x || Number.isNaN(x[i])) return null;
        const rect = canvas.canvas.getBoundingClientRect();
        const [sx, sy] = screenOf(i);
        return { x: rect.left + sx, y: rect.top + sy + (BOX_H * view.scale) / 2 };
      },
      visibleCount: () => (visible ? visible.length : 0),
    };

    const onTree = () => load();
    const onSelected = () => {
      canvas.redraw();
      showDetails();
    };
    const onStyle = () => {
      colours = null;
      canvas.redraw();
      drawLegend();
      showDetails();
    };
    const onPathChange = () => {
      applyPath();
      canvas.redraw();
      drawLegend();
    };
    const onOverview = () => {
      const values = (model.get("overview") || {}).values || [];
      overviewBox.style.display = values.length > 1 ? "block" : "none";
      overview.redraw();
    };
    const onHeight = () => canvas.setHeight(model.get("height") || 460);
    const onError = () => {
      const error = model.get("error") || "";
      errorBox.textContent = error;
      errorBox.style.display = error ? "block" : "none";
    };
    model.on("change:tree", onTree);
    model.on("change:selected_node", onSelected);
    model.on("change:color_by", onStyle);
    model.on("change:feature_names", onStyle);
    model.on("change:class_names", onStyle);
    model.on("change:path", onPathChange);
    model.on("change:overview", onOverview);
    model.on("change:selected_tree", onOverview);
    model.on("change:height", onHeight);
    model.on("change:error", onError);
    const onTitle = () => (title.textContent = model.get("title") || "");
    model.on("change:title", onTitle);
    load();
    return () => {
      model.off("change:tree", onTree);
      model.off("change:selected_node", onSelected);
      model.off("change:color_by", onStyle);
      model.off("change:feature_names", onStyle);
      model.off("change:class_names", onStyle);
      model.off("change:path", onPathChange);
      model.off("change:overview", onOverview);
      model.off("change:selected_tree", onOverview);
      model.off("change:height", onHeight);
      model.off("change:error", onError);
      model.off("change:title", onTitle);
      canvas.dispose();
      overview.dispose();
    };
  },
};
