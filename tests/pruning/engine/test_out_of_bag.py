"""``btt.prune`` ranks a bootstrapped forest's removals out of bag: each tree
on the training rows it did not draw."""

import warnings

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier, RandomForestRegressor

import bandit_tree_tools as btt
from bandit_tree_tools.interop.sklearn import forest_in_bag
from bandit_tree_tools.pruning._engine import _kernels as engine_kernels
from bandit_tree_tools.pruning._engine import _search as engine_search
from bandit_tree_tools.pruning._engine._result import CROSS_FITTED
from bandit_tree_tools.pruning._inputs import check_target


def _classification(n_rows=1500):
    return make_classification(n_rows, 6, n_informative=4, flip_y=0.1, random_state=0)


def test_forest_in_bag_redraws_the_samples_scikit_learn_drew():
    Xc, yc = _classification()
    Xr, yr = make_regression(1500, 6, noise=5.0, random_state=0)
    for model, X, y in [
        (RandomForestClassifier(n_estimators=6, random_state=0), Xc, yc),
        (RandomForestRegressor(n_estimators=6, max_samples=0.6, random_state=1), Xr, yr),
    ]:
        model.fit(X, y)
        ((counts, weights),) = forest_in_bag(btt.from_model(model), X.shape[0])
        assert counts.shape == (6, X.shape[0])
        np.testing.assert_array_equal(weights, counts)
        for drawn, samples in zip(counts, model.estimators_samples_):
            np.testing.assert_array_equal(np.flatnonzero(drawn), np.unique(samples))
            assert drawn.sum() == len(samples)


def _out_of_bag_rows(ensemble, X, y):
    """The forest's training rows ``X``, ``y`` as ``prune`` stores them, and
    ranked out of bag (None when they are not its training rows)."""
    target = check_target(ensemble, y, len(y))
    training = engine_search._RowSet(ensemble, ensemble.check_X(X), np.arange(len(y)), target)
    return training, engine_search.out_of_bag_rows(ensemble, training, target, np.random.default_rng(0))


@pytest.mark.parametrize("class_weight", ["balanced", "balanced_subsample", {0: 1.0, 1: 3.0}])
def test_a_class_weighted_forest_ranks_each_tree_on_the_rows_it_did_not_draw(class_weight):
    """scikit-learn draws and weighs a class-weighted forest's rows its own way (by version): the
    rows left out of each tree are those scikit-learn's own ``estimators_samples_`` left out."""
    X, y = _classification()
    model = RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0, class_weight=class_weight).fit(X, y)
    ensemble = btt.from_model(model)
    _, ranking = _out_of_bag_rows(ensemble, X, y)
    assert ranking is not None
    out_of_bag = np.empty((len(y), ensemble.n_trees), dtype=np.int64)
    out_of_bag[ranking.order] = ranking.leaves().T
    for tree, samples in enumerate(model.estimators_samples_):
        drawn = np.zeros(len(y), dtype=bool)
        drawn[samples] = True
        np.testing.assert_array_equal(out_of_bag[:, tree] < 0, drawn)


def _out_of_bag_search(model, X, y, metric, fraction_squares=False):
    """The search ranking out of bag, and its leaves (-1: the tree drew the row) and raw scores (a
    function of the search) back in the order of ``X``, (n_rows, n_trees)."""
    ensemble = btt.from_model(model)
    checking, ranking = _out_of_bag_rows(ensemble, X, y)
    assert ranking is not None
    out_of_bag = np.empty((len(y), ensemble.n_trees), dtype=np.int64)
    out_of_bag[ranking.order] = ranking.leaves().T
    np.testing.assert_array_equal(out_of_bag[out_of_bag >= 0], ensemble.apply(X)[out_of_bag >= 0])
    target = check_target(ensemble, y, len(y))
    search = engine_search._Search(
        ensemble, ranking, checking, True, metric, "exact", 3.0, False, fraction_squares=fraction_squares
    )

    def ranking_raw():
        raw = np.empty((len(y), ensemble.n_outputs))
        raw[ranking.order] = search._scored(search.rank)
        return raw

    return ensemble, out_of_bag, target, search, ranking_raw


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_out_of_bag_scores_equal_scikit_learns(task):
    if task == "classification":
        X, y = _classification()
        model = RandomForestClassifier(n_estimators=12, max_depth=7, oob_score=True, random_state=0)
    else:
        X, y = make_regression(1500, 6, noise=5.0, random_state=0)
        model = RandomForestRegressor(n_estimators=12, max_depth=7, oob_score=True, random_state=0)
    with warnings.catch_warnings():  # the few rows every tree drew have no out-of-bag score
        warnings.simplefilter("ignore", UserWarning)
        model.fit(X, y)
    _, out_of_bag, _, _, ranking_raw = _out_of_bag_search(model, X, y, "accuracy" if task == "classification" else "r2")
    raw = ranking_raw()
    held = (out_of_bag >= 0).any(axis=1)  # rows some tree did not draw
    assert held.mean() > 0.99
    expected = model.oob_decision_function_ if task == "classification" else model.oob_prediction_[:, None]
    np.testing.assert_allclose(raw[held], expected[held], rtol=0, atol=1e-12)


def _fractions_loss(probability, codes, squares):
    """Per row: the log-loss of the true class's fraction, or its squared error."""
    true_class = probability[np.arange(len(codes)), codes]
    return (1.0 - true_class) ** 2 if squares else -np.log(np.clip(true_class, 1e-15, 1 - 1e-15))


