"""Numba kernels of BanditPAM (the BanditPAM++ form).

Each BUILD step and each SWAP iteration of PAM is a best-arm identification:
an arm's value is a mean over reference points of ``_build_term`` (BUILD:
arm = candidate point) or of ``_swap_terms`` (SWAP: arm = (slot, candidate)).
Arms are pulled in batches of reference points taken in order from ONE fixed
random permutation, so the first references are shared by every arm, every
step and every iteration, and their distances are cached (BanditPAM++). In
SWAP one distance d(o, x) updates the k arms of candidate x at once ("virtual
arms", the FastPAM1 trick). After each batch an arm is dropped when its lower
confidence bound exceeds the best upper bound, with radius
``sigma_arm * sqrt((confidence + ln n) / t)`` after t references. When the
next batch would reach n references, every remaining arm is evaluated exactly
with the same sums, in the same order, as exact PAM (``_kernels``), so with a
full budget (infinite confidence) BanditPAM is PAM, step for step.
"""

import math

import numba
import numpy as np

from .._kernels_inline import empty, full, larger, smaller, zeros
from .._kernels_reduce import array_any
from .._numba_config import helper, kernel
from ..bandits import eliminate, serfling_factor
from ._distances import _distance
from ._kernels import SWAP_TOLERANCE, _assign, _build_term, _loss, _swap_terms

# An arm's sigma is floored at this fraction of the largest sigma among the
# remaining arms: an arm whose references happened to agree exactly (sigma 0)
# must not get a zero-width interval.
SIGMA_FLOOR = 1e-3


@helper(inline="always")
def _cached_distance(X, o, x, code, p, user, cache, position, calls):
    """d(point o, candidate x), read from the cache when o is among the first
    ``cache.shape[1]`` references of the permutation. ``calls[x]`` counts the
    evaluations made on behalf of x (one writer per x in parallel loops).
    Inlined into the loops: as a call, which passes every array's fields as
    arguments, it made BUILD 1.5-3x slower on a 784-d mixture."""
    j = position[o]
    if j < cache.shape[1]:
        v = cache[x, j]
        if not np.isnan(v):
            return v
    v = _distance(X, X, np.int64(o), np.int64(x), code, p, user)  # one specialization of _distance
    if j < cache.shape[1]:
        cache[x, j] = v
    calls[x] += 1
    return v


@helper
def _statistics(sums, squares, alive, estimate, sigma, used):
    """Means and standard deviations of the alive arms; returns the largest sigma."""
    max_sigma = 0.0
    for a in range(sums.shape[0]):
        if alive[a]:
            mean = sums[a] / used
            estimate[a] = mean
            s = math.sqrt(larger(squares[a] / used - mean * mean, 0.0))
            sigma[a] = s
            max_sigma = larger(max_sigma, s)
    return max_sigma


@helper
def _eliminate(sums, squares, alive, estimate, sigma, used, population, log_term, cap):
    """Update estimates and drop arms whose lower bound exceeds the best upper
    bound (or ``cap``, if lower). Flat arrays over arms. Returns the number of
    arms still alive. References are drawn without replacement from
    ``population`` points, so the radius carries Serfling's finite-population
    factor 1 - (t - 1) / n. The step itself is the library's successive
    elimination (``bandits.eliminate``)."""
    max_sigma = _statistics(sums, squares, alive, estimate, sigma, used)
    n_alive = 0
    if max_sigma == 0.0:
        # every sampled value agreed: nothing is known about the spread yet
        for a in range(sums.shape[0]):
            n_alive += alive[a]
        return n_alive
    scale = math.sqrt(log_term / used * serfling_factor(used, population))
    floor = SIGMA_FLOOR * max_sigma
    for a in range(sums.shape[0]):
        if alive[a]:
            sigma[a] = larger(sigma[a], floor) * scale  # sigma becomes the radius (scratch until the next call)
    n_alive = eliminate(estimate, sigma, alive, alive, cap)
    return n_alive


