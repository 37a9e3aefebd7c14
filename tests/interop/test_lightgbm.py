"""LightGBM import/export: the exactness contract, property-tested.

For random model kinds (objectives, boosting types, missing-value settings,
categorical features, Booster or scikit-learn wrapper) and adversarial probe
rows (LightGBM's own thresholds and their neighbours, NaN, zeros, the zero
band, infinities, negative and unseen categories):

1. ``from_lightgbm(m)`` predicts like ``m`` (raw scores, transformed outputs
   and labels bit for bit), and like the pure-Python reference predictor;
2. ``to_lightgbm(from_lightgbm(m))`` predicts identically to ``m`` (and writes
   the same trees);
3. after collapsing random internal nodes, the exported model predicts like
   our collapsed ensemble;
4. ``m``'s pickle bytes are unchanged.
"""

import pickle

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.interop import _lightgbm_text  # noqa: E402
from bandit_tree_tools.interop.lightgbm import LIGHTGBM_ZERO, from_lightgbm, to_lightgbm  # noqa: E402
from tests.optional import lgb  # noqa: E402
from tests.oracles.tree import reference_predict_raw  # noqa: E402

KINDS = (
    "binary",
    "multiclass",
    "multiclassova",
    "regression",
    "poisson",
    "cross_entropy",
    "rf_binary",
    "rf_regression",
    "dart",
)


def make_data(rng, n_rows, n_features, n_categories, nan_fraction, zero_fraction):
    """Numbers with NaN and exact zeros; column 0 categorical when
    ``n_categories`` (ints 0..n_categories-1, NaN where missing)."""
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < zero_fraction] = 0.0
    X[rng.random(X.shape) < nan_fraction] = np.nan
    if n_categories:
        X[:, 0] = rng.integers(0, n_categories, n_rows)
        X[rng.random(n_rows) < nan_fraction, 0] = np.nan
    signal = np.nan_to_num(X[:, -1]) + (np.nan_to_num(X[:, 0]) % 3 == 1 if n_categories else 0)
    return X, signal + 0.3 * rng.normal(size=n_rows)


def train(kind, rng, *, wrapper, n_estimators=5, num_leaves=8, n_categories=0, **extra):
    n_features = int(extra.pop("n_features", 3))
    X, signal = make_data(
        rng, int(extra.pop("n_rows", 300)), n_features, n_categories,
        extra.pop("nan_fraction", 0.1), extra.pop("zero_fraction", 0.1),
    )  # fmt: skip
    params = dict(n_estimators=n_estimators, num_leaves=num_leaves, min_child_samples=3, verbose=-1, n_jobs=1)
    params.update(min_data_per_group=3, cat_smooth=1.0, max_cat_to_onehot=2)
    params.update(extra)
    if kind.startswith("rf"):
        params.update(boosting_type="rf", subsample=0.7, subsample_freq=1)
    if kind == "dart":
        params.update(boosting_type="dart")
    if kind in ("binary", "rf_binary", "dart"):
        y = (signal > np.median(signal)).astype(int)
        estimator = lgb.LGBMClassifier
    elif kind in ("multiclass", "multiclassova"):
        y = np.digitize(signal, np.quantile(signal, [0.33, 0.66]))
        estimator = lgb.LGBMClassifier
        params["objective"] = kind
    else:
        estimator = lgb.LGBMRegressor
        y = signal
        if kind == "poisson":
            y, params["objective"] = np.exp(signal / 2).round(), "poisson"
        if kind == "cross_entropy":
            y, params["objective"] = 1 / (1 + np.exp(-signal)), "cross_entropy"
    categorical = [0] if n_categories else "auto"
    model = estimator(**params).fit(X, y, categorical_feature=categorical)
    return (model if wrapper else model.booster_), X


def lightgbm_thresholds(model):
    booster = model if isinstance(model, lgb.Booster) else model.booster_
    parsed = _lightgbm_text.parse_model_string(booster.model_to_string())
    numeric = (parsed.arrays["decision_type"] & 1) == 0
    return parsed.arrays["threshold"][numeric]


def probe_rows(rng, model, ensemble, X, n_rows=300, categorical_columns=()):
    """Adversarial rows: thresholds (LightGBM's and ours) and their float
    neighbours, NaN, signed zeros, the zero band, infinities, negative and
    unseen categories, mixed with real cells."""
    ours = np.concatenate(
        [tree.threshold[(tree.children_left != -1) & (tree.is_categorical == 0)] for tree in ensemble.trees]
    )
    thresholds = np.concatenate([lightgbm_thresholds(model), ours, [0.0]])
    specials = [np.nan, 0.0, -0.0, 1e-36, -1e-36, 1e-35, -1e-35, LIGHTGBM_ZERO, -LIGHTGBM_ZERO, np.inf, -np.inf,
                -1.0, -3.0, 0.5, 1.0, 2.0, 5.0, 40.0, 1e9, 2.0**31, 1e300]  # fmt: skip
    pool = np.concatenate([thresholds, np.nextafter(thresholds, np.inf), np.nextafter(thresholds, -np.inf), specials])
    P = rng.choice(pool, size=(n_rows, X.shape[1]))
    real = rng.random(P.shape) < 0.3
    P[real] = X[rng.integers(0, len(X), n_rows)][real]
    for column in categorical_columns:
        # Known gap (see test_fractional_negative_category_is_category_zero):
        # LightGBM truncates x in (-1, 0) to category 0.
        values = P[:, column]
        P[:, column] = np.where((values > -1.0) & (values < 0.0), -1.0, values)
    return P


