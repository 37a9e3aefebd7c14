"""scikit-learn import/export: the exactness contract, on ordinary data and on
probe rows taken from the model's own thresholds, NaN, zeros and infinities."""

import os
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sklearn import ensemble, tree

import bandit_tree_tools as btt
from bandit_tree_tools.interop.sklearn import from_sklearn, to_sklearn
from bandit_tree_tools.tree import TREE_LEAF
from tests.interop.synthetic import make_data, random_internal_nodes
from tests.oracles.tree import reference_predict_raw


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """HistGradientBoosting's OpenMP threads spin-wait on a shared machine;
    one thread keeps these small fits fast (results do not depend on it)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


TREES = {
    "DecisionTree": (tree.DecisionTreeClassifier, tree.DecisionTreeRegressor),
    "ExtraTree": (tree.ExtraTreeClassifier, tree.ExtraTreeRegressor),
    "RandomForest": (ensemble.RandomForestClassifier, ensemble.RandomForestRegressor),
    "ExtraTrees": (ensemble.ExtraTreesClassifier, ensemble.ExtraTreesRegressor),
    "GradientBoosting": (ensemble.GradientBoostingClassifier, ensemble.GradientBoostingRegressor),
    "HistGradientBoosting": (ensemble.HistGradientBoostingClassifier, ensemble.HistGradientBoostingRegressor),
}
N_EXAMPLES = int(os.environ.get("BTT_EXAMPLES", 40))  # raise it locally for a longer search
ACCEPTS_NAN = {"DecisionTree", "ExtraTree", "RandomForest", "ExtraTrees", "HistGradientBoosting"}
ACCEPTS_INF = {"HistGradientBoosting"}
GB_LOSSES = {
    "binary": ["log_loss", "exponential"],
    "multiclass": ["log_loss"],
    "regression": ["squared_error", "absolute_error", "huber", "quantile"],
}
HGB_LOSSES = {
    "binary": ["log_loss"],
    "multiclass": ["log_loss"],
    "regression": ["squared_error", "absolute_error", "poisson", "gamma", "quantile"],
}


def make_model(kind, task, depth, seed, loss):
    cls = TREES[kind][task == "regression"]
    if kind in ("DecisionTree", "ExtraTree"):
        return cls(max_depth=depth, random_state=seed)
    if kind in ("RandomForest", "ExtraTrees"):
        return cls(n_estimators=4, max_depth=depth, random_state=seed)
    if kind == "GradientBoosting":
        return cls(n_estimators=4, max_depth=depth, loss=loss, random_state=seed)
    extra = {"quantile": 0.7} if loss == "quantile" else {}
    return cls(max_iter=4, max_depth=depth + 1, loss=loss, random_state=seed, **extra)


def probe_rows(ensemble, X, rng, kind):
    """Rows sitting exactly on the model's thresholds (and one float step either
    side), plus zeros, NaN and infinities where the native model accepts them."""
    base = np.nan_to_num(X[rng.integers(0, len(X), size=1)], nan=0.0)
    rows = [np.zeros_like(base)]
    step = np.float32 if ensemble.input_dtype == "float32" else np.float64
    for t in ensemble.trees[:3]:
        internal = np.flatnonzero((t.children_left != TREE_LEAF) & (t.is_categorical == 0))
        for node in internal[:6]:
            threshold = step(t.threshold[node])
            for value in (threshold, np.nextafter(threshold, step(np.inf)), np.nextafter(threshold, step(-np.inf))):
                if not np.isfinite(value) and kind not in ACCEPTS_INF:
                    continue  # scikit-learn writes +inf thresholds for "only missing values go right"
                row = base.copy()
                row[0, t.feature[node]] = value
                rows.append(row)
    if kind in ACCEPTS_NAN:
        rows += [np.full_like(base, np.nan), np.where(np.arange(base.shape[1]) % 2 == 0, np.nan, base)]
    if kind in ACCEPTS_INF:
        rows += [np.full_like(base, np.inf), np.full_like(base, -np.inf)]
    return np.vstack(rows + [X])


def assert_predicts_like(native, ensemble, X):
    """Identical labels and bitwise-equal probabilities / predictions / raw scores."""
    if ensemble.task == "classification":
        np.testing.assert_array_equal(native.predict(X), ensemble.predict(X))
        np.testing.assert_array_equal(native.predict_proba(X), ensemble.predict_proba(X))
        if hasattr(native, "decision_function"):
            raw = ensemble.predict_raw(X)
            np.testing.assert_array_equal(native.decision_function(X), raw[:, 0] if raw.shape[1] == 1 else raw)
    else:
        np.testing.assert_array_equal(native.predict(X), ensemble.predict(X))


@pytest.mark.filterwarnings("error::UserWarning")
@settings(max_examples=N_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(TREES)),
    task=st.sampled_from(["binary", "multiclass", "regression"]),
    depth=st.integers(1, 5),
    n_rows=st.integers(30, 120),
    n_features=st.integers(1, 5),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
    loss_pick=st.integers(0, 4),
)
# raw scores of exactly 0, where GradientBoosting's label is the positive class
@example(kind="GradientBoosting", task="binary", depth=2, n_rows=30, n_features=1, weighted=False, seed=3, loss_pick=0)
def test_round_trip_is_exact(kind, task, depth, n_rows, n_features, weighted, seed, loss_pick):
    rng = np.random.default_rng(seed)
    n_classes = {"binary": 2, "multiclass": 3, "regression": 0}[task]
    X, y = make_data(
        rng, task, n_rows, n_features, n_classes, with_nan=kind in ACCEPTS_NAN and seed % 2 == 0, string_labels=True
    )
    losses = {"GradientBoosting": GB_LOSSES, "HistGradientBoosting": HGB_LOSSES}.get(kind)
    loss = losses[task][loss_pick % len(losses[task])] if losses else None
    if loss in ("poisson", "gamma"):
        y = np.abs(y) + 0.1
    weight = rng.uniform(0.2, 3.0, size=n_rows) if weighted else None
    model = make_model(kind, task, depth, seed, loss).fit(X, y, sample_weight=weight)
    before = pickle.dumps(model)

    ensemble = btt.from_model(model, X=X, y=y, sample_weight=weight)  # X, y: GradientBoosting recomputes
    probes = probe_rows(ensemble, X, rng, kind)
    # (1) the import predicts like the native model, and the kernels like the oracle
    assert_predicts_like(model, ensemble, probes)
    np.testing.assert_array_equal(reference_predict_raw(ensemble, probes[:20]), ensemble.predict_raw(probes[:20]))
    # (2) export of the import predicts identically, as the same class
    exported = btt.to_model(ensemble)
    assert type(exported) is type(model)
    assert_predicts_like(exported, ensemble, probes)
    # (3) after collapsing random internal nodes, the export predicts like the collapsed ensemble
    collapsed = btt.collapse(ensemble, random_internal_nodes(ensemble, rng))
    assert collapsed.n_nodes <= ensemble.n_nodes
    exported = btt.to_model(collapsed)
    assert_predicts_like(exported, collapsed, probes)
    assert_predicts_like(pickle.loads(pickle.dumps(exported)), collapsed, probes)
    # (4) the user's model is untouched
    assert pickle.dumps(model) == before


def test_import_copies_instead_of_aliasing():
    X, y = make_data(np.random.default_rng(0), "binary", 60, 3, 2, with_nan=False)
    model = tree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    ensemble = from_sklearn(model)
    assert not np.shares_memory(ensemble.trees[0].value, model.tree_.value)
    assert ensemble.source.payload["native"].template is not model
    exported = to_sklearn(ensemble)
    assert exported is not model and exported.tree_ is not model.tree_
    exported.tree_.value[:] = 0.0  # writing into the export leaves the model and the ensemble alone
    assert model.tree_.value.max() > 0 and ensemble.trees[0].value.max() > 0


def test_tree_fields_match_the_model():
    rng = np.random.default_rng(1)
    X, y = make_data(rng, "multiclass", 200, 4, 3, with_nan=True, string_labels=True)
    model = ensemble.RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0)
    model.fit(X, y, sample_weight=rng.uniform(0.5, 2.0, size=200))
    imported = from_sklearn(model)
    assert (imported.split_rule, imported.input_dtype, imported.aggregation) == ("le", "float32", "mean")
    for ours, estimator in zip(imported.trees, model.estimators_):
        np.testing.assert_array_equal(ours.children_left, estimator.tree_.children_left)
        np.testing.assert_array_equal(
            ours.threshold[ours.children_left != TREE_LEAF], estimator.tree_.threshold[ours.children_left != TREE_LEAF]
        )
        np.testing.assert_array_equal(ours.value, estimator.tree_.value[:, 0, :])
        np.testing.assert_array_equal(ours.weighted_n_node_samples, estimator.tree_.weighted_n_node_samples)
        np.testing.assert_array_equal(ours.missing_go_to_left, estimator.tree_.missing_go_to_left)
        assert ours.has_leaf_value.all()


# ------------------------------------------------------------------ GradientBoosting
def _binary_newton_step(y, raw, weight):
    """Friedman's one-step Newton value of a node for the binomial loss."""
    probability = 1.0 / (1.0 + np.exp(-raw))
    return np.sum(weight * (y - probability)) / np.sum(weight * probability * (1.0 - probability))


