"""MABSplit against our exact histogram splitter, scikit-learn and LightGBM.

    python benchmarks/bench_mabsplit.py            # 100,000 and 1,000,000 rows
    python benchmarks/bench_mabsplit.py --quick    # 20,000 rows, fewer trees

Synthetic data, 50 features: ``make_classification`` (10 informative) and
``make_regression`` (10 informative, 40 pure-noise features, noisy target).
For each size, single trees of depth 5 and of unlimited depth, then forests,
then the paper's fixed-budget experiment (how many trees and what accuracy
7.84e6 histogram insertions buy). Insertions are rows x features inserted
into histograms; "exact" is the same code with every row inserted (same
candidate thresholds). Wall-clock seconds, measured on whatever else the
machine is doing: the load average is printed with each table. Ratios are
"exact / MAB" (higher = MABSplit cheaper) and "scikit-learn / MABSplit".
LightGBM's random forest runs at depth 5 only (at unlimited depth,
num_leaves=4096 and min_child_samples=1, it took 425 s for 10 trees on
100,000 rows); unlimited-depth scikit-learn trees and all unlimited-depth
forests are skipped at 1,000,000 rows (minutes each on 2 cores).
"""

import argparse
import dataclasses
import os
import time

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from bandit_tree_tools.mabsplit import (
    MABSplitForestClassifier,
    MABSplitForestRegressor,
    MABSplitTreeClassifier,
    MABSplitTreeRegressor,
)

N_FEATURES = 50
BUDGET = 7.84e6


def make_data(task, n_train, n_test, seed=0):
    n = n_train + n_test
    if task == "classification":
        X, y = make_classification(n, N_FEATURES, n_informative=10, n_redundant=5, random_state=seed)
    else:
        X, y = make_regression(n, 10, n_informative=10, noise=20.0, random_state=seed)
        noise = np.random.RandomState(seed + 1).normal(size=(n, N_FEATURES - 10))
        X = np.hstack([X, noise])
    X = X.astype(np.float32)
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:]


def score(task, model, X, y):
    prediction = model.predict(X)
    if task == "classification":
        return 100.0 * np.mean(prediction == y)
    return float(np.mean((prediction - y) ** 2))


def timed(make, X, y):
    """Fit; return the model and the wall-clock seconds. The CPU seconds of
    this process (all threads) are kept in CPU_SECONDS[id(model)]: on a
    shared machine they move less than wall time."""
    model = make()
    start, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    CPU_SECONDS[id(model)] = time.process_time() - cpu
    return model, time.perf_counter() - start


CPU_SECONDS = {}


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def print_table(title, task, rows):
    metric = "accuracy %" if task == "classification" else "test MSE"
    print(f"\n{title}  ({load()})")
    print(f"  {'model':34s} {'seconds':>9s} {'insertions':>13s} {metric:>11s}")
    for name, seconds, insertions, value in rows:
        shown = "-" if insertions is None else f"{insertions:.3e}"
        print(f"  {name:34s} {seconds:9.2f} {shown:>13s} {value:11.3f}")


def bandit_vs_exact_line(task, mab, exact):
    (_, t_mab, i_mab, v_mab), (_, t_exact, i_exact, v_exact) = mab, exact
    difference = v_mab - v_exact
    unit = "points" if task == "classification" else "MSE"
    return (
        f"  exact / MAB: insertions {i_exact / max(i_mab, 1):.2f}x, wall time {t_exact / t_mab:.2f}x, "
        f"MAB - exact metric {difference:+.3f} {unit}"
    )


def single_trees(task, data, depth, with_sklearn=True):
    X, X_test, y, y_test = data
    ours = MABSplitTreeClassifier if task == "classification" else MABSplitTreeRegressor
    theirs = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
    rows = []
    cpu = []
    for solver in ("mab", "exact"):
        model, seconds = timed(lambda: ours(max_depth=depth, solver=solver, random_state=0), X, y)
        cpu.append(CPU_SECONDS[id(model)])
        rows.append((f"MABSplit tree ({solver})", seconds, model.n_insertions_, score(task, model, X_test, y_test)))
    if with_sklearn:
        model, seconds = timed(lambda: theirs(max_depth=depth, random_state=0), X, y)
        rows.append(("scikit-learn DecisionTree", seconds, None, score(task, model, X_test, y_test)))
    depth_name = "unlimited depth" if depth is None else f"depth {depth}"
    print_table(f"{task}, {X.shape[0]:,} rows, single tree, {depth_name}", task, rows)
    print(bandit_vs_exact_line(task, rows[0], rows[1]))
    print(f"  exact / MAB CPU time {cpu[1] / max(cpu[0], 1e-9):.2f}x ({cpu[0]:.2f} s vs {cpu[1]:.2f} s)")
    if with_sklearn:
        print(f"  scikit-learn / MAB wall time {rows[2][1] / rows[0][1]:.2f}x")
    return rows


