// The tree view's camera: world <-> screen coordinates, zoom limits,
// fitting nodes on screen, keeping part of the tree in view, the canvas
// height that follows the tree, and which node is under the pointer.
//
// treeCamera(scene) returns these functions for one view; `scene` is the
// view's state built in tree_view.js (newViewState): read at each call, its
// tree and layout are the current ones; view, bounds, canvas, stage, root and
// model are its own objects.

export const READABLE = 0.8; // first views never zoom below this (12 px text -> 9.6 px)
export const LEGIBLE = 0.75; // a whole tree is framed at this scale or above (9 px text)
export const TEXT_MIN_SCALE = 0.55; // below this, boxes without text
export const MAX_SCALE = 3;
export const AUTO_HEIGHT = [240, 720]; // canvas height range when it follows the tree

export function treeCamera(scene) {
  const { view, bounds, canvas, stage, root, model } = scene;

  function worldHeight(maxDepth) {
    const { tree } = scene;
    return maxDepth * tree.level + tree.boxH + 20;
  }

  // zooming out stops at half the scale that shows everything (so the
  // tree never shrinks to a dot), and never above the readable scale
  function zoomLimits() {
    const { tree } = scene;
    const width = canvas.state.width || stage.clientWidth || 800;
    const height = canvas.state.height;
    view.minSx = Math.min(READABLE, (0.5 * width) / (bounds.maxX - bounds.minX + tree.slot));
    view.minSy = Math.min(READABLE, (0.5 * height) / worldHeight(bounds.maxDepth));
  }

  // Keep part of the tree in view: panning or zooming can never leave an
  // empty canvas.
  function clampView() {
    const { tree } = scene;
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

  function viewport() {
    return [canvas.state.width || stage.clientWidth || 800, canvas.state.height];
  }

  // Fit: every visible node, width and height scaled separately.
  function fitAll() {
    const { tree } = scene;
    if (!tree) return;
    let [width, height] = viewport();
    const worldW = bounds.maxX - bounds.minX + tree.slot;
    view.sx = Math.min(1.2, width / worldW);
    // a canvas that follows the tree grows (up to its limit) so that the
    // height does not shrink the text away when the width would keep it
    if (model.get("height") <= 0) {
      const wanted = worldHeight(bounds.maxDepth) * Math.min(1.2, Math.max(view.sx, TEXT_MIN_SCALE)) + 18;
      const grown = Math.round(Math.max(AUTO_HEIGHT[0], Math.min(AUTO_HEIGHT[1], wanted)));
      if (grown > height) {
        canvas.setHeight(grown);
        root.dataset.canvasHeight = String(grown);
        height = grown;
      }
    }
    view.sy = Math.min(1.2, (height - 10) / worldHeight(bounds.maxDepth));
    view.tx = (width - (bounds.maxX + bounds.minX) * view.sx) / 2;
    view.ty = 8;
    view.fitted = true;
    canvas.redraw();
  }

  // Show nodes at one scale that keeps text readable; when they do not
  // fit, centre on `focus` (the root, or the end of a row's path).
  function fitNodes(nodes, focus) {
    const { tree, x } = scene;
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
    // a whole set that fits legibly is framed whole; else readable, around the focus
    const whole = s >= LEGIBLE;
    view.sx = view.sy = whole ? s : Math.max(s, READABLE);
    s = view.sx;
    if (whole || focus === undefined) {
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

  function screenOf(i) {
    const { tree, x } = scene;
    return [x[i] * view.sx + view.tx, tree.depth[i] * tree.level * view.sy + view.ty];
  }

  function nodeAt(px, py) {
    const { tree, x, visible } = scene;
    if (!tree) return -1;
    const halfH = Math.max(5, (tree.boxH * view.sy) / 2);
    const levelH = tree.level * view.sy;
    let best = -1;
    let bestDistance = Infinity;
    for (let k = 0; k < visible.length; k++) {
      const i = visible[k];
      const dx = Math.abs(px - (x[i] * view.sx + view.tx));
      if (dx > Math.max(5, (tree.boxWidths[i] * view.sx) / 2)) continue;
      const dy = Math.abs(py - (tree.depth[i] * levelH + view.ty + halfH));
      if (dy > halfH) continue;
      if (dx + dy < bestDistance) {
        best = i;
        bestDistance = dx + dy;
      }
    }
    return best;
  }

  // bring node i on screen (at a readable zoom) unless it already is: a
  // click on a node in view never moves the view, whatever the zoom
  function centreOn(i, always = false) {
    const { tree, x } = scene;
    const [width, height] = viewport();
    const [cx, top] = screenOf(i);
    const inside = cx > 20 && cx < width - 20 && top > 0 && top + tree.boxH * view.sy < height;
    if (inside && !always) return;
    view.sx = view.sy = Math.max(READABLE, Math.min(view.sx, view.sy, 1.2));
    view.tx = width / 2 - x[i] * view.sx;
    view.ty = height / 2 - (tree.depth[i] * tree.level + tree.boxH / 2) * view.sy;
    clampView();
    canvas.redraw();
  }

  // The wheel zooms towards boxes of their own proportions: after a Fit that
  // stretched one axis, zooming in grows only the smaller scale (zooming out
  // shrinks only the larger one) until the two meet, then both together.
  function zoomAt(px, py, factor) {
    let sx = view.sx * factor;
    let sy = view.sy * factor;
    if (factor > 1) {
      if (view.sx < view.sy) sy = Math.max(view.sy, sx);
      else if (view.sy < view.sx) sx = Math.max(view.sx, sy);
    } else if (factor < 1) {
      if (view.sx < view.sy) sx = Math.min(view.sx, sy);
      else if (view.sy < view.sx) sy = Math.min(view.sy, sx);
    }
    sx = Math.max(view.minSx, Math.min(MAX_SCALE, sx));
    sy = Math.max(view.minSy, Math.min(MAX_SCALE, sy));
    view.tx = px - ((px - view.tx) * sx) / view.sx;
    view.ty = py - ((py - view.ty) * sy) / view.sy;
    view.sx = sx;
    view.sy = sy;
    clampView();
    canvas.redraw();
  }

  return { worldHeight, zoomLimits, clampView, autoHeight, viewport, fitAll, fitNodes, screenOf, nodeAt, centreOn, zoomAt };
}
