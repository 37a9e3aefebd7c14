"""Re-splitting: re-learn the splits of chosen nodes of an existing tree or
random forest on (new, larger) data and regrow the subtrees below them."""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._html import html_view
from .._plotting import axes_for
from .._validation import Interval, Options, check_random_state, seed_from, validate_params
from ..exceptions import DataError, NodeError, ParameterError, UnsupportedModelError
from ..tree import TREE_LEAF, Ensemble, TreeArrays, check_node_map, class_codes, node_depth, one_per_row
from ..tree._impurity import impurity_of_counts
from ._builder import BINS, GrowthSettings, grow_tree
from ._inputs import check_target_range, refuse_infinite, refuse_non_finite_targets
from ._params import SEARCH_CONSTRAINTS

REPORT_FIELDS = (
    "tree",
    "node",
    "regrown_from",
    "n_rows",
    "old_feature",
    "old_threshold",
    "old_reduction",
    "new_feature",
    "new_threshold",
    "new_reduction",
    "n_insertions",
    "rows_used",
)


@dataclass(frozen=True, eq=False)
class ResplitResult:
    """What :func:`resplit` returns.

    Attributes
    ----------
    ensemble : Ensemble
        The new ensemble (the input is unchanged); same source, so
        ``btt.to_model(result.ensemble)`` exports it to the original library.
    report : dict of str -> ndarray
        One entry per selected node: ``tree``, ``node`` (old id),
        ``regrown_from`` (the selected ancestor whose subtree was regrown, the
        node itself for the top ones), ``n_rows`` (rows of X reaching it),
        old and new split (``*_feature`` -1 at a leaf; the new split is the
        one at the same left/right path in the regrown subtree) with their
        impurity reduction on those rows (parent impurity minus weighted
        child impurity), ``n_insertions`` and ``rows_used`` of the new
        split's search.
    n_insertions : int
        Histogram insertions of the whole re-split.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:100], y[:100])
    >>> result = btt.resplit(model, X, y, nodes=[0], random_state=0)
    >>> list(result.to_frame().columns[:4])
    ['tree', 'node', 'regrown_from', 'n_rows']
    >>> int(result.report["n_rows"][0])
    400
    """

    ensemble: Ensemble
    report: dict
    n_insertions: int

    def to_frame(self):
        """``report`` as a DataFrame: one row per selected node."""
        import pandas as pd

        return pd.DataFrame({name: self.report[name] for name in REPORT_FIELDS})

    def __repr__(self) -> str:
        report = self.report
        regrown = int(np.count_nonzero(report["regrown_from"] == report["node"]))
        old = np.nansum(report["old_reduction"] * report["n_rows"])
        new = np.nansum(report["new_reduction"] * report["n_rows"])
        return (
            f"ResplitResult({len(report['node'])} selected nodes, {regrown} subtrees regrown, "
            f"n_insertions={self.n_insertions}, weighted impurity reduction {old:.4g} -> {new:.4g}, "
            f"ensemble={self.ensemble!r})"
        )

    def _repr_html_(self) -> str:
        """Jupyter's view: the repr and the selected nodes' table (the first 50)."""
        return html_view(repr(self), [self.to_frame()], index=False, rows="selected nodes")

    def plot(self, ax=None):
        """Old vs new impurity reduction of every selected node (same rows):
        points above the diagonal gained from the re-split. Colour: whether
        the new split uses the old feature; size: rows at the node. The
        legend sits outside the data.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None makes a new figure.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on (the library's plotting convention).
        """
        figure, (ax,) = axes_for(ax, 1, panel_size=(7.5, 4.5))
        report = self.report
        old, new = report["old_reduction"], report["new_reduction"]
        same = report["old_feature"] == report["new_feature"]
        rows = np.asarray(report["n_rows"], dtype=np.float64)
        sizes = 12 + 60 * np.sqrt(rows / rows.max()) if rows.size and rows.max() > 0 else 12
        for mask, colour, label in ((~same, "#c8453b", "another feature"), (same, "#4e79a7", "same feature")):
            if np.any(mask):
                ax.scatter(
                    old[mask],
                    new[mask],
                    s=np.broadcast_to(sizes, old.shape)[mask],
                    c=colour,
                    alpha=0.75,
                    edgecolors="none",
                    label=f"{label} ({int(np.count_nonzero(mask))})",
                )
        finite = np.concatenate([old[np.isfinite(old)], new[np.isfinite(new)], [0.0]])
        top = float(finite.max()) if finite.size else 1.0
        low = float(min(0.0, finite.min())) if finite.size else 0.0
        ax.plot([low, top], [low, top], color="grey", linewidth=0.8, label="no change")
        ax.set_xlim(low, top * 1.05 or 1.0)
        ax.set_ylim(low, top * 1.05 or 1.0)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("old split: impurity reduction")
        ax.set_ylabel("new split: impurity reduction")
        ax.set_title(f"Re-split nodes ({len(old)}; point size: rows at the node)", fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, frameon=False, fontsize=8)
        return figure