def test_gradient_boosting_internal_values_are_newton_steps_of_their_rows():
    rng = np.random.default_rng(3)
    X, y = make_data(rng, "binary", 150, 3, 2, with_nan=False)
    weight = rng.uniform(0.5, 2.0, size=150)
    model = ensemble.GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, y, sample_weight=weight)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the training data must reproduce the stored leaves
        imported = from_sklearn(model, X=X, y=y, sample_weight=weight)
    first = imported.trees[0]
    assert first.has_leaf_value.all()
    raw = np.full(150, imported.base_score[0])
    paths = model.estimators_[0, 0].decision_path(X.astype(np.float32)).toarray().astype(bool)
    for node in range(first.n_nodes):
        rows = paths[:, node]
        expected = _binary_newton_step(y[rows], raw[rows], weight[rows])
        assert first.value[node, 0] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_gradient_boosting_without_data_marks_internal_values_unknown():
    X, y = make_data(np.random.default_rng(4), "binary", 80, 3, 2, with_nan=False)
    model = ensemble.GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, y)
    imported = from_sklearn(model)
    internal = imported.trees[0].children_left != TREE_LEAF
    assert not imported.trees[0].has_leaf_value[internal].any()
    with pytest.raises(btt.ConversionError, match=r"from_sklearn\(model, X=X_train, y=y_train"):
        btt.collapse(imported, {0: [0]})
    regressor = ensemble.GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X, y.astype(float))
    assert from_sklearn(regressor).trees[0].has_leaf_value.all()  # squared error: stored values are leaf values


