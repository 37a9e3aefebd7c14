"""``bandit-tree-tools demo``: the main job on built-in data.

Trains a scikit-learn forest, a LightGBM model and an XGBoost model on
scikit-learn's breast-cancer data, imports each, collapses a few internal
nodes, exports back, reloads in the native library and shows that the native
model predicts exactly like our copy. Then each capability prints its part.
"""

import tempfile
import time
import warnings
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import numpy as np

# capability -> module whose demo() returns the text to print
SECTIONS = {
    "Compression (btt.prune)": "bandit_tree_tools.pruning._compress_demo",
    "Bandit pruning (the paper's method)": "bandit_tree_tools.pruning._demo",
    "Leaf medoids (BanditPAM)": "bandit_tree_tools.medoids._demo",
    "MABSplit": "bandit_tree_tools.mabsplit._demo",
    "TSDT optimal trees": "bandit_tree_tools.tsdt._demo",
}


def twigs(tree) -> np.ndarray:
    """Internal nodes whose children are both leaves."""
    internal = np.flatnonzero(tree.children_left != -1)
    leaf = tree.children_left == -1
    return internal[leaf[tree.children_left[internal]] & leaf[tree.children_right[internal]]]


def collapse_twigs(ensemble, per_tree: int):
    """Collapse up to ``per_tree`` twigs (the smallest ones) in every tree."""
    from .tree import collapse

    chosen = {}
    for index, tree in enumerate(ensemble.trees):
        candidates = twigs(tree)
        if candidates.size:
            order = np.argsort(tree.n_node_samples[candidates], kind="stable")
            chosen[index] = candidates[order[:per_tree]]
    return collapse(ensemble, chosen)


def _reload(native):
    """Save the exported model in its library's own file format and load it back."""
    from .interop import adapter_for

    adapter = adapter_for(native)
    with tempfile.TemporaryDirectory() as folder:
        path = adapter.save(native, Path(folder) / f"model{adapter.extensions[0]}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the unpickling warning: the demo wrote the file itself
            return adapter.load(path)


def _native_score(native, X):
    """Probability of the positive class as the native library computes it."""
    from .interop import adapter_for

    score = adapter_for(native).predict_native(native, X)
    return score[:, 1] if score.ndim == 2 else score


def interop_table(X_train, X_test, y_train, y_test) -> str:
    from sklearn.ensemble import RandomForestClassifier

    from .interop import from_model, to_model

    models = {"sklearn RandomForestClassifier": RandomForestClassifier(n_estimators=50, max_depth=8, random_state=0)}
    try:
        import lightgbm

        models["LightGBM LGBMClassifier"] = lightgbm.LGBMClassifier(n_estimators=60, num_leaves=15, verbose=-1, random_state=0)
    except ImportError:
        pass
    try:
        import xgboost

        models["XGBoost XGBClassifier"] = xgboost.XGBClassifier(n_estimators=60, max_depth=4, random_state=0)
    except ImportError:
        pass
    lines = [
        f"{'model':32s} {'leaves':>14s} {'accuracy':>15s} {'max |our - native|':>20s} {'seconds':>8s}",
    ]
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        ensemble = from_model(model)
        collapsed = collapse_twigs(ensemble, per_tree=2)
        exported = _reload(to_model(collapsed))
        ours = collapsed.predict_proba(X_test)[:, 1]
        difference = np.abs(ours - _native_score(exported, X_test)).max()
        before = np.mean(model.predict(X_test) == y_test)
        after = np.mean(collapsed.predict(X_test) == y_test)
        seconds = time.perf_counter() - start
        lines.append(
            f"{name:32s} {ensemble.n_leaves:>6d} -> {collapsed.n_leaves:<6d} {before:>6.3f} -> {after:<6.3f} "
            f"{difference:>20.3g} {seconds:>8.2f}"
        )
    return "\n".join(lines)


def run_demo(args=None):
    """The demo's text, block by block (the command line prints each as it comes)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.35, random_state=0, stratify=y)
    yield "Import, collapse two small twigs per tree, export, reload natively (breast cancer, 35% test):"
    yield interop_table(X_train, X_test, y_train, y_test)
    for title, module in SECTIONS.items():
        if find_spec(module) is None:  # capability not installed in this build
            continue
        demo = import_module(module).demo
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = demo()
        yield f"\n{title}:\n{text}"


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the main job on built-in data and print what it found")
    parser.set_defaults(func=run_demo)
