"""What pruning buys where the model is deployed: the native file's size and
the native library's prediction time, before and after ``btt.prune``
(``PruneResult.deployment``).

    python benchmarks/bench_deployment.py [--datasets adult,california_binary] [--models lightgbm,xgboost,rf,hgb]
                                          [--with-training-rows] [--n-repeats 5]

The models, splits and tolerance are those of ``bench_compression.py``
(LightGBM 300 trees x 63 leaves, XGBoost 300 trees of depth 6, RandomForest
100 trees, HistGradientBoosting 200 iterations; a 60/20/20 split; 0.5 points
of validation balanced accuracy). ``btt.prune`` sees the validation rows only
(the model handed over with a held-out set), or also the training rows with
``--with-training-rows``. Files: scikit-learn ``joblib.dump``, LightGBM's
model text, XGBoost's UBJSON. Times: the median of ``--n-repeats`` calls of
the library's own predictor (scikit-learn ``predict_proba``, LightGBM
``Booster.predict``, XGBoost ``Booster.inplace_predict``) on 10,000 test rows
and on one row (runs of 20 one-row calls), with the models' own threads (the
benchmark's models: 2). Each ratio is before / after: how many times fewer,
smaller or faster.
"""

import argparse
import time

import pandas as pd
from bench_compression import load, make_model, split

import bandit_tree_tools as btt


def run_case(name, kind, tolerance, with_training_rows, n_repeats):
    X, y, task = load(name)
    X_train, y_train, X_val, y_val, X_test, y_test = split(X, y, task)
    model = make_model(kind, task).fit(X_train, y_train)
    training = dict(X_train=X_train, y_train=y_train) if with_training_rows else {}
    started = time.perf_counter()
    result = btt.prune(model, X_val, y_val, tolerance=tolerance, random_state=0, progress=False, **training)
    seconds = time.perf_counter() - started
    table = result.deployment(X_test, n_repeats=n_repeats, random_state=0)
    test = result.evaluate(X_test, y_test)
    metric = "accuracy" if "accuracy" in test else "r2"
    before, after, ratio = (table.loc[row] for row in ("before", "after", "ratio"))
    return {
        "data": name,
        "model": kind,
        "leaves": f"{before.leaves:,.0f} -> {after.leaves:,.0f}",
        "leaves_ratio": ratio.leaves,
        "trees": f"{before.trees:.0f} -> {after.trees:.0f}",
        "file_kb": f"{before.file_bytes / 1e3:,.0f} -> {after.file_bytes / 1e3:,.0f}",
        "file_ratio": ratio.file_bytes,
        "batch_ms": f"{before.batch_seconds * 1e3:.1f} -> {after.batch_seconds * 1e3:.1f}",
        "batch_ratio": ratio.batch_seconds,
        "row_us": f"{before.row_seconds * 1e6:.0f} -> {after.row_seconds * 1e6:.0f}",
        "row_ratio": ratio.row_seconds,
        f"test_{metric}_change": test.loc["after", metric] - test.loc["before", metric],
        "prune_s": seconds,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="adult,california_binary")
    parser.add_argument("--models", default="lightgbm,xgboost,rf,hgb")
    parser.add_argument("--tolerance", type=float, default=0.005)
    parser.add_argument("--with-training-rows", action="store_true", help="btt.prune with X_train, y_train too")
    parser.add_argument("--n-repeats", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for name in args.datasets.split(","):
        for kind in args.models.split(","):
            rows.append(run_case(name, kind, args.tolerance, args.with_training_rows, args.n_repeats))
            print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.2f}"), flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