@helper
def _leader(alive, estimate):
    best = -1
    for a in range(alive.shape[0]):
        if alive[a] and (best < 0 or estimate[a] < estimate[best]):
            best = a
    return best


@kernel(parallel=True)
def _bandit_build(X, k, code, p, user, perm, position, cache, calls, batch_size, confidence):
    """BanditPAM BUILD. Returns the k medoids in the order they were chosen.

    Variance reduction: all arms see the same references in the same order,
    so after the first batch each arm is compared with the leader of that
    batch through the per-reference differences g_x(o) - g_leader(o), whose
    spread is far smaller than g_x's for the close contenders (differences
    of means are what elimination needs; the shift is common to all arms).
    """
    n = X.shape[0]
    medoids = empty(k, np.int64)
    is_medoid = zeros(n, np.bool_)
    nearest = full(n, np.inf, np.float64)
    sums = zeros(n, np.float64)
    squares = zeros(n, np.float64)
    alive = zeros(n, np.bool_)
    estimate = zeros(n, np.float64)
    sigma = zeros(n, np.float64)
    reference = zeros(batch_size, np.float64)
    log_term = confidence + math.log(n)
    for step in range(k):
        first = step == 0
        n_alive = 0
        for x in range(n):
            alive[x] = not is_medoid[x]
            n_alive += alive[x]
            sums[x] = 0.0
            squares[x] = 0.0
            estimate[x] = 0.0
        used = 0
        compared = 0
        leader = -1
        while n_alive > 1:
            if not math.isfinite(confidence) or used + batch_size >= n:
                for x in numba.prange(n):
                    if alive[x]:
                        v = 0.0
                        for o in range(n):
                            d = _cached_distance(X, o, x, code, p, user, cache, position, calls)
                            v += _build_term(d, nearest[o], first)
                        estimate[x] = v / n
                break
            if leader >= 0:
                for r in range(batch_size):
                    o = perm[used + r]
                    d = _cached_distance(X, o, leader, code, p, user, cache, position, calls)
                    reference[r] = _build_term(d, nearest[o], first)
            for x in numba.prange(n):
                if alive[x]:
                    s = 0.0
                    q = 0.0
                    for r in range(batch_size):
                        o = perm[used + r]
                        d = _cached_distance(X, o, x, code, p, user, cache, position, calls)
                        g = _build_term(d, nearest[o], first)
                        if leader >= 0:
                            g -= reference[r]
                        s += g
                        q += g * g
                    sums[x] += s
                    squares[x] += q
            used += batch_size
            if leader < 0:
                n_alive = _eliminate(sums, squares, alive, estimate, sigma, used, n, log_term, np.inf)
                leader = _leader(alive, estimate)
                for x in range(n):
                    sums[x] = 0.0
                    squares[x] = 0.0
            else:
                compared += batch_size
                n_alive = _eliminate(sums, squares, alive, estimate, sigma, compared, n, log_term, np.inf)
        best = _leader(alive, estimate)
        medoids[step] = best
        is_medoid[best] = True
        for o in range(n):
            nearest[o] = smaller(nearest[o], _cached_distance(X, o, best, code, p, user, cache, position, calls))
    return medoids


@helper
def _swap_exact(X, x, code, p, user, cache, position, calls, nearest_slot, nearest, second, out):
    """Exact loss changes of swapping candidate x into every slot: the same
    sums in the same order as ``_kernels._pam_swap``."""
    n = X.shape[0]
    k = out.shape[0]
    shared = 0.0
    own = zeros(k, np.float64)
    for o in range(n):
        d = _cached_distance(X, o, x, code, p, user, cache, position, calls)
        s, e = _swap_terms(d, nearest[o], second[o])
        shared += s
        own[nearest_slot[o]] += e
    for c in range(k):
        out[c] = shared + own[c]


