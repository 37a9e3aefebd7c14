"""The exact completion of the default search's final tree: the exact
solver's kernel on a node's rows with a shared memo table, the row sets of
the DT nodes, and the optimum it reaches where the search alone stays
shallow."""

import numba
import numpy as np
import pytest

from bandit_tree_tools.exceptions import ParameterError
from bandit_tree_tools.tsdt import TSDTClassifier, optimal_categorical_tree
from bandit_tree_tools.tsdt import _kernels as K
from bandit_tree_tools.tsdt import _kernels_result as R
from bandit_tree_tools.tsdt._kernels_exact import ABORTED, _find, _solve_node, new_table
from bandit_tree_tools.tsdt._search import _exact_radix
from tests.oracles.tsdt import reference_optimal_value

from .conftest import load_monk2, load_tic_tac_toe, or_of_equal


@numba.njit
def _rows_of(state, dt, bits, cat_offset, mask, out):  # R._rows_of is compiled for calls from kernels only
    return R._rows_of(state, dt, bits, cat_offset, mask, out)


def _ones(n):
    return np.ones(n, dtype=np.int64)


def _random_problem(seed, n_rows=80):
    rng = np.random.default_rng(seed)
    n_categories = rng.integers(2, 4, size=4)
    X = np.column_stack([rng.integers(0, c, n_rows) for c in n_categories]).astype(np.int64)
    # A rule on two attributes with 15 % label noise: deep enough trees, not pure everywhere.
    y = ((X[:, 0] == 1) ^ (X[:, 1] == 0)).astype(np.int64)
    flip = rng.random(n_rows) < 0.15
    y[flip] = 1 - y[flip]
    return X, y, n_categories.astype(np.int64)


def _assignments(rng, n_categories, count):
    """Random partial assignments {attribute: category} (0 to 2 tests)."""
    out = []
    for _ in range(count):
        features = rng.choice(len(n_categories), size=rng.integers(0, 3), replace=False)
        out.append({int(f): int(rng.integers(0, n_categories[f])) for f in features})
    return out


@pytest.mark.parametrize("seed", range(4))
def test_node_kernel_with_a_shared_table_agrees_with_the_exact_solver(seed):
    X, y, n_categories = _random_problem(seed)
    lambda_ = [0.0, 0.01, 0.03, 0.1][seed]
    radix = _exact_radix(n_categories)
    penalty = lambda_ * len(y)
    keys, values, choices, stored = new_table()
    rng = np.random.default_rng(100 + seed)
    for tests in _assignments(rng, n_categories, 12):  # one table for all, in a random order of sizes
        match = np.ones(len(y), dtype=bool)
        for feature, category in tests.items():
            match &= X[:, feature] == category
        rows = np.flatnonzero(match)
        key = sum((category + 1) * int(radix[feature]) for feature, category in tests.items())
        budget = np.array([10**9, 10**12], dtype=np.int64)
        value, keys, values, choices = _solve_node(
            X, y, _ones(len(y)), rows, key, n_categories, radix, 2, penalty, budget, keys, values, choices, stored
        )
        # The same objective in rows: the node's rows alone, the penalty per split unchanged (lambda N / n).
        if len(rows) == 0:
            assert value == 0.0
            continue
        if len(np.unique(y[rows])) < 2:
            assert value == len(rows)
            continue
        alone = optimal_categorical_tree(X[rows], y[rows], lambda_ * len(y) / len(rows))
        assert value == pytest.approx(alone.objective_ * len(rows), abs=1e-6)
        assert value == pytest.approx(
            reference_optimal_value(X[rows], y[rows], lambda_ * len(y) / len(rows), n_categories) * len(rows), abs=1e-6
        )
    assert stored[0] > 0 and np.sum(keys >= 0) == stored[0]


