"""btt.prune on models with categorical and missing values: the exported
model predicts like the pruned ensemble on the rows where routing is easiest
to get wrong (missing values, zeros of both signs, values on the thresholds
the pruned trees kept, missing categories and, where the library takes
them, categories the model never saw: XGBoost refuses those, and so do we,
see tests/robustness)."""

import copy

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier

import bandit_tree_tools as btt
from tests.optional import lgb, xgb

COLOURS = list("abcdefgh")


def frame(n, seed):
    """A categorical column, a numeric one with 10% missing values, a small integer one."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS, n)
    x1 = rng.normal(size=n)
    x1[rng.random(n) < 0.1] = np.nan
    x2 = rng.integers(0, 4, n).astype(float)
    X = pd.DataFrame({"colour": pd.Categorical(colour, categories=COLOURS), "x1": x1, "x2": x2})
    logit = np.where(np.isin(colour, ["a", "c", "f"]), 1.0, -1.0) + np.nan_to_num(x1, nan=2.0) + 0.5 * x2 - 0.7
    return X, logit, rng


def edge_rows(ensemble, X, categorical, unseen, infinite):
    """Missing values, signed zeros, out-of-range values and every numeric
    threshold of ``ensemble`` as a value of its feature; with ``infinite``
    also infinities (scikit-learn's forests refuse them); with
    ``categorical`` a third of the rows miss their category, and with
    ``unseen`` another third carry one the model never saw."""
    base = X.iloc[:40].reset_index(drop=True)
    rows = [base]
    extreme = [-1e300, np.inf] if infinite else []
    for column, values in (("x1", [np.nan, 0.0, -0.0, 1e-300] + extreme), ("x2", [np.nan, -0.0, 1.5, 9.0])):
        for value in values:
            rows.append(base.assign(**{column: value}))
    names = list(X.columns)
    for tree in ensemble.trees:
        numeric = (np.asarray(tree.children_left) >= 0) & (np.asarray(tree.is_categorical) == 0)
        for feature, threshold in zip(np.asarray(tree.feature)[numeric], np.asarray(tree.threshold)[numeric]):
            if not categorical or names[feature] != "colour":  # a categorical column's splits are sets
                rows.append(base.iloc[:5].assign(**{names[feature]: threshold}))
    out = pd.concat(rows, ignore_index=True)
    if categorical:
        colour = np.array(out["colour"].astype(object), dtype=object)  # a writable copy
        colour[::3] = None
        if unseen:
            colour[1::3] = "zz"
        out["colour"] = pd.Categorical(colour, categories=COLOURS + (["zz"] if unseen else []))
    return out


def _case(name):
    X, logit, rng = frame(4000, seed=0)
    y = (logit + rng.logistic(size=logit.size) > 0).astype(int)
    y_value = logit + rng.normal(size=logit.size)
    if name == "random_forest":  # scikit-learn forests take missing values, not categories
        X = X.assign(colour=X.colour.cat.codes.astype(float))
    models = {
        "lightgbm_binary": (lgb.LGBMClassifier(n_estimators=40, num_leaves=15, verbose=-1, random_state=0), y),
        "lightgbm_regressor": (lgb.LGBMRegressor(n_estimators=40, num_leaves=15, verbose=-1, random_state=0), y_value),
        "xgboost_binary": (
            xgb.XGBClassifier(
                n_estimators=40, max_depth=4, enable_categorical=True, tree_method="hist", random_state=0
            ),
            y,
        ),
        "xgboost_regressor": (
            xgb.XGBRegressor(n_estimators=40, max_depth=4, enable_categorical=True, tree_method="hist", random_state=0),
            y_value,
        ),
        "hist_gradient_boosting_binary": (
            HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype", random_state=0),
            y,
        ),
        "hist_gradient_boosting_regressor": (
            HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype", random_state=0),
            y_value,
        ),
        "random_forest": (RandomForestClassifier(n_estimators=10, min_samples_leaf=3, random_state=0), y),
    }
    model, target = models[name]
    return model, X, target, name != "random_forest"


def native_scores(model, X):
    """What the library itself outputs: raw margins where it exposes them, else probabilities or predictions."""
    if isinstance(model, (lgb.LGBMClassifier, lgb.LGBMRegressor)):
        return np.asarray(model.predict(X, raw_score=True), dtype=np.float64).reshape(X.shape[0], -1)
    if isinstance(model, (xgb.XGBClassifier, xgb.XGBRegressor)):
        return np.asarray(model.predict(X, output_margin=True), dtype=np.float64).reshape(X.shape[0], -1)
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(X))
    return np.asarray(model.predict(X), dtype=np.float64).reshape(-1, 1)


def our_scores(ensemble, model, X):
    if isinstance(model, (lgb.LGBMModel, xgb.XGBModel)):
        return ensemble.predict_raw(X)
    if hasattr(model, "predict_proba"):
        return ensemble.predict_proba(X)
    return ensemble.predict(X).reshape(-1, 1)


@pytest.mark.parametrize("with_training_rows", [True, False], ids=["X_train", "no X_train"])
@pytest.mark.parametrize(
    "name",
    [
        "lightgbm_binary",
        "lightgbm_regressor",
        "xgboost_binary",
        "xgboost_regressor",
        "hist_gradient_boosting_binary",
        "hist_gradient_boosting_regressor",
        "random_forest",
    ],
)
def test_pruned_model_exports_exactly_on_missing_values_thresholds_and_unseen_categories(name, with_training_rows):
    model, X, y, categorical = _case(name)
    train, val = slice(0, 2000), slice(2000, 4000)
    model.fit(X[train], y[train])
    before = copy.deepcopy(model)
    fit = dict(X_train=X[train], y_train=y[train]) if with_training_rows else {}
    result = btt.prune(model, X[val], y[val], tolerance=0.02, random_state=0, progress=False, **fit)
    assert result.ensemble.n_leaves < result.original.n_leaves, "a 2-point tolerance leaves room to prune"
    rows = edge_rows(
        result.ensemble, X, categorical, unseen=not name.startswith("xgboost"), infinite=name != "random_forest"
    )
    native = result.to_model()
    assert type(native) is type(model)
    np.testing.assert_array_equal(native_scores(native, rows), our_scores(result.ensemble, model, rows))
    # the user's model is untouched, also on these rows
    np.testing.assert_array_equal(native_scores(model, rows), native_scores(before, rows))
