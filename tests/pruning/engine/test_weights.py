"""The re-weighted start of btt.prune: the L1 fit of tree weights and the walks from it."""

import threading

import numba
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LinearRegression, LogisticRegression

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._engine import _metrics as engine_metrics
from bandit_tree_tools.pruning._engine import _prune as engine_prune
from bandit_tree_tools.pruning._engine import _search as engine_search
from bandit_tree_tools.pruning._engine import _state as engine_state
from bandit_tree_tools.pruning._engine import _weights as engine_weights
from bandit_tree_tools.pruning._inputs import check_target
from tests.optional import lgb


def _outputs(seed=0, n=600, k=6):
    """(k, n) correlated columns, the shape of trees' outputs, and a label of them."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=n)
    outputs = 0.7 * common + rng.normal(size=(k, n))
    logit = 0.8 * outputs[0] - 0.5 * outputs[1] + 0.3
    labels = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    values = 1.5 * outputs[2] + 0.2 * outputs[3] + rng.normal(scale=0.5, size=n)
    return outputs, labels, values


def _gradient(outputs, y, logistic, weight, intercept):
    eta = intercept + weight @ outputs
    fitted = 1 / (1 + np.exp(-eta)) if logistic else eta
    return outputs @ (fitted - y) / outputs.shape[1]


@pytest.mark.parametrize("logistic", [True, False])
def test_without_penalty_the_fit_is_the_plain_glm(logistic):
    outputs, labels, values = _outputs()
    y = labels if logistic else values
    weight = np.zeros(outputs.shape[0])
    intercept = engine_weights.l1_fit(outputs, y, logistic, 0.0, weight, 0.0)
    reference = (LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000) if logistic else LinearRegression()).fit(
        outputs.T, y
    )
    np.testing.assert_allclose(weight, np.ravel(reference.coef_), rtol=1e-4, atol=5e-5)
    assert intercept == pytest.approx(float(np.ravel(reference.intercept_)[0]), rel=1e-4, abs=5e-5)


@pytest.mark.parametrize("logistic", [True, False])
def test_the_fit_meets_the_l1_optimality_conditions(logistic):
    outputs, labels, values = _outputs(seed=1)
    y = labels if logistic else values
    penalty = 0.02
    weight = np.zeros(outputs.shape[0])
    intercept = engine_weights.l1_fit(outputs, y, logistic, penalty, weight, 0.0)
    gradient = _gradient(outputs, y, logistic, weight, intercept)
    nonzero = weight != 0
    assert nonzero.any() and not nonzero.all(), "this penalty keeps some weights and drops others"
    # a non-zero weight's gradient balances the penalty; a zero weight's stays inside it
    np.testing.assert_allclose(gradient[nonzero], -penalty * np.sign(weight[nonzero]), atol=1e-4)
    assert np.all(np.abs(gradient[~nonzero]) <= penalty + 1e-4)


def test_a_penalty_that_keeps_every_weight_at_0_leaves_the_log_odds_of_the_labels():
    # no weight moves, but the intercept still takes Newton steps until it settles (one step from 0
    # falls well short of the log-odds of labels nine in ten of which are 1)
    outputs, _, _ = _outputs(seed=3)
    labels = (np.random.default_rng(3).random(outputs.shape[1]) < 0.9).astype(np.float64)
    weight = np.zeros(outputs.shape[0])
    intercept = engine_weights.l1_fit(outputs, labels, True, 100.0, weight, 0.0)
    mean = labels.mean()
    assert not weight.any()
    assert intercept == pytest.approx(np.log(mean / (1 - mean)), rel=1e-6)


def test_the_path_starts_empty_and_fills_up():
    outputs, labels, _ = _outputs(seed=2)
    kept = [int(np.count_nonzero(weight)) for weight, _ in engine_weights.l1_path(outputs, labels, True)]
    assert len(kept) == engine_weights.PATH_LENGTH
    assert kept[0] <= 1 and kept[-1] == outputs.shape[0]
    # warm starts down the path: each point is the fit at its penalty, as from a cold start
    largest = np.max(np.abs(outputs @ (labels - labels.mean()))) / outputs.shape[1]
    weight, intercept = list(engine_weights.l1_path(outputs, labels, True))[9]
    cold = np.zeros(outputs.shape[0])
    engine_weights.l1_fit(outputs, labels, True, largest * engine_weights.PATH_RATIO**10, cold, 0.0)
    np.testing.assert_allclose(weight, cold, atol=1e-5)


@pytest.fixture(scope="module")
def redundant_model():
    """Many small trees at a high learning rate: most of them are redundant."""
    X, y = make_classification(5000, 8, n_informative=4, flip_y=0.05, random_state=4)
    model = lgb.LGBMClassifier(n_estimators=100, num_leaves=15, learning_rate=0.5, verbose=-1, random_state=0)
    model.fit(X[:2500], y[:2500])
    return model, X, y


def test_prune_walks_from_the_reweighted_trees_and_keeps_the_smallest(redundant_model):
    model, X, y = redundant_model
    X_train, y_train, X_val, y_val, X_test = X[:2500], y[:2500], X[2500:4000], y[2500:4000], X[4000:]
    result = btt.prune(
        model, X_val, y_val, tolerance=0.01, X_train=X_train, y_train=y_train, random_state=0, progress=False
    )
    kinds = [(walk.ranked_on, walk.refit, walk.reweighted) for walk in result._walks]
    distilled = "the model's outputs on perturbed X_train"  # re-fitted only (test_model_outputs.py)
    outputs = "the model's outputs on perturbed X_val"
    assert kinds == [
        ("X_train", True, False),
        ("X_train", False, False),
        ("X_train", True, True),
        ("X_train", False, True),
        (distilled, True, True),
        (outputs, True, False),
    ]
    target = check_target(result.original, y_val, len(y_val))
    for walk in result._walks:
        path = walk.path
        if walk.reweighted:  # step 1 is the start: fewer trees, scaled
            assert path["trees"].iat[1] < path["trees"].iat[0]
        for row, state in enumerate(walk.states):
            ensemble = engine_state.build_ensemble(result.original, state)
            assert ensemble.n_leaves == path["leaves"].iat[row]
            metric = engine_metrics.metric_value("balanced_accuracy", ensemble, ensemble.predict_raw(X_val), target)
            assert metric == pytest.approx(path["metric"].iat[row], abs=1e-9)
    plain = btt.prune(
        model,
        X_val,
        y_val,
        tolerance=0.01,
        X_train=X_train,
        y_train=y_train,
        reweight=False,
        random_state=0,
        progress=False,
    )
    assert [walk.reweighted for walk in plain._walks] == [False, False, False, False]
    assert result.ensemble.n_leaves <= plain.ensemble.n_leaves
    assert result.params["reweighted"] is True and result.ensemble.n_leaves < plain.ensemble.n_leaves, (
        "on a redundant model the re-weighted walk wins"
    )
    chosen = kinds.index((result.params["ranked_on"], result.params["refit"], True))
    assert result.path.drop(columns="within_tolerance").equals(result._walks[chosen].path)
    # the scaled trees export as plain leaf values of the library
    native = result.to_model()
    assert type(native) is type(model)
    np.testing.assert_array_equal(btt.from_model(native).predict_raw(X_test), result.ensemble.predict_raw(X_test))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one core: the starts are fitted in the walks' thread")
def test_the_start_is_fitted_beside_the_walks_and_its_error_reaches_the_caller(redundant_model, monkeypatch):
    model, X, y = redundant_model
    fitted_on, real = [], engine_search._Search.reweighted_start

    def failing(self, *args, **kwargs):
        fitted_on.append(threading.current_thread().name)
        real(self, *args, **kwargs)  # the fit itself runs, then fails
        raise RuntimeError("the start's fit failed")

    monkeypatch.setattr(engine_search._Search, "reweighted_start", failing)
    for n_jobs, thread in ((-1, engine_prune.START_THREAD), (1, threading.current_thread().name)):
        fitted_on.clear()
        with pytest.raises(RuntimeError, match="the start's fit failed"):
            btt.prune(model, X[2500:4000], y[2500:4000], random_state=0, progress=False, n_jobs=n_jobs)
        assert fitted_on == [thread]
    assert not [t for t in threading.enumerate() if t.name == engine_prune.START_THREAD]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one core: the starts are fitted in the walks' thread")
def test_a_stopped_prune_stops_the_starts_fit(redundant_model, monkeypatch):
    model, X, y = redundant_model
    stop_seen, fitting = [], threading.Event()
    real = engine_search._Search.reweighted_start

    def watched(self, *args, stop=None, **kwargs):
        fitting.set()
        stop_seen.append(stop.wait(timeout=60))  # a fit that outlasts the walk that stops the prune
        start = real(self, *args, stop=stop, **kwargs)
        assert start is None  # it ends at its next point
        return start

    monkeypatch.setattr(engine_search._Search, "reweighted_start", watched)
    X_train, y_train, X_val, y_val = X[:2500], y[:2500], X[2500:4000], y[2500:4000]
    # the first walk (on the training rows, before any re-weighted one) stops the prune once the fit has begun
    result = btt.prune(
        model,
        X_val,
        y_val,
        X_train=X_train,
        y_train=y_train,
        random_state=0,
        progress=False,
        callback=lambda row: fitting.wait(timeout=60),
    )
    assert len(result._walks) == 1 and not result._walks[0].reweighted
    assert stop_seen == [True], "the fit still running when the prune stopped was told to stop"
    assert not [t for t in threading.enumerate() if t.name == engine_prune.START_THREAD]


@pytest.mark.filterwarnings("ignore:prune kept the unpruned model")  # a case that prunes nothing: not what is tested
def test_only_binary_boosted_classifiers_are_reweighted():
    from sklearn.datasets import make_regression
    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(1500, 6, n_informative=4, n_classes=3, random_state=0)
    Xr, yr = make_regression(1500, 6, noise=5.0, random_state=0)
    cases = [
        (lgb.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1), X, y),
        (RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0), X, y),
        (lgb.LGBMRegressor(n_estimators=10, num_leaves=7, verbose=-1), Xr, yr),
    ]  # why: engine_weights
    for model, X, y in cases:
        model.fit(X[:800], y[:800])
        result = btt.prune(model, X[800:], y[800:], X_train=X[:800], y_train=y[:800], random_state=0, progress=False)
        assert not any(walk.reweighted for walk in result._walks)
        assert result.params["reweighted"] is False
