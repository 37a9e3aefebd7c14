"""The search kernels against the slow reference statistics and formulas."""

import math

import numba
import numpy as np
import pytest

from bandit_tree_tools.tree import validate
from bandit_tree_tools.tsdt import TSDTClassifier, optimal_categorical_tree
from bandit_tree_tools.tsdt import _kernels as K
from bandit_tree_tools.tsdt._search import grow_state
from tests.oracles.tsdt import ReferenceStatistics, reference_beta_normal, reference_max_moments

from .conftest import load_monk1, or_of_equal, xor_stream


def _path(state, dt):
    path = []
    while dt > 0:
        path.append((int(state.dt_feature[dt]), int(state.dt_category[dt])))
        dt = int(state.dt_parent[dt])
    return tuple(reversed(path))


def _tree_of(state, node):
    tree = {}
    while node >= 0:
        if state.s_split_leaf[node] >= 0:
            tree[_path(state, int(state.s_split_leaf[node]))] = int(state.s_split_feature[node])
        node = int(state.s_parent[node])
    return tree


# the kernels below are compiled for calls from other kernels only: the tests call them through these


@numba.njit
def _node_posterior(state, node, n_cat, cat_offset, lambda_, gamma, divisor):
    """Posterior of search node ``node``'s own tree (``divisor > 0``: its sd widened by the gain bound)."""
    K._mark(state, node, True)
    mu, sd = K.evaluate_marked_tree(state, state.s_n_splits[node], n_cat, cat_offset, lambda_, gamma, divisor)
    K._mark(state, node, False)
    return mu, sd


@numba.njit
def _tried_splits(state, n_features, visited_only):
    return K.tried_splits(state, n_features, visited_only)


@numba.njit
def _counting_work(state, tried, n_cat, cat_offset):
    return K.counting_work(state, tried, n_cat, cat_offset)


@numba.njit
def _exact_dt_counts(state, X, y, weight, n_cat, tried, budget):
    return K.exact_dt_counts(state, X, y, weight, n_cat, tried, budget)


def _drive(model, X, y, n_iter):
    """Run the kernel one iteration at a time on a stream, logging which tree
    each batch of rows went through."""
    n_categories = X.max(axis=0) + 1
    model._start(n_categories, np.unique(y), None)
    order = np.arange(len(y), dtype=np.int64)
    log = []
    for _ in range(n_iter):
        before = model._state.s_visits.copy()
        start = int(model._state.counters[K.C_POSITION])
        while True:
            done, status = K.run_search(
                model._state,
                X,
                y,
                order,
                1,
                model.batch_size,
                False,
                model.n_categories_,
                model._cat_offset,
                model.lambda_,
                model.gamma,
                model.variant == "clark",
                model._spread_divisor(),
                model._blocked,
                np.empty(1),
                np.empty(1),
            )
            if status == K.DONE:
                break
            model._state = grow_state(model._state, model.n_categories_)
        assert done == 1
        state = model._state
        visited = [
            node
            for node in range(int(state.counters[K.C_SEARCH]))
            if state.s_visits[node] > (before[node] if node < len(before) else 0)
        ]
        selected = max(visited)  # a search node is created after its parent
        log.append((_tree_of(state, selected), range(start, int(state.counters[K.C_POSITION]))))
    return log


