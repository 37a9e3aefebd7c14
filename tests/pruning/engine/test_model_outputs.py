"""``btt.prune``'s walk towards the model's own outputs: perturbed training
rows, soft labels in the kernels, and which models take the walk."""

import copy

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._engine import _prune
from bandit_tree_tools.pruning._engine import _search as engine_search
from bandit_tree_tools.pruning._engine._result import CROSS_FITTED
from bandit_tree_tools.pruning._inputs import check_target
from tests.pruning.engine._rows import walk_rows

DISTILLED = "the model's outputs on perturbed X_train"
VALIDATION_OUTPUTS = "the model's outputs on perturbed X_val"
SOFT = ("soft labels", "soft softmax")  # losses against the model's own outputs


def _classification(n_rows=3000, classes=2):
    return make_classification(n_rows, 6, n_informative=4, n_classes=classes, flip_y=0.05, random_state=0)


def test_perturbed_rows_take_each_value_from_the_same_column():
    X, _ = _classification(2000)
    X = np.round(X, 2)  # few distinct values per column, so a swap can be traced
    before = X.copy()
    out = engine_search.perturbed_rows(X, np.random.default_rng(0))
    np.testing.assert_array_equal(X, before)  # the training rows are not modified
    assert out.shape == X.shape
    for column in range(X.shape[1]):
        assert np.isin(out[:, column], X[:, column]).all()
    changed = np.mean(out != X)  # a swap may draw the row's own value
    assert 0.15 < changed <= engine_search.PERTURBED_SHARE + 0.01
    again = engine_search.perturbed_rows(X, np.random.default_rng(0))
    np.testing.assert_array_equal(out, again)


def test_of_many_training_rows_a_sample_is_perturbed(monkeypatch):
    X, y = _classification(3000)
    model = lgb.LGBMClassifier(n_estimators=8, num_leaves=7, verbose=-1, random_state=0).fit(X[:1500], y[:1500])
    monkeypatch.setattr(_prune, "PERTURBED_ROWS", 1000)  # 40,000 as shipped
    perturbed = []  # (rows, whether they are training rows)
    training = {row.tobytes() for row in X[:1500]}

    def recorded(rows, rng):
        perturbed.append((rows.shape[0], all(row.tobytes() in training for row in rows)))
        return engine_search.perturbed_rows(rows, rng)

    monkeypatch.setattr(_prune, "perturbed_rows", recorded)
    result = btt.prune(
        model, X[1500:], y[1500:], tolerance=0.02, X_train=X[:1500], y_train=y[:1500], random_state=0, progress=False
    )
    assert DISTILLED in {walk.ranked_on for walk in result._walks}
    assert perturbed == [(1000, True), (1500, False)]  # 1,000 of the 1,500 training rows; the validation rows whole


def _smooth_case(loss):
    """(model, ranking rows, their target, validation rows, their labels) of each smooth loss."""
    if loss == "poisson":
        X, _ = make_regression(2600, 5, random_state=0)
        y = np.random.default_rng(0).poisson(np.exp(1.0 + 0.3 * X[:, 0]))
        model = lgb.LGBMRegressor(objective="poisson", n_estimators=6, num_leaves=8, verbose=-1, random_state=0)
    else:
        X, y = _classification(2600, classes=3 if "softmax" in loss else 2)
        model = lgb.LGBMClassifier(n_estimators=6, num_leaves=8, verbose=-1, random_state=0)
    model.fit(X[:1500], y[:1500])
    ensemble = btt.from_model(model)
    X_rank = X[1500:2200]
    target = engine_search.model_target(ensemble, X_rank) if loss in SOFT else check_target(ensemble, y[1500:2200], 700)
    return ensemble, X_rank, target, X[2200:], y[2200:]


def _smooth_search(loss):
    """(model, ranking rows, the walk's rows, an exact search on them) of each smooth loss."""
    ensemble, X_rank, target, X_val, y_val = _smooth_case(loss)
    rows = walk_rows(
        ensemble,
        ensemble.check_X(X_val),
        check_target(ensemble, y_val, len(y_val)),
        ensemble.check_X(X_rank),
        target,
        np.random.default_rng(0),
        soft=loss in SOFT,
    )
    search = engine_search._Search(ensemble, *rows, "r2" if loss == "poisson" else "accuracy", "exact", 3.0, False)
    return ensemble, X_rank, rows, search


def _derivatives(loss, raw, target, column):
    """Each row's first and second derivative of its loss by raw column ``column``, in numpy."""
    if loss == "poisson":
        mu = np.exp(raw[:, 0])
        return mu - target.values, mu
    if "softmax" in loss:
        p = np.exp(raw - raw.max(axis=1, keepdims=True))
        p = p[:, column] / p.sum(axis=1)
        label = target.values[:, column] if loss == "soft softmax" else target.codes == column
        return p - label, p * (1.0 - p)
    p = 1.0 / (1.0 + np.exp(-raw[:, 0]))
    label = target.values if loss == "soft labels" else target.codes
    return p - label, p * (1.0 - p)


