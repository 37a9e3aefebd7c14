"""XGBoost import/export: the exactness contract on ordinary data and on probe
rows taken from the model's own thresholds, NaN, zeros, infinities and
unseen categories.

Raw scores must equal XGBoost's margins bit for bit (both add float32 tree
outputs in order), and so must probabilities and exp-link predictions (the
C library's ``expf`` in float32, XGBoost's softmax); DART's ``inplace_predict``
adds its trees another way, so there they agree to 1e-6 (relative for exp).
"""

import dataclasses
import json
import os
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import (
    ConversionError,
    DataError,
    NodeError,
    NotFittedError,
    UnsupportedModelError,
)
from bandit_tree_tools.interop import _xgboost_ubjson as ubjson
from bandit_tree_tools.interop.xgboost import from_xgboost, to_xgboost
from bandit_tree_tools.tree import TREE_LEAF
from tests.interop.synthetic import make_data, random_internal_nodes
from tests.optional import xgb  # noqa: E402
from tests.oracles.tree import reference_predict_raw

# Probe rows hold float64 values beyond float32's range: casting them to
# float32 gives inf in both XGBoost and the common format, and numpy warns.
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

EXAMPLES = int(os.environ.get("BTT_EXAMPLES", 15))
OBJECTIVES = {
    "binary": "binary:logistic",
    "multiclass": "multi:softprob",
    "regression": "reg:squarederror",
    "poisson": "count:poisson",
}


def probe_rows(ensemble, X, rng):
    """Rows exactly on the model's float32 thresholds, one float32 step either
    side, float64 values that round onto a threshold, zeros, NaN, +-inf and
    huge values; then the ordinary rows."""
    base = np.nan_to_num(X[rng.integers(0, len(X), size=1)], nan=0.0)
    rows = [np.zeros_like(base)]
    for t in ensemble.trees[:4]:
        internal = np.flatnonzero((t.children_left != TREE_LEAF) & (t.is_categorical == 0))
        for node in internal[:6]:
            threshold = np.float32(t.threshold[node])
            below = np.nextafter(threshold, np.float32(-np.inf))
            for value in (
                threshold,
                np.nextafter(threshold, np.float32(np.inf)),
                below,
                float(threshold) - 1e-12,
                (float(threshold) + float(below)) / 2,
            ):
                row = base.copy()
                row[0, t.feature[node]] = value
                rows.append(row)
    rows += [
        np.full_like(base, np.nan),
        np.where(np.arange(base.shape[1]) % 2 == 0, np.nan, base),
        np.full_like(base, np.inf),
        np.full_like(base, -np.inf),
        np.full_like(base, 1e300),  # becomes inf in float32
        np.full_like(base, -3.4e38),
    ]
    return np.vstack(rows + [X])


def native_margin(model, X):
    booster = model if isinstance(model, xgb.Booster) else model.get_booster()
    if isinstance(model, xgb.Booster):
        margin = booster.inplace_predict(X, predict_type="margin")
    else:
        margin = model.predict(X, output_margin=True)
    return np.asarray(margin, dtype=np.float64).reshape(len(X), -1)


def assert_margins_equal(model, ensemble, X):
    """Bit-for-bit equal margins. DART is exact against ``Booster.predict``
    (DMatrix, which refuses infinities); its ``inplace_predict`` (used by the
    wrappers' ``predict``) adds ``(float32(base + tree) - base) * weight``
    and so may differ from the plain sum in the last float32 bit."""
    raw = ensemble.predict_raw(X)
    if ensemble.source.payload["native"].booster != "dart":
        np.testing.assert_array_equal(raw, native_margin(model, X))
        return
    np.testing.assert_allclose(raw, native_margin(model, X), rtol=0, atol=1e-6)
    finite = np.all(np.isfinite(X.astype(np.float32)) | np.isnan(X), axis=1)
    booster = model if isinstance(model, xgb.Booster) else model.get_booster()
    exact = booster.predict(xgb.DMatrix(X[finite]), output_margin=True)
    np.testing.assert_array_equal(raw[finite], np.asarray(exact, dtype=np.float64).reshape(int(finite.sum()), -1))


