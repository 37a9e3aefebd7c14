"""Re-splitting nodes of imported trees and forests."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, NodeError, ParameterError, UnsupportedModelError
from bandit_tree_tools.mabsplit import MABSplitTreeClassifier, find_split
from bandit_tree_tools.mabsplit._resplit import splice
from bandit_tree_tools.tree import subtree_nodes


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(2000, 6, n_informative=3, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def small_tree(data):
    X, y = data
    return DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:300], y[:300])


def test_regrown_node_gets_the_exact_split_of_its_rows_and_the_rest_is_unchanged(data, small_tree):
    X, y = data
    old = btt.from_model(small_tree)
    tree = old.trees[0]
    node = int(tree.children_left[0])  # the root's left child
    result = btt.resplit(small_tree, X, y, nodes=[node], solver="exact")
    new = result.ensemble.trees[0]
    # rows reaching the node (the root's split is unchanged)
    X32 = X.astype(np.float32)
    rows = X32[:, tree.feature[0]] <= tree.threshold[0]
    expected = find_split(X[rows], y[rows], solver="exact")
    new_node = int(new.children_left[0])
    assert (new.feature[new_node], new.threshold[new_node]) == (expected.feature, expected.threshold)
    report = result.to_frame()
    assert report.loc[0, "new_feature"] == expected.feature
    assert report.loc[0, "new_reduction"] == pytest.approx(expected.reduction, rel=1e-9)
    assert report.loc[0, "n_rows"] == rows.sum()
    # the right subtree is untouched
    old_right = subtree_nodes(tree, int(tree.children_right[0]))
    new_right = subtree_nodes(new, int(new.children_right[0]))
    np.testing.assert_array_equal(new.threshold[new_right], tree.threshold[old_right])
    np.testing.assert_array_equal(new.value[new_right], tree.value[old_right])
    # counts stay consistent and the new subtree keeps the old depth
    assert new.n_node_samples[0] == new.n_node_samples[1] + new.n_node_samples[new.children_right[0]]
    assert new.max_depth == tree.max_depth
    # the input model is untouched; the result exports to an identical sklearn tree
    np.testing.assert_array_equal(btt.from_model(small_tree).trees[0].threshold, tree.threshold)
    exported = btt.to_model(result.ensemble)
    assert type(exported).__name__ == "DecisionTreeClassifier"
    np.testing.assert_array_equal(exported.predict_proba(X), result.ensemble.predict_proba(X))


def test_resplitting_the_root_is_growing_a_new_tree(data, small_tree):
    X, y = data
    result = btt.resplit(small_tree, X, y, nodes=None, solver="exact", max_depth=3)
    fresh = MABSplitTreeClassifier(solver="exact", max_depth=3).fit(X, y).ensemble_.trees[0]
    fresh = splice(fresh, {})  # resplit numbers nodes in pre-order
    new = result.ensemble.trees[0]
    np.testing.assert_array_equal(new.threshold, fresh.threshold)
    np.testing.assert_array_equal(new.feature, fresh.feature)
    report = result.report
    internal = np.flatnonzero(btt.from_model(small_tree).trees[0].children_left >= 0)
    np.testing.assert_array_equal(report["node"], internal)
    assert np.all(report["regrown_from"] == 0)
    # nodes below the root report the split at the same path in the new tree
    assert report["new_feature"][0] == new.feature[0]
    assert report["new_threshold"][1] == new.threshold[new.children_left[0]]
    assert "subtrees regrown" in repr(result)


def test_bandit_resplit_of_a_forest_regressor():
    X, y = make_regression(1500, 5, noise=3.0, random_state=0)
    forest = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X[:200], y[:200])
    result = btt.resplit(forest, X, y, nodes={1: [0], 2: [1, 2]}, random_state=0)
    assert result.n_insertions > 0
    assert result.report["tree"].tolist() == [1, 2, 2]
    old = btt.from_model(forest)
    np.testing.assert_array_equal(result.ensemble.trees[0].threshold, old.trees[0].threshold)
    exported = btt.to_model(result.ensemble)
    np.testing.assert_array_equal(exported.predict(X), result.ensemble.predict(X))
    # more data, better fit on it
    assert np.mean((result.ensemble.predict(X) - y) ** 2) < np.mean((forest.predict(X) - y) ** 2)


def test_resplit_refuses_missing_and_infinite_targets_as_the_estimators_do():
    X, y = make_regression(300, 5, random_state=0)
    tree = RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    for bad, what in ((np.nan, "missing targets .NaN or None., the first at row 3"), (np.inf, "infinite targets")):
        with pytest.raises(DataError, match=f"y has 1 {what}"):
            btt.resplit(tree, X, np.where(np.arange(300) == 3, bad, y), nodes={0: [0]})


def test_resplit_regrows_a_node_of_a_lightgbm_random_forest_regressor(data):
    lightgbm = pytest.importorskip("lightgbm")
    X, y = data
    model = lightgbm.LGBMRegressor(
        boosting_type="rf", n_estimators=3, num_leaves=8, bagging_freq=1, bagging_fraction=0.8, verbose=-1
    ).fit(X, y.astype(float))
    old = btt.from_model(model)
    # leaves of a LightGBM random forest regressor hold mean targets and its trees are averaged
    assert (old.link, old.aggregation) == ("identity", "mean")
    result = btt.resplit(model, X, y.astype(float), nodes={0: [0]}, max_depth=2, random_state=0)
    assert result.n_insertions > 0
    assert result.report["tree"].tolist() == [0] and result.report["new_feature"][0] >= 0
    new = result.ensemble.trees[0]
    assert new.max_depth == 2 and new.n_nodes <= 7
    for index in (1, 2):  # trees not asked for are unchanged
        np.testing.assert_array_equal(result.ensemble.trees[index].threshold, old.trees[index].threshold)
    exported = btt.to_model(result.ensemble)
    np.testing.assert_allclose(exported.predict(X), result.ensemble.predict(X), rtol=1e-12)


def test_resplit_refuses_a_lightgbm_random_forest_classifier_whose_leaves_are_raw_scores(data):
    lightgbm = pytest.importorskip("lightgbm")
    X, y = data
    model = lightgbm.LGBMClassifier(
        boosting_type="rf", n_estimators=3, num_leaves=8, bagging_freq=1, bagging_fraction=0.8, verbose=-1
    ).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"looks boosted \(its link is 'sigmoid'"):
        btt.resplit(model, X, y, nodes={0: [0]}, max_depth=2)


def test_boosted_models_are_refused_with_the_reason(data):
    X, y = data
    boosted = GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X[:200], y[:200])
    with pytest.raises(UnsupportedModelError, match="Newton steps on the gradients"):
        btt.resplit(boosted, X, y)


def test_bad_nodes_and_targets_are_explained(data, small_tree):
    X, y = data
    tree = btt.from_model(small_tree).trees[0]
    leaf = int(np.flatnonzero(tree.children_left < 0)[0])
    with pytest.raises(NodeError, match="node 999 does not exist"):
        btt.resplit(small_tree, X, y, nodes=[999])
    with pytest.raises(NodeError, match=f"node {leaf} of tree 0 is a leaf"):
        btt.resplit(small_tree, X, y, nodes=[leaf])
    forest = RandomForestRegressor(n_estimators=2, max_depth=2).fit(X[:100], y[:100])
    with pytest.raises(NodeError, match="pass nodes as a dict"):
        btt.resplit(forest, X, y, nodes=[0])
    with pytest.raises(DataError, match="y holds continuous values.*pass class labels"):
        btt.resplit(small_tree, X, X[:, 0])
    with pytest.raises(ParameterError, match="batch_size of resplit must be an int in"):
        btt.resplit(small_tree, X, y, batch_size=0)
    infinite = X.copy()
    infinite[0, 0] = -np.inf
    with pytest.raises(DataError, match="inf"):
        btt.resplit(small_tree, infinite, y)


def test_resplit_of_a_tree_trained_on_rows_with_nan():
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5)).astype(int)
    X[rng.uniform(size=3000) < 0.15, 0] = np.nan
    X[(y == 1) & (rng.uniform(size=3000) < 0.3), 3] = np.nan
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[:300], y[:300])
    result = btt.resplit(model, X, y, nodes=[0], max_depth=4, random_state=0)
    exported = btt.to_model(result.ensemble)
    probe = np.vstack([X, np.full((1, 4), np.nan)])
    np.testing.assert_array_equal(exported.predict_proba(probe), result.ensemble.predict_proba(probe))
    assert result.report["new_reduction"][0] >= result.report["old_reduction"][0] - 1e-12
    assert exported.score(X, y) > model.score(X, y)
