"""The points of :func:`bandit_tree_tools.prune`'s path: what a point
records (:class:`_State`) and the ensemble it stands for."""

from dataclasses import dataclass, replace

import numpy as np

from ...tree import Ensemble, node_offsets, outermost_nodes, rebuild_tree


@dataclass(frozen=True)
class _State:
    """A point of the path: which nodes are collapsed (one bit per node, as
    :meth:`of` packs them: a path keeps a state for every point, and a forest
    has millions of nodes), which trees live, the values of every node and
    the intercept."""

    collapsed_bits: np.ndarray
    n_nodes: int
    alive: np.ndarray
    value: np.ndarray
    base_score: np.ndarray

    @classmethod
    def of(cls, collapsed, alive, value, base_score) -> "_State":
        """The state of a boolean mask of collapsed nodes (copied, packed)."""
        return cls(np.packbits(collapsed), collapsed.shape[0], alive, value, base_score)

    @property
    def collapsed(self) -> np.ndarray:
        """Whether each node is collapsed: a new boolean array on every read."""
        return np.unpackbits(self.collapsed_bits, count=self.n_nodes).view(bool)


def build_ensemble(ensemble: Ensemble, state: _State, keep_dead_trees: bool = False) -> Ensemble:
    """The ensemble of a path point: trees rebuilt with their collapsed nodes
    and values, dead trees dropped (or kept as one-leaf trees of value 0
    where a boosting iteration still has live trees, or everywhere with
    ``keep_dead_trees``: for views that pair its trees with the unpruned
    model's by position; a mean over the trees would then count them)."""
    per_iteration = _trees_per_iteration(ensemble)
    offset = node_offsets(ensemble.trees)
    keep_stump = np.zeros(ensemble.n_trees, dtype=bool)
    if keep_dead_trees:
        keep_stump[:] = True
    elif ensemble.aggregation == "sum" and per_iteration > 1:
        groups = state.alive.reshape(-1, per_iteration)
        keep_stump = (~groups & groups.any(axis=1, keepdims=True)).ravel()
    trees, kept, collapsed = [], [], state.collapsed
    for index, tree in enumerate(ensemble.trees):
        values = state.value[offset[index] : offset[index + 1]]
        make_leaf = collapsed[offset[index] : offset[index + 1]]
        if not state.alive[index]:
            if not keep_stump[index]:
                continue
            values = np.zeros_like(values)
            make_leaf = np.zeros_like(make_leaf)
            make_leaf[0] = True
        make_leaf = make_leaf & (tree.children_left != -1)
        # a collapsed node's value is the search's own, also where the library stored none
        known = np.asarray(tree.has_leaf_value) | make_leaf
        trees.append(
            rebuild_tree(tree._replace(value=np.array(values), has_leaf_value=known.astype(np.uint8)), make_leaf)
        )
        kept.append(index)
    base_score = state.base_score.copy()
    if ensemble.aggregation == "sum":
        # Removed trees left their constants in the intercept; move them into the leaves of a kept
        # tree of the same output, so the exported model keeps its own intercept (XGBoost stores it
        # as a rounded probability, scikit-learn in its init estimator).
        outputs = ensemble.tree_output[kept]
        for k in np.flatnonzero(base_score != ensemble.base_score):
            holders = np.flatnonzero(outputs == k)
            if holders.size:
                position = int(holders[0])
                tree = trees[position]
                shift = (base_score[k] - ensemble.base_score[k]) / ensemble.tree_scale[kept[position]]
                trees[position] = tree._replace(value=np.asarray(tree.value) + shift)
                base_score[k] = ensemble.base_score[k]
    return replace(
        ensemble,
        trees=tuple(trees),
        tree_output=ensemble.tree_output[kept],
        tree_scale=ensemble.tree_scale[kept],
        base_score=base_score,
    )


def pruned_nodes(ensemble: Ensemble, state: _State) -> dict:
    """{tree: original node ids that became leaves}; a removed tree lists its root."""
    offset, collapsed = node_offsets(ensemble.trees), state.collapsed
    out = {}
    for index, tree in enumerate(ensemble.trees):
        if not state.alive[index]:
            out[index] = np.zeros(1, dtype=np.int64)
            continue
        mask = collapsed[offset[index] : offset[index + 1]]
        if mask.any():
            out[index] = outermost_nodes(tree, mask)
    return out


def _trees_per_iteration(ensemble: Ensemble) -> int:
    """Trees per boosting iteration, which the libraries export whole (see
    ``interop.trees_per_iteration``)."""
    from ...interop import trees_per_iteration

    return trees_per_iteration(ensemble)