def assert_predicts_like(model, ensemble, X):
    """Raw margins, labels and probabilities identical (DART: within 1e-6)."""
    assert_margins_equal(model, ensemble, X)
    if isinstance(model, xgb.Booster):
        native = np.asarray(model.inplace_predict(X), dtype=np.float64).reshape(len(X), -1)
        ours = ensemble.transform_raw(ensemble.predict_raw(X))
    elif ensemble.task == "classification":
        np.testing.assert_array_equal(model.predict(X), ensemble.predict(X))
        native, ours = model.predict_proba(X), ensemble.predict_proba(X)
    else:
        native, ours = model.predict(X).reshape(len(X), -1), ensemble.predict(X).reshape(len(X), -1)
    if ensemble.source.payload["native"].booster != "dart":
        np.testing.assert_array_equal(ours, native)
        return
    tolerance = 1e-6 * np.maximum(1.0, np.abs(native)) if ensemble.link == "exp" else 1e-6
    assert np.all(np.abs(ours - native) <= tolerance)


def fingerprint(model):
    return pickle.dumps(model)


# ------------------------------------------------------------- the contract
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["Booster", "wrapper"]),
    task=st.sampled_from(sorted(OBJECTIVES)),
    tree_method=st.sampled_from(["hist", "approx", "exact"]),
    booster=st.sampled_from(["gbtree", "gbtree", "dart"]),
    depth=st.integers(1, 6),
    n_parallel=st.sampled_from([1, 1, 2]),
    n_classes=st.integers(3, 4),
    n_rows=st.integers(40, 160),
    n_features=st.integers(1, 5),
    with_nan=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_round_trip_is_exact(
    kind, task, tree_method, booster, depth, n_parallel, n_classes, n_rows, n_features, with_nan, seed
):
    rng = np.random.default_rng(seed)
    X, y = make_data(rng, task, n_rows, n_features, n_classes, with_nan)
    params = dict(
        max_depth=depth,
        tree_method=tree_method,
        booster=booster,
        num_parallel_tree=n_parallel,
        learning_rate=float(rng.choice([0.1, 0.3, 0.77])),
        reg_lambda=float(rng.choice([0.0, 1.0, 3.0])),
        subsample=0.8 if n_parallel > 1 else 1.0,
        seed=seed,
        nthread=1,
    )
    if booster == "dart":
        params.update(rate_drop=0.4, skip_drop=0.0)
    objective = OBJECTIVES[task]
    if kind == "Booster":
        train = dict(params, objective=objective, eta=params.pop("learning_rate"))
        train["lambda"] = train.pop("reg_lambda")
        if task == "multiclass":
            train["num_class"] = n_classes
        model = xgb.train(train, xgb.DMatrix(X, y), num_boost_round=3)
    else:
        cls = xgb.XGBClassifier if task in ("binary", "multiclass") else xgb.XGBRegressor
        params["n_jobs"] = params.pop("nthread")
        params["random_state"] = params.pop("seed")
        model = cls(n_estimators=3, objective=objective, **params).fit(X, y)
    before = fingerprint(model)

    ensemble = btt.from_model(model)
    assert all(tree.has_leaf_value.all() for tree in ensemble.trees)  # the configured eta is checked
    probes = probe_rows(ensemble, X, rng)
    # (1) the import predicts like the native model, and the kernels like the oracle
    assert_predicts_like(model, ensemble, probes)
    np.testing.assert_array_equal(reference_predict_raw(ensemble, probes[:25]), ensemble.predict_raw(probes[:25]))
    # (2) export of the import predicts identically, as the same class
    exported = btt.to_model(ensemble)
    assert type(exported) is type(model)
    np.testing.assert_array_equal(native_margin(exported, probes), native_margin(model, probes))
    assert_margins_equal(exported, ensemble, probes)
    # (3) after collapsing random internal nodes, the export predicts like the collapsed ensemble
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    exported = btt.to_model(collapsed)
    assert_predicts_like(exported, collapsed, probes)
    assert_predicts_like(pickle.loads(pickle.dumps(exported)), collapsed, probes)
    # ... and reads back as the same ensemble
    again = from_xgboost(exported)
    for ours, theirs in zip(collapsed.trees, again.trees):
        np.testing.assert_array_equal(ours.value, theirs.value)
        np.testing.assert_array_equal(ours.has_leaf_value, theirs.has_leaf_value)
    # (4) the user's model is untouched
    assert fingerprint(model) == before


