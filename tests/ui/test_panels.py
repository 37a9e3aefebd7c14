"""The panels in a real browser: JupyterLab in Debian's Chromium.

Each test writes a small notebook, runs it through the JupyterLab UI, and
checks what a person would see (the panels' stable ``btt-`` CSS classes),
clicks, and that clicks reach Python (synced traits read back from the
kernel). Screenshots go to test-artifacts/.
"""

import pytest

from .conftest import screenshot
from .lab import kernel_eval, open_and_run, write_notebook

# one JupyterLab for the module: keep its tests on one xdist worker (effective
# with --dist loadgroup)
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

TREE_CELLS = [
    "from sklearn.datasets import load_iris\n"
    "from sklearn.ensemble import RandomForestClassifier\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_iris(return_X_y=True, as_frame=True)\n"
    "holed = X.copy()\n"
    "holed.iloc[1::10] = float('nan')  # rows without values: the details say where they go\n"
    "model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(holed, y)",
    "view = btt.TreeView(model, holed, y, row=100)\nview",
    "forest = RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y)\n"
    "forest_view = btt.TreeView(forest, X, y)\nforest_view",
    "btt.TreeView(object())  # bad input: a message, not a traceback",
]


def assert_no_page_errors(page) -> None:
    errors = [message for message in page.console_messages if message.startswith("pageerror")]
    assert not errors, f"uncaught errors in the page: {errors}"


def wait_for_kernel(page, code: str, expected: str, timeout: float = 10.0) -> None:
    """Poll the kernel until ``code`` prints ``expected`` (a synced trait
    reaches Python after the browser sends it)."""
    import time

    deadline = time.monotonic() + timeout
    printed = kernel_eval(page, code).strip()
    while printed != expected:
        assert time.monotonic() < deadline, f"{code!r} printed {printed!r}, not {expected!r}, after {timeout} s"
        time.sleep(0.1)
        printed = kernel_eval(page, code).strip()


def click_node(page, canvas, node: int) -> None:
    position = canvas.evaluate(f"(el) => el.bttView.nodeCenter({node})")
    assert position is not None, f"node {node} is not drawn"
    page.mouse.click(position["x"], position["y"])


def test_tree_view(page, lab, notebook_dir):
    write_notebook(notebook_dir / "tree_view.ipynb", TREE_CELLS)
    open_and_run(page, lab, "tree_view.ipynb")
    views = page.locator(".btt-tree-view-canvas")
    views.first.wait_for(state="visible", timeout=60_000)
    assert views.count() == 2
    single = views.nth(0)
    single.scroll_into_view_if_needed()
    # the tree opened at its initial depth and drew every visible node
    assert int(single.get_attribute("data-nodes")) > 10
    assert int(single.get_attribute("data-visible-nodes")) >= 7
    # row=100 opens along that row's path, its leaf in view
    path = [int(v) for v in kernel_eval(page, "print(*view.canvas.path)").split()]
    end = single.evaluate(f"(el) => el.bttView.nodeCenter({path[-1]})")
    stage = single.locator(".btt-tree-stage canvas").bounding_box()
    assert stage["y"] <= end["y"] <= stage["y"] + stage["height"]
    # a click selects a node: details appear and the kernel sees it
    single.locator(".btt-button-fit").click()  # the whole tree, so that the root is on screen
    click_node(page, single, 0)
    details = single.locator(".btt-tree-details .btt-details-title")
    details.wait_for(timeout=10_000)
    assert "Node 0" in details.inner_text()
    assert "petal" in single.locator(".btt-details-table").inner_text()
    missing = kernel_eval(page, "h = view.node_histogram(0); print(h['missing'], h['missing_left'])").split()
    assert single.locator(".btt-histogram-missing").inner_text() == (
        f"{missing[0]} of them NaN or infinite, not drawn: {missing[1]} go left, {int(missing[0]) - int(missing[1])} right"
    )
    wait_for_kernel(page, "print(view.selected_node)", "0")  # the click reached Python
    click_node(page, single, 2)
    page.wait_for_function("(el) => el.dataset.selectedNode === '2'", arg=single.element_handle())
    wait_for_kernel(page, "print(view.selected_node)", "2")
    screenshot(page, "tree_view-single", single)
    # the ensemble: an overview strip; a click on a bar drills into that tree
    forest = views.nth(1)
    forest.scroll_into_view_if_needed()
    strip = forest.locator(".btt-overview canvas")
    assert strip.is_visible()
    box = strip.bounding_box()
    page.mouse.click(box["x"] + box["width"] * (5.5 / 12), box["y"] + box["height"] / 2)
    page.wait_for_function(
        "(el) => el.querySelector('.btt-tree-title').textContent.includes('tree 5 of 12')",
        arg=forest.element_handle(),
        timeout=10_000,
    )
    wait_for_kernel(page, "print(forest_view.selected_tree)", "5")
    screenshot(page, "tree_view-forest", forest)
    # the model that cannot be imported: one readable line in the output, no traceback
    message = page.locator(".btt-tree-view .btt-panel-error")
    assert message.count() == 1
    assert message.inner_text().startswith("UnsupportedModelError: cannot import a builtins.object")
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert_no_page_errors(page)


