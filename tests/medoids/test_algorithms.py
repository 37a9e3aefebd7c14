"""Exact PAM against its definition, FasterPAM's local optimality, and
BanditPAM against exact PAM (bitwise with a full budget; on seeded problems
with the default confidence)."""

import math

import numba
import numpy as np
import pytest

from bandit_tree_tools.medoids import _core
from bandit_tree_tools.medoids._core import cache_width, fit_medoids
from bandit_tree_tools.medoids._distances import pairwise_distances, resolve_metric
from tests.oracles import medoids as oracle


def mixture(seed, n, d, centers, spread=3.0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=spread, size=(centers, d))
    return means[rng.integers(centers, size=n)] + rng.normal(size=(n, d))


def run(X, k, algorithm, metric="euclidean", **options):
    return fit_medoids(
        np.ascontiguousarray(X, dtype=np.float64), k, resolve_metric(metric), algorithm=algorithm, **options
    )


@pytest.mark.parametrize("seed", range(6))
def test_pam_follows_the_definition(seed):
    metric = ["euclidean", "manhattan", "cosine"][seed % 3]
    X = mixture(seed, 40, 3, 3)
    k = 2 + seed % 3
    D = oracle.distance_matrix(X, oracle.DISTANCES[metric])
    expected = oracle.pam(D, k)
    result = run(X, k, "pam", metric)
    np.testing.assert_array_equal(result.medoids, expected)
    assert result.converged and result.n_distance_calls == 40 * 41 // 2
    assert oracle.best_swap_gain(D, result.medoids) <= 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_fasterpam_reaches_a_swap_local_optimum(seed):
    X = mixture(seed, 50, 2, 4)
    D = pairwise_distances(X)
    result = run(X, 4, "fasterpam", random_state=seed)
    assert result.converged and len(set(result.medoids.tolist())) == 4
    assert oracle.best_swap_gain(D, result.medoids) <= 1e-9 * oracle.loss(D, result.medoids)
    # and its loss is within a few percent of PAM's
    assert oracle.loss(D, result.medoids) <= 1.05 * oracle.loss(D, oracle.pam(D, 4))


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan", "chebyshev", "cosine", "minkowski"])
@pytest.mark.parametrize("n", [7, 150])
def test_banditpam_with_a_full_budget_is_pam(metric, n):
    # infinite confidence: every arm is evaluated exactly, with PAM's own sums
    X = mixture(n, n, 4, 3)
    k = 3
    pam = run(X, k, "pam", metric)
    bandit = run(X, k, "banditpam", metric, build_confidence=math.inf, swap_confidence=math.inf, random_state=1)
    np.testing.assert_array_equal(bandit.medoids, pam.medoids)
    assert bandit.n_iter == pam.n_iter


def test_banditpam_tiny_batches_full_budget_on_duplicates_is_pam():
    # integer data full of exact ties: tie-breaking must match PAM's too
    X = np.random.default_rng(0).integers(0, 3, size=(60, 2)).astype(float)
    pam = run(X, 4, "pam", "manhattan")
    bandit = run(
        X,
        4,
        "banditpam",
        "manhattan",
        build_confidence=math.inf,
        swap_confidence=math.inf,
        batch_size=7,
        random_state=3,
    )
    np.testing.assert_array_equal(bandit.medoids, pam.medoids)


# With the default confidences (build 5, swap 8: radius sigma * sqrt((conf +
# ln arms) / t)) these seeded problems return PAM's medoids exactly; the
# guarantee is probabilistic (Theorem 3 of the paper), so the seeds are fixed.
CASES = [(seed, n) for seed in range(5) for n in (80, 400, 1200)]


@pytest.mark.parametrize("seed,n", CASES)
def test_banditpam_default_confidence_returns_pams_medoids(seed, n):
    metric = ["euclidean", "manhattan", "cosine", "sqeuclidean", "chebyshev"][seed]
    k = 2 + seed
    X = mixture(100 * seed + n, n, [2, 5, 20][seed % 3], k + 1)
    pam = run(X, k, "pam", metric)
    bandit = run(X, k, "banditpam", metric, random_state=seed, batch_size=40)
    np.testing.assert_array_equal(bandit.medoids, pam.medoids)


def test_banditpam_uses_far_fewer_distances_than_pam_on_larger_data():
    X = mixture(7, 4000, 5, 4)
    bandit = run(X, 4, "banditpam", random_state=0)
    pam = run(X, 4, "pam")
    np.testing.assert_array_equal(bandit.medoids, pam.medoids)
    assert bandit.n_distance_calls < 0.5 * 4000**2


