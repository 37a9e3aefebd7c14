"""Pruning by the model's training objective: what it cannot judge is
refused (quantiles, rankings, survival, margins, a classifier's custom
objective), regression through the sigmoid is pruned by log-loss, one
sigmoid per class by each class's own log-loss, and XGBoost's parallel trees
stay whole iterations on export."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, UnsupportedModelError
from bandit_tree_tools.interop import adapter_for, trees_per_iteration
from bandit_tree_tools.interop._adapters import OBJECTIVE_FAMILIES
from bandit_tree_tools.pruning._engine import _kernels as kernels
from bandit_tree_tools.pruning._engine._search import _loss_kind
from tests.optional import lgb, xgb


@pytest.fixture(scope="module")
def features():
    """Six features with missing values; a score the targets below derive from."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2 - np.nan_to_num(X[:, 2])
    return X, score


@pytest.fixture
def data(features):
    """The features, the score and a generator of the test's own: its targets do not depend on which tests ran
    before it on the same worker."""
    X, score = features
    return X, score, np.random.default_rng(1)


def split(X, y):
    return X[:1500], y[:1500], X[1500:2500], y[1500:2500], X[2500:]


def lightgbm(objective, X, y, **params):
    return lgb.train(
        dict(objective=objective, num_leaves=15, verbose=-1, seed=0, **params),
        lgb.Dataset(X, y, **params.pop("dataset", {})),
        30,
    )


def xgboost(objective, X, y, group=None, **params):
    matrix = xgb.DMatrix(X, y)
    if group is not None:
        matrix.set_group(group)
    return xgb.train(dict(objective=objective, max_depth=4, seed=0, **params), matrix, 30)


