"""Numba kernels over a packed ensemble: every tree's arrays concatenated, with
``node_offset[t]`` the global id of tree ``t``'s root (children stay local).

Called only through the validating wrappers of :mod:`._ensemble`.
"""

import numba
import numpy as np

from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, TREE_LEAF, ZERO_THRESHOLD


@numba.njit(cache=True, inline="always")
def _in_bitset(bits, node, category):
    word = category >> 5
    if word >= bits.shape[1]:
        return False
    return (bits[node, word] >> np.uint32(category & 31)) & np.uint32(1) == np.uint32(1)


@numba.njit(cache=True)
def _goes_left(
    x,
    node,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
    rule_lt,
):
    """Decide one split for the (already dtype-cast) value ``x`` at global ``node``."""
    kind = missing_type[node]
    if np.isnan(x):
        if kind == MISSING_NAN_AS_ZERO:
            x = 0.0  # NaN -> 0.0, then compared like any value
        else:
            return missing_go_to_left[node] == 1
    if kind == MISSING_ZERO_OR_NAN and -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD:
        return missing_go_to_left[node] == 1
    if is_categorical[node] == 1:
        # Negative and huge values are no category of any library we import.
        if x < 0.0 or x >= 2147483647.0:
            return unknown_category_go_to_left[node] == 1
        category = np.int64(x)
        if _in_bitset(category_left, node, category):
            return True
        if _in_bitset(category_right, node, category):
            return False
        return unknown_category_go_to_left[node] == 1
    if rule_lt:
        return x < threshold[node]
    return x <= threshold[node]


@numba.njit(cache=True)
def _leaf_of_row(
    X,
    row,
    root,
    children_left,
    children_right,
    feature,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
    rule_lt,
):
    """Local id of the leaf reached by ``X[row]`` in the tree rooted at global id ``root``."""
    local = 0
    while children_left[root + local] != TREE_LEAF:
        node = root + local
        x = X[row, feature[node]]
        if _goes_left(
            x,
            node,
            threshold,
            missing_go_to_left,
            missing_type,
            is_categorical,
            category_left,
            category_right,
            unknown_category_go_to_left,
            rule_lt,
        ):
            local = children_left[node]
        else:
            local = children_right[node]
    return local


@numba.njit(cache=True, parallel=True)
def _apply(
    X,
    node_offset,
    children_left,
    children_right,
    feature,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
    rule_lt,
):
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    leaves = np.empty((n_rows, n_trees), dtype=np.int64)
    for row in numba.prange(n_rows):
        for tree in range(n_trees):
            leaves[row, tree] = _leaf_of_row(
                X,
                row,
                node_offset[tree],
                children_left,
                children_right,
                feature,
                threshold,
                missing_go_to_left,
                missing_type,
                is_categorical,
                category_left,
                category_right,
                unknown_category_go_to_left,
                rule_lt,
            )
    return leaves


@numba.njit(cache=True, parallel=True)
def _predict_raw(
    X,
    node_offset,
    children_left,
    children_right,
    feature,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
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
    for row in numba.prange(n_rows):
        acc = np.zeros(n_outputs, dtype=np.float64)
        acc32 = np.zeros(n_outputs, dtype=np.float32)
        if not average:
            for k in range(n_outputs):
                acc[k] = base_score[k]
                acc32[k] = np.float32(base_score[k])
        for tree in range(n_trees):
            root = node_offset[tree]
            leaf = root + _leaf_of_row(
                X,
                row,
                root,
                children_left,
                children_right,
                feature,
                threshold,
                missing_go_to_left,
                missing_type,
                is_categorical,
                category_left,
                category_right,
                unknown_category_go_to_left,
                rule_lt,
            )
            first = tree_output[tree]
            scale = tree_scale[tree]
            for j in range(width):
                if accumulate_float32:
                    acc32[first + j] = acc32[first + j] + np.float32(scale * value[leaf, j])
                else:
                    acc[first + j] += scale * value[leaf, j]
        for k in range(n_outputs):
            total = np.float64(acc32[k]) if accumulate_float32 else acc[k]
            if average:
                total = total / n_trees + base_score[k]
            raw[row, k] = total
    return raw


@numba.njit(cache=True, parallel=True)
def _path_lengths(
    X,
    node_offset,
    children_left,
    children_right,
    feature,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
    rule_lt,
):
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    lengths = np.zeros(n_rows, dtype=np.int64)
    for row in numba.prange(n_rows):
        total = 0
        for tree in range(n_trees):
            root = node_offset[tree]
            local = 0
            total += 1
            while children_left[root + local] != TREE_LEAF:
                node = root + local
                if _goes_left(
                    X[row, feature[node]],
                    node,
                    threshold,
                    missing_go_to_left,
                    missing_type,
                    is_categorical,
                    category_left,
                    category_right,
                    unknown_category_go_to_left,
                    rule_lt,
                ):
                    local = children_left[node]
                else:
                    local = children_right[node]
                total += 1
        lengths[row] = total
    return lengths


@numba.njit(cache=True, parallel=True)
def _fill_paths(
    X,
    indptr,
    node_offset,
    children_left,
    children_right,
    feature,
    threshold,
    missing_go_to_left,
    missing_type,
    is_categorical,
    category_left,
    category_right,
    unknown_category_go_to_left,
    rule_lt,
):
    """Global node ids on every row's paths (CSR column indices)."""
    n_rows = X.shape[0]
    n_trees = node_offset.shape[0] - 1
    indices = np.empty(indptr[n_rows], dtype=np.int64)
    for row in numba.prange(n_rows):
        position = indptr[row]
        for tree in range(n_trees):
            root = node_offset[tree]
            local = 0
            indices[position] = root
            position += 1
            while children_left[root + local] != TREE_LEAF:
                node = root + local
                if _goes_left(
                    X[row, feature[node]],
                    node,
                    threshold,
                    missing_go_to_left,
                    missing_type,
                    is_categorical,
                    category_left,
                    category_right,
                    unknown_category_go_to_left,
                    rule_lt,
                ):
                    local = children_left[node]
                else:
                    local = children_right[node]
                indices[position] = root + local
                position += 1
    return indices