@pytest.mark.parametrize("entries", [0, 45 * 150])
def test_banditpam_with_a_partial_distance_cache_is_pam(monkeypatch, entries):
    # short rows get a small cache: only the first `width` references of the
    # permutation are cached, the rest are recomputed whenever they are needed
    monkeypatch.setattr(_core, "CHEAP_CACHE_ENTRIES", entries)
    width = cache_width(150, 4, resolve_metric("manhattan"), 20)
    assert width == max(20, entries // 150) < 150
    X = mixture(11, 150, 4, 3)
    pam = run(X, 3, "pam", "manhattan")
    full = run(
        X,
        3,
        "banditpam",
        "manhattan",
        build_confidence=math.inf,
        swap_confidence=math.inf,
        batch_size=20,
        random_state=2,
    )
    default = run(X, 3, "banditpam", "manhattan", batch_size=20, random_state=2)
    np.testing.assert_array_equal(full.medoids, pam.medoids)
    np.testing.assert_array_equal(default.medoids, pam.medoids)


def test_cache_width_follows_the_cost_of_a_distance():
    # long rows and user metrics: the whole matrix when memory allows; short
    # rows: the small cache; a precomputed matrix needs none
    assert cache_width(1000, 784, resolve_metric("euclidean"), 100) == 1000
    assert cache_width(1000, 3, resolve_metric(squared_gap), 100) == 1000
    assert cache_width(10**6, 3, resolve_metric("euclidean"), 100) == 100
    assert cache_width(10**5, 3, resolve_metric("euclidean"), 100) == _core.CHEAP_CACHE_ENTRIES // 10**5
    assert cache_width(1000, 1000, resolve_metric("precomputed"), 100) == 0


@numba.njit
def squared_gap(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total += (a[t] - b[t]) ** 2
    return total


def test_user_metric_and_precomputed_agree_with_builtin():
    X = mixture(3, 90, 3, 3)
    builtin = run(X, 3, "pam", "sqeuclidean")
    user = run(X, 3, "banditpam", squared_gap, build_confidence=math.inf, swap_confidence=math.inf)
    precomputed = run(
        pairwise_distances(X, metric="sqeuclidean"),
        3,
        "banditpam",
        "precomputed",
        build_confidence=math.inf,
        swap_confidence=math.inf,
    )
    np.testing.assert_array_equal(user.medoids, builtin.medoids)
    np.testing.assert_array_equal(precomputed.medoids, builtin.medoids)


@pytest.mark.parametrize("algorithm", ["pam", "fasterpam", "banditpam"])
@pytest.mark.parametrize("n,k", [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3), (5, 4)])
def test_tiny_problems_never_crash(algorithm, n, k):
    X = np.arange(n * 2, dtype=float).reshape(n, 2) ** 1.5
    result = run(X, k, algorithm, random_state=0)
    assert sorted(set(result.medoids.tolist())) == sorted(result.medoids.tolist())
    assert result.medoids.shape == (k,) and result.medoids.max() < n
    D = pairwise_distances(X)
    if algorithm == "fasterpam":  # a swap-local optimum, not necessarily PAM's
        assert result.converged and oracle.best_swap_gain(D, result.medoids) <= 1e-9
    else:
        assert oracle.loss(D, result.medoids) == pytest.approx(oracle.loss(D, oracle.pam(D, k)), abs=1e-9)


@pytest.mark.parametrize("algorithm", ["pam", "fasterpam", "banditpam"])
def test_constant_and_duplicated_data(algorithm):
    constant = np.ones((500, 3))
    result = run(constant, 4, algorithm, random_state=0)
    np.testing.assert_array_equal(result.medoids, [0, 1, 2, 3])
    # two distinct values repeated: every medoid set with both values is optimal
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 5.0]]), 300, axis=0)
    result = run(X, 3, algorithm, random_state=0)
    assert oracle.loss(pairwise_distances(X), result.medoids) == 0.0  # the optimum: both values are medoids
    assert {tuple(row) for row in X[result.medoids]} == {(0.0, 0.0), (5.0, 5.0)}
    assert len(set(result.medoids.tolist())) == 3
    assert result.converged


def test_zero_sigma_references_do_not_end_the_search_early():
    # 300 copies of one point and 30 scattered ones: first batches often see only
    # the copies, where every arm's samples agree (sigma 0)
    rng = np.random.default_rng(5)
    X = np.vstack([np.zeros((300, 2)), rng.normal(loc=8.0, size=(30, 2))])
    pam = run(X, 2, "pam")
    bandit = run(X, 2, "banditpam", batch_size=20, random_state=2)
    np.testing.assert_array_equal(bandit.medoids, pam.medoids)


def test_max_iter_stops_swaps_and_reports_it():
    X = mixture(11, 200, 2, 6)
    capped = run(X, 6, "pam", max_iter=0)
    free = run(X, 6, "pam")
    assert free.n_iter > 0 and free.converged  # on these data PAM swaps after BUILD
    assert not capped.converged and capped.n_iter == 0
    one = run(X, 6, "pam", max_iter=1)
    assert one.n_iter == 1 and one.converged == (free.n_iter == 1)
    bandit = run(X, 6, "banditpam", max_iter=0, build_confidence=math.inf, swap_confidence=math.inf)
    np.testing.assert_array_equal(bandit.medoids, capped.medoids)


@numba.njit
def lopsided(a, b):
    # not symmetric: d(point, medoid) != d(medoid, point)
    return np.abs(a - b).sum() + 0.3 * max(a[0] - b[0], 0.0)


def test_asymmetric_user_metric_follows_the_definition():
    X = mixture(4, 60, 3, 3)
    D = np.array([[lopsided(X[o], X[x]) for x in range(60)] for o in range(60)])
    expected = oracle.pam(D, 3)
    np.testing.assert_array_equal(run(X, 3, "pam", lopsided).medoids, expected)
    bandit = run(X, 3, "banditpam", lopsided, build_confidence=math.inf, swap_confidence=math.inf)
    np.testing.assert_array_equal(bandit.medoids, expected)
    fast = run(X, 3, "fasterpam", lopsided, random_state=0)
    assert oracle.best_swap_gain(D, fast.medoids) <= 1e-9 * oracle.loss(D, fast.medoids)