@pytest.mark.parametrize("squares", [False, True], ids=["log-loss", "squared error"])
def test_out_of_bag_costs_equal_brute_force(squares):
    X, y = _classification(800)
    model = RandomForestClassifier(n_estimators=6, max_depth=5, random_state=0).fit(X, y)
    ensemble, out_of_bag, target, search, _ = _out_of_bag_search(model, X, y, "accuracy", squares)
    assert search.loss_kind == (engine_kernels.FRACTION_SQUARES if squares else engine_kernels.FRACTIONS)
    held = out_of_bag >= 0  # (rows, trees): the tree did not draw the row
    per_tree = np.stack([np.asarray(tree.value)[out_of_bag[:, t].clip(0)] for t, tree in enumerate(ensemble.trees)])
    ids, _ = search.candidates()
    values = search.candidate_values()
    cost, _, reached = search.costs(np.arange(search.n_rank), values)

    def loss(trees_value, holding, codes):
        """The rows' loss under the mean of the trees that hold them (rows no tree holds: 0)."""
        count = holding.sum(axis=1)
        rows = count > 0
        mean = (trees_value * holding.T[:, :, None]).sum(axis=0)[rows] / count[rows, None]
        return _fractions_loss(mean, codes[rows], squares)

    checked = 0
    for node in ids[:: max(1, len(ids) // 15)]:
        tree = int(search.tree_of[node])
        local = int(node - search.offset[tree])
        if search.is_root[node]:  # the tree leaves the mean of the rows it holds that another tree holds too
            rows = held[:, tree] & (held.sum(axis=1) >= 2)
            before = loss(per_tree[:, rows], held[rows], target.codes[rows])
            without = held[rows].copy()
            without[:, tree] = False
            after = loss(per_tree[:, rows], without, target.codes[rows])
            expected = float(np.sum(after - before))
            assert reached[node] == held[:, tree].sum()
        else:  # the rows below the node, where the tree holds them, take the node's value
            below = held[:, tree] & np.isin(out_of_bag[:, tree], _subtree(ensemble.trees[tree], local))
            changed = per_tree.copy()
            changed[tree, below] = values[node]
            before = loss(per_tree, held, target.codes)
            after = loss(changed, held, target.codes)
            expected = float(np.sum(after - before))
            assert reached[node] == below.sum()
        assert cost[node] == pytest.approx(expected, rel=1e-9, abs=1e-9)
        checked += 1
    assert checked >= 10


def _subtree(tree, node):
    nodes, stack = [], [node]
    while stack:
        at = stack.pop()
        nodes.append(at)
        if tree.children_left[at] != -1:
            stack += [tree.children_left[at], tree.children_right[at]]
    return np.array(nodes)


def test_only_a_forests_own_training_rows_rank_out_of_bag():
    X, y = _classification()
    forest = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X[:1000], y[:1000])
    weighted = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(
        X[:1000], y[:1000], sample_weight=np.where(y[:1000] == 1, 2.0, 1.0)
    )
    extra = ExtraTreesClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X[:1000], y[:1000])
    boosted = lgb.LGBMClassifier(n_estimators=8, num_leaves=7, verbose=-1).fit(X[:1000], y[:1000])
    # class weights, as imbalanced data sets are fitted: drawn and weighted as scikit-learn does
    balanced = [
        RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0, class_weight=class_weight).fit(
            X[:1000], y[:1000]
        )
        for class_weight in ("balanced", "balanced_subsample", {0: 1.0, 1: 3.0})
    ]
    for model, rows, expected in [
        (forest, slice(0, 1000), True),
        (forest, slice(1, 1001), False),
        *[(model, slice(0, 1000), True) for model in balanced],
        (balanced[0], slice(1, 1001), False),
        (weighted, slice(0, 1000), False),
        (extra, slice(0, 1000), False),
        (boosted, slice(0, 1000), False),
    ]:
        ensemble = btt.from_model(model)
        found = _out_of_bag_rows(ensemble, X[rows], y[rows])[1]
        assert (found is not None) is expected, (type(model).__name__, rows)

    result = btt.prune(
        forest, X[1000:], y[1000:], tolerance=0.02, X_train=X[:1000], y_train=y[:1000], random_state=0, progress=False
    )
    # out of bag in place of every training row, which the trees that drew them memorised
    assert [(walk.ranked_on, walk.refit) for walk in result._walks] == [
        ("X_train, out of bag", False),
        ("X_train, out of bag, by squared error", False),  # the same rows, the class fractions' squared error
    ]
    assert result.params["ranked_on"] in {walk.ranked_on for walk in result._walks}
    out_of_bag, squares = result._walks
    assert not out_of_bag.path.equals(squares.path)  # another loss ranks: another path
    shifted = btt.prune(
        forest, X[1000:], y[1000:], tolerance=0.02, X_train=X[1:1001], y_train=y[1:1001], random_state=0, progress=False
    )
    # other rows than its own: no out-of-bag walk, and the walk on the validation labels joins
    assert [walk.ranked_on for walk in shifted._walks] == ["X_train", CROSS_FITTED]
    np.testing.assert_array_equal(forest.predict(X), btt.from_model(forest).predict(X))  # untouched


def test_a_regression_forest_takes_one_out_of_bag_walk():
    """The squared error is a regression forest's loss already: no second walk on the same rows."""
    X, y = make_regression(1200, 6, noise=5.0, random_state=0)
    forest = RandomForestRegressor(n_estimators=6, max_depth=6, random_state=0).fit(X[:800], y[:800])
    result = btt.prune(
        forest, X[800:], y[800:], tolerance=0.05, X_train=X[:800], y_train=y[:800], random_state=0, progress=False
    )
    assert [walk.ranked_on for walk in result._walks] == ["X_train, out of bag"]
