"""Compile every kernel into numba's cache ahead of time: ``btt.compile_kernels()``
and ``bandit-tree-tools compile``.

numba compiles a kernel on its first call for the types it is given, and with
``cache=True`` writes the machine code to its cache (``__pycache__`` next to the
sources, or ``NUMBA_CACHE_DIR``), where later processes load it in milliseconds.
A fresh environment (a container image, a CI run, a shared JupyterHub install,
an upgrade) would otherwise pay the compilation on each capability's first
call. Here each capability runs once on tiny data, in the variants the public
functions choose between (float32 and float64 inputs, rows with and without
NaN, classifiers and regressors, the libraries whose models route differently),
so that the kernels of every common path are compiled and cached. Run it where
the cache will be read from: the same installation and the same
``NUMBA_CACHE_DIR`` (an image's build step, a CI step before the tests, the
Hub's admin after installing).

With ``n_jobs`` above 1 the capabilities run in worker processes, each taking
the next capability as it finishes one. numba names a new
cache entry's file from the function's index when it saves it, so two
processes saving different types of one function at once could pick the same
name, and one process would later load the other's machine code for its own
types; the package's kernels save under a lock (``_numba_config``), so workers
run only where such locks exist (not on Windows).
"""

import os
import time
import warnings
from importlib.util import find_spec

import numpy as np


def _tiny(n_samples=300, n_features=20, regression=False):
    from sklearn.datasets import make_classification, make_regression

    if regression:
        return make_regression(n_samples, n_features, n_informative=6, random_state=0)
    return make_classification(n_samples, n_features, n_informative=6, random_state=0)


def _with_nan(X):
    X = X.copy()
    X[::7, 0] = np.nan
    return X


