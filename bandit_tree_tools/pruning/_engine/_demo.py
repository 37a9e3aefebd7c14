"""The compression part of ``bandit-tree-tools demo``: ``btt.prune``."""

import time

import numpy as np

TOLERANCE = 0.005  # of validation balanced accuracy


def _models():
    models = {}
    try:
        import lightgbm

        models["LightGBM 300 trees x 31 leaves"] = lightgbm.LGBMClassifier(
            n_estimators=300, num_leaves=31, verbose=-1, random_state=0
        )
    except ImportError:
        pass
    try:
        import xgboost

        models["XGBoost 300 trees, depth 6"] = xgboost.XGBClassifier(n_estimators=300, max_depth=6, random_state=0)
    except ImportError:
        pass
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    models["scikit-learn HistGradientBoosting 200"] = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=False, random_state=0
    )
    models["scikit-learn RandomForest 100 trees"] = RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0)
    return models


def demo() -> str:
    """Prune boosted models and a random forest to the smallest within half a
    point of validation balanced accuracy; report the validation change (on
    the rows that checked the tolerance), the test figures with the standard
    error of the test change, and check each export."""
    from sklearn.datasets import make_classification
    from sklearn.metrics import balanced_accuracy_score

    from .._inputs import check_target
    from ._metrics import _row_terms, paired_standard_error
    from ._prune import prune

    X, y = make_classification(20_000, 20, n_informative=8, flip_y=0.03, class_sep=0.8, random_state=0)
    X_train, y_train = X[:12_000], y[:12_000]
    X_val, y_val, X_test, y_test = X[12_000:16_000], y[12_000:16_000], X[16_000:], y[16_000:]
    lines = [
        "synthetic 20 features: train 12,000 rows, validation 4,000, test 4,000; tolerance 0.005 of validation "
        "balanced accuracy",
        f"{'model':38s} {'leaves':>16s} {'ratio':>6s} {'val change':>10s} {'test bal. acc. (change +- SE)':>36s} "
        f"{'time':>6s} {'file':>6s} {'1 row':>6s}  export check",
    ]
    failures, notes = 0, []
    for name, model in _models().items():
        model.fit(X_train, y_train)
        started = time.perf_counter()
        result = prune(
            model, X_val, y_val, tolerance=TOLERANCE, X_train=X_train, y_train=y_train, random_state=0, progress=False
        )
        elapsed = time.perf_counter() - started
        native = result.to_model()
        ok = (
            bool(np.array_equal(native.predict(X_test), result.ensemble.predict(X_test)))
            and float(np.max(np.abs(native.predict_proba(X_test) - result.ensemble.predict_proba(X_test)))) <= 1e-6
        )
        failures += not ok
        metric = result.metrics["balanced_accuracy"]
        before = balanced_accuracy_score(y_test, model.predict(X_test))
        after = balanced_accuracy_score(y_test, native.predict(X_test))
        # the standard error of the test change, by the rule of the search's margin (its per-row terms)
        target = check_target(result.original, y_test, len(y_test), name="y_test")
        hits = [
            _row_terms("balanced_accuracy", ensemble, ensemble.predict_raw(X_test), target)
            for ensemble in (result.original, result.ensemble)
        ]
        se = paired_standard_error("balanced_accuracy", hits[1], hits[0], target)
        # what the deployed model gained: its native file and one native prediction, a few repeats
        deployed = result.deployment(X_test, batch_rows=1_000, n_repeats=3, random_state=0).loc["ratio"]
        lines.append(
            f"{name:38s} {result.original.n_leaves:>6,d} -> {result.ensemble.n_leaves:<6,d} "
            f"{result.original.n_leaves / result.ensemble.n_leaves:5.1f}x {metric['after'] - metric['before']:+10.4f} "
            f"{before:.4f} -> {after:.4f} ({after - before:+.4f} +- {se:.4f}) "
            f"{elapsed:5.1f}s {deployed['file_bytes']:5.1f}x {deployed['row_seconds']:5.1f}x  {'OK' if ok else 'MISMATCH'}"
        )
        if after - before < -TOLERANCE:  # say why, in the figures that explain it
            held = result.validation_change.iloc[0]
            notes.append(
                f"note, {name}: the test change {after - before:+.4f} is past the tolerance by "
                f"{(before - after - TOLERANCE) / se:.1f} standard errors of the test change; on the validation rows "
                f"the change was {held['change']:+.4f} +- {held['standard_error']:.4f}, held {held['margin']:g} "
                f"standard errors inside the tolerance ({held['worst_plausible']:+.4f} >= {held['allowed']:+.4f}). "
                "The test rows are a sample too: a model whose true change is within the tolerance measures past it "
                "on some samples; and of the models near the tolerance's edge, the smallest whose validation change "
                "passes is more likely one its validation rows flatter"
            )
    lines += [
        "val change: on the validation rows that checked the tolerance (result.metrics)",
        "+- SE: the standard error of the test change, paired by row (the test rows are a sample too)",
        "file, 1 row: how many times smaller the exported model's native file is, and how many times faster its "
        "library predicts one row (result.deployment; timings on a busy machine vary)",
    ]
    lines += notes
    if failures:
        raise AssertionError(
            "\n".join(lines + [f"{failures} exported model(s) do not predict like the pruned ensemble"])
        )
    return "\n".join(lines)
