"""The validating wrapper around the k-medoids kernels: one call that runs
exact PAM, FasterPAM or BanditPAM on validated float64 rows and reports what
it did. Used by :class:`KMedoids` and by :func:`leaf_medoids`."""

import math
import os
from dataclasses import dataclass

import numpy as np

from ..exceptions import DataError, ParameterError
from . import _kernels, _kernels_bandit
from ._distances import CALLABLE, PRECOMPUTED, Metric, _pairwise, _to_medoids

ALGORITHMS = ("auto", "pam", "fasterpam", "banditpam")

# "auto" thresholds (rows), measured on 2 cores with benchmarks/bench_kmedoids.py:
# exact PAM on the distance matrix up to AUTO_PAM_MAX_N rows, FasterPAM up to
# AUTO_MATRIX_MAX_N rows (and while the matrix fits in memory), BanditPAM beyond.
AUTO_PAM_MAX_N = 2500
AUTO_MATRIX_MAX_N = 20000
# the (n, n) float64 matrix may take at most this fraction of available memory
MATRIX_MEMORY_FRACTION = 0.5
# BanditPAM caches d(o, x) for the first references of its permutation. Where
# a distance is dearer than a memory read (long rows, user metrics) the cache
# may take this fraction of available memory, up to the whole n x n matrix, so
# that near-tied arms, evaluated exactly in step after step, cost their
# distances once; for short rows it stays at CHEAP_CACHE_ENTRIES (128 MiB).
CACHE_MEMORY_FRACTION = 0.25
CHEAP_CACHE_ENTRIES = 2**24
CHEAP_DISTANCE_MAX_FEATURES = 64


@dataclass
class MedoidFit:
    medoids: np.ndarray
    n_iter: int
    n_distance_calls: int
    converged: bool
    algorithm: str