def forests(task, data, depth, n_trees, with_lightgbm=True):
    X, X_test, y, y_test = data
    classification = task == "classification"
    ours = MABSplitForestClassifier if classification else MABSplitForestRegressor
    max_features = "sqrt" if classification else 1.0 / 3.0
    common = dict(n_estimators=n_trees, max_depth=depth, max_features=max_features, n_jobs=2, random_state=0)
    rows = []
    cpu = []
    for solver in ("mab", "exact"):
        model, seconds = timed(lambda: ours(solver=solver, **common), X, y)
        cpu.append(CPU_SECONDS[id(model)])
        rows.append((f"MABSplit forest ({solver})", seconds, model.n_insertions_, score(task, model, X_test, y_test)))
    if classification:
        model, seconds = timed(lambda: ours(splitter="random", **common), X, y)
        rows.append(("MABSplit forest, random edges", seconds, model.n_insertions_, score(task, model, X_test, y_test)))
        for name, cls in (
            ("scikit-learn RandomForest", RandomForestClassifier),
            ("scikit-learn ExtraTrees", ExtraTreesClassifier),
        ):
            model, seconds = timed(lambda: cls(**common), X, y)
            rows.append((name, seconds, None, score(task, model, X_test, y_test)))
    else:
        model, seconds = timed(lambda: RandomForestRegressor(**common), X, y)
        rows.append(("scikit-learn RandomForest", seconds, None, score(task, model, X_test, y_test)))
    if with_lightgbm:
        try:
            import lightgbm
        except ImportError:
            lightgbm = None
        if lightgbm is not None:
            cls = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
            fraction = (int(np.sqrt(N_FEATURES)) if classification else N_FEATURES // 3) / N_FEATURES
            params = dict(
                boosting_type="rf",
                n_estimators=n_trees,
                bagging_freq=1,
                bagging_fraction=0.632,
                feature_fraction_bynode=fraction,
                max_depth=-1 if depth is None else depth,
                num_leaves=4096 if depth is None else 2**depth,
                min_child_samples=1,
                n_jobs=2,
                verbose=-1,
                random_state=0,
            )
            model, seconds = timed(lambda: cls(**params), X, y)
            rows.append(("LightGBM random forest", seconds, None, score(task, model, X_test, y_test)))
    depth_name = "unlimited depth" if depth is None else f"depth {depth}"
    print_table(f"{task}, {X.shape[0]:,} rows, {n_trees} trees, {depth_name}, n_jobs=2", task, rows)
    print(bandit_vs_exact_line(task, rows[0], rows[1]))
    print(f"  exact / MAB CPU time {cpu[1] / max(cpu[0], 1e-9):.2f}x ({cpu[0]:.2f} s vs {cpu[1]:.2f} s)")
    sklearn_rf = next(row for row in rows if row[0] == "scikit-learn RandomForest")
    print(
        f"  scikit-learn RandomForest / MAB forest: wall time {sklearn_rf[1] / rows[0][1]:.2f}x, "
        f"MAB - scikit-learn metric {rows[0][3] - sklearn_rf[3]:+.3f}"
    )
    return rows


def fixed_budget(data, depth, max_trees):
    """Trees are added until the next one would exceed the budget."""
    X, X_test, y, y_test = data
    print(f"\nFixed budget of {BUDGET:.3g} insertions, classification, {X.shape[0]:,} rows, depth {depth} ({load()})")
    print(f"  {'solver':10s} {'trees':>6s} {'insertions':>13s} {'accuracy %':>11s}")
    for solver in ("mab", "exact"):
        model = MABSplitForestClassifier(
            n_estimators=max_trees, max_depth=depth, solver=solver, n_jobs=2, random_state=0
        ).fit(X, y)
        spent = np.cumsum([int(a.sum()) for a in model.node_insertions_])
        n_trees = int(np.searchsorted(spent, BUDGET, side="right"))
        if n_trees == 0:
            print(f"  {solver:10s} {0:>6d} {'-':>13s} {'-':>11s}  (one tree costs {spent[0]:.3g})")
            continue
        ensemble = dataclasses.replace(
            model.ensemble_,
            trees=model.ensemble_.trees[:n_trees],
            tree_output=model.ensemble_.tree_output[:n_trees],
            tree_scale=model.ensemble_.tree_scale[:n_trees],
        )
        accuracy = 100.0 * np.mean(ensemble.predict(X_test) == y_test)
        capped = " (cap reached: budget buys more)" if n_trees == max_trees else ""
        print(f"  {solver:10s} {n_trees:>6d} {spent[n_trees - 1]:>13.3e} {accuracy:>11.3f}{capped}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 rows and few trees (about a minute)")
    parser.add_argument("--sizes", type=int, nargs="*", help="training rows (default 100000 1000000)")
    args = parser.parse_args(argv)
    if args.quick:
        sizes, n_trees, budget_trees = args.sizes or [20_000], 5, 40
    else:
        sizes, n_trees, budget_trees = args.sizes or [100_000, 1_000_000], 10, 60
    start = time.perf_counter()
    # compile (or load) the kernels outside the timings
    warm = make_data("classification", 2000, 10)
    MABSplitTreeClassifier(max_depth=2).fit(warm[0], warm[2])
    MABSplitTreeRegressor(max_depth=2).fit(warm[0], warm[2].astype(float))
    for n in sizes:
        big = n >= 500_000
        for task in ("classification", "regression"):
            data = make_data(task, n, max(n // 10, 10_000))
            single_trees(task, data, 5)
            # unlimited-depth sklearn trees on a million rows take minutes: ours only there
            single_trees(task, data, None, with_sklearn=not big)
            forests(task, data, 5, n_trees)
            if not big:
                forests(task, data, None, n_trees, with_lightgbm=False)
        if n <= 200_000:
            fixed_budget(make_data("classification", n, max(n // 10, 10_000)), 5, budget_trees)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
