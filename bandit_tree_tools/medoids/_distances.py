"""Distances between rows, as numba kernels.

Every algorithm in this folder reads distances through one kernel,
``_distance(X, Y, i, j, code, p, user)``: the dissimilarity between point
``X[i]`` and medoid (or candidate) ``Y[j]``. One kernel means one definition
of every metric, so exact PAM on a distance matrix and BanditPAM on the raw
rows see bitwise the same numbers, which is what lets the tests demand that
BanditPAM with a full budget returns exactly PAM's medoids.

Built-in metrics are selected by an integer code (one compiled kernel serves
them all, cached on disk).
A user metric is a numba-compiled function ``f(a, b) -> float`` of two
float64 rows; it is recompiled as a C callback of one fixed signature, so the
kernels that call it stay cached (a numba dispatcher passed as an argument
would specialise, and recompile, every kernel for every callable).
"""

import math

import numba
import numpy as np
from numba import types

from .._kernels_inline import empty, full, larger, smaller, zeros
from .._numba_config import helper, kernel
from ..exceptions import DataError, ParameterError

EUCLIDEAN, SQEUCLIDEAN, MANHATTAN, MINKOWSKI, CHEBYSHEV, COSINE, PRECOMPUTED, CALLABLE = range(8)

METRICS = {
    "euclidean": EUCLIDEAN,
    "l2": EUCLIDEAN,
    "sqeuclidean": SQEUCLIDEAN,
    "manhattan": MANHATTAN,
    "l1": MANHATTAN,
    "cityblock": MANHATTAN,
    "minkowski": MINKOWSKI,
    "chebyshev": CHEBYSHEV,
    "cosine": COSINE,
    "precomputed": PRECOMPUTED,
}
"""Metric name -> kernel code. Besides these names, ``metric`` may be a
numba-compiled function of two float64 rows."""

USER_METRIC_SIGNATURE = types.float64(types.float64[::1], types.float64[::1])


@numba.cfunc(USER_METRIC_SIGNATURE, cache=True)
def _no_user_metric(a, b):  # placeholder passed when the metric is built in
    return 0.0


# Reassociation lets LLVM vectorise the sums (2.5x faster at d = 784). The
# order it picks depends only on the loop and the target CPU, so every kernel
# that calls _distance still gets bitwise the same value for the same pair.
_FAST = {"reassoc", "contract"}


@helper(fastmath=_FAST)
def _sum_sq_diff(x, y):
    s = 0.0
    for t in range(x.shape[0]):
        e = x[t] - y[t]
        s += e * e
    return s


@helper(fastmath=_FAST)
def _sum_abs_diff(x, y):
    s = 0.0
    for t in range(x.shape[0]):
        s += abs(x[t] - y[t])
    return s


@helper
def _distance(X, Y, i, j, code, p, user):
    """Dissimilarity of point X[i] to medoid Y[j]; for "precomputed", X[i, j]."""
    if code == PRECOMPUTED:
        return X[i, j]
    if code == CALLABLE:
        return user(X[i], Y[j])
    if code == EUCLIDEAN:
        return math.sqrt(_sum_sq_diff(X[i], Y[j]))
    if code == SQEUCLIDEAN:
        return _sum_sq_diff(X[i], Y[j])
    if code == MANHATTAN:
        return _sum_abs_diff(X[i], Y[j])
    d = X.shape[1]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    if code == CHEBYSHEV:
        for t in range(d):
            e0 = abs(X[i, t] - Y[j, t])
            if e0 > a0:
                a0 = e0
        return a0
    if code == MINKOWSKI:
        for t in range(d):
            a0 += abs(X[i, t] - Y[j, t]) ** p
        return a0 ** (1.0 / p)
    # cosine: 1 - cos(angle); a zero row is at distance 1 from any other row
    # and 0 from another zero row (scikit-learn's convention for the former)
    for t in range(d):
        a0 += X[i, t] * Y[j, t]
        a1 += X[i, t] * X[i, t]
        a2 += Y[j, t] * Y[j, t]
    if a1 == 0.0 or a2 == 0.0:
        return 0.0 if a1 == a2 else 1.0
    s = 1.0 - a0 / (math.sqrt(a1) * math.sqrt(a2))
    return smaller(larger(s, 0.0), 2.0)