def test_collapsed_value_is_what_xgboost_gives_that_node_as_a_leaf():
    """Grow the same first tree one level deeper: collapsing the extra level
    must give exactly the shallower model's leaves (float32(eta) * base_weight)."""
    rng = np.random.default_rng(5)
    X, y = make_data(rng, "binary", 400, 4, with_nan=True)
    for tree_method in ("exact", "hist"):
        params = {"objective": "binary:logistic", "eta": 0.37, "lambda": 2.0, "tree_method": tree_method, "nthread": 1}
        shallow = xgb.train(dict(params, max_depth=2), xgb.DMatrix(X, y), 1)
        deep = from_xgboost(xgb.train(dict(params, max_depth=3), xgb.DMatrix(X, y), 1))
        depth = deep.node_depths(0)
        tree = deep.trees[0]
        collapsed = btt.collapse(deep, {0: np.flatnonzero((depth == 2) & (tree.children_left != TREE_LEAF))})
        assert collapsed.trees[0].max_depth == 2
        np.testing.assert_array_equal(collapsed.predict_raw(X), native_margin(shallow, X))


def test_deep_trees_and_deleted_nodes():
    """Depth >= 10, and the exact method's ``prune`` updater, which leaves
    deleted nodes (split index 2**31 - 1) inside the arrays."""
    rng = np.random.default_rng(7)
    X, y = make_data(rng, "regression", 3000, 6, with_nan=True)
    model = xgb.train(
        {"max_depth": 12, "tree_method": "exact", "gamma": 2.0, "eta": 0.5, "nthread": 1}, xgb.DMatrix(X, y), 4
    )
    trees = json.loads(model.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"]
    assert sum(int(t["tree_param"]["num_deleted"]) for t in trees) > 0
    ensemble = from_xgboost(model)
    assert ensemble.max_depth >= 10
    assert ensemble.n_nodes == sum(
        int(t["tree_param"]["num_nodes"]) - int(t["tree_param"]["num_deleted"]) for t in trees
    )
    probes = probe_rows(ensemble, X, rng)
    assert_predicts_like(model, ensemble, probes)
    exported = to_xgboost(ensemble)
    np.testing.assert_array_equal(native_margin(exported, probes), native_margin(model, probes))
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    assert_predicts_like(to_xgboost(collapsed), collapsed, probes)


# ---------------------------------------------------------------- categories
def categorical_frame(rng, n):
    frame = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "c": pd.Categorical(rng.integers(0, 40, n)),
            "d": pd.Categorical(rng.choice(["x", "y", "z"], n)),
        }
    )
    frame.loc[rng.random(n) < 0.1, "c"] = np.nan
    y = ((frame["a"] + (frame["c"].cat.codes % 3 == 0) + (frame["d"] == "y")) > 0.5).astype(int)
    return frame, y


@pytest.mark.parametrize("max_cat_to_onehot", [1, 64])
def test_categorical_splits_send_listed_categories_right(max_cat_to_onehot):
    rng = np.random.default_rng(11)
    frame, y = categorical_frame(rng, 1500)
    model = xgb.XGBClassifier(
        n_estimators=6,
        max_depth=4,
        enable_categorical=True,
        tree_method="hist",
        max_cat_to_onehot=max_cat_to_onehot,
        n_jobs=1,
    ).fit(frame, y)
    before = fingerprint(model)
    ensemble = from_xgboost(model)
    assert any(tree.is_categorical.any() for tree in ensemble.trees)
    categorical = [tree for tree in ensemble.trees if tree.is_categorical.any()]
    assert all(not tree.category_left.any() for tree in categorical)
    probes = np.array(
        [
            [0, -1, 0],
            [0, 100, 1],
            [0, np.nan, 2],
            [0, 2.5, -3],
            [0, 1e9, 1],
            [np.nan, 39, 5],
            [0, -0.5, 0.99],
            [0, 31, 2],
            [0, 32, 1],
            [0, 2**24, 0],
            [0, -0.0, np.inf],
        ],
        dtype=float,
    )
    np.testing.assert_array_equal(ensemble.predict_raw(probes), native_margin(model.get_booster(), probes))
    np.testing.assert_array_equal(reference_predict_raw(ensemble, probes), ensemble.predict_raw(probes))
    assert_predicts_like(model, ensemble, frame)
    exported = to_xgboost(ensemble)
    np.testing.assert_array_equal(
        native_margin(exported.get_booster(), probes), native_margin(model.get_booster(), probes)
    )
    assert_predicts_like(exported, ensemble, frame)
    nodes = {
        index: [int(np.flatnonzero(tree.is_categorical)[0])]
        for index, tree in enumerate(ensemble.trees)
        if tree.is_categorical.any() and np.flatnonzero(tree.is_categorical)[0] != 0
    }
    collapsed = btt.collapse(ensemble, nodes or random_internal_nodes(ensemble, rng))
    exported = to_xgboost(collapsed)
    np.testing.assert_array_equal(native_margin(exported.get_booster(), probes), collapsed.predict_raw(probes))
    assert_predicts_like(exported, collapsed, frame)
    assert fingerprint(model) == before