@kernel(parallel=True)
def _bandit_swap(X, medoids, code, p, user, perm, position, cache, calls, batch_size, confidence, max_iter):
    """BanditPAM SWAP. Returns (medoids, number of swaps, converged)."""
    n = X.shape[0]
    k = medoids.shape[0]
    medoids = medoids.copy()
    is_medoid = zeros(n, np.bool_)
    for c in range(k):
        is_medoid[medoids[c]] = True
    medoid_distance = empty((n, k), np.float64)
    for c in numba.prange(k):
        for o in range(n):
            medoid_distance[o, c] = _cached_distance(X, o, medoids[c], code, p, user, cache, position, calls)
    sums = zeros((n, k), np.float64)
    squares = zeros((n, k), np.float64)
    alive = zeros((n, k), np.bool_)
    estimate = zeros((n, k), np.float64)
    sigma = zeros((n, k), np.float64)
    exact_change = zeros((n, k), np.float64)
    is_exact = zeros(n, np.bool_)
    flat_sums = sums.reshape(-1)
    flat_squares = squares.reshape(-1)
    flat_alive = alive.reshape(-1)
    flat_estimate = estimate.reshape(-1)
    flat_sigma = sigma.reshape(-1)
    log_term = confidence + math.log(n * k)
    n_swaps = 0
    converged = False
    while True:
        nearest_slot, nearest, second_slot, second = _assign(medoid_distance)
        loss = _loss(nearest)
        n_alive = 0
        for x in range(n):
            is_exact[x] = False
            for c in range(k):
                alive[x, c] = not is_medoid[x]
                n_alive += alive[x, c]
                sums[x, c] = 0.0
                squares[x, c] = 0.0
                estimate[x, c] = 0.0
        used = 0
        while n_alive > 1:
            if not math.isfinite(confidence) or used + batch_size >= n:
                for x in numba.prange(n):
                    if not is_medoid[x] and array_any(alive[x]):
                        x64 = np.int64(x)  # prange's index is unsigned: int64 here and below, one compilation
                        row = exact_change[x]
                        _swap_exact(X, x64, code, p, user, cache, position, calls, nearest_slot, nearest, second, row)
                        is_exact[x] = True
                        for c in range(k):
                            estimate[x, c] = exact_change[x, c] / n
                break
            for x in numba.prange(n):
                if array_any(alive[x]):
                    for r in range(used, used + batch_size):
                        o = perm[r]
                        d = _cached_distance(X, o, x, code, p, user, cache, position, calls)
                        s, e = _swap_terms(d, nearest[o], second[o])
                        for c in range(k):
                            g = s + e if nearest_slot[o] == c else s
                            sums[x, c] += g
                            squares[x, c] += g * g
            used += batch_size
            n_alive = _eliminate(flat_sums, flat_squares, flat_alive, flat_estimate, flat_sigma, used, n, log_term, 0.0)
        best_x = -1
        best_c = -1
        best_value = np.inf
        for x in range(n):
            for c in range(k):
                if alive[x, c] and (best_x < 0 or estimate[x, c] < best_value):
                    best_x = x
                    best_c = c
                    best_value = estimate[x, c]
        if best_x < 0:
            converged = True
            break
        if not is_exact[best_x]:
            best64 = np.int64(best_x)
            _swap_exact(
                X, best64, code, p, user, cache, position, calls, nearest_slot, nearest, second, exact_change[best_x]
            )
        if not exact_change[best_x, best_c] < -SWAP_TOLERANCE * loss:
            converged = True
            break
        if n_swaps >= max_iter:
            break
        is_medoid[medoids[best_c]] = False
        is_medoid[best_x] = True
        medoids[best_c] = best_x
        for o in range(n):
            medoid_distance[o, best_c] = _cached_distance(X, o, best_x, code, p, user, cache, position, calls)
        n_swaps += 1
    return medoids, n_swaps, converged
