"""The first view of a small tree, as a new user meets it: the depth-3
scikit-learn tree on wine. Every box is whole on the canvas, the minimap
hides no node, a click on a node on screen does not move the view, and the
wheel after Fit zooms towards legible (not stretched) boxes.

The picture of that first view is saved as ``first-view-wine.png`` in the
artefact folder (``test-artifacts/``, git-ignored; ``BTT_UI_ARTIFACTS``
points it elsewhere).
"""

import json

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .conftest import ARTIFACTS, screenshot
from .lab import kernel_eval, open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

WINE_CELLS = [
    "from sklearn.datasets import load_wine\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_wine(return_X_y=True, as_frame=True)\n"
    "model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)",
    "view = btt.TreeView(model, X, y)\nview",
    "panel = btt.PruningPanel(model, X, y, n_rounds=300, min_depth=1)\npanel.start()\npanel.wait(60)\npanel",
]

# every chart canvas on the page: its bitmap against its box (device pixels)
CANVAS_SIZES = """() => Array.from(document.querySelectorAll('canvas.btt-canvas'))
  .filter((c) => c.offsetParent !== null)
  .map((c) => ({ cls: c.parentElement.className, bitmap: c.width, box: Math.round(c.clientWidth * (window.devicePixelRatio || 1)) }))"""

# the dark theme is on the page (a dark --jp-layout-color0) and the tree view
# has read its colours
DARK_THEME_READ = """(el) => {
  const value = getComputedStyle(el).getPropertyValue('--jp-layout-color0').trim();
  const probe = document.createElement('span');
  probe.style.color = value;
  document.body.appendChild(probe);
  const [r, g, b] = getComputedStyle(probe).color.match(/[\\d.]+/g).map(Number);
  probe.remove();
  return document.body.dataset.jpThemeName === 'JupyterLab Dark' && r + g + b < 200
    && el.bttView.theme().background === value;
}"""

# the drawn box of every visible node, in canvas pixels, and the minimap's box
BOXES = """(el) => {
  const v = el.bttView;
  const view = v.view();
  const out = [];
  for (const i of v.visibleNodes()) {
    const box = v.nodeBox(i);
    if (box) out.push({ node: i, ...box });
  }
  return { boxes: out, minimap: v.minimapBox(), width: view.canvasWidth, height: view.canvasHeight };
}"""


