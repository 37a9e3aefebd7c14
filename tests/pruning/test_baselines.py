"""Cost-complexity and reduced-error pruning against scikit-learn and the
oracle."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from bandit_tree_tools.exceptions import ParameterError, UnsupportedModelError
from bandit_tree_tools.pruning import cost_complexity_path, cost_complexity_prune, reduced_error_prune
from bandit_tree_tools.tree import collapse
from tests.oracles.pruning import reference_output, reference_rep, reference_score

from .models import classification_data, model_zoo, sklearn_tree_ensemble

ZOO = model_zoo()


def pairs(result):
    return sorted((tree, int(node)) for tree, nodes in result.pruned_nodes.items() for node in nodes)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_path_equals_scikit_learn_classifier(criterion):
    X, y, _, _ = classification_data(n_classes=3, seed=4)
    tree = DecisionTreeClassifier(criterion=criterion, max_depth=8, random_state=0).fit(X, y)
    expected = tree.cost_complexity_pruning_path(X, y)
    path = cost_complexity_path(sklearn_tree_ensemble(tree), X, y, criterion=criterion)[0]
    np.testing.assert_allclose(path["ccp_alphas"], expected.ccp_alphas, atol=1e-12)
    np.testing.assert_allclose(path["impurities"], expected.impurities, atol=1e-12)


def test_path_equals_scikit_learn_regressor():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] ** 2 + rng.normal(size=200)
    tree = DecisionTreeRegressor(max_depth=6, min_samples_leaf=2, random_state=0).fit(X, y)
    expected = tree.cost_complexity_pruning_path(X, y)
    path = cost_complexity_path(sklearn_tree_ensemble(tree), X, y)[0]
    np.testing.assert_allclose(path["ccp_alphas"], expected.ccp_alphas, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path["impurities"], expected.impurities, rtol=1e-9, atol=1e-12)


def test_alpha_chosen_on_validation_equals_refitting_scikit_learn():
    X, y, Xv, yv = classification_data(seed=5)
    params = dict(max_depth=7, min_samples_leaf=3, min_samples_split=3, random_state=0)
    tree = DecisionTreeClassifier(**params).fit(X, y)
    result = cost_complexity_prune(sklearn_tree_ensemble(tree), X, y, Xv, yv)
    alphas = tree.cost_complexity_pruning_path(X, y).ccp_alphas
    refits = [DecisionTreeClassifier(ccp_alpha=alpha, **params).fit(X, y) for alpha in alphas]
    scores = [reference_score(sklearn_tree_ensemble(refit), Xv, yv) for refit in refits]
    best = max(i for i, score in enumerate(scores) if score >= max(scores) - 1e-12)
    assert result.params["alpha"] == pytest.approx(alphas[best])
    np.testing.assert_allclose(reference_output(result.ensemble, Xv), refits[best].predict_proba(Xv), atol=1e-12)
    assert result.metrics.loc["after", "leaves"] == refits[best].get_n_leaves()
    assert result.path["score"].iloc[0] == pytest.approx(scores[0])
    assert repr(result).startswith("PruneResult(method='cost_complexity'")
    assert len(result.plot().axes) == 1


def test_forest_prunes_every_tree_at_one_alpha_and_never_loses_on_validation():
    ensemble, Xv, yv = ZOO["forest_multiclass"]
    X, y, _, _ = classification_data(n_classes=3, labels=["a", "b", "c"], seed=1)
    result = cost_complexity_prune(ensemble, X, y, Xv, yv, scoring="accuracy")
    paths = cost_complexity_path(ensemble, X, y)
    alpha = result.params["alpha"]
    assert alpha > 0, "the test forest must gain from pruning"
    for tree, path in enumerate(paths):
        steps = 1
        while steps < len(path["ccp_alphas"]) and path["ccp_alphas"][steps] <= alpha:
            steps += 1
        expected = collapse(ensemble, {tree: path["nodes"][1:steps]}).trees[tree]
        assert result.ensemble.trees[tree].n_leaves == expected.n_leaves
    assert result.metrics.loc["after", "accuracy"] >= result.metrics.loc["before", "accuracy"]


def test_boosted_models_are_refused():
    ensemble, X, y = ZOO["boosted_binary"]
    with pytest.raises(UnsupportedModelError, match="boosted trees fitted to gradients"):
        cost_complexity_prune(ensemble, X, y, X, y)


def test_bad_ccp_input():
    ensemble, X, y = ZOO["tree_binary"]
    with pytest.raises(ParameterError, match=r"criterion for a classification model must be one of"):
        cost_complexity_prune(ensemble, X, y, X, y, criterion="squared_error")
    with pytest.raises(ParameterError, match="criterion of cost_complexity_path must be one of .*, got 'mse'"):
        cost_complexity_path(ensemble, X, y, criterion="mse")
    with pytest.raises(ParameterError, match="scoring of cost_complexity_prune must be one of 'accuracy', 'score'"):
        cost_complexity_prune(ensemble, X, y, X, y, scoring="f1")
    with pytest.raises(ParameterError, match="weights must be three finite numbers"):
        cost_complexity_prune(ensemble, X, y, X, y, weights=(1.0, 2.0))


@pytest.mark.parametrize("name", sorted(ZOO))
def test_reduced_error_pruning_equals_the_oracle(name):
    ensemble, X, y = ZOO[name]
    result = reduced_error_prune(ensemble, X, y)
    assert pairs(result) == reference_rep(ensemble, X, y, (1.0, 0.0, 0.0))
    key = "accuracy" if ensemble.task == "classification" else "mse"
    before, after = result.metrics.loc["before", key], result.metrics.loc["after", key]
    assert after >= before - 1e-12 if key == "accuracy" else after <= before + 1e-12


def test_reduced_error_pruning_with_the_paper_score():
    ensemble, X, y = ZOO["tree_binary"]
    result = reduced_error_prune(ensemble, X, y, scoring="score")
    assert pairs(result) == reference_rep(ensemble, X, y, (1.0, 2.5, 1.0))
    assert result.metrics.loc["after", "score"] >= result.metrics.loc["before", "score"] - 1e-12
    with pytest.raises(ParameterError, match="scoring of reduced_error_prune must be one of 'accuracy', 'score'"):
        reduced_error_prune(ensemble, X, y, scoring="mse")
    with pytest.raises(ParameterError, match="weights of reduced_error_prune must be array-like, got 'abc'"):
        reduced_error_prune(ensemble, X, y, weights="abc")


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_cost_complexity_on_single_imported_trees_of_other_libraries(library):
    module = pytest.importorskip(library)
    import bandit_tree_tools as btt

    X, y, Xv, yv = classification_data(seed=8)
    if library == "lightgbm":
        model = module.LGBMClassifier(n_estimators=1, num_leaves=31, min_child_samples=3, verbose=-1)
    else:
        model = module.XGBClassifier(n_estimators=1, max_depth=6)
    ensemble = btt.from_model(model.fit(X, y))
    result = cost_complexity_prune(ensemble, X, y, Xv, yv)
    path = cost_complexity_path(ensemble, X, y)[0]
    assert path["nodes"][-1] == 0 and 2 <= len(path["ccp_alphas"]) <= ensemble.trees[0].n_leaves  # ends at the root
    assert np.all(np.diff(path["impurities"]) >= -1e-12)  # pruning never lowers the training impurity
    assert result.metrics.loc["after", "score"] >= result.metrics.loc["before", "score"] - 1e-12
    native = result.to_model()
    np.testing.assert_allclose(native.predict_proba(Xv), result.ensemble.predict_proba(Xv), atol=1e-6)
