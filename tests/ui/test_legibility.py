"""What a person can read in the tree view: labels at the default zoom,
text contrast in the light and dark themes, big trees using the canvas.

Labels are read back from the page's own record of what the last frame
drew (``bttView.labels()``): text, font size, the box it sits in, and the
text and fill colours.
"""

import json

import pytest

from .conftest import screenshot
from .lab import kernel_eval, open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

MODELS_CELLS = [
    "import json\n"
    "import lightgbm, xgboost\n"
    "from sklearn.datasets import load_breast_cancer\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_breast_cancer(return_X_y=True, as_frame=True)\n"
    "names = ['malignant', 'benign']\n"
    "cart = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)\n"
    "lgbm = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=31, verbose=-1).fit(X, y)\n"
    "xgbm = xgboost.XGBClassifier(n_estimators=20, max_depth=6).fit(X, y)",
    "views = [btt.TreeView(cart, X, y, class_names=names), btt.TreeView(lgbm), btt.TreeView(xgbm, X, y, row=3)]\n"
    "views[0]",
    "views[1]",
    "views[2]",
]

# The contrast of every text element with the first opaque background
# behind it (WCAG 2.x), for the panel's DOM text.
DOM_CONTRAST = """(root) => {
  const parse = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = (rgb) => {
    const [r, g, b] = rgb.slice(0, 3).map((c) => {
      const v = c / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const rgba = parse(getComputedStyle(e).backgroundColor);
      if (rgba.length >= 3 && (rgba.length < 4 || rgba[3] > 0.5)) return rgba;
    }
    return [255, 255, 255];
  };
  const found = [];
  for (const element of root.querySelectorAll("*")) {
    const text = Array.from(element.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
    if (!text || element.offsetParent === null) continue;
    // SVG text is painted with its fill, not its colour
    const style = getComputedStyle(element);
    const fg = parse(element instanceof SVGElement && style.fill && style.fill.startsWith("rgb") ? style.fill : style.color);
    const bg = background(element);
    const [a, b] = [lum(fg), lum(bg)].sort((p, q) => q - p);
    found.push({ text: text.slice(0, 40), cls: element.className, ratio: (a + 0.05) / (b + 0.05) });
  }
  return found;
}"""


