"""How big trees travel to the tree view, and how fast the browser draws them.

A complete binary tree of ``--nodes`` nodes (100,001 by default) is
turned into the tree view's payload. Printed side by side:

- Python: building the payload (binary column buffers, what the panel
  sends) versus encoding the same columns as JSON lists (what a widget
  without buffers would send), and the bytes of each; ratio JSON / buffers.
- Browser (Debian's Chromium with Playwright, when /usr/bin/chromium exists):
  the tree view's own module on a plain page, driven by a minimal stand-in
  for the widget model. First paint (the Python payload, then decode, label
  measuring, layout and draw at the initial depth), "Expand all" (layout and
  draw of every node), and the median zoom frame at the initial depth, with
  every node fitted, and with every node at the readable zoom (text drawn):
  the frame's drawing time (the view's own clock) and the time until it is
  on screen (the wait for the next vsync included).

Targets: payload >= 5x faster to encode than JSON lists; first paint under
2 s; zoom frames under 33 ms median (30 frames per second). The transfer
through the Jupyter comm (~80 ms for 100k nodes, see GUIDE) is not included.

With ``--pictures`` every split node also carries its histogram (16 bins x
3 classes of made-up counts, in the payload's columns), as a tree within
the picture budget would, so that the zoom frames draw them (the readable
zoom shows them); without it the tree travels as a tree past the budget.

    python benchmarks/bench_widgets.py [--nodes 100001] [--no-browser] [--pictures]
"""

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import best_of

from bandit_tree_tools.tree import make_tree
from bandit_tree_tools.widgets import _payload
from bandit_tree_tools.widgets._assets import module_source

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def complete_tree(n_nodes: int):
    n_internal = (n_nodes - 1) // 2
    n_nodes = 2 * n_internal + 1
    ids = np.arange(n_nodes)
    internal = ids < n_internal
    left = np.where(internal, 2 * ids + 1, -1)
    right = np.where(internal, 2 * ids + 2, -1)
    rng = np.random.default_rng(0)
    samples = np.zeros(n_nodes, dtype=np.int64)
    samples[~internal] = rng.integers(1, 50, size=(~internal).sum())
    for node in range(n_internal - 1, -1, -1):  # parents are sums of their children
        samples[node] = samples[2 * node + 1] + samples[2 * node + 2]
    value = rng.random((n_nodes, 3))
    value /= value.sum(axis=1, keepdims=True)
    return make_tree(
        left,
        right,
        feature=rng.integers(0, 20, n_nodes),
        threshold=rng.normal(size=n_nodes),
        value=value,
        n_node_samples=samples,
        impurity=rng.random(n_nodes),
    )


def made_up_histograms(tree):
    """Histogram columns for every split node (see _payload.split_histograms)."""
    rng = np.random.default_rng(1)
    split = np.flatnonzero(tree.children_left != -1)
    index = np.full(tree.n_nodes, -1)
    index[split] = np.arange(split.size)
    bins, series = _payload.HISTOGRAM_BINS, 3
    return {
        "hist_bins": bins,
        "hist_series": series,
        "hist_index": _payload.column(index, np.int32),
        "hist_low": _payload.column(tree.threshold[split] - 1, np.float64),
        "hist_high": _payload.column(tree.threshold[split] + 1, np.float64),
        "hist_counts": _payload.column(rng.integers(0, 20, size=split.size * bins * series), np.uint32),
        "hist_missing": _payload.column(np.zeros(split.size), np.uint32),
    }


def python_side(tree):
    seconds, payload = best_of(lambda: _payload.tree_payload(tree), repeat=5)
    binary = sum(len(v) for v in payload.values() if isinstance(v, bytes))

    def as_json():
        columns = {
            name: getattr(tree, name).tolist()
            for name in (
                "children_left",
                "children_right",
                "feature",
                "threshold",
                "value",
                "n_node_samples",
                "weighted_n_node_samples",
                "impurity",
            )
        }
        return json.dumps(columns)

    json_seconds, text = best_of(as_json, repeat=2)
    return payload, seconds, binary, json_seconds, len(text)


