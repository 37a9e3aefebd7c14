"""Numba kernels of MABSplit: candidate thresholds, batch insertion into
histograms, scoring of every (feature, threshold) arm, the node-split solver
(bandit or exact) and the tree builder.

Conventions shared by every kernel
----------------------------------
- ``X`` is float32 or float64, C-contiguous (one row's features are adjacent,
  so inserting a batch row by row reads memory in order).
- A node owns the slice ``rows[lo:hi]`` of a row-index buffer, and that
  slice is in uniformly random order: the builder's caller stores the rows of
  X in a random permutation, the root's slice is ``0..n-1`` and partitions
  are stable. So the first ``k`` entries of a slice are a sample without
  replacement of the node's rows, and reading batches in order touches
  memory in increasing order (random row gathers cost more than the
  insertions they feed). A child's sample is then the part of its parent's
  order that went to it: samples of different nodes are not independent,
  but each is a uniform sample of its own node, which is all the confidence
  intervals assume.
- Candidate thresholds ("edges") of candidate slot ``a`` are
  ``edges[a, :n_edges[a]]``, strictly increasing, never the node's maximum
  (that edge sends every row left). A row goes left of edge ``t`` when
  ``x <= edges[a, t]``. Its histogram bin is the number of edges below ``x``,
  so the rows left of edge ``t`` are exactly the bins ``0..t``.
- Histograms are float64 ``(n_candidates, max_edges + 1, width)``: class
  counts (``width = n_classes``) or, for squared error, ``[count, sum, sum of
  squares]`` of the target minus the node mean (centred, so the variance does
  not cancel catastrophically).
- Arm value ``mu = n_L/n I(L) + n_R/n I(R) - I(parent)``: lower is better,
  negative means the split reduces impurity (PAPERS.md section 2).
- Random numbers come from the kernels' one generator with an explicit state
  (:mod:`bandit_tree_tools.bandits._random`), so results depend only on the
  seed, not on the thread or process.
"""

import numba
import numpy as np

from ..bandits._elimination import STRICTLY_NEGATIVE, eliminate, finite_population_factor, normal_radius
from ..bandits._random import randint as _randint
from ..bandits._random import uniform as _uniform
from ..tree._impurity import ENTROPY, GINI, SQUARED_ERROR, class_impurity, variance_from_sums  # noqa: F401 (codes re-exported)

BINS_LINSPACE = 0
BINS_QUANTILE = 1
BINS_RANDOM = 2

NO_SPLIT = -1

# Two arms whose values differ by less than this (relative) induce, in exact
# arithmetic, the same impurity; picking the lowest index among them keeps the
# exact and the bandit solver on the same arm despite summation order.
_TIE_EPS = 1e-12

_INV_LN2 = 1.0 / np.log(2.0)


# ------------------------------------------------------------ candidates
@numba.njit(cache=True)
def _round_edge(value, round_float32):
    if round_float32:
        return np.float64(np.float32(value))
    return value


@numba.njit(cache=True)
def _node_range(X, rows, lo, hi, candidates, n_candidates, minimum, maximum):
    """Minimum and maximum of every candidate feature over the node's rows."""
    for a in range(n_candidates):
        minimum[a] = np.inf
        maximum[a] = -np.inf
    for i in range(lo, hi):
        row = rows[i]
        for a in range(n_candidates):
            x = np.float64(X[row, candidates[a]])
            if x < minimum[a]:
                minimum[a] = x
            if x > maximum[a]:
                maximum[a] = x


@numba.njit(cache=True)
def _keep_increasing(values, count, upper, out_row):
    """Copy sorted ``values[:count]`` into ``out_row`` without duplicates and
    without values ``>= upper``; return how many were kept."""
    kept = 0
    for k in range(count):
        v = values[k]
        if v >= upper:
            break
        if kept == 0 or v > out_row[kept - 1]:
            out_row[kept] = v
            kept += 1
    return kept