@pytest.mark.parametrize("variant", ["optimistic", "fast", "clark"])
def test_posteriors_equal_the_reference_statistics(variant):
    X, y = or_of_equal(n_rows=4000, seed=3)
    model = TSDTClassifier(lambda_=0.02, batch_size=25, variant=variant, gamma=0.75, random_state=5)
    log = _drive(model, X, y, 120)
    reference = ReferenceStatistics(X.max(axis=0) + 1, 2)
    for tree, rows in log:
        for row in rows:
            reference.observe(tree, X[row], int(y[row]))
    state = model._state
    n_search = int(state.counters[K.C_SEARCH])
    assert n_search > 50
    widened = 0
    for node in range(n_search):
        mu, sd = _node_posterior(state, node, model.n_categories_, model._cat_offset, model.lambda_, model.gamma, 0.0)
        expected_mu, expected_sd = reference.posterior(_tree_of(state, node), model.lambda_, model.gamma)
        assert mu == pytest.approx(expected_mu, abs=1e-12)
        assert sd == pytest.approx(expected_sd, abs=1e-12)
        if variant == "optimistic":
            _, wide = _node_posterior(
                state, node, model.n_categories_, model._cat_offset, model.lambda_, model.gamma, model._spread_divisor()
            )
            _, expected_wide = reference.posterior(
                _tree_of(state, node), model.lambda_, model.gamma, model._spread_divisor()
            )
            assert wide == pytest.approx(expected_wide, abs=1e-12)
            widened += wide > sd + 1e-9
    assert np.all(state.split_of == -1)  # every iteration leaves the scratch map clean
    assert variant != "optimistic" or widened > 0  # the bound is not vacuous here
    # Back-propagation: the root was updated last, from its children's posteriors.
    children, wides = [], []
    child = int(state.s_first_child[0])
    while child >= 0:
        children.append((state.s_mu[child], state.s_sd[child]))
        wides.append(state.s_wide[child])
        child = int(state.s_next_sibling[child])
    if variant != "clark":
        expected = children[int(np.argmax([mean for mean, _ in children]))]  # first of the largest means
    else:
        expected = children[0]
        for pair in children[1:]:
            expected = reference_clark_fold(expected, pair)
    assert state.s_mu[0] == pytest.approx(expected[0], abs=1e-12)
    assert state.s_sd[0] == pytest.approx(expected[1], abs=1e-12)
    if variant == "optimistic":  # the widened sd travels with the child of largest mean
        assert state.s_wide[0] == wides[int(np.argmax([mean for mean, _ in children]))]
        assert np.any(state.s_wide[: int(state.counters[K.C_SEARCH])] > state.s_sd[: int(state.counters[K.C_SEARCH])])
    else:
        assert np.array_equal(state.s_wide, state.s_sd) or variant == "clark"


def reference_clark_fold(first, second):
    (mu1, sd1), (mu2, sd2) = first, second
    spread = math.sqrt(sd1**2 + sd2**2)
    alpha = (mu1 - mu2) / spread
    cdf = 0.5 * math.erfc(-alpha / math.sqrt(2))
    pdf = math.exp(-alpha * alpha / 2) / math.sqrt(2 * math.pi)
    mu = mu1 * cdf + mu2 * (1 - cdf) + spread * pdf
    second_moment = (mu1**2 + sd1**2) * cdf + (mu2**2 + sd2**2) * (1 - cdf) + (mu1 + mu2) * spread * pdf
    return mu, math.sqrt(max(second_moment - mu * mu, 0.0))


@pytest.mark.parametrize(
    "mu1, sd1, mu2, sd2",
    [(0.8, 0.05, 0.78, 0.1), (0.5, 0.3, 0.6, 0.2), (0.9, 0.01, 0.2, 0.01), (0.7, 0.2, 0.7, 0.2)],
)
def test_clark_uses_standard_deviations_and_matches_the_moments_of_the_max(mu1, sd1, mu2, sd2):
    mu, sd = K.clark_max(mu1, sd1, mu2, sd2)
    expected_mu, expected_sd = reference_max_moments(mu1, sd1, mu2, sd2)
    assert mu == pytest.approx(expected_mu, abs=1e-7)
    assert sd == pytest.approx(expected_sd, abs=1e-6)


def test_clark_with_point_masses_is_the_larger_value():
    assert K.clark_max(0.3, 0.0, 0.5, 0.0) == (0.5, 0.0)