PAGE_SCRIPT = """
async ([source, columns, meta, names]) => {
  const decode = (b64) => { const raw = atob(b64); const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i); return new DataView(bytes.buffer); };
  const tree = Object.assign({}, meta);
  for (const [name, b64] of Object.entries(columns)) tree[name] = decode(b64);
  const state = { tree, feature_names: names, class_names: ["a", "b", "c"], value_kind: "fractions",
    split_rule: "le", output_label: "", title: "benchmark", initial_depth: 4, color_by: "prediction", path: [],
    selected_node: -1, selected_tree: 0, n_trees: 1, overview: {}, height: 0, error: "", histogram: {} };
  const handlers = {};
  const model = { get: (k) => state[k], set: (k, v) => { state[k] = v; (handlers["change:" + k] || []).forEach((f) => f()); },
    save_changes: () => {}, on: (e, f) => { (handlers[e] = handlers[e] || []).push(f); }, off: () => {} };
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const module = await import(url);
  const el = document.createElement("div"); el.style.width = "1200px"; document.body.appendChild(el);
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  let start = performance.now();
  module.default.render({ model, el });
  await frame();
  const first = performance.now() - start;
  const root = el.querySelector(".btt-tree-view-canvas");
  const canvas = el.querySelector(".btt-tree-stage canvas");
  const rect = canvas.getBoundingClientRect();
  const median = (values) => { const s = [...values].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  // zoom frames: the drawing time of each frame (the view's own clock) and
  // the time until the next frame is on screen (vsync included)
  async function zoomFrames(n, y = 200) {
    const draw = []; const shown = [];
    for (let k = 0; k < n; k++) {
      const t0 = performance.now();
      canvas.dispatchEvent(new WheelEvent("wheel", { deltaY: k % 2 ? 120 : -120, clientX: rect.left + 450,
        clientY: rect.top + y, bubbles: true, cancelable: true }));
      // the view's redraw was queued first: this callback runs right after it
      await new Promise((resolve) => requestAnimationFrame(resolve));
      shown.push(performance.now() - t0);
      draw.push(root.bttView.frameMs());
    }
    return { draw: median(draw), shown: median(shown), text: root.dataset.textShown === "1",
      pictures: Number(root.dataset.histograms || 0) };
  }
  const initial = await zoomFrames(20);
  start = performance.now();
  el.querySelector(".btt-button-expand").click();
  await frame();
  const expand = performance.now() - start;
  const expanded = await zoomFrames(20);
  // expanded, zoomed in to the readable scale: boxes with text
  root.bttView.zoom(450, 200, 1 / Math.min(root.bttView.view().sx, root.bttView.view().sy));
  await frame();
  const readable = await zoomFrames(20);
  // fitted again, then the same zoom towards the deepest levels: the screen full of boxes
  el.querySelector(".btt-button-fit").click();
  await frame();
  const bottom = Math.min(canvas.clientHeight - 20, root.bttView.extent().bottom - 10);
  root.bttView.zoom(450, bottom, 1 / Math.min(root.bttView.view().sx, root.bttView.view().sy));
  await frame();
  const deep = await zoomFrames(20, bottom);
  return { first, expand, initial, expanded, readable, deep, visible: Number(root.dataset.visibleNodes),
    pictures: Number(root.dataset.histograms || 0) };
}
"""


def browser_side(payload):
    import base64

    from playwright.sync_api import sync_playwright

    columns = {k: base64.b64encode(v).decode() for k, v in payload.items() if isinstance(v, bytes)}
    meta = {k: v for k, v in payload.items() if not isinstance(v, bytes)}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_content("<html><body></body></html>")
        names = [f"feature number {k} (long name)" for k in range(20)]
        result = page.evaluate(PAGE_SCRIPT, [module_source("tree_view.js"), columns, meta, names])
        browser.close()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_001)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--pictures", action="store_true", help="every split node carries its histogram")
    args = parser.parse_args()
    tree = complete_tree(args.nodes)
    payload, seconds, binary, json_seconds, json_bytes = python_side(tree)
    if args.pictures:
        payload.update(made_up_histograms(tree))
    print(f"tree: {tree.n_nodes:,} nodes, depth {tree.max_depth}")
    print(f"{'':28}{'buffers':>12}{'JSON lists':>14}{'JSON / buffers':>16}")
    print(f"{'encode (ms)':28}{1000 * seconds:12.1f}{1000 * json_seconds:14.1f}{json_seconds / seconds:16.1f}")
    print(f"{'size (MB)':28}{binary / 1e6:12.2f}{json_bytes / 1e6:14.2f}{json_bytes / binary:16.1f}")
    if args.no_browser or not CHROMIUM.exists():
        print("browser: skipped" + ("" if args.no_browser else f" ({CHROMIUM} not found)"))
        return
    result = browser_side(payload)
    paint = 1000 * seconds + result["first"]
    print(f"browser (Chromium, {result['visible']:,} nodes visible after expand all):")
    print(f"  first paint: payload + decode, layout, draw  {paint:8.1f} ms   (target 2000; {paint / 2000:.2f} of it)")
    print(f"  expand all: layout + draw                     {result['expand']:8.1f} ms")
    print(f"  {'zoom frames, median (ms)':44}{'draw':>8}{'on screen':>11}   (target 33 ms)")
    for name, label in (
        ("initial", "initial depth, readable zoom"),
        ("expanded", "every node, fitted (dots)"),
        ("readable", "every node, readable zoom (text)"),
        ("deep", "same, towards the deepest levels"),
    ):
        frame = result[name]
        pictures = f", {frame['pictures']} histograms" if args.pictures else ""
        print(
            f"  {label:44}{frame['draw']:8.1f}{frame['shown']:11.1f}   {'text' if frame['text'] else 'no text'}{pictures}"
        )


if __name__ == "__main__":
    main()