def _native_models(small_regression=False):
    """Tiny models of every installed library, classifiers (and regressors)."""
    from sklearn.ensemble import (
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import DecisionTreeClassifier

    models = [
        DecisionTreeClassifier(max_depth=5, random_state=0),
        RandomForestClassifier(n_estimators=3, max_depth=6, random_state=0),
        HistGradientBoostingClassifier(max_iter=3, random_state=0),
    ]
    regressors = [
        RandomForestRegressor(n_estimators=3, max_depth=6, random_state=0),
        GradientBoostingRegressor(n_estimators=3, random_state=0),
    ]
    if find_spec("lightgbm") is not None:
        import lightgbm

        models.append(lightgbm.LGBMClassifier(n_estimators=3, num_leaves=7, verbose=-1, random_state=0))
        regressors.append(lightgbm.LGBMRegressor(n_estimators=3, num_leaves=7, verbose=-1, random_state=0))
    if find_spec("xgboost") is not None:
        import xgboost

        models.append(xgboost.XGBClassifier(n_estimators=3, max_depth=3, random_state=0))
        regressors.append(xgboost.XGBRegressor(n_estimators=3, max_depth=3, random_state=0))
    return models, regressors


def _exp_link_models():
    """(3-class classifiers, Poisson regressors) of the installed boosting
    libraries, as ``_native_models``: their links take the C library's exp."""
    classifiers, regressors = [], []
    if find_spec("lightgbm") is not None:
        import lightgbm

        classifiers.append(lightgbm.LGBMClassifier(n_estimators=3, num_leaves=7, verbose=-1))
        regressors.append(lightgbm.LGBMRegressor(objective="poisson", n_estimators=3, num_leaves=7, verbose=-1))
    if find_spec("xgboost") is not None:
        import xgboost

        classifiers.append(xgboost.XGBClassifier(n_estimators=3, max_depth=3))
        regressors.append(xgboost.XGBRegressor(objective="count:poisson", n_estimators=3, max_depth=3))
    return classifiers, regressors


def _predict():
    from .interop import from_model

    models, regressors = _native_models()
    for task, group in (("classification", models), ("regression", regressors)):
        X, y = _tiny(regression=task == "regression")
        for model in group:
            ensemble = from_model(model.fit(X, y))
            for rows in (X, _with_nan(X), X.astype(np.float32)):
                ensemble.predict(rows)
                ensemble.apply(rows)
                ensemble.decision_path(rows[:20])
                if task == "classification":
                    ensemble.predict_proba(rows)
    # LightGBM's and XGBoost's softmax and exp links take the C library's exp, in a kernel (tree._links)
    X, y = _tiny()
    classifiers, regressors = _exp_link_models()
    for model in classifiers:
        from_model(model.fit(X, y + (X[:, 0] > 0))).predict(X)
    for model in regressors:
        from_model(model.fit(X, np.round(np.abs(X[:, 1]) * 3))).predict(X)


def _prune():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeRegressor

    from .interop import from_model
    from .pruning import prune

    def both_ways(model, X, y, n_fit=300):
        model.fit(X[:n_fit], y[:n_fit])
        prune(model, X[n_fit:], y[n_fit:], tolerance=0.05, random_state=0, progress=False)
        result = prune(
            model,
            X[n_fit:],
            y[n_fit:],
            X_train=X[:n_fit],
            y_train=y[:n_fit],
            tolerance=0.05,
            random_state=0,
            progress=False,
        )
        result.to_model().predict(X)
        from_model(model).predict(_with_nan(X))

    models, regressors = _native_models()
    for task, group in (("classification", models), ("regression", regressors)):
        X, y = _tiny(600, regression=task == "regression")
        for model in group:
            both_ways(model, X, y)
    # The search keeps every row's leaves in the narrowest of int8, int16 and int32 that holds the
    # model's node ids, and its kernels compile once for each: the tiny trees above need int8, a
    # forest of a few hundred nodes a tree (float32 rows) int16, and a tree of over 32,767 nodes int32.
    X, y = _tiny(1300)
    both_ways(RandomForestClassifier(n_estimators=2, max_leaf_nodes=100, random_state=0), X, y, 1000)
    if find_spec("lightgbm") is not None:
        import lightgbm

        model = lightgbm.LGBMClassifier(n_estimators=2, num_leaves=100, min_child_samples=2, verbose=-1)
        both_ways(model, X, y, 1000)
    rng = np.random.default_rng(0)
    X_big, y_big = rng.normal(size=(20_000, 2)), rng.normal(size=20_000)
    deep = DecisionTreeRegressor(random_state=0).fit(X_big, y_big)  # a leaf per row: about 40,000 nodes
    prune(deep, X_big[:300], y_big[:300], tolerance=0.05, random_state=0, progress=False)


def _baselines():
    from .pruning import cost_complexity_prune, reduced_error_prune

    models, _ = _native_models()
    X, y = _tiny(400)
    for model in models[:2]:
        model.fit(X[:200], y[:200])
        cost_complexity_prune(model, X[:200], y[:200], X[200:], y[200:])
        reduced_error_prune(model, X[200:], y[200:])


def _panels():
    if find_spec("anywidget") is None or find_spec("ipywidgets") is None:
        return
    from sklearn.ensemble import RandomForestClassifier

    from .widgets import TreeView

    X, y = _tiny(200)
    TreeView(RandomForestClassifier(n_estimators=3, max_depth=5, random_state=0).fit(X, y), X, y)


def _mabsplit_forests():
    from .mabsplit import MABSplitForestClassifier, MABSplitForestRegressor, MABSplitTreeRegressor

    X, y = _tiny(2000, 30)
    MABSplitForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y).predict_proba(X)
    X, y = _tiny(2000, 30, regression=True)
    MABSplitForestRegressor(n_estimators=2, max_depth=3, random_state=0).fit(X, y).predict(X)
    MABSplitTreeRegressor(max_depth=2, random_state=0).fit(X, y).predict(X)


