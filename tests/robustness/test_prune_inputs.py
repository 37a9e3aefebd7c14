"""prune and bandit_prune: numpy's True stops a run, and regression targets whose
figures float64 cannot hold are refused by name instead of dividing by zero or
reporting NaN."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import bandit_tree_tools as btt

rng = np.random.default_rng(12)
X = rng.normal(size=(240, 3))
y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=240)
REGRESSOR = RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
labels = (y > 0).astype(int)
CLASSIFIER = RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0).fit(X, labels)


@pytest.mark.parametrize("stop", [np.True_, np.bool_(1), True])
def test_a_callback_answering_numpy_true_stops_prune_at_once(stop):
    calls = []

    def callback(row):
        calls.append(row)
        return stop

    btt.prune(REGRESSOR, X, y, progress=False, callback=callback, random_state=0)
    assert len(calls) == 1


def test_a_callback_answering_numpy_true_stops_bandit_prune_at_once():
    calls = []

    def callback(state):
        calls.append(state)
        return np.float64(1.0) > 0  # an np.bool_

    btt.bandit_prune(CLASSIFIER, X, labels, n_rounds=50, min_depth=1, progress=False, callback=callback, random_state=0)
    assert len(calls) == 1


@pytest.mark.parametrize("y_val", [np.full(240, -2.5), y * 1e-250], ids=["constant", "tiny"])
def test_r2_of_targets_without_spread_is_refused(y_val):
    with pytest.raises(btt.DataError, match=r"R\^2 is undefined on these validation rows.*metric='mse'"):
        btt.prune(REGRESSOR, X, y_val, progress=False, random_state=0)


def test_targets_whose_variance_overflows_are_refused():
    model = RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0).fit(X, y * 1e250)
    with pytest.raises(btt.DataError, match=r"y_val holds values too large to measure squared errors"):
        btt.prune(model, X, y * 1e250, progress=False, random_state=0)


def test_a_two_target_xgboost_regressor_is_refused_as_multi_output():
    from tests.optional import xgb

    targets = np.column_stack([y, -2 * y])
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, targets)
    for prune in (btt.prune, btt.bandit_prune):
        with pytest.raises(btt.UnsupportedModelError, match=r"multi-output models are not supported.*2 outputs"):
            prune(model, X, targets, progress=False)
