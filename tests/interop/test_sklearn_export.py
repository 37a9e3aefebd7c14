"""scikit-learn export of ensembles built without a scikit-learn object,
HistGradientBoosting categorical splits, and refusals of bad input."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn import ensemble, tree
from sklearn.utils.validation import check_is_fitted

import bandit_tree_tools as btt
from bandit_tree_tools.interop import _sklearn_trees as sklearn_trees
from bandit_tree_tools.interop.sklearn import from_sklearn, to_sklearn
from bandit_tree_tools.tree import TREE_LEAF, Ensemble, Source, make_tree
from tests.oracles.tree import reference_predict_raw


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """HistGradientBoosting's OpenMP threads spin-wait on a shared machine;
    one thread keeps these small fits fast (results do not depend on it)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


GRID = np.linspace(-2.0, 2.0, 17)  # thresholds and probe values exact in float32


def random_tree(rng, n_features, n_classes, max_depth):
    """A random tree in the common format with class fractions (or means) and
    counts that add up, numbered top-down like scikit-learn's builders."""
    left, right, feature, threshold, counts, depth = [], [], [], [], [], []

    def grow(n_rows, level):
        node = len(left)
        left.append(TREE_LEAF), right.append(TREE_LEAF), feature.append(-2), threshold.append(-2.0)
        counts.append(n_rows), depth.append(level)
        if level < max_depth and n_rows >= 2 and rng.random() < 0.8:
            feature[node] = int(rng.integers(n_features))
            threshold[node] = float(rng.choice(GRID))
            n_left = int(rng.integers(1, n_rows))
            left[node] = grow(n_left, level + 1)
            right[node] = grow(n_rows - n_left, level + 1)
        return node

    grow(int(rng.integers(20, 60)), 0)
    n = len(left)
    if n_classes:
        raw = rng.integers(0, 5, size=(n, n_classes)).astype(float) + np.eye(n_classes)[rng.integers(n_classes, size=n)]
        value = raw / raw.sum(axis=1, keepdims=True)
    else:
        value = rng.normal(size=(n, 1))
    return make_tree(
        left,
        right,
        feature,
        threshold,
        value,
        n_node_samples=counts,
        weighted_n_node_samples=np.array(counts, dtype=float),
        missing_go_to_left=rng.integers(0, 2, n),
    )


def hand_built(
    estimator, rng, *, n_trees=3, n_features=3, n_classes=3, input_dtype="float32", payload=None, names=None
):
    classifier = estimator.endswith("Classifier")
    forest = estimator.startswith(("RandomForest", "ExtraTrees"))
    n_trees = n_trees if forest else 1
    trees = [random_tree(rng, n_features, n_classes if classifier else 0, 4) for _ in range(n_trees)]
    return Ensemble(
        trees=trees,
        task="classification" if classifier else "regression",
        n_features_in_=n_features,
        n_outputs=n_classes if classifier else 1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="mean",
        base_score=0.0,
        link="identity",
        source=Source("sklearn", estimator, sklearn.__version__, payload if payload is not None else {}),
        classes_=np.array(["low", "mid", "high"][:n_classes]) if classifier else None,
        feature_names_in_=names,
        input_dtype=input_dtype,
    )