def _check_resplittable(ensemble: Ensemble) -> None:
    source = f"{ensemble.source.library} {ensemble.source.estimator}"
    problems = []
    if ensemble.link != "identity":
        problems.append(f"its link is {ensemble.link!r}")
    if ensemble.n_trees > 1 and ensemble.aggregation != "mean":
        problems.append("it sums its trees")
    if np.any(ensemble.tree_scale != 1.0) or np.any(ensemble.base_score != 0.0):
        problems.append("it scales its trees or adds a base score")
    if ensemble.task == "classification" and ensemble.trees[0].value.shape[1] != len(ensemble.classes_):
        problems.append("its leaves do not hold one fraction per class")
    if problems:
        raise UnsupportedModelError(
            f"resplit works on single decision trees and random forests, whose leaves hold the class fractions or "
            f"mean target of the rows that reach them; this {source} looks boosted ({', '.join(problems)}). A "
            "boosted tree's leaves are Newton steps on the gradients left by the trees before it, so regrowing one "
            "subtree would need every row's gradient and hessian and would invalidate every later tree. Prune it "
            "with btt.prune instead (it collapses nodes and re-fits the leaves), or fit a "
            "MABSplitForestClassifier/Regressor on the data."
        )


def _select_nodes(ensemble: Ensemble, nodes) -> dict:
    """{tree index: sorted internal node ids}."""
    if nodes is None:
        return {t: np.flatnonzero(tree.children_left != TREE_LEAF) for t, tree in enumerate(ensemble.trees)}
    if not isinstance(nodes, Mapping):
        if ensemble.n_trees != 1:
            raise NodeError(
                f"this ensemble has {ensemble.n_trees} trees; pass nodes as a dict {{tree index: [node ids]}}, "
                "e.g. {0: [0, 3]}"
            )
        nodes = {0: nodes}
    # a single int is one node, as resplit has always accepted
    nodes = {index: [ids] if isinstance(ids, (int, np.integer)) else ids for index, ids in nodes.items()}
    checked = check_node_map(ensemble.trees, nodes, leaf_error="is a leaf; only internal nodes can be re-split")
    return {index: np.unique(ids) for index, ids in checked.items()}


def _encode(ensemble: Ensemble, y, n_rows: int):
    y = one_per_row(y, n_rows, what="target")
    if ensemble.task == "regression":
        if y.dtype.kind not in "biuf":
            raise DataError(f"this is a regression model, but y has dtype {y.dtype}; pass numeric targets")
        refuse_non_finite_targets(y)
        values = y.astype(np.float64)
        check_target_range(values)
        return np.empty(0, dtype=np.int64), values
    codes = class_codes(y, ensemble.classes_, "y")
    return codes, np.empty(0)


def _impurity(y_code, y_value, rows, n_classes, criterion) -> float:
    """Impurity of the rows by the shared definition (:mod:`..tree._impurity`)."""
    if rows.size == 0:
        return 0.0
    if criterion == "squared_error":
        # sums of the centred targets: the variance is then computed without cancellation
        centred = y_value[rows] - y_value[rows].mean()
        sums = np.array([[rows.size, centred.sum(), np.dot(centred, centred)]], dtype=np.float64)
        return float(impurity_of_counts(sums, criterion)[1][0])
    counts = np.bincount(y_code[rows], minlength=n_classes)[None, :]
    return float(impurity_of_counts(counts, criterion)[1][0])


def _reduction(y_code, y_value, parent, left, right, n_classes, criterion) -> float:
    n = parent.size
    if n == 0:
        return np.nan
    return (
        _impurity(y_code, y_value, parent, n_classes, criterion)
        - (
            left.size * _impurity(y_code, y_value, left, n_classes, criterion)
            + right.size * _impurity(y_code, y_value, right, n_classes, criterion)
        )
        / n
    )