@numba.njit(cache=True)
def _node_edges(X, rows, lo, hi, candidates, n_candidates, mode, n_bins, round_float32, rng, edges, n_edges):
    """Candidate thresholds of every candidate feature at one node.

    linspace: ``n_bins`` evenly spaced edges from the node's min to its max;
    random: ``n_bins`` uniform draws in [min, max) (ExtraTrees-style);
    quantile: ``n_bins`` quantiles of the first ``256 * n_bins`` rows of the
    slice (a random sample, as the slice is in random order).
    Edges are rounded to float32 when the comparison happens in float32, so a
    threshold means the same thing to every library that reads it.
    """
    minimum = np.empty(n_candidates)
    maximum = np.empty(n_candidates)
    _node_range(X, rows, lo, hi, candidates, n_candidates, minimum, maximum)
    values = np.empty(n_bins)
    n = hi - lo
    sample = np.empty(0, dtype=np.float64)
    n_sample = 0
    if mode == BINS_QUANTILE:
        n_sample = min(n, 256 * n_bins)  # the slice is in random order: its head is a random sample
        sample = np.empty(n_sample)
    for a in range(n_candidates):
        low = minimum[a]
        high = maximum[a]
        if not high > low:  # constant feature at this node
            n_edges[a] = 0
            continue
        if mode == BINS_LINSPACE:
            for k in range(n_bins):
                if n_bins == 1:
                    v = low
                else:
                    v = low + (high - low) * (k / (n_bins - 1.0))
                values[k] = _round_edge(v, round_float32)
        elif mode == BINS_RANDOM:
            for k in range(n_bins):
                values[k] = _round_edge(low + (high - low) * _uniform(rng), round_float32)
            values.sort()
        else:
            feature = candidates[a]
            for k in range(n_sample):
                sample[k] = X[rows[lo + k], feature]
            sample.sort()
            for k in range(n_bins):
                position = (n_sample - 1) * (k / max(n_bins - 1.0, 1.0))
                below = np.int64(np.floor(position))
                above = min(below + 1, n_sample - 1)
                fraction = position - below
                v = sample[below] + (sample[above] - sample[below]) * fraction
                values[k] = _round_edge(v, round_float32)
        n_edges[a] = _keep_increasing(values, n_bins, high, edges[a])


# ------------------------------------------------------------- insertion
@numba.njit(cache=True, inline="always")
def _bin_of(x, edges, slot, count):
    """Number of edges strictly below ``x``. A branch-free linear count: with
    about ten edges it beats a binary search, whose branches mispredict."""
    b = 0
    for t in range(count):
        b += x > edges[slot, t]
    return b


@numba.njit(cache=True, nogil=True)
def _insert_batch(X, rows, start, stop, candidates, active, edges, n_edges, y_code, y_value, shift, is_regression, hist):
    """Insert rows ``rows[start:stop]`` into the histogram of every active
    candidate feature; return the number of insertions (rows x features)."""
    n_active = 0
    for a in range(active.shape[0]):
        if active[a]:
            n_active += 1
    if n_active == 0:
        return 0
    slots = np.empty(n_active, dtype=np.int64)
    columns = np.empty(n_active, dtype=np.int64)
    counts = np.empty(n_active, dtype=np.int64)
    k = 0
    for a in range(active.shape[0]):
        if active[a]:
            slots[k] = a
            columns[k] = candidates[a]
            counts[k] = n_edges[a]
            k += 1
    if is_regression:
        for i in range(start, stop):
            row = rows[i]
            target = y_value[row] - shift
            target2 = target * target
            for k in range(n_active):
                a = slots[k]
                b = _bin_of(np.float64(X[row, columns[k]]), edges, a, counts[k])
                hist[a, b, 0] += 1.0
                hist[a, b, 1] += target
                hist[a, b, 2] += target2
    else:
        for i in range(start, stop):
            row = rows[i]
            code = y_code[row]
            for k in range(n_active):
                a = slots[k]
                b = _bin_of(np.float64(X[row, columns[k]]), edges, a, counts[k])
                hist[a, b, code] += 1.0
    return (stop - start) * n_active


