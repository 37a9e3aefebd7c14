"""Numba kernels over a packed ensemble: every tree's arrays concatenated, with
``node_offset[t]`` the global id of tree ``t``'s root (children stay local).

The packed form keeps each node's children, feature and routing flags in one
int32 row (the flags folded into one value), so a node visit touches two
cache lines (that row and the threshold); rows are processed in
blocks, tree by tree, so a tree's nodes stay in cache across the block.
Called only through the validating wrappers of :mod:`._ensemble`.
"""

import numba
import numpy as np

from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, ZERO_THRESHOLD

# bits of the packed ``flags`` byte
FLAG_MISSING_LEFT = 1
MISSING_TYPE_SHIFT = 1  # two bits: the node's missing_type
FLAG_CATEGORICAL = 8
FLAG_UNKNOWN_LEFT = 16

BLOCK = 2048  # rows routed together through one tree (tree-major within a block, as
# scikit-learn and XGBoost do, so a big forest is not reloaded from memory every few rows)

# columns of the packed int32 ``links`` array: one 16-byte row per node, so a
# node visit reads one cache line besides the threshold
LEFT, RIGHT, FEATURE, FLAGS = 0, 1, 2, 3


def pack_flags(missing_go_to_left, missing_type, is_categorical, unknown_category_go_to_left) -> np.ndarray:
    return (
        missing_go_to_left.astype(np.uint8) * FLAG_MISSING_LEFT
        | (missing_type.astype(np.uint8) << MISSING_TYPE_SHIFT)
        | is_categorical.astype(np.uint8) * FLAG_CATEGORICAL
        | unknown_category_go_to_left.astype(np.uint8) * FLAG_UNKNOWN_LEFT
    ).astype(np.uint8)


@numba.njit(cache=True, inline="always")
def _in_bitset(bits, node, category):
    word = category >> 5
    if word >= bits.shape[1]:
        return False
    return (bits[node, word] >> np.uint32(category & 31)) & np.uint32(1) == np.uint32(1)


@numba.njit(cache=True)
def _goes_left_general(x, node, flag, threshold, category_left, category_right, rule_lt):
    """A split with zero-as-missing, NaN-as-zero or categories."""
    kind = (flag >> MISSING_TYPE_SHIFT) & 3
    missing_left = (flag & FLAG_MISSING_LEFT) != 0
    if np.isnan(x):
        if kind == MISSING_NAN_AS_ZERO:
            x = 0.0  # LightGBM's missing type "None": NaN is compared as 0.0
        else:
            return missing_left
    if kind == MISSING_ZERO_OR_NAN and -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD:
        return missing_left
    if flag & FLAG_CATEGORICAL:
        unknown_left = (flag & FLAG_UNKNOWN_LEFT) != 0
        # Negative and huge values are no category of any library we import.
        if x < 0.0 or x >= 2147483647.0:
            return unknown_left
        category = np.int64(x)
        if _in_bitset(category_left, node, category):
            return True
        if _in_bitset(category_right, node, category):
            return False
        return unknown_left
    if rule_lt:
        return x < threshold[node]
    return x <= threshold[node]


@numba.njit(cache=True, inline="always")
def _goes_left(x, node, flag, threshold, category_left, category_right, rule_lt):
    if flag <= FLAG_MISSING_LEFT:  # numerical split, NaN is the only missing value
        cut = threshold[node]
        if rule_lt:
            if x < cut:
                return True
            if x >= cut:
                return False
        else:
            if x <= cut:
                return True
            if x > cut:
                return False
        return flag == FLAG_MISSING_LEFT  # x is NaN
    return _goes_left_general(x, node, flag, threshold, category_left, category_right, rule_lt)


@numba.njit(cache=True, inline="always")
def _leaf_of_row(X, row, root, links, threshold, category_left, category_right, rule_lt):
    """Local id of the leaf reached by ``X[row]`` in the tree rooted at global id ``root``."""
    local = 0
    while True:
        node = root + local
        left = links[node, LEFT]
        if left < 0:
            return local
        if _goes_left(X[row, links[node, FEATURE]], node, links[node, FLAGS], threshold, category_left, category_right, rule_lt):
            local = left
        else:
            local = links[node, RIGHT]


