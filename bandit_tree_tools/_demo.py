"""``bandit-tree-tools demo``: the main job on built-in data.

Trains a scikit-learn forest, a LightGBM model and an XGBoost model on
scikit-learn's breast-cancer data, imports each, collapses a few internal
nodes, exports back, reloads in the native library and shows that the native
model predicts exactly like our copy. Then each capability prints its part.

The hot loops are numba kernels, compiled on their first call (or loaded
from numba's on-disk cache): before each timed part, the same calls run on
tiny data and their time is printed apart as "compile/first call", so the
timings that follow are the algorithms'. ``--quick`` runs only those first
calls (a smoke test of every capability, a few seconds once compiled).
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
    "Compression (btt.prune)": "bandit_tree_tools.pruning._engine._demo",
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
    from .interop import from_model, to_model

    models = _demo_models()
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


def _tiny_classification(n_samples=300, n_features=20):
    from sklearn.datasets import make_classification

    return make_classification(n_samples, n_features, n_informative=6, random_state=0)


def _warm_interop():
    from .interop import from_model, to_model

    X, y = _tiny_classification(200, 30)
    for model in _demo_models(small=True).values():
        collapsed = collapse_twigs(from_model(model.fit(X, y)), per_tree=2)
        collapsed.predict_proba(X)
        _native_score(_reload(to_model(collapsed)), X)


def _demo_models(small=False) -> dict:
    """The interop table's models by name (three trees each when ``small``)."""
    from sklearn.ensemble import RandomForestClassifier

    models = {
        "sklearn RandomForestClassifier": RandomForestClassifier(
            n_estimators=3 if small else 50, max_depth=8, random_state=0
        )
    }
    if find_spec("lightgbm") is not None:
        import lightgbm

        models["LightGBM LGBMClassifier"] = lightgbm.LGBMClassifier(
            n_estimators=3 if small else 60, num_leaves=15, verbose=-1, random_state=0
        )
    if find_spec("xgboost") is not None:
        import xgboost

        models["XGBoost XGBClassifier"] = xgboost.XGBClassifier(
            n_estimators=3 if small else 60, max_depth=4, random_state=0
        )
    return models


def _warm_compress():
    from .pruning import prune
    from .pruning._engine._demo import _models

    X, y = _tiny_classification(600)
    for model in _models().values():
        rounds = "n_estimators" if "n_estimators" in model.get_params() else "max_iter"  # HistGradientBoosting
        model.set_params(**{rounds: 5})
        model.fit(X[:300], y[:300])
        result = prune(model, X[300:], y[300:], X_train=X[:300], y_train=y[:300], random_state=0, progress=False)
        result.to_model().predict(X)


def _warm_bandit_prune():
    from .pruning import bandit_prune
    from .pruning._demo import _models

    X, y = _tiny_classification(400)
    for model in _models().values():
        if "n_estimators" in model.get_params():
            model.set_params(n_estimators=3)
        model.fit(X[:200], y[:200])
        result = bandit_prune(
            model, X[200:], y[200:], policy="ucb1", min_depth=2, n_rounds=50, random_state=0, progress=False
        )
        result.to_model().predict(X)
        result.evaluate(X, y)


def _warm_medoids():
    from sklearn.tree import DecisionTreeClassifier

    from .medoids import KMedoids, leaf_medoids

    X, y = _tiny_classification(300, 64)
    leaf_medoids(DecisionTreeClassifier(max_leaf_nodes=4, random_state=0).fit(X, y), X, n_medoids=3, progress=False)
    for algorithm in ("pam", "fasterpam", "banditpam"):
        KMedoids(3, algorithm=algorithm, random_state=0).fit(X)


def _warm_mabsplit():
    from .mabsplit import MABSplitTreeClassifier

    X, y = _tiny_classification(2000, 30)
    for solver in ("mab", "exact"):
        MABSplitTreeClassifier(max_depth=2, solver=solver, random_state=0).fit(X, y).predict(X)


def _warm_tsdt():
    from sklearn.tree import DecisionTreeClassifier

    from .tsdt import TSDTClassifier, optimal_categorical_tree

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, c, 60) for c in (3, 3, 2, 3, 4, 2)])
    y = ((X[:, 0] == X[:, 1]) | (X[:, 4] == 0)).astype(int)
    for variant in ("optimistic", "fast"):
        model = TSDTClassifier(lambda_=0.01, variant=variant, max_iter=20, random_state=1).fit(X, y)
        model.score(X, y)
        model.ensemble_.predict(X)
    optimal_categorical_tree(X, y, 0.01).score(X, y)
    DecisionTreeClassifier(random_state=0).fit(X, y)
    stream = rng.integers(0, 2, size=(2000, 20))
    TSDTClassifier(lambda_=0.05, max_iter=10, random_state=0).fit(stream, stream[:, 0] ^ stream[:, 1])


# section title -> the same calls on tiny data, run before the section is timed
WARMUPS = {
    "Import and export": _warm_interop,
    "Compression (btt.prune)": _warm_compress,
    "Bandit pruning (the paper's method)": _warm_bandit_prune,
    "Leaf medoids (BanditPAM)": _warm_medoids,
    "MABSplit": _warm_mabsplit,
    "TSDT optimal trees": _warm_tsdt,
}


def first_call(title) -> float:
    """Seconds the tiny-data calls of one section take (numba compiling its
    kernels, or loading them from the cache, plus the tiny work itself)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        WARMUPS[title]()
    return time.perf_counter() - start


def _first_call_line(title) -> str:
    return f"compile/first call: {first_call(title):.2f} s (numba compiles the kernels once; later runs load them from its cache)"


def run_demo(args=None):
    """The demo's text, block by block (the command line prints each as it comes)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    quick = bool(getattr(args, "quick", False))
    sections = {"Import and export": None}
    sections.update({title: module for title, module in SECTIONS.items() if find_spec(module) is not None})
    if quick:
        yield "First call of each capability on tiny data (numba compiles or loads its kernels):"
        for title in sections:
            yield f"  {title + ':':40s} {first_call(title):6.2f} s"
        return
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.35, random_state=0, stratify=y)
    yield "Import, collapse two small twigs per tree, export, reload natively (breast cancer, 35% test):"
    yield _first_call_line("Import and export")
    yield interop_table(X_train, X_test, y_train, y_test)
    for title, module in sections.items():
        if module is None:
            continue
        first = _first_call_line(title)
        demo = import_module(module).demo
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = demo()
        yield f"\n{title}:\n{first}\n{text}"


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the main job on built-in data and print what it found")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the first call of each capability on tiny data (numba's compilation), "
        "a smoke test of the installation",
    )
    parser.set_defaults(func=run_demo)