@pytest.mark.parametrize("correct, rows", [(0, 0), (0, 1), (3, 4), (40, 100), (99, 100)])
def test_beta_normal_matches_the_beta_moments(correct, rows):
    mean, sd = K.beta_normal(correct, rows)
    expected_mean, expected_sd = reference_beta_normal(correct, rows)
    assert mean == pytest.approx(expected_mean, abs=1e-12)
    assert sd == pytest.approx(expected_sd, abs=1e-12)


@pytest.mark.parametrize("variant", ["fast", "clark"])
@pytest.mark.parametrize("n_features", [5, 20])
def test_xor_stream_gives_the_four_leaf_tree(variant, n_features):
    X, y = xor_stream(20_000, n_features, seed=n_features)
    for seed in range(3):
        model = TSDTClassifier(lambda_=0.05, max_iter=200, variant=variant, random_state=seed).fit(X, y)
        tree = model.tree_
        assert model.n_leaves_ == 4 and model.n_splits_ == 3
        assert set(tree.feature[tree.feature >= 0].tolist()) == {0, 1}
        assert model.score(X, y) == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fast_tsdt_reaches_the_exact_optimum_on_a_small_problem(seed):
    X, y = or_of_equal(n_rows=300, seed=seed)
    optimum = optimal_categorical_tree(X, y, 0.01)
    model = TSDTClassifier(lambda_=0.01, max_iter=600, random_state=seed).fit(X, y)
    assert model.objective_ == pytest.approx(optimum.objective_, abs=1e-12)


def test_paper_fast_tsdt_reaches_the_exact_optimum_on_monk1_train():
    X_train, y_train, X_test, y_test = load_monk1()
    optimum = optimal_categorical_tree(X_train, y_train, 0.01)
    assert (optimum.n_leaves_, optimum.n_splits_, optimum.objective_) == (27, 10, pytest.approx(0.9))
    reached = [
        TSDTClassifier(lambda_=0.01, max_iter=1000, variant="fast", random_state=seed).fit(X_train, y_train)
        for seed in (1, 2)
    ]
    for model in reached:
        assert model.objective_ == pytest.approx(optimum.objective_, abs=1e-12)
        assert model.n_leaves_ == 27
        assert model.score(X_test, y_test) == 1.0


def test_objective_is_training_accuracy_minus_the_penalty():
    X, y = or_of_equal(n_rows=200, seed=7)
    model = TSDTClassifier(lambda_=0.03, max_iter=100, random_state=0).fit(X, y)
    assert model.objective_ == pytest.approx(model.score(X, y) - 0.03 * model.n_splits_)


def test_same_seed_same_search_and_trace():
    X, y = or_of_equal(n_rows=200, seed=1)
    first = TSDTClassifier(max_iter=150, random_state=4).fit(X, y)
    second = TSDTClassifier(max_iter=150, random_state=4).fit(X, y)
    np.testing.assert_array_equal(first.trace_.mean, second.trace_.mean)
    np.testing.assert_array_equal(first.tree_.feature, second.tree_.feature)
    assert len(first.trace_.mean) == first.n_iter_ == 150
    assert np.all(first.trace_.sd >= 0)


def test_paper_final_tree_follows_the_most_visited_children():
    X, y = or_of_equal(n_rows=300, seed=2)
    model = TSDTClassifier(max_iter=300, variant="fast", random_state=0).fit(X, y)
    state = model._state
    node = 0
    while state.s_first_child[node] >= 0:
        children = []
        child = int(state.s_first_child[node])
        while child >= 0:
            children.append(child)
            child = int(state.s_next_sibling[child])
        visits = [state.s_visits[child] for child in children]
        node = children[int(np.argmax(visits))]
    assert len(_tree_of(state, node)) == model.n_splits_
    assert state.s_visits[0] == 300


def test_partial_fit_streams_each_row_once_and_keeps_searching():
    X, y = xor_stream(6_000, 6, seed=1)
    model = TSDTClassifier(lambda_=0.05, batch_size=100, random_state=0)
    for start in range(0, 6_000, 1_000):
        model.partial_fit(X[start : start + 1_000], y[start : start + 1_000])
    assert model.n_iter_ == 60
    assert len(model.trace_.mean) == 60
    assert model._state.root_counts.sum() == 6_000  # the root saw the whole stream
    validate(model.ensemble_.trees[0])  # counts of parents and children agree
    assert model.n_leaves_ == 4 and model.score(X, y) == 1.0
    assert 0.7 < model.objective_ <= 1.0 - 0.05 * 3 + 1e-9