PRUNING_CELLS = [
    "from sklearn.datasets import load_breast_cancer\n"
    "from sklearn.model_selection import train_test_split\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_breast_cancer(return_X_y=True, as_frame=True)\n"
    "X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.35, random_state=0)\n"
    "model = DecisionTreeClassifier(max_depth=7, min_samples_leaf=3, random_state=0).fit(X_train, y_train)\n"
    "btt.bandit_prune(model, X_val, y_val, n_rounds=5, progress=False)  # compile the kernels before the clicks",
    # long enough to press Stop while it runs
    "panel = btt.PruningPanel(model, X_val, y_val, n_rounds=2_000_000, min_depth=3)\npanel",
]


def chart_rounds(chart) -> int:
    return int(chart.get_attribute("data-rounds") or 0)


def test_pruning_panel_start_stop(page, lab, notebook_dir):
    write_notebook(notebook_dir / "pruning.ipynb", PRUNING_CELLS)
    open_and_run(page, lab, "pruning.ipynb")
    panel = page.locator(".btt-pruning-panel")
    panel.wait_for(state="visible", timeout=60_000)
    chart = panel.locator(".btt-reward-chart")
    assert chart_rounds(chart) == 0
    # Stop before Start: a note, nothing breaks
    panel.locator(".btt-stop").click()
    page.wait_for_function(
        "(el) => el.textContent.includes('Nothing to stop')",
        arg=panel.locator(".btt-status").element_handle(),
        timeout=10_000,
    )
    panel.locator(".btt-start").click()
    page.wait_for_function("(el) => Number(el.dataset.rounds || 0) > 0", arg=chart.element_handle(), timeout=30_000)
    first = chart_rounds(chart)
    page.wait_for_function(f"(el) => Number(el.dataset.rounds) > {first}", arg=chart.element_handle(), timeout=30_000)
    assert chart_rounds(chart) > first  # the chart gains points while the bandit runs
    screenshot(page, "pruning_panel-running", panel)
    panel.locator(".btt-stop").click()
    panel.locator(".btt-stop").click()  # twice: harmless
    page.wait_for_function("(el) => el.dataset.state === 'stopped'", arg=chart.element_handle(), timeout=60_000)
    stopped_at = chart_rounds(chart)
    page.wait_for_timeout(1200)
    assert chart_rounds(chart) == stopped_at  # it stopped
    status = panel.locator(".btt-status").inner_text()
    assert f"Stopped after {stopped_at} rounds" in status
    assert kernel_eval(page, "print(len(panel.result.history))").strip() == str(stopped_at)
    assert panel.locator(".btt-arm-table table").is_visible()
    assert "before" in panel.locator(".btt-metrics").inner_text()
    # the tree view inside the panel: click the root, see its details
    tree = panel.locator(".btt-tree-view-canvas")
    tree.scroll_into_view_if_needed()
    click_node(page, tree, 0)
    tree.locator(".btt-details-title").wait_for(timeout=10_000)
    assert "Node 0" in tree.locator(".btt-details-title").inner_text()
    screenshot(page, "pruning_panel-stopped", panel)
    assert_no_page_errors(page)


