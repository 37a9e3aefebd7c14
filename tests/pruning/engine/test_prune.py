"""btt.prune: the path, exact export, bandit against exact search, bad input."""

import copy
import dataclasses

import numba
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.pruning._engine import _kernels as engine_kernels
from bandit_tree_tools.pruning._engine import _metrics as engine_metrics
from bandit_tree_tools.pruning._engine import _search as engine_search
from bandit_tree_tools.pruning._engine import _state as engine_state
from bandit_tree_tools.pruning._inputs import check_target
from tests.optional import lgb, xgb
from tests.pruning.engine._rows import walk_rows


def classification(n=3000, seed=0, classes=2):
    X, y = make_classification(n, 8, n_informative=5, n_classes=classes, flip_y=0.05, random_state=seed)
    return X, y


@pytest.fixture(scope="module")
def binary_data():
    X, y = classification(4500)
    return X[:2000], y[:2000], X[2000:3500], y[2000:3500], X[3500:], y[3500:]


@pytest.fixture(scope="module")
def lightgbm_binary(binary_data):
    X_train, y_train = binary_data[:2]
    return lgb.LGBMClassifier(n_estimators=40, num_leaves=15, verbose=-1, random_state=0).fit(X_train, y_train)


def _models():
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier

    X, y = classification(2500, seed=1)
    Xm, ym = classification(2500, seed=2, classes=3)
    Xr, yr = make_regression(2500, 6, noise=10.0, random_state=3)
    return {
        "lightgbm_binary": (lgb.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1), X, y),
        "lightgbm_multiclass": (lgb.LGBMClassifier(n_estimators=15, num_leaves=7, verbose=-1), Xm, ym),
        "xgboost_binary": (xgb.XGBClassifier(n_estimators=30, max_depth=4), X, y),
        "xgboost_regressor": (xgb.XGBRegressor(n_estimators=30, max_depth=4), Xr, yr),
        "random_forest": (RandomForestClassifier(n_estimators=10, max_depth=8, random_state=0), X, y),
        "gradient_boosting_multiclass": (
            GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0),
            Xm,
            ym,
        ),
        "hist_gradient_boosting_regressor": (HistGradientBoostingRegressor(max_iter=20, random_state=0), Xr, yr),
    }


@pytest.mark.parametrize("name", list(_models()))
def test_every_library_prunes_and_exports_exactly(name):
    model, X, y = _models()[name]
    model.fit(X[:1200], y[:1200])
    before = copy.deepcopy(model)
    X_val, y_val, X_test = X[1200:2000], y[1200:2000], X[2000:]
    result = btt.prune(
        model, X_val, y_val, tolerance=0.02, X_train=X[:1200], y_train=y[:1200], random_state=0, progress=False
    )
    pruned = result.ensemble
    assert result.method == "prune" and isinstance(result, btt.PrunePathResult)
    assert pruned.n_leaves < result.original.n_leaves, "a 2-point tolerance leaves room to prune"
    # the exported model is a plain model of its library that predicts like the pruned ensemble
    native = result.to_model()
    assert type(native) is type(model)
    again = btt.from_model(native)
    assert np.array_equal(again.predict_raw(X_test), pruned.predict_raw(X_test))
    if hasattr(native, "predict_proba"):
        np.testing.assert_allclose(native.predict_proba(X_test), pruned.predict_proba(X_test), rtol=0, atol=1e-6)
        proba = np.asarray(native.predict_proba(X_test))
        assert np.all(proba >= 0) and np.allclose(proba.sum(axis=1), 1.0)
    # the user's model is untouched
    np.testing.assert_array_equal(model.predict(X_test), before.predict(X_test))


def test_a_state_keeps_its_collapsed_nodes_as_given_whatever_their_number():
    rng = np.random.default_rng(0)
    for n_nodes in (1, 7, 8, 13, 1001):
        mask = rng.random(n_nodes) < 0.4
        state = engine_state._State.of(mask, np.ones(1, dtype=bool), np.zeros((n_nodes, 1)), np.zeros(1))
        expected = mask.copy()
        mask[:] = ~mask  # the state took a copy
        assert state.collapsed.dtype == bool
        np.testing.assert_array_equal(state.collapsed, expected)


@pytest.mark.parametrize("name", ["lightgbm_multiclass", "xgboost_binary", "random_forest"])
def test_every_path_point_rebuilds_to_the_scores_the_search_measured(name):
    model, X, y = _models()[name]
    model.fit(X[:1200], y[:1200])
    X_val, y_val = X[1200:2000], y[1200:2000]
    result = btt.prune(
        model, X_val, y_val, tolerance=0.05, X_train=X[:1200], y_train=y[:1200], random_state=0, progress=False
    )
    target = check_target(result.original, y_val, len(y_val))
    for walk in result._walks:
        for row, state in enumerate(walk.states):
            ensemble = engine_state.build_ensemble(result.original, state)
            assert ensemble.n_leaves == walk.path["leaves"].iat[row]
            assert ensemble.n_trees == walk.path["trees"].iat[row]
            metric = engine_metrics.metric_value(result.params["metric"], ensemble, ensemble.predict_raw(X_val), target)
            assert metric == pytest.approx(walk.path["metric"].iat[row], abs=1e-9)


def test_refit_auto_keeps_the_smaller_of_both_walks(lightgbm_binary, binary_data):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    runs = {
        refit: btt.prune(
            lightgbm_binary,
            X_val,
            y_val,
            X_train=X_train,
            y_train=y_train,
            refit=refit,
            reweight=False,
            random_state=0,
            progress=False,
        )
        for refit in ("auto", True, False)
    }
    auto = runs["auto"]
    distilled = "the model's outputs on perturbed X_train"  # re-fitted only (test_model_outputs.py)
    outputs = "the model's outputs on perturbed X_val"
    assert [(walk.ranked_on, walk.refit) for walk in auto._walks] == [
        ("X_train", True),
        ("X_train", False),
        (distilled, True),
        (outputs, True),
    ]
    for walk, refit in zip(auto._walks, (True, False)):
        assert walk.path[["leaves", "metric"]].equals(runs[refit]._walks[0].path[["leaves", "metric"]])
    assert auto._walks[2].path[["leaves", "metric"]].equals(runs[True]._walks[1].path[["leaves", "metric"]])
    assert runs[True]._walks[0].path["leaves"].iat[-1] != runs[False]._walks[0].path["leaves"].iat[-1], (
        "the walks differ"
    )
    # auto walks every walk of refit=True and refit=False's walk on X_train: it keeps the smallest of their models
    kept_values = dataclasses.replace(runs[False], _walks=runs[False]._walks[:1])
    assert auto.ensemble.n_leaves == min(
        runs[True].ensemble.n_leaves, kept_values.choose(auto.params["tolerance"]).ensemble.n_leaves
    )
    chosen = [
        walk for walk in auto._walks if (walk.ranked_on, walk.refit) == (auto.params["ranked_on"], auto.params["refit"])
    ]
    assert auto.path.drop(columns=["elapsed", "within_tolerance"]).equals(chosen[0].path.drop(columns="elapsed"))
    steps = []
    btt.prune(
        lightgbm_binary,
        X_val,
        y_val,
        X_train=X_train,
        y_train=y_train,
        reweight=False,
        random_state=0,
        progress=False,
        callback=lambda row: steps.append((row["walk"], row["step"])),
    )
    assert steps[0] == (0, 0) and (1, 0) in steps and steps[-1][0] == 3
    without_training_rows = btt.prune(lightgbm_binary, X_val, y_val, reweight=False, random_state=0, progress=False)
    # without them, auto re-fits from the model, towards its own outputs on perturbed validation rows
    # (only re-weighted trees walk both ways there)
    assert [(walk.ranked_on, walk.refit) for walk in without_training_rows._walks] == [
        ("the model's outputs on perturbed X_val", True),
    ]


