"""MABSplit kernels, candidates: the features drawn at a node and their
candidate thresholds ("edges"); conventions in :mod:`._kernels`."""

import numpy as np

from .._kernels_inline import empty, larger, smaller, zeros
from .._kernels_sort import sort_values
from .._numba_config import helper, kernel
from ..bandits._random import randint as _randint
from ..bandits._random import uniform as _uniform

BINS_LINSPACE = 0
BINS_QUANTILE = 1
BINS_RANDOM = 2


# ------------------------------------------------------------ candidates
@helper
def _round_edge(value, round_float32):
    if round_float32:
        return np.float64(np.float32(value))
    return value


@helper
def _node_range(X, rows, lo, hi, candidates, n_candidates, minimum, maximum):
    """Minimum and maximum of every candidate feature over the node's rows
    (NaN left out: it compares false)."""
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


@helper
def _count_missing(X, rows, lo, hi, candidates, n_candidates, n_missing):
    """How many of the node's rows are NaN in each candidate feature (a pass
    of its own, taken only where the rows hold NaN at all)."""
    for a in range(n_candidates):
        n_missing[a] = 0
    for i in range(lo, hi):
        row = rows[i]
        for a in range(n_candidates):
            x = X[row, candidates[a]]
            if x != x:
                n_missing[a] += 1


@helper
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


@kernel
def _node_edges(
    X, rows, lo, hi, candidates, n_candidates, mode, n_bins, round_float32, rng, edges, n_edges, has_missing, n_missing
):
    """Candidate thresholds of every candidate feature at one node and, if
    ``has_missing`` (the rows may hold NaN), the number of its rows where the
    feature is NaN (``n_missing``; left as it is otherwise).

    linspace: ``n_bins`` evenly spaced edges from the node's min to its max;
    random: ``n_bins`` uniform draws in [min, max) (ExtraTrees-style);
    quantile: ``n_bins`` quantiles of the values among the first ``256 *
    n_bins`` rows of the slice (a random sample, as the slice is in random
    order). NaN takes no part in the edges.
    Edges are rounded to float32 when the comparison happens in float32, so a
    threshold means the same thing to every library that reads it.
    """
    minimum = empty(n_candidates, np.float64)
    maximum = empty(n_candidates, np.float64)
    _node_range(X, rows, lo, hi, candidates, n_candidates, minimum, maximum)
    if has_missing:
        _count_missing(X, rows, lo, hi, candidates, n_candidates, n_missing)
    values = empty(n_bins, np.float64)
    n = hi - lo
    sample = empty(0, np.float64)
    n_sample = 0
    if mode == BINS_QUANTILE:
        n_sample = smaller(n, 256 * n_bins)  # the slice is in random order: its head is a random sample
        sample = empty(n_sample, np.float64)
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
            sort_values(values)
        else:
            feature = candidates[a]
            n_values = 0
            for k in range(n_sample):
                x = np.float64(X[rows[lo + k], feature])
                if x == x:
                    sample[n_values] = x
                    n_values += 1
            if n_values == 0:  # the sample holds only NaN here
                n_edges[a] = 0
                continue
            for k in range(n_values, n_sample):
                sample[k] = np.inf  # in place of the NaN, sorted after every value
            sort_values(sample)
            for k in range(n_bins):
                position = (n_values - 1) * (k / larger(n_bins - 1.0, 1.0))
                below = np.int64(np.floor(position))
                above = smaller(below + 1, n_values - 1)
                fraction = position - below
                v = sample[below] + (sample[above] - sample[below]) * fraction
                values[k] = _round_edge(v, round_float32)
        n_edges[a] = _keep_increasing(values, n_bins, high, edges[a])


@helper
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
    # the drawn features in increasing order, by marking them (no sort to compile)
    chosen = zeros(n_features, np.bool_)
    for i in range(max_features):
        chosen[permutation[i]] = True
    n_chosen = 0
    for f in range(n_features):
        if chosen[f]:
            candidates[n_chosen] = f
            n_chosen += 1
    return max_features