def test_a_node_stopped_by_the_budget_leaves_only_finished_entries():
    X, y, n_categories = _random_problem(7, n_rows=120)
    radix = _exact_radix(n_categories)
    keys, values, choices, stored = new_table()
    rows = np.arange(len(y))
    budget = np.array([10**9, 300], dtype=np.int64)  # steps: far from enough for the root
    value, keys, values, choices = _solve_node(
        X, y, _ones(len(y)), rows, 0, n_categories, radix, 2, 0.0, budget, keys, values, choices, stored
    )
    assert value == ABORTED and budget[1] < 0 and stored[0] > 0
    fresh = new_table()
    full = np.array([10**9, 10**12], dtype=np.int64)
    # Every entry left behind is the exact value of its key, and the root can still be solved with the table.
    for key in keys[keys >= 0][:20]:
        tests, rest = {}, int(key)
        for feature in range(len(n_categories) - 1, -1, -1):
            digit, rest = divmod(rest, int(radix[feature]))
            if digit:
                tests[feature] = digit - 1
        match = np.all([X[:, f] == c for f, c in tests.items()], axis=0) if tests else np.ones(len(y), bool)
        alone, *_ = _solve_node(
            X, y, _ones(len(y)), np.flatnonzero(match), int(key), n_categories, radix, 2, 0.0, full.copy(), *fresh
        )
        assert values[_find(keys, key)] == pytest.approx(alone)
    value, *_ = _solve_node(
        X, y, _ones(len(y)), rows, 0, n_categories, radix, 2, 0.0, full, keys, values, choices, stored
    )
    assert value == pytest.approx(optimal_categorical_tree(X, y, 0.0).objective_ * len(y))


def test_rows_of_a_dt_node_are_those_matching_its_path():
    X, y = or_of_equal(n_rows=300, seed=2)  # 300 rows: five 64-bit words
    model = TSDTClassifier(lambda_=0.01, max_iter=200, random_state=0).fit(X, y)
    state = model._state
    X = X.astype(np.int64)
    bits = R.row_bits(X, model._cat_offset, int(model.n_categories_.sum()))
    mask = np.empty(bits.shape[1], dtype=np.uint64)
    out = np.empty(len(y), dtype=np.int64)
    n_dt = int(state.counters[K.C_DT])
    assert n_dt > 30
    for dt in range(n_dt):
        match = np.ones(len(y), dtype=bool)
        node = dt
        while node > 0:
            match &= X[:, state.dt_feature[node]] == state.dt_category[node]
            node = int(state.dt_parent[node])
        n, _ = _rows_of(state, dt, bits, model._cat_offset, mask, out)
        np.testing.assert_array_equal(out[:n], np.flatnonzero(match))


