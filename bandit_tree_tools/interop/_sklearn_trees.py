"""scikit-learn's ``Tree`` objects <-> the common format's ``TreeArrays``.

Reading goes through ``Tree.__getstate__``; writing builds the installed
version's node records and loads them with ``Tree.__setstate__``. Node fields
this module does not know are refused both ways.
"""

from __future__ import annotations

import functools

import numpy as np

from ..exceptions import ConversionError
from ..tree import MISSING_NAN, TREE_LEAF, TreeArrays, make_tree, node_depth, stacked_node_depths
from ..tree._impurity import impurity_of_counts
from ._sklearn_common import version

# Fields of scikit-learn's Tree node struct this module knows how to read and write.
KNOWN_NODE_FIELDS = frozenset(
    {
        "left_child",
        "right_child",
        "feature",
        "threshold",
        "impurity",
        "n_node_samples",
        "weighted_n_node_samples",
        "missing_go_to_left",
    }
)


def _check_node_fields(dtype, doing):
    unknown = set(dtype.names) - KNOWN_NODE_FIELDS
    if unknown:
        raise ConversionError(
            f"this scikit-learn version ({version()}) has Tree node fields {sorted(unknown)} that bandit_tree_tools "
            f"does not know; {doing}. Use a scikit-learn version whose Tree nodes have only "
            + ", ".join(sorted(KNOWN_NODE_FIELDS))
        )


def tree_from_sklearn(sk_tree, width: int, *, has_leaf_value=None) -> TreeArrays:
    """Arrays of a ``sklearn.tree._tree.Tree`` (first output only, the first
    ``width`` value columns). Every array is a copy."""
    state = sk_tree.__getstate__()
    nodes, values = state["nodes"], state["values"]
    _check_node_fields(nodes.dtype, "importing would lose them")
    return make_tree(
        np.array(nodes["left_child"], dtype=np.int64),
        np.array(nodes["right_child"], dtype=np.int64),
        np.array(nodes["feature"], dtype=np.int64),
        np.array(nodes["threshold"], dtype=np.float64),
        np.array(values[:, 0, :width], dtype=np.float64),
        missing_go_to_left=np.array(nodes["missing_go_to_left"], dtype=np.uint8),
        has_leaf_value=has_leaf_value,
        n_node_samples=np.array(nodes["n_node_samples"], dtype=np.int64),
        weighted_n_node_samples=np.array(nodes["weighted_n_node_samples"], dtype=np.float64),
        impurity=np.array(nodes["impurity"], dtype=np.float64),
        check=False,  # the Ensemble validates every tree
    )


def _check_exportable_tree(tree: TreeArrays, index: int):
    internal = tree.children_left != TREE_LEAF
    if np.any(tree.is_categorical[internal]):
        raise ConversionError(
            f"tree {index} has categorical splits, which scikit-learn's DecisionTree cannot express; "
            "export it to a library with categorical splits (LightGBM) instead"
        )
    if np.any(tree.missing_type[internal] != MISSING_NAN):
        raise ConversionError(
            f"tree {index} treats zeros as missing or NaN as zero (missing_type != 0), which scikit-learn's "
            "trees cannot express"
        )


def fill_unknown_impurity(tree: TreeArrays, classifier: bool, criterion: str = "gini") -> np.ndarray:
    """``tree.impurity`` with NaN entries replaced by what can be derived from
    the values: the Gini index (or entropy, in bits) of the class fractions
    for classifiers; for regressors, the weighted variance of the leaf means
    below the node (the leaves' own spread is unknown, so leaves get 0)."""
    impurity = tree.impurity.copy()
    unknown = np.isnan(impurity)
    if not unknown.any():
        return impurity
    if classifier:
        # the values are class fractions (or counts): their impurity is the one definition's
        _, derived = impurity_of_counts(tree.value, "entropy" if criterion in ("entropy", "log_loss") else "gini")
    else:
        weight = tree.weighted_n_node_samples.copy()
        weight = np.where(np.isnan(weight), tree.n_node_samples.astype(np.float64), weight)
        weight = np.maximum(weight, 0.0)
        leaf = tree.children_left == TREE_LEAF
        mean = tree.value[:, 0]
        # sums of w, w*m and w*m^2 over the leaves of each subtree, from the deepest level up
        totals = np.zeros((tree.n_nodes, 3))
        totals[leaf] = np.column_stack([weight, weight * mean, weight * mean * mean])[leaf]
        depth = node_depth(tree)
        for level in range(int(depth.max()) - 1, -1, -1):
            parents = np.flatnonzero((depth == level) & ~leaf)
            totals[parents] = totals[tree.children_left[parents]] + totals[tree.children_right[parents]]
        _, derived = impurity_of_counts(totals, "squared_error")
    impurity[unknown] = derived[unknown]
    return impurity


def max_depths(trees) -> np.ndarray:
    """Depth of each tree, computed for all trees in one pass."""
    offsets, depth = stacked_node_depths(trees)
    return np.maximum.reduceat(depth, offsets[:-1])


def tree_to_sklearn(
    tree: TreeArrays, n_features: int, n_classes: int | None, *, index: int = 0, criterion=None, max_depth=None
):
    """A ``sklearn.tree._tree.Tree`` with ``tree``'s nodes, built from the
    installed version's node dtype. ``n_classes`` None for regression.
    Unknown impurities are derived by :func:`fill_unknown_impurity`."""
    from sklearn.tree._tree import Tree

    _check_exportable_tree(tree, index)
    width = 1 if n_classes is None else n_classes
    if tree.value.shape[1] != width:
        raise ConversionError(
            f"tree {index} has values of width {tree.value.shape[1]}, expected {width} "
            f"({'one per class' if n_classes else 'regression'})"
        )
    sk_tree = Tree(n_features, np.array([width], dtype=np.intp), 1)
    node_dtype = _installed_node_dtype()
    _check_node_fields(node_dtype, "refusing to write trees it might mispredict")
    n = tree.n_nodes
    nodes = np.zeros(n, dtype=node_dtype)
    nodes["left_child"] = tree.children_left
    nodes["right_child"] = tree.children_right
    nodes["feature"] = tree.feature
    nodes["threshold"] = tree.threshold
    nodes["impurity"] = fill_unknown_impurity(tree, n_classes is not None, criterion or "gini")
    nodes["n_node_samples"] = np.maximum(tree.n_node_samples, 0)
    nodes["weighted_n_node_samples"] = np.nan_to_num(tree.weighted_n_node_samples, nan=0.0)
    nodes["missing_go_to_left"] = tree.missing_go_to_left
    values = np.zeros((n, 1, width), dtype=np.float64)
    values[:, 0, :] = tree.value
    sk_tree.__setstate__(
        {
            "max_depth": int(node_depth(tree).max() if max_depth is None else max_depth),
            "node_count": n,
            "nodes": nodes,
            "values": values,
        }
    )
    return sk_tree


@functools.lru_cache(maxsize=1)
def _installed_node_dtype():
    """The node struct dtype of the installed scikit-learn's Tree."""
    from sklearn.tree._tree import Tree

    return Tree(1, np.array([1], dtype=np.intp), 1).__getstate__()["nodes"].dtype