_BLOCK = 32  # rows per tile: two tiles of 784-d rows stay in the L2 cache


@helper
def _tile(X, Y, D, i0, i1, j0, j1, code, p, user, symmetric):
    """One tile of ``_pairwise``; with ``symmetric`` the mirror entries are
    written while the tile's rows are still in cache."""
    for i in range(i0, i1):
        for j in range(larger(j0, i) if symmetric else j0, j1):
            v = _distance(X, Y, np.int64(i), np.int64(j), code, p, user)
            D[i, j] = v
            if symmetric:
                D[j, i] = v


# _pairwise and _to_medoids stay numba parallel loops, unlike the package's other row loops
# (_threads.run_chunks): numba compiles a parallel loop's body with its arrays marked as not
# aliasing one another, and the same loops as serial kernels over chunks ran 1.5-2 times slower
# (3,000 x 3,000 distances; 200,000 rows to 5 medoids), which their compile time does not repay.
@kernel(parallel=True)
def _pairwise(X, Y, code, p, user, symmetric):
    """Matrix D[i, j] = _distance(X, Y, i, j); with ``symmetric`` (X is Y and
    the metric is symmetric) only the upper triangle is computed. Tiled, so
    that long rows are read from cache rather than from memory."""
    n = X.shape[0]
    m = Y.shape[0]
    D = empty((n, m), np.float64)
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    m_blocks = (m + _BLOCK - 1) // _BLOCK
    # in the triangle, block row b has n_blocks - b tiles: pairing row w with
    # row n_blocks - 1 - w gives every work item the same number of tiles
    n_items = (n_blocks + 1) // 2 if symmetric else n_blocks
    for item in numba.prange(n_items):
        w = np.int64(item)  # a prange index is unsigned: n_blocks - 1 - item would be a float
        for half in range(2 if symmetric else 1):
            bi = w if half == 0 else n_blocks - 1 - w
            if half == 1 and bi == w:
                break
            i0 = bi * _BLOCK
            i1 = smaller(i0 + _BLOCK, n)
            for bj in range(bi if symmetric else 0, m_blocks):
                j0 = bj * _BLOCK
                _tile(X, Y, D, i0, i1, j0, smaller(j0 + _BLOCK, m), code, p, user, symmetric)
    return D


@kernel(parallel=True)
def _to_medoids(X, Y, medoids, code, p, user):
    """D[i, c] = distance of X[i] to medoid Y[medoids[c]]."""
    n = X.shape[0]
    k = medoids.shape[0]
    D = empty((n, k), np.float64)
    for i in numba.prange(n):
        for c in range(k):
            D[i, c] = _distance(X, Y, np.int64(i), np.int64(medoids[c]), code, p, user)
    return D


class Metric:
    """A resolved metric: kernel code, Minkowski power and user callback."""

    def __init__(self, name, code, p=2.0, user=None):
        self.name = name
        self.code = code
        self.p = float(p)
        self.user = _no_user_metric if user is None else user

    @property
    def symmetric(self) -> bool:
        # built-in metrics are bitwise symmetric; a user's function may not be
        return self.code not in (CALLABLE, PRECOMPUTED)

    @property
    def args(self):
        return self.code, self.p, self.user

    def __repr__(self):
        return f"Metric({self.name!r})"


