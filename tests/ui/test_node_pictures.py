"""The split nodes' pictures on the depth-3 scikit-learn tree on wine, as a
person sees them: zoomed in, every split node on screen draws the histogram
of its split feature by class of y with the threshold marked, and the
chosen row's value on the nodes of its path. The picture is saved as
``node-pictures-wine.png`` in the artefact folder (``test-artifacts/``)."""

import json

import pytest

from .conftest import screenshot
from .lab import kernel_eval, open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CELLS = [
    "from sklearn.datasets import load_wine\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_wine(return_X_y=True, as_frame=True)\n"
    "model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)",
    "view = btt.TreeView(model, X, y, row=0)\nview",
]

# the colour of the canvas pixels inside a histogram's plot, as distinct RGB triples
PLOT_COLOURS = """(el, box) => {
  const canvas = el.querySelector('.btt-tree-stage canvas');
  const ratio = canvas.width / canvas.clientWidth;
  const ctx = canvas.getContext('2d');
  const x = Math.round(box.left * ratio), y = Math.round(box.top * ratio);
  const w = Math.max(1, Math.round((box.right - box.left) * ratio)), h = Math.max(1, Math.round((box.bottom - box.top) * ratio));
  const data = ctx.getImageData(x, y, w, h).data;
  const seen = new Set();
  for (let k = 0; k < data.length; k += 4) seen.add(`${data[k]},${data[k + 1]},${data[k + 2]}`);
  return Array.from(seen);
}"""


def test_split_nodes_draw_their_class_histogram_when_large(page, lab, notebook_dir):
    write_notebook(notebook_dir / "pictures.ipynb", CELLS)
    open_and_run(page, lab, "pictures.ipynb")
    view = page.locator(".btt-tree-view-canvas")
    view.wait_for(state="visible", timeout=60_000)
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    tree = json.loads(
        kernel_eval(
            page,
            "import json, numpy as np\n"
            "t = model.tree_\n"
            "path = view.canvas.path\n"
            "print(json.dumps({'left': t.children_left.tolist(), 'n': t.n_node_samples.tolist(),"
            " 'path': list(path)}))",
        )
    )
    splits = {i for i, left in enumerate(tree["left"]) if left != -1}
    # zoomed out: boxes without pictures; zoomed in: every split node on screen has one
    view.evaluate("(el) => el.bttView.zoom(300, 100, 0.5 / el.bttView.view().sx)")
    page.wait_for_timeout(200)
    assert view.get_attribute("data-histograms") == "0"
    view.locator(".btt-button-reset").click()
    page.wait_for_timeout(200)
    view.evaluate("(el) => el.bttView.zoom(el.bttView.view().canvasWidth / 2, 0, 1.5)")
    page.wait_for_timeout(300)
    drawn = view.evaluate("(el) => el.bttView.histograms()")
    boxes = view.evaluate(
        "(el) => el.bttView.visibleNodes().map((i) => ({ node: i, box: el.bttView.nodeBox(i) }))"
        ".filter(({ box }) => box && box.left >= 0 && box.right <= el.bttView.view().canvasWidth"
        " && box.top >= 0 && box.bottom <= el.bttView.view().canvasHeight)"
    )
    on_screen = {item["node"] for item in boxes} & splits
    assert on_screen, "no whole split node on screen after zooming in"
    pictured = {item["node"] for item in drawn}
    assert on_screen <= pictured, f"split nodes {sorted(on_screen - pictured)} show no histogram"
    assert int(view.get_attribute("data-histograms")) == len(drawn)
    for item in drawn:
        node = item["node"]
        assert item["series"] == 3 and item["bins"] == 16
        assert item["rows"] == tree["n"][node]  # X is the training set: every training row reaches it
        assert item["left"] <= item["thresholdX"] <= item["right"], f"node {node}: threshold outside its plot"
        if node in tree["path"]:
            assert item["rowX"] is not None and item["left"] <= item["rowX"] <= item["right"]
        else:
            assert item["rowX"] is None
    # the pixels: class colours and the row's pink inside the root's box
    assert 0 in on_screen
    root = next(item["box"] for item in boxes if item["node"] == 0)
    colours = set(view.evaluate(PLOT_COLOURS, root))
    for rgb in ("78,121,167", "242,142,43", "89,161,79", "216,27,96"):  # classes 0, 1, 2; the row
        assert rgb in colours, f"the root's histogram has no pixel of {rgb}"
    screenshot(page, "node-pictures-wine", view)

    # the Map button hides the minimap of a zoomed view and shows it again
    shown = view.get_attribute("data-minimap")
    assert shown in ("1", "hidden"), "zoomed in, part of the tree is off screen: a minimap is due"
    toggle = view.locator(".btt-button-minimap")
    toggle.click()
    page.wait_for_timeout(200)
    assert view.get_attribute("data-minimap") == "off"
    assert view.evaluate("(el) => el.bttView.minimapBox()") is None
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    page.wait_for_timeout(200)
    assert view.get_attribute("data-minimap") == shown and toggle.get_attribute("aria-pressed") == "true"