def grid_rows(rng, n_features, n_rows=200):
    X = rng.choice(GRID, size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


ESTIMATORS = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
]


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_export_without_template_builds_a_fitted_estimator(estimator):
    rng = np.random.default_rng(len(estimator))
    params = {"max_depth": 4, "min_samples_leaf": 2, "n_estimators": 3, "budget": 7}  # budget: not a parameter
    ensemble_ = hand_built(estimator, rng, payload={"params": params})
    model = btt.to_model(ensemble_)
    assert type(model).__name__ == estimator
    check_is_fitted(model)
    assert model.max_depth == 4 and model.min_samples_leaf == 2
    assert model.n_features_in_ == 3 and model.n_outputs_ == 1
    X = grid_rows(rng, 3)
    if estimator.endswith("Classifier"):
        np.testing.assert_array_equal(model.classes_, ensemble_.classes_)
        assert model.n_classes_ == 3
        np.testing.assert_array_equal(model.predict_proba(X), ensemble_.predict_proba(X))
    np.testing.assert_array_equal(model.predict(X), ensemble_.predict(X))
    assert np.all(np.isfinite(model.feature_importances_))
    if hasattr(model, "estimators_"):
        assert len(model.estimators_) == 3 and model.n_estimators == 3
        kind = "ExtraTree" if estimator.startswith("ExtraTrees") else "DecisionTree"
        task = "Classifier" if estimator.endswith("Classifier") else "Regressor"
        assert {type(e).__name__ for e in model.estimators_} == {kind + task}
        assert all(e.max_depth == 4 for e in model.estimators_)
    else:
        np.testing.assert_array_equal(model.apply(X.astype(np.float32)), ensemble_.apply(X)[:, 0])
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), ensemble_.predict(X))
    # a round trip through from_sklearn gives the same trees back
    back = from_sklearn(model)
    for ours, theirs in zip(ensemble_.trees, back.trees):
        np.testing.assert_array_equal(ours.value, theirs.value)
        np.testing.assert_array_equal(ours.threshold, theirs.threshold)
        np.testing.assert_array_equal(ours.n_node_samples, theirs.n_node_samples)


def test_export_without_template_keeps_feature_names_and_seeds():
    rng = np.random.default_rng(11)
    names = np.array(["alpha", "beta", "gamma"], dtype=object)
    ensemble_ = hand_built("RandomForestClassifier", rng, names=names, payload={"random_states": [5, 6, 7]})
    model = to_sklearn(ensemble_)
    np.testing.assert_array_equal(model.feature_names_in_, names)
    assert [e.random_state for e in model.estimators_] == [5, 6, 7]
    frame = pd.DataFrame(grid_rows(rng, 3), columns=names)
    np.testing.assert_array_equal(model.predict_proba(frame), ensemble_.predict_proba(frame))
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame[["beta", "alpha", "gamma"]])


def test_export_of_float64_ensemble_warns_about_float32_cast():
    ensemble_ = hand_built("DecisionTreeRegressor", np.random.default_rng(2), input_dtype="float64")
    with pytest.warns(UserWarning, match="casts X to float32"):
        model = to_sklearn(ensemble_)
    X = grid_rows(np.random.default_rng(3), 3)  # float32-exact values: both routes agree
    np.testing.assert_array_equal(model.predict(X), ensemble_.predict(X))


def test_export_refuses_what_sklearn_trees_cannot_express():
    rng = np.random.default_rng(4)
    base = hand_built("RandomForestClassifier", rng)
    categorical = base.trees[0]._replace(
        is_categorical=np.where(base.trees[0].children_left != TREE_LEAF, 1, 0).astype(np.uint8),
        category_left=np.ones((base.trees[0].n_nodes, 1), dtype=np.uint32),
        category_right=np.zeros((base.trees[0].n_nodes, 1), dtype=np.uint32),
    )
    with pytest.raises(btt.ConversionError, match="categorical splits"):
        to_sklearn(base.replace_trees([categorical] + list(base.trees[1:])))
    from dataclasses import replace

    with pytest.raises(btt.ConversionError, match="link is 'softmax'"):
        to_sklearn(replace(base, link="softmax"))
    with pytest.raises(btt.ConversionError, match="aggregation must be 'mean'"):
        to_sklearn(replace(base, aggregation="sum"))
    with pytest.raises(btt.ConversionError, match="holds one tree"):
        to_sklearn(replace(base, source=Source("sklearn", "DecisionTreeClassifier")))
    with pytest.raises(btt.UnsupportedModelError, match="'LinearSVC'"):
        to_sklearn(replace(base, source=Source("sklearn", "LinearSVC")))
    with pytest.raises(btt.ConversionError, match="imported with from_sklearn"):
        to_sklearn(replace(base, source=Source("sklearn", "GradientBoostingClassifier")))