@pytest.mark.parametrize("with_training_rows", [True, False], ids=["X_train", "no X_train"])
def test_metrics_are_measured_on_the_checking_rows(lightgbm_binary, binary_data, with_training_rows):
    # the before/after table is on the rows that checked the tolerance: "before" is the baseline,
    # "after" the chosen point of the path, on every validation row with training rows and on
    # without them too for a boosted model, which ranks on its own outputs (no label ranks)
    X_train, y_train, X_val, y_val, _, _ = binary_data
    training = dict(X_train=X_train, y_train=y_train) if with_training_rows else {}
    result = btt.prune(lightgbm_binary, X_val, y_val, tolerance=0.02, random_state=0, progress=False, **training)
    metric = result.params["metric"]
    checking = len(X_val)
    assert result.metrics["rows"].tolist() == [checking, checking]
    # counts print as counts: integer columns, beside the metrics' floats (also in evaluate's table)
    assert (result.metrics[["leaves", "trees", "depth", "rows"]].dtypes == np.int64).all()
    assert (result.evaluate(X_val, y_val)[["leaves", "depth"]].dtypes == np.int64).all()
    # evaluate's weights are checked as the baselines' are (a string raised float()'s ValueError)
    with pytest.raises(ParameterError, match=r"weights must be three numbers \(accuracy, f1, log_loss\)"):
        result.evaluate(X_val, y_val, weights="a")
    assert result.metrics.loc["before", metric] == pytest.approx(result.params["baseline"], rel=1e-12)
    for chosen in (result, result.choose(0.05)):
        assert chosen.chosen > 0, "a pruned model, not the unpruned one, is measured"
        assert chosen.metrics.loc["after", metric] == pytest.approx(chosen.path["metric"].iat[chosen.chosen], rel=1e-12)
        assert chosen.metrics.loc["after", "trees"] == chosen.ensemble.n_trees


def test_progress_bars_say_which_walk(lightgbm_binary, binary_data, capsys):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    btt.prune(lightgbm_binary, X_val, y_val, X_train=X_train, y_train=y_train, random_state=0, progress=True)
    err = capsys.readouterr().err
    # X_train with and without re-fits, from the model and from re-weighted trees, then the
    # perturbed training rows (from re-weighted trees) and validation rows, re-fitted; tqdm follows
    # each label with ": "
    for label in (
        "walk 1 of up to 6: ranked on X_train, re-fitted",
        "walk 2 of up to 6: ranked on X_train",
        "walk 4 of up to 6: ranked on X_train, from re-weighted trees",
        "walk 5 of up to 6: ranked on the model's outputs on perturbed X_train, from re-weighted trees, re-fitted",
        "walk 6 of up to 6: ranked on the model's outputs on perturbed X_val, re-fitted",
    ):
        assert f"pruning, {label}: " in err
    assert "pruning, ranked on X_train: the trees' weights, L1 path: " in err  # the re-weighted start's fits


def test_path_choose_and_plot(lightgbm_binary, binary_data):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    result = btt.prune(lightgbm_binary, X_val, y_val, X_train=X_train, y_train=y_train, random_state=0, progress=False)
    path = result.path
    assert list(path.columns[:6]) == ["step", "leaves", "trees", "nodes", "metric", "metric_se"]
    assert path["leaves"].iat[0] == result.original.n_leaves
    assert np.all(np.diff(path["leaves"].to_numpy()) <= 0), "every step removes leaves"
    assert result.path["within_tolerance"].iat[result.chosen]
    assert result.ensemble.n_leaves == path["leaves"].iat[result.chosen]
    assert result.ensemble.n_leaves == path.loc[path["within_tolerance"], "leaves"].min()
    assert result.params["warnings"] == ()
    looser = result.choose(0.05)
    assert looser.ensemble.n_leaves <= result.ensemble.n_leaves
    walks = [walk.path[["leaves", "metric"]] for walk in result._walks]
    assert any(looser.path[["leaves", "metric"]].equals(walk) for walk in walks), "no rerun"
    strict = result.choose(0.0)
    bound = result.params["baseline"]
    assert (
        engine_metrics.smoothed_metric(strict.path, strict.chosen) - strict.path["metric_se"].iat[strict.chosen]
        >= bound - 1e-12
    )
    assert set(result.metrics.index) == {"before", "after"}
    assert result.metrics.loc["after", "leaves"] == result.ensemble.n_leaves
    # one row per walk, each with its own smallest model within the tolerance; the chosen one is the smallest
    walks = result.walks
    assert len(walks) == len(result._walks) > 1 and walks["chosen"].sum() == 1
    chosen_walk = walks[walks["chosen"]].iloc[0]
    assert chosen_walk["leaves"] == result.ensemble.n_leaves == walks["leaves"].min()
    assert (
        chosen_walk["trees"] == result.ensemble.n_trees and chosen_walk["metric"] == path["metric"].iat[result.chosen]
    )
    assert (chosen_walk["ranked_on"], chosen_walk["refit"], chosen_walk["reweighted"]) == (
        result.params["ranked_on"],
        result.params["refit"],
        result.params["reweighted"],
    )
    assert walks["steps"].tolist() == [len(walk.path) - 1 for walk in result._walks]
    looser_walks = looser.walks  # at the looser result's own tolerance: no walk's smallest model grows
    assert (looser_walks["leaves"] <= walks["leaves"]).all()
    import matplotlib

    matplotlib.use("Agg")
    ax = result.plot().axes[0]
    assert ax.get_xscale() == "log"
    legend = " ".join(text.get_text() for text in ax.get_legend().get_texts())
    assert "chosen" in legend and "other walks" in legend and "margin: 2 standard errors" in legend
    band = ax.collections[0].get_paths()[0].vertices[:, 1]  # the margin's band reaches down to what is held
    held = [
        engine_metrics.smoothed_metric(result.path, row) - 2 * result.path["metric_se"].iat[row]
        for row in range(len(result.path))
    ]
    assert band.min() == pytest.approx(min(held))
    grey = [line for line in ax.get_lines() if line.get_color() == "tab:grey" and line.get_linestyle() == "-"]
    assert len(result._walks) > 1 and len(grey) == len(result._walks) - 1
    assert repr(result).startswith("PrunePathResult(method='prune'")
    # Jupyter's view: the same first line, the metrics and the validation change as HTML tables
    page = result._repr_html_()
    assert page.startswith("<pre>PrunePathResult(method=&#x27;prune&#x27;") and page.count("<table") == 2
    assert "worst_plausible" in page and f"{result.metrics.loc['after', 'log_loss']:.4f}" in page


