"""MABSplit kernels, the split of one node: batch insertion into histograms,
scoring of every (feature, threshold) arm with the variance of its estimate,
and the solver (successive elimination or one exact pass); conventions in
:mod:`._kernels`."""

from typing import NamedTuple

import numpy as np

from .._kernels_inline import empty, larger, smaller
from .._numba_config import helper, kernel
from ..bandits._elimination import STRICTLY_NEGATIVE, eliminate, finite_population_factor, normal_radius
from ..tree._impurity import GINI, SQUARED_ERROR, class_impurity, variance_from_sums

NO_SPLIT = -1

# Two arms whose values differ by less than this (relative) induce, in exact
# arithmetic, the same impurity; picking the lowest index among them keeps the
# exact and the bandit solver on the same arm despite summation order.
_TIE_EPS = 1e-12

_INV_LN2 = 1.0 / np.log(2.0)


class SplitSearch(NamedTuple):
    """How one node's split is searched: the same for every node of a tree."""

    criterion: int  # GINI, ENTROPY or SQUARED_ERROR (tree._impurity)
    use_bandit: bool  # successive elimination on batches, else one exact pass
    batch_size: int  # rows per batch of the bandit
    z: float  # width of the confidence intervals, in standard errors
    tie_tolerance: float  # survivors within this (relative) of the best are ties: stop
    min_samples_leaf: int


class ArmTables(NamedTuple):
    """Scratch of one node's arms, (features, bins) each, or (features, 2 *
    bins) where rows may hold NaN (``hist``: (features, bins + 2, width)),
    allocated once per tree and overwritten node after node. Arm ``t < bins``
    is edge ``t`` with NaN sent right, arm ``bins + t`` the same edge with NaN
    sent left (active only where the feature has NaN at the node): without
    NaN in the data, those arms would only add work to every node."""

    hist: np.ndarray  # per feature and bin, the last bin NaN's: class counts, or count, sum and sum of squares of y
    arm_active: np.ndarray  # still a candidate
    mu: np.ndarray  # estimated child impurity minus the parent's
    var: np.ndarray  # variance of that estimate (its confidence radius during elimination)
    valid: np.ndarray  # both children keep min_samples_leaf
    feature_active: np.ndarray  # the feature still has an active arm (its histogram is filled)


# ------------------------------------------------------------- insertion
@helper(inline="always")
def _bin_of(x, edges, slot, count, has_missing, missing):
    """Number of edges strictly below ``x``, or ``missing`` for NaN where the
    rows may hold it (``has_missing``). A branch-free linear count: with about
    ten edges it beats a binary search, whose branches mispredict."""
    if has_missing and x != x:
        return missing
    b = 0
    for t in range(count):
        b += x > edges[slot, t]
    return b


@kernel(nogil=True)
def _insert_batch(
    X, rows, start, stop, candidates, active, edges, n_edges, y_code, y_value, shift, is_regression, has_missing, hist
):
    """Insert rows ``rows[start:stop]`` into the histogram of every active
    candidate feature, NaN into the last bin if ``has_missing`` (the rows may
    hold NaN); return the number of insertions (rows x features)."""
    n_active = 0
    for a in range(active.shape[0]):
        if active[a]:
            n_active += 1
    if n_active == 0:
        return 0
    slots = empty(n_active, np.int64)
    columns = empty(n_active, np.int64)
    counts = empty(n_active, np.int64)
    k = 0
    for a in range(active.shape[0]):
        if active[a]:
            slots[k] = a
            columns[k] = candidates[a]
            counts[k] = n_edges[a]
            k += 1
    missing = hist.shape[1] - 1
    if is_regression:
        for i in range(start, stop):
            row = rows[i]
            target = y_value[row] - shift
            target2 = target * target
            for k in range(n_active):
                a = slots[k]
                b = _bin_of(np.float64(X[row, columns[k]]), edges, a, counts[k], has_missing, missing)
                hist[a, b, 0] += 1.0
                hist[a, b, 1] += target
                hist[a, b, 2] += target2
    else:
        for i in range(start, stop):
            row = rows[i]
            code = y_code[row]
            for k in range(n_active):
                a = slots[k]
                b = _bin_of(np.float64(X[row, columns[k]]), edges, a, counts[k], has_missing, missing)
                hist[a, b, code] += 1.0
    return (stop - start) * n_active