def _steps():
    """(label, function) of every part, in the order the parallel workers take them: prediction
    first (its routing kernels are the ones most other parts load), then the longest first."""
    from . import _demo

    return [
        ("prediction", _predict),
        ("TSDT", _demo._warm_tsdt),
        ("btt.prune", _prune),
        ("medoids", _demo._warm_medoids),
        ("MABSplit", _demo._warm_mabsplit),
        ("bandit_prune", _demo._warm_bandit_prune),
        ("pruning baselines", _baselines),
        ("import and export", _demo._warm_interop),
        ("MABSplit forests", _mabsplit_forests),
        ("panels", _panels),
    ]


def _run_step(label: str) -> float:
    """Seconds that the part ``label`` took (compiling, or loading from the cache)."""
    from ._numba_config import compile_note_shown
    from ._side_compile import no_side_compile

    step = dict(_steps())[label]
    start = time.perf_counter()
    with compile_note_shown(), no_side_compile(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step()
    return time.perf_counter() - start


def compile_kernels(*, n_jobs=None, progress: bool = True) -> dict:
    """Compile every kernel of the package into numba's cache, ahead of the first call.

    Each capability runs once on tiny data (a few seconds each once the kernels
    are cached), so that its kernels are compiled for the input types the
    public functions pass and written to numba's cache; later processes load
    them instead of compiling (a fresh environment otherwise spends one to two
    minutes compiling over its first calls). For container images, CI (before
    the tests) and shared JupyterHub installs: run it once where the package
    is installed, with the same ``NUMBA_CACHE_DIR`` as its users (or none).
    Also ``bandit-tree-tools compile`` on the command line (every core by default).

    Parameters
    ----------
    n_jobs : int or None, default None
        Worker processes that compile capabilities side by side (joblib's rule: None is 1, -1
        every core). numba compiles on one core, so two workers take about half the time.
        Without POSIX file locks (Windows) the work runs in this process.
    progress : bool, default True
        Show a ``tqdm`` progress bar over the capabilities.

    Returns
    -------
    dict
        ``{capability: seconds}`` spent on each (compiling, or loading from the cache), in the
        order the parts are listed.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> seconds = btt.compile_kernels(progress=False)  # once per environment; later calls load the cache
    >>> list(seconds)[:3]
    ['prediction', 'TSDT', 'btt.prune']
    """
    from tqdm.auto import tqdm

    from ._numba_config import SAVES_LOCKED
    from ._validation import check_params, resolve_n_jobs

    check_params(dict(progress=progress), {"progress": ["boolean"]}, owner="compile_kernels")
    labels = [label for label, _ in _steps()]
    workers = min(resolve_n_jobs(n_jobs), len(labels))
    bar = tqdm(total=len(labels), desc="compiling kernels", unit="part", disable=not progress)
    if workers == 1 or not SAVES_LOCKED:
        seconds = {}
        for label in labels:
            bar.set_postfix_str(label)
            seconds[label] = _run_step(label)
            bar.update()
    else:
        seconds = _run_in_workers(labels, workers, bar)
    bar.close()
    return {label: seconds[label] for label in labels}


def _run_in_workers(labels, workers, bar) -> dict:
    """``{label: seconds}`` of the parts run in ``workers`` processes, each taking the next part."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # "spawn": a fresh interpreter per worker (fork would copy this process's numba and threads)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_run_step, label): label for label in labels}
        seconds = {}
        for future in as_completed(futures):
            seconds[futures[future]] = future.result()
            bar.set_postfix_str(futures[future])
            bar.update()
    return seconds


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compile", help="compile every kernel into numba's cache (for images, CI and shared installs)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--n-jobs", type=int, default=-1, help="worker processes (default -1: every core; 1: this process)"
    )
    parser.set_defaults(func=_run)


def _run(args):
    start = time.perf_counter()
    seconds = compile_kernels(n_jobs=args.n_jobs, progress=not args.quiet)
    where = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ next to the package's sources"
    lines = [f"  {label + ':':20s} {value:6.2f} s" for label, value in seconds.items()]
    return "\n".join([*lines, f"compiled in {time.perf_counter() - start:.1f} s; cached in {where}"])
