"""Numba kernels of MABSplit: the tree builder, here, with the kernels it
calls in :mod:`._kernels_edges` (candidate features and thresholds) and
:mod:`._kernels_split` (histograms, arm scores, the node-split solver); their
names are importable from here too.

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
  so the rows left of edge ``t`` are exactly the bins ``0..t``; a NaN row's
  bin is the last one, apart.
- Missing values: each edge is two arms, NaN sent right and NaN sent left
  (the latter only for features with NaN at the node), as scikit-learn's
  trees learn it. A split whose feature had no NaN at the node sends NaN to
  the child with more rows, as scikit-learn's do.
- Histograms are float64 ``(n_candidates, max_edges + 2, width)``: class
  counts (``width = n_classes``) or, for squared error, ``[count, sum, sum of
  squares]`` of the target minus the node mean (centred, so the variance does
  not cancel catastrophically).
- Arm value ``mu = n_L/n I(L) + n_R/n I(R) - I(parent)``: lower is better,
  negative means the split reduces impurity (Tiwari et al. 2022, "MABSplit:
  Faster Forest Training Using Multi-Armed Bandits", equation (3.1) of
  chapter 3 of M. Tiwari's thesis, minus the parent's impurity).
- Random numbers come from the kernels' one generator with an explicit state
  (:mod:`bandit_tree_tools.bandits._random`), so results depend only on the
  seed, not on the thread or process.
"""

from typing import NamedTuple

import numpy as np

from .._kernels_inline import empty, full, zeros
from .._numba_config import helper, kernel
from ..tree._impurity import ENTROPY, GINI, SQUARED_ERROR  # noqa: F401 (criterion codes, re-exported)
from ._kernels_edges import (  # noqa: F401 (re-exported)
    BINS_LINSPACE,
    BINS_QUANTILE,
    BINS_RANDOM,
    _draw_candidates,
    _keep_increasing,
    _node_edges,
    _node_range,
    _randint,
    _round_edge,
    _uniform,
)
from ._kernels_split import (  # noqa: F401 (re-exported)
    _TIE_EPS,
    NO_SPLIT,
    ArmTables,
    SplitSearch,
    _best_arm,
    _bin_of,
    _class_impurity,
    _find_split,
    _insert_batch,
    _score_arms,
    _squared_error,
)

# where NaN goes at a chosen split: as learned, or (no NaN at the node) to the child with more rows
SEND_RIGHT, SEND_LEFT, NONE_SEEN = 0, 1, 2


class NodeEdges(NamedTuple):
    """How a node's candidate thresholds are drawn."""

    bins_mode: int  # BINS: evenly spaced, quantiles or random (builder)
    n_bins: int
    round_float32: bool  # round the edges to float32, as the model compares
    has_missing: bool  # the rows may hold NaN: count it per candidate, and give each edge its NaN-left arm


class TreeLimits(NamedTuple):
    """Where a tree stops growing."""

    max_depth: int  # -1: no limit
    max_leaf_nodes: int  # 0: no limit (depth-first); else best-first
    max_features: int  # features drawn at each node
    capacity: int  # nodes the arrays hold (node_capacity)


# ------------------------------------------------------------ node stats
@helper
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
    counts = zeros(n_classes, np.float64)
    for i in range(lo, hi):
        counts[y_code[rows[i]]] += 1.0
    for k in range(n_classes):
        value_row[k] = counts[k] / n
    impurity, _ = _class_impurity(counts, np.float64(n), criterion)
    return impurity, 0.0


@helper
def _partition(X, rows, lo, hi, feature, threshold, missing_left, buffer):
    """Move the rows with ``x <= threshold`` (and NaN if ``missing_left``) to
    the front, keeping the order of both sides (so each child's slice stays
    in random order and in increasing memory order); return the split point."""
    n_left = lo
    n_right = 0
    for i in range(lo, hi):
        row = rows[i]
        x = X[row, feature]
        # one unpredictable test per row, as with no NaN: "or" would branch twice
        if (x <= threshold) | (missing_left & (x != x)):
            rows[n_left] = row
            n_left += 1
        else:
            buffer[n_right] = row
            n_right += 1
    for k in range(n_right):
        rows[n_left + k] = buffer[k]
    return n_left


