"""Numba kernels of exact k-medoids on a distance matrix: PAM (BUILD + SWAP
with the FastPAM1 decomposition), FasterPAM's eager swaps, and assignment.

The kernels take ``DT`` with ``DT[x, o]`` = distance of point ``o`` to
medoid (or candidate) ``x``: every loop over points then reads one row,
contiguously (reading a column of a 10,000-row matrix misses the cache on
every element). For the symmetric built-in metrics ``DT`` is the matrix
itself.
Medoids live in slots ``0..k-1``; a swap replaces one slot. Ties are broken
towards the lowest candidate index, then the lowest slot, everywhere, so the
bandit version in ``_kernels_bandit`` can reproduce every step bitwise: the
sums ``_build_term`` and ``_swap_terms`` are the only arithmetic both share.
"""

import numpy as np

from .._kernels_inline import empty, full, larger, smaller, zeros
from .._numba_config import helper, kernel
from .._threads import chunk_size, run_chunks

# A swap must lower the loss by more than this fraction of it: rounding noise
# on a swap between equivalent points (duplicates) would otherwise cycle.
SWAP_TOLERANCE = 1e-12

# Terms per chunk of candidates, at least (each candidate is a pass over the n
# points): below that, handing a chunk to another thread costs more than it saves,
# and a small problem's steps run in the calling thread.
TERMS_PER_CHUNK = 1 << 18