# --------------------------------------------------------------- scoring
@numba.njit(cache=True, inline="always")
def _class_impurity(counts, total, criterion):
    """Gini or entropy (bits) of class counts (the shared definition,
    :func:`bandit_tree_tools.tree._impurity.class_impurity`) and the
    delta-method variance of its plug-in estimate from ``total`` draws.

    With proportions ``p`` and a reference class ``K`` (the most frequent,
    so ``log p_K`` is finite), the free parameters are ``p_j, j != K`` and
    ``p_K = 1 - sum p_j``. Gradients (Tiwari et al. 2022, "MABSplit: Faster
    Forest Training Using Multi-Armed Bandits", section 4 and appendix):
    Gini ``dG/dp_j = -2 p_j + 2 p_K``; entropy ``dE/dp_j = log p_K - log p_j``.
    Their multinomial covariance is ``(diag(p) - p p^T) / total``, so
    ``var = (sum p_j g_j^2 - (sum p_j g_j)^2) / total`` over ``j != K``.
    """
    if total <= 0.0:
        return 0.0, 0.0
    impurity = class_impurity(counts, total, criterion)
    n_classes = counts.shape[0]
    reference = 0
    for k in range(1, n_classes):
        if counts[k] > counts[reference]:
            reference = k
    p_reference = counts[reference] / total
    first = 0.0
    second = 0.0
    for k in range(n_classes):
        p = counts[k] / total
        if k == reference or p <= 0.0:
            continue  # a class never seen has no variance to contribute
        if criterion == GINI:
            gradient = -2.0 * p + 2.0 * p_reference
        else:
            gradient = (np.log(p_reference) - np.log(p)) * _INV_LN2
        first += p * gradient
        second += p * gradient * gradient
    variance = (second - first * first) / total
    if variance < 0.0:
        variance = 0.0
    return impurity, variance


@numba.njit(cache=True, inline="always")
def _squared_error(count, total, total2):
    """Variance of a child's targets (the shared
    :func:`~bandit_tree_tools.tree._impurity.variance_from_sums`) and the
    variance of that estimate, ``2 sigma^4 / n`` (sample variance of a
    distribution with kurtosis 3)."""
    if count <= 0.0:
        return 0.0, 0.0
    variance = variance_from_sums(count, total, total2)
    return variance, 2.0 * variance * variance / count


@numba.njit(cache=True, nogil=True)
def _score_arms(hist, n_edges, arm_active, criterion, n_node, n_sampled, min_samples_leaf, mu, var, valid):
    """Estimate of every active arm's value and the variance of the estimate.

    ``valid`` says whether both children are estimated to hold at least
    ``min_samples_leaf`` of the node's ``n_node`` rows (exact once
    ``n_sampled == n_node``). Variances carry the finite-population correction
    ``(N - n) / (N - 1)`` of sampling without replacement, so they vanish when
    the node's rows are used up.
    """
    width = hist.shape[2]
    n = np.float64(n_sampled)
    scale = n_node / n
    correction = finite_population_factor(n, n_node)
    total = np.empty(width)
    left = np.empty(width)
    right = np.empty(width)
    for a in range(hist.shape[0]):
        count = n_edges[a]
        if count == 0:
            continue
        any_active = False
        for t in range(count):
            if arm_active[a, t]:
                any_active = True
                break
        if not any_active:
            continue
        for c in range(width):
            total[c] = 0.0
            left[c] = 0.0
        for b in range(count + 1):
            for c in range(width):
                total[c] += hist[a, b, c]
        if criterion == SQUARED_ERROR:
            parent, _ = _squared_error(total[0], total[1], total[2])
        else:
            parent, _ = _class_impurity(total, n, criterion)
        for t in range(count):
            for c in range(width):
                left[c] += hist[a, t, c]
            if not arm_active[a, t]:
                continue
            for c in range(width):
                right[c] = total[c] - left[c]
            if criterion == SQUARED_ERROR:
                n_left = left[0]
                impurity_left, var_left = _squared_error(left[0], left[1], left[2])
                impurity_right, var_right = _squared_error(right[0], right[1], right[2])
            else:
                n_left = 0.0
                for c in range(width):
                    n_left += left[c]
                impurity_left, var_left = _class_impurity(left, n_left, criterion)
                impurity_right, var_right = _class_impurity(right, n - n_left, criterion)
            w_left = n_left / n
            w_right = 1.0 - w_left
            mu[a, t] = w_left * impurity_left + w_right * impurity_right - parent
            var[a, t] = (w_left * w_left * var_left + w_right * w_right * var_right) * correction
            valid[a, t] = n_left * scale >= min_samples_leaf and (n - n_left) * scale >= min_samples_leaf