# ----------------------------------------------------------- other kinds
def test_multi_target_regression_one_output_per_tree():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    Y = np.column_stack([X[:, 0] * 2, X[:, 1] - X[:, 2]])
    model = xgb.XGBRegressor(n_estimators=4, max_depth=3, n_jobs=1).fit(X, Y)
    ensemble = from_xgboost(model)
    assert ensemble.n_outputs == 2 and set(ensemble.tree_output.tolist()) == {0, 1}
    probes = probe_rows(ensemble, X, rng)
    assert_predicts_like(model, ensemble, probes)
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    assert_predicts_like(to_xgboost(collapsed), collapsed, probes)


@pytest.mark.parametrize("objective", ["reg:gamma", "reg:tweedie", "reg:logistic", "reg:pseudohubererror"])
def test_other_objectives(objective):
    rng = np.random.default_rng(4)
    X, y = make_data(rng, "regression", 300, 3)
    y = 1.0 / (1.0 + np.exp(-y)) if objective == "reg:logistic" else (np.abs(y) + 0.1)
    model = xgb.train({"objective": objective, "max_depth": 3, "nthread": 1}, xgb.DMatrix(X, y), 4)
    ensemble = from_xgboost(model)
    assert_predicts_like(model, ensemble, probe_rows(ensemble, X, rng))
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    assert_predicts_like(to_xgboost(collapsed), collapsed, X)


def test_survival_logitraw_and_quantile_objectives():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    times = rng.exponential(size=300) * np.exp(X[:, 0])
    cases = [
        ({"objective": "survival:cox"}, np.where(rng.random(300) < 0.8, times, -times)),
        ({"objective": "binary:logitraw"}, (X[:, 1] > 0).astype(int)),
        ({"objective": "reg:squaredlogerror"}, times),
        ({"objective": "reg:quantileerror", "quantile_alpha": np.array([0.2, 0.5, 0.8])}, X[:, 2] + times),
    ]
    for params, y in cases:
        model = xgb.train(dict(params, max_depth=3, nthread=1), xgb.DMatrix(X, y), 3)
        ensemble = from_xgboost(model)
        assert_predicts_like(model, ensemble, probe_rows(ensemble, X, rng))
        np.testing.assert_array_equal(native_margin(to_xgboost(ensemble), X), native_margin(model, X))
    assert ensemble.n_outputs == 3  # one output per quantile


@pytest.mark.parametrize("cls", [xgb.XGBRFClassifier, xgb.XGBRFRegressor])
def test_random_forest_wrappers(cls):
    rng = np.random.default_rng(17)
    X, y = make_data(rng, "binary", 300, 4, with_nan=True)
    model = cls(n_estimators=4, max_depth=4, n_jobs=1, random_state=0).fit(X, y)
    ensemble = from_xgboost(model)
    assert all(tree.has_leaf_value.all() for tree in ensemble.trees)  # eta / num_parallel_tree
    probes = probe_rows(ensemble, X, rng)
    assert_predicts_like(model, ensemble, probes)
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    exported = to_xgboost(collapsed)
    assert type(exported) is cls
    assert_predicts_like(exported, collapsed, probes)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "count:poisson"])
def test_changed_base_score_is_written_back(objective):
    rng = np.random.default_rng(18)
    X, y = make_data(rng, "binary", 200, 3)
    model = xgb.train({"objective": objective, "max_depth": 2, "nthread": 1}, xgb.DMatrix(X, y), 2)
    ensemble = from_xgboost(model)
    for shift in (-1.7, 0.123456789, 2.5):
        moved = dataclasses.replace(ensemble, base_score=ensemble.base_score + shift)
        margin = native_margin(to_xgboost(moved), X)
        if objective == "reg:squarederror":
            np.testing.assert_array_equal(margin, moved.predict_raw(X))
        else:
            np.testing.assert_allclose(margin, moved.predict_raw(X), rtol=0, atol=1e-6)