def test_margin_holds_the_chosen_model_that_many_standard_errors_inside(lightgbm_binary, binary_data):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    kwargs = dict(tolerance=0.01, X_train=X_train, y_train=y_train, random_state=0, progress=False)
    default = btt.prune(lightgbm_binary, X_val, y_val, **kwargs)
    assert default.params["margin"] == 2.0
    bound = default.metric_bound
    leaves = []
    for margin in (3.0, 2.0, 1.0, 0.0):
        chosen = default.choose(0.01, margin=margin)
        leaves.append(chosen.ensemble.n_leaves)
        assert chosen.params["margin"] == margin
        row = chosen.chosen
        held = engine_metrics.smoothed_metric(chosen.path, row) - margin * chosen.path["metric_se"].iat[row]
        assert row == 0 or held >= bound - 1e-12
        # the smallest such model: no smaller one of its walk is held inside the bound
        smaller = chosen.path["leaves"] < chosen.path["leaves"].iat[row]
        assert not chosen.path.loc[smaller, "within_tolerance"].any()
    assert leaves == sorted(leaves, reverse=True)  # a smaller margin, a model as small or smaller
    assert leaves[1] == default.ensemble.n_leaves
    plain = default.choose(0.01, margin=0.0)
    assert plain.ensemble.n_leaves < default.ensemble.n_leaves  # this case prunes further without the margin
    rerun = btt.prune(lightgbm_binary, X_val, y_val, margin=0.0, **kwargs)
    assert rerun.ensemble.n_leaves == plain.ensemble.n_leaves and rerun.params["margin"] == 0.0
    assert default.choose(0.01).params["margin"] == 2.0  # None keeps the result's margin
    for margin in (-1.0, float("nan"), float("inf"), "two", True):
        with pytest.raises(ParameterError, match="margin"):
            btt.prune(lightgbm_binary, X_val, y_val, margin=margin, progress=False)
        with pytest.raises(ParameterError, match="margin"):
            default.choose(0.01, margin=margin)
    # a tolerance of 1 or more spans all of [0, 1]: a percentage given for a fraction (5 for 0.05)
    message = r"tolerance=5 spans the whole range of balanced_accuracy .* 0.05 is five points"
    with pytest.raises(ParameterError, match=message):
        btt.prune(lightgbm_binary, X_val, y_val, tolerance=5, progress=False)
    with pytest.raises(ParameterError, match=message):
        default.choose(5)


def test_a_search_that_keeps_the_whole_model_says_why():
    X, y = classification(3000)
    model = lgb.LGBMClassifier(n_estimators=20, num_leaves=7, verbose=-1, random_state=0).fit(X[:2000], y[:2000])
    with pytest.warns(
        UserWarning,
        match=r"kept the unpruned model.*after the first step the change was "
        r"[-+]\d\.\d{4}, with a standard error of \d\.\d{4}.*X_train and y_train",
    ):
        result = btt.prune(model, X[2000:2600], y[2000:2600], tolerance=0.0, random_state=0, progress=False)
    assert result.chosen == 0 and result.ensemble.n_leaves == result.original.n_leaves
    assert len(result.params["warnings"]) == 1
    # the note belongs to the choice: a looser tolerance that prunes carries none
    looser = result.choose(0.05)
    assert looser.ensemble.n_leaves < result.original.n_leaves and looser.params["warnings"] == ()


@pytest.mark.parametrize(
    "n_rows, sampled_from, first_batch",
    [
        # the search's row thresholds scaled down: the same walks on a fifth of the rows
        pytest.param(22_000, 4_000, 200, id="thresholds scaled down"),
        pytest.param(102_000, None, None, id="thresholds as shipped", marks=pytest.mark.slow),
    ],
)
def test_bandit_with_a_full_budget_walks_the_exact_path(n_rows, sampled_from, first_batch, monkeypatch):
    if sampled_from is not None:
        monkeypatch.setattr(engine_search, "SAMPLED_FROM", sampled_from)
        monkeypatch.setattr(engine_search, "FIRST_BATCH", first_batch)
        monkeypatch.setattr(engine_search, "ROWS_PER_CANDIDATE", 40)  # scaled as SAMPLED_FROM is
    X, y = classification(n_rows, seed=5)
    model = lgb.LGBMClassifier(n_estimators=20, num_leaves=15, verbose=-1, random_state=0).fit(X[:2000], y[:2000])
    # without training rows half of the validation rows rank: 10,000 (50,000 as shipped), enough to sample
    X, y = X[2000:], y[2000:]
    exact = btt.prune(model, X, y, search="exact", random_state=3, progress=False)
    bandit = btt.prune(model, X, y, search="bandit", confidence=np.inf, random_state=3, progress=False)
    pd.testing.assert_frame_equal(exact.path.drop(columns="elapsed"), bandit.path.drop(columns="elapsed"))
    assert exact.ensemble.n_leaves == bandit.ensemble.n_leaves
    # its samples, then the rows left: every row read once, as the exact search reads them
    assert bandit.params["row_evaluations"] == exact.params["row_evaluations"]
    fast = btt.prune(model, X, y, random_state=3, progress=False)
    assert fast.params["row_evaluations"] < exact.params["row_evaluations"]
    for result in (exact, bandit, fast):  # the part of the time the search took, not a speed check
        assert 0.0 < result.params["scoring_seconds"] < result.elapsed
    # the unpruned model's summary, from the leaves the walks routed, is the one predict_raw gives
    assert fast._before == exact._before == fast._summary(exact.original, *exact._checking)


def _forest_with_rows():
    """A forest of 10 trees of depth 8 and ``prune``'s rows for it: its 6,000 training rows, 3,000 validation rows."""
    X, y = classification(9000, seed=6)
    forest = RandomForestClassifier(n_estimators=10, max_depth=8, random_state=0).fit(X[:6000], y[:6000])
    return forest, dict(
        X_val=X[6000:], y_val=y[6000:], X_train=X[:6000], y_train=y[:6000], random_state=3, progress=False
    )


def test_a_forests_walks_by_either_loss_sample_and_with_a_full_budget_walk_the_exact_path(monkeypatch):
    """A bootstrapped forest with its own training rows walks out of bag by the log-loss and by
    the squared error of its class fractions; the bandit samples both (the thresholds scaled
    down 10x), and with a full budget every walk is the exact search's."""
    monkeypatch.setattr(engine_search, "SAMPLED_FROM", 4_000)
    monkeypatch.setattr(engine_search, "FIRST_BATCH", 200)
    monkeypatch.setattr(engine_search, "ROWS_PER_CANDIDATE", 0)  # however many candidates beside the rows
    forest, rows = _forest_with_rows()
    exact = btt.prune(forest, search="exact", **rows)
    bandit = btt.prune(forest, search="bandit", confidence=np.inf, **rows)
    assert [walk.ranked_on for walk in exact._walks] == [
        "X_train, out of bag",
        "X_train, out of bag, by squared error",
    ]
    for by_rows, sampled in zip(exact._walks, bandit._walks):
        assert by_rows.ranked_on == sampled.ranked_on
        pd.testing.assert_frame_equal(by_rows.path.drop(columns="elapsed"), sampled.path.drop(columns="elapsed"))
    assert bandit.params["row_evaluations"] == exact.params["row_evaluations"]


def test_a_forest_of_many_candidates_beside_its_rows_is_not_sampled(monkeypatch):
    """Each batch of the bandit reads every candidate: where an exact step's rows times live
    trees are fewer than ``ROWS_PER_CANDIDATE`` times the candidates (here 6,000 rows times 10
    trees, against 1,000 times the hundreds of candidates of trees of depth 8), the default
    search scores every row, as the exact search does, in every walk."""
    monkeypatch.setattr(engine_search, "SAMPLED_FROM", 4_000)
    monkeypatch.setattr(engine_search, "FIRST_BATCH", 200)
    forest, rows = _forest_with_rows()
    exact = btt.prune(forest, search="exact", **rows)
    default = btt.prune(forest, **rows)
    assert default.params["search"] == "bandit"
    assert default.params["row_evaluations"] == exact.params["row_evaluations"]
    for by_rows, by_default in zip(exact._walks, default._walks, strict=True):
        pd.testing.assert_frame_equal(by_rows.path.drop(columns="elapsed"), by_default.path.drop(columns="elapsed"))