@numba.njit(cache=True, inline="always")
def _best_arm(mu, arm_active, valid, n_edges, n_candidates):
    """Lowest value among active valid arms; ties (within _TIE_EPS) go to the
    lowest (slot, edge). Returns slot, edge, value (slot -1 when none)."""
    best = np.inf
    for a in range(n_candidates):
        for t in range(n_edges[a]):
            if arm_active[a, t] and valid[a, t] and mu[a, t] < best:
                best = mu[a, t]
    if best == np.inf:
        return NO_SPLIT, NO_SPLIT, np.inf
    band = best + _TIE_EPS * max(1.0, abs(best))
    for a in range(n_candidates):
        for t in range(n_edges[a]):
            if arm_active[a, t] and valid[a, t] and mu[a, t] <= band:
                return a, t, mu[a, t]
    return NO_SPLIT, NO_SPLIT, np.inf


# ---------------------------------------------------------------- solver
@numba.njit(cache=True, nogil=True)
def _find_split(
    X,
    rows,
    lo,
    hi,
    candidates,
    n_candidates,
    edges,
    n_edges,
    y_code,
    y_value,
    shift,
    criterion,
    use_bandit,
    batch_size,
    z,
    tie_tolerance,
    min_samples_leaf,
    hist,
    arm_active,
    mu,
    var,
    valid,
    feature_active,
):
    """Best (slot, edge) of one node by successive elimination (PAPERS.md
    section 2) or, with ``use_bandit=False``, by one exact pass over all rows.

    Returns ``(slot, edge, value, insertions, rows_used)``; ``slot == -1``
    when no valid arm reduces impurity.
    """
    n_node = hi - lo
    is_regression = criterion == SQUARED_ERROR
    for a in range(n_candidates):
        for b in range(hist.shape[1]):
            for c in range(hist.shape[2]):
                hist[a, b, c] = 0.0
        for t in range(arm_active.shape[1]):
            arm_active[a, t] = t < n_edges[a]
            valid[a, t] = False
        feature_active[a] = n_edges[a] > 0
    for a in range(n_candidates, feature_active.shape[0]):
        feature_active[a] = False
        for t in range(arm_active.shape[1]):
            arm_active[a, t] = False  # the elimination step reads every arm of the arrays
    n_sampled = 0
    insertions = 0
    while True:
        if use_bandit:
            # The node's rows are in random order (see _build_tree), so the
            # next rows of the slice are a sample without replacement.
            size = min(batch_size, n_node - n_sampled)
            start = lo + n_sampled
        else:
            size = n_node
            start = lo
        insertions += _insert_batch(
            X, rows, start, start + size, candidates, feature_active, edges, n_edges, y_code, y_value, shift,
            is_regression, hist,
        )
        n_sampled += size
        _score_arms(hist, n_edges, arm_active, criterion, n_node, n_sampled, min_samples_leaf, mu, var, valid)
        if n_sampled >= n_node:
            break  # estimates are exact now
        # successive elimination: keep arms that may still be the best and may reduce impurity
        for a in range(n_candidates):
            for t in range(n_edges[a]):
                if arm_active[a, t]:
                    var[a, t] = normal_radius(var[a, t], z)  # var is rescored next round
        eliminate(mu.reshape(-1), var.reshape(-1), arm_active.reshape(-1), valid.reshape(-1), STRICTLY_NEGATIVE)
        remaining = 0
        for a in range(n_candidates):
            if not feature_active[a]:
                continue
            still = False
            for t in range(n_edges[a]):
                if arm_active[a, t]:
                    still = True
                    remaining += 1
            feature_active[a] = still
        if remaining == 0:
            return NO_SPLIT, NO_SPLIT, np.inf, insertions, n_sampled
        slot, edge, value = _best_arm(mu, arm_active, valid, n_edges, n_candidates)
        if remaining == 1 and slot != NO_SPLIT:
            return slot, edge, value, insertions, n_sampled
        if slot != NO_SPLIT and tie_tolerance > 0.0:
            # every survivor within tie_tolerance of the best: they are ties, stop
            band = value + tie_tolerance * abs(value)
            all_tied = True
            for a in range(n_candidates):
                if not feature_active[a]:
                    continue
                for t in range(n_edges[a]):
                    if arm_active[a, t] and not (valid[a, t] and mu[a, t] <= band):
                        all_tied = False
            if all_tied:
                return slot, edge, value, insertions, n_sampled
    slot, edge, value = _best_arm(mu, arm_active, valid, n_edges, n_candidates)
    return slot, edge, value, insertions, n_sampled


