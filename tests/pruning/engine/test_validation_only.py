"""``btt.prune`` without training rows: a boosted model's removals are ranked
on its own outputs on perturbed copies of the validation rows, so no label
ranks, and every labelled validation row checks the tolerance."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._engine import _prune
from bandit_tree_tools.pruning._engine._result import CROSS_FITTED, OUTPUTS_ON_PERTURBED_VALIDATION


@pytest.fixture(scope="module")
def boosted():
    X, y = make_classification(3000, 10, n_informative=6, flip_y=0.05, random_state=0)
    model = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15, random_state=0).fit(X[:1500], y[:1500])
    return model, X[1500:], y[1500:]


def test_no_label_ranks_the_removals(boosted):
    model, X_val, y_val = boosted
    result = btt.prune(model, X_val, y_val, tolerance=0.01, random_state=0, progress=False)
    assert {walk.ranked_on for walk in result._walks} == {OUTPUTS_ON_PERTURBED_VALIDATION}
    assert int(result.metrics.loc["after", "rows"]) == len(y_val)  # every validation row checks
    assert result.ensemble.n_leaves < result.original.n_leaves
    # other labels, the same steps: only the checks (the choice, and where a walk far outside the
    # tolerance ends) read the labels
    shuffled = np.random.default_rng(1).permutation(y_val)
    other = btt.prune(model, X_val, shuffled, tolerance=0.01, random_state=0, progress=False)
    for mine, theirs in zip(result._walks, other._walks):
        if mine.reweighted:  # its start is the sparsest re-weighting within the tolerance: a check
            continue
        steps = min(len(mine.path), len(theirs.path))
        assert steps > 3 and mine.path["leaves"].iloc[:steps].tolist() == theirs.path["leaves"].iloc[:steps].tolist()
        assert not np.allclose(mine.path["metric"].iloc[:steps], theirs.path["metric"].iloc[:steps])


@pytest.mark.parametrize("n_val, copies", [(300, 4), (600, 2), (1500, 1)])
def test_the_perturbed_copies_reach_the_rows_asked_for_and_no_further(boosted, n_val, copies, monkeypatch):
    model, X_val, y_val = boosted
    monkeypatch.setattr(_prune, "PERTURBED_ROWS", 1000)  # 40,000 as shipped
    perturbed = []
    monkeypatch.setattr(_prune, "perturbed_rows", lambda X, rng: perturbed.append(X.shape[0]) or X.copy())
    btt.prune(model, X_val[:n_val], y_val[:n_val], tolerance=0.01, random_state=0, progress=False)
    assert perturbed == [n_val] * copies


def test_regression_and_forests(boosted):
    X, y = make_regression(2000, 8, noise=10.0, random_state=0)
    regressor = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X[:1000], y[:1000])
    result = btt.prune(regressor, X[1000:], y[1000:], tolerance=0.01, random_state=0, progress=False)
    assert result.params["ranked_on"] == OUTPUTS_ON_PERTURBED_VALIDATION
    # a forest's class fractions take no soft targets: its labels rank, and walks on halves measure
    model, X_val, y_val = boosted
    forest = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X_val[:700], y_val[:700])
    result = btt.prune(forest, X_val[700:], y_val[700:], tolerance=0.02, random_state=0, progress=False)
    assert result.params["ranked_on"] == CROSS_FITTED
    assert int(result.metrics.loc["after", "rows"]) == len(y_val[700:])


def test_validation_change_says_how_sure_the_choice_is(boosted):
    model, X_val, y_val = boosted
    result = btt.prune(model, X_val, y_val, tolerance=0.01, random_state=0, progress=False)
    row = result.validation_change.iloc[0]
    metrics = result.metrics["balanced_accuracy"]
    assert row["change"] == pytest.approx(metrics["after"] - metrics["before"])
    assert row["worst_plausible"] == pytest.approx(row["change"] - 2.0 * row["standard_error"])
    assert row["allowed"] == pytest.approx(-0.01) and row["held"] and row["rows"] == len(y_val)
    assert row["worst_plausible"] >= row["allowed"] - 1e-12
    assert "worst_plausible" in repr(result)
    loose = result.choose(0.01, margin=0.0).validation_change.iloc[0]
    assert loose["worst_plausible"] == pytest.approx(loose["change"])


def test_the_notes_point_at_the_callers_line(boosted):
    from sklearn.tree import DecisionTreeClassifier

    _, X_val, y_val = boosted
    stump = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_val, y_val)  # every split is worth keeping
    with pytest.warns(UserWarning, match="prune kept the unpruned model") as record:
        btt.prune(stump, X_val, y_val, tolerance=0.0, random_state=0, progress=False)
    assert record[0].filename == __file__
    with pytest.warns(UserWarning) as record:
        btt.bandit_prune(stump, X_val, y_val, min_depth=5, random_state=0, progress=False)
    assert record[0].filename == __file__


@pytest.mark.filterwarnings("ignore:prune kept the unpruned model")  # a case that prunes nothing: not what is tested
def test_a_forest_without_out_of_bag_rows_also_walks_on_the_validation_labels(boosted):
    """Trees grown on every training row (no bootstrap, as ExtraTrees by
    default) memorised them, so ranking on them shows every node useful: with
    training rows too, such a forest takes the walk on the validation rows'
    labels measured by their halves. A bootstrapped forest on its own
    training rows ranks out of bag instead, and too few validation rows for
    halves leave the walk out rather than refuse the prune."""
    from sklearn.ensemble import ExtraTreesClassifier

    _, X, y = boosted
    X_train, y_train, X_val, y_val = X[:800], y[:800], X[800:], y[800:]
    memorised = ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X_train, y_train)
    result = btt.prune(
        memorised, X_val, y_val, X_train=X_train, y_train=y_train, tolerance=0.02, random_state=0, progress=False
    )
    assert [walk.ranked_on for walk in result._walks] == ["X_train", CROSS_FITTED]
    assert int(result.metrics.loc["after", "rows"]) == len(y_val)  # every validation row checks the others
    bootstrapped = RandomForestClassifier(n_estimators=10, random_state=0).fit(X_train, y_train)
    result = btt.prune(
        bootstrapped, X_val, y_val, X_train=X_train, y_train=y_train, tolerance=0.02, random_state=0, progress=False
    )
    assert [walk.ranked_on for walk in result._walks] == [
        "X_train, out of bag",
        "X_train, out of bag, by squared error",
    ]
    # at a tolerance of 0.005 balanced accuracy needs 100 rows of the rarest class: all 120 check, halves of 60 cannot
    few = np.concatenate([np.flatnonzero(y_val == 0)[:120], np.flatnonzero(y_val == 1)[:120]])
    result = btt.prune(
        memorised,
        X_val[few],
        y_val[few],
        X_train=X_train,
        y_train=y_train,
        tolerance=0.005,
        random_state=0,
        progress=False,
    )
    assert [walk.ranked_on for walk in result._walks] == ["X_train"]


def test_the_plan_of_walks_by_model_kind(boosted):
    from bandit_tree_tools.pruning._engine._prune import _plan

    model, X_val, y_val = boosted
    forest = btt.from_model(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X_val, y_val))
    assert _plan(forest, True, "auto", True) == [
        ("X_train", False, False),  # taken where the forest has no out-of-bag rows
        ("X_train, out of bag", False, False),  # taken where it has, in place of the first
        ("X_train, out of bag, by squared error", False, False),
        (CROSS_FITTED, False, False),  # taken where the forest has no out-of-bag rows
    ]
    assert _plan(forest, False, "auto", True) == [(CROSS_FITTED, False, False)]
    binary = btt.from_model(model)
    assert len(_plan(binary, True, "auto", True)) == 7
    # without training rows: from the model re-fitted only (towards its own outputs), from re-weighted trees both ways
    assert _plan(binary, False, "auto", True) == [
        (OUTPUTS_ON_PERTURBED_VALIDATION, False, True),
        (OUTPUTS_ON_PERTURBED_VALIDATION, True, True),
        (OUTPUTS_ON_PERTURBED_VALIDATION, True, False),
    ]
    assert _plan(binary, False, False, True) == [
        (OUTPUTS_ON_PERTURBED_VALIDATION, False, False),
        (OUTPUTS_ON_PERTURBED_VALIDATION, True, False),
    ]
    # refit and reweight as the user sets them, for every walk
    assert {refit for _, _, refit in _plan(binary, True, False, True)} == {False}
    assert [walk for walk in _plan(binary, True, "auto", False) if walk[1]] == []
    assert _plan(binary, False, True, False) == [(OUTPUTS_ON_PERTURBED_VALIDATION, False, True)]


def test_one_computation_of_each_figure_and_the_average_never_lets_a_point_in():
    xgb = pytest.importorskip("xgboost")
    X, y = make_regression(3000, 8, noise=20.0, random_state=0)
    model = xgb.XGBRegressor(n_estimators=60, max_depth=4, random_state=0).fit(X[:1500], y[:1500])
    result = btt.prune(model, X[1500:], y[1500:], tolerance=0.01, random_state=0, progress=False)
    for chosen in (result, result.choose(0.01, margin=0.0), result.choose(0.05, margin=0.0)):
        metrics = chosen.metrics["r2"]
        assert metrics["before"] == chosen.params["baseline"]  # the same figure, not a float32 twin
        assert metrics["after"] == chosen.path["metric"].iat[chosen.chosen]
        # the chosen point itself is within the bound, whatever its neighbours measure
        assert chosen.path["metric"].iat[chosen.chosen] >= chosen.metric_bound - 1e-12
        assert chosen.validation_change.iloc[0]["held"]
    # a refit given as numpy's True means True for every walk
    X_train, y_train = X[:1500], y[:1500]
    numpy_true = btt.prune(
        model, X[1500:], y[1500:], X_train=X_train, y_train=y_train, refit=np.True_, random_state=0, progress=False
    )
    assert {walk.refit for walk in numpy_true._walks} == {True}


def test_the_after_row_reads_the_pruned_models_own_scores_without_a_new_kernel(boosted, monkeypatch):
    """The chosen model's reported accuracy and log-loss on the checking rows
    are those of its own ``predict_raw``, bit for bit, but computed from leaves
    routed by the search's own kernels (``_apply_columns``, ``_raw_from_leaves``):
    routing them through ``predict_raw`` compiled one more kernel (about 1.2 s)
    into the first call of ``prune``."""
    from bandit_tree_tools.pruning._engine._metrics import metric_value
    from bandit_tree_tools.pruning._inputs import check_target
    from bandit_tree_tools.tree import _kernels

    model, X_val, y_val = boosted

    def no_predict_raw(*args, **kwargs):
        raise AssertionError("prune routed its checking rows through predict_raw")

    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "_predict_raw", no_predict_raw)
        result = btt.prune(model, X_val, y_val, tolerance=0.01, random_state=0, progress=False)
    assert result.ensemble.n_leaves < result.original.n_leaves
    raw = result.ensemble.predict_raw(X_val)  # every validation row checks (no training rows)
    target = check_target(result.ensemble, y_val, len(y_val))
    for name in ("accuracy", "log_loss"):
        assert result.metrics.loc["after", name] == metric_value(name, result.ensemble, raw, target)


def _cross_fitted(baseline, paths):
    from bandit_tree_tools.pruning._engine._metrics import CrossFitted

    estimate = CrossFitted(baseline)
    for walk, path in enumerate(paths):
        for row in path.to_dict("records"):
            estimate.add(walk, row)
        estimate.end(walk)
    return estimate


def test_the_cross_fitted_estimate_averages_the_half_walks_at_each_size():
    import pandas as pd

    first = pd.DataFrame(
        {"leaves": [100, 80, 60, 40], "metric": [0.90, 0.90, 0.88, 0.80], "metric_se": [0, 0.01, 0.02, 0.03]}
    )
    second = pd.DataFrame({"leaves": [100, 70, 50], "metric": [0.80, 0.81, 0.79], "metric_se": [0, 0.02, 0.04]})
    estimate = _cross_fitted(0.85, [first, second])
    assert estimate(100) == (0.85, 0.0)
    # each walk at its smallest model of at least 75 leaves: 80 and 100
    assert estimate(75) == pytest.approx((0.85, 0.01 / 2))
    assert estimate(70) == pytest.approx((0.85 + 0.005, np.hypot(0.01, 0.02) / 2))
    assert estimate(50) == pytest.approx((0.85 - 0.015, np.hypot(0.02, 0.04) / 2))
    assert estimate(45) is None  # smaller than the second walk went


def test_the_cross_fitted_estimate_waits_for_the_half_walks_still_running():
    """Asked while the half walks run, it answers once each has gone below
    the size (or ended), as it would have once they were done."""
    import threading

    from bandit_tree_tools.pruning._engine._metrics import CrossFitted

    estimate, answers = CrossFitted(0.85), []
    asking = threading.Thread(target=lambda: answers.append(estimate(70)))
    asking.start()
    estimate.add(0, {"leaves": 100, "metric": 0.90, "metric_se": 0.0})
    estimate.add(1, {"leaves": 100, "metric": 0.80, "metric_se": 0.0})
    estimate.add(0, {"leaves": 70, "metric": 0.89, "metric_se": 0.01})  # 70 leaves: a later step may have 70 too
    estimate.add(1, {"leaves": 60, "metric": 0.79, "metric_se": 0.02})
    asking.join(timeout=0.2)
    assert asking.is_alive() and not answers  # the first walk has not gone below 70 leaves yet
    estimate.add(0, {"leaves": 70, "metric": 0.88, "metric_se": 0.01})
    estimate.add(0, {"leaves": 50, "metric": 0.87, "metric_se": 0.03})
    asking.join(timeout=10)
    # the first walk at its later 70-leaf model, the second at its 100-leaf one
    assert answers == [pytest.approx((0.85 + (-0.02 + 0.0) / 2, np.hypot(0.01, 0.0) / 2))]
    # a walk that ended (one that failed, or was stopped) answers below its last model with None
    late = threading.Thread(target=lambda: answers.append(estimate(55)))
    late.start()
    late.join(timeout=0.2)
    assert late.is_alive()  # the second walk is at 60 leaves
    estimate.end(1)
    late.join(timeout=10)
    assert answers[1:] == [None]


def test_a_forest_ranks_on_the_labels_and_every_row_measures(boosted):
    _, X_val, y_val = boosted
    forest = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X_val[:700], y_val[:700])
    X, y = X_val[700:], y_val[700:]
    result = btt.prune(forest, X, y, tolerance=0.02, random_state=0, progress=False)
    assert result.ensemble.n_leaves < result.original.n_leaves
    path = result.path
    assert path["metric"].iat[0] == result.params["baseline"] and path["metric_se"].iat[0] == 0.0
    assert (path["metric_se"].iloc[1:] > 0).all()
    row = result.validation_change.iloc[0]
    assert row["held"] and row["rows"] == len(y)
    # the labels rank: other labels, other steps
    shuffled = np.random.default_rng(1).permutation(y)
    other = btt.prune(forest, X, shuffled, tolerance=0.02, random_state=0, progress=False)
    steps = min(len(path), len(other.path))
    assert path["leaves"].iloc[:steps].tolist() != other.path["leaves"].iloc[:steps].tolist()
    # the walk's callback reports the estimate it is measured by, and can stop it
    seen = []
    btt.prune(
        forest,
        X,
        y,
        tolerance=0.02,
        random_state=0,
        progress=False,
        callback=lambda row: seen.append(row) or len(seen) == 3,
    )
    assert [row["metric"] for row in seen] == path["metric"].iloc[:3].tolist()


def test_a_forests_path_is_what_its_half_walks_measure(boosted, monkeypatch):
    import pandas as pd

    from bandit_tree_tools.pruning._engine._metrics import CrossFitted

    _, X_val, y_val = boosted
    forest = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X_val[:700], y_val[:700])
    rows, add = {0: [], 1: []}, CrossFitted.add

    def recording(self, walk, row):
        rows[walk].append(row)
        add(self, walk, row)

    monkeypatch.setattr(CrossFitted, "add", recording)
    result = btt.prune(forest, X_val[700:], y_val[700:], tolerance=0.02, random_state=0, progress=False)
    halves = [pd.DataFrame(rows[walk]) for walk in range(2)]
    assert len(halves) == 2 and all(len(half) > 2 for half in halves)
    for leaves, metric, se in result.path[["leaves", "metric", "metric_se"]].itertuples(index=False):
        changes, errors = [], []
        for half in halves:  # each half walk at its smallest model of at least as many leaves
            row = half[half["leaves"] >= leaves].index[-1]
            changes.append(half["metric"].iat[row] - half["metric"].iat[0])
            errors.append(half["metric_se"].iat[row])
        assert metric == pytest.approx(result.params["baseline"] + np.mean(changes), abs=1e-12)
        assert se == pytest.approx(np.sqrt(errors[0] ** 2 + errors[1] ** 2) / 2, abs=1e-12)
    # the walk ends where a half walk ended: no size the halves did not measure
    assert result.path["leaves"].iat[-1] >= max(half["leaves"].iat[-1] for half in halves)


def test_too_few_validation_rows_say_how_many_each_part_that_checks_needs(boosted):
    from sklearn.ensemble import RandomForestRegressor

    from bandit_tree_tools.exceptions import DataError

    model, X_val, y_val = boosted
    forest = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X_val[:700], y_val[:700])
    # a forest: each half of the rows checks a walk; a boosted model: every row checks its walks
    with pytest.raises(DataError, match=r"each half of them checks a walk.* each half needs at least 100 rows of the"):
        btt.prune(forest, X_val[:150], y_val[:150], progress=False)
    with pytest.raises(DataError, match=r"one row moves the metric .*; it needs at least 100 rows of the rarest"):
        btt.prune(model, X_val[:150], y_val[:150], progress=False)
    # 300 rows: enough to check on all of them
    btt.prune(model, X_val[:300], y_val[:300], random_state=0, progress=False)
    X, y = make_regression(400, 4, random_state=0)
    regressor = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    one_varies = np.where(np.arange(40) == 0, 1.0, 0.0)  # the half without row 0 is constant
    with pytest.raises(DataError, match=r"variance 0 in float64 on one half of them \(each half checks a walk\)"):
        btt.prune(regressor, X[:40], one_varies, progress=False)