def available_memory() -> int:
    """Bytes of memory available to this process (Linux /proc/meminfo, else
    physical memory)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def matrix_fits(n: int) -> bool:
    return 8 * n * n <= MATRIX_MEMORY_FRACTION * available_memory()


def choose_algorithm(algorithm: str, n: int, metric: Metric) -> str:
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}; choose one of {ALGORITHMS}")
    if algorithm != "auto":
        if algorithm in ("pam", "fasterpam") and metric.code != PRECOMPUTED and not matrix_fits(n):
            raise DataError(
                f"algorithm={algorithm!r} needs the {n} x {n} distance matrix ({8 * n * n / 2**30:.1f} GiB), "
                f"more than half the available memory ({available_memory() / 2**30:.1f} GiB); "
                "use algorithm='banditpam' (or 'auto'), which never builds it"
            )
        return algorithm
    if metric.code == PRECOMPUTED or n <= AUTO_PAM_MAX_N:
        return "pam" if n <= AUTO_PAM_MAX_N else "fasterpam"
    if n <= AUTO_MATRIX_MAX_N and matrix_fits(n):
        return "fasterpam"
    return "banditpam"


def cache_width(n: int, n_features: int, metric: Metric, batch_size: int) -> int:
    """Columns of BanditPAM's (n, width) distance cache."""
    if metric.code == PRECOMPUTED:
        return 0  # the distances are already in memory
    if metric.code != CALLABLE and n_features < CHEAP_DISTANCE_MAX_FEATURES:
        entries = CHEAP_CACHE_ENTRIES
    else:
        entries = max(CHEAP_CACHE_ENTRIES, int(CACHE_MEMORY_FRACTION * available_memory()) // 8)
    return int(min(n, max(batch_size, entries // n)))


def is_constant(X: np.ndarray, metric: Metric) -> bool:
    """Every pairwise distance is zero (identical rows, or an all-zero
    precomputed matrix). Only decidable for built-in metrics."""
    if metric.code == CALLABLE or X.shape[0] == 0:
        return False
    if metric.code == PRECOMPUTED:
        return not np.any(X)
    return bool(np.all(X == X[0]))


def fit_medoids(
    X,
    n_clusters,
    metric: Metric,
    *,
    algorithm="auto",
    max_iter=100,
    build_confidence=5.0,
    swap_confidence=8.0,
    batch_size=100,
    random_state=None,
) -> MedoidFit:
    """k medoids of the rows of ``X`` (float64, C order, finite; for
    "precomputed" the checked (n, n) matrix). ``random_state`` is a
    ``numpy.random.Generator``-compatible seed."""
    n = X.shape[0]
    k = int(n_clusters)
    chosen = choose_algorithm(algorithm, n, metric)
    if k == n:
        return MedoidFit(np.arange(n, dtype=np.int64), 0, 0, True, chosen)
    if is_constant(X, metric):
        # all rows are equivalent: PAM's answer (lowest indices) without n^2 work
        return MedoidFit(np.arange(k, dtype=np.int64), 0, 0, True, chosen)
    rng = np.random.default_rng(random_state)
    if chosen in ("pam", "fasterpam"):
        if metric.code == PRECOMPUTED:
            D = X
            calls = n * n
        else:
            D = _pairwise(X, X, *metric.args, metric.symmetric)
            calls = n * (n + 1) // 2 if metric.symmetric else n * n
        # the kernels read DT[x, o] = d(o, x) row by row; the built-in metrics
        # and checked precomputed matrices are symmetric, a user metric may not be
        DT = np.ascontiguousarray(D.T) if metric.code == CALLABLE else D
        if chosen == "pam":
            medoids = _kernels._pam_build(DT, k)
            medoids, n_iter, converged = _kernels._pam_swap(DT, medoids, int(max_iter))
        else:
            start = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
            medoids, n_iter, _, converged = _kernels._fasterpam(DT, start, max(int(max_iter), 1))
        return MedoidFit(medoids, int(n_iter), int(calls), bool(converged), chosen)
    perm = rng.permutation(n).astype(np.int64)
    position = np.empty(n, dtype=np.int64)
    position[perm] = np.arange(n, dtype=np.int64)
    cache = np.full((n, cache_width(n, X.shape[1], metric, int(batch_size))), np.nan)
    counts = np.zeros(n, dtype=np.int64)
    build = float(build_confidence)
    swap = float(swap_confidence)
    medoids = _kernels_bandit._bandit_build(X, k, *metric.args, perm, position, cache, counts, int(batch_size), build)
    medoids, n_iter, converged = _kernels_bandit._bandit_swap(
        X, medoids, *metric.args, perm, position, cache, counts, int(batch_size), swap, int(max_iter)
    )
    return MedoidFit(medoids, int(n_iter), int(counts.sum()), bool(converged), chosen)


def distances_to(X, Y, medoids, metric: Metric) -> np.ndarray:
    """(n, k) distances of the rows of X to the medoid rows ``Y[medoids]``
    (for "precomputed", X's columns are the training rows)."""
    medoids = np.array(medoids, dtype=np.int64)
    if metric.code == PRECOMPUTED:
        return np.ascontiguousarray(X[:, medoids], dtype=np.float64)
    # writeable C arrays only: a read-only array (unpickled, memory-mapped)
    # is another numba type, and a user metric's callback refuses it
    X, Y = (
        array if array.flags.writeable and array.flags.c_contiguous else np.array(array, dtype=np.float64)
        for array in (X, Y)
    )
    return _to_medoids(X, Y, medoids, *metric.args)


def as_rows(X, *, what="X") -> np.ndarray:
    """float64, C-contiguous, writeable 2-D rows (NaN and infinity kept)."""
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise DataError(f"{what} must hold numbers: {error}") from None
    if array.ndim != 2:
        raise DataError(f"{what} must be 2-D (n_samples, n_features), got {array.ndim} dimensions")
    array = np.ascontiguousarray(array)
    if not array.flags.writeable:
        array = array.copy()
    return array


def check_rows(X, *, what="X", fix="impute or drop them") -> np.ndarray:
    """float64, C-contiguous, writeable, finite 2-D rows; ``fix`` ends the
    message for NaN or infinity."""
    array = as_rows(X, what=what)
    if not np.all(np.isfinite(array)):
        rows, columns = np.nonzero(~np.isfinite(array))
        count = f"{rows.size} values, the first" if rows.size > 1 else "1 value"
        raise DataError(
            f"{what} contains NaN or infinity ({count} at row {int(rows[0])}, column {int(columns[0])}); "
            f"distances need finite values: {fix}"
        )
    return array


def check_finite_loss(loss: float, metric: Metric, X: np.ndarray) -> None:
    """Refuse a fit whose sum of distances to the medoids is not finite: a
    user's metric (or matrix) gave a non-finite distance, or finite rows
    overflow float64 in a built-in metric's arithmetic (the medoids chosen
    among infinite distances would mean nothing)."""
    if math.isfinite(loss):
        return
    if metric.code in (CALLABLE, PRECOMPUTED):
        cause = "it must return finite values"
    else:
        cause = (
            f"X's values (largest magnitude {float(np.max(np.abs(X))):.3g}) overflow float64 in its arithmetic; "
            "scale X first (for example with sklearn.preprocessing.StandardScaler)"
        )
    raise DataError(f"the metric {metric.name!r} returned non-finite distances: {cause}")


def check_n_clusters(n_clusters, n_samples: int) -> int:
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)):
        raise ParameterError(f"n_clusters must be an integer >= 1, got {n_clusters!r}")
    if n_clusters < 1:
        raise ParameterError(f"n_clusters must be >= 1, got {n_clusters}")
    if n_clusters > n_samples:
        raise DataError(
            f"n_clusters={n_clusters} is larger than the number of samples, n_samples={n_samples}; "
            "pass at most n_samples clusters (n_clusters == n_samples makes every sample a medoid)"
        )
    return int(n_clusters)


def check_confidence(name: str, value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number >= 0 (math.inf for exact evaluation), got {value!r}") from None
    if math.isnan(value) or value < 0:
        raise ParameterError(f"{name} must be a number >= 0 (math.inf for exact evaluation), got {value!r}")
    return value