def _subtree(tree, local):
    """Whether each node of ``tree`` is ``local`` or below it."""
    below = np.zeros(tree.n_nodes, dtype=bool)
    below[local] = True
    for node in range(tree.n_nodes):  # children have larger ids than their parent
        if below[node] and tree.children_left[node] != -1:
            below[tree.children_left[node]] = below[tree.children_right[node]] = True
    return below


@pytest.mark.parametrize("loss", ["labels", "soft labels", "poisson", "softmax", "soft softmax"])
def test_smooth_costs_equal_their_second_order_brute_force(loss):
    ensemble, X_rank, rows, search = _smooth_search(loss)
    soft = loss in SOFT
    values = search.candidate_values()
    ids, _ = search.candidates()
    cost, square, reached = search.costs(np.arange(search.n_rank), values)

    # brute force from the model's own raw scores, in the order walk_rows stored the rows in
    stored = np.random.default_rng(0).permutation(len(X_rank))
    np.testing.assert_array_equal(rows[0].leaves().T, ensemble.apply(X_rank)[stored])
    leaves = rows[0].leaves().T
    raw = ensemble.predict_raw(X_rank)[stored]
    stored_target = rows[0].target
    if soft:  # the unpruned model fits its own outputs exactly
        for column in range(raw.shape[1]):
            np.testing.assert_allclose(_derivatives(loss, raw, stored_target, column)[0], 0.0, atol=1e-12)
    checked = 0
    for node in ids:
        tree = int(search.tree_of[node])
        if search.is_root[node]:
            continue
        root = int(search.offset[tree])
        below = _subtree(ensemble.trees[tree], int(node - root))
        grad, hess = _derivatives(loss, raw, stored_target, int(ensemble.tree_output[tree]))
        leaf = leaves[:, tree].astype(np.int64)  # int8 ids: root + leaf would wrap
        held = below[leaf]
        delta = ensemble.tree_scale[tree] * (values[node, 0] - search.value[root + leaf[held], 0])
        change = delta * (grad[held] + 0.5 * hess[held] * delta)
        assert cost[node] == pytest.approx(change.sum(), rel=1e-9, abs=1e-12)
        assert square[node] == pytest.approx(np.sum(change**2), rel=1e-9, abs=1e-15)
        assert reached[node] == held.sum()
        if soft:
            assert cost[node] >= 0.0  # nothing moves closer to the model than the model itself
        checked += 1
    assert checked > 10


@pytest.mark.filterwarnings("ignore:prune kept the unpruned model")  # a case that prunes nothing: not what is tested
def test_boosted_models_walk_towards_their_own_outputs():
    X, y = _classification()
    model = lgb.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1, random_state=0).fit(X[:1500], y[:1500])
    before = copy.deepcopy(model.booster_.dump_model())
    result = btt.prune(
        model, X[1500:2500], y[1500:2500], X_train=X[:1500], y_train=y[:1500], random_state=0, progress=False
    )
    assert model.booster_.dump_model() == before
    walks = [(walk.ranked_on, walk.refit, walk.reweighted) for walk in result._walks]
    # after the walks on X_train (test_weights.py): from re-weighted trees when a start is found
    assert walks[-1] == (VALIDATION_OUTPUTS, True, False)
    assert [walk for walk in walks if walk[0] == DISTILLED] in ([], [(DISTILLED, True, True)])
    assert result.params["ranked_on"] in {walk.ranked_on for walk in result._walks}
    np.testing.assert_allclose(
        result.to_model().predict_proba(X[2500:]), result.ensemble.predict_proba(X[2500:]), rtol=0, atol=1e-12
    )
    kept = btt.prune(
        model,
        X[1500:2500],
        y[1500:2500],
        X_train=X[:1500],
        y_train=y[:1500],
        refit=False,
        reweight=False,
        random_state=0,
        progress=False,
    )
    assert [(walk.ranked_on, walk.refit) for walk in kept._walks] == [
        ("X_train", False),
        (DISTILLED, False),
        (VALIDATION_OUTPUTS, False),
    ]


@pytest.mark.parametrize("objective", ["regression", "poisson"])
def test_regressors_walk_towards_their_own_predictions(objective):
    X, y = make_regression(2000, 5, noise=5.0, random_state=0)
    if objective == "poisson":
        y = np.random.default_rng(0).poisson(np.exp(1.0 + 0.3 * X[:, 0]))
    model = lgb.LGBMRegressor(objective=objective, n_estimators=20, num_leaves=8, verbose=-1, random_state=0)
    model.fit(X[:1000], y[:1000])
    ensemble = btt.from_model(model)
    target = engine_search.model_target(ensemble, X[:1000])
    np.testing.assert_allclose(target.values, model.predict(X[:1000]), rtol=1e-9)
    result = btt.prune(
        model,
        X[1000:1500],
        y[1000:1500],
        tolerance=0.02,
        X_train=X[:1000],
        y_train=y[:1000],
        random_state=0,
        progress=False,
    )
    assert [walk.ranked_on for walk in result._walks] == ["X_train", "X_train", DISTILLED, VALIDATION_OUTPUTS]
    for walk in result._walks:
        assert walk.path["leaves"].is_monotonic_decreasing


