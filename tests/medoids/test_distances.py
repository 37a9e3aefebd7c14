import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import cdist

from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.medoids import METRICS, pairwise_distances
from bandit_tree_tools.medoids._distances import check_precomputed, resolve_metric
from tests.oracles import medoids as oracle

values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def row_sets(draw):
    n = draw(st.integers(1, 7))
    d = draw(st.integers(1, 11))
    X = draw(arrays(np.float64, (n, d), elements=values))
    if draw(st.booleans()):  # duplicated rows and zero rows are where metrics misbehave
        X[-1] = X[0]
        X[0] = 0.0
    return X


@settings(max_examples=25, deadline=None)
@given(row_sets(), st.sampled_from(sorted(oracle.DISTANCES)))
def test_every_metric_matches_the_oracle(X, name):
    D = pairwise_distances(X, metric=name)
    expected = oracle.distance_matrix(X, oracle.DISTANCES[name])
    np.testing.assert_allclose(D, expected, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(expected).max())))
    # built-in metrics are bitwise symmetric, which PAM and BanditPAM rely on
    np.testing.assert_array_equal(D, D.T)


@settings(max_examples=15, deadline=None)
@given(row_sets(), st.sampled_from([0.5, 1.0, 1.5, 3.0]))
def test_minkowski_matches_the_oracle(X, p):
    D = pairwise_distances(X, metric="minkowski", p=p)
    expected = oracle.distance_matrix(X, lambda a, b: oracle.minkowski(a, b, p))
    np.testing.assert_allclose(D, expected, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(expected).max())))


def test_metrics_agree_with_scipy_and_aliases():
    X = np.random.default_rng(3).normal(size=(9, 6))
    for name, scipy_name in [
        ("euclidean", "euclidean"),
        ("l2", "euclidean"),
        ("sqeuclidean", "sqeuclidean"),
        ("manhattan", "cityblock"),
        ("l1", "cityblock"),
        ("cityblock", "cityblock"),
        ("chebyshev", "chebyshev"),
        ("cosine", "cosine"),
    ]:
        np.testing.assert_allclose(pairwise_distances(X, metric=name), cdist(X, X, scipy_name), atol=1e-12)
    np.testing.assert_allclose(pairwise_distances(X, metric="minkowski", p=3), cdist(X, X, "minkowski", p=3))


def test_rectangular_and_precomputed():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(pairwise_distances(X, Y), cdist(X, Y))
    D = cdist(X, X)
    np.testing.assert_array_equal(pairwise_distances(D, metric="precomputed"), D)


@numba.njit
def weighted_l1(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total += (t + 1) * abs(a[t] - b[t])
    return total


def test_numba_callable_metric_matches_the_oracle():
    X = np.random.default_rng(1).normal(size=(6, 4))
    expected = oracle.distance_matrix(X, lambda a, b: sum((t + 1) * abs(a[t] - b[t]) for t in range(len(a))))
    np.testing.assert_allclose(pairwise_distances(X, metric=weighted_l1), expected, rtol=1e-12)


def test_plain_python_callable_is_refused_with_advice():
    def python_distance(a, b):
        return float(np.abs(a - b).sum())

    with pytest.raises(ParameterError, match=r"plain Python callable.*numba.njit"):
        resolve_metric(python_distance)


def test_uncompilable_numba_callable_is_explained():
    @numba.njit
    def bad(a, b):
        return a  # an array, not a float

    with pytest.raises(ParameterError, match="could not be compiled"):
        resolve_metric(bad)


def test_unknown_metric_lists_the_known_ones():
    with pytest.raises(ParameterError, match=r"unknown metric 'hamming'.*'chebyshev'.*'cosine'"):
        resolve_metric("hamming")
    assert {"euclidean", "manhattan", "minkowski", "precomputed"} <= set(METRICS)
    with pytest.raises(ParameterError, match="p > 0"):
        resolve_metric("minkowski", p=0)
    with pytest.raises(ParameterError, match="string or a numba-compiled function"):
        resolve_metric(3)


def test_bad_precomputed_matrices():
    with pytest.raises(DataError, match="square"):
        check_precomputed(np.zeros((3, 4)))
    asymmetric = np.array([[0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(DataError, match="not symmetric"):
        check_precomputed(asymmetric)
    with pytest.raises(DataError, match="negative"):
        check_precomputed(-np.ones((2, 2)))
    check_precomputed(np.array([[0.0, 1.0], [1.0, 0.0]]))
    # the checks run tile by tile: a flaw far from the diagonal, past the
    # first tiles, is found too
    D = pairwise_distances(np.random.default_rng(0).normal(size=(70, 3)))
    check_precomputed(D)
    for flaw in ("asymmetric", "negative"):
        bad = D.copy()
        bad[3, 65] = -1.0 if flaw == "negative" else D[3, 65] * (1 + 1e-6)
        with pytest.raises(DataError, match="negative" if flaw == "negative" else "not symmetric"):
            check_precomputed(bad)


def test_cosine_of_zero_rows():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    D = pairwise_distances(X, metric="cosine")
    assert D[0, 1] == 0.0 and D[0, 2] == 1.0 and math.isclose(D[2, 2], 0.0, abs_tol=1e-15)


_DISTANCE_SIGNATURES = """
import numpy as np
from sklearn.tree import DecisionTreeClassifier
from bandit_tree_tools import leaf_medoids
from bandit_tree_tools.medoids import KMedoids
from bandit_tree_tools.medoids._distances import _distance
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3))
y = (X[:, 0] > 0).astype(int)
leaf_medoids(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y), X, n_medoids=2)
for algorithm in ("pam", "banditpam"):
    KMedoids(n_clusters=3, algorithm=algorithm, random_state=0).fit(X)
print(sorted({(str(s[2]), str(s[3])) for s in _distance.signatures}))
"""


@pytest.mark.slow
def test_distance_kernel_is_compiled_for_int64_indices_only(tmp_path):
    """Every kernel calling ``_distance`` passes int64 point indices, so a fresh install
    compiles it once per metric rather than once per caller's index type. Run with an
    empty numba cache: kernels loaded from the cache do not compile what they call."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "-c", _DISTANCE_SIGNATURES], env=env, cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[('int64', 'int64')]"
