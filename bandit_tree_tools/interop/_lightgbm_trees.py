"""LightGBM's parsed model text -> the common format's trees.

Every per-node array is built for the whole model at once (a few numpy
operations), then split per tree: internal nodes first, in LightGBM's order,
then the leaves. Thresholds inside LightGBM's zero band are folded to the
values that route as LightGBM does.
"""

import numpy as np

from ..exceptions import ConversionError
from ..tree import MISSING_NAN, TREE_LEAF, TREE_UNDEFINED, TreeArrays
from ._lightgbm_text import (
    BELOW_NEGATIVE_ZERO,
    CATEGORICAL_MASK,
    DEFAULT_LEFT_MASK,
    LIGHTGBM_ZERO,
    MISSING_FROM_LIGHTGBM,
)


def _routing_arrays(parsed):
    """Per-internal-node arrays of all trees at once: missing handling,
    thresholds (zero band folded in), categorical flags."""
    decision = parsed.arrays["decision_type"]
    categorical = (decision & CATEGORICAL_MASK) != 0
    lightgbm_missing = (decision >> 2) & 3
    if np.any(lightgbm_missing == 3):
        raise ConversionError("the LightGBM model string has a decision_type with an unknown missing type (3)")
    missing_type = MISSING_FROM_LIGHTGBM[np.minimum(lightgbm_missing, 2)]
    missing_left = ((decision & DEFAULT_LEFT_MASK) != 0).astype(np.uint8)
    missing_type[categorical] = MISSING_NAN
    missing_left[categorical] = 0
    threshold = parsed.arrays["threshold"].copy()
    numeric = ~categorical
    # LightGBM reads |x| <= 1e-35f as 0.0 before comparing (kZeroThreshold), so a
    # threshold t in [-1e-35f, 0) sends left exactly the x < -1e-35f, and one in
    # [0, 1e-35f) exactly the x <= 1e-35f.
    threshold[numeric & (threshold >= -LIGHTGBM_ZERO) & (threshold < 0.0)] = BELOW_NEGATIVE_ZERO
    threshold[numeric & (threshold >= 0.0) & (threshold < LIGHTGBM_ZERO)] = LIGHTGBM_ZERO
    category_index = np.where(categorical, threshold, 0.0).astype(np.int64)
    threshold[categorical] = -2.0
    return categorical.astype(np.uint8), missing_type, missing_left, threshold, category_index


def _offsets(counts) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def build_trees(parsed):
    """All trees at once: every per-node array is built for the whole model in
    a few numpy operations, then split into per-tree views (internal nodes
    first, in LightGBM's order, then the leaves)."""
    arrays = parsed.arrays
    num_leaves = parsed.num_leaves
    n_internal = num_leaves - 1
    n_trees = parsed.n_trees
    categorical, missing_type, missing_left, threshold, category_index = _routing_arrays(parsed)

    node_at = _offsets(2 * num_leaves - 1)
    internal_at, leaf_at = _offsets(n_internal), _offsets(num_leaves)
    internal_tree = np.repeat(np.arange(n_trees), n_internal)
    leaf_tree = np.repeat(np.arange(n_trees), num_leaves)
    internal_position = node_at[internal_tree] + np.arange(internal_at[-1]) - internal_at[internal_tree]
    leaf_position = node_at[leaf_tree] + n_internal[leaf_tree] + np.arange(leaf_at[-1]) - leaf_at[leaf_tree]
    n_nodes = int(node_at[-1])

    def nodes(internal_values, leaf_values, dtype):
        out = np.empty(n_nodes, dtype=dtype)
        out[internal_position] = internal_values
        out[leaf_position] = leaf_values
        return out

    def child(key):
        ids = arrays[key]
        return np.where(ids >= 0, ids, n_internal[internal_tree] + ~ids)

    # single-leaf trees may print an empty leaf_weight line
    leaf_weight = np.full(leaf_at[-1], np.nan)
    has_weights = np.repeat(parsed.counts["leaf_weight"] == num_leaves, num_leaves)
    leaf_weight[has_weights] = arrays["leaf_weight"]
    columns = {
        "children_left": nodes(child("left_child"), TREE_LEAF, np.int64),
        "children_right": nodes(child("right_child"), TREE_LEAF, np.int64),
        "feature": nodes(arrays["split_feature"], TREE_UNDEFINED, np.int64),
        "threshold": nodes(threshold, float(TREE_UNDEFINED), np.float64),
        "missing_go_to_left": nodes(missing_left, 0, np.uint8),
        "missing_type": nodes(missing_type, 0, np.uint8),
        "is_categorical": nodes(categorical, 0, np.uint8),
        "unknown_category_go_to_left": np.zeros(n_nodes, dtype=np.uint8),
        "value": nodes(arrays["internal_value"], arrays["leaf_value"], np.float64).reshape(-1, 1),
        "has_leaf_value": np.ones(n_nodes, dtype=np.uint8),
        "n_node_samples": nodes(arrays["internal_count"], arrays["leaf_count"], np.int64),
        "weighted_n_node_samples": nodes(arrays["internal_weight"], leaf_weight, np.float64),
        "impurity": np.full(n_nodes, np.nan),
        "gain": nodes(arrays["split_gain"], np.nan, np.float64),
    }
    bounds = node_at[1:-1]
    split = {name: np.split(column, bounds) for name, column in columns.items()}
    trees = []
    for t in range(n_trees):
        fields = {name: parts[t] for name, parts in split.items()}
        category_left = _category_bitsets(parsed, t, fields["is_categorical"], category_index, internal_at[t])
        if category_left is None:
            category_left = np.zeros((fields["feature"].shape[0], 0), dtype=np.uint32)
        trees.append(TreeArrays(category_left=category_left, category_right=np.zeros_like(category_left), **fields))
    return trees


def _category_bitsets(parsed, t, is_categorical, category_index, first_internal):
    """category_left of tree ``t`` (None when it has no categorical split)."""
    if parsed.num_cat[t] == 0:
        return None
    node_ids = np.flatnonzero(is_categorical)
    index = category_index[first_internal + node_ids]
    boundaries, words = parsed.cat_boundaries[t], parsed.cat_threshold[t]
    if np.any((index < 0) | (index >= boundaries.shape[0] - 1)):
        raise ConversionError(f"tree {t} of the LightGBM model refers to a categorical bitset it lacks")
    n_words = int(np.max(boundaries[index + 1] - boundaries[index], initial=0))
    category_left = np.zeros((is_categorical.shape[0], n_words), dtype=np.uint32)
    for node, cat in zip(node_ids.tolist(), index.tolist()):
        bits = words[boundaries[cat] : boundaries[cat + 1]]
        category_left[node, : bits.shape[0]] = bits
    return category_left