def _candidate_chunk(n):
    return chunk_size(n, max(1, TERMS_PER_CHUNK // max(n, 1)))


@helper
def _build_term(distance, nearest, first):
    """Contribution of one point to a BUILD candidate's loss change
    (PAM's BUILD, Kaufman and Rousseeuw; first medoid: its plain distance)."""
    if first:
        return distance
    return smaller(distance, nearest) - nearest


@helper
def _swap_terms(distance, nearest, second):
    """FastPAM1 decomposition of one point's change when candidate x enters:
    (change shared by every removed slot, extra change if its own slot is
    removed). Delta(slot i, x) = sum of shared + sum over the slot's points of
    the extra term."""
    shared = smaller(distance, nearest) - nearest
    own = smaller(distance, second) - smaller(distance, nearest)
    return shared, own


@helper
def _assign(medoid_distance):
    """Nearest slot, its distance, second-nearest slot and its distance, from
    the (n, k) distances to the medoids. Ties go to the lowest slot."""
    n, k = medoid_distance.shape
    nearest_slot = zeros(n, np.int64)
    second_slot = zeros(n, np.int64)
    nearest = full(n, np.inf, np.float64)
    second = full(n, np.inf, np.float64)
    for o in range(n):
        for c in range(k):
            d = medoid_distance[o, c]
            if d < nearest[o]:
                second[o] = nearest[o]
                second_slot[o] = nearest_slot[o]
                nearest[o] = d
                nearest_slot[o] = c
            elif d < second[o]:
                second[o] = d
                second_slot[o] = c
        if k == 1:
            second_slot[o] = -1
    return nearest_slot, nearest, second_slot, second


@kernel
def _loss(nearest):
    total = 0.0
    for o in range(nearest.shape[0]):
        total += nearest[o]
    return total


@kernel(nogil=True)
def _build_values(lo, hi, DT, nearest, is_medoid, first, values):
    """Loss after adding each candidate ``lo <= x < hi`` (mean over the points;
    inf for a medoid): one BUILD step's values, a chunk of them."""
    n = DT.shape[0]
    for x in range(lo, hi):
        if is_medoid[x]:
            values[x] = np.inf
            continue
        v = 0.0
        for o in range(n):
            v += _build_term(DT[x, o], nearest[o], first)
        values[x] = v / n


@kernel
def _build_add(DT, values, is_medoid, nearest):
    """Add the candidate of lowest value (lowest index on ties) and update each
    point's nearest distance; returns it."""
    best = -1
    best_value = np.inf
    for x in range(values.shape[0]):
        if not is_medoid[x] and (best < 0 or values[x] < best_value):
            best = x
            best_value = values[x]
    is_medoid[best] = True
    for o in range(nearest.shape[0]):
        nearest[o] = smaller(nearest[o], DT[best, o])
    return best


def _pam_build(DT, k):
    """PAM BUILD: k greedy steps, each adding the point that lowers the loss most
    (each step's candidates in chunks on threads)."""
    n = DT.shape[0]
    medoids = np.empty(k, dtype=np.int64)
    is_medoid = np.zeros(n, dtype=np.bool_)
    nearest = np.full(n, np.inf)
    values = np.empty(n)
    step = _candidate_chunk(n)
    for added in range(k):
        run_chunks(_build_values, 0, n, step, DT, nearest, is_medoid, added == 0, values)
        medoids[added] = _build_add(DT, values, is_medoid, nearest)
    return medoids


@kernel
def _columns(DT, medoids):
    n = DT.shape[0]
    k = medoids.shape[0]
    out = empty((n, k), np.float64)
    for o in range(n):
        for c in range(k):
            out[o, c] = DT[medoids[c], o]
    return out


@kernel
def _nearest_two(DT, medoids):
    """Each point's nearest slot, nearest and second distance, and the loss."""
    nearest_slot, nearest, _, second = _assign(_columns(DT, medoids))
    return nearest_slot, nearest, second, _loss(nearest)


@kernel(nogil=True)
def _swap_deltas(lo, hi, DT, is_medoid, nearest_slot, nearest, second, deltas):
    """Loss change of every swap (slot c, candidate x) for ``lo <= x < hi``
    (medoids skipped), summed over the points in order (FastPAM1)."""
    n = DT.shape[0]
    k = deltas.shape[1]
    own = empty(k, np.float64)
    for x in range(lo, hi):
        if is_medoid[x]:
            continue
        shared = 0.0
        for c in range(k):
            own[c] = 0.0
        for o in range(n):
            s, e = _swap_terms(DT[x, o], nearest[o], second[o])
            shared += s
            own[nearest_slot[o]] += e
        for c in range(k):
            deltas[x, c] = shared + own[c]


@kernel
def _best_swap(deltas, is_medoid):
    """(candidate, slot) of the lowest mean change (lowest candidate, then slot, on ties)."""
    n = deltas.shape[0]
    best_x = -1
    best_c = -1
    best_value = np.inf
    for x in range(n):
        if is_medoid[x]:
            continue
        for c in range(deltas.shape[1]):
            if best_x < 0 or deltas[x, c] / n < best_value:
                best_x = x
                best_c = c
                best_value = deltas[x, c] / n
    return best_x, best_c


def _pam_swap(DT, medoids, max_iter):
    """PAM SWAP with FastPAM1: each pass evaluates every (slot, candidate)
    exactly in O(n) per candidate (in chunks of candidates on threads) and
    performs the best swap if it lowers the loss. Returns (medoids, number of
    swaps, converged)."""
    n = DT.shape[0]
    k = medoids.shape[0]
    medoids = medoids.copy()
    is_medoid = np.zeros(n, dtype=np.bool_)
    is_medoid[medoids] = True
    deltas = np.empty((n, k))
    step = _candidate_chunk(n)
    n_swaps = 0
    while True:
        nearest_slot, nearest, second, loss = _nearest_two(DT, medoids)
        run_chunks(_swap_deltas, 0, n, step, DT, is_medoid, nearest_slot, nearest, second, deltas)
        best_x, best_c = _best_swap(deltas, is_medoid)
        if best_x < 0 or not deltas[best_x, best_c] < -SWAP_TOLERANCE * loss:
            return medoids, n_swaps, True
        if n_swaps >= max_iter:
            return medoids, n_swaps, False
        is_medoid[medoids[best_c]] = False
        is_medoid[best_x] = True
        medoids[best_c] = best_x
        n_swaps += 1


@kernel
def _fasterpam(DT, medoids, max_iter):
    """FasterPAM (Schubert and Rousseeuw 2021): visit candidates in turn and
    swap eagerly as soon as the best slot for a candidate lowers the loss;
    stop after a full pass without a swap. ``max_iter`` bounds the passes.
    Returns (medoids, passes begun (the one it converges in counts), number of swaps, converged)."""
    n = DT.shape[0]
    k = medoids.shape[0]
    medoids = medoids.copy()
    is_medoid = zeros(n, np.bool_)
    for c in range(k):
        is_medoid[medoids[c]] = True
    nearest_slot, nearest, second_slot, second = _assign(_columns(DT, medoids))
    removal = zeros(k, np.float64)
    for o in range(n):
        removal[nearest_slot[o]] += second[o] - nearest[o]
    loss = _loss(nearest)
    delta = empty(k, np.float64)
    last_swap = -1
    n_passes = 0
    n_swaps = 0
    converged = False
    x = 0
    steps_in_pass = 0
    while True:
        if x == last_swap:  # a whole cycle without any swap
            converged = True
            if steps_in_pass > 0:
                n_passes += 1  # the pass it ended in counts, so max_iter=n_passes converges too
            break
        if not is_medoid[x]:
            shared = 0.0
            for c in range(k):  # a loop: an array's slice assignment compiles numba's shape-error message
                delta[c] = removal[c]
            for o in range(n):
                d = DT[x, o]
                if d < nearest[o]:
                    shared += d - nearest[o]
                    delta[nearest_slot[o]] += nearest[o] - second[o]
                elif d < second[o]:
                    delta[nearest_slot[o]] += d - second[o]
            best_c = np.int64(0)  # not a literal 0: numba would compile _update_after_swap for it too
            for c in range(1, k):
                if delta[c] < delta[best_c]:
                    best_c = c
            change = delta[best_c] + shared
            if change < -SWAP_TOLERANCE * loss:
                is_medoid[medoids[best_c]] = False
                is_medoid[x] = True
                medoids[best_c] = x
                n_swaps += 1
                last_swap = x
                _update_after_swap(DT, medoids, best_c, nearest_slot, nearest, second_slot, second)
                removal[:] = 0.0
                for o in range(n):
                    removal[nearest_slot[o]] += second[o] - nearest[o]
                loss = _loss(nearest)
        x += 1
        steps_in_pass += 1
        if x == n:
            x = 0
        if steps_in_pass == n:
            steps_in_pass = 0
            n_passes += 1
            if last_swap < 0:  # first pass found nothing to improve
                converged = True
                break
            if n_passes >= max_iter:
                break
    return medoids, larger(n_passes, 1), n_swaps, converged


@helper
def _update_after_swap(DT, medoids, slot, nearest_slot, nearest, second_slot, second):
    """Refresh nearest/second-nearest after ``medoids[slot]`` changed."""
    n = DT.shape[0]
    k = medoids.shape[0]
    x = medoids[slot]
    for o in range(n):
        d = DT[x, o]
        if nearest_slot[o] == slot or second_slot[o] == slot:
            # the removed medoid was one of the two nearest: rescan the slots
            best = np.inf
            best_c = -1
            runner = np.inf
            runner_c = -1
            for c in range(k):
                v = DT[medoids[c], o]
                if v < best:
                    runner = best
                    runner_c = best_c
                    best = v
                    best_c = c
                elif v < runner:
                    runner = v
                    runner_c = c
            nearest[o] = best
            nearest_slot[o] = best_c
            second[o] = runner
            second_slot[o] = runner_c
        elif d < nearest[o]:
            second[o] = nearest[o]
            second_slot[o] = nearest_slot[o]
            nearest[o] = d
            nearest_slot[o] = slot
        elif d < second[o]:
            second[o] = d
            second_slot[o] = slot