def test_export_refuses_unknown_node_fields(monkeypatch):
    model = tree.DecisionTreeRegressor(max_depth=2).fit(np.arange(20.0).reshape(-1, 1), np.arange(20.0))
    imported = from_sklearn(model)
    monkeypatch.setattr(sklearn_trees, "KNOWN_NODE_FIELDS", sklearn_trees.KNOWN_NODE_FIELDS - {"impurity"})
    with pytest.raises(btt.ConversionError, match=r"fields \[.impurity.\] that bandit_tree_tools does not know"):
        to_sklearn(imported)
    with pytest.raises(btt.ConversionError, match=r"fields \[.impurity.\] that bandit_tree_tools does not know"):
        from_sklearn(model)


# --------------------------------------------------------------- HistGradientBoosting
def test_hist_gradient_boosting_numeric_categories():
    rng = np.random.default_rng(5)
    n = 400
    X = np.column_stack(
        [
            rng.normal(size=n),
            rng.choice([0, 2, 5, 7, 11], size=n).astype(float),
            rng.integers(0, 4, size=n).astype(float),
        ]
    )
    X[rng.random(n) < 0.1, 1] = np.nan
    y = ((X[:, 1] == 5) | (X[:, 2] == 2) | (X[:, 0] > 0.8)).astype(int)
    model = ensemble.HistGradientBoostingClassifier(max_iter=8, categorical_features=[1, 2], random_state=0).fit(X, y)
    before = pickle.dumps(model)
    imported = from_sklearn(model)
    assert any(t.is_categorical.any() for t in imported.trees)
    # categories by value; unseen (3, 255), negative and NaN categories go to the missing side
    probes = np.array(
        [[0.0, c, d] for c in (0, 2, 3, 5, 7, 11, 255, -1, -0.0, np.nan) for d in (0, 1, 2, 3, 9, np.nan)]
    )
    rows = np.vstack([X, probes])
    np.testing.assert_array_equal(model.predict_proba(rows), imported.predict_proba(rows))
    np.testing.assert_array_equal(reference_predict_raw(imported, probes), imported.predict_raw(probes))
    exported = to_sklearn(imported)
    np.testing.assert_array_equal(exported.predict_proba(rows), model.predict_proba(rows))
    categorical_tree = next(i for i, t in enumerate(imported.trees) if t.is_categorical[0])
    collapsed = btt.collapse(
        imported,
        {categorical_tree: [int(imported.trees[categorical_tree].children_left[0])]}
        if imported.trees[categorical_tree].children_left[1] != TREE_LEAF
        else {0: [0]},
    )
    np.testing.assert_array_equal(to_sklearn(collapsed).predict_proba(rows), collapsed.predict_proba(rows))
    assert pickle.dumps(model) == before


def test_hist_gradient_boosting_pandas_categories_map_to_codes_and_columns():
    rng = np.random.default_rng(6)
    n = 300
    letters = np.array(["v", "w", "x", "y", "z"])
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "colour": pd.Categorical(letters[rng.integers(0, 5, size=n)], categories=letters),
            "weight": rng.normal(size=n),
        }
    )
    target = frame["size"] * 2 + frame["colour"].isin(["w", "z"]) * 3.0 + rng.normal(size=n) * 0.1
    model = ensemble.HistGradientBoostingRegressor(max_iter=6, random_state=0).fit(frame, target)
    imported = from_sklearn(model)
    used = np.concatenate([t.feature[t.children_left != TREE_LEAF] for t in imported.trees])
    assert set(used) <= {0, 1, 2} and 1 in used  # the user's column order, not the encoder's
    assert all(t.feature[node] == 1 for t in imported.trees for node in np.flatnonzero(t.is_categorical))
    assert imported.source.payload["native"].category_spaces[1][0] == "codes"
    probe = frame.iloc[:12].copy()
    probe.loc[probe.index[:3], "colour"] = np.nan
    np.testing.assert_array_equal(model.predict(probe), imported.predict(probe))
    np.testing.assert_array_equal(model.predict(frame), imported.predict(frame))
    np.testing.assert_array_equal(to_sklearn(imported).predict(frame), model.predict(frame))
    with pytest.raises(btt.DataError, match="another order"):
        imported.predict(frame[["colour", "size", "weight"]])