def test_partial_fit_takes_classes_and_categories_on_the_first_call():
    X, y = xor_stream(400, 3, seed=0)
    model = TSDTClassifier(batch_size=50, random_state=0)
    model.partial_fit(X[:100] * 0, np.zeros(100, dtype=int), classes=[0, 1], n_categories=[3, 2, 2])
    model.partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(model.n_categories_, [3, 2, 2])
    np.testing.assert_array_equal(model.classes_, [0, 1])


def test_time_limit_stops_early():
    X, y = xor_stream(5_000, 30, seed=0)
    model = TSDTClassifier(max_iter=10**6, time_limit=0.5, random_state=0).fit(X, y)
    assert 0 < model.n_iter_ < 10**6


def test_trace_plot_and_repr():
    X, y = or_of_equal(n_rows=100)
    model = TSDTClassifier(max_iter=20, random_state=0).fit(X, y)
    figure = model.trace_.plot()
    assert len(figure.axes) == 1 and len(figure.axes[0].lines) == 1
    assert "n_iterations=20" in repr(model.trace_)


def test_pickled_model_predicts_the_same_and_keeps_streaming():
    import pickle

    X, y = xor_stream(2_000, 4, seed=3)
    model = TSDTClassifier(lambda_=0.05, batch_size=100, random_state=0).partial_fit(X[:1000], y[:1000])
    model.ensemble_  # noqa: B018  (cached, must pickle too)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    copy.partial_fit(X[1000:], y[1000:])
    model.partial_fit(X[1000:], y[1000:])
    np.testing.assert_array_equal(copy.trace_.mean, model.trace_.mean)


@pytest.mark.parametrize("seed", [0, 1])
def test_default_search_reaches_the_optimum_of_the_shuffled_monk1_grid_where_fast_tsdt_collapses(seed):
    _, _, X, y = load_monk1()  # monks-1.test: all 432 attribute combinations
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = X[order], y[order]
    optimum = optimal_categorical_tree(X, y, 0.01)
    assert (optimum.n_leaves_, optimum.objective_) == (27, pytest.approx(0.9))
    model = TSDTClassifier(lambda_=0.01, random_state=seed).fit(X, y)
    assert model.variant == "optimistic"
    assert model.objective_ == pytest.approx(optimum.objective_, abs=1e-12)
    assert model.n_leaves_ == 27 and model.score(X, y) == 1.0
    np.testing.assert_array_equal(model.tree_.feature, optimum.tree_.feature)
    # The paper's search ends on the a5-first tree (28 leaves, 0.870) on the same rows.
    paper = TSDTClassifier(lambda_=0.01, variant="fast", random_state=seed).fit(X, y)
    assert paper.objective_ == pytest.approx(0.87, abs=1e-12) and paper.n_leaves_ == 28


