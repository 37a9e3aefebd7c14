"""XGBoost's per-tree arrays <-> the common format, all trees at once.

XGBoost stores each tree as parallel arrays (``left_children``,
``split_conditions``, ...). Both directions here work on every tree's arrays
concatenated ("global" node ids), so a 500-tree model costs a few numpy calls
per tree depth level, not a Python loop per node.

Numbering. XGBoost's predictor computes the right child as ``left + 1``
(``GetNextNode`` returns ``LeftChild() + !(x < split)``), so an exported tree
must number siblings consecutively; nodes marked deleted (split index
``2**31 - 1``, left in place by the ``prune`` updater) must not be reachable.
Both importer and exporter therefore renumber breadth-first from the root,
which drops unreachable nodes, puts children after their parents (as the
common format requires) and gives siblings consecutive ids.
"""

import numpy as np

from ..exceptions import ConversionError, InvalidTreeError, UnsupportedModelError
from ..tree import TREE_LEAF, TREE_UNDEFINED, TreeArrays, node_offsets
from ..tree._arrays import breadth_first_positions

ROOT_PARENT = 2**31 - 1  # XGBoost's "no parent" marker in ``parents``
# XGBoost writes the smallest positive float32 as the split condition of a
# categorical node; it is never read, we write the same for identical files.
CATEGORICAL_SPLIT_CONDITION = np.float32(np.nextafter(np.float32(0), np.float32(1)))


