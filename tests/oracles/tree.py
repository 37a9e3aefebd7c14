"""Slow, obvious reference versions of the common format's kernels."""

import math

import numpy as np

from bandit_tree_tools.tree import TREE_LEAF
from bandit_tree_tools.tree._arrays import ZERO_THRESHOLD


def _category_in(bits, node, category):
    word = category // 32
    if word >= bits.shape[1]:
        return False
    return bool((int(bits[node, word]) >> (category % 32)) & 1)


def reference_goes_left(tree, node, x, split_rule):
    """One split decision, written as the TreeArrays docstring states it."""
    kind = int(tree.missing_type[node])
    if math.isnan(x):
        if kind == 1:
            x = 0.0
        else:
            return bool(tree.missing_go_to_left[node])
    if kind == 2 and -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD:
        return bool(tree.missing_go_to_left[node])
    if tree.is_categorical[node]:
        if x < 0 or x >= 2**31 - 1:
            return bool(tree.unknown_category_go_to_left[node])
        category = int(x)
        if _category_in(tree.category_left, node, category):
            return True
        if _category_in(tree.category_right, node, category):
            return False
        return bool(tree.unknown_category_go_to_left[node])
    if split_rule == "lt":
        return x < tree.threshold[node]
    return x <= tree.threshold[node]


def reference_leaf(tree, row, split_rule):
    node = 0
    while tree.children_left[node] != TREE_LEAF:
        x = float(row[tree.feature[node]])
        node = int(
            tree.children_left[node] if reference_goes_left(tree, node, x, split_rule) else tree.children_right[node]
        )
    return node


def _cast(ensemble, X):
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the libraries cast
        return X.astype(np.float32).astype(np.float64) if ensemble.input_dtype == "float32" else X


def reference_apply(ensemble, X):
    X = _cast(ensemble, X)
    return np.array(
        [[reference_leaf(tree, row, ensemble.split_rule) for tree in ensemble.trees] for row in X], dtype=np.int64
    ).reshape(len(X), ensemble.n_trees)


def reference_predict_raw(ensemble, X):
    X = _cast(ensemble, X)
    out = np.zeros((len(X), ensemble.n_outputs))
    for i, row in enumerate(X):
        acc = [np.float32(b) for b in ensemble.base_score] if ensemble.accumulate_float32 else list(ensemble.base_score)
        if ensemble.aggregation == "mean":
            acc = [np.float32(0) if ensemble.accumulate_float32 else 0.0 for _ in acc]
        for t, tree in enumerate(ensemble.trees):
            leaf = reference_leaf(tree, row, ensemble.split_rule)
            for j, v in enumerate(tree.value[leaf]):
                k = ensemble.tree_output[t] + j
                contribution = ensemble.tree_scale[t] * v
                if ensemble.accumulate_float32:
                    acc[k] = np.float32(acc[k] + np.float32(contribution))
                else:
                    acc[k] += contribution
        for k in range(ensemble.n_outputs):
            total = float(acc[k])
            if ensemble.aggregation == "mean":
                total = total / ensemble.n_trees + ensemble.base_score[k]
            out[i, k] = total
    return out


def reference_breadth_first(node_offset, children_left, children_right, lockstep_depth):
    """``tree._packing.breadth_first`` with a queue per tree: every node's new
    id, each tree's depth and its lockstep steps."""
    from collections import deque

    n_trees = len(node_offset) - 1
    new_of_old = np.empty(len(children_left), dtype=np.int64)
    depth = np.zeros(n_trees, dtype=np.int64)
    lockstep = np.zeros(n_trees, dtype=np.int64)
    for tree in range(n_trees):
        root, position, shallowest = int(node_offset[tree]), 0, -1
        queue = deque([(0, 0)])
        while queue:
            local, level = queue.popleft()
            new_of_old[root + local] = root + position
            position += 1
            depth[tree] = max(depth[tree], level)
            if children_left[root + local] != TREE_LEAF:
                queue.append((int(children_left[root + local]), level + 1))
                queue.append((int(children_right[root + local]), level + 1))
            elif shallowest < 0:
                shallowest = level
        d = int(depth[tree])
        lockstep[tree] = min(d, max(shallowest, d // 2)) if d > lockstep_depth else d
    return new_of_old, depth, lockstep