def test_hist_gradient_boosting_internal_values_include_learning_rate():
    X = np.random.default_rng(7).normal(size=(200, 2))
    y = X[:, 0] * 3
    model = ensemble.HistGradientBoostingRegressor(max_iter=3, learning_rate=0.3, random_state=0).fit(X, y)
    imported = from_sklearn(model)
    nodes = model._predictors[1][0].nodes
    internal = ~nodes["is_leaf"].astype(bool)
    np.testing.assert_array_equal(imported.trees[1].value[internal, 0], 0.3 * nodes["value"][internal])
    np.testing.assert_array_equal(imported.trees[1].value[~internal, 0], nodes["value"][~internal])
    np.testing.assert_array_equal(imported.base_score, model._baseline_prediction.ravel())


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "model",
    [
        tree.DecisionTreeClassifier(),
        ensemble.RandomForestRegressor(),
        ensemble.GradientBoostingClassifier(),
        ensemble.HistGradientBoostingRegressor(),
        ensemble.ExtraTreesClassifier(),
    ],
    ids=lambda m: type(m).__name__,
)
def test_unfitted_models_are_refused(model):
    with pytest.raises(btt.NotFittedError, match=f"this {type(model).__name__} is not fitted yet"):
        btt.from_model(model)


def test_unsupported_models_are_named():
    from sklearn.linear_model import LogisticRegression

    X, y = np.random.default_rng(8).normal(size=(40, 3)), np.arange(40) % 2
    for model in (LogisticRegression().fit(X, y), ensemble.IsolationForest(n_estimators=2).fit(X)):
        with pytest.raises(btt.UnsupportedModelError, match=type(model).__name__ + ".*DecisionTreeClassifier"):
            btt.from_model(model)


def test_multi_output_is_refused():
    X = np.random.default_rng(9).normal(size=(40, 3))
    model = ensemble.RandomForestRegressor(n_estimators=2).fit(X, X[:, :2])
    with pytest.raises(btt.UnsupportedModelError, match="predicts 2 outputs"):
        from_sklearn(model)


def test_bad_X_and_bad_node_ids():
    rng = np.random.default_rng(10)
    frame = pd.DataFrame(rng.normal(size=(60, 4)), columns=list("abcd"))
    model = ensemble.RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(frame, frame.a > 0)
    imported = btt.from_model(model)
    with pytest.raises(btt.DataError, match="X has 5 features, but the model was trained on 4"):
        imported.predict(rng.normal(size=(3, 5)))
    with pytest.raises(btt.DataError, match="another order"):
        imported.predict(frame[["b", "a", "c", "d"]])
    first_leaf = int(np.flatnonzero(imported.trees[0].children_left == TREE_LEAF)[0])
    with pytest.raises(btt.NodeError, match="already a leaf"):
        btt.collapse(imported, {0: [first_leaf]})
    with pytest.raises(btt.NodeError, match="does not exist in tree 0"):
        btt.collapse(imported, {0: [imported.trees[0].n_nodes]})
    with pytest.raises(btt.NodeError, match="tree index 2 does not exist"):
        btt.collapse(imported, {2: [0]})
    with pytest.raises(btt.ConversionError, match="comes from 'xgboost'"):
        from dataclasses import replace

        to_sklearn(replace(imported, source=Source("xgboost", "XGBClassifier")))


def test_stacked_depths_match_the_reference_depths():
    from bandit_tree_tools.tree import node_depth
    from bandit_tree_tools.tree import stacked_node_depths as stacked_depths
    from tests.tree.random_trees import random_tree as random_common_tree

    rng = np.random.default_rng(12)
    trees = [random_common_tree(rng, max_depth=int(rng.integers(0, 10))) for _ in range(40)]
    offsets, depth = stacked_depths(trees)
    for index, one in enumerate(trees):
        np.testing.assert_array_equal(depth[offsets[index] : offsets[index + 1]], node_depth(one))


def test_pickled_ensemble_still_exports():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] > 0).astype(int)
    for model in (
        ensemble.RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y),
        ensemble.GradientBoostingClassifier(n_estimators=3).fit(X, y),
        ensemble.HistGradientBoostingClassifier(max_iter=3).fit(X, y),
    ):
        imported = pickle.loads(pickle.dumps(from_sklearn(model)))
        np.testing.assert_array_equal(to_sklearn(imported).predict_proba(X), model.predict_proba(X))