def test_a_sampled_step_takes_no_candidate_its_samples_did_not_reach(monkeypatch):
    """A fully grown forest's deep nodes hold a few rows each, and a first batch of 50 rows
    misses most of them: with no confidence asked for (the first batch decides), a step of
    30% of the leaves takes only candidates that batch reached (there are enough of them), not
    the unreached ones as free, as it did before they went last."""
    monkeypatch.setattr(engine_search, "SAMPLED_FROM", 1_000)
    monkeypatch.setattr(engine_search, "FIRST_BATCH", 50)
    monkeypatch.setattr(engine_search, "ROWS_PER_CANDIDATE", 0)  # sampled, however many candidates
    ensemble, rows = _fitted_with_walk_rows(RandomForestClassifier(n_estimators=5, random_state=0), seed=7)
    search = engine_search._Search(ensemble, *rows, "accuracy", "bandit", 0.0, False)
    ids, _ = search.candidates()
    chosen, candidate_value = search.choose_step(0.3 * search.size()["leaves"])
    _, _, reached = search.costs(np.arange(50), candidate_value)
    assert chosen is not None and len(chosen) > 0
    assert np.all(reached[chosen] > 0)
    assert np.count_nonzero(reached[ids] == 0) > len(chosen)  # unreached candidates were there to take


def test_row_sets_route_their_first_rows_on_first_use(lightgbm_binary, binary_data):
    ensemble = btt.from_model(lightgbm_binary)
    X_val = ensemble.check_X(binary_data[2])
    target = check_target(ensemble, binary_data[3], X_val.shape[0])
    order = np.random.default_rng(0).permutation(X_val.shape[0])
    rows = engine_search._RowSet(ensemble, X_val, order, target)
    np.testing.assert_array_equal(rows.target.codes, target.codes[order])
    assert rows.routed == 0
    assert rows.leaves(10).dtype == np.int8 and rows.routed == 10  # trees of at most 127 nodes
    np.testing.assert_array_equal(rows.leaves(5)[:, :10], ensemble.apply(X_val[order[:10]]).T)
    assert rows.routed == 10
    # from the leaves, the rows not yet routed routed now: the same bits
    np.testing.assert_array_equal(rows.predict_raw(), ensemble.predict_raw(X_val[order]))
    assert rows.routed == len(order)
    np.testing.assert_array_equal(rows.leaves(), ensemble.apply(X_val[order]).T)


def test_sorted_prefixes_start_the_full_stable_order_ties_and_nan_included():
    rng = np.random.default_rng(3)
    key = rng.integers(0, 40, 5_000).astype(np.float64)  # many ties
    key[rng.random(5_000) < 0.1] = np.nan
    key[(key == 0.0) & (rng.random(5_000) < 0.5)] = -0.0  # ties with 0.0 in the full order
    full = np.argsort(key, kind="stable")
    numbers = int(np.count_nonzero(~np.isnan(key)))
    for k in (0, 1, 17, 999, numbers - 1, numbers, 4_999, 5_000, 9_000):
        orders = list(engine_search._stable_order_prefixes(key, [k]))
        np.testing.assert_array_equal(orders[-1], full)
        if k < numbers:  # the k-th smallest key is a number: a prefix comes first, cut among its ties
            assert len(orders) == 2 and orders[0].shape[0] == k + 1
            np.testing.assert_array_equal(orders[0], full[: k + 1])
        else:
            assert len(orders) == 1
    # longer prefixes after shorter ones, each the start of the full order; none that adds nothing
    orders = list(engine_search._stable_order_prefixes(key, [10, 10, 12, 1_000, numbers + 5]))
    sizes = [order.shape[0] for order in orders]
    assert sizes == [11, 13, 1_001, key.shape[0]]
    for order in orders:
        np.testing.assert_array_equal(order, full[: order.shape[0]])


def test_kth_smallest_is_the_partitions_with_and_without_a_tied_class_at_the_rank():
    rng = np.random.default_rng(4)
    distinct = rng.normal(size=10_000)  # the sample's guess misses: np.partition answers
    tied = np.where(rng.random(10_000) < 0.6, 0.0, distinct)  # 0 holds the middle ranks: the guess answers
    tied[(tied == 0.0) & (rng.random(10_000) < 0.5)] = -0.0
    tied[rng.random(10_000) < 0.05] = np.nan
    for key in (distinct, tied):
        for k in (0, 1, 2_500, 5_000, 9_000, 9_999):
            np.testing.assert_array_equal(engine_search._kth_smallest(key, k), np.partition(key, k)[k])


@pytest.mark.parametrize("prefixes", [(0,), (0, 1, 4), (4,)])
def test_steps_from_a_sorted_prefix_are_the_steps_from_the_full_order(prefixes, monkeypatch):
    """A prefix too short for the step falls back to a longer one, or the full order; all choose the same removals."""
    from sklearn.ensemble import RandomForestClassifier

    X, y = classification(4_400, seed=2)
    ensemble = btt.from_model(RandomForestClassifier(n_estimators=6, random_state=0).fit(X[:4_000], y[:4_000]))
    target = check_target(ensemble, y[4_000:], 400)
    rows = walk_rows(
        ensemble,
        ensemble.check_X(X[4_000:]),
        target,
        ensemble.check_X(X[:4_000]),
        check_target(ensemble, y[:4_000], 4_000),
        np.random.default_rng(0),
    )
    search = engine_search._Search(ensemble, *rows, "accuracy", "exact", 3.0, False)
    ids, benefit = search.candidates()
    assert ids.size > 1_000  # more candidates than the shortest prefix sorts
    cost, square, _ = search.costs(np.arange(search.n_rank), search.candidate_values())
    key = engine_search._pessimistic(cost[ids], square[ids])
    monkeypatch.setattr(engine_search, "SORTED_PREFIXES", prefixes)
    for budget in (1, 25, 0.4 * benefit.sum(), 10 * benefit.sum()):
        expected, _ = engine_kernels.select_disjoint(
            np.argsort(key / np.maximum(benefit, 1.0), kind="stable"),
            ids,
            benefit,
            search.is_root,
            search.subtree_span,
            search.preorder_nodes,
            search.parent,
            search.offset,
            search.tree_of,
            ensemble.n_trees,
            float(budget),
        )
        np.testing.assert_array_equal(search.select(ids, benefit, key, budget), expected)


def _fitted_with_walk_rows(model, seed, classes=2):
    """``model`` fitted on 2,000 rows and imported, and the rows of a walk
    ranked on those rows that 1,000 others check."""
    X, y = classification(3_000, seed=seed, classes=classes)
    ensemble = btt.from_model(model.fit(X[:2_000], y[:2_000]))
    rows = walk_rows(
        ensemble,
        ensemble.check_X(X[2_000:]),
        check_target(ensemble, y[2_000:], 1_000),
        ensemble.check_X(X[:2_000]),
        check_target(ensemble, y[:2_000], 2_000),
        np.random.default_rng(0),
    )
    return ensemble, rows