def test_multiclass_models_walk_towards_their_class_probabilities():
    X, y = _classification(2000, classes=3)
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1, random_state=0).fit(X[:1000], y[:1000])
    target = engine_search.model_target(btt.from_model(model), X[:1000])
    assert (target.values.shape, target.n_classes) == ((1000, 3), 3)
    np.testing.assert_allclose(target.values, model.predict_proba(X[:1000]), rtol=1e-12)
    result = btt.prune(
        model, X[1000:], y[1000:], tolerance=0.02, X_train=X[:1000], y_train=y[:1000], random_state=0, progress=False
    )
    assert [walk.ranked_on for walk in result._walks] == ["X_train", "X_train", DISTILLED, VALIDATION_OUTPUTS]
    np.testing.assert_array_equal(
        result.to_model().booster_.predict(X[:200], raw_score=True), result.ensemble.predict_raw(X[:200])
    )


def test_forests_do_not():
    Xb, yb = _classification(2000)
    forest = RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(Xb[:1000], yb[:1000])
    result = btt.prune(
        forest,
        Xb[1000:],
        yb[1000:],
        tolerance=0.02,
        X_train=Xb[:1000],
        y_train=yb[:1000],
        random_state=0,
        progress=False,
    )
    assert DISTILLED not in {walk.ranked_on for walk in result._walks}
    # without training rows a forest ranks on the validation rows' labels (its leaves take no soft targets)
    result = btt.prune(forest, Xb[1000:], yb[1000:], tolerance=0.02, random_state=0, progress=False)
    assert {walk.ranked_on for walk in result._walks} == {CROSS_FITTED}


def test_bandit_with_a_full_budget_walks_the_exact_path_towards_the_model(monkeypatch):
    monkeypatch.setattr(engine_search, "SAMPLED_FROM", 40_000)  # the bandit samples the 42,000 rows below
    X, y = make_classification(44_000, 8, n_informative=5, flip_y=0.05, random_state=5)
    model = lgb.LGBMClassifier(n_estimators=15, num_leaves=15, verbose=-1, random_state=0).fit(X[:2000], y[:2000])
    ensemble = btt.from_model(model)
    X_soft = engine_search.perturbed_rows(X[:42_000], np.random.default_rng(0))
    target = check_target(ensemble, y[42_000:], 2000)
    rows = walk_rows(
        ensemble,
        ensemble.check_X(X[42_000:]),
        target,
        ensemble.check_X(X_soft),
        engine_search.model_target(ensemble, X_soft),
        np.random.default_rng(0),
        soft=True,
    )
    paths, evaluations = {}, {}
    for search, confidence in (("exact", 3.0), ("bandit", np.inf), ("bandit", 3.0)):
        engine = engine_search._Search(ensemble, *rows, "balanced_accuracy", search, confidence, True)
        path, _ = engine.run(engine.metric_value() - 0.08, False, None, 0.0)
        paths[search, confidence] = path.drop(columns="elapsed")
        evaluations[search, confidence] = engine.row_evaluations
    pd.testing.assert_frame_equal(paths["exact", 3.0], paths["bandit", np.inf])
    assert evaluations["bandit", np.inf] == evaluations["exact", 3.0]  # its samples, then the rows left
    assert evaluations["bandit", 3.0] < evaluations["exact", 3.0]


@pytest.mark.parametrize("loss", ["labels", "soft labels", "poisson", "softmax", "soft softmax"])
def test_values_without_covers_are_the_hessian_weighted_means_of_the_rows(loss):
    """A model that recorded no covers (scikit-learn's histogram boosting)
    collapses a node into the mean of its rows' current values in its tree,
    weighted by their hessians on the fitting rows (with ``REG_LAMBDA``)."""
    ensemble, X_rank, rows, search = _smooth_search(loss)
    search.cover = None  # as a model that recorded none
    values = search.candidate_values()
    ids, _ = search.candidates()
    stored = np.random.default_rng(0).permutation(len(X_rank))
    leaves = rows[0].leaves().T.astype(np.int64)
    raw = ensemble.predict_raw(X_rank)[stored]
    internal = [node for node in ids if not search.is_root[node]]
    assert len(internal) > 20
    for node in internal:
        tree = int(search.tree_of[node])
        root, scale = int(search.offset[tree]), ensemble.tree_scale[tree]
        held = _subtree(ensemble.trees[tree], int(node - root))[leaves[:, tree]]
        _, hess = _derivatives(loss, raw, rows[0].target, int(ensemble.tree_output[tree]))
        contribution = scale * search.value[root + leaves[held, tree], 0]
        expected = np.sum(hess[held] * contribution) / (np.sum(hess[held]) + engine_search.REG_LAMBDA) / scale
        assert values[node, 0] == pytest.approx(expected, rel=1e-9, abs=1e-15)