def test_hist_gradient_boosting_refuses_categories_it_cannot_index():
    rng = np.random.default_rng(14)
    X = np.column_stack([rng.normal(size=100), rng.choice([0.5, 1.5, 2.5], size=100)])
    model = ensemble.HistGradientBoostingRegressor(max_iter=2, categorical_features=[1]).fit(X, X[:, 1])
    with pytest.raises(btt.UnsupportedModelError, match="non-negative integer categories"):
        from_sklearn(model)


def test_hist_gradient_boosting_with_early_stopping_and_validation_split():
    rng = np.random.default_rng(15)
    n = 300
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 6, size=n).astype(float)])
    X[rng.random(n) < 0.1, 0] = np.nan
    y = rng.integers(0, 3, size=n)
    y[X[:, 1] == 2] = 0
    model = ensemble.HistGradientBoostingClassifier(
        max_iter=30,
        early_stopping=True,
        n_iter_no_change=2,
        validation_fraction=0.3,
        categorical_features=[1],
        random_state=0,
    ).fit(X, y)
    imported = from_sklearn(model)
    assert imported.n_trees == 3 * model.n_iter_
    rows = np.vstack([X, [[0.0, 9.0], [np.nan, -3.0], [np.inf, 2.0]]])
    np.testing.assert_array_equal(model.predict_proba(rows), imported.predict_proba(rows))
    np.testing.assert_array_equal(to_sklearn(imported).predict_proba(rows), model.predict_proba(rows))


def test_hist_gradient_boosting_non_differentiable_loss_internal_values():
    rng = np.random.default_rng(16)
    X = rng.normal(size=(200, 2))
    y = X[:, 0] * 2 + rng.normal(size=200)
    model = ensemble.HistGradientBoostingRegressor(max_iter=3, loss="absolute_error", learning_rate=0.2).fit(X, y)
    without = from_sklearn(model)
    with pytest.raises(btt.ConversionError, match=r"not differentiable.*from_sklearn\(model, X=X_train"):
        btt.collapse(without, {0: [0]})
    with pytest.raises(btt.ConversionError, match="do not look like the training data"):
        from_sklearn(model, X=X[:80], y=y[:80] + 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the training data reproduce every stored leaf
        imported = from_sklearn(model, X=X, y=y)
    first = imported.trees[0]
    assert first.has_leaf_value.all()
    residual = y - model._baseline_prediction.ravel()[0]
    paths = np.zeros((200, first.n_nodes), dtype=bool)
    for row in range(200):  # the rows through each node, walked one by one
        node = 0
        while True:
            paths[row, node] = True
            if first.children_left[node] == TREE_LEAF:
                break
            goes_left = X[row, first.feature[node]] <= first.threshold[node]
            node = first.children_left[node] if goes_left else first.children_right[node]
    for node in range(first.n_nodes):
        assert first.value[node, 0] == pytest.approx(0.2 * np.median(residual[paths[:, node]]), rel=1e-12)
    deepest = int(np.flatnonzero(imported.trees[1].children_left != TREE_LEAF)[-1])
    collapsed = btt.collapse(imported, {0: [0], 1: [deepest]})
    np.testing.assert_array_equal(to_sklearn(collapsed).predict(X), collapsed.predict(X))


def test_hist_gradient_boosting_recompute_refuses_a_validation_split():
    rng = np.random.default_rng(17)
    X = rng.normal(size=(120, 2))
    y = X[:, 0] + rng.normal(size=120)
    model = ensemble.HistGradientBoostingRegressor(
        max_iter=5, loss="quantile", quantile=0.3, early_stopping=True, n_iter_no_change=2, random_state=0
    ).fit(X, y)
    with pytest.raises(btt.ConversionError, match="held out a validation split"):
        from_sklearn(model, X=X, y=y)
    with pytest.raises(btt.ConversionError, match="pass both X and y"):
        from_sklearn(model, X=X)