MEDOID_CELLS = [
    "from sklearn.datasets import load_digits\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "from bandit_tree_tools.tree import node_depth\n"
    "import numpy as np\n"
    "X, y = load_digits(return_X_y=True)\n"
    "X = X.astype(float)\n"
    "X[:, 20] = np.nan  # pixel (row 2, col 4) missing in every image; the distances take it as 0\n"
    "model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)",
    "medoids = btt.MedoidPanel(model, X, y=y, image_shape=(8, 8), n_medoids=4, embedding=np.nan_to_num(X))\nmedoids",
    # a table of values: a categorical column shows its labels, not the codes the model reads
    "import lightgbm, pandas as pd\n"
    "frame = pd.DataFrame({'colour': pd.Categorical(np.array(['red', 'green', 'blue'])[y % 3]), 'ink': X[:, 36]})\n"
    "booster = lightgbm.LGBMClassifier(n_estimators=2, verbose=-1).fit(frame, y % 2)\n"
    "table = btt.MedoidPanel(booster, frame, n_medoids=2, embedding=np.c_[frame.colour.cat.codes, frame.ink])\ntable",
]


def test_medoid_panel(page, lab, notebook_dir):
    write_notebook(notebook_dir / "medoids.ipynb", MEDOID_CELLS)
    open_and_run(page, lab, "medoids.ipynb")
    panel = page.locator(".btt-medoid-panel").first
    panel.wait_for(state="visible", timeout=60_000)
    gallery = panel.locator(".btt-medoid-gallery")
    gallery.scroll_into_view_if_needed()
    assert gallery.get_attribute("data-medoids") == "4"
    assert gallery.locator(".btt-medoid-card canvas").count() == 4
    # the missing pixel is drawn pale red, the others grey
    colours = gallery.locator(".btt-medoid-card canvas").first.evaluate(
        "(c) => [20, 21].map((p) => Array.from(c.getContext('2d').getImageData(p % 8, Math.floor(p / 8), 1, 1).data))"
    )
    assert colours[0] == [255, 205, 205, 255] and colours[1][0] == colours[1][1] == colours[1][2]
    # a leaf drawn in the first view, with rows: click it in the tree
    leaves = [
        int(word)
        for word in kernel_eval(
            page,
            ("print(*sorted(l for l, n in medoids.rows_per_leaf.items() if n > 0 and l != medoids.leaf_picker.value))"),
        ).split()
    ]
    tree = panel.locator(".btt-tree-view-canvas")
    tree.scroll_into_view_if_needed()
    shown = set(tree.evaluate("(el) => el.bttView.visibleNodes()"))
    expanded = not shown & set(leaves)
    if expanded:
        tree.locator(".btt-button-expand").click()  # the first view shows the top levels only
        shown = set(tree.evaluate("(el) => el.bttView.visibleNodes()"))
    leaf = min(shown & set(leaves))
    tree.locator(".btt-button-fit").click()
    click_node(page, tree, leaf)
    page.wait_for_function(
        f"(el) => el.textContent.startsWith('Leaf {leaf} of tree 0')",
        arg=gallery.locator(".btt-medoid-title").element_handle(),
        timeout=30_000,
    )
    assert f"Node {leaf}" in tree.locator(".btt-details-title").inner_text()
    assert "algorithm" in gallery.locator(".btt-medoid-info").inner_text()
    assert " · class " in gallery.locator(".btt-medoid-caption").first.inner_text()  # medoids carry their class
    # a deep leaf chosen in the list: revealed (ancestors expanded), on screen, selected
    deep = int(
        kernel_eval(
            page,
            (
                "depth = node_depth(medoids.ensemble.trees[0])\n"
                "print(max((l for l, n in medoids.rows_per_leaf.items() if n > 0), key=lambda l: (depth[l], -l)))"
            ),
        ).strip()
    )
    if not expanded:
        assert tree.evaluate(f"(el) => el.bttView.nodeCenter({deep})") is None  # hidden below the first view
    kernel_eval(page, f"medoids.leaf_picker.value = {deep}")
    page.wait_for_function(f"(el) => el.dataset.selectedNode === '{deep}'", arg=tree.element_handle(), timeout=30_000)
    centre = tree.evaluate(f"(el) => el.bttView.nodeCenter({deep})")
    stage = tree.locator(".btt-tree-stage canvas").bounding_box()
    assert centre is not None
    assert stage["x"] <= centre["x"] <= stage["x"] + stage["width"]
    assert stage["y"] <= centre["y"] <= stage["y"] + stage["height"]
    assert "pixel (row" in " ".join(" ".join(label["lines"]) for label in tree.evaluate("(el) => el.bttView.labels()"))
    screenshot(page, "medoid_panel", panel)
    cells = page.locator(".btt-medoid-panel").nth(1).locator(".btt-medoid-table tr")
    cells.first.wait_for(state="visible", timeout=60_000)
    shown = [line.locator("td").all_inner_texts() for line in cells.all()[1:]]  # after the header
    assert shown[0] and set(shown[0]) <= {"red", "green", "blue"}, shown
    assert sum(map(list, zip(*shown)), []) == kernel_eval(page, "print(*table.gallery.cells, sep=';')").strip().split(
        ";"
    )
    assert_no_page_errors(page)