def test_gradient_boosting_with_other_data_is_refused():
    X, y = make_data(np.random.default_rng(5), "binary", 100, 3, 2, with_nan=False)
    model = ensemble.GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, y)
    with pytest.raises(btt.ConversionError, match="do not look like the training data"):
        from_sklearn(model, X=X[:50], y=1 - y[:50])


def test_gradient_boosting_recompute_refusals():
    X, y = make_data(np.random.default_rng(6), "binary", 100, 3, 2, with_nan=False)
    sub = ensemble.GradientBoostingClassifier(n_estimators=2, subsample=0.5, random_state=0).fit(X, y)
    with pytest.raises(btt.ConversionError, match="subsample < 1"):
        from_sklearn(sub, X=X, y=y)
    model = ensemble.GradientBoostingClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(btt.ConversionError, match="without y"):
        from_sklearn(model, X=X)
    with pytest.raises(btt.ConversionError, match=r"not among the model's classes \[0, 1\]$"):
        from_sklearn(model, X=X, y=y + 5)
    with pytest.raises(btt.ConversionError, match="sample_weight must be numbers"):  # float()'s ValueError before
        from_sklearn(model, X=X, y=y, sample_weight=np.full(len(y), "a"))


def test_gradient_boosting_custom_init_is_refused():
    from sklearn.linear_model import LinearRegression

    X, y = make_data(np.random.default_rng(7), "regression", 60, 3, 0, with_nan=False)
    model = ensemble.GradientBoostingRegressor(n_estimators=2, init=LinearRegression()).fit(X, y)
    with pytest.raises(btt.UnsupportedModelError, match="init=LinearRegression"):
        from_sklearn(model)
    zero = ensemble.GradientBoostingRegressor(n_estimators=2, init="zero").fit(X, y)
    imported = from_sklearn(zero)
    assert imported.base_score.tolist() == [0.0] and imported.tree_scale[0] == zero.learning_rate
    assert_predicts_like(zero, imported, X)


def test_gradient_boosting_routes_nan_as_its_own_trees_do():
    # the estimator's predict refuses NaN; its trees route it (to the child that held more training
    # rows), and the ensemble answers as they do, bit for bit, summed stage after stage as the estimator sums
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    model = ensemble.GradientBoostingClassifier(n_estimators=20, random_state=0).fit(
        X, (X[:, 0] + X[:, 1] > 0).astype(int)
    )
    X[rng.random(X.shape) < 0.3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.predict(X)
    raw = model._raw_predict_init(X)[:, 0].copy()
    for stage in model.estimators_:
        raw += model.learning_rate * stage[0].predict(X.astype(np.float32))
    np.testing.assert_array_equal(btt.from_model(model).predict_raw(X)[:, 0], raw)
