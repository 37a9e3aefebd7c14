"""MABSplit estimators: scikit-learn conventions, exact export, bad input."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.estimator_checks import check_estimator

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.mabsplit import (
    MABSplitForestClassifier,
    MABSplitForestRegressor,
    MABSplitTreeClassifier,
    MABSplitTreeRegressor,
)


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(1500, 8, n_informative=4, n_classes=3, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(1500, 8, n_informative=4, noise=5.0, random_state=0)
    return X, y


@pytest.mark.parametrize(
    "estimator",
    [
        MABSplitTreeClassifier(random_state=0),
        MABSplitTreeRegressor(random_state=0),
        MABSplitForestClassifier(n_estimators=5, random_state=0),
        MABSplitForestRegressor(n_estimators=5, random_state=0),
    ],
    ids=lambda estimator: type(estimator).__name__,
)
def test_passes_scikit_learn_estimator_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(estimator)


def probe_rows(ensemble, X):
    """Rows whose features sit exactly on thresholds, and float64 values that
    round onto them in float32, plus the data itself."""
    thresholds = np.concatenate([tree.threshold[tree.children_left >= 0] for tree in ensemble.trees])
    features = np.concatenate([tree.feature[tree.children_left >= 0] for tree in ensemble.trees])
    rows = np.repeat(X[:1], thresholds.size * 2, axis=0).astype(np.float64)
    index = np.arange(thresholds.size)
    rows[index, features] = thresholds
    rows[thresholds.size + index, features] = thresholds + np.abs(thresholds) * 1e-9
    return np.vstack([X, rows])


@pytest.mark.parametrize(
    "cls,params,expected",
    [
        (MABSplitTreeClassifier, dict(bins="quantile"), "DecisionTreeClassifier"),
        (MABSplitForestClassifier, dict(n_estimators=8, n_jobs=2), "RandomForestClassifier"),
        (MABSplitForestClassifier, dict(n_estimators=8, splitter="random", bootstrap=False), "ExtraTreesClassifier"),
    ],
)
def test_classifier_exports_to_an_identical_scikit_learn_model(cls, params, expected, classification):
    X, y = classification
    model = cls(max_depth=7, random_state=1, **params).fit(X, y)
    exported = btt.to_model(model)
    assert type(exported).__name__ == expected
    probe = probe_rows(model.ensemble_, X)
    np.testing.assert_array_equal(exported.predict_proba(probe), model.predict_proba(probe))
    np.testing.assert_array_equal(exported.predict(probe), model.predict(probe))
    np.testing.assert_array_equal(exported.apply(probe), model.ensemble_.apply(probe).squeeze())
    assert_same_tree_queries(model, exported, probe)
    with np.errstate(divide="ignore"):  # a class no reached leaf holds: -inf in both
        np.testing.assert_array_equal(exported.predict_log_proba(probe), model.predict_log_proba(probe))


@pytest.mark.parametrize("cls", [MABSplitTreeRegressor, MABSplitForestRegressor])
def test_regressor_exports_to_an_identical_scikit_learn_model(cls, regression):
    X, y = regression
    params = dict(n_estimators=6, max_features=0.5) if cls is MABSplitForestRegressor else {}
    model = cls(min_samples_leaf=5, random_state=3, **params).fit(X, y)
    exported = btt.to_model(model)
    probe = probe_rows(model.ensemble_, X)
    np.testing.assert_array_equal(exported.predict(probe), model.predict(probe))
    assert_same_tree_queries(model, exported, probe)


def assert_same_tree_queries(model, exported, X):
    """apply, decision_path, get_depth and get_n_leaves answer as the exported scikit-learn model's."""
    np.testing.assert_array_equal(model.apply(X), exported.apply(X))
    ours, theirs = model.decision_path(X), exported.decision_path(X)
    if isinstance(theirs, tuple):  # a forest: the indicator and each tree's first column
        np.testing.assert_array_equal(ours[1], theirs[1])
        ours, theirs = ours[0], theirs[0]
    assert ours.shape == theirs.shape and (ours != theirs).nnz == 0
    if hasattr(exported, "get_depth"):
        assert (model.get_depth(), model.get_n_leaves()) == (exported.get_depth(), exported.get_n_leaves())