def _rows_per_node(indicator, offset: int, n_nodes: int) -> list:
    """Rows reaching every node of one tree, from a CSR decision path."""
    block = indicator[:, offset : offset + n_nodes].tocsc()
    return [block.indices[block.indptr[j] : block.indptr[j + 1]] for j in range(n_nodes)]


def _subtree_height(tree: TreeArrays, node: int) -> int:
    depth = node_depth(tree)
    stack, deepest = [node], depth[node]
    while stack:
        current = stack.pop()
        deepest = max(deepest, depth[current])
        if tree.children_left[current] != TREE_LEAF:
            stack += [int(tree.children_left[current]), int(tree.children_right[current])]
    return int(deepest - depth[node])


def _follow(tree: TreeArrays, node: int, path: list) -> int:
    """Node reached from ``node`` by the left/right moves in ``path`` (-1 if a leaf is hit first)."""
    for go_left in path:
        if tree.children_left[node] == TREE_LEAF:
            return -1
        node = int(tree.children_left[node] if go_left else tree.children_right[node])
    return node


def splice(tree: TreeArrays, replacements: Mapping[int, TreeArrays]) -> TreeArrays:
    """A new tree where the subtree of every key node is replaced by the
    given tree. Nodes are renumbered in pre-order (left first), so children
    keep larger ids than their parents; counts of ancestors are re-summed."""
    sources = [tree] + list(replacements.values())
    root_of = {node: index + 1 for index, node in enumerate(replacements)}
    origin_source, origin_node, new_left, new_right = [], [], [], []
    stack = [(0, 0, -1, False)]
    while stack:
        source, node, parent, is_left = stack.pop()
        if source == 0 and node in root_of:
            source, node = root_of[node], 0
        new_id = len(origin_node)
        origin_source.append(source)
        origin_node.append(node)
        new_left.append(TREE_LEAF)
        new_right.append(TREE_LEAF)
        if parent >= 0:
            (new_left if is_left else new_right)[parent] = new_id
        children = sources[source]
        if children.children_left[node] != TREE_LEAF:
            stack.append((source, int(children.children_right[node]), new_id, False))
            stack.append((source, int(children.children_left[node]), new_id, True))
    origin_source = np.array(origin_source)
    origin_node = np.array(origin_node)
    n_words = tree.category_left.shape[1]
    fields = {}
    for name in TreeArrays._fields:
        first = getattr(tree, name)
        out = np.zeros((origin_node.size,) + first.shape[1:], dtype=first.dtype)
        for index, source in enumerate(sources):
            mask = origin_source == index
            part = getattr(source, name)[origin_node[mask]]
            if name in ("category_left", "category_right") and part.shape[1] != n_words:
                part = np.zeros((part.shape[0], n_words), dtype=np.uint32)
            out[mask] = part
        fields[name] = out
    fields["children_left"] = np.array(new_left, dtype=np.int64)
    fields["children_right"] = np.array(new_right, dtype=np.int64)
    counts = fields["n_node_samples"]
    weights = fields["weighted_n_node_samples"]
    left, right = fields["children_left"], fields["children_right"]
    for node in range(origin_node.size - 1, -1, -1):  # children first
        if left[node] == TREE_LEAF:
            continue
        if counts[node] >= 0 and counts[left[node]] >= 0 and counts[right[node]] >= 0:
            counts[node] = counts[left[node]] + counts[right[node]]
        if np.isfinite(weights[node]) and np.isfinite(weights[left[node]]) and np.isfinite(weights[right[node]]):
            weights[node] = weights[left[node]] + weights[right[node]]
    return TreeArrays(**fields)


RESPLIT_CONSTRAINTS = {
    **SEARCH_CONSTRAINTS,
    "nodes": [None, "array-like"],
    "criterion": [None, str],
    "bins": [Options(set(BINS))],
    "max_depth": [Interval(int, 0, None), None],
}