@pytest.mark.parametrize("kind, refit", [("forest", False), ("boosted", False), ("boosted", True)])
def test_steps_update_the_leaf_counts_internal_nodes_and_value_table_as_the_state_gives_them(kind, refit):
    """``apply`` updates in place what the next step reads; after every step
    (collapses, removed trees, re-fitted leaves) it is what the state alone
    gives for the model as pruned so far (pre-order sums over its standing
    leaves, ``value[current]``)."""
    if kind == "forest":
        model = RandomForestClassifier(n_estimators=12, max_depth=8, random_state=0)
    else:
        model = lgb.LGBMClassifier(n_estimators=10, num_leaves=15, verbose=-1, random_state=0)
    ensemble, rows = _fitted_with_walk_rows(model, seed=5, classes=3)
    search = engine_search._Search(ensemble, *rows, "accuracy", "exact", 3.0, refit)
    node = np.arange(search.offset[-1])
    for _ in range(12):
        chosen, candidate_value = search.choose_step(max(1.0, 0.2 * search.size()["leaves"]))
        search.apply(chosen, candidate_value)
        count, internal = search._leaf_counts_and_internal()
        # the same from the state alone: a node stands where no collapsed ancestor stands for it
        standing = search.alive[search.tree_of] & (search.current == node)
        at_leaf = standing & ((search.children_left == -1) | search.collapsed)
        leaves_before = np.concatenate([[0], np.cumsum(at_leaf[search.preorder_nodes])])
        span = search.subtree_span
        np.testing.assert_array_equal(internal, standing & ~at_leaf)
        np.testing.assert_array_equal(
            count[standing], (leaves_before[span[:, 1]] - leaves_before[span[:, 0]])[standing]
        )
        live = search.alive[search.tree_of]
        np.testing.assert_array_equal(search._value_table()[:, live], search.value[search.current].T[:, live])
    assert search.collapsed.any() and internal.any()  # it collapsed nodes, and stopped short of stumps
    assert not search.alive.all() or kind == "boosted"  # a forest lost trees


@pytest.mark.parametrize("kind", ["boosted", "forest"])
def test_walks_sharing_one_layout_leave_it_as_built(kind):
    """``prune``'s walks share one read-only layout of the model's nodes (a
    forest's walks its stored values too): a walk that collapses nodes and
    re-fits leaves leaves it as it was built, and the next walk on it takes
    the path that a walk on a layout of its own takes."""
    if kind == "forest":
        model = RandomForestClassifier(n_estimators=8, max_depth=8, random_state=0)
    else:
        model = lgb.LGBMClassifier(n_estimators=20, num_leaves=15, verbose=-1, random_state=0)
    ensemble, rows = _fitted_with_walk_rows(model, seed=4)
    layout = engine_search.node_layout(ensemble)
    built = copy.deepcopy(layout)
    paths = []
    for shared in (layout, layout, None):
        search = engine_search._Search(ensemble, *rows, "accuracy", "exact", 3.0, True, layout=shared)
        path, _ = search.run(search.metric_value() - 0.05, False, None, 0.0)
        paths.append(path.drop(columns="elapsed"))
    for name, array in built._asdict().items():
        np.testing.assert_array_equal(getattr(layout, name), array, err_msg=name)
    assert len(paths[0]) > 3 and paths[0]["leaves"].iat[-1] < ensemble.n_leaves  # it walked
    pd.testing.assert_frame_equal(paths[0], paths[1])
    pd.testing.assert_frame_equal(paths[0], paths[2])


def test_trees_of_more_nodes_than_int16_holds_store_int32_leaves_and_prune():
    from sklearn.tree import DecisionTreeRegressor

    X, y = make_regression(24_000, 4, noise=30.0, random_state=0)
    deep = DecisionTreeRegressor(random_state=0).fit(X[:20_000], y[:20_000])  # a leaf per row or two
    shallow = DecisionTreeRegressor(max_depth=8, random_state=0).fit(X[:20_000], y[:20_000])
    assert deep.tree_.node_count > np.iinfo(np.int16).max
    assert engine_search.leaf_dtype(btt.from_model(deep)) == np.int32
    assert engine_search.leaf_dtype(btt.from_model(shallow)) == np.int16
    stump_like = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X[:20_000], y[:20_000])  # 127 nodes
    assert engine_search.leaf_dtype(btt.from_model(stump_like)) == np.int8
    ensemble = btt.from_model(deep)
    X_val = ensemble.check_X(X[20_000:])
    target = check_target(ensemble, y[20_000:], X_val.shape[0])
    rows = engine_search._RowSet(ensemble, X_val, np.arange(X_val.shape[0]), target)
    assert rows.leaves().dtype == np.int32
    np.testing.assert_array_equal(rows.leaves().T, ensemble.apply(X_val))
    result = btt.prune(
        deep,
        X[20_000:],
        y[20_000:],
        X_train=X[:20_000],
        y_train=y[:20_000],
        tolerance=0.05,
        random_state=0,
        progress=False,
    )
    assert result.ensemble.n_leaves < ensemble.n_leaves
    np.testing.assert_array_equal(result.to_model().predict(X[20_000:]), result.ensemble.predict(X[20_000:]))


