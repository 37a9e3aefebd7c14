// The tree view's page: its elements (header, search, buttons, stage,
// details, legend), the pointer on the canvas (drag, click, double-click,
// tooltip, wheel), and the handle that automation and tests read.

import { bttElement } from "./common.js";
import { textWidth, featureName, splitText, leafText, countText } from "./tree_model.js";

// The view's page elements: header (title, search, buttons), error line,
// the row's path read in one line, the ensemble's overview strip, the stage
// (canvas, tooltip, search status), the details pane and the legend.
export function buildTreeViewDom(el) {
  const root = bttElement("div", "btt-tree-view-canvas");
  el.appendChild(root);
  const header = bttElement("div", "btt-tree-header");
  const title = bttElement("span", "btt-tree-title");
  const toolbar = bttElement("span", "btt-toolbar");
  const search = bttElement("input", "btt-search");
  search.type = "search";
  search.placeholder = "find feature, threshold, class or #node";
  search.title = "Find nodes by feature name, threshold, class, leaf value or #node id (Enter: next match)";
  toolbar.appendChild(search);
  const buttons = {};
  for (const [name, label, tip] of [
    ["path", "Row path", "Centre on the decision path of the chosen row"],
    ["fit", "Fit", "Show every visible node (width and height scaled separately)"],
    ["expand", "Expand all", "Show every node (large trees: zoom in to read)"],
    ["reset", "Reset", "Back to the initial depth and zoom"],
    ["minimap", "Map", "Show or hide the minimap (drawn when part of the tree is off screen)"],
    ["save", "Save", "Download the view as a PNG picture (TreeView.save(path) writes SVG or PNG from Python)"],
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
  const pathReading = bttElement("div", "btt-path-reading");
  root.appendChild(pathReading);
  const overviewBox = bttElement("div", "btt-overview");
  const overviewLabel = bttElement("div", "btt-overview-label");
  overviewBox.appendChild(overviewLabel);
  root.appendChild(overviewBox);
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
  return { root, title, search, buttons, errorBox, pathReading, overviewBox, overviewLabel, body, stage, details,
    tooltip, status, legend };
}

// Pointer on the canvas: a drag pans, a click selects, a double-click
// toggles, hovering shows a tooltip, the wheel zooms.
export function bindTreePointer(s, { canvas, tooltip, clearMissNote, clampView, nodeAt, toggleNode, zoomAt }) {
  const { model, view } = s;
  let drag = null;
  canvas.canvas.addEventListener("pointerdown", (event) => {
    clearMissNote();
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
    const group = s.tree.groups.get(i);
    const what = group ? `${featureName(model, s.tree.feature[i])}: ${group.kids.length} branches`
      : s.tree.left[i] >= 0 ? splitText(model, s.tree, i) : leafText(model, s.tree, i);
    tooltip.textContent = `#${i}: ${what} (${countText(s.tree, i)})`;
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
    if (wasDrag || !s.tree) return;
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
      if (!s.tree) return;
      event.preventDefault();
      clearMissNote();
      const rect = canvas.canvas.getBoundingClientRect();
      zoomAt(event.clientX - rect.left, event.clientY - rect.top, Math.exp(-event.deltaY * 0.0015));
    },
    { passive: false },
  );
}

// A handle for automation and tests (root.bttView): where a node is drawn,
// in page pixels, and what the last frame wrote (text, sizes, colours).
export function treeViewHandle(s, { canvas, screenOf, zoomAt, frameMs }) {
  const { view, bounds } = s;
  return {
    nodeCenter(i) {
      const { tree, x } = s;
      if (!tree || !x || Number.isNaN(x[i])) return null;
      const rect = canvas.canvas.getBoundingClientRect();
      const [sx, sy] = screenOf(i);
      return { x: rect.left + sx, y: rect.top + sy + (tree.boxH * view.sy) / 2 };
    },
    visibleCount: () => (s.visible ? s.visible.length : 0),
    visibleNodes: () => (s.visible ? Array.from(s.visible) : []),
    // node i's box in canvas pixels (null when hidden)
    nodeBox(i) {
      const { tree, x } = s;
      if (!tree || !x || Number.isNaN(x[i])) return null;
      const [cx, top] = screenOf(i);
      const half = (tree.boxWidths[i] * view.sx) / 2;
      return { left: cx - half, right: cx + half, top, bottom: top + tree.boxH * view.sy };
    },
    minimapBox: () => s.minimap || null,
    leafMixes: () => s.leafMixes || [],
    histograms: () => s.histograms || [],
    labels: () => s.drawn.map((item) => ({
      ...item,
      textWidth: Math.max(...item.lines.map((line) => textWidth(line))) * item.scale,
    })),
    view: () => ({ ...view, canvasWidth: canvas.state.width, canvasHeight: canvas.state.height,
      boxW: s.tree ? s.tree.boxW : 0, boxH: s.tree ? s.tree.boxH : 0 }),
    // the drawn extent of the visible tree, in canvas pixels
    extent() {
      const { tree } = s;
      if (!tree) return null;
      return {
        left: (bounds.minX - tree.boxW / 2) * view.sx + view.tx,
        right: (bounds.maxX + tree.boxW / 2) * view.sx + view.tx,
        top: view.ty,
        bottom: (bounds.maxDepth * tree.level + tree.boxH) * view.sy + view.ty,
      };
    },
    zoom: (px, py, factor) => zoomAt(px, py, factor),
    frameMs,
    theme: () => s.theme,
  };
}
