"""The bandit-pruning part of ``bandit-tree-tools demo``."""

import time

import numpy as np


def _models():
    from sklearn.tree import DecisionTreeClassifier

    models = {
        "scikit-learn DecisionTreeClassifier": DecisionTreeClassifier(
            max_depth=7, min_samples_leaf=3, min_samples_split=3, random_state=0
        )
    }
    try:
        import lightgbm

        models["LightGBM LGBMClassifier"] = lightgbm.LGBMClassifier(n_estimators=40, verbose=-1, random_state=0)
    except ImportError:
        pass
    try:
        import xgboost

        models["XGBoost XGBClassifier"] = xgboost.XGBClassifier(n_estimators=40, max_depth=6, random_state=0)
    except ImportError:
        pass
    return models


def demo() -> str:
    """Bandit-prune a tree, a LightGBM and an XGBoost model on breast-cancer
    data; check that each exported native model predicts like the pruned
    ensemble. Returns the text to print."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from . import bandit_prune

    X, y = load_breast_cancer(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest)
    lines = [
        "breast cancer: fit 284 rows, validation (bandit rewards) 142, test 143; UCB1, 1100 rounds, twigs at depth >= 2",
        f"{'model':38s} {'leaves':>11s} {'val score':>15s} {'test score':>15s} {'time':>6s}  export check",
    ]
    failures = 0
    for name, model in _models().items():
        model.fit(X_fit, y_fit)
        started = time.perf_counter()
        result = bandit_prune(model, X_val, y_val, policy="ucb1", min_depth=2, random_state=0, progress=False)
        elapsed = time.perf_counter() - started
        native = result.to_model()
        gap = float(np.max(np.abs(native.predict_proba(X_test) - result.ensemble.predict_proba(X_test))))
        same_labels = bool(np.array_equal(native.predict(X_test), result.ensemble.predict(X_test)))
        ok = gap <= 1e-6 and same_labels
        failures += not ok
        test = result.evaluate(X_test, y_test)
        before, after = result.metrics.loc["before"], result.metrics.loc["after"]
        lines.append(
            f"{name:38s} {int(before['leaves']):>4d} -> {int(after['leaves']):<4d} "
            f"{before['score']:.3f} -> {after['score']:.3f}  {test.loc['before', 'score']:.3f} -> "
            f"{test.loc['after', 'score']:.3f} {elapsed:5.2f}s  "
            f"{'OK' if ok else 'MISMATCH'} (max |p_native - p_pruned| = {gap:.1e})"
        )
    lines.append("score = accuracy + 2.5 F1 - logloss/34.5 (the paper's performance, log-loss scaled into [0, 1])")
    if failures:
        raise AssertionError(
            "\n".join(lines + [f"{failures} exported model(s) do not predict like the pruned ensemble"])
        )
    return "\n".join(lines)