def test_costs_equal_brute_force_for_squared_loss_and_fractions():
    from sklearn.ensemble import RandomForestClassifier

    Xr, yr = make_regression(600, 5, noise=5.0, random_state=0)
    X, y = classification(600, seed=4)
    cases = [
        (lgb.LGBMRegressor(n_estimators=5, num_leaves=8, verbose=-1).fit(Xr[:300], yr[:300]), Xr[300:], yr[300:]),
        (RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0).fit(X[:300], y[:300]), X[300:], y[300:]),
        # a collapse in one of 4 trees moves a row's class fraction by up to a quarter: a third of
        # the (row, ancestor) pairs lie past the reach of kernels._log_ratio's series (np.log takes
        # those); in one of 30 trees, 0.2% do
        (RandomForestClassifier(n_estimators=30, max_depth=8, random_state=0).fit(X[:300], y[:300]), X[300:], y[300:]),
    ]
    for model, X_val, y_val in cases:
        ensemble = btt.from_model(model)
        target = check_target(ensemble, y_val, len(y_val))
        rows = walk_rows(
            ensemble,
            ensemble.check_X(X_val),
            target,
            ensemble.check_X(X_val[:150]),
            check_target(ensemble, y_val[:150], 150),
            np.random.default_rng(0),
        )
        search = engine_search._Search(
            ensemble, *rows, "r2" if target.n_classes == 0 else "accuracy", "exact", 3.0, False
        )
        ids, _ = search.candidates()
        values = search.candidate_values()
        search.costs(np.arange(7, 40), values)  # leaves the search's scratch sums of other rows behind
        cost, square, _ = (np.array(part) for part in search.costs(np.arange(search.n_rank), values))
        uncounted = search.costs(np.arange(search.n_rank), values, count=False)  # as an exact step calls it
        assert uncounted[2] is None
        np.testing.assert_array_equal(uncounted[0][ids], cost[ids])
        np.testing.assert_array_equal(uncounted[1][ids], square[ids])
        loss_now = _loss(ensemble, ensemble.predict_raw(X_val[:150]), target, rows=slice(0, 150))
        for node in ids[:: max(1, len(ids) // 12)]:
            tree = int(search.tree_of[node])
            local = int(node - search.offset[tree])
            if search.is_root[node] and ensemble.aggregation == "mean":
                trees = [t for i, t in enumerate(ensemble.trees) if i != tree]
                changed = _replace_trees(ensemble, trees, keep=[i for i in range(ensemble.n_trees) if i != tree])
            else:
                changed = btt.collapse(ensemble, {tree: [local]}) if not search.is_root[node] else None
                if changed is None:
                    continue
                trees = list(changed.trees)
                trees[tree] = trees[tree]._replace(
                    value=_value_after(changed.trees[tree], ensemble.trees[tree], local, values[node])
                )
                changed = changed.replace_trees(trees)
            after = _loss(changed, changed.predict_raw(X_val[:150]), target, rows=slice(0, 150))
            assert cost[node] == pytest.approx(after - loss_now, rel=1e-9, abs=1e-9)


def test_tree_removal_costs_of_a_fully_grown_forest_equal_brute_force():
    """A fully grown forest's leaves are mostly pure (class fractions 0 and 1), whose
    removal costs the kernel takes from each row's two precomputed changes."""
    from sklearn.ensemble import RandomForestClassifier

    X, y = classification(600, seed=5, classes=3)
    model = RandomForestClassifier(n_estimators=6, random_state=0).fit(X[:300], y[:300])
    ensemble = btt.from_model(model)
    target = check_target(ensemble, y[300:], 300)
    X_val = ensemble.check_X(X[300:])
    rows = walk_rows(ensemble, X_val, target, X_val, target, np.random.default_rng(0))
    search = engine_search._Search(ensemble, *rows, "accuracy", "exact", 3.0, False)
    pure = np.isin(np.asarray(ensemble.trees[0].value), (0.0, 1.0)).all(axis=1)
    assert pure[ensemble.trees[0].children_left == -1].mean() > 0.5, "most leaves are pure"
    cost, _, _ = search.costs(np.arange(search.n_rank), search.candidate_values())
    loss_now = _loss(ensemble, ensemble.predict_raw(X[300:]), target, rows=slice(0, 300))
    for tree in range(ensemble.n_trees):
        keep = [i for i in range(ensemble.n_trees) if i != tree]
        changed = _replace_trees(ensemble, [ensemble.trees[i] for i in keep], keep=keep)
        after = _loss(changed, changed.predict_raw(X[300:]), target, rows=slice(0, 300))
        assert cost[search.offset[tree]] == pytest.approx(after - loss_now, rel=1e-9, abs=1e-9)


def test_one_leaf_trees_without_covers_leave_the_recorded_covers_in_use():
    """LightGBM records no cover for the one-leaf trees of a class it stopped
    growing; the other trees' covers still give the collapsed values (the
    fitting rows' hessians took over for the whole model before, and a
    3,000-tree model's prune three times as long)."""
    X, y = make_classification(
        200, 5, n_informative=3, n_classes=3, n_clusters_per_class=1, class_sep=3.0, random_state=0
    )
    ensemble = btt.from_model(lgb.LGBMClassifier(n_estimators=100, num_leaves=4, verbose=-1).fit(X, y))
    stopped = [tree for tree in ensemble.trees if not np.all(np.isfinite(tree.weighted_n_node_samples))]
    assert stopped and all(tree.n_nodes == 1 for tree in stopped)
    target = check_target(ensemble, y, len(y))
    rows = walk_rows(ensemble, ensemble.check_X(X), target, ensemble.check_X(X), target, np.random.default_rng(0))
    search = engine_search._Search(ensemble, *rows, "accuracy", "exact", 3.0, False)
    assert search.cover is not None
    values = search.candidate_values()
    tree = next(index for index, tree in enumerate(ensemble.trees) if tree.n_nodes > 3)
    stored, offset = ensemble.trees[tree], search.offset[tree]
    leaves = np.flatnonzero(stored.children_left == -1)
    cover = np.asarray(stored.weighted_n_node_samples)[leaves]
    root_value = np.sum(cover * np.asarray(stored.value)[leaves, 0]) / cover.sum()
    assert values[offset, 0] == pytest.approx(root_value, rel=1e-12)


@pytest.mark.parametrize("kind", ["forest regression", "forest classes", "forest classes, squared error", "boosted"])
def test_costs_after_steps_do_not_depend_on_earlier_calls(kind):
    """The costs' buffers are kept from call to call and only the live
    trees' roots and internal nodes are rewritten: a walk's costs after a few
    steps (nodes collapsed, trees removed) equal those of a search that took
    the same steps without computing a cost before, and the scratch sums are
    left all zero."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    Xr, yr = make_regression(600, 5, noise=5.0, random_state=0)
    X, y = classification(600, seed=5)
    model, X_fit, y_fit, metric = {
        "forest regression": (RandomForestRegressor(n_estimators=6, max_depth=6, random_state=0), Xr, yr, "r2"),
        "forest classes": (RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0), X, y, "accuracy"),
        "forest classes, squared error": (
            RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0),
            X,
            y,
            "accuracy",
        ),
        "boosted": (lgb.LGBMClassifier(n_estimators=8, num_leaves=8, verbose=-1), X, y, "accuracy"),
    }[kind]
    ensemble = btt.from_model(model.fit(X_fit[:300], y_fit[:300]))
    X_val, y_val = ensemble.check_X(X_fit[300:]), y_fit[300:]
    target = check_target(ensemble, y_val, len(y_val))

    def search():
        rows = walk_rows(ensemble, X_val, target, X_val, target, np.random.default_rng(0))
        squares = kind.endswith("squared error")
        return engine_search._Search(ensemble, *rows, metric, "exact", 3.0, False, fraction_squares=squares)

    walk, steps = search(), []
    for _ in range(4):
        chosen, values = walk.choose_step(0.3 * walk.size()["leaves"])
        walk.apply(chosen, values)
        steps.append((chosen, values))
    assert not walk.alive.all() and walk.collapsed.any()
    replay = search()
    for chosen, values in steps:
        replay.apply(chosen, values)
    ids, _ = walk.candidates()
    values = walk.candidate_values()
    walk.costs(np.arange(5, 60), values)  # other rows' sums in the kept buffers
    kept = [np.array(part[ids]) for part in walk.costs(np.arange(walk.n_rank), values)]
    fresh = replay.costs(np.arange(replay.n_rank), replay.candidate_values())
    for kept_part, fresh_part in zip(kept, fresh):
        np.testing.assert_array_equal(kept_part, fresh_part[ids])
    assert not walk._moment.any() and not walk._held.any()


def test_sum_of_squared_changes_is_never_negative_when_changes_cancel():
    """The kernel sums squared changes from per-leaf moments; where each
    row's change is zero the moments cancel and rounding must not leave a
    negative sum (its square root, the candidate's spread, was NaN)."""
    rng = np.random.default_rng(0)
    n = 50
    offset, parent, current = np.array([0, 3]), np.array([-1, 0, 0]), np.arange(3)
    value = np.array([[0.0], [0.3], [-0.2]])
    leaf = np.ones((1, n), dtype=np.int32)  # every row in leaf 1
    for _ in range(100):
        candidate = np.array([[rng.normal()], [0.0], [0.0]])
        raw = rng.normal(size=(n, 1))
        targets = raw + (candidate[0, 0] - value[1, 0]) / 2  # collapsing the root leaves each row's loss as it is
        model = engine_kernels.PrunedModel(
            offset,
            parent,
            current,
            value,
            np.zeros(1, np.int64),
            np.ones(1),
            np.ones(1, bool),
            np.array([1, 0, 0], bool),
        )
        on = engine_kernels.RankRows(
            leaf,
            np.ones(n),
            raw,
            np.zeros(n, np.int64),
            targets,
            engine_kernels.SQUARED,
            np.empty((n, 1)),
            np.empty((n, 1)),
        )
        _, square, reached = engine_kernels.collapse_costs(
            np.arange(n),
            model,
            candidate,
            on,
            np.zeros((3, 5)),
            np.zeros(3, np.int64),
            engine_kernels.Costs(np.full(3, np.nan), np.full(3, np.nan), np.full(3, -1)),  # overwritten at the root
        )
        assert reached[0] == n
        assert 0.0 <= square[0] < 1e-12


def _loss(ensemble, raw, target, rows):
    kind = engine_search._loss_kind(ensemble)
    if kind == engine_kernels.SQUARED:
        return float(np.sum((raw[:, 0] - target.values[rows]) ** 2))
    codes = target.codes[rows]
    return float(-np.sum(np.log(np.clip(raw[np.arange(len(codes)), codes], 1e-15, 1 - 1e-15))))


def _value_after(collapsed_tree, original_tree, node, value):
    """The collapsed tree's value array with the collapsed node (its id in the compact tree) set to ``value``."""
    out = np.array(collapsed_tree.value)
    # the collapsed node keeps its relative order among kept nodes
    keep = np.zeros(original_tree.n_nodes, dtype=bool)
    keep[0] = True
    for i in range(original_tree.n_nodes):
        if keep[i] and original_tree.children_left[i] != -1 and i != node:
            keep[original_tree.children_left[i]] = keep[original_tree.children_right[i]] = True
    out[int(np.count_nonzero(keep[:node]))] = value
    return out


def _replace_trees(ensemble, trees, keep):
    from dataclasses import replace

    return replace(
        ensemble, trees=tuple(trees), tree_output=ensemble.tree_output[keep], tree_scale=ensemble.tree_scale[keep]
    )


def test_callback_sees_every_step_and_can_stop(lightgbm_binary, binary_data):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    seen = []

    def callback(row):
        seen.append(row)
        return row["step"] == 2

    result = btt.prune(
        lightgbm_binary,
        X_val,
        y_val,
        X_train=X_train,
        y_train=y_train,
        callback=callback,
        progress=False,
        random_state=0,
    )
    assert [row["step"] for row in seen] == [0, 1, 2]
    assert len(result.path) == 3
    assert set(seen[0]) >= {"step", "leaves", "trees", "nodes", "metric", "elapsed"}


def test_same_random_state_same_path(lightgbm_binary, binary_data):
    _, _, X_val, y_val, _, _ = binary_data
    # every random_state the shared rule accepts (check_random_state) gives a reproducible path
    for make in (lambda: 7, lambda: np.random.RandomState(7), lambda: np.random.default_rng(7)):
        one = btt.prune(lightgbm_binary, X_val, y_val, random_state=make(), progress=False)
        two = btt.prune(lightgbm_binary, X_val, y_val, random_state=make(), progress=False)
        pd.testing.assert_frame_equal(one.path.drop(columns="elapsed"), two.path.drop(columns="elapsed"))


def test_one_class_in_y_val_is_named_by_the_users_label():
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(600, 5, random_state=0)
    labels = np.array(["cat", "dog", "eel"])[np.arange(600) % 3]
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, labels)
    with pytest.raises(DataError, match=r"y_val holds one class only \(\['dog'\] of the model's 3\)"):
        btt.prune(model, X[:100], np.array(["dog"] * 100), progress=False)


@pytest.mark.parametrize("kind", ["lightgbm with training rows", "forest measured by walks side by side"])
def test_the_path_does_not_depend_on_the_number_of_threads(binary_data, kind):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    if kind == "lightgbm with training rows":
        model = lgb.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1, random_state=0).fit(X_train, y_train)
        rows = dict(X_train=X_train, y_train=y_train)
    else:  # from the validation rows alone: the walks on their halves run on threads of their own
        model = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=0).fit(X_train, y_train)
        rows = {}
    threads = numba.get_num_threads()
    paths = []
    for n_jobs in (1, -1):
        result = btt.prune(model, X_val, y_val, **rows, random_state=0, progress=False, n_jobs=n_jobs)
        assert numba.get_num_threads() == threads  # the caller's count is restored
        paths.append(
            pd.concat([walk.path.drop(columns="elapsed") for walk in result._walks], keys=range(len(result._walks)))
        )
    pd.testing.assert_frame_equal(*paths)
    for n_jobs in (0, "two", 1.5):
        with pytest.raises(ParameterError, match="n_jobs"):
            btt.prune(model, X_val, y_val, n_jobs=n_jobs, progress=False)