@pytest.mark.parametrize("seed", range(5))
def test_completion_is_never_worse_than_the_tried_splits_and_is_exact_when_the_root_is_solved(seed):
    X, y, _ = _random_problem(20 + seed, n_rows=200)
    assembled = TSDTClassifier(lambda_=0.01, max_iter=100, exact_effort=0.0, random_state=seed).fit(X, y)
    starved = TSDTClassifier(lambda_=0.01, max_iter=100, exact_effort=0.01, random_state=seed).fit(X, y)
    completed = TSDTClassifier(lambda_=0.01, max_iter=100, random_state=seed).fit(X, y)
    assert not assembled.proven_optimal_ and not starved.proven_optimal_
    assert starved.objective_ >= assembled.objective_ - 1e-12
    assert completed.proven_optimal_
    assert completed.objective_ == pytest.approx(optimal_categorical_tree(X, y, 0.01).objective_, abs=1e-12)
    assert completed.objective_ == pytest.approx(completed.score(X, y) - 0.01 * completed.n_splits_, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_default_reaches_the_monk2_optimum_where_the_search_alone_stays_shallow(seed):
    X, y = load_monk2()
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = X[order], y[order]
    optimum = optimal_categorical_tree(X, y, 0.005)
    assert (optimum.n_leaves_, round(optimum.objective_, 4)) == (85, 0.7863)
    model = TSDTClassifier(lambda_=0.005, random_state=seed).fit(X, y)
    assert model.proven_optimal_
    assert model.objective_ == pytest.approx(optimum.objective_, abs=1e-12) and model.n_leaves_ == 85
    shallow = TSDTClassifier(lambda_=0.005, exact_effort=0.0, random_state=seed).fit(X, y)
    assert shallow.objective_ < optimum.objective_ - 0.01


def test_default_reaches_the_tic_tac_toe_optimum_past_the_near_tie():
    X, y = load_tic_tac_toe()
    order = np.random.default_rng(19).permutation(len(y))
    X, y = X[order], y[order]
    model = TSDTClassifier(lambda_=0.01, random_state=19).fit(X, y)
    # The exact optimum (0.7592, 9 leaves) against a 0.7588 runner-up.
    assert model.proven_optimal_ and round(model.objective_, 4) == 0.7592 and model.n_leaves_ == 9
    shallow = TSDTClassifier(lambda_=0.01, exact_effort=0.0, random_state=19).fit(X, y)
    assert shallow.objective_ < model.objective_ - 1e-4


def test_partial_fit_completes_on_the_distinct_rows_of_the_stream():
    X, y = load_monk2()
    rng = np.random.default_rng(4)
    order = np.concatenate([rng.permutation(len(y)) for _ in range(12)])  # every row 12 times, shuffled
    model = TSDTClassifier(lambda_=0.005, batch_size=50, random_state=4)
    for start in range(0, len(order), 400):
        rows = order[start : start + 400]
        model.partial_fit(X[rows], y[rows], classes=[0, 1], n_categories=[3, 3, 2, 3, 4, 2])
    assert len(model._patterns[2]) == len(np.unique(np.column_stack([X, y]), axis=0))
    assert model._patterns[2].sum() == len(order)
    optimum = optimal_categorical_tree(X, y, 0.005)
    assert model.proven_optimal_
    assert model.objective_ == pytest.approx(optimum.objective_, abs=1e-12)  # on the rows streamed: 12 copies
    assert model.score(X, y) == pytest.approx(optimum.score(X, y))
    # After fit (whose rows are not kept) and for the paper's variants: the stream statistics.
    refit = TSDTClassifier(lambda_=0.005, max_iter=50, random_state=4).fit(X, y).partial_fit(X[:100], y[:100])
    assert refit._patterns == () and not refit.proven_optimal_
    paper = TSDTClassifier(lambda_=0.005, batch_size=50, variant="fast", random_state=4).partial_fit(X, y)
    assert paper._patterns == () and not paper.proven_optimal_


def test_partial_fit_drops_the_rows_past_the_cap_and_goes_on_with_the_search(monkeypatch):
    import bandit_tree_tools.tsdt._search as search

    X, y = or_of_equal(n_rows=600, seed=3)
    monkeypatch.setattr(search, "PATTERN_CAP", 50)  # 3**4 x 2 possible pairs: the second chunk passes 50
    model = TSDTClassifier(lambda_=0.01, batch_size=20, random_state=0).partial_fit(X[:40], y[:40])
    assert model.proven_optimal_ and len(model._patterns[2]) <= 40
    model.partial_fit(X[40:], y[40:])
    assert model._patterns == () and not model.proven_optimal_
    model.partial_fit(X[:100], y[:100])  # the stream goes on without them
    assert model._patterns == () and model.n_iter_ == 2 + 28 + 5


def test_columns_with_one_value_leave_the_completion_its_index():
    """After ``discretize(X, model=...)`` every column the model does not
    split has one value; 60 of them (here each the last of three categories,
    so that a split of the search on one leaves empty children) filled the
    62 bits of the solver's keys, and the completion was skipped."""
    X, y = or_of_equal(n_rows=300, seed=0)
    wide = np.hstack([np.full((300, 60), 2, dtype=np.int64), X])
    exact = optimal_categorical_tree(X, y, 0.01)
    model = TSDTClassifier(lambda_=0.01, max_iter=300, random_state=0).fit(wide, y)
    assert model.proven_optimal_
    assert model.score(wide, y) - 0.01 * model.n_splits_ == pytest.approx(exact.objective_)
    np.testing.assert_array_equal(model.predict(wide), exact.predict(X))
    # the search does not try them either; the paper's Fast-TSDT splits on every attribute, as its expansion does
    for variant, tried_constant in (("optimistic", False), ("fast", True)):
        state = TSDTClassifier(lambda_=0.01, max_iter=50, variant=variant, random_state=0).fit(wide, y)._state
        split = state.dt_feature[1 : int(state.counters[K.C_DT])]
        assert bool(np.any(split < 60)) == tried_constant and np.any(split >= 60)


def test_completion_is_skipped_without_an_index():
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 2, size=(300, 45))  # 3**45 combinations of tests: beyond the solver's 62-bit keys
    target = wide[:, 0] ^ wide[:, 1]
    model = TSDTClassifier(lambda_=0.05, max_iter=200, random_state=0).fit(wide, target)
    assert not model.proven_optimal_ and model.n_leaves_ == 4


@pytest.mark.parametrize("effort", [-1.0, np.inf, "a lot"])
def test_bad_exact_effort_is_refused(effort):
    X, y = or_of_equal(n_rows=50)
    with pytest.raises(ParameterError, match="exact_effort"):
        TSDTClassifier(exact_effort=effort).fit(X, y)