def luminance(colour) -> float:
    colour = colour.strip()
    if colour.startswith("#"):
        hex_ = colour[1:]
        if len(hex_) == 3:
            hex_ = "".join(c + c for c in hex_)
        rgb = [int(hex_[k : k + 2], 16) for k in (0, 2, 4)]
    else:
        rgb = [float(v) for v in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]]
    lin = [(c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def labels(view):
    return view.evaluate("(el) => el.bttView.labels()")


def check_contrast(page, views, theme: str) -> None:
    for k in range(views.count()):
        view = views.nth(k)
        for label in labels(view):
            if label.get("faded"):
                continue
            ratio = contrast(label["fg"], label["bg"])
            assert ratio >= 4.5, f"{theme}: canvas text {label['lines']} has contrast {ratio:.2f}"
        for item in view.evaluate(DOM_CONTRAST):
            assert item["ratio"] >= 4.5, f"{theme}: {item['text']!r} ({item['cls']}) has contrast {item['ratio']:.2f}"


def set_theme(page, name: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    page.wait_for_function(f"() => document.body.dataset.jpThemeName === '{name}'", timeout=30_000)
    page.wait_for_timeout(800)


def test_labels_are_whole_and_readable_in_both_themes(page, lab, notebook_dir):
    write_notebook(notebook_dir / "legible.ipynb", MODELS_CELLS)
    open_and_run(page, lab, "legible.ipynb")
    views = page.locator(".btt-tree-view-canvas")
    views.nth(2).wait_for(state="visible", timeout=60_000)
    page.wait_for_timeout(500)
    facts = json.loads(
        kernel_eval(
            page,
            (
                "print(json.dumps([{'names': list(v.canvas.feature_names), 'feature': v.ensemble.trees[0].feature.tolist(),"
                " 'leaf': (v.ensemble.trees[0].children_left == -1).tolist()} for v in views]))"
            ),
        )
    )
    for k, (kind, fact) in enumerate(zip(["sklearn", "lightgbm", "xgboost"], facts)):
        view = views.nth(k)
        view.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        assert view.get_attribute("data-text-shown") == "1", f"{kind}: no text at the default zoom"
        drawn = [label for label in labels(view) if "node" in label]
        assert len(drawn) >= 5, f"{kind}: only {len(drawn)} labelled nodes in the first view"
        edges = [label for label in labels(view) if label.get("edge")]
        assert {"yes", "no"} <= {label["lines"][0] for label in edges}, f"{kind}: edges carry no labels"
        for label in drawn:
            node = label["node"]
            text = " ".join(label["lines"])
            assert "…" not in text, f"{kind}: node {node} reads {text!r}"
            assert label["font"] >= 9, f"{kind}: node {node} drawn at {label['font']:.1f} px"
            assert label["textWidth"] <= label["width"] + 0.5, f"{kind}: node {node}'s text overflows its box"
            if fact["leaf"][node]:
                assert any(ch.isdigit() for ch in label["lines"][0]), f"{kind}: leaf {node} has no value: {text!r}"
            else:
                name = fact["names"][fact["feature"][node]]
                assert "".join(label["lines"]).replace(" ", "").startswith(name.replace(" ", "")), (
                    f"{kind}: node {node} should name {name!r}, reads {text!r}"
                )
                assert any(op in text for op in ("≤ ", "< ", " in {")), f"{kind}: node {node} shows no threshold"
            assert ("train " in text) or ("cover " in text), f"{kind}: node {node} shows no training count"
        screenshot(page, f"legible-{kind}", view)
    first = " ".join(" ".join(label["lines"]) for label in labels(views.nth(0)))
    assert "malignant" in first or "benign" in first  # class_names reach the leaves
    assert " · X " in first  # the rows of the user's X next to the training count
    assert (
        "lighter" in views.nth(0).locator(".btt-legend").inner_text()
        or "purer" in views.nth(0).locator(".btt-legend").inner_text()
    )
    check_contrast(page, views, "light")
    set_theme(page, "JupyterLab Dark")
    canvas_bg = views.nth(0).evaluate(
        "(el) => getComputedStyle(el.querySelector('.btt-tree-stage canvas')).backgroundColor"
    )
    assert luminance(canvas_bg) < 0.1, f"the canvas stays light in the dark theme: {canvas_bg}"
    check_contrast(page, views, "dark")
    views.nth(0).scroll_into_view_if_needed()
    screenshot(page, "legible-dark-sklearn", views.nth(0))
    views.nth(2).scroll_into_view_if_needed()
    screenshot(page, "legible-dark-xgboost", views.nth(2))
    set_theme(page, "JupyterLab Light")


BIG_CELLS = [
    "import numpy as np\n"
    "from sklearn.tree import DecisionTreeRegressor\n"
    "import bandit_tree_tools as btt\n"
    "rng = np.random.default_rng(0)\n"
    "X = rng.normal(size=(20_000, 8))\n"
    "y = X[:, 0] * 3 + np.sin(4 * X[:, 1]) + rng.normal(scale=0.3, size=20_000)\n"
    "model = DecisionTreeRegressor(max_leaf_nodes=5_000, random_state=0).fit(X, y)\n"
    "deep_row = int(np.argmax(model.decision_path(X).sum(axis=1)))",
    "big = btt.TreeView(model, X, y, row=deep_row)\nbig",
]


def extent(view):
    return view.evaluate("(el) => ({...el.bttView.extent(), ...el.bttView.view()})")


def test_big_tree_fills_the_canvas_and_never_gets_lost(page, lab, notebook_dir):
    write_notebook(notebook_dir / "big.ipynb", BIG_CELLS)
    open_and_run(page, lab, "big.ipynb")
    view = page.locator(".btt-tree-view-canvas")
    view.wait_for(state="visible", timeout=60_000)
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert int(view.get_attribute("data-nodes")) == 9_999
    # row= opens along the path: the path's leaf is on the canvas, readable
    path = [int(v) for v in kernel_eval(page, "print(*big.canvas.path)").split()]
    assert len(path) > 12
    box = extent(view)
    end = view.evaluate(f"(el) => el.bttView.nodeCenter({path[-1]})")
    rect = view.locator(".btt-tree-stage canvas").bounding_box()
    assert rect["x"] <= end["x"] <= rect["x"] + rect["width"] and rect["y"] <= end["y"] <= rect["y"] + rect["height"]
    assert min(box["sx"], box["sy"]) >= 0.79 and view.get_attribute("data-text-shown") == "1"
    screenshot(page, "big-row-path", view)
    # Expand all + Fit: the whole width and most of the height are used
    view.locator(".btt-button-expand").click()
    page.wait_for_timeout(400)
    box = extent(view)
    assert int(view.get_attribute("data-visible-nodes")) == 9_999
    assert box["right"] - box["left"] >= 0.9 * box["canvasWidth"]
    assert box["bottom"] - box["top"] >= 0.8 * box["canvasHeight"], box
    screenshot(page, "big-expanded-fit", view)
    # zoom out as far as the wheel goes: the tree stays at least half the canvas
    stage = view.locator(".btt-tree-stage canvas")
    stage.hover()
    for _ in range(30):
        page.mouse.wheel(0, 400)
    page.wait_for_timeout(300)
    box = extent(view)
    assert box["right"] - box["left"] >= 0.45 * box["canvasWidth"]
    # zoom in far at a corner, then drag away: some of the tree stays in view
    view.evaluate("(el) => el.bttView.zoom(5, 5, 500)")
    rect = stage.bounding_box()
    page.mouse.move(rect["x"] + 10, rect["y"] + 10)
    page.mouse.down()
    page.mouse.move(rect["x"] + rect["width"] - 5, rect["y"] + rect["height"] - 5, steps=5)
    page.mouse.up()
    box = extent(view)
    assert (
        box["right"] > 0 and box["left"] < box["canvasWidth"] and box["bottom"] > 0 and box["top"] < box["canvasHeight"]
    )
    # search by node id: revealed, centred and selected
    view.locator(".btt-button-reset").click()
    target = path[-1]
    view.locator(".btt-search").fill(f"#{target}")
    view.locator(".btt-search").press("Enter")
    page.wait_for_function(f"(el) => el.dataset.selectedNode === '{target}'", arg=view.element_handle(), timeout=10_000)
    centre = view.evaluate(f"(el) => el.bttView.nodeCenter({target})")
    rect = stage.bounding_box()
    assert abs(centre["x"] - (rect["x"] + rect["width"] / 2)) < 5
    assert kernel_eval(page, "print(big.selected_node)").strip() == str(target)
    screenshot(page, "big-search", view)