# ------------------------------------------------------------ node stats
@numba.njit(cache=True)
def _node_stats(rows, lo, hi, y_code, y_value, n_classes, criterion, value_row):
    """Leaf value (class fractions or mean) and exact impurity of the node;
    returns (impurity, mean target)."""
    n = hi - lo
    if criterion == SQUARED_ERROR:
        mean = 0.0
        for i in range(lo, hi):
            mean += y_value[rows[i]]
        mean /= n
        squares = 0.0
        for i in range(lo, hi):
            d = y_value[rows[i]] - mean
            squares += d * d
        value_row[0] = mean
        return squares / n, mean
    counts = np.zeros(n_classes)
    for i in range(lo, hi):
        counts[y_code[rows[i]]] += 1.0
    for k in range(n_classes):
        value_row[k] = counts[k] / n
    impurity, _ = _class_impurity(counts, np.float64(n), criterion)
    return impurity, 0.0


@numba.njit(cache=True)
def _partition(X, rows, lo, hi, feature, threshold, buffer):
    """Move the rows with ``x <= threshold`` to the front, keeping the order
    of both sides (so each child's slice stays in random order and in
    increasing memory order); return the split point."""
    n_left = lo
    n_right = 0
    for i in range(lo, hi):
        row = rows[i]
        if X[row, feature] <= threshold:
            rows[n_left] = row
            n_left += 1
        else:
            buffer[n_right] = row
            n_right += 1
    for k in range(n_right):
        rows[n_left + k] = buffer[k]
    return n_left


@numba.njit(cache=True)
def _draw_candidates(n_features, max_features, rng, permutation, candidates):
    """A random subset of ``max_features`` features (all of them, in order,
    when ``max_features >= n_features``)."""
    if max_features >= n_features:
        for f in range(n_features):
            candidates[f] = f
        return n_features
    for f in range(n_features):
        permutation[f] = f
    for i in range(max_features):
        j = i + _randint(rng, n_features - i)
        tmp = permutation[i]
        permutation[i] = permutation[j]
        permutation[j] = tmp
    for i in range(max_features):
        candidates[i] = permutation[i]
    candidates[:max_features].sort()
    return max_features


