"""The MABSplit kernels against the slow references in tests/oracles/mabsplit.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_tree_tools.mabsplit import _kernels
from bandit_tree_tools.mabsplit._builder import seed_state
from tests.oracles.mabsplit import (
    reference_arm_values,
    reference_delta_variance,
    reference_histogram,
    reference_impurity,
    reference_linspace_edges,
)

CRITERION_CODES = {"gini": _kernels.GINI, "entropy": _kernels.ENTROPY, "squared_error": _kernels.SQUARED_ERROR}


def make_data(seed, n_rows=300, n_features=4, n_classes=3, discrete=False, missing=False):
    """Rows, class codes and regression targets; with ``missing``, NaN in
    about a fifth of features 0 and 2 (of rows of both classes)."""
    random = np.random.RandomState(seed)
    X = random.normal(size=(n_rows, n_features))
    if discrete:
        X = np.round(X * 2) / 2  # repeated values: rows exactly on the edges
    X[:, -1] = 1.5  # a constant feature: no candidates
    y_code = ((X[:, 0] > 0).astype(int) + random.randint(0, n_classes, n_rows)) % n_classes
    y_value = X[:, 0] * 2.0 + random.normal(size=n_rows)
    if missing:
        X[random.uniform(size=n_rows) < 0.2, 0] = np.nan
        X[(random.uniform(size=n_rows) < 0.3) & (y_code == 1), 2] = np.nan  # NaN says something about y
    X = np.ascontiguousarray(X, dtype=np.float32)
    return X, y_code.astype(np.int64), y_value


def node_edges(X, mode, n_bins, seed=0):
    n_features = X.shape[1]
    candidates = np.arange(n_features, dtype=np.int64)
    edges = np.zeros((n_features, n_bins))
    n_edges = np.zeros(n_features, dtype=np.int64)
    n_missing = np.full(n_features, -1, dtype=np.int64)
    rows = np.arange(X.shape[0], dtype=np.int64)
    _kernels._node_edges(
        X,
        rows,
        0,
        X.shape[0],
        candidates,
        n_features,
        mode,
        n_bins,
        True,
        seed_state(seed),
        edges,
        n_edges,
        True,
        n_missing,
    )
    np.testing.assert_array_equal(n_missing, np.isnan(X).sum(axis=0))
    return candidates, edges, n_edges, [edges[a, : n_edges[a]] for a in range(n_features)]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_bins=st.integers(1, 15), discrete=st.booleans(), missing=st.booleans())
def test_linspace_edges_match_reference(seed, n_bins, discrete, missing):
    X, _, _ = make_data(seed, discrete=discrete, missing=missing)
    _, _, n_edges, edges = node_edges(X, _kernels.BINS_LINSPACE, n_bins)
    for feature in range(X.shape[1]):
        np.testing.assert_array_equal(edges[feature], reference_linspace_edges(X[:, feature], n_bins))
    assert n_edges[-1] == 0  # the constant feature


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("mode", [_kernels.BINS_RANDOM, _kernels.BINS_QUANTILE])
def test_random_and_quantile_edges_are_sorted_float32_inside_the_range(mode, missing):
    X, _, _ = make_data(3, missing=missing)
    _, _, n_edges, edges = node_edges(X, mode, 11, seed=5)
    for feature in range(X.shape[1] - 1):
        e = edges[feature]
        assert 1 <= e.size <= 11
        assert np.all(np.diff(e) > 0)
        assert e[0] >= np.nanmin(X[:, feature]) and e[-1] < np.nanmax(X[:, feature])
        np.testing.assert_array_equal(e, e.astype(np.float32).astype(np.float64))
    assert n_edges[-1] == 0
    # the same seed gives the same edges
    again = node_edges(X, mode, 11, seed=5)[3]
    for a, b in zip(edges, again):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    criterion=st.sampled_from(["gini", "entropy", "squared_error"]),
    discrete=st.booleans(),
    missing=st.booleans(),
)
def test_insert_batch_matches_reference_histogram(seed, criterion, discrete, missing):
    X, y_code, y_value = make_data(seed, discrete=discrete, missing=missing)
    candidates, edges, n_edges, edge_list = node_edges(X, _kernels.BINS_LINSPACE, 11)
    regression = criterion == "squared_error"
    width = 3 if regression else 3
    hist = np.zeros((X.shape[1], 13, width))
    rows = np.random.RandomState(seed).permutation(X.shape[0]).astype(np.int64)
    active = n_edges > 0
    shift = 0.25
    insertions = _kernels._insert_batch(
        X, rows, 10, 200, candidates, active, edges, n_edges, y_code, y_value, shift, regression, True, hist
    )
    assert insertions == 190 * int(active.sum())
    expected = reference_histogram(
        X, rows[10:200], candidates, edge_list, y_value if regression else y_code, None if regression else 3, shift
    )
    for a in np.flatnonzero(active):
        np.testing.assert_allclose(hist[a, : n_edges[a] + 1], expected[a, : n_edges[a] + 1], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(hist[a, -1], expected[a, -1], rtol=1e-12, atol=1e-9)  # the NaN bin
    assert not hist[~active].any()
    assert hist[0, -1].any() == missing


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("counts", [[5, 9, 30], [1, 0, 7], [12, 12], [3, 4, 5, 6, 0, 1], [10, 0, 0]])
def test_class_impurity_and_delta_variance_match_reference(criterion, counts):
    counts = np.array(counts, dtype=float)
    impurity, variance = _kernels._class_impurity(counts, counts.sum(), CRITERION_CODES[criterion])
    labels = np.repeat(np.arange(len(counts)), counts.astype(int))
    assert impurity == pytest.approx(reference_impurity(labels, criterion, len(counts)), rel=1e-12, abs=1e-15)
    assert variance == pytest.approx(reference_delta_variance(counts, criterion), rel=1e-5, abs=1e-12)


def test_entropy_gradient_uses_log_pk_minus_log_pj():
    # Two classes, p = (0.2, 0.8): dE/dp_1 = log2(0.8) - log2(0.2) = 2 bits,
    # var = p_1 (1 - p_1) * 2^2 / n.
    counts = np.array([20.0, 80.0])
    _, variance = _kernels._class_impurity(counts, 100.0, _kernels.ENTROPY)
    assert variance == pytest.approx(0.2 * 0.8 * 4.0 / 100.0, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    criterion=st.sampled_from(["gini", "entropy", "squared_error"]),
    min_samples_leaf=st.integers(1, 40),
    missing=st.booleans(),
)
def test_scores_on_all_rows_are_exact(seed, criterion, min_samples_leaf, missing):
    X, y_code, y_value = make_data(seed, n_rows=250, discrete=seed % 2 == 0, missing=missing)
    candidates, edges, n_edges, edge_list = node_edges(X, _kernels.BINS_LINSPACE, 11)
    regression = criterion == "squared_error"
    y = y_value if regression else y_code
    hist = np.zeros((X.shape[1], 13, 3))
    rows = np.arange(X.shape[0], dtype=np.int64)
    _kernels._insert_batch(
        X,
        rows,
        0,
        X.shape[0],
        candidates,
        n_edges > 0,
        edges,
        n_edges,
        y_code,
        y_value,
        float(y_value.mean()),
        regression,
        True,
        hist,
    )
    arm_active = np.zeros((X.shape[1], 22), dtype=bool)  # edge t with NaN right, then with NaN left (11 + t)
    for a in range(X.shape[1]):
        arm_active[a, : n_edges[a]] = True
        arm_active[a, 11 : 11 + n_edges[a]] = True
    mu, var = np.full((X.shape[1], 22), np.nan), np.full((X.shape[1], 22), np.nan)
    valid = np.zeros((X.shape[1], 22), dtype=bool)
    n = X.shape[0]
    _kernels._score_arms(hist, n_edges, arm_active, CRITERION_CODES[criterion], n, n, min_samples_leaf, mu, var, valid)
    n_classes = None if regression else 3
    for first, missing_left in ((0, False), (11, True)):
        expected = reference_arm_values(
            X, y, candidates, edge_list, criterion, n_classes, min_samples_leaf, missing_left
        )
        for a in range(X.shape[1]):
            for t in range(n_edges[a]):
                if np.isnan(expected[a][t]):
                    assert not valid[a, first + t]
                else:
                    assert valid[a, first + t]
                    assert mu[a, first + t] == pytest.approx(expected[a][t], rel=1e-9, abs=1e-12)
                    assert var[a, first + t] == 0.0  # finite-population correction: no uncertainty left


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_sampled_scores_carry_delta_variance_with_finite_population_correction(criterion):
    X, y_code, y_value = make_data(11, n_rows=400)
    candidates, edges, n_edges, edge_list = node_edges(X, _kernels.BINS_LINSPACE, 11)
    regression = criterion == "squared_error"
    rows = np.random.RandomState(0).permutation(X.shape[0]).astype(np.int64)
    n_sampled, n_node = 150, X.shape[0]
    hist = np.zeros((X.shape[1], 13, 3))
    _kernels._insert_batch(
        X, rows, 0, n_sampled, candidates, n_edges > 0, edges, n_edges, y_code, y_value, 0.0, regression, True, hist
    )
    arm_active = np.zeros((X.shape[1], 22), dtype=bool)
    arm_active[0, : n_edges[0]] = True
    mu, var = np.zeros((X.shape[1], 22)), np.zeros((X.shape[1], 22))
    valid = np.zeros((X.shape[1], 22), dtype=bool)
    _kernels._score_arms(hist, n_edges, arm_active, CRITERION_CODES[criterion], n_node, n_sampled, 1, mu, var, valid)
    sample = rows[:n_sampled]
    x = X[sample, 0]
    correction = (n_node - n_sampled) / (n_node - 1)
    for t, edge in enumerate(edge_list[0]):
        left = x <= edge
        if left.all() or not left.any():
            continue
        if regression:
            parts = [y_value[sample][left], y_value[sample][~left]]
            child_var = [2 * np.var(part) ** 2 / part.size for part in parts]
        else:
            parts = [y_code[sample][left], y_code[sample][~left]]
            child_var = [reference_delta_variance(np.bincount(part, minlength=3), criterion) for part in parts]
        weights = [part.size / n_sampled for part in parts]
        expected = (weights[0] ** 2 * child_var[0] + weights[1] ** 2 * child_var[1]) * correction
        assert var[0, t] == pytest.approx(expected, rel=1e-5, abs=1e-14)
        parent = reference_impurity(y_value[sample] if regression else y_code[sample], criterion, 3)
        value = sum(w * reference_impurity(part, criterion, 3) for w, part in zip(weights, parts)) - parent
        assert mu[0, t] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_random_numbers_are_uniform_and_reproducible():
    state = seed_state(42)
    draws = np.array([_kernels._uniform(state) for _ in range(20000)])
    assert draws.min() >= 0.0 and draws.max() < 1.0
    assert abs(draws.mean() - 0.5) < 0.01
    again = seed_state(42)
    assert _kernels._uniform(again) == draws[0]