@pytest.mark.parametrize(
    "cls,data", [(MABSplitTreeClassifier, "classification"), (MABSplitTreeRegressor, "regression")]
)
def test_bandit_tree_with_a_budget_covering_every_node_is_the_exact_tree(cls, data, request):
    X, y = request.getfixturevalue(data)
    exact = cls(solver="exact", max_depth=6, min_samples_leaf=3, random_state=0).fit(X, y)
    bandit = cls(solver="mab", batch_size=X.shape[0], max_depth=6, min_samples_leaf=3, random_state=0).fit(X, y)
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(bandit.ensemble_.trees[0], name), getattr(exact.ensemble_.trees[0], name))
    np.testing.assert_allclose(bandit.ensemble_.trees[0].value, exact.ensemble_.trees[0].value, rtol=1e-12)
    assert bandit.n_insertions_ == exact.n_insertions_


def test_bandit_tree_uses_fewer_insertions_than_the_exact_tree():
    X, y = make_classification(40_000, 10, n_informative=3, random_state=0)
    exact = MABSplitTreeClassifier(solver="exact", max_depth=3, random_state=0).fit(X, y)
    bandit = MABSplitTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert bandit.n_insertions_ < exact.n_insertions_ / 2
    assert bandit.n_insertions_ == sum(int(a.sum()) for a in bandit.node_insertions_)
    assert bandit.score(X, y) > exact.score(X, y) - 0.02


def test_structure_parameters_are_respected(classification):
    X, y = classification
    tree = MABSplitTreeClassifier(max_depth=4, random_state=0).fit(X, y).ensemble_.trees[0]
    assert tree.max_depth <= 4
    tree = MABSplitTreeClassifier(max_leaf_nodes=9, random_state=0).fit(X, y).ensemble_.trees[0]
    assert tree.n_leaves == 9
    tree = MABSplitTreeClassifier(min_samples_leaf=40, random_state=0).fit(X, y).ensemble_.trees[0]
    assert tree.n_node_samples[tree.is_leaf].min() >= 40
    forest = MABSplitForestClassifier(
        n_estimators=3, max_samples=200, bootstrap=False, max_features=2, random_state=0
    ).fit(X, y)
    assert all(tree.n_node_samples[0] == 200 for tree in forest.ensemble_.trees)


def test_feature_importances_and_insertion_counts(classification):
    X, y = classification
    X = np.hstack([X, np.random.RandomState(0).normal(size=(X.shape[0], 4))])
    model = MABSplitForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    importances = model.feature_importances_
    assert importances.shape == (12,) and importances.sum() == pytest.approx(1.0)
    assert importances[:8].sum() > importances[8:].sum()
    assert model.n_insertions_ > 0
    assert len(model.node_insertions_) == 10
    assert all(a.shape[0] == tree.n_nodes for a, tree in zip(model.node_insertions_, model.ensemble_.trees))


def test_same_random_state_same_forest_whatever_n_jobs(regression):
    X, y = regression
    one = MABSplitForestRegressor(n_estimators=4, max_depth=5, random_state=7, n_jobs=1).fit(X, y)
    two = MABSplitForestRegressor(n_estimators=4, max_depth=5, random_state=7, n_jobs=2).fit(X, y)
    for a, b in zip(one.ensemble_.trees, two.ensemble_.trees):
        np.testing.assert_array_equal(a.threshold, b.threshold)
        np.testing.assert_array_equal(a.value, b.value)


def test_pandas_input_keeps_feature_names_and_pickles(classification):
    X, y = classification
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    model = MABSplitTreeClassifier(max_depth=3, random_state=0).fit(frame, y)
    assert list(model.feature_names_in_) == list(frame.columns)
    assert list(model.ensemble_.feature_names_in_) == list(frame.columns)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(frame), model.predict(frame))