def overlaps(a, b) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_first_view_frames_the_wine_tree(page, lab, notebook_dir):
    write_notebook(notebook_dir / "wine.ipynb", WINE_CELLS)
    open_and_run(page, lab, "wine.ipynb")
    view = page.locator(".btt-tree-view-canvas").first  # the PruningPanel below has a view of its own
    view.wait_for(state="visible", timeout=60_000)
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    n_nodes = int(kernel_eval(page, "print(model.tree_.node_count)"))
    found = view.evaluate(BOXES)
    shown = {box["node"] for box in found["boxes"]}
    assert shown == set(range(n_nodes)), f"the first view shows nodes {sorted(shown)} of {n_nodes}"
    for box in found["boxes"]:
        assert box["left"] >= 0 and box["right"] <= found["width"], f"node {box['node']} cut at a side: {box}"
        assert box["top"] >= 0 and box["bottom"] <= found["height"], (
            f"node {box['node']} cut at the top or bottom: {box}"
        )
        if found["minimap"]:
            assert not overlaps(box, found["minimap"]), f"the minimap hides node {box['node']}"
    assert view.get_attribute("data-text-shown") == "1"
    screenshot(page, "first-view-wine", view)

    # Save: the view as a PNG download; from Python, the static picture as SVG and PNG
    with page.expect_download(timeout=10_000) as download:
        view.locator(".btt-button-save").click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    download.value.save_as(ARTIFACTS / "first-view-wine-saved.png")
    assert (ARTIFACTS / "first-view-wine-saved.png").read_bytes()[:4] == b"\x89PNG"
    kernel_eval(page, f"view.save({str(ARTIFACTS / 'first-view-wine.svg')!r})")
    assert (ARTIFACTS / "first-view-wine.svg").read_text().startswith("<svg")

    # zoomed in, the minimap shows where it hides no node
    width = found["width"]
    view.evaluate(f"(el) => el.bttView.zoom({width / 2}, {found['height'] - 30}, 1.8)")  # towards the leaves
    page.wait_for_timeout(200)
    zoomed = view.evaluate(BOXES)
    # the minimap takes a free corner, or stays away when every corner holds a node
    assert view.get_attribute("data-minimap") in ("1", "hidden")
    assert (zoomed["minimap"] is None) == (view.get_attribute("data-minimap") == "hidden")
    for box in zoomed["boxes"] if zoomed["minimap"] else []:
        assert not overlaps(box, zoomed["minimap"]), f"the minimap hides node {box['node']}"
    # drawn large, each leaf shows its class mix as a bar sized by its rows
    mixes = view.evaluate("(el) => el.bttView.leafMixes()")
    values = json.loads(
        kernel_eval(
            page,
            (
                "import json; print(json.dumps({'value': model.tree_.value[:, 0].tolist(), 'n': model.tree_.n_node_samples.tolist()}))"
            ),
        )
    )
    assert mixes, "no leaf shows its class mix at this zoom"
    widest = max(mix["width"] / mix["rows"] for mix in mixes)
    for mix in mixes:
        node = mix["node"]
        shares = dict((c, share) for c, share in mix["segments"])
        expected = {c: v for c, v in enumerate(values["value"][node]) if v > 0}
        assert shares.keys() == expected.keys() and all(abs(shares[c] - expected[c]) < 1e-6 for c in expected)
        assert abs(mix["width"] - widest * mix["rows"]) < 2.5  # as long as its share of the largest leaf's rows
    view.locator(".btt-button-reset").click()
    page.wait_for_timeout(200)

    # a click on a node that is on screen selects it and leaves the view alone
    before = view.evaluate("(el) => el.bttView.view()")
    centre = view.evaluate("(el) => el.bttView.nodeCenter(4)")
    page.mouse.click(centre["x"], centre["y"])
    page.wait_for_function("(el) => el.dataset.selectedNode === '4'", arg=view.element_handle(), timeout=10_000)
    after = view.evaluate("(el) => el.bttView.view()")
    assert [after[k] for k in ("sx", "sy", "tx", "ty")] == [before[k] for k in ("sx", "sy", "tx", "ty")]

    # after Fit, the same: clicks do not re-zoom
    view.locator(".btt-button-fit").click()
    page.wait_for_timeout(200)
    before = view.evaluate("(el) => el.bttView.view()")
    centre = view.evaluate("(el) => el.bttView.nodeCenter(2)")
    page.mouse.click(centre["x"], centre["y"])
    page.wait_for_function("(el) => el.dataset.selectedNode === '2'", arg=view.element_handle(), timeout=10_000)
    after = view.evaluate("(el) => el.bttView.view()")
    assert [after[k] for k in ("sx", "sy", "tx", "ty")] == [before[k] for k in ("sx", "sy", "tx", "ty")]

    # search: thresholds and leaf classes match, not only feature names; a
    # "no node matches" note goes once the user moves on
    search = view.locator(".btt-search")
    threshold = kernel_eval(page, "print(f'{model.tree_.threshold[1]:.6g}')").strip()
    search.fill(threshold)
    search.press("Enter")
    page.wait_for_function("(el) => el.dataset.selectedNode === '1'", arg=view.element_handle(), timeout=10_000)
    search.fill("no such thing")
    search.press("Enter")
    status = view.locator(".btt-tree-status")
    assert "no node matches" in status.inner_text() and status.is_visible()
    centre = view.evaluate("(el) => el.bttView.nodeCenter(0)")
    page.mouse.click(centre["x"], centre["y"])
    page.wait_for_timeout(200)
    assert not status.is_visible()

    # after a theme change, every chart's bitmap is as wide as its box (not blurred)
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    # wait on what the test is about, not on a time: the dark theme applied
    # (the tree view read its colours) and every chart canvas repainted at
    # its box's width (a resized box is redrawn on a later frame, late on a
    # busy machine); the timeout only stops a hang
    page.wait_for_function(DARK_THEME_READ, arg=view.element_handle(), timeout=60_000)
    page.locator(".btt-pruning-panel").scroll_into_view_if_needed()
    try:
        page.wait_for_function(
            f"() => ({CANVAS_SIZES})().every((s) => Math.abs(s.bitmap - s.box) <= 1)", timeout=60_000
        )
    except PlaywrightTimeoutError:
        pass  # the assertion below says which canvas stayed at the wrong width
    sizes = page.evaluate(CANVAS_SIZES)
    assert len(sizes) >= 3
    for size in sizes:
        assert abs(size["bitmap"] - size["box"]) <= 1, (
            f"a canvas of {size['cls']} is drawn {size['bitmap']} px wide in a {size['box']} px box"
        )
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")


BIG_CELLS = [
    "import numpy as np\n"
    "from sklearn.tree import DecisionTreeRegressor\n"
    "import bandit_tree_tools as btt\n"
    "rng = np.random.default_rng(0)\n"
    "X = rng.normal(size=(6_000, 6))\n"
    "y = X[:, 0] * 3 + np.sin(4 * X[:, 1]) + rng.normal(scale=0.3, size=6_000)\n"
    "model = DecisionTreeRegressor(max_leaf_nodes=2_700, random_state=0).fit(X, y)",
    "big = btt.TreeView(model)\nbig",
]


def test_wheel_after_fit_zooms_towards_legible_boxes(page, lab, notebook_dir):
    write_notebook(notebook_dir / "wheel.ipynb", BIG_CELLS)
    open_and_run(page, lab, "wheel.ipynb")
    view = page.locator(".btt-tree-view-canvas")
    view.wait_for(state="visible", timeout=60_000)
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    view.locator(".btt-button-expand").click()
    page.wait_for_timeout(300)
    fitted = view.evaluate("(el) => el.bttView.view()")
    assert fitted["sy"] / fitted["sx"] > 4  # Fit of a wide tree stretches the height
    rect = view.locator(".btt-tree-stage canvas").bounding_box()
    page.mouse.move(rect["x"] + rect["width"] / 2, rect["y"] + 40)
    notches = 0
    while view.get_attribute("data-text-shown") != "1":
        notches += 1
        assert notches <= 40, (
            f"40 notches of the wheel after Fit and still no text: {view.evaluate('(el) => el.bttView.view()')}"
        )
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(30)
    zoomed = view.evaluate("(el) => el.bttView.view()")
    assert zoomed["sy"] / zoomed["sx"] < 1.5, f"text shows only in boxes stretched {zoomed['sy'] / zoomed['sx']:.1f}:1"
