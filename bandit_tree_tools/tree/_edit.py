"""Editing without mutation: mark nodes, then rebuild compact trees.

The way scikit-learn's ``_build_pruned_tree`` works: a per-node mask says
which nodes survive and which become leaves; a new tree is built from it and
the old one is left as it was.
"""

import numpy as np

from ..exceptions import ConversionError, UnsupportedModelError
from ._arrays import TREE_LEAF, TREE_UNDEFINED, TreeArrays, node_parent, sums_to_root
from ._ensemble import Ensemble
from ._nodes import check_node_map


def under_flagged(tree: TreeArrays, mask: np.ndarray) -> np.ndarray:
    """Whether each node has a node flagged in ``mask`` above it (a proper
    ancestor): the flagged parents counted up to the root (:func:`sums_to_root`)."""
    parent = node_parent(tree)
    flagged_parent = np.zeros(tree.n_nodes, dtype=np.int64)
    below = parent >= 0
    flagged_parent[below] = mask[parent[below]]
    return sums_to_root(parent, flagged_parent) > 0


def rebuilt_node_ids(tree: TreeArrays, make_leaf: np.ndarray) -> np.ndarray:
    """The id every node has in ``rebuild_tree(tree, make_leaf)``; -1 for the
    nodes it drops (those below a node that becomes a leaf)."""
    keep = ~under_flagged(tree, np.asarray(make_leaf, dtype=bool))
    new_id = np.full(tree.n_nodes, TREE_LEAF, dtype=np.int64)
    new_id[keep] = np.arange(np.count_nonzero(keep))
    return new_id


def rebuild_tree(tree: TreeArrays, make_leaf: np.ndarray) -> TreeArrays:
    """A compact copy of ``tree`` in which every node with ``make_leaf[i]``
    is a leaf (its descendants are dropped). Kept nodes keep their relative
    order, so children still come after their parents; node ``i`` becomes
    node ``rebuilt_node_ids(tree, make_leaf)[i]``."""
    left, right = tree.children_left, tree.children_right
    new_id = rebuilt_node_ids(tree, make_leaf)
    keep = new_id != TREE_LEAF
    becomes_leaf = keep & make_leaf & (left != TREE_LEAF)
    fields = {name: np.array(getattr(tree, name)[keep]) for name in TreeArrays._fields}
    kept_leaf = becomes_leaf[keep]
    internal = (left[keep] != TREE_LEAF) & ~kept_leaf
    fields["children_left"] = np.where(internal, new_id[np.where(internal, left[keep], 0)], TREE_LEAF)
    fields["children_right"] = np.where(internal, new_id[np.where(internal, right[keep], 0)], TREE_LEAF)
    fields["feature"][kept_leaf] = TREE_UNDEFINED
    fields["threshold"][kept_leaf] = TREE_UNDEFINED
    for name in ("missing_go_to_left", "missing_type", "is_categorical", "unknown_category_go_to_left"):
        fields[name][kept_leaf] = 0
    fields["category_left"][kept_leaf] = 0
    fields["category_right"][kept_leaf] = 0
    fields["gain"][kept_leaf] = np.nan
    return TreeArrays(**fields)


def outermost_nodes(tree: TreeArrays, mask: np.ndarray) -> np.ndarray:
    """Ids of the nodes flagged in ``mask`` that no other flagged node is
    above: the nodes that become leaves when all flagged nodes collapse."""
    mask = np.asarray(mask, dtype=bool)
    return np.flatnonzero(mask & ~under_flagged(tree, mask))


def collapse(ensemble: Ensemble, nodes) -> Ensemble:
    """Turn internal nodes into leaves; return a new, compact ensemble.

    Parameters
    ----------
    ensemble : Ensemble
        Left unchanged.
    nodes : dict of {tree index: node ids}
        Internal nodes (ids of ``ensemble``) to collapse. A node inside the
        subtree of another collapsed node is simply dropped with that subtree.

    Each collapsed node outputs its stored ``value``, which the importers
    set to the value the source library would give that node as a leaf;
    counts and covers stay consistent because a node's own counts are the
    sums over its subtree.

    Returns
    -------
    Ensemble
        A new ensemble; export it with ``btt.to_model``.

    Raises
    ------
    NodeError
        A tree index or node id that does not exist, or a leaf.
    ConversionError
        A node whose value as a leaf the model does not store (see
        ``Source.collapse_hint`` for how to import it so that it does).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> ensemble = btt.from_model(model)
    >>> smaller = btt.collapse(ensemble, {0: [1]})  # node 1 of tree 0 becomes a leaf
    >>> ensemble.n_leaves, smaller.n_leaves
    (10, 5)
    >>> type(btt.to_model(smaller)).__name__
    'DecisionTreeClassifier'
    """
    if not isinstance(ensemble, Ensemble):
        raise UnsupportedModelError(f"collapse expects an Ensemble (see btt.from_model), got {type(ensemble).__name__}")
    trees = list(ensemble.trees)
    checked = check_node_map(trees, nodes, leaf_error="is already a leaf; only internal nodes collapse")
    for tree_index, ids in checked.items():
        if ids.size == 0:
            continue
        tree = trees[tree_index]
        unknown = ids[tree.has_leaf_value[ids] == 0]
        if unknown.size:
            # ensembles pickled by version 0.1.0 carry the hint in their payload
            hint = ensemble.source.collapse_hint or ensemble.source.payload.get("collapse_hint", "")
            raise ConversionError(
                f"node {int(unknown[0])} of tree {tree_index} cannot be collapsed: the "
                f"{ensemble.source.library} {ensemble.source.estimator} model does not store the value this "
                f"node would have as a leaf. {hint}".rstrip()
            )
        make_leaf = np.zeros(tree.n_nodes, dtype=bool)
        make_leaf[ids] = True
        trees[tree_index] = rebuild_tree(tree, make_leaf)
    return ensemble.replace_trees(trees)
