"""A notebook run, saved and opened again without its kernel shows a picture
of every panel (the static twin), up to date with the last run, and no
"model not found" line."""

import json

import pytest

from .conftest import screenshot
from .lab import KERNEL_IDLE, open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CELLS = [
    "from sklearn.datasets import load_breast_cancer\n"
    "from sklearn.model_selection import train_test_split\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_breast_cancer(return_X_y=True, as_frame=True)\n"
    "X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.35, random_state=0)\n"
    "model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X_train, y_train)",
    "btt.TreeView(model, X_val, y_val, class_names=['malignant', 'benign'])",
    "panel = btt.PruningPanel(model, X_val, y_val, n_rounds=300, min_depth=2, random_state=0)\npanel",
    "panel.start()\npanel.wait(120)\nprint(panel.result.n_pruned, 'pruned')",
]


def test_saved_notebook_shows_pictures_without_its_kernel(page, lab, notebook_dir):
    path = write_notebook(notebook_dir / "saved.ipynb", CELLS)
    open_and_run(page, lab, "saved.ipynb")
    page.locator(".btt-pruning-panel").wait_for(state="visible", timeout=60_000)
    twins = page.locator(".btt-static-twin")
    assert twins.count() == 2
    assert not twins.nth(0).is_visible() and not twins.nth(1).is_visible()  # live panels: no duplicate picture
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    saved = json.loads(path.read_text())
    pruning_outputs = [o for o in saved["cells"][2]["outputs"] if "text/html" in o.get("data", {})]
    html = "".join(pruning_outputs[0]["data"]["text/html"])
    assert "Done:" in html and "Pruned" in html and "Ready" not in html  # the run, not the first state
    lab.shutdown_kernels()
    # open it again: a new kernel that knows none of the saved widgets
    page.goto(lab.url("saved.ipynb"))
    page.wait_for_function(KERNEL_IDLE, timeout=120_000, polling=250)
    twins = page.locator(".btt-static-twin")
    twins.first.wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(3_000)  # the widget manager gives up on missing models after 2 s
    assert twins.count() == 2
    for k in range(2):
        assert twins.nth(k).is_visible()
        assert twins.nth(k).locator("svg rect").count() >= 7  # the tree's picture
    assert "Done:" in twins.nth(1).inner_text()
    assert page.get_by_text("Error displaying widget").filter(visible=True).count() == 0
    twins.nth(0).scroll_into_view_if_needed()
    screenshot(page, "saved-tree-view", twins.nth(0))
    screenshot(page, "saved-pruning-panel", twins.nth(1))