def breadth_first(left: np.ndarray, right: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The nodes each tree's root reaches (global ids), tree by tree, each tree
    breadth first with every left child directly before its sibling;
    ``left``/``right`` local ids."""
    try:
        position, _ = breadth_first_positions(offsets, left, right)
    except InvalidTreeError as error:
        raise ConversionError(f"the XGBoost model's trees are corrupt: {error}") from None
    reached = np.flatnonzero(position >= 0)
    return reached[np.argsort(position[reached])]


def _concat(trees, key, dtype):
    parts = [np.asarray(tree[key]) for tree in trees]
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def read_trees(trees: list, n_features: int, internal_scale: np.ndarray, trusted: np.ndarray) -> list:
    """Convert XGBoost tree documents into :class:`TreeArrays`.

    ``internal_scale[t]`` is tree ``t``'s effective learning rate (float32):
    an internal node's value is ``float32(scale * base_weight)``, the value
    XGBoost's updaters give a leaf with that base weight. ``trusted[t]`` says
    whether that value is the right collapse value (``has_leaf_value``).
    """
    n_trees = len(trees)
    sizes = np.zeros(n_trees, dtype=np.int64)
    for index, tree in enumerate(trees):
        param = tree.get("tree_param", {})
        if int(param.get("size_leaf_vector", "1") or 1) > 1:
            raise UnsupportedModelError(
                "XGBoost multi-output trees (multi_strategy='multi_output_tree', vector leaves) are not supported; "
                "train with multi_strategy='one_output_per_tree'"
            )
        sizes[index] = len(tree["left_children"])
        if sizes[index] == 0 or int(param.get("num_nodes", sizes[index])) != sizes[index]:
            raise ConversionError(f"XGBoost tree {index} has {sizes[index]} nodes, but its tree_param says otherwise")
    offsets = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n_total = int(offsets[-1])
    owner = np.repeat(np.arange(n_trees), sizes)

    left = _concat(trees, "left_children", np.int64)
    right = _concat(trees, "right_children", np.int64)
    split_index = _concat(trees, "split_indices", np.int64)
    condition = _concat(trees, "split_conditions", np.float32)
    default_left = _concat(trees, "default_left", np.uint8)
    split_type = _concat(trees, "split_type", np.uint8)
    if all("base_weights" in tree for tree in trees):
        base_weight = _concat(trees, "base_weights", np.float32)
    else:  # a document without them: internal nodes get no collapse value
        base_weight = np.zeros(n_total, dtype=np.float32)
        trusted = np.zeros(n_trees, dtype=bool)
    hessian = _concat(trees, "sum_hessian", np.float32)
    loss_change = _concat(trees, "loss_changes", np.float32)
    for name, array in (("split_conditions", condition), ("split_indices", split_index), ("base_weights", base_weight)):
        if array.shape[0] != n_total:
            raise ConversionError(f"XGBoost trees have {array.shape[0]} {name}, expected {n_total} (one per node)")

    is_internal = left != TREE_LEAF
    local_limit = sizes[owner]
    bad = is_internal & ((left < 0) | (left >= local_limit) | (right < 0) | (right >= local_limit))
    if np.any(bad):
        node = int(np.flatnonzero(bad)[0])
        raise ConversionError(
            f"XGBoost tree {int(owner[node])} node {node - int(offsets[owner[node]])} has children out of range"
        )
    global_left = np.where(is_internal, left + offsets[owner], TREE_LEAF)
    global_right = np.where(is_internal, right + offsets[owner], TREE_LEAF)
    order = breadth_first(left, right, offsets)
    tree_of = owner[order]
    if np.any(is_internal[order] & ((split_index[order] < 0) | (split_index[order] >= n_features))):
        raise ConversionError(f"an XGBoost split uses a feature outside 0..{n_features - 1}")

    new_sizes = np.bincount(tree_of, minlength=n_trees)
    new_offsets = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(new_sizes, out=new_offsets[1:])
    new_global = np.full(n_total, -1, dtype=np.int64)
    new_global[order] = np.arange(order.shape[0])

    internal = is_internal[order]
    children_left = np.where(internal, new_global[global_left[order]] - new_offsets[tree_of], TREE_LEAF)
    children_right = np.where(internal, new_global[global_right[order]] - new_offsets[tree_of], TREE_LEAF)
    categorical = (split_type[order] == 1) & internal
    scale = internal_scale.astype(np.float32)[tree_of]
    node_value = np.where(internal, scale * base_weight[order], condition[order]).astype(np.float64)
    has_leaf_value = np.where(internal, trusted[tree_of], True).astype(np.uint8)
    threshold = np.where(internal & ~categorical, condition[order].astype(np.float64), float(TREE_UNDEFINED))
    feature = np.where(internal, split_index[order], TREE_UNDEFINED)
    missing_left = np.where(internal, default_left[order], 0).astype(np.uint8)
    gain = np.where(internal, loss_change[order].astype(np.float64), np.nan)
    cover = hessian[order].astype(np.float64)

    category_right = _read_categories(trees, offsets, new_global, n_total)
    if category_right.shape[1]:
        category_right[~categorical] = 0
    category_left = np.zeros_like(category_right)

    out = []
    for index in range(n_trees):
        part = slice(int(new_offsets[index]), int(new_offsets[index + 1]))
        n = part.stop - part.start
        out.append(
            TreeArrays(
                children_left=children_left[part],
                children_right=children_right[part],
                feature=feature[part],
                threshold=threshold[part],
                missing_go_to_left=missing_left[part],
                missing_type=np.zeros(n, dtype=np.uint8),
                is_categorical=categorical[part].astype(np.uint8),
                category_left=category_left[part],
                category_right=category_right[part],
                # XGBoost's Decision(): a category not in the set (negative,
                # too large, or simply unlisted) goes left.
                unknown_category_go_to_left=categorical[part].astype(np.uint8),
                value=node_value[part].reshape(n, 1),
                has_leaf_value=has_leaf_value[part],
                n_node_samples=np.full(n, -1, dtype=np.int64),
                weighted_n_node_samples=cover[part],
                impurity=np.full(n, np.nan),
                gain=gain[part],
            )
        )
    return out


def _read_categories(trees, offsets, new_global, n_total) -> np.ndarray:
    """Bitsets (uint32 words) of the categories each categorical node sends right."""
    nodes, values = [], []
    for index, tree in enumerate(trees):
        tree_nodes = np.asarray(tree.get("categories_nodes", ()), dtype=np.int64)
        if tree_nodes.size == 0:
            continue
        sizes = np.asarray(tree["categories_sizes"], dtype=np.int64)
        segments = np.asarray(tree["categories_segments"], dtype=np.int64)
        categories = np.asarray(tree["categories"], dtype=np.int64)
        if sizes.shape != tree_nodes.shape or segments.shape != tree_nodes.shape:
            raise ConversionError(f"XGBoost tree {index} has inconsistent categories arrays")
        if np.any(segments + sizes > categories.shape[0]) or np.any(categories < 0):
            raise ConversionError(f"XGBoost tree {index} has categories outside its categories array")
        if np.any((tree_nodes < 0) | (tree_nodes >= offsets[index + 1] - offsets[index])):
            raise ConversionError(f"XGBoost tree {index} lists categories for a node that does not exist")
        starts = np.repeat(segments, sizes)
        within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        values.append(categories[starts + within])
        nodes.append(np.repeat(tree_nodes + offsets[index], sizes))
    n_kept = int(np.count_nonzero(new_global >= 0))
    if not values:
        return np.zeros((n_kept, 0), dtype=np.uint32)
    nodes_all = np.concatenate(nodes)
    values_all = np.concatenate(values)
    kept = new_global[nodes_all] >= 0
    nodes_all, values_all = new_global[nodes_all[kept]], values_all[kept]
    n_words = int(values_all.max()) // 32 + 1 if values_all.size else 0
    bits = np.zeros((n_kept, n_words), dtype=np.uint32)
    np.bitwise_or.at(
        bits, (nodes_all, values_all // 32), np.left_shift(np.uint32(1), (values_all % 32).astype(np.uint32))
    )
    return bits


def _float32_at_least(values: np.ndarray) -> np.ndarray:
    """Smallest float32 >= each value: for float32 ``x``, ``x < t`` holds
    exactly when ``x < _float32_at_least(t)``, so thresholds stay exact."""
    rounded = values.astype(np.float32)
    low = rounded.astype(np.float64) < values
    rounded[low] = np.nextafter(rounded[low], np.float32(np.inf))
    return rounded


def _base_weights(value: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """A float32 ``w`` with ``float32(scale * w) == value`` (XGBoost's leaf
    arithmetic), so the model read back gives the same collapse values; the
    nearest float32 to ``value / scale`` where no exact one exists."""
    target = value.astype(np.float32)
    guess = (value / scale).astype(np.float32)
    best = guess.copy()
    found = scale * guess == target
    candidate_up, candidate_down = guess.copy(), guess.copy()
    for _ in range(3):
        candidate_up = np.nextafter(candidate_up, np.float32(np.inf))
        candidate_down = np.nextafter(candidate_down, np.float32(-np.inf))
        for candidate in (candidate_up, candidate_down):
            hit = ~found & (scale * candidate == target)
            best[hit] = candidate[hit]
            found |= hit
    return best


def write_trees(trees, n_features: int, internal_scale: np.ndarray) -> list:
    """Tree documents in XGBoost's JSON schema (numpy arrays of the dtypes
    XGBoost writes), renumbered breadth-first with consecutive siblings."""
    n_trees = len(trees)
    offsets = node_offsets(trees)
    sizes = np.diff(offsets)
    owner = np.repeat(np.arange(n_trees), sizes)
    left = np.concatenate([tree.children_left for tree in trees])
    right = np.concatenate([tree.children_right for tree in trees])
    is_internal = left != TREE_LEAF
    global_left = np.where(is_internal, left + offsets[owner], TREE_LEAF)
    global_right = np.where(is_internal, right + offsets[owner], TREE_LEAF)
    order = breadth_first(left, right, offsets)
    tree_of = owner[order]
    if order.shape[0] != offsets[-1]:
        raise ConversionError("a tree has nodes that cannot be reached from its root")
    new_global = np.empty_like(order)
    new_global[order] = np.arange(order.shape[0])
    start = offsets[tree_of]  # same sizes, so old and new offsets agree

    def column(name):
        return np.concatenate([getattr(tree, name) for tree in trees])[order]

    internal = is_internal[order]
    categorical = (column("is_categorical") == 1) & internal
    value = column("value")[:, 0]
    children_left = np.where(internal, new_global[global_left[order]] - start, TREE_LEAF).astype(np.int32)
    children_right = np.where(internal, new_global[global_right[order]] - start, TREE_LEAF).astype(np.int32)
    parents = np.full(order.shape[0], ROOT_PARENT, dtype=np.int32)
    internal_ids = np.flatnonzero(internal)
    parents[children_left[internal_ids] + start[internal_ids]] = internal_ids - start[internal_ids]
    parents[children_right[internal_ids] + start[internal_ids]] = internal_ids - start[internal_ids]

    condition = np.where(internal, 0.0, value).astype(np.float32)
    numeric = internal & ~categorical
    condition[numeric] = _float32_at_least(column("threshold")[numeric])
    condition[categorical] = CATEGORICAL_SPLIT_CONDITION
    scale = internal_scale.astype(np.float32)[tree_of]
    base_weight = value.astype(np.float32)
    base_weight[internal] = _base_weights(value[internal], scale[internal])
    gain = np.nan_to_num(column("gain"), nan=0.0).astype(np.float32)
    gain[~internal] = 0.0
    hessian = np.nan_to_num(column("weighted_n_node_samples"), nan=0.0).astype(np.float32)
    split_index = np.where(internal, column("feature"), 0).astype(np.int32)
    default_left = np.where(internal, column("missing_go_to_left"), 0).astype(np.uint8)
    split_type = categorical.astype(np.uint8)

    words = [tree.category_right.shape[1] for tree in trees]
    n_words = max(words)
    if n_words:
        bits = np.concatenate(
            [np.pad(tree.category_right, ((0, 0), (0, n_words - tree.category_right.shape[1]))) for tree in trees]
        )[order]
        cat_rows = np.flatnonzero(categorical)
        member = np.unpackbits(bits[cat_rows].view(np.uint8), axis=1, bitorder="little").astype(bool)
        sizes_per_node = member.sum(axis=1).astype(np.int64)
        cat_values = np.nonzero(member)[1].astype(np.int32)
        cat_starts = np.zeros(cat_rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes_per_node, out=cat_starts[1:])
        cat_tree = tree_of[cat_rows]
        tree_cat_bounds = np.searchsorted(cat_tree, np.arange(n_trees + 1))
    documents = []
    for index in range(n_trees):
        part = slice(int(offsets[index]), int(offsets[index + 1]))
        document = {
            "base_weights": base_weight[part],
            "categories": np.zeros(0, dtype=np.int32),
            "categories_nodes": np.zeros(0, dtype=np.int32),
            "categories_segments": np.zeros(0, dtype=np.int64),
            "categories_sizes": np.zeros(0, dtype=np.int64),
            "default_left": default_left[part],
            "id": index,
            "left_children": children_left[part],
            "loss_changes": gain[part],
            "parents": parents[part],
            "right_children": children_right[part],
            "split_conditions": condition[part],
            "split_indices": split_index[part],
            "split_type": split_type[part],
            "sum_hessian": hessian[part],
            "tree_param": {
                "num_deleted": "0",
                "num_feature": str(n_features),
                "num_nodes": str(part.stop - part.start),
                "size_leaf_vector": "1",
            },
        }
        if n_words and tree_cat_bounds[index + 1] > tree_cat_bounds[index]:
            first, last = int(tree_cat_bounds[index]), int(tree_cat_bounds[index + 1])
            document["categories_nodes"] = (cat_rows[first:last] - offsets[index]).astype(np.int32)
            document["categories_sizes"] = sizes_per_node[first:last]
            document["categories_segments"] = cat_starts[first:last] - cat_starts[first]
            document["categories"] = cat_values[cat_starts[first] : cat_starts[last]]
        documents.append(document)
    return documents


def check_exportable(tree: TreeArrays, index: int) -> None:
    """Refuse routing XGBoost cannot express, naming the node and the reason."""
    internal = tree.children_left != TREE_LEAF
    if tree.value.shape[1] != 1:
        raise ConversionError(f"tree {index} has {tree.value.shape[1]} values per leaf; XGBoost trees hold one")
    if np.any(tree.missing_type[internal] != 0):
        node = int(np.flatnonzero(internal & (tree.missing_type != 0))[0])
        raise ConversionError(
            f"tree {index} node {node} uses missing_type {int(tree.missing_type[node])}; XGBoost only treats NaN "
            "as missing (missing_type 0)"
        )
    categorical = internal & (tree.is_categorical == 1)
    if np.any(categorical & (np.any(tree.category_left != 0, axis=1) | (tree.unknown_category_go_to_left == 0))):
        node = int(
            np.flatnonzero(
                categorical & (np.any(tree.category_left != 0, axis=1) | (tree.unknown_category_go_to_left == 0))
            )[0]
        )
        raise ConversionError(
            f"tree {index} node {node} lists categories that go left or sends unknown categories right; XGBoost "
            "sends the listed categories right and every other category left"
        )
    if tree.category_right.shape[1] * 32 > 2**24 + 32:
        raise ConversionError(f"tree {index} has categories beyond XGBoost's limit of 2**24")