def _refit_pass_by_numpy(leaf, offset, value, tree_output, alive, raw, codes, targets, loss, scale, reg_lambda, step):
    """One backfitting pass of the logistic loss (one raw column), the
    softmax or the Poisson loss, tree after tree, row sums in plain order,
    every exponential computed afresh from the scores."""
    for tree in np.flatnonzero(alive):
        k, nodes = tree_output[tree], offset[tree] + leaf[tree]
        if loss == engine_kernels.POISSON:
            mu = np.exp(raw[:, k])
            grad, hess = mu - targets[:, 0], mu
        else:
            if loss == engine_kernels.LOGISTIC:
                with np.errstate(over="ignore"):
                    p, label = 1.0 / (1.0 + np.exp(-scale * raw[:, k])), codes
            else:
                exponential = np.exp(raw - raw.max(axis=1, keepdims=True))
                p, label = exponential[:, k] / exponential.sum(axis=1), (codes == k).astype(float)
            grad, hess = scale * (p - label), np.maximum(scale * scale * p * (1 - p), 1e-16)
        grad = np.bincount(nodes, grad, minlength=value.shape[0])
        hess = np.bincount(nodes, hess, minlength=value.shape[0])
        change = step * grad / (hess + reg_lambda)
        raw[:, k] -= change[nodes]
        value[offset[tree] : offset[tree + 1], 0] -= change[offset[tree] : offset[tree + 1]]


@pytest.mark.parametrize("case", ["binary", "binary, scaled, scores past exp's range", "4 classes", "poisson"])
def test_refit_pass_sums_rows_in_chunks_the_same_on_any_number_of_threads(case):
    """``refit_leaves`` sums each tree's rows in parallel chunks: on more rows
    than one chunk it equals the plain pass up to rounding, and it is the same
    bit for bit on one thread and on all of them. It keeps each row's
    exponentials up to date as the trees move their scores (one factor per
    leaf): equal, up to rounding, to exponentials computed afresh for every
    tree, also where a score's exponential leaves float64's range."""
    rng = np.random.default_rng(0)
    n_rows, n_trees, per_tree = int(2.5 * engine_kernels.REFIT_CHUNK), 12, 15
    n_columns = 4 if case == "4 classes" else 1
    offset = np.arange(n_trees + 1) * per_tree
    leaf = rng.integers(7, per_tree, size=(n_trees, n_rows)).astype(np.int32)
    value = rng.normal(scale=0.3, size=(offset[-1], 1))
    tree_output = np.arange(n_trees, dtype=np.int64) % n_columns  # boosting's order: one tree per class
    alive = np.ones(n_trees, dtype=bool)
    alive[3] = False
    raw = rng.normal(size=(n_rows, n_columns))
    codes = rng.integers(0, max(2, n_columns), n_rows).astype(np.int64)
    scale = 1.0
    if case.startswith("binary, scaled"):  # every exp(-2 * z) is 0; the first tree's steps, about 1,000
        # (every row wrong and sure of it), take the scores to where it is infinite: 0 * exp(2,000) is NaN
        scale, raw[:], codes[:] = 2.0, 400.0, 0
    targets = rng.poisson(1.0, size=(n_rows, 1)).astype(float) if case == "poisson" else np.zeros((n_rows, 1))
    loss = {"4 classes": engine_kernels.SOFTMAX, "poisson": engine_kernels.POISSON}.get(case, engine_kernels.LOGISTIC)
    expected_value, expected_raw = value.copy(), raw.copy()
    _refit_pass_by_numpy(
        leaf, offset, expected_value, tree_output, alive, expected_raw, codes, targets, loss, scale, 1.0, 0.5
    )
    threads, results = numba.get_num_threads(), []
    try:
        for count in (1, threads):
            numba.set_num_threads(count)
            got_value, got_raw = value.copy(), raw.copy()
            engine_kernels.refit_leaves(
                leaf,
                offset,
                np.arange(offset[-1]),
                got_value,
                tree_output,
                np.ones(n_trees),
                alive,
                got_raw,
                codes,
                targets,
                loss,
                scale,
                1.0,
                0.5,
            )
            results.append((got_value, got_raw))
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_allclose(results[0][0], expected_value, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[0][1], expected_raw, rtol=1e-12, atol=1e-14)
    assert not np.array_equal(results[0][0], value)  # the pass moved the leaves
    for got, first in zip(results[1], results[0]):
        assert np.array_equal(got, first)