# --------------------------------------------------------------- builder
@numba.njit(cache=True, nogil=True)
def _build_tree(
    X,
    rows,
    y_code,
    y_value,
    n_classes,
    criterion,
    use_bandit,
    bins_mode,
    n_bins,
    round_float32,
    batch_size,
    z,
    tie_tolerance,
    max_depth,
    min_samples_leaf,
    max_leaf_nodes,
    max_features,
    rng,
    capacity,
):
    """Grow one tree on ``X[rows]``; ``rows`` should be ``0..n-1`` over an X
    whose rows are in random order (see the module docstring).

    Depth-first, or best-first by weighted impurity reduction when
    ``max_leaf_nodes > 0`` (as scikit-learn). A node's split is searched when
    the node is created; it stays a leaf if it is at ``max_depth``, has fewer
    than ``2 * min_samples_leaf`` rows, is pure, if no arm reduces impurity,
    or if the chosen split leaves a child below ``min_samples_leaf`` (possible
    when the bandit stopped on estimated child sizes). Node ids grow as
    nodes are created, so children always follow their parent.
    """
    n_features = X.shape[1]
    width = n_classes if criterion != SQUARED_ERROR else 3
    value_width = n_classes if criterion != SQUARED_ERROR else 1
    children_left = np.full(capacity, -1, dtype=np.int64)
    children_right = np.full(capacity, -1, dtype=np.int64)
    feature = np.full(capacity, -2, dtype=np.int64)
    threshold = np.full(capacity, -2.0)
    value = np.zeros((capacity, value_width))
    n_node_samples = np.zeros(capacity, dtype=np.int64)
    impurity = np.zeros(capacity)
    insertions = np.zeros(capacity, dtype=np.int64)
    rows_used = np.zeros(capacity, dtype=np.int64)
    # per node: row slice, depth, chosen split (pending expansion)
    node_lo = np.zeros(capacity, dtype=np.int64)
    node_hi = np.zeros(capacity, dtype=np.int64)
    node_depth = np.zeros(capacity, dtype=np.int64)
    split_feature = np.full(capacity, -1, dtype=np.int64)
    split_threshold = np.zeros(capacity)
    split_gain = np.zeros(capacity)
    pending = np.empty(capacity, dtype=np.int64)
    n_pending = 0

    hist = np.zeros((n_features, n_bins + 1, width))
    arm_active = np.zeros((n_features, n_bins), dtype=np.bool_)
    mu = np.zeros((n_features, n_bins))
    var = np.zeros((n_features, n_bins))
    valid = np.zeros((n_features, n_bins), dtype=np.bool_)
    feature_active = np.zeros(n_features, dtype=np.bool_)
    edges = np.zeros((n_features, n_bins))
    n_edges = np.zeros(n_features, dtype=np.int64)
    candidates = np.zeros(n_features, dtype=np.int64)
    permutation = np.zeros(n_features, dtype=np.int64)
    buffer = np.empty(rows.shape[0], dtype=np.int64)

    n_nodes = 1
    n_leaves = 0
    node_lo[0] = 0
    node_hi[0] = rows.shape[0]
    fresh = np.zeros(2, dtype=np.int64)  # nodes created in this step, to evaluate
    n_fresh = 1
    for step in range(capacity + 1):
        if step > 0:
            # pick the next pending node to expand
            if n_pending == 0:
                break
            if max_leaf_nodes > 0:
                if n_leaves + n_pending >= max_leaf_nodes:
                    break
                best = 0
                for k in range(1, n_pending):
                    if split_gain[pending[k]] > split_gain[pending[best]]:
                        best = k
                parent = pending[best]
                pending[best] = pending[n_pending - 1]
            else:
                parent = pending[n_pending - 1]
            n_pending -= 1
            lo = node_lo[parent]
            hi = node_hi[parent]
            middle = _partition(X, rows, lo, hi, split_feature[parent], split_threshold[parent], buffer)
            if middle - lo < min_samples_leaf or hi - middle < min_samples_leaf:
                n_leaves += 1  # the estimated split breaks min_samples_leaf on the real rows
                continue
            left = n_nodes
            right = n_nodes + 1
            n_nodes += 2
            children_left[parent] = left
            children_right[parent] = right
            feature[parent] = split_feature[parent]
            threshold[parent] = split_threshold[parent]
            node_lo[left] = lo
            node_hi[left] = middle
            node_lo[right] = middle
            node_hi[right] = hi
            node_depth[left] = node_depth[parent] + 1
            node_depth[right] = node_depth[parent] + 1
            fresh[0] = right  # pushed first, so depth-first expands the left child first
            fresh[1] = left
            n_fresh = 2
        for k in range(n_fresh):
            current = fresh[k]
            lo = node_lo[current]
            hi = node_hi[current]
            n = hi - lo
            n_node_samples[current] = n
            node_impurity, mean = _node_stats(rows, lo, hi, y_code, y_value, n_classes, criterion, value[current])
            impurity[current] = node_impurity
            splittable = (
                (max_depth < 0 or node_depth[current] < max_depth)
                and n >= 2 * min_samples_leaf
                and n >= 2
                and node_impurity > 0.0
            )
            slot = NO_SPLIT
            edge = NO_SPLIT
            arm_value = 0.0
            if splittable:
                n_candidates = _draw_candidates(n_features, max_features, rng, permutation, candidates)
                _node_edges(
                    X, rows, lo, hi, candidates, n_candidates, bins_mode, n_bins, round_float32, rng, edges, n_edges
                )
                slot, edge, arm_value, used_insertions, used_rows = _find_split(
                    X, rows, lo, hi, candidates, n_candidates, edges, n_edges, y_code, y_value, mean, criterion,
                    use_bandit, batch_size, z, tie_tolerance, min_samples_leaf, hist, arm_active, mu, var,
                    valid, feature_active,
                )
                insertions[current] = used_insertions
                rows_used[current] = used_rows
                if slot != NO_SPLIT and not arm_value < -_TIE_EPS * node_impurity:
                    slot = NO_SPLIT  # no real impurity reduction
            if slot == NO_SPLIT:
                n_leaves += 1
            else:
                split_feature[current] = candidates[slot]
                split_threshold[current] = edges[slot, edge]
                split_gain[current] = -arm_value * n
                pending[n_pending] = current
                n_pending += 1
        n_fresh = 0
    n_leaves += n_pending  # pending nodes left when max_leaf_nodes was reached
    return (
        children_left[:n_nodes],
        children_right[:n_nodes],
        feature[:n_nodes],
        threshold[:n_nodes],
        value[:n_nodes],
        n_node_samples[:n_nodes],
        impurity[:n_nodes],
        insertions[:n_nodes],
        rows_used[:n_nodes],
    )
