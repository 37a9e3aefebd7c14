"""Incremental evaluation of collapsed nodes on validation rows, shared by
bandit, cost-complexity and reduced-error pruning.

Node ids are always those of the ensemble given at construction: collapsing
is recorded in a per-tree mask and applied to the validation rows'
predictions, never by rebuilding trees, so arms keep their ids throughout.
"""

import numpy as np

from ..tree import Ensemble, node_depth, outermost_nodes
from ..tree._edit import rebuilt_node_ids
from ..tree._ensemble import LABEL_RULE_CODES
from ..tree._links import kernel_link
from . import _kernels
from ._inputs import Target

WEIGHT_NAMES = ("accuracy", "f1", "log_loss")


class IncrementalEvaluator:
    """Validation rows routed once, with O(rows under node) pulls and commits.

    Parameters
    ----------
    ensemble : Ensemble
    X : array of shape (n_rows, n_features)
        Validated here, unless ``check_input=False`` says it comes from
        ``ensemble.check_X`` already.
    target : Target
    weights : (accuracy, F1, log-loss) weights of the score (classification)
    check_input : bool, default True
    """

    def __init__(self, ensemble: Ensemble, X, target: Target, weights=(1.0, 2.5, 1.0), *, check_input: bool = True):
        self.ensemble = ensemble
        self.target = target
        self.weights = tuple(float(w) for w in weights)
        packed = ensemble.packed
        self.node_offset = packed.node_offset
        self.value = packed.value
        self.link = kernel_link(ensemble.link)
        self.link_scale = float(ensemble.link_scale)
        self.float32 = bool(ensemble.accumulate_float32)  # links in float32 where the model computes so
        self.label_rule = LABEL_RULE_CODES[ensemble.label_rule]
        divisor = ensemble.n_trees if ensemble.aggregation == "mean" else 1
        self.factor = ensemble.tree_scale / divisor
        # (n_rows, n_trees): the rows are routed here once; every later score, and the
        # pruned model's reported metrics (finish), start from these leaves
        leaves = ensemble.apply(X, check_input=check_input)
        self.n_rows = leaves.shape[0]
        self.all_rows = np.arange(self.n_rows, dtype=np.int64)
        self.raw = np.ascontiguousarray(ensemble._raw_from_leaves(leaves), dtype=np.float64)
        self.initial_raw = self.raw.copy()  # the unpruned model's raw scores, bit for bit its predict_raw
        self.current_node = np.ascontiguousarray(leaves.T)  # (n_trees, n_rows), local ids
        self.row_order = np.empty_like(self.current_node)
        self.preorder, self.preorder_end, self.row_start, self.row_stop = [], [], [], []
        for tree_index, tree in enumerate(ensemble.trees):
            position, end = _kernels._preorder(tree.children_left, tree.children_right)
            leaf_position = position[leaves[:, tree_index]]
            order = np.argsort(leaf_position, kind="stable")
            sorted_position = leaf_position[order]
            self.row_order[tree_index] = order
            self.preorder.append(position)
            self.preorder_end.append(end)
            self.row_start.append(np.searchsorted(sorted_position, position, side="left"))
            self.row_stop.append(np.searchsorted(sorted_position, end, side="left"))
        self.collapsed = [np.zeros(tree.n_nodes, dtype=np.bool_) for tree in ensemble.trees]
        self.depths = [node_depth(tree) for tree in ensemble.trees]
        self.prediction = np.empty(self.n_rows, dtype=np.int64)
        self.loss = np.empty(self.n_rows, dtype=np.float64)
        # the kernels' views of the same arrays (updated in place: snapshots restore into them)
        self.scores = _kernels.RowScores(self.raw, self.prediction, self.loss)
        self.rule = _kernels.RowRule(
            target.codes,
            target.values,
            self.link,
            self.link_scale,
            self.float32,
            self.label_rule,
            int(target.n_classes),
        )
        self._refresh(self.all_rows)
        self.in_subset = np.zeros(self.n_rows, dtype=np.bool_)

    # ----------------------------------------------------------------- basics
    def _refresh(self, rows):
        _kernels._row_outputs(rows, self.scores, self.rule)

    def rows_under(self, tree: int, node: int) -> np.ndarray:
        return self.row_order[tree, self.row_start[tree][node] : self.row_stop[tree][node]]

    def stats(self, rows) -> np.ndarray:
        return _kernels._subset_stats(rows, self.prediction, self.loss, self.target.codes, self.target.n_classes)

    def score_stats(self, stats) -> float:
        t = self.target
        a, g, b = self.weights
        return _kernels._score(stats, a, g, b, t.n_classes, t.positive, t.variance)

    def score(self, rows=None) -> float:
        return self.score_stats(self.stats(self.all_rows if rows is None else rows))

    # ------------------------------------------------------------ pull/commit
    def pulled_stats(self, tree: int, node: int, base_stats: np.ndarray, in_subset: np.ndarray) -> np.ndarray:
        """Statistics of the rows flagged in ``in_subset`` (whose current
        statistics are ``base_stats``) if ``node`` of ``tree`` were a leaf."""
        t = self.target
        return _kernels._pull_stats(
            base_stats,
            self.rows_under(tree, node),
            in_subset,
            self.current_node[tree],
            self.node_offset[tree],
            self.value,
            node,
            self.factor[tree],
            self.ensemble.tree_output[tree],
            self.raw,
            self.prediction,
            self.loss,
            t.codes,
            t.values,
            self.link,
            self.link_scale,
            self.float32,
            self.label_rule,
            t.n_classes,
        )

    def full_mask(self) -> np.ndarray:
        return np.ones(self.n_rows, dtype=np.bool_)

    def commit(self, tree: int, node: int) -> None:
        """Collapse ``node`` of ``tree`` for good (in this evaluator)."""
        rows = self.rows_under(tree, node)
        _kernels._commit(
            rows,
            self.current_node[tree],
            self.node_offset[tree],
            self.value,
            node,
            self.factor[tree],
            self.ensemble.tree_output[tree],
            self.raw,
        )
        self._refresh(rows)
        self.collapsed[tree][node] = True

    def snapshot(self):
        return (
            self.raw.copy(),
            self.current_node.copy(),
            self.prediction.copy(),
            self.loss.copy(),
            [mask.copy() for mask in self.collapsed],
        )

    def restore(self, snapshot) -> None:
        raw, current, prediction, loss, collapsed = snapshot
        self.raw[...] = raw
        self.current_node[...] = current
        self.prediction[...] = prediction
        self.loss[...] = loss
        self.collapsed = [mask.copy() for mask in collapsed]

    # ---------------------------------------------------------------- arms
    def arms(self, candidates: str = "twigs", min_depth: int = 0):
        """Current arms: (tree, node, depth) arrays, plus the number of nodes
        left out because the model does not store their collapsed value."""
        trees, nodes, depths, excluded = [], [], [], 0
        for index, tree in enumerate(self.ensemble.trees):
            mask = _kernels._arm_mask(
                tree.children_left, tree.children_right, self.collapsed[index], candidates == "twigs"
            )
            mask &= self.depths[index] >= min_depth
            excluded += int(np.count_nonzero(mask & (tree.has_leaf_value == 0)))
            mask &= tree.has_leaf_value == 1
            found = np.flatnonzero(mask)
            trees.append(np.full(found.size, index, dtype=np.int64))
            nodes.append(found.astype(np.int64))
            depths.append(self.depths[index][found])
        return np.concatenate(trees), np.concatenate(nodes), np.concatenate(depths), excluded

    def collapsed_nodes(self) -> dict:
        """{tree: sorted node ids} of the outermost collapsed nodes."""
        out = {}
        for index, tree in enumerate(self.ensemble.trees):
            mask = self.collapsed[index]
            if not mask.any():
                continue
            outer = outermost_nodes(tree, mask)
            if outer.size:
                out[index] = outer
        return out

    def pruned_leaves(self, pruned_nodes: dict) -> np.ndarray:
        """Leaf of every validation row (n_rows, n_trees) in the ids of
        ``collapse(ensemble, pruned_nodes)``, where ``pruned_nodes`` is
        :meth:`collapsed_nodes`: the rows are not routed again."""
        leaves = np.empty((self.n_rows, self.ensemble.n_trees), dtype=np.int64)
        for index, tree in enumerate(self.ensemble.trees):
            current = self.current_node[index]
            if index in pruned_nodes:
                make_leaf = np.zeros(tree.n_nodes, dtype=bool)
                make_leaf[pruned_nodes[index]] = True
                current = rebuilt_node_ids(tree, make_leaf)[current]
            leaves[:, index] = current
        return leaves