@numba.njit(cache=True, parallel=True)
def _apply(X, node_offset, links, threshold, category_left, category_right, rule_lt):
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    leaves = np.empty((n_rows, n_trees), dtype=np.int64)
    for block in numba.prange((n_rows + BLOCK - 1) // BLOCK):
        start = block * BLOCK
        stop = min(start + BLOCK, n_rows)
        for tree in range(n_trees):
            root = node_offset[tree]
            for row in range(start, stop):
                leaves[row, tree] = _leaf_of_row(
                    X, row, root, links, threshold, category_left, category_right, rule_lt
                )
    return leaves


@numba.njit(cache=True, parallel=True)
def _predict_raw(
    X,
    node_offset,
    links,
    threshold,
    category_left,
    category_right,
    rule_lt,
    value,
    tree_output,
    tree_scale,
    base_score,
    average,
    accumulate_float32,
):
    """Raw scores: ``base_score`` plus each tree's ``scale * value[leaf]`` added
    in tree order (the order the libraries use, so sums match bit for bit);
    ``average`` divides the tree sum by the number of trees before the base
    score is added. ``accumulate_float32`` rounds every partial sum to float32,
    as XGBoost does."""
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    n_outputs = base_score.shape[0]
    width = value.shape[1]
    raw = np.empty((n_rows, n_outputs), dtype=np.float64)
    for block in numba.prange((n_rows + BLOCK - 1) // BLOCK):
        start = block * BLOCK
        stop = min(start + BLOCK, n_rows)
        acc = np.zeros((stop - start, n_outputs), dtype=np.float64)
        acc32 = np.zeros((stop - start, n_outputs), dtype=np.float32)
        if not average:
            for i in range(stop - start):
                for k in range(n_outputs):
                    acc[i, k] = base_score[k]
                    acc32[i, k] = np.float32(base_score[k])
        for tree in range(n_trees):
            root = node_offset[tree]
            first = tree_output[tree]
            scale = tree_scale[tree]
            for row in range(start, stop):
                leaf = root + _leaf_of_row(
                    X, row, root, links, threshold, category_left, category_right, rule_lt
                )
                for j in range(width):
                    if accumulate_float32:
                        acc32[row - start, first + j] = acc32[row - start, first + j] + np.float32(scale * value[leaf, j])
                    else:
                        acc[row - start, first + j] += scale * value[leaf, j]
        for row in range(start, stop):
            for k in range(n_outputs):
                total = np.float64(acc32[row - start, k]) if accumulate_float32 else acc[row - start, k]
                if average:
                    total = total / n_trees + base_score[k]
                raw[row, k] = total
    return raw


@numba.njit(cache=True)
def _walk(X, row, root, links, threshold, category_left, category_right, rule_lt, out, position):
    """Write the global ids on a row's path through one tree into ``out`` from
    ``position`` (when ``out`` is large enough); return the next position."""
    local = 0
    while True:
        node = root + local
        if position < out.shape[0]:
            out[position] = node
        position += 1
        left = links[node, LEFT]
        if left < 0:
            return position
        if _goes_left(X[row, links[node, FEATURE]], node, links[node, FLAGS], threshold, category_left, category_right, rule_lt):
            local = left
        else:
            local = links[node, RIGHT]


@numba.njit(cache=True, parallel=True)
def _path_lengths(X, node_offset, links, threshold, category_left, category_right, rule_lt):
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    lengths = np.zeros(n_rows, dtype=np.int64)
    nowhere = np.empty(0, dtype=np.int64)
    for row in numba.prange(n_rows):
        total = 0
        for tree in range(n_trees):
            total = _walk(
                X, row, node_offset[tree], links, threshold, category_left, category_right, rule_lt, nowhere, total,
            )
        lengths[row] = total
    return lengths


@numba.njit(cache=True, parallel=True)
def _fill_paths(X, indptr, node_offset, links, threshold, category_left, category_right, rule_lt):
    """Global node ids on every row's paths (CSR column indices)."""
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    indices = np.empty(indptr[n_rows], dtype=np.int64)
    for row in numba.prange(n_rows):
        segment = indices[indptr[row] : indptr[row + 1]]
        position = 0
        for tree in range(n_trees):
            position = _walk(
                X, row, node_offset[tree], links, threshold, category_left, category_right, rule_lt, segment, position,
            )
    return indices