# --------------------------------------------------------------- scoring
@kernel
def _class_impurity(counts, total, criterion):
    """Gini or entropy (bits) of class counts (the shared definition,
    :func:`bandit_tree_tools.tree._impurity.class_impurity`) and the
    delta-method variance of its plug-in estimate from ``total`` draws.

    With proportions ``p`` and a reference class ``K`` (the most frequent,
    so ``log p_K`` is finite), the free parameters are ``p_j, j != K`` and
    ``p_K = 1 - sum p_j``. Gradients (the delta method of MABSplit's
    confidence intervals, Tiwari et al. 2022, "MABSplit: Faster Forest
    Training Using Multi-Armed Bandits"):
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


@helper
def _squared_error(count, total, total2):
    """Variance of a child's targets (the shared
    :func:`~bandit_tree_tools.tree._impurity.variance_from_sums`) and the
    variance of that estimate, ``2 sigma^4 / n`` (sample variance of a
    distribution with kurtosis 3)."""
    if count <= 0.0:
        return 0.0, 0.0
    variance = variance_from_sums(count, total, total2)
    return variance, 2.0 * variance * variance / count


@kernel(nogil=True)
def _score_arms(hist, n_edges, arm_active, criterion, n_node, n_sampled, min_samples_leaf, mu, var, valid):
    """Estimate of every active arm's value and the variance of the estimate.

    ``valid`` says whether both children are estimated to hold at least
    ``min_samples_leaf`` of the node's ``n_node`` rows (exact once
    ``n_sampled == n_node``). Variances carry the finite-population correction
    ``(N - n) / (N - 1)`` of sampling without replacement, so they vanish when
    the node's rows are used up. The rows in the NaN bin join the right child
    of arm ``t`` and the left child of arm ``bins + t``.
    """
    width = hist.shape[2]
    n_bins = hist.shape[1] - 2
    missing = hist.shape[1] - 1
    n = np.float64(n_sampled)
    scale = n_node / n
    correction = finite_population_factor(n, n_node)
    total = empty(width, np.float64)
    left = empty(width, np.float64)
    right = empty(width, np.float64)
    for a in range(hist.shape[0]):
        count = n_edges[a]
        if count == 0:
            continue
        any_active = False
        for first in range(0, arm_active.shape[1], n_bins):  # NaN right, then NaN left
            for t in range(first, first + count):
                if arm_active[a, t]:
                    any_active = True
                    break
        if not any_active:
            continue
        for c in range(width):
            total[c] = hist[a, missing, c]
        for b in range(count + 1):
            for c in range(width):
                total[c] += hist[a, b, c]
        if criterion == SQUARED_ERROR:
            parent, _ = _squared_error(total[0], total[1], total[2])
        else:
            parent, _ = _class_impurity(total, n, criterion)
        # NaN right (arm t), then NaN left (arm bins + t: the NaN bin's rows start on the left)
        for first in range(0, arm_active.shape[1], n_bins):
            for c in range(width):
                left[c] = 0.0 if first == 0 else hist[a, missing, c]
            for t in range(count):
                for c in range(width):
                    left[c] += hist[a, t, c]
                if not arm_active[a, first + t]:
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
                arm = first + t
                mu[a, arm] = w_left * impurity_left + w_right * impurity_right - parent
                var[a, arm] = (w_left * w_left * var_left + w_right * w_right * var_right) * correction
                valid[a, arm] = n_left * scale >= min_samples_leaf and (n - n_left) * scale >= min_samples_leaf


@helper
def _best_arm(mu, arm_active, valid, n_edges, n_bins, n_candidates):
    """Lowest value among active valid arms; ties (within _TIE_EPS) go to the
    lowest (slot, arm). Returns slot, arm, value (slot -1 when none). Only
    the arms of a slot's ``n_edges`` edges are read, on each side of NaN."""
    best = np.inf
    for a in range(n_candidates):
        for first in range(0, arm_active.shape[1], n_bins):
            for t in range(first, first + n_edges[a]):
                if arm_active[a, t] and valid[a, t] and mu[a, t] < best:
                    best = mu[a, t]
    if best == np.inf:
        return NO_SPLIT, NO_SPLIT, np.inf
    band = best + _TIE_EPS * larger(1.0, abs(best))
    for a in range(n_candidates):
        for first in range(0, arm_active.shape[1], n_bins):
            for t in range(first, first + n_edges[a]):
                if arm_active[a, t] and valid[a, t] and mu[a, t] <= band:
                    return a, t, mu[a, t]
    return NO_SPLIT, NO_SPLIT, np.inf