def test_bad_input_is_explained(classification):
    X, y = classification
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"]).assign(city=["x", "y", "z"] * 500)
    with pytest.raises(DataError, match=r"non-numeric columns \['city'\]"):
        MABSplitTreeClassifier().fit(frame, y)
    infinite = X.copy()
    infinite[5, 2] = np.inf
    with pytest.raises(DataError, match=r"inf .* in \['column 2'\].*clip"):
        MABSplitTreeClassifier().fit(infinite, y)
    with pytest.raises(DataError, match=r"inf .* in \['column 2'\]"):
        MABSplitTreeClassifier(max_depth=2).fit(X, y).predict(infinite)
    with pytest.raises(
        ParameterError, match=r"batch_size of MABSplitTreeClassifier must be an int in \[1, inf\], got 0"
    ):
        MABSplitTreeClassifier(batch_size=0).fit(X, y)
    with pytest.raises(ParameterError, match="batch_size of MABSplitForestRegressor must be an int"):
        MABSplitForestRegressor(batch_size=-5).fit(X, y.astype(float))
    with pytest.raises(ParameterError, match=r"z of MABSplitTreeClassifier must be a finite float in \(0.0, inf\)"):
        MABSplitTreeClassifier(z=np.inf).fit(X, y)
    with pytest.raises(ParameterError, match=r"max_features must be at most the number of features \(8\), got 9"):
        MABSplitTreeClassifier(max_features=9).fit(X, y)
    with pytest.raises(ParameterError, match=r"max_samples=2000 must be between 1 and the number of rows \(1500\)"):
        MABSplitForestClassifier(n_estimators=2, max_samples=2000).fit(X, y)
    with pytest.raises(DataError, match="Unknown label type.*MABSplitTreeRegressor"):
        MABSplitTreeClassifier().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="could not convert|numeric"):
        MABSplitTreeRegressor().fit(X, np.array(["low", "high", "mid"] * 500))
    for bad, what in ((np.nan, "missing targets .NaN or None., the first at row 3"), (np.inf, "infinite targets")):
        with pytest.raises(DataError, match=f"y has 1 {what}"):
            MABSplitTreeRegressor().fit(X, np.where(np.arange(X.shape[0]) == 3, bad, 1.0 * y))
        with pytest.raises(DataError, match=f"y has 1 {what}"):
            MABSplitForestRegressor(n_estimators=2).fit(
                X, pd.Series(np.where(np.arange(X.shape[0]) == 3, bad, 1.0 * y))
            )
    with pytest.raises(DataError, match=r"y has one class only \(0.0\); a classifier needs at least two classes"):
        MABSplitTreeClassifier().fit(X, np.zeros(X.shape[0]))
    with pytest.raises(
        ParameterError, match="splitter of MABSplitForestClassifier must be one of 'histogram', 'random'"
    ):
        MABSplitForestClassifier(splitter="best").fit(X, y)


def test_degenerate_nodes_become_leaves(classification):
    X, y = classification
    constant = np.ones_like(X)
    model = MABSplitTreeClassifier().fit(constant, y)
    assert model.ensemble_.n_nodes == 1 and model.n_insertions_ == 0
    np.testing.assert_allclose(model.predict_proba(X[:2]), [np.bincount(y) / y.size] * 2)
    # fewer rows than 2 * min_samples_leaf: the root cannot split
    model = MABSplitTreeClassifier(min_samples_leaf=400).fit(X[:700], y[:700])
    assert model.ensemble_.n_nodes == 1


def test_demo_reports_both_solvers():
    from bandit_tree_tools.mabsplit._demo import demo

    text = demo()
    assert "mab" in text and "exact" in text and "fewer histogram insertions" in text


