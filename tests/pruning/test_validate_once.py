"""One pruning call validates its rows once and routes them once, and the
metrics it reports from those routed rows are the pruned model's own."""

from dataclasses import replace

import numpy as np
import pytest

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._inputs import check_target
from bandit_tree_tools.pruning._metrics import model_metrics
from bandit_tree_tools.tree import _ensemble, _kernels
from tests.oracles.pruning import reference_metrics

from .models import boosted_binary, model_zoo

ZOO = model_zoo()


@pytest.fixture
def calls(monkeypatch):
    """Counts of X conversions (check_X) and of routings (the engine's entry
    points), counted around the real functions; ``routed_rows`` (not in the
    counts) sums the rows each routing took."""

    class Counts(dict):
        routed_rows = 0

    counts = Counts(check_X=0, route=0)

    def counting(name, original, rows=None):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            if rows is not None:
                counts.routed_rows += rows(*args)
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(_ensemble, "check_X", counting("check_X", _ensemble.check_X))
    for kernel in ("_apply", "_predict_raw", "_path_lengths"):
        monkeypatch.setattr(_kernels, kernel, counting("route", getattr(_kernels, kernel), lambda X, *_: X.shape[0]))
    # rows X[order[lo:hi]]
    monkeypatch.setattr(
        _kernels, "_apply_columns", counting("route", _kernels._apply_columns, lambda X, order, lo, hi, *_: hi - lo)
    )
    return counts


def _float32_boosted():
    ensemble, X = boosted_binary(n_trees=4)
    ensemble = replace(ensemble, input_dtype="float32", accumulate_float32=True)  # as XGBoost
    return ensemble, X.astype(np.float32), (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("method", ["bandit", "reduced_error"])
def test_a_pruning_call_validates_and_routes_the_rows_once(calls, method):
    ensemble, X, y = _float32_boosted()
    if method == "bandit":
        result = btt.bandit_prune(ensemble, X, y, n_rounds=60, min_depth=1, random_state=0, progress=False)
    else:
        result = btt.reduced_error_prune(ensemble, X, y)
    assert result.n_pruned > 0  # the after-metrics describe a pruned model
    assert calls == {"check_X": 1, "route": 1}


def test_cost_complexity_routes_each_data_set_once(calls):
    ensemble, X, y = ZOO["forest_multiclass"]
    btt.cost_complexity_prune(ensemble, X[:100], y[:100], X[100:], y[100:])
    assert calls == {"check_X": 2, "route": 2}  # the training rows and the validation rows


@pytest.mark.parametrize("name", sorted(ZOO) + ["float32_boosted"])
def test_reported_metrics_are_the_models_own(name):
    ensemble, X, y = _float32_boosted() if name == "float32_boosted" else ZOO[name]
    result = btt.reduced_error_prune(ensemble, X, y, scoring="score")
    target = check_target(ensemble, y, len(y))
    for row, model in (("before", result.original), ("after", result.ensemble)):
        reported = result.metrics.loc[row]
        # the same bits as routing the rows through the (rebuilt) model again
        assert reported.to_dict() == model_metrics(model, X, target)
        # and, up to round-off, scikit-learn's metrics of its numpy predictions (float32 links
        # where the model computes in float32: a float64 link misses these by ~1e-8)
        for key, value in reference_metrics(model, X, y).items():
            assert reported[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_prune_validates_once_and_choose_routes_only_the_chosen_model(calls):
    ensemble, X, y = ZOO["tree_binary"]
    result = btt.prune(ensemble, X, y, tolerance=0.05, random_state=0, progress=False)
    # the search routes every validation row once (a tree without training rows ranks on them, and
    # walks on their halves measure it: every row set is made from the one routing), and the
    # unpruned model's row of the before/after table comes from those leaves; the table routes
    # only the chosen model
    assert int(result.metrics.loc["after", "rows"]) == len(X)
    assert calls == {"check_X": 1, "route": 2}
    assert calls.routed_rows == 2 * len(X)
    result.choose(0.01)
    assert calls == {"check_X": 1, "route": 3}  # the unpruned model's row is kept
    assert calls.routed_rows == 3 * len(X)
