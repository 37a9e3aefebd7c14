"""The PruningPanel's path view of btt.prune, and the charts' hover values."""

import pytest

from .conftest import screenshot
from .lab import kernel_eval, open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CELLS = [
    "from sklearn.datasets import load_breast_cancer\n"
    "from sklearn.model_selection import train_test_split\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_breast_cancer(return_X_y=True, as_frame=True)\n"
    "X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.35, random_state=0)\n"
    "model = DecisionTreeClassifier(max_depth=7, min_samples_leaf=3, random_state=0).fit(X_train, y_train)",
    "panel = btt.PruningPanel(model, X_val, y_val, method='prune', tolerance=0.03, random_state=0)\npanel",
]


def test_prune_path_view_and_tolerance_slider(page, lab, notebook_dir):
    write_notebook(notebook_dir / "prune_path.ipynb", CELLS)
    open_and_run(page, lab, "prune_path.ipynb")
    panel = page.locator(".btt-pruning-panel")
    panel.wait_for(state="visible", timeout=60_000)
    chart = panel.locator(".btt-reward-chart")
    assert not chart.locator(".btt-chart-rounds").is_visible()  # no rounds or arms in this mode
    panel.locator(".btt-start").click()
    page.wait_for_function("(el) => el.dataset.state === 'done'", arg=chart.element_handle(), timeout=120_000)
    page.wait_for_function(
        "(el) => el.textContent.startsWith('Done:')", arg=panel.locator(".btt-status").element_handle(), timeout=10_000
    )
    status = panel.locator(".btt-status").inner_text()
    assert status.startswith("Done:") and "Tolerance 0.03" in status
    assert panel.locator(".btt-tolerance-slider").is_visible() and panel.locator(".btt-margin-slider").is_visible()
    assert "leaves" in chart.locator(".btt-chart-path .btt-chart-title").inner_text()
    # hover: the value under the pointer
    path_canvas = chart.locator(".btt-chart-path canvas")
    box = path_canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.4)
    page.wait_for_function("(el) => el.dataset.hover === 'path'", arg=chart.element_handle(), timeout=10_000)
    screenshot(page, "prune_path-done", panel)
    # the slider picks another model of the same path, without a rerun
    kernel_eval(page, "panel.tolerance_slider.value = 0.0")
    page.wait_for_function(
        "(el) => el.textContent.startsWith('Tolerance 0:')",
        arg=panel.locator(".btt-status").element_handle(),
        timeout=10_000,
    )
    assert kernel_eval(page, "print(panel.result.chosen == panel._full_result.choose(0.0).chosen)").strip() == "True"
    assert "after the edit" not in panel.locator(".btt-tree-title").inner_text()  # the view starts at 'before'
    screenshot(page, "prune_path-tolerance-0", panel)