def resolve_metric(metric, p=2.0) -> Metric:
    """Check ``metric`` (a name of :data:`METRICS` or a numba-compiled
    function) and return the kernel's view of it."""
    if isinstance(metric, str):
        code = METRICS.get(metric.lower())
        if code is None:
            raise ParameterError(
                f"unknown metric {metric!r}; known metrics: {sorted(METRICS)}, or a numba-compiled "
                "function f(a, b) -> float of two float64 rows"
            )
        if code == MINKOWSKI and not (p > 0 and math.isfinite(p)):
            raise ParameterError(f"the minkowski metric needs a finite power p > 0, got p={p!r}")
        return Metric(metric.lower(), code, p if code == MINKOWSKI else 2.0)
    if callable(metric):
        if not isinstance(metric, numba.core.dispatcher.Dispatcher):
            name = getattr(metric, "__name__", type(metric).__name__)
            raise ParameterError(
                f"metric {name!r} is a plain Python callable; the distance kernels run in numba and can only call "
                "numba-compiled functions: decorate it with @numba.njit (signature f(a, b) -> float for two "
                f"float64 rows), or pass one of {sorted(METRICS)}"
            )
        try:
            user = numba.cfunc(USER_METRIC_SIGNATURE)(metric.py_func)
        except Exception as error:  # numba raises many types while typing user code
            raise ParameterError(
                f"metric {metric.py_func.__name__!r} could not be compiled as f(a: float64[::1], b: float64[::1]) "
                f"-> float64: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            ) from None
        return Metric(metric.py_func.__name__, CALLABLE, 2.0, user)
    raise ParameterError(f"metric must be a string or a numba-compiled function, got {type(metric).__name__}")


@kernel(parallel=True)
def _matrix_summary(D):
    """(smallest entry, largest entry, largest |D[i, j] - D[j, i]|) of each
    row block of a square matrix, in one pass over tiles (no n x n
    temporaries); the caller reduces them (numpy's reductions in a kernel
    would compile in every fresh environment)."""
    n = D.shape[0]
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    low = full(n_blocks, np.inf, np.float64)
    high = full(n_blocks, -np.inf, np.float64)
    asymmetry = zeros(n_blocks, np.float64)
    for bi in numba.prange(n_blocks):
        i0 = bi * _BLOCK
        for i in range(i0, smaller(i0 + _BLOCK, n)):
            for j in range(n):
                low[bi] = smaller(low[bi], D[i, j])
                high[bi] = larger(high[bi], D[i, j])
        for j0 in range(i0, n, _BLOCK):
            for i in range(i0, smaller(i0 + _BLOCK, n)):
                for j in range(larger(j0, i + 1), smaller(j0 + _BLOCK, n)):
                    asymmetry[bi] = larger(asymmetry[bi], abs(D[i, j] - D[j, i]))
    return low, high, asymmetry


def check_precomputed(D: np.ndarray) -> None:
    """A precomputed dissimilarity matrix (finite float64, checked before)
    must be square, non-negative and symmetric (k-medoids is defined here for
    symmetric dissimilarities)."""
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise DataError(
            f"metric='precomputed' needs a square (n, n) distance matrix, got shape {D.shape}; "
            "pass pairwise distances, or pass the rows themselves with a metric name"
        )
    if D.size == 0:
        return
    lows, highs, asymmetries = _matrix_summary(D)
    low, high, asymmetry = float(lows.min()), float(highs.max()), float(asymmetries.max())
    if low < 0:
        raise DataError("the precomputed distance matrix has negative entries; distances must be >= 0")
    if asymmetry > 1e-9 * max(high, 1e-300):
        raise DataError(
            f"the precomputed distance matrix is not symmetric (max |D - D.T| = {asymmetry:.3g}); "
            "symmetrise it, e.g. (D + D.T) / 2"
        )


def pairwise_distances(X, Y=None, *, metric="euclidean", p=2.0) -> np.ndarray:
    """Distance matrix ``D[i, j] = d(X[i], Y[j])`` with this module's kernels
    (``Y=None`` means ``Y = X``)."""
    resolved = metric if isinstance(metric, Metric) else resolve_metric(metric, p)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if resolved.code == PRECOMPUTED:
        return X.copy()
    same = Y is None
    Y = X if same else np.ascontiguousarray(Y, dtype=np.float64)
    return _pairwise(X, Y, *resolved.args, same and resolved.symmetric)