def native_outputs(model, P, ensemble):
    """(raw scores as our predict_raw lays them out, transformed outputs, labels or None)."""
    booster = model if isinstance(model, lgb.Booster) else model.booster_
    raw = booster.predict(P, raw_score=True).reshape(len(P), -1)
    if ensemble.aggregation == "mean":  # LightGBM's raw score of rf models is the sum
        raw = raw / booster.current_iteration()
    if isinstance(model, lgb.LGBMClassifier):
        return raw, model.predict_proba(P), model.predict(P)
    transformed = model.predict(P)
    return raw, np.asarray(transformed).reshape(len(P), -1), None


def our_outputs(ensemble, P, like):
    raw = ensemble.predict_raw(P)
    if isinstance(like, lgb.LGBMClassifier):
        return raw, ensemble.predict_proba(P), ensemble.predict(P)
    if ensemble.task == "classification":  # Booster: P(class 1) for binary, all columns for multiclass
        proba = ensemble.predict_proba(P)
        return raw, (proba[:, 1:] if ensemble.n_outputs == 1 else proba), None
    return raw, ensemble.predict(P).reshape(len(P), -1), None


def assert_same_predictions(ours, native):
    raw, transformed, labels = ours
    native_raw, native_transformed, native_labels = native
    np.testing.assert_array_equal(raw, native_raw)
    np.testing.assert_array_equal(transformed, native_transformed)
    if native_labels is not None:
        np.testing.assert_array_equal(labels, native_labels)


def random_internal_nodes(rng, ensemble, fraction=0.5):
    nodes = {}
    for index, tree in enumerate(ensemble.trees):
        internal = np.flatnonzero(tree.children_left != -1)
        if internal.size and rng.random() < fraction:
            nodes[index] = rng.choice(internal, size=int(rng.integers(1, min(3, internal.size) + 1)), replace=False)
    return nodes


def tree_section(model_string):
    return model_string[model_string.index("\nTree=") : model_string.index("\nend of trees")]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    wrapper=st.booleans(),
    n_estimators=st.integers(1, 6),
    num_leaves=st.integers(2, 12),
    n_features=st.integers(1, 4),
    n_categories=st.sampled_from([0, 0, 5, 40]),
    zero_as_missing=st.booleans(),
    use_missing=st.booleans(),
    sigmoid=st.sampled_from([1.0, 1.0, 0.7]),
    seed=st.integers(0, 2**16),
)
def test_exactness_contract(
    kind, wrapper, n_estimators, num_leaves, n_features, n_categories, zero_as_missing, use_missing, sigmoid, seed
):
    rng = np.random.default_rng(seed)
    n_categories = n_categories if n_features >= 2 else 0
    extra = dict(zero_as_missing=zero_as_missing, use_missing=use_missing, n_features=n_features)
    if kind in ("binary", "rf_binary", "multiclassova"):
        extra["sigmoid"] = sigmoid
    model, X = train(kind, rng, wrapper=wrapper, n_estimators=n_estimators, num_leaves=num_leaves,
                     n_categories=n_categories, **extra)  # fmt: skip
    pickled = pickle.dumps(model)

    ensemble = btt.from_model(model)
    P = probe_rows(rng, model, ensemble, X, categorical_columns=[0] if n_categories else ())
    native = native_outputs(model, P, ensemble)
    # (1) import predicts like the native model, and like the reference predictor
    assert_same_predictions(our_outputs(ensemble, P, model), native)
    np.testing.assert_array_equal(ensemble.predict_raw(P[:60]), reference_predict_raw(ensemble, P[:60]))

    # (2) the round trip writes the same trees and predicts identically
    exported = btt.to_model(ensemble)
    assert type(exported) is type(model)
    exported_booster = exported if wrapper is False else exported.booster_
    original_booster = model if wrapper is False else model.booster_
    assert tree_section(exported_booster.model_to_string()) == tree_section(original_booster.model_to_string())
    assert_same_predictions(native_outputs(exported, P, ensemble), native)

    # (3) after collapsing random internal nodes, native and ours agree
    collapsed = btt.collapse(ensemble, random_internal_nodes(rng, ensemble))
    exported = to_lightgbm(collapsed)
    assert_same_predictions(our_outputs(collapsed, P, model), native_outputs(exported, P, collapsed))
    np.testing.assert_array_equal(collapsed.predict_raw(P[:60]), reference_predict_raw(collapsed, P[:60]))
    reimported = from_lightgbm(exported)
    np.testing.assert_array_equal(reimported.predict_raw(P), collapsed.predict_raw(P))
    assert reimported.n_leaves == collapsed.n_leaves

    # (4) the user's model is untouched
    assert pickle.dumps(model) == pickled