@pytest.mark.filterwarnings("ignore:prune kept the unpruned model")  # a case that prunes nothing: not what is tested
def test_regression_metrics_and_pandas_input():
    Xr, yr = make_regression(1500, 5, noise=10.0, random_state=0)
    frame = pd.DataFrame(Xr, columns=[f"f{i}" for i in range(5)])
    model = lgb.LGBMRegressor(n_estimators=30, num_leaves=15, verbose=-1).fit(frame[:800], yr[:800])
    for metric in ("r2", "mse"):
        result = btt.prune(model, frame[800:], yr[800:], metric=metric, tolerance=0.05, progress=False, random_state=0)
        assert result.params["metric"] == metric
        assert result.ensemble.n_leaves <= result.original.n_leaves
    with pytest.raises(DataError, match=r"X_val's columns are in another order .* reorder them with X_val\["):
        btt.prune(model, frame[800:][frame.columns[::-1]], yr[800:], progress=False)


def test_bad_input(lightgbm_binary, binary_data):
    X_train, y_train, X_val, y_val, _, _ = binary_data
    prune = lightgbm_binary
    for tolerance in (-0.1, np.nan, "half", True):
        with pytest.raises(ParameterError, match=r"tolerance of prune must be a float.* in \[0, inf\)"):
            btt.prune(prune, X_val, y_val, tolerance=tolerance, progress=False)
    with pytest.raises(ParameterError, match="tolerance must be a finite number >= 0"):
        btt.prune(prune, X_val, y_val, tolerance=np.inf, progress=False)
    with pytest.raises(ParameterError, match="metric of prune must be one of 'accuracy', .* or None, got 'f1'"):
        btt.prune(prune, X_val, y_val, metric="f1", progress=False)
    Xr, yr = make_regression(400, 4, random_state=0)
    regressor = lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(Xr, yr)
    with pytest.raises(ValueError, match="'roc_auc' is for classification models, but this is a regression"):
        btt.prune(regressor, Xr, yr, metric="roc_auc", progress=False)
    with pytest.raises(DataError, match="y_val has 1 missing targets .NaN or None., the first at row 4"):
        btt.prune(regressor, Xr, np.where(np.arange(len(yr)) == 4, np.nan, yr), progress=False)
    with pytest.raises(DataError, match="y_val contains infinite values"):
        btt.prune(regressor, Xr, np.where(np.arange(len(yr)) == 4, np.inf, yr), progress=False)
    with pytest.raises(DataError, match="one class only"):
        btt.prune(prune, X_val[y_val == 1], y_val[y_val == 1], progress=False)
    with pytest.raises(DataError, match="labels the model never saw: 7"):
        btt.prune(prune, X_val, np.where(np.arange(len(y_val)) == 0, 7, y_val), progress=False)
    mixed = y_val.astype(object)
    mixed[:2] = [3.5, "seven"]  # labels of mixed types: reported, not a TypeError from sorting them
    with pytest.raises(DataError, match=r"labels the model never saw: 'seven', 3.5; the model's classes are \[0, 1\]"):
        btt.prune(prune, X_val, mixed, progress=False)
    # a missing label (an empty CSV cell) was reported as a label "nan", after a numpy cast warning
    for missing in (np.nan, None):
        holes = y_val.astype(object if missing is None else float)
        holes[[5, 9]] = missing
        with pytest.raises(DataError, match="y_val has 2 missing labels .NaN or None., the first at row 5"):
            btt.prune(prune, X_val, holes, progress=False)
    with pytest.raises(DataError, match="needs at least 100 rows of the rarest class, got"):
        btt.prune(prune, X_val[:120], y_val[:120], progress=False)
    with pytest.raises(ValueError, match="pass X_train and y_train together"):
        btt.prune(prune, X_val, y_val, X_train=X_train, progress=False)
    # the messages name the argument that was wrong
    with pytest.raises(DataError, match="X_val has 3 features, but the model was trained on"):
        btt.prune(prune, X_val[:, :3], y_val, progress=False)
    with pytest.raises(DataError, match="X_train has 3 features, but the model was trained on"):
        btt.prune(prune, X_val, y_val, X_train=X_train[:, :3], y_train=y_train, progress=False)
    with pytest.raises(DataError, match=f"y_val has {len(y_val) - 1} rows, but X_val has {len(y_val)}"):
        btt.prune(prune, X_val, y_val[:-1], progress=False)
    with pytest.raises(ParameterError, match="search of prune must be one of 'bandit', 'exact', got 'greedy'"):
        btt.prune(prune, X_val, y_val, search="greedy", progress=False)
    with pytest.raises(ParameterError, match=r"confidence of prune must be a float.* in \(0, inf\), got 0"):
        btt.prune(prune, X_val, y_val, confidence=0, progress=False)
    with pytest.raises(ParameterError, match="callback of prune must be a callable or None, got 'print'"):
        btt.prune(prune, X_val, y_val, callback="print", progress=False)
    with pytest.raises(ParameterError, match="reweight of prune must be boolean, got 'yes'"):
        btt.prune(prune, X_val, y_val, reweight="yes", progress=False)
    with pytest.raises(ParameterError, match="random_state of prune must be a random state"):
        btt.prune(prune, X_val, y_val, random_state=-1, progress=False)
    with pytest.raises(ValueError, match="choose\\(\\) needs a result of btt.prune"):
        btt.reduced_error_prune(prune, X_val, y_val).choose(0.01)
    with pytest.raises(ParameterError, match="walks needs a result of btt.prune, this one comes from 'reduced_error'"):
        btt.reduced_error_prune(prune, X_val, y_val).walks


def test_the_result_is_frozen_with_every_field_declared_and_choose_returns_a_new_one():
    X, y = make_classification(n_samples=600, random_state=0)
    from sklearn.tree import DecisionTreeClassifier

    model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:300], y[:300])
    result = btt.prune(model, X[300:], y[300:], tolerance=0.05, random_state=0, progress=False)
    declared = {field.name for field in dataclasses.fields(result)}
    assert {"_walks", "_walk", "_checking", "_before"} <= declared and set(vars(result)) == declared
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.chosen = 0
    other = result.choose(0.0)
    assert other is not result and isinstance(other, btt.PrunePathResult) and other._walks is result._walks