def test_early_stopping_imports_what_predict_uses():
    rng = np.random.default_rng(8)
    X, y = make_data(rng, "multiclass", 600, 4, n_classes=3)
    model = xgb.XGBClassifier(n_estimators=60, max_depth=4, learning_rate=0.9, early_stopping_rounds=2, n_jobs=1)
    model.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])], verbose=False)
    n_rounds = model.get_booster().num_boosted_rounds()
    assert model.best_iteration + 1 < n_rounds
    ensemble = from_xgboost(model)
    assert ensemble.n_trees == 3 * (model.best_iteration + 1)
    assert_predicts_like(model, ensemble, X)
    exported = to_xgboost(ensemble)
    assert exported.best_iteration == model.best_iteration
    assert_predicts_like(exported, ensemble, X)
    everything = from_xgboost(model, iteration_range=(0, 0))
    assert everything.n_trees == 3 * n_rounds
    np.testing.assert_array_equal(everything.predict_raw(X), native_margin(model.get_booster(), X))
    assert from_xgboost(model.get_booster()).n_trees == 3 * n_rounds  # a Booster predicts with every tree
    middle = from_xgboost(model, iteration_range=(1, 3))
    np.testing.assert_array_equal(
        middle.predict_raw(X),
        model.get_booster().predict(xgb.DMatrix(X), output_margin=True, iteration_range=(1, 3)),
    )


def test_model_loaded_from_a_file_needs_its_learning_rate(tmp_path):
    rng = np.random.default_rng(9)
    X, y = make_data(rng, "binary", 300, 4)
    trained = xgb.train(
        {"objective": "binary:logistic", "max_depth": 3, "eta": 0.1, "nthread": 1}, xgb.DMatrix(X, y), 3
    )
    trained.save_model(tmp_path / "model.json")
    loaded = xgb.Booster(model_file=tmp_path / "model.json")  # its configuration says eta=0.3
    ensemble = from_xgboost(loaded)
    assert not any(tree.has_leaf_value.all() for tree in ensemble.trees)
    assert_predicts_like(loaded, ensemble, X)  # prediction does not need eta
    np.testing.assert_array_equal(native_margin(to_xgboost(ensemble), X), native_margin(loaded, X))
    with pytest.raises(ConversionError, match="learning_rate=<eta used in training>"):
        btt.collapse(ensemble, {0: [0]})
    fixed = from_xgboost(loaded, learning_rate=0.1)
    reference = from_xgboost(trained)
    for ours, theirs in zip(fixed.trees, reference.trees):
        np.testing.assert_array_equal(ours.value, theirs.value)
        assert ours.has_leaf_value.all()


def test_learning_rate_schedule_marks_the_odd_trees():
    rng = np.random.default_rng(10)
    X, y = make_data(rng, "regression", 300, 4)
    schedule = xgb.callback.LearningRateScheduler(lambda i: 0.5 if i < 2 else 0.05)
    model = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, y), 6, callbacks=[schedule])
    ensemble = from_xgboost(model)  # the configuration keeps the last eta, 0.05
    trusted = [bool(tree.has_leaf_value.all()) for tree in ensemble.trees]
    assert not all(trusted) and trusted[-1]
    assert_predicts_like(model, ensemble, X)


def test_absolute_error_leaves_cannot_be_collapsed():
    rng = np.random.default_rng(12)
    X, y = make_data(rng, "regression", 300, 3)
    model = xgb.XGBRegressor(objective="reg:absoluteerror", n_estimators=3, max_depth=3, n_jobs=1).fit(X, y)
    ensemble = from_xgboost(model)
    assert_predicts_like(model, ensemble, probe_rows(ensemble, X, rng))
    with pytest.raises(ConversionError, match="re-fits leaf values"):
        btt.collapse(ensemble, {0: [0]})