@validate_params(RESPLIT_CONSTRAINTS, data=("model", "X", "y"))
def resplit(
    model,
    X,
    y,
    *,
    nodes=None,
    max_depth=None,
    solver="mab",
    criterion=None,
    bins="linspace",
    n_bins=11,
    batch_size=1000,
    z=3.0,
    min_samples_leaf=1,
    random_state=None,
) -> ResplitResult:
    """Re-learn the splits of chosen internal nodes on ``X, y`` and regrow
    the subtrees below them.

    Parameters
    ----------
    model : fitted single tree or random forest
        Of any supported library, an :class:`Ensemble`, or a MABSplit
        estimator. Left unchanged. Boosted ensembles are refused.
    X, y : array-like
        The rows to learn from (for example new or more data). Classes
        must be classes of the model.
    nodes : None, list of ids (single tree) or dict {tree index: ids}
        Internal nodes to re-split; None selects every internal node. Nodes
        are processed top-down: a selected node's subtree is replaced by a
        subtree grown with MABSplit on the rows of X reaching the node, so
        selected nodes below it are regrown with it (the report then shows,
        for each of them, the new split at the same left/right path).
    max_depth : int or None
        Depth of each regrown subtree below its node; None keeps the depth of
        the subtree it replaces.
    solver, criterion, bins, n_bins, batch_size, z, min_samples_leaf
        As in the MABSplit estimators (``bins`` may also be ``'random'``);
        criterion defaults to 'gini' (classification) or 'squared_error'
        (regression).
    random_state : None, int, numpy Generator or RandomState

    Returns
    -------
    ResplitResult
        The new ensemble and a report of every selected node.

    Raises
    ------
    UnsupportedModelError
        For boosted models (their leaves are not class fractions or means).
    NodeError
        For node ids that do not exist or are leaves.
    ParameterError, DataError
        For bad parameters, or rows and targets that cannot be used.

    Notes
    -----
    New splits are rounded to the model's input dtype and, for models that
    send ``x < threshold`` left, moved to the next representable value, so
    the exported model routes rows exactly as the splits were learned. NaN in
    ``X`` is a missing value: new nodes send it where their split learned to
    (to the child with more rows where the node's rows had none). Counts of
    the ancestors of regrown nodes are re-summed from their children.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:100], y[:100])
    >>> result = btt.resplit(model, X, y, nodes=[0], random_state=0)
    >>> result.report["node"].tolist(), bool(result.report["new_reduction"][0] >= result.report["old_reduction"][0])
    ([0], True)
    >>> type(btt.to_model(result.ensemble)).__name__
    'DecisionTreeClassifier'
    """
    from ..interop import from_model

    ensemble = from_model(model)
    _check_resplittable(ensemble)
    classification = ensemble.task == "classification"
    if criterion is None:
        criterion = "gini" if classification else "squared_error"
    allowed = ("gini", "entropy") if classification else ("squared_error",)
    if criterion not in allowed:
        raise ParameterError(f"criterion must be one of {allowed} for a {ensemble.task} model, got {criterion!r}")
    X = ensemble.check_X(X)
    refuse_infinite(X, ensemble.feature_names_in_)
    X = np.require(X, X.dtype, ["C", "W"])
    y_code, y_value = _encode(ensemble, y, X.shape[0])
    target = (y_code, y_value, len(ensemble.classes_) if classification else 1, criterion)
    selected = _select_nodes(ensemble, nodes)
    random = check_random_state(random_state)
    indicator, offsets = ensemble.decision_path(X)
    indicator = indicator.tocsr()
    has_missing = bool(np.isnan(X).any())  # once, not once per regrown node

    def settings(depth: int) -> GrowthSettings:
        return GrowthSettings(
            criterion=criterion,
            solver=solver,
            bins=bins,
            n_bins=int(n_bins),
            batch_size=int(batch_size),
            z=float(z),
            max_depth=depth,
            min_samples_leaf=int(min_samples_leaf),
        )

    report = {name: [] for name in REPORT_FIELDS}
    trees = list(ensemble.trees)
    total_insertions = 0
    for tree_index in sorted(selected):
        ids = selected[tree_index]
        if ids.size == 0:
            continue
        tree = trees[tree_index]
        rows_at = _rows_per_node(indicator, int(offsets[tree_index]), tree.n_nodes)
        top_of = _topmost_selected(tree, ids)
        grown_at = {}
        for node in ids.tolist():
            if top_of[node][0] != node:  # regrown with the selected ancestor above it
                continue
            if rows_at[node].size == 0:
                grown_at[node] = None  # no rows reach it: nothing to learn, the old subtree stays
                continue
            depth = _subtree_height(tree, node) if max_depth is None else int(max_depth)
            grown = grow_tree(
                X, rows_at[node], y_code, y_value, target[2], settings(depth), seed_from(random), has_missing
            )
            grown_at[node] = (_routed_as_learned(grown.tree, ensemble.split_rule, X.dtype), grown)
            total_insertions += grown.n_insertions
        for node in ids.tolist():
            _report_node(report, tree_index, tree, node, top_of[node], grown_at, rows_at, target)
        replacements = {node: entry[0] for node, entry in grown_at.items() if entry is not None}
        if replacements:
            trees[tree_index] = splice(tree, replacements)
    dtypes = {"old_threshold": float, "new_threshold": float, "old_reduction": float, "new_reduction": float}
    report = {name: np.array(values, dtype=dtypes.get(name, np.int64)) for name, values in report.items()}
    return ResplitResult(ensemble=ensemble.replace_trees(trees), report=report, n_insertions=int(total_insertions))