# --------------------------------------------------------------- builder
@kernel(nogil=True)
def _build_tree(X, rows, y_code, y_value, n_classes, search, node_edges, limits, rng):
    """Grow one tree on ``X[rows]``; ``rows`` should be ``0..n-1`` over an X
    whose rows are in random order (see the module docstring).

    Depth-first, or best-first by weighted impurity reduction when
    ``max_leaf_nodes > 0`` (as scikit-learn). A node's split is searched when
    the node is created; it stays a leaf if it is at ``max_depth``, has fewer
    than ``2 * min_samples_leaf`` rows, is pure, if no arm reduces impurity,
    or if the chosen split leaves a child below ``min_samples_leaf`` (possible
    when the bandit stopped on estimated child sizes). NaN rows go where each
    split learned to send them (see the module docstring). Node ids grow as
    nodes are created, so children always follow their parent.

    ``search``: a :class:`SplitSearch`; ``node_edges``: a :class:`NodeEdges`;
    ``limits``: a :class:`TreeLimits`.
    """
    criterion, use_bandit, batch_size, z, tie_tolerance, min_samples_leaf = search
    bins_mode, n_bins, round_float32, has_missing = node_edges
    max_depth, max_leaf_nodes, max_features, capacity = limits  # min_samples_leaf: in search
    n_features = X.shape[1]
    width = n_classes if criterion != SQUARED_ERROR else 3
    value_width = n_classes if criterion != SQUARED_ERROR else 1
    children_left = full(capacity, -1, np.int64)
    children_right = full(capacity, -1, np.int64)
    feature = full(capacity, -2, np.int64)
    threshold = full(capacity, -2.0, np.float64)
    value = zeros((capacity, value_width), np.float64)
    n_node_samples = zeros(capacity, np.int64)
    impurity = zeros(capacity, np.float64)
    insertions = zeros(capacity, np.int64)
    rows_used = zeros(capacity, np.int64)
    # per node: row slice, depth, chosen split (pending expansion)
    node_lo = zeros(capacity, np.int64)
    node_hi = zeros(capacity, np.int64)
    node_depth = zeros(capacity, np.int64)
    split_feature = full(capacity, -1, np.int64)
    split_threshold = zeros(capacity, np.float64)
    split_missing = zeros(capacity, np.int64)  # NaN of the chosen split: SEND_RIGHT, SEND_LEFT or NONE_SEEN
    missing_go_to_left = zeros(capacity, np.uint8)
    split_gain = zeros(capacity, np.float64)
    pending = empty(capacity, np.int64)
    n_pending = 0

    n_arms = 2 * n_bins if has_missing else n_bins  # each edge twice, NaN sent right then left
    hist = zeros((n_features, n_bins + 2, width), np.float64)
    arm_active = zeros((n_features, n_arms), np.bool_)
    mu = zeros((n_features, n_arms), np.float64)
    var = zeros((n_features, n_arms), np.float64)
    valid = zeros((n_features, n_arms), np.bool_)
    feature_active = zeros(n_features, np.bool_)
    tables = ArmTables(hist, arm_active, mu, var, valid, feature_active)
    edges = zeros((n_features, n_bins), np.float64)
    n_edges = zeros(n_features, np.int64)
    n_missing = zeros(n_features, np.int64)
    candidates = zeros(n_features, np.int64)
    permutation = zeros(n_features, np.int64)
    buffer = empty(rows.shape[0], np.int64)

    n_nodes = 1
    n_leaves = 0
    node_lo[0] = 0
    node_hi[0] = rows.shape[0]
    fresh = zeros(2, np.int64)  # nodes created in this step, to evaluate
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
            middle = _partition(
                X,
                rows,
                lo,
                hi,
                split_feature[parent],
                split_threshold[parent],
                split_missing[parent] == SEND_LEFT,
                buffer,
            )
            if middle - lo < min_samples_leaf or hi - middle < min_samples_leaf:
                n_leaves += 1  # the estimated split breaks min_samples_leaf on the real rows
                continue
            if split_missing[parent] == NONE_SEEN:
                missing_go_to_left[parent] = middle - lo >= hi - middle
            else:
                missing_go_to_left[parent] = split_missing[parent] == SEND_LEFT
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
            arm_value = 0.0
            if splittable:
                n_candidates = _draw_candidates(n_features, max_features, rng, permutation, candidates)
                _node_edges(
                    X,
                    rows,
                    lo,
                    hi,
                    candidates,
                    n_candidates,
                    bins_mode,
                    n_bins,
                    round_float32,
                    rng,
                    edges,
                    n_edges,
                    has_missing,
                    n_missing,
                )
                slot, arm, arm_value, used_insertions, used_rows = _find_split(
                    X,
                    rows,
                    lo,
                    hi,
                    candidates,
                    n_candidates,
                    edges,
                    n_edges,
                    n_missing,
                    y_code,
                    y_value,
                    mean,
                    search,
                    tables,
                )
                insertions[current] = used_insertions
                rows_used[current] = used_rows
                if slot != NO_SPLIT and not arm_value < -_TIE_EPS * node_impurity:
                    slot = NO_SPLIT  # no real impurity reduction
            if slot == NO_SPLIT:
                n_leaves += 1
            else:
                split_feature[current] = candidates[slot]
                split_threshold[current] = edges[slot, arm % n_bins]
                if arm >= n_bins:
                    split_missing[current] = SEND_LEFT
                else:
                    split_missing[current] = SEND_RIGHT if n_missing[slot] > 0 else NONE_SEEN
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
        missing_go_to_left[:n_nodes],
        value[:n_nodes],
        n_node_samples[:n_nodes],
        impurity[:n_nodes],
        insertions[:n_nodes],
        rows_used[:n_nodes],
    )
