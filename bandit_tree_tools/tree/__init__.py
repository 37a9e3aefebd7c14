"""The common format: trees as parallel arrays, ensembles, kernels, editing."""

from .. import _numba_config  # noqa: F401 (the threading layer, before any parallel kernel)
from ._arrays import (
    MISSING_NAN,
    MISSING_NAN_AS_ZERO,
    MISSING_ZERO_OR_NAN,
    TREE_LEAF,
    TREE_UNDEFINED,
    TreeArrays,
    make_tree,
    node_depth,
    node_offsets,
    node_parent,
    stacked_node_depths,
    subtree_nodes,
    subtree_sums,
    validate,
)
from ._edit import collapse, outermost_nodes, rebuild_tree
from ._ensemble import Ensemble, FrozenDict, PackedEnsemble, Source, averaged_ensemble, check_ensemble, check_X
from ._input import class_codes, one_per_row, refuse_complex_and_times, refuse_missing, refuse_single_class
from ._nodes import check_node_ids, check_node_map, check_tree_index, check_tree_indices

__all__ = [
    "MISSING_NAN",
    "MISSING_NAN_AS_ZERO",
    "MISSING_ZERO_OR_NAN",
    "TREE_LEAF",
    "TREE_UNDEFINED",
    "Ensemble",
    "FrozenDict",
    "PackedEnsemble",
    "Source",
    "TreeArrays",
    "averaged_ensemble",
    "check_X",
    "class_codes",
    "refuse_missing",
    "refuse_single_class",
    "one_per_row",
    "check_ensemble",
    "check_node_ids",
    "check_node_map",
    "check_tree_index",
    "check_tree_indices",
    "collapse",
    "make_tree",
    "node_depth",
    "node_offsets",
    "node_parent",
    "outermost_nodes",
    "rebuild_tree",
    "refuse_complex_and_times",
    "stacked_node_depths",
    "subtree_nodes",
    "subtree_sums",
    "validate",
]