COMPARISON_CELLS = [
    "import itertools\n"
    "import numpy as np, pandas as pd\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "rows = list(itertools.product(range(3), range(3), range(2), range(3), range(4), range(2)))\n"
    "X = pd.DataFrame(rows, columns=['a1', 'a2', 'a3', 'a4', 'a5', 'a6'])\n"
    "y = ((X.a1 == X.a2) | (X.a5 == 0)).astype(int).to_numpy()\n"
    "tsdt = btt.TSDTClassifier(lambda_=0.01, n_iter=80, random_state=0).fit(X, y)\n"
    "cart = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)\n"
    "table = btt.compare_trees(X, y, X, y, n_iter=30, exact=False, river=False, dl85=False)",
    "comparison = btt.ComparisonPanel(tsdt, cart, table=table, X=X, y=y)\ncomparison",
    # an edited tree: its view has the before / after toggle labelled "model"
    "shallow = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)\n"
    "edited = btt.TreeView(cart, X, y, after=shallow)\nedited",
]

# the bounding boxes of a tree view's header parts and of its stage, in page pixels
HEADER_BOXES = """(el) => {
  const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
  const header = el.querySelector('.btt-tree-header');
  const parts = Array.from(header.children).filter((e) => e.offsetParent !== null).map(box);
  return { contentBottom: Math.max(...parts.map((p) => p.bottom)), stageTop: box(el.querySelector('.btt-tree-stage')).top };
}"""