def test_exact_counts_of_the_shared_nodes_and_the_assembled_tree():
    X, y = or_of_equal(n_rows=400, seed=5)
    model = TSDTClassifier(lambda_=0.01, max_iter=300, random_state=0).fit(X, y)
    state = model._state
    tried = _tried_splits(state, X.shape[1], True)  # the visited trees' splits
    ones = np.ones(len(y), dtype=np.int64)  # one row each
    counts, complete = _exact_dt_counts(state, X.astype(np.int64), y, ones, model.n_categories_, tried, 10**9)
    assert complete
    n_dt = int(state.counters[K.C_DT])
    reached = np.zeros(n_dt, dtype=bool)
    reached[0] = True
    for dt in range(1, n_dt):  # parents come first
        parent = int(state.dt_parent[dt])
        reached[dt] = reached[parent] and tried[state.dt_slot[parent], state.dt_feature[dt]] == 1
    assert 50 < reached.sum() < n_dt  # splits of unvisited search leaves are left out
    steps = sum(
        int(counts[dt].sum()) * int(tried[state.dt_slot[dt]].sum())
        for dt in range(n_dt)
        if reached[dt] and state.dt_slot[dt] >= 0
    )
    estimate = len(y) * _counting_work(state, tried, model.n_categories_, model._cat_offset)
    assert 0.8 * steps < estimate < 1.25 * steps  # chain-rule shares of the stream stand for the rows
    assert not _exact_dt_counts(state, X.astype(np.int64), y, ones, model.n_categories_, tried, steps // 2)[1]
    for dt in range(n_dt):  # every DT node reached counts exactly the rows that match its path
        match = np.ones(len(y), dtype=bool)
        for feature, category in _path(state, dt):
            match &= X[:, feature] == category
        expected = np.bincount(y[match], minlength=2) if reached[dt] else np.zeros(2)
        np.testing.assert_array_equal(counts[dt], expected)
    objectives = K.exact_objectives(state, counts, len(y), model.n_categories_, model.lambda_)
    choice, value = K.best_assembled_tree(state, counts, len(y), model.n_categories_, model.lambda_, tried)
    # At least as good as every visited tree of the search, and no better than the returned tree (made of
    # every split created, the visited trees' and their children's).
    assert model.objective_ >= value / len(y) - 1e-12
    splits, stack = 0, [0]
    while stack:
        dt = stack.pop()
        if choice[dt] >= 0:
            splits += 1
            first = int(state.slot_child[state.dt_slot[dt], choice[dt]])
            stack.extend(range(first, first + int(model.n_categories_[choice[dt]])))
    assert splits > 0
    visited = state.s_visits[: int(state.counters[K.C_SEARCH])] > 0
    assert value / len(y) >= objectives[visited].max() - 1e-12
    optimum = optimal_categorical_tree(X, y, 0.01)
    assert model.objective_ <= optimum.objective_ + 1e-12


def test_the_final_count_takes_every_created_split_within_its_budget_and_the_visited_ones_past_it():
    X, y = or_of_equal(n_rows=400, seed=5)
    model = TSDTClassifier(lambda_=0.01, max_iter=300, random_state=0).fit(X, y)
    state, X = model._state, X.astype(np.int64)
    ones = np.ones(len(y), dtype=np.int64)
    args = (state, X, y, ones, model.n_categories_)
    created, visited = _tried_splits(state, X.shape[1], False), _tried_splits(state, X.shape[1], True)
    assert created.sum() > visited.sum()
    every_row = np.iinfo(np.int64).max
    for budget, tried in ((10**9, created), (0, visited)):  # (0: the visited trees' splits, whatever they cost)
        counts, chosen = K.tried_split_counts(*args, model._cat_offset, budget)
        np.testing.assert_array_equal(chosen, tried)
        np.testing.assert_array_equal(counts, _exact_dt_counts(*args, tried, every_row)[0])


_SEARCH_SIGNATURES = """
import numpy as np
from bandit_tree_tools.tsdt import TSDTClassifier
from bandit_tree_tools.tsdt import _kernels as K
X = np.random.default_rng(0).integers(0, 2, size=(200, 3))
TSDTClassifier(lambda_=0.01, max_iter=50, random_state=0).fit(X, X[:, 0] ^ X[:, 1])
print([len(K._allocate_slot.signatures), len(K._new_search_node.signatures)])
"""


@pytest.mark.slow
def test_search_helpers_are_compiled_once_without_literal_arguments(tmp_path):
    """Integer literals passed to a kernel compile a specialization each; the search's
    helpers are called with int64 values, so a fit in a fresh install (an empty numba
    cache) compiles each of them once."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    done = subprocess.run([sys.executable, "-c", _SEARCH_SIGNATURES], env=env, cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[1, 1]"