def _topmost_selected(tree: TreeArrays, ids: np.ndarray) -> dict:
    """For every selected node: (the topmost selected node at or above it,
    the left (True) / right turns from that ancestor down to it). A selected
    node below another is regrown with it; its report reads the new split at
    the same turns."""
    parent_of = np.full(tree.n_nodes, -1)
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    parent_of[tree.children_left[internal]] = internal
    parent_of[tree.children_right[internal]] = internal
    chosen = set(ids.tolist())
    top_of = {}
    for node in ids.tolist():  # increasing ids: ancestors come first
        ancestor, turns, walker, top_turns = node, [], node, []
        while parent_of[walker] >= 0:
            parent = int(parent_of[walker])
            turns.append(walker == tree.children_left[parent])
            walker = parent
            if walker in chosen and top_of.get(walker, (None,))[0] == walker:
                ancestor, top_turns = walker, turns[::-1]
        top_of[node] = (ancestor, [] if ancestor == node else top_turns)
    return top_of


def _routed_as_learned(new_tree: TreeArrays, split_rule: str, dtype) -> TreeArrays:
    """A model that sends ``x < threshold`` left routes a row on the learned
    threshold (``x <= threshold``) the same way only with the threshold moved
    to the next representable value of its input dtype."""
    if split_rule != "lt":
        return new_tree
    moved = np.nextafter(new_tree.threshold.astype(dtype), np.array(np.inf, dtype=dtype))
    return new_tree._replace(
        threshold=np.where(new_tree.children_left != TREE_LEAF, moved.astype(np.float64), new_tree.threshold)
    )


def _report_node(
    report: dict, tree_index: int, tree: TreeArrays, node: int, top, grown_at: dict, rows_at, target
) -> None:
    """Append one selected node's row to ``report``: its old split and, from
    the subtree regrown at its topmost selected ancestor (``top``: that node
    and the turns down), the new split at the same place (empty where the new
    subtree has a leaf there or nothing was regrown)."""
    y_code, y_value, n_classes, criterion = target
    ancestor, turns = top
    rows = rows_at[node]
    left, right = rows_at[int(tree.children_left[node])], rows_at[int(tree.children_right[node])]
    report["tree"].append(tree_index)
    report["node"].append(node)
    report["regrown_from"].append(ancestor)
    report["n_rows"].append(rows.size)
    report["old_feature"].append(int(tree.feature[node]))
    report["old_threshold"].append(float(tree.threshold[node]))
    report["old_reduction"].append(_reduction(y_code, y_value, rows, left, right, n_classes, criterion))
    entry = grown_at.get(ancestor)
    new_node = -1 if entry is None else _follow(entry[0], 0, turns)
    if new_node < 0 or entry[0].children_left[new_node] == TREE_LEAF:
        for name, empty in (
            ("new_feature", -1),
            ("new_threshold", np.nan),
            ("new_reduction", np.nan),
            ("n_insertions", 0),
            ("rows_used", 0),
        ):
            report[name].append(empty)
        return
    new_tree, grown = entry
    n, impurity = new_tree.n_node_samples, new_tree.impurity
    child_l, child_r = new_tree.children_left[new_node], new_tree.children_right[new_node]
    report["new_feature"].append(int(new_tree.feature[new_node]))
    report["new_threshold"].append(float(new_tree.threshold[new_node]))
    report["new_reduction"].append(
        float(impurity[new_node] - (n[child_l] * impurity[child_l] + n[child_r] * impurity[child_r]) / n[new_node])
    )
    report["n_insertions"].append(int(grown.insertions[new_node]))
    report["rows_used"].append(int(grown.rows_used[new_node]))
