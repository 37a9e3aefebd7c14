"""Checks of tree indices and node ids given by callers: the one place that
says which ids exist and what a bad id's message reads."""

from collections.abc import Iterable, Mapping

import numpy as np

from ..exceptions import NodeError, ParameterError
from ._arrays import TREE_LEAF


def check_tree_indices(trees, n_trees: int) -> np.ndarray:
    """``trees`` (a list or array of tree indices, in the caller's order) as
    int64; ParameterError for non-integers, NodeError for indices outside
    ``0..n_trees - 1``."""
    try:
        values = np.asarray(trees)
    except (TypeError, ValueError):
        values = np.asarray([None])
    if values.size and values.dtype.kind not in "iu":  # booleans and floats are not indices
        raise ParameterError(f"trees must be tree indices (integers), got {trees!r}")
    indices = values.astype(np.int64).reshape(-1)
    bad = indices[(indices < 0) | (indices >= n_trees)]
    if bad.size:
        raise NodeError(f"tree index {int(bad[0])} does not exist; the ensemble has trees 0..{n_trees - 1}")
    return indices


def check_tree_index(tree_index, n_trees: int, *, hint: str = "") -> int:
    """One tree index (an int, not a bool) inside ``0..n_trees - 1``; ``hint``
    ends the message for a value that is not an int."""
    if isinstance(tree_index, (bool, np.bool_)) or not isinstance(tree_index, (int, np.integer)):
        raise NodeError(f"tree indices must be ints, got {tree_index!r} ({type(tree_index).__name__}){hint}")
    if not 0 <= tree_index < n_trees:
        raise NodeError(f"tree index {tree_index!r} does not exist; the ensemble has trees 0..{n_trees - 1}")
    return int(tree_index)


def check_node_ids(tree, ids, tree_index: int, *, leaf_error: str = "is a leaf; only internal nodes qualify"):
    """Node ids of one tree as int64 (in the order given): integers, existing,
    internal; ``leaf_error`` ends the message for a leaf ("node 4 of tree 0
    <leaf_error>")."""
    if isinstance(ids, (str, bytes, Mapping)) or not isinstance(ids, (Iterable, np.ndarray)):
        raise NodeError(
            f"nodes[{tree_index}] must be a list of node ids, got {ids!r}; write {{{tree_index}: [{ids!r}]}} "
            "for a single node"
        )
    ids = np.atleast_1d(np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids))
    if ids.dtype == bool:
        raise NodeError(f"node ids of tree {tree_index} must be integers, got booleans; pass the ids themselves")
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(ids.dtype, np.integer):
        raise NodeError(f"node ids of tree {tree_index} must be integers, got {ids.dtype}")
    ids = ids.astype(np.int64).reshape(-1)
    out_of_range = ids[(ids < 0) | (ids >= tree.n_nodes)]
    if out_of_range.size:
        raise NodeError(
            f"node {int(out_of_range[0])} does not exist in tree {tree_index}, which has nodes 0..{tree.n_nodes - 1}"
        )
    leaves = ids[tree.children_left[ids] == TREE_LEAF]
    if leaves.size:
        raise NodeError(f"node {int(leaves[0])} of tree {tree_index} {leaf_error}")
    return ids


def check_node_map(trees, nodes, *, leaf_error: str = "is a leaf; only internal nodes qualify") -> dict:
    """``{tree index: node ids}`` checked against ``trees`` (a sequence of
    TreeArrays): {int: int64 array} in the order given."""
    if not isinstance(nodes, Mapping):
        raise ParameterError(f"nodes must be a dict {{tree_index: [node ids]}}, e.g. {{0: [3, 7]}}; got {nodes!r}")
    checked = {}
    for tree_index, ids in nodes.items():
        index = check_tree_index(tree_index, len(trees), hint="; write {0: [3, 7]} for nodes 3 and 7 of tree 0")
        checked[index] = check_node_ids(trees[index], ids, index, leaf_error=leaf_error)
    return checked