# ----------------------------------------------------------- the documents
def test_exported_document_keeps_xgboost_invariants():
    rng = np.random.default_rng(13)
    frame, y = categorical_frame(rng, 800)
    model = xgb.XGBClassifier(n_estimators=4, max_depth=5, enable_categorical=True, n_jobs=1).fit(frame, y)
    ensemble = from_xgboost(model)
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    document = json.loads(to_xgboost(collapsed).get_booster().save_raw("json"))
    trees = document["learner"]["gradient_booster"]["model"]["trees"]
    assert document["learner"]["gradient_booster"]["model"]["gbtree_model_param"]["num_trees"] == str(len(trees))
    assert (
        document["learner"]["learner_model_param"]
        == json.loads(model.get_booster().save_raw("json"))["learner"]["learner_model_param"]
    )
    for tree, ours in zip(trees, collapsed.trees):
        left, right = np.array(tree["left_children"]), np.array(tree["right_children"])
        internal = np.flatnonzero(left != -1)
        assert int(tree["tree_param"]["num_nodes"]) == len(left) == ours.n_nodes
        np.testing.assert_array_equal(right[internal], left[internal] + 1)  # siblings are consecutive
        parents = np.array(tree["parents"])
        assert parents[0] == 2**31 - 1
        np.testing.assert_array_equal(parents[left[internal]], internal)
        hessian = np.array(tree["sum_hessian"])
        np.testing.assert_allclose(hessian[internal], hessian[left[internal]] + hessian[right[internal]], rtol=1e-5)
        assert len(tree["categories_nodes"]) == len(tree["categories_sizes"]) == len(tree["categories_segments"])
        assert sum(tree["categories_sizes"]) == len(tree["categories"])
        assert set(tree["categories_nodes"]) == set(np.flatnonzero(np.array(tree["split_type"]) == 1).tolist())


