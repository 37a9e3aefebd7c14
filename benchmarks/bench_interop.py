"""Import, export and prediction speed of the common format against the native libraries.

Models: a 500-tree LightGBM model (255 leaves), a 500-tree XGBoost model
(depth 8) and a 300-tree scikit-learn random forest. Every model is trained
on ``--train-rows`` rows and predicts ``--rows`` rows (200,000 by default).
Printed side by side, measured in one run:

- import (``btt.from_model``) and export (``btt.to_model``) seconds, the
  export of the same model after collapsing two twigs in every tree (every
  tree changed), and treelite's import time when treelite is installed;
- raw-score prediction: our numba kernel versus the library's own predict,
  as seconds and as a ratio (native / ours: above 1 means ours is faster).

Targets: our prediction at least as fast as the native library's on this
machine; import + export of each model under 2 s.

    python benchmarks/bench_interop.py [--rows 200000] [--train-rows 50000] [--quick]
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification

import bandit_tree_tools as btt
from bandit_tree_tools._demo import collapse_twigs

from _timing import best_of


def build_models(X_train, y_train, scale):
    import lightgbm
    import xgboost
    from sklearn.ensemble import RandomForestClassifier

    n_lgbm, n_xgb, n_rf = (int(500 * scale), int(500 * scale), int(300 * scale))
    start = time.perf_counter()
    lgbm = lightgbm.LGBMClassifier(
        n_estimators=n_lgbm, num_leaves=255, min_child_samples=5, learning_rate=0.05, verbose=-1, random_state=0
    ).fit(X_train, y_train)
    xgb = xgboost.XGBClassifier(n_estimators=n_xgb, max_depth=8, learning_rate=0.05, random_state=0).fit(X_train, y_train)
    forest = RandomForestClassifier(n_estimators=n_rf, min_samples_leaf=5, n_jobs=2, random_state=0).fit(X_train, y_train)
    print(f"trained the three models in {time.perf_counter() - start:.1f} s")
    return {
        f"LightGBM {n_lgbm} trees x 255 leaves": (lgbm, lambda X: lgbm.booster_.predict(X, raw_score=True)),
        f"XGBoost {n_xgb} trees depth 8": (xgb, lambda X: xgb.get_booster().inplace_predict(X, predict_type="margin")),
        f"sklearn RandomForest {n_rf} trees": (forest, lambda X: forest.predict_proba(X)),
    }


def treelite_import_seconds(model):
    try:
        import treelite
    except ImportError:
        return None
    module = type(model).__module__.split(".")[0]
    if module == "lightgbm":
        return best_of(lambda: treelite.frontend.from_lightgbm(model.booster_), repeat=1)[0]
    if module == "xgboost":
        return best_of(lambda: treelite.frontend.from_xgboost(model.get_booster()), repeat=1)[0]
    return best_of(lambda: treelite.sklearn.import_model(model), repeat=1)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="rows to predict")
    parser.add_argument("--train-rows", type=int, default=50_000, help="rows to train on")
    parser.add_argument("--quick", action="store_true", help="a tenth of the trees and rows, for a smoke run")
    args = parser.parse_args()
    scale = 0.1 if args.quick else 1.0
    rows = int(args.rows * scale)

    X, y = make_classification(
        n_samples=args.train_rows + rows, n_features=30, n_informative=15, random_state=0
    )
    X_train, y_train, X_test = X[: args.train_rows], y[: args.train_rows], X[args.train_rows :]
    models = build_models(X_train, y_train, scale)

    header = (
        f"{'model':34s} {'import s':>9s} {'export s':>9s} {'edited':>7s} {'treelite':>9s} "
        f"{'ours s':>8s} {'native s':>9s} {'native/ours':>12s} {'max |diff|':>11s}"
    )
    print(f"\npredicting {rows:,} rows, 2 cores")
    print(header)
    for name, (model, native_predict) in models.items():
        import_seconds, ensemble = best_of(lambda: btt.from_model(model), repeat=2)
        export_seconds, _ = best_of(lambda: btt.to_model(ensemble), repeat=2)
        collapsed = collapse_twigs(ensemble, per_tree=2)
        edited_seconds, _ = best_of(lambda: btt.to_model(collapsed), repeat=2)
        ensemble.predict_raw(X_test[:10])  # compile outside the timing
        ours_seconds, ours = best_of(lambda: ensemble.predict_raw(X_test))
        native_seconds, native = best_of(lambda: native_predict(X_test))
        native = np.asarray(native).reshape(len(X_test), -1)
        if native.shape[1] != ours.shape[1]:  # forest: proba columns; ours: same
            native = native[:, -ours.shape[1] :]
        difference = np.abs(native - ours).max()
        treelite = treelite_import_seconds(model)
        treelite_text = "-" if treelite is None else f"{treelite:.2f}"
        print(
            f"{name:34s} {import_seconds:>9.2f} {export_seconds:>9.2f} {edited_seconds:>7.2f} {treelite_text:>9s} "
            f"{ours_seconds:>8.3f} {native_seconds:>9.3f} {native_seconds / ours_seconds:>12.2f} {difference:>11.2g}"
        )


if __name__ == "__main__":
    main()