def unjudged_models(X, score, rng):
    """(model, its objective's name, a word of the refusal) for each family pruning refuses."""
    y = score + rng.normal(size=X.shape[0])
    labels = (score + rng.logistic(size=X.shape[0]) > 0).astype(int)
    relevance = np.clip(np.round(score / 1.5 + 1), 0, 3)
    queries = np.full(X.shape[0] // 100, 100)
    ranked = xgb.DMatrix(X, relevance)
    ranked.set_group(queries)
    return [
        (lightgbm("quantile", X, y, alpha=0.9), "quantile", "quantile of y"),
        (xgboost("reg:quantileerror", X, y, quantile_alpha=0.9), "reg:quantileerror", "quantile of y"),
        (
            GradientBoostingRegressor(loss="quantile", alpha=0.9, n_estimators=20, random_state=0).fit(
                np.nan_to_num(X), y
            ),
            "quantile",
            "quantile of y",
        ),
        (
            HistGradientBoostingRegressor(loss="quantile", quantile=0.9, max_iter=20, random_state=0).fit(X, y),
            "quantile",
            "quantile of y",
        ),
        (
            lgb.train(
                dict(objective="lambdarank", num_leaves=7, verbose=-1), lgb.Dataset(X, relevance, group=queries), 10
            ),
            "lambdarank",
            "order the rows of each query",
        ),
        (xgb.train(dict(objective="rank:ndcg", max_depth=3), ranked, 10), "rank:ndcg", "order the rows of each query"),
        (
            xgboost("survival:cox", X, np.exp(0.3 * score) + rng.exponential(0.5, X.shape[0])),
            "survival:cox",
            "hazard ratios",
        ),
        (xgboost("binary:logitraw", X, labels), "binary:logitraw", "binary:logistic"),
        (
            lgb.LGBMClassifier(objective=logistic_gradients, n_estimators=10, num_leaves=7, verbose=-1).fit(X, labels),
            "custom",
            "raw scores",
        ),
    ]


def logistic_gradients(labels, raw):
    """A custom objective: log-loss's gradients and hessians (LightGBM's classifier then predicts raw scores)."""
    p = 1.0 / (1.0 + np.exp(-raw))
    return p - labels, p * (1.0 - p)


def test_objectives_pruning_cannot_judge_are_refused_by_every_method(data):
    X, score, rng = data
    y = score + rng.normal(size=X.shape[0])
    for model, name, reason in unjudged_models(X, score, rng):
        ensemble = btt.from_model(model)
        assert adapter_for(ensemble).objective(ensemble)[0] == name
        with pytest.raises(UnsupportedModelError, match=f"objective '{name}'.*{reason}"):
            btt.prune(model, X[:500], y[:500], progress=False)
        with pytest.raises(UnsupportedModelError, match=f"objective '{name}'"):
            btt.reduced_error_prune(ensemble, X[:500], y[:500])  # an imported ensemble is checked too
        with pytest.raises(UnsupportedModelError, match=f"objective '{name}'"):
            btt.bandit_prune(model, X[:500], y[:500], n_rounds=2, progress=False)


def test_objectives_report_their_family(data):
    X, score, rng = data
    labels = (score + rng.logistic(size=X.shape[0]) > 0).astype(int)
    y = score + rng.normal(size=X.shape[0])
    cases = [
        (lightgbm("binary", X, labels), ("binary", "classification")),
        (lightgbm("huber", X, y), ("huber", "regression")),
        (xgboost("reg:logistic", X, labels * 0.8 + 0.1), ("reg:logistic", "regression")),
        (xgboost("multi:softprob", X, labels, num_class=2), ("multi:softprob", "classification")),
        (GradientBoostingRegressor(loss="huber", n_estimators=5).fit(np.nan_to_num(X), y), ("huber", "regression")),
        (
            HistGradientBoostingRegressor(loss="poisson", max_iter=5).fit(X, np.exp(score / 3)),
            ("poisson", "regression"),
        ),
    ]
    for model, expected in cases:
        ensemble = btt.from_model(model)
        assert adapter_for(ensemble).objective(ensemble) == expected
    for model, _, _ in unjudged_models(X, score, rng):
        ensemble = btt.from_model(model)
        assert adapter_for(ensemble).objective(ensemble)[1] in OBJECTIVE_FAMILIES


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_regression_through_the_sigmoid_prunes_by_log_loss_and_exports_exactly(data, library):
    X, score, rng = data
    y = np.clip(1 / (1 + np.exp(-score)) + rng.normal(scale=0.1, size=X.shape[0]), 0, 1)
    model = (
        xgboost("reg:logistic", X[:1500], y[:1500])
        if library == "xgboost"
        else lightgbm("cross_entropy", X[:1500], y[:1500])
    )
    ensemble = btt.from_model(model)
    assert (ensemble.task, ensemble.link, _loss_kind(ensemble)) == ("regression", "sigmoid", kernels.LOGISTIC)
    X_train, y_train, X_val, y_val, X_test = split(X, y)
    result = btt.prune(model, X_val, y_val, X_train=X_train, y_train=y_train, random_state=0, progress=False)
    assert result.ensemble.n_leaves < ensemble.n_leaves
    native = result.to_model()
    if library == "xgboost":
        exported = native.predict(xgb.DMatrix(X_test), output_margin=True)
    else:
        exported = native.predict(X_test, raw_score=True)
    np.testing.assert_array_equal(exported, result.ensemble.predict_raw(X_test)[:, 0])
    with pytest.raises(DataError, match=r"outside \[0, 1\].*probabilities through the sigmoid"):
        btt.prune(model, X_val, y_val * 3, progress=False)


def test_soft_targets_of_the_sigmoid_are_their_own_log_loss_gradients():
    raw = np.array([[-2.0], [0.0], [1.5]])
    target = np.array([0.1, 0.5, 0.9])
    grad, hess = kernels.gradients(raw, np.full(3, -1), target[:, None], kernels.LOGISTIC, 1.0)
    p = 1 / (1 + np.exp(-raw[:, 0]))
    np.testing.assert_allclose(grad[:, 0], p - target)
    np.testing.assert_allclose(hess[:, 0], p * (1 - p))


def test_one_sigmoid_per_class_takes_each_columns_own_labels():
    """LightGBM's multiclassova: column k's loss is "class k or not"."""
    raw = np.array([[0.3, -1.0, 2.0], [1.0, 0.0, -0.5]])
    codes = np.array([2, 0])
    grad, hess = kernels.gradients(raw, codes, np.zeros((2, 1)), kernels.LOGISTIC, 1.0)
    p = 1 / (1 + np.exp(-raw))
    np.testing.assert_allclose(grad, p - np.eye(3)[codes])
    np.testing.assert_allclose(hess, p * (1 - p))


def test_soft_labels_of_several_classes_are_each_columns_own():
    """The walk towards a multiclass model's outputs: column k's label is the model's probability of class k."""
    raw = np.array([[0.3, -1.0, 2.0], [1.0, 0.0, -0.5]])
    soft = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    sigmoid = 1 / (1 + np.exp(-raw))
    grad, _ = kernels.gradients(raw, np.full(2, -1), soft, kernels.LOGISTIC, 1.0)
    np.testing.assert_allclose(grad, sigmoid - soft)
    softmax = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
    grad, hess = kernels.gradients(raw, np.full(2, -1), soft, kernels.SOFTMAX, 1.0)
    np.testing.assert_allclose(grad, softmax - soft)
    np.testing.assert_allclose(hess, softmax * (1 - softmax))


def test_one_sigmoid_per_class_prunes_and_exports_exactly(data):
    X, score, rng = data
    y = np.digitize(score + rng.normal(size=X.shape[0]), [-0.5, 0.8])
    X_train, y_train, X_val, y_val, X_test = split(X, y)
    model = lightgbm("multiclassova", X_train, y_train, num_class=3)
    result = btt.prune(
        model, X_val, y_val, X_train=X_train, y_train=y_train, tolerance=0.02, random_state=0, progress=False
    )
    assert result.ensemble.n_leaves < result.original.n_leaves
    np.testing.assert_array_equal(
        result.to_model().predict(X_test, raw_score=True), result.ensemble.predict_raw(X_test)
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_xgboost_random_forests_keep_whole_iterations_of_parallel_trees(data, n_classes):
    X, score, rng = data
    y = np.digitize(score + rng.normal(size=X.shape[0]), [0.0] if n_classes == 2 else [-0.5, 0.8])
    X_train, y_train, X_val, y_val, X_test = split(X, y)
    model = xgb.XGBRFClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X_train, y_train)
    ensemble = btt.from_model(model)
    per_iteration = 12 * (1 if n_classes == 2 else n_classes)
    assert trees_per_iteration(ensemble) == per_iteration  # one iteration: the output columns do not show it
    result = btt.prune(
        model, X_val, y_val, X_train=X_train, y_train=y_train, tolerance=0.02, random_state=0, progress=False
    )
    assert result.ensemble.n_leaves < ensemble.n_leaves
    # removed trees stay in their iteration as one-leaf trees of value 0
    assert result.ensemble.n_trees == per_iteration
    assert any(tree.n_nodes == 1 for tree in result.ensemble.trees)
    native = result.to_model()
    np.testing.assert_array_equal(
        native.predict(X_test, output_margin=True).reshape(len(X_test), -1), result.ensemble.predict_raw(X_test)
    )
