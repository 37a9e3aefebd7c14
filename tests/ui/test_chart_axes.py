"""The pruning panel's charts as a person reads them: no axis title
overlaps a tick label (or another label), and every label lies inside its
canvas, on the reward, arm and path charts of a finished run."""

import pytest

from .conftest import screenshot
from .lab import open_and_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CELLS = [
    "from sklearn.datasets import load_wine\n"
    "from sklearn.tree import DecisionTreeClassifier\n"
    "import bandit_tree_tools as btt\n"
    "X, y = load_wine(return_X_y=True, as_frame=True)\n"
    "model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)",
    "panel = btt.PruningPanel(model, X, y, n_rounds=300, min_depth=1)\npanel.start()\npanel.wait(60)\npanel",
]


def overlap(a, b) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_axis_titles_do_not_overlap_tick_labels(page, lab, notebook_dir):
    write_notebook(notebook_dir / "axes.ipynb", CELLS)
    open_and_run(page, lab, "axes.ipynb")
    chart = page.locator(".btt-reward-chart")
    chart.wait_for(state="visible", timeout=60_000)
    chart.scroll_into_view_if_needed()
    page.wait_for_function("(el) => el.dataset.state === 'done'", arg=chart.element_handle(), timeout=60_000)
    page.wait_for_timeout(500)
    labels = chart.evaluate("(el) => el.bttAxisLabels()")
    assert {"rounds", "arms", "path"} <= set(labels), f"charts drawn: {sorted(labels)}"
    for name, drawn in labels.items():
        items = drawn["items"]
        kinds = {item["kind"] for item in items}
        assert {"x title", "y title", "x tick", "y tick"} <= kinds, (name, kinds)
        for k, a in enumerate(items):
            assert a["left"] >= 0 and a["top"] >= 0, f"{name}: {a['kind']} {a['label']!r} leaves the canvas: {a}"
            assert a["right"] <= drawn["width"] + 1 and a["bottom"] <= drawn["height"] + 1, (name, a, drawn["height"])
            for b in items[k + 1 :]:
                assert not overlap(a, b), f"{name}: {a['kind']} {a['label']!r} overlaps {b['kind']} {b['label']!r}"
    screenshot(page, "pruning-panel-axes", chart)