# ---------------------------------------------------------------- solver
@kernel(nogil=True)
def _find_split(
    X, rows, lo, hi, candidates, n_candidates, edges, n_edges, n_missing, y_code, y_value, shift, search, tables
):
    """Best (slot, arm) of one node by successive elimination (MABSplit,
    Algorithm 3 of chapter 3 of M. Tiwari's thesis "Accelerating Machine
    Learning Algorithms with Adaptive Sampling"; the step itself is
    :func:`bandit_tree_tools.bandits.eliminate`) or, with
    ``use_bandit=False``, by one exact pass over all rows.

    Returns ``(slot, arm, value, insertions, rows_used)``; ``slot == -1``
    when no valid arm reduces impurity. Arm ``t`` is edge ``t % bins``, NaN
    sent left when ``t >= bins`` (:class:`ArmTables`): those arms compete only
    for features with NaN at the node (``n_missing``). ``search``: a
    :class:`SplitSearch`; ``tables``: an :class:`ArmTables`.
    """
    criterion, use_bandit, batch_size, z, tie_tolerance, min_samples_leaf = search
    hist, arm_active, mu, var, valid, feature_active = tables
    n_bins = edges.shape[1]
    has_missing = arm_active.shape[1] > n_bins  # the tables hold the arms that send NaN left
    n_node = hi - lo
    is_regression = criterion == SQUARED_ERROR
    for a in range(n_candidates):
        for b in range(hist.shape[1]):
            for c in range(hist.shape[2]):
                hist[a, b, c] = 0.0
        for t in range(arm_active.shape[1]):
            arm_active[a, t] = t < n_edges[a] or (
                has_missing and n_missing[a] > 0 and n_bins <= t < n_bins + n_edges[a]
            )
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
            size = smaller(batch_size, n_node - n_sampled)
            start = lo + n_sampled
        else:
            size = n_node
            start = lo
        insertions += _insert_batch(
            X,
            rows,
            start,
            start + size,
            candidates,
            feature_active,
            edges,
            n_edges,
            y_code,
            y_value,
            shift,
            is_regression,
            has_missing,
            hist,
        )
        n_sampled += size
        _score_arms(hist, n_edges, arm_active, criterion, n_node, n_sampled, min_samples_leaf, mu, var, valid)
        if n_sampled >= n_node:
            break  # estimates are exact now
        # successive elimination: keep arms that may still be the best and may reduce impurity
        for a in range(n_candidates):
            for t in range(arm_active.shape[1]):
                if arm_active[a, t]:
                    var[a, t] = normal_radius(var[a, t], z)  # var is rescored next round
        eliminate(mu.reshape(-1), var.reshape(-1), arm_active.reshape(-1), valid.reshape(-1), STRICTLY_NEGATIVE)
        remaining = 0
        for a in range(n_candidates):
            if not feature_active[a]:
                continue
            still = False
            for t in range(arm_active.shape[1]):
                if arm_active[a, t]:
                    still = True
                    remaining += 1
            feature_active[a] = still
        if remaining == 0:
            return NO_SPLIT, NO_SPLIT, np.inf, insertions, n_sampled
        slot, edge, value = _best_arm(mu, arm_active, valid, n_edges, n_bins, n_candidates)
        if remaining == 1 and slot != NO_SPLIT:
            return slot, edge, value, insertions, n_sampled
        if slot != NO_SPLIT and tie_tolerance > 0.0:
            # every survivor within tie_tolerance of the best: they are ties, stop
            band = value + tie_tolerance * abs(value)
            all_tied = True
            for a in range(n_candidates):
                if not feature_active[a]:
                    continue
                for t in range(arm_active.shape[1]):
                    if arm_active[a, t] and not (valid[a, t] and mu[a, t] <= band):
                        all_tied = False
            if all_tied:
                return slot, edge, value, insertions, n_sampled
    slot, edge, value = _best_arm(mu, arm_active, valid, n_edges, n_bins, n_candidates)
    return slot, edge, value, insertions, n_sampled