def test_comparison_panel(page, lab, notebook_dir):
    write_notebook(notebook_dir / "comparison.ipynb", COMPARISON_CELLS)
    open_and_run(page, lab, "comparison.ipynb")
    panel = page.locator(".btt-comparison-panel")
    panel.wait_for(state="visible", timeout=60_000)
    assert panel.locator(".btt-comparison-table tr").count() >= 3
    assert panel.locator(".btt-trace svg polyline").count() == 1
    trees = panel.locator(".btt-tree-view-canvas")
    assert trees.count() == 2
    tsdt_tree = trees.nth(0)
    tsdt_tree.scroll_into_view_if_needed()
    click_node(page, tsdt_tree, 0)
    tsdt_tree.locator(".btt-details-title").wait_for(timeout=10_000)
    details = tsdt_tree.locator(".btt-details-table").inner_text()
    assert "branches" in details and "= 0" in details  # the root's multiway split, one row per branch
    drawn = tsdt_tree.evaluate("(el) => el.bttView.labels()")
    edges = [label["lines"][0] for label in drawn if label.get("edge")]
    assert any(edge.startswith("= ") for edge in edges)  # a child per category
    # no empty "other" leaf: a branch no training row and no row of X reached is not drawn
    assert not [label for label in drawn if "node" in label and "train 0 · X 0" in " ".join(label["lines"])]
    assert any(
        label["lines"][1].endswith(" branches") for label in drawn if "node" in label and len(label["lines"]) > 2
    )
    # the multiway root's picture: one bar per category of a1 (three), stacked by class
    pictures = {item["node"]: item for item in tsdt_tree.evaluate("(el) => el.bttView.histograms()")}
    assert 0 in pictures, "the TSDT root draws no picture"
    root = pictures[0]
    assert root["categorical"] and root["bins"] == 3 and [bar["category"] for bar in root["bars"]] == [0, 1, 2]
    assert root["rows"] == 432 and root["leftMarks"] == 0  # every category has its own branch: none marked
    assert all(root["left"] <= bar["x"] <= root["right"] for bar in root["bars"])
    # the details pane plots the same: a bar per category, each labelled
    plot = tsdt_tree.locator(".btt-tree-details .btt-histogram-svg")
    plot.wait_for(timeout=10_000)
    texts = plot.locator("text").evaluate_all("(els) => els.map((e) => e.textContent)")
    assert texts[:3] == ["0", "1", "2"], texts  # the categories under their bars, then the y axis
    assert plot.locator("rect").count() == 6  # 3 categories x 2 classes
    # Fit keeps the labels of a small tree
    tsdt_tree.locator(".btt-button-fit").click()
    page.wait_for_timeout(300)
    assert tsdt_tree.get_attribute("data-text-shown") == "1"
    # the two canvases start at the same height on the page
    tops = [trees.nth(k).locator(".btt-tree-stage canvas").bounding_box()["y"] for k in range(2)]
    assert abs(tops[0] - tops[1]) < 2, tops
    # no blank band under the headers: the toolbar sits right above the canvas
    for k in range(2):
        found = trees.nth(k).evaluate(HEADER_BOXES)
        assert 0 <= found["stageTop"] - found["contentBottom"] <= 6, f"tree {k}: a band under its header: {found}"
    screenshot(page, "comparison_panel", panel)
    # the edited tree's "model" toggle: its label beside its buttons, on their line
    toggle = page.locator(".btt-tree-view").last.locator(".btt-version-toggle")
    toggle.scroll_into_view_if_needed()
    label = toggle.locator(".widget-label").bounding_box()
    button = toggle.locator("button").first.bounding_box()
    assert label["x"] + label["width"] <= button["x"] + 1 and button["x"] - (label["x"] + label["width"]) <= 12, (
        label,
        button,
    )
    assert abs((label["y"] + label["height"] / 2) - (button["y"] + button["height"] / 2)) <= 3, (label, button)
    screenshot(page, "version_toggle", page.locator(".btt-tree-view").last.locator(".btt-tree-controls"))
    # dark theme: the trace's labels (SVG fill) and the tables stay readable
    from .test_legibility import DOM_CONTRAST, set_theme

    set_theme(page, "JupyterLab Dark")
    low = [item for item in panel.evaluate(DOM_CONTRAST) if item["ratio"] < 4.5]
    screenshot(page, "comparison_panel_dark", panel)
    set_theme(page, "JupyterLab Light")
    assert not low, f"text below 4.5:1 in the dark theme: {low}"
    assert_no_page_errors(page)