@pytest.mark.parametrize("forest_class", [MABSplitForestClassifier, MABSplitForestRegressor])
def test_forest_estimators_are_fitted_tree_estimators_that_predict_like_its_trees(forest_class, classification):
    X, y = classification
    forest = forest_class(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    tree_class = MABSplitTreeClassifier if forest_class is MABSplitForestClassifier else MABSplitTreeRegressor
    assert isinstance(forest.estimators_, list) and len(forest.estimators_) == 3
    assert all(type(tree) is tree_class for tree in forest.estimators_)
    assert all(tree.ensemble_.trees[0] is grown for tree, grown in zip(forest.estimators_, forest.ensemble_.trees))
    if forest_class is MABSplitForestClassifier:
        mean = np.mean([tree.predict_proba(X) for tree in forest.estimators_], axis=0)
        np.testing.assert_allclose(mean, forest.predict_proba(X))
        assert list(forest.estimators_[0].classes_) == list(forest.classes_)
    else:
        mean = np.mean([tree.predict(X) for tree in forest.estimators_], axis=0)
        np.testing.assert_allclose(mean, forest.predict(X))
    assert sum(tree.n_insertions_ for tree in forest.estimators_) == forest.n_insertions_
    assert forest.estimators_[0].max_depth == 4
    exported = btt.to_model(forest.estimators_[1])
    np.testing.assert_array_equal(exported.predict(X), forest.estimators_[1].predict(X))


def holed(X, y, seed=0):
    """X with NaN: in a fifth of feature 0, and in feature 1 mostly where the class is 0 (or y is low)."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.uniform(size=X.shape[0]) < 0.2, 0] = np.nan
    X[(rng.uniform(size=X.shape[0]) < 0.6) & (y <= np.median(y)), 1] = np.nan
    return X


@pytest.mark.parametrize(
    "cls,data,params",
    [
        (MABSplitTreeClassifier, "classification", dict(solver="exact")),
        (MABSplitTreeClassifier, "classification", dict(bins="quantile")),
        (MABSplitForestClassifier, "classification", dict(n_estimators=4)),
        (MABSplitTreeRegressor, "regression", dict(min_samples_leaf=5)),
        (MABSplitForestRegressor, "regression", dict(n_estimators=4, max_features=0.5)),
    ],
)
def test_nan_is_a_missing_value_routed_as_learned_and_exported_exactly(cls, data, params, request):
    X, y = request.getfixturevalue(data)
    X = holed(X, y)
    model = cls(max_depth=6, random_state=0, **params).fit(X, y)
    exported = btt.to_model(model)
    probe = probe_rows(model.ensemble_, X)
    probe[::3, [0, 1, 5]] = np.nan  # NaN on features no training row lacked too
    if hasattr(exported, "predict_proba"):
        np.testing.assert_array_equal(exported.predict_proba(probe), model.predict_proba(probe))
    np.testing.assert_array_equal(exported.predict(probe), model.predict(probe))
    assert_same_tree_queries(model, exported, probe)
    trees = model.ensemble_.trees
    # NaN was learned where it carried the class: some split on feature 1 sends it left, some on 0 or 1 right
    directions = {
        (int(f), int(m)) for tree in trees for f, m in zip(tree.feature, tree.missing_go_to_left) if f in (0, 1)
    }
    assert {(1, 0), (1, 1)} & directions and len(directions) >= 2
    if cls is MABSplitTreeClassifier:
        # the kernel's partition of the training rows is the routing's: every node holds the rows routed to it
        tree = trees[0]
        reached = np.asarray(model.decision_path(X).sum(axis=0)).ravel()
        np.testing.assert_array_equal(reached, tree.n_node_samples)
        # where a split's feature had no NaN among its node's rows, NaN goes to the child with more rows
        rows_at = model.decision_path(X).toarray().astype(bool)
        for node in np.flatnonzero(tree.children_left >= 0):
            if not np.isnan(X[rows_at[:, node], tree.feature[node]]).any():
                left, right = tree.children_left[node], tree.children_right[node]
                assert tree.missing_go_to_left[node] == (tree.n_node_samples[left] >= tree.n_node_samples[right])


def test_nan_that_tells_the_class_is_found_by_the_bandit_as_by_the_exact_search():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 6)).astype(np.float32)
    y = (X[:, 2] > 0.5).astype(int)
    X[(y == 1) & (rng.uniform(size=20_000) < 0.5), 4] = np.nan  # half the positives lack feature 4
    X[rng.uniform(size=20_000) < 0.02, 2] = np.nan
    exact = MABSplitTreeClassifier(solver="exact", max_depth=3, random_state=0).fit(X, y)
    bandit = MABSplitTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    for model in (exact, bandit):
        root = model.ensemble_.trees[0]
        assert root.feature[0] == 2 and model.score(X, y) > 0.99
    assert bandit.n_insertions_ < exact.n_insertions_ / 2