def test_binary_document_round_trips_byte_for_byte():
    rng = np.random.default_rng(14)
    frame, y = categorical_frame(rng, 500)
    model = xgb.XGBClassifier(n_estimators=3, max_depth=3, enable_categorical=True, booster="dart", n_jobs=1)
    booster = model.fit(frame, y).get_booster()
    raw = booster.save_raw("ubj")
    again = xgb.Booster()
    again.load_model(ubjson.dumps(ubjson.loads(raw)))
    assert bytes(again.save_raw("ubj")) == bytes(raw)
    with pytest.raises(ConversionError, match="cannot read the XGBoost model"):
        ubjson.loads(bytes(raw)[: len(raw) // 2])


def test_wrapper_export_is_a_working_copy(tmp_path):
    rng = np.random.default_rng(15)
    X, y = make_data(rng, "binary", 200, 3)
    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    model = xgb.XGBClassifier(n_estimators=3, max_depth=3, n_jobs=1).fit(frame, y)
    ensemble = from_xgboost(model)
    assert list(ensemble.feature_names_in_) == ["u", "v", "w"]
    exported = to_xgboost(collapse_first_split(ensemble))
    assert exported is not model and exported.get_booster() is not model.get_booster()
    assert exported.get_params() == model.get_params()
    exported.save_model(tmp_path / "exported.json")
    reloaded = xgb.XGBClassifier()
    reloaded.load_model(tmp_path / "exported.json")
    np.testing.assert_array_equal(reloaded.predict_proba(frame), exported.predict_proba(frame))
    assert exported.predict_proba(frame).shape == (200, 2)
    # SHAP values read the covers: they still add up to the margin
    contributions = exported.get_booster().predict(xgb.DMatrix(frame), pred_contribs=True)
    np.testing.assert_allclose(contributions.sum(axis=1), exported.predict(frame, output_margin=True), atol=1e-5)
    # and training can go on from the exported model
    continued = xgb.XGBClassifier(n_estimators=2, max_depth=2, n_jobs=1).fit(frame, y, xgb_model=exported.get_booster())
    assert continued.get_booster().num_boosted_rounds() == 5


def collapse_first_split(ensemble):
    return btt.collapse(ensemble, {0: [int(np.flatnonzero(ensemble.trees[0].children_left != TREE_LEAF)[0])]})


# ----------------------------------------------------------------- bad input
def test_bad_input_is_refused_clearly():
    rng = np.random.default_rng(16)
    X, y = make_data(rng, "binary", 120, 3)
    with pytest.raises(NotFittedError, match="not fitted"):
        from_xgboost(xgb.XGBClassifier())
    with pytest.raises(NotFittedError, match="no model yet"):
        from_xgboost(xgb.Booster())
    with pytest.raises(NotFittedError, match="no trees yet"):
        from_xgboost(xgb.train({"nthread": 1}, xgb.DMatrix(X, y), 0))
    with pytest.raises(UnsupportedModelError, match="gblinear"):
        from_xgboost(xgb.train({"booster": "gblinear"}, xgb.DMatrix(X, y), 2))
    with pytest.raises(UnsupportedModelError, match="multi_output_tree"):
        Y = np.column_stack([y, 1 - y]).astype(float)
        from_xgboost(
            xgb.train(
                {"multi_strategy": "multi_output_tree", "tree_method": "hist", "max_depth": 2}, xgb.DMatrix(X, Y), 2
            )
        )
    with pytest.raises(UnsupportedModelError, match="binary:hinge"):
        from_xgboost(xgb.train({"objective": "binary:hinge"}, xgb.DMatrix(X, y), 2))
    with pytest.raises(UnsupportedModelError, match="missing=np.nan"):
        from_xgboost(xgb.XGBClassifier(n_estimators=2, missing=0.0).fit(X, y))
    with pytest.raises(UnsupportedModelError, match="XGBRanker"):
        from_xgboost(xgb.XGBRanker(n_estimators=2).fit(X, y, qid=np.repeat(np.arange(12), 10)))
    with pytest.raises(UnsupportedModelError, match="list"):
        from_xgboost([1, 2])

    model = xgb.XGBClassifier(n_estimators=2, max_depth=2, n_jobs=1).fit(pd.DataFrame(X, columns=list("abc")), y)
    ensemble = btt.from_model(model)
    with pytest.raises(ConversionError, match="outside the model's 2 iterations"):
        from_xgboost(model, iteration_range=(0, 5))
    with pytest.raises(DataError, match="X has 2 features, but the model was trained on 3"):
        ensemble.predict(X[:, :2])
    with pytest.raises(DataError, match="another order"):
        ensemble.predict(pd.DataFrame(X, columns=list("abc"))[["b", "a", "c"]])
    leaf = int(np.flatnonzero(ensemble.trees[0].children_left == TREE_LEAF)[0])
    with pytest.raises(NodeError, match="already a leaf"):
        btt.collapse(ensemble, {0: [leaf]})
    with pytest.raises(NodeError, match="does not exist"):
        btt.collapse(ensemble, {0: [10_000]})
    with pytest.raises(NodeError, match="tree index 7"):
        btt.collapse(ensemble, {7: [0]})

    with pytest.raises(ConversionError, match="split_rule='lt'"):
        to_xgboost(dataclasses.replace(ensemble, split_rule="le"))
    tree = ensemble.trees[0]
    mixed = tree._replace(missing_type=np.where(tree.children_left != TREE_LEAF, 2, 0).astype(np.uint8))
    with pytest.raises(ConversionError, match="only treats NaN as missing"):
        to_xgboost(ensemble.replace_trees([mixed, *ensemble.trees[1:]]))
    from sklearn.tree import DecisionTreeClassifier

    foreign = btt.from_model(DecisionTreeClassifier(max_depth=2).fit(X, y))
    with pytest.raises(ConversionError, match="needs an ensemble imported from XGBoost"):
        to_xgboost(foreign)


def test_a_logitraw_classifier_wrapper_is_refused_and_its_booster_reads_margins():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.3 * X[:, 2] > 0.2).astype(int)
    model = xgb.XGBClassifier(n_estimators=4, max_depth=2, objective="binary:logitraw").fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"objective 'binary:logitraw'.*model.get_booster\(\)"):
        from_xgboost(model)
    with pytest.raises(UnsupportedModelError, match=r"binary:logitraw"):
        btt.from_model(model)
    ensemble = from_xgboost(model.get_booster())
    assert ensemble.task == "regression"
    np.testing.assert_array_equal(ensemble.predict(X), model.get_booster().predict(xgb.DMatrix(X)))


def test_an_edited_dart_model_exports_like_its_copy_through_booster_predict():
    # the exported model predicts like the edited copy bit for bit through Booster.predict(DMatrix);
    # the wrapper's predict goes through inplace_predict, which XGBoost computes differently for DART
    # ((float32(base + tree) - base) * weight per tree, see the module docstring), within its bound
    rng = np.random.default_rng(33)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=600) + 5.0
    model = xgb.XGBRegressor(booster="dart", n_estimators=12, max_depth=4, rate_drop=0.3, random_state=0).fit(X, y)
    ensemble = from_xgboost(model)
    edited = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    exported = to_xgboost(edited)
    through_dmatrix = exported.get_booster().predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_array_equal(through_dmatrix, edited.predict_raw(X)[:, 0])
    bound = 2 * edited.n_trees * 2.0**-24 * (abs(float(edited.base_score[0])) + 12 * np.abs(y).max())
    assert np.abs(exported.predict(X) - edited.predict(X)).max() <= bound
