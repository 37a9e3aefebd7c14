"""The Python of the README, the getting-started page and the user guide runs as
written: each page's blocks in order, in one namespace holding what the pages
take as given (``model`` and its rows), on small data. A renamed parameter or
a changed return type breaks the page's test, not a reader's first try."""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/getting_started.md",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "user_guide").glob("*.md")),
]
# pages whose blocks use names another page's blocks make
BEFORE = {"docs/user_guide/panels.md": ["docs/user_guide/tsdt.md"]}

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]


def _blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(), flags=re.S | re.M)


def _given() -> dict:
    """What the pages take as given: a fitted scikit-learn tree (``model``)
    and its rows, 8x8 images (the medoid pictures) in two classes (the
    panels' class names: digits below 5 or not)."""
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    X, y = digits.data[order], (digits.target[order] >= 5).astype(int)
    split = np.split(np.arange(len(y)), [800, 1300, 1600])  # 500 validation rows: btt.prune's tolerance needs them
    X_train, X_val, X_test, X_new = (X[part] for part in split)
    y_train, y_val, y_test, y_new = (y[part] for part in split)
    model = DecisionTreeClassifier(max_depth=5, max_leaf_nodes=10, random_state=0).fit(
        X_train, y_train
    )  # nodes 3 and 7 internal
    return {
        "btt": btt,
        "model": model,
        "X": X_train,
        "y": y_train,
        "X_train": X_train,
        "y_train": y_train,
        "X_val": X_val,
        "y_val": y_val,
        "X_test": X_test,
        "y_test": y_test,
        "X_new": X_new,
        "y_new": y_new,
    }


def test_every_page_with_python_is_tested():
    assert all(_blocks(page) for page in ("README.md", "docs/user_guide/pruning.md", "docs/user_guide/tsdt.md"))


@pytest.mark.parametrize("page", [page for page in PAGES if _blocks(page)])
def test_the_page_runs_as_written(page, tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets", reason="the pages show the panels: the widgets extra (make test installs it)")
    monkeypatch.chdir(tmp_path)  # a page may save a file
    namespace = _given()
    try:
        for source in [*(block for before in BEFORE.get(page, []) for block in _blocks(before)), *_blocks(page)]:
            exec(compile(source, page, "exec"), namespace)
    finally:
        plt.close("all")
