"""What the tree view sends to the browser, computed with numpy only.

Tree arrays travel as little-endian binary buffers (``bytes``), one per
column: ipywidgets sends ``bytes`` values as binary message parts, which is
what keeps a 100,000-node tree fast to send (JSON lists are 5-10x slower to
encode and to parse). This module never imports ipywidgets, so it can be
tested and reused without a notebook.
"""

from __future__ import annotations

import numpy as np

from ..tree import TREE_LEAF, Ensemble, TreeArrays

# Per-node marks drawn by the tree view (see ``diff_marks``).
MARK_NONE = 0
MARK_PRUNED = 1  # an internal node that the edited tree turned into a leaf
MARK_REMOVED = 2  # a node below a pruned node: gone from the edited tree
MARK_RESPLIT = 3  # a node whose split the edited tree changed
MARK_CHANGED = 4  # a node below a re-split node: replaced in the edited tree

MARK_NAMES = {
    MARK_NONE: "unchanged",
    MARK_PRUNED: "pruned (now a leaf)",
    MARK_REMOVED: "removed with a pruned ancestor",
    MARK_RESPLIT: "re-split",
    MARK_CHANGED: "replaced below a re-split node",
}


def column(array, dtype) -> bytes:
    """One column as little-endian bytes of ``dtype``."""
    return np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def value_kind(ensemble: Ensemble) -> str:
    """How to read a node's ``value`` row: class fractions, a margin, or a mean."""
    if ensemble.task == "classification" and ensemble.link == "identity":
        return "fractions"
    if ensemble.task == "classification" or ensemble.link != "identity":
        return "margin"
    return "mean"


def tree_payload(
    tree: TreeArrays,
    *,
    marks: np.ndarray | None = None,
    data_count: np.ndarray | None = None,
    data_target: np.ndarray | None = None,
    histograms: dict | None = None,
) -> dict:
    """The columns of one tree as a dict of scalars and ``bytes``.

    Thresholds stay float64 so that a split reads exactly as the model stores
    it; every other float column is float32 (enough to read and to colour).
    ``data_count`` (rows of the user's X at each node) and ``data_target``
    (class fractions or mean of the user's y at each node, ``(n, width)``)
    are optional; so are the split nodes' ``histograms``
    (:func:`split_histograms`).
    """
    n = tree.n_nodes
    width = tree.value.shape[1]
    payload = {
        "n_nodes": n,
        "n_values": width,
        "children_left": column(tree.children_left, np.int32),
        "children_right": column(tree.children_right, np.int32),
        "feature": column(tree.feature, np.int32),
        "threshold": column(tree.threshold, np.float64),
        "is_categorical": column(tree.is_categorical, np.uint8),
        "value": column(tree.value, np.float32),
        "n_node_samples": column(tree.n_node_samples, np.float32),
        "weighted_n_node_samples": column(tree.weighted_n_node_samples, np.float32),
        "impurity": column(tree.impurity, np.float32),
        "depth": column(depths(tree), np.int32),
        "marks": column(np.zeros(n) if marks is None else marks, np.uint8),
        # categorical splits: bitset of the categories that go left
        "n_words": int(tree.category_left.shape[1]),
        "category_left": column(tree.category_left, np.uint32),
        "data_width": 0,
    }
    if data_count is not None:
        payload["data_count"] = column(data_count, np.float32)
    if data_target is not None:
        data_target = np.asarray(data_target, dtype=np.float64).reshape(n, -1)
        payload["data_target"] = column(data_target, np.float32)
        payload["data_width"] = int(data_target.shape[1])
    if histograms:
        payload.update(histograms)
    return payload


def depths(tree: TreeArrays) -> np.ndarray:
    """Depth of every node, one numpy step per level (fast on big trees)."""
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    frontier = np.array([0], dtype=np.int64)
    level = 0
    while frontier.size:
        depth[frontier] = level
        frontier = frontier[tree.children_left[frontier] != TREE_LEAF]
        frontier = np.concatenate([tree.children_left[frontier], tree.children_right[frontier]])
        level += 1
    return depth


def decode_column(payload: dict, name: str, dtype, width: int = 1) -> np.ndarray:
    """Inverse of :func:`column` for one payload entry (used by tests and the
    static fallback)."""
    array = np.frombuffer(payload[name], dtype=np.dtype(dtype).newbyteorder("<"))
    return array.reshape(-1, width) if width > 1 else array


def _changed_pairs(before: TreeArrays, after: TreeArrays, atol: float = 0.0):
    """Walk both trees together from the root, pairing nodes by position, and
    yield ``(old, new, mark)`` for each pair where ``after`` changed the tree:
    ``MARK_PRUNED`` (a leaf where ``before`` splits) or ``MARK_RESPLIT``
    (another feature, threshold beyond ``atol`` or category set, or a split
    grown from a leaf). The walk stops at a changed pair."""
    stack = [(0, 0)]
    while stack:
        old, new = stack.pop()
        old_leaf = before.children_left[old] == TREE_LEAF
        new_leaf = after.children_left[new] == TREE_LEAF
        if old_leaf and new_leaf:
            continue
        if new_leaf:
            yield old, new, MARK_PRUNED
            continue
        if old_leaf or not _same_split(before, old, after, new, atol):
            yield old, new, MARK_RESPLIT
            continue
        stack.append((int(before.children_left[old]), int(after.children_left[new])))
        stack.append((int(before.children_right[old]), int(after.children_right[new])))


def _same_split(before: TreeArrays, old: int, after: TreeArrays, new: int, atol: float) -> bool:
    if before.feature[old] != after.feature[new] or before.is_categorical[old] != after.is_categorical[new]:
        return False
    if before.is_categorical[old]:
        return np.array_equal(before.category_left[old], after.category_left[new])
    threshold, other = before.threshold[old], after.threshold[new]
    return bool(threshold == other or abs(threshold - other) <= atol)


def diff_marks(before: TreeArrays, after: TreeArrays, *, atol: float = 0.0) -> np.ndarray:
    """Mark the nodes of ``before`` that ``after`` changed.

    Both trees are walked together from the root. Where ``before`` has an
    internal node and ``after`` a leaf, the node was pruned (its descendants
    are removed). Where both split but on another feature or threshold (or
    ``after`` grew a leaf into a split), the node was re-split and everything
    below it is replaced. Node ids of the two trees need not agree: edits
    renumber nodes, so the walk pairs them by position.
    """
    marks = np.zeros(before.n_nodes, dtype=np.uint8)
    for old, _, mark in _changed_pairs(before, after, atol):
        marks[old] = mark
        if mark == MARK_PRUNED:
            _mark_below(before, old, MARK_REMOVED, marks)
        elif before.children_left[old] != TREE_LEAF:
            _mark_below(before, old, MARK_CHANGED, marks)
    return marks


def after_marks(before: TreeArrays, after: TreeArrays):
    """Marks for the nodes of the edited tree ``after``, and the node of
    ``before`` each re-split node replaced (``{after_node: before_node}``).

    The walk pairs nodes by position as :func:`diff_marks` does: a leaf of
    ``after`` where ``before`` split is marked pruned; a split that differs
    (or grew from a leaf) is marked re-split; the nodes below it are new and
    carry no mark.
    """
    marks = np.zeros(after.n_nodes, dtype=np.uint8)
    previous = {}
    for old, new, mark in _changed_pairs(before, after):
        marks[new] = mark
        if mark == MARK_RESPLIT:
            previous[int(new)] = int(old)
    return marks, previous


def split_histogram(
    tree: TreeArrays,
    node: int,
    X: np.ndarray,
    rows: np.ndarray,
    *,
    y=None,
    classes=None,
    row: int = -1,
    bins: int | None = None,
    left=None,
) -> dict:
    """The split feature of ``node`` for the rows of ``X`` that reach it
    (``rows``): bin edges and counts stacked by class of ``y`` (one series
    without ``y``; a density when ``y`` is numeric and ``classes`` None), the
    threshold, and the value of ``X[row]`` (``row`` >= 0). Rows whose value
    is NaN or infinite are not drawn: ``missing`` counts them, and with
    ``left`` (the rows that reach the left child) ``missing_left`` those of
    them that go left. At a categorical node: ``categories`` (ascending
    ``int(x)``) and their counts instead of bins (``edges`` None)."""
    feature = int(tree.feature[node])
    values = np.asarray(X[rows, feature], dtype=np.float64)
    finite = np.isfinite(values)
    histogram = {
        "node": int(node),
        "feature": feature,
        "n_rows": int(rows.size),
        "threshold": None if tree.is_categorical[node] else float(tree.threshold[node]),
        "row": int(row),
        "row_value": None,
        "missing": int(rows.size - finite.sum()),
    }
    if left is not None:
        histogram["missing_left"] = int(np.isin(rows[~finite], left).sum())
    if 0 <= row < X.shape[0]:
        value = float(X[row, feature])
        histogram["row_value"] = value if np.isfinite(value) else None
    if not finite.any():
        return {**histogram, "edges": [0.0, 1.0], "counts": [[0]], "kind": "rows"}
    values = values[finite]
    if tree.is_categorical[node]:
        return {**histogram, **_category_histogram(values, np.asarray(rows)[finite], y, classes)}
    n_bins = bins or int(np.clip(np.sqrt(values.size), 4, 24))
    low, high = float(values.min()), float(values.max())
    if histogram["threshold"] is not None:
        low, high = min(low, histogram["threshold"]), max(high, histogram["threshold"])
    edges = np.histogram_bin_edges(values, bins=n_bins, range=(low, high) if high > low else (low - 0.5, low + 0.5))
    if y is not None and classes is not None:
        labels = np.asarray(y)[rows][finite]
        counts = [np.histogram(values[labels == label], edges)[0].tolist() for label in classes]
        kind = "classes"
    elif y is not None:
        counts = [np.histogram(values, edges, density=True)[0].tolist()]
        kind = "density"
    else:
        counts = [np.histogram(values, edges)[0].tolist()]
        kind = "rows"
    return {**histogram, "edges": edges.tolist(), "counts": counts, "kind": kind}


def _category_histogram(values, rows, y, classes) -> dict:
    """Counts per category (``int(x)``) of a categorical node's rows, per
    class of ``y`` (``classes`` given), else of rows (or their share when
    ``y`` is numeric)."""
    category = np.trunc(values)
    categories, index = np.unique(category, return_inverse=True)
    if y is not None and classes is not None:
        labels = np.asarray(y)[rows]
        counts = [np.bincount(index[labels == label], minlength=categories.size).tolist() for label in classes]
        kind = "classes"
    elif y is not None:
        counts = [(np.bincount(index, minlength=categories.size) / max(1, values.size)).tolist()]
        kind = "density"
    else:
        counts = [np.bincount(index, minlength=categories.size).tolist()]
        kind = "rows"
    return {"edges": None, "categories": categories.tolist(), "counts": counts, "kind": kind}


# The split nodes' pictures: a histogram of the split feature per split
# node, sent with the tree only when the tree has at most this many split
# nodes (so a big tree's payload stays small and fast; its details pane
# still plots the selected node's histogram on demand).
HISTOGRAM_BINS = 16
HISTOGRAM_MAX_SPLITS = 4096


def split_histograms(
    tree: TreeArrays,
    at_node,
    X: np.ndarray,
    *,
    y=None,
    classes=None,
    bins: int = HISTOGRAM_BINS,
) -> dict:
    """Every split node's histogram of its split feature over the rows of
    ``X`` that reach it, as payload columns.

    ``at_node`` is the rows x nodes indicator of this tree (scipy CSC, as
    ``decision_path`` gives). Split node ``k`` (in node order) takes bins
    ``[k * bins, (k + 1) * bins)`` of ``hist_counts`` (uint32, ``(splits,
    bins, series)``): per class of ``y`` (``classes`` given), else one
    series of rows. Its bins split ``[hist_low[k], hist_high[k]]`` (float64)
    evenly; that range spans the node's finite values and its threshold.
    Rows with a missing (non-finite) value are counted in ``hist_missing``,
    so counts plus missing sum to the rows reaching the node. With a
    numeric ``y`` (regression), ``hist_target`` holds the mean of ``y`` per
    bin (float32, NaN where empty) and ``hist_target_low/high`` its range.
    ``hist_index`` maps each node to its split number (-1 at leaves).

    Categorical split nodes (a category set sends rows left, as LightGBM's,
    HistGradientBoosting's and TSDT's multiway splits do) have no bins of
    numbers: their ``hist_counts`` bins stay empty and their rows are counted
    per category instead (:func:`category_counts`, the ``hist_cat_*``
    columns), so that the picture draws one bar per category.
    """
    at_node = at_node.tocsc()
    n_nodes = tree.n_nodes
    split = np.flatnonzero(tree.children_left != TREE_LEAF)
    index = np.full(n_nodes, -1, dtype=np.int64)
    index[split] = np.arange(split.size)
    series = len(classes) if classes is not None else 1
    # one entry per (row, split node it reaches); CSC keeps each node's rows together
    per_node = np.diff(at_node.indptr)[:n_nodes]
    entry_node = np.repeat(np.arange(n_nodes), per_node)
    entry_row = at_node.indices[: entry_node.size]
    keep = index[entry_node] >= 0
    entry_node, entry_row = entry_node[keep], entry_row[keep]
    entry_split = index[entry_node]
    values = np.asarray(X, dtype=np.float64)[entry_row, tree.feature[entry_node]]
    finite = np.isfinite(values)
    missing = np.bincount(entry_split[~finite], minlength=split.size)
    low = np.full(split.size, np.inf)
    high = np.full(split.size, -np.inf)
    np.minimum.at(low, entry_split[finite], values[finite])
    np.maximum.at(high, entry_split[finite], values[finite])
    threshold = np.where(tree.is_categorical[split], np.nan, tree.threshold[split])
    has_threshold = np.isfinite(threshold)
    low = np.where(has_threshold, np.fmin(low, threshold), low)
    high = np.where(has_threshold, np.fmax(high, threshold), high)
    empty = ~np.isfinite(low)  # no finite value and no threshold
    low[empty], high[empty] = 0.0, 1.0
    flat = high <= low
    low[flat], high[flat] = low[flat] - 0.5, high[flat] + 0.5
    entry_split, values = entry_split[finite], values[finite]
    entry_row = entry_row[finite]
    categorical = tree.is_categorical[split][entry_split].astype(bool)
    category_columns = category_counts(
        entry_split[categorical], values[categorical], entry_row[categorical], split.size, y=y, classes=classes
    )
    entry_split, values, entry_row = entry_split[~categorical], values[~categorical], entry_row[~categorical]
    span = (high - low)[entry_split]
    position = np.clip(((values - low[entry_split]) / span * bins).astype(np.int64), 0, bins - 1)
    cell = entry_split * bins + position
    if classes is not None:
        labels = np.asarray(y)[entry_row]
        classes = np.asarray(classes)
        sorter = np.argsort(classes)
        label_index = sorter[np.searchsorted(classes, labels, sorter=sorter)]
        counts = np.bincount(cell * series + label_index, minlength=split.size * bins * series)
    else:
        counts = np.bincount(cell, minlength=split.size * bins)
    columns = {
        "hist_bins": int(bins),
        "hist_series": int(series),
        "hist_index": column(index, np.int32),
        "hist_low": column(low, np.float64),
        "hist_high": column(high, np.float64),
        "hist_counts": column(counts, np.uint32),
        "hist_missing": column(missing, np.uint32),
    }
    if y is not None and classes is None:
        target = np.asarray(y, dtype=np.float64)
        sums = np.bincount(cell, weights=target[entry_row], minlength=split.size * bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / np.bincount(cell, minlength=split.size * bins)
        columns["hist_target"] = column(means, np.float32)
        columns["hist_target_low"] = float(np.nanmin(target)) if target.size else 0.0
        columns["hist_target_high"] = float(np.nanmax(target)) if target.size else 1.0
    columns.update(category_columns)
    return columns


# A categorical split node's picture draws at most this many categories (those
# with the most rows); the rows of the others are counted in hist_cat_other.
HISTOGRAM_MAX_CATEGORIES = 64


def category_counts(entry_split, values, entry_row, n_splits: int, *, y=None, classes=None) -> dict:
    """The rows reaching categorical split nodes, counted per category, as
    the ``hist_cat_*`` payload columns of :func:`split_histograms`.

    ``entry_split``, ``values`` and ``entry_row`` list one (split number,
    finite value of its feature, row) triple per row reaching a categorical
    split node. A value's category is ``int(value)`` truncated toward zero,
    as the common format routes it. Split ``k`` draws the categories
    ``hist_cat_value[hist_cat_start[k]:hist_cat_start[k + 1]]`` (ascending,
    float64; none for numeric splits), with ``hist_cat_counts`` (uint32,
    ``(categories, series)``) rows of each per class of ``y`` (``classes``
    given), else one series of rows. At most
    ``HISTOGRAM_MAX_CATEGORIES`` categories per node, those with the most
    rows: the rows of the others are counted in ``hist_cat_other``, so a
    categorical node's counts plus its other plus its missing rows are the
    rows reaching it. With a numeric ``y``, ``hist_cat_target`` is the mean
    of ``y`` per category (float32).
    """
    series = len(classes) if classes is not None else 1
    category = np.trunc(np.asarray(values, dtype=np.float64))
    pairs, inverse = np.unique(np.stack([entry_split.astype(np.float64), category]), axis=1, return_inverse=True)
    inverse = inverse.ravel()
    pair_split = pairs[0].astype(np.int64)
    pair_rows = np.bincount(inverse, minlength=pairs.shape[1])
    if classes is not None:
        classes = np.asarray(classes)
        sorter = np.argsort(classes)
        labels = np.asarray(y)[entry_row]
        label_index = sorter[np.searchsorted(classes, labels, sorter=sorter)]
        counts = np.bincount(inverse * series + label_index, minlength=pairs.shape[1] * series)
    else:
        counts = np.bincount(inverse, minlength=pairs.shape[1])
    counts = counts.reshape(-1, series)
    # per split, the categories with the most rows (ties: the smaller code)
    rank_order = np.lexsort((pairs[1], -pair_rows, pair_split))
    first = np.searchsorted(pair_split[rank_order], pair_split[rank_order])
    rank = np.empty(pairs.shape[1], dtype=np.int64)
    rank[rank_order] = np.arange(pairs.shape[1]) - first
    kept = rank < HISTOGRAM_MAX_CATEGORIES  # pairs stay sorted by (split, category)
    other = np.bincount(pair_split[~kept], weights=pair_rows[~kept], minlength=n_splits)
    start = np.searchsorted(pair_split[kept], np.arange(n_splits + 1))
    columns = {
        "hist_cat_start": column(start, np.int32),
        "hist_cat_value": column(pairs[1][kept], np.float64),
        "hist_cat_counts": column(counts[kept], np.uint32),
        "hist_cat_other": column(other, np.uint32),
    }
    if y is not None and classes is None:
        sums = np.bincount(inverse, weights=np.asarray(y, dtype=np.float64)[entry_row], minlength=pairs.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            columns["hist_cat_target"] = column((sums / pair_rows)[kept], np.float32)
    return columns


def node_rows(ensemble: Ensemble, tree_index: int, X: np.ndarray):
    """The rows x nodes indicator of one tree (scipy CSC): which rows of
    ``X`` reach each node, by the ensemble's own routing."""
    indicator, offsets = ensemble.decision_path(X)
    start, stop = int(offsets[tree_index]), int(offsets[tree_index + 1])
    return indicator[:, start:stop].tocsc()


def _mark_below(tree: TreeArrays, node: int, mark: int, marks: np.ndarray) -> None:
    stack = [int(tree.children_left[node]), int(tree.children_right[node])]
    while stack:
        current = stack.pop()
        if current == TREE_LEAF:
            continue
        marks[current] = mark
        stack.append(int(tree.children_left[current]))
        stack.append(int(tree.children_right[current]))


def marks_from_collapsed(tree: TreeArrays, collapsed_nodes) -> np.ndarray:
    """Marks for a tree when the collapsed node ids are known (no second tree)."""
    marks = np.zeros(tree.n_nodes, dtype=np.uint8)
    for node in collapsed_nodes:
        node = int(node)
        if tree.children_left[node] == TREE_LEAF or marks[node] == MARK_REMOVED:
            continue
        marks[node] = MARK_PRUNED
        _mark_below(tree, node, MARK_REMOVED, marks)
    return marks


def node_data_summary(ensemble: Ensemble, tree_index: int, X: np.ndarray, y=None, *, at_node=None):
    """Rows of ``X`` at every node of one tree, and the class fractions (or
    mean) of ``y`` there. Uses the ensemble's own routing (decision_path),
    or ``at_node`` (:func:`node_rows`) when the caller has it."""
    at_node = node_rows(ensemble, tree_index, X) if at_node is None else at_node
    count = np.asarray(at_node.sum(axis=0), dtype=np.float64).ravel()
    if y is None:
        return count, None
    y = np.asarray(y)
    if ensemble.task == "classification":
        classes = np.asarray(ensemble.classes_)
        onehot = (y.reshape(-1, 1) == classes.reshape(1, -1)).astype(np.float64)
        totals = np.asarray(at_node.T @ onehot)
    else:
        totals = np.asarray(at_node.T @ y.astype(np.float64).reshape(-1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        target = totals / count.reshape(-1, 1)
    target[count == 0] = np.nan
    return count, target


def row_path(ensemble: Ensemble, tree_index: int, row: np.ndarray) -> list[int]:
    """Node ids (local to the tree) that one row visits, root first."""
    indicator, offsets = ensemble.decision_path(np.asarray(row).reshape(1, -1))
    start, stop = int(offsets[tree_index]), int(offsets[tree_index + 1])
    nodes = indicator.indices[(indicator.indices >= start) & (indicator.indices < stop)] - start
    return sorted(int(node) for node in nodes)


def tree_contributions(ensemble: Ensemble, row: np.ndarray) -> tuple[np.ndarray, int]:
    """What each tree adds to one row's raw score, in the raw column that
    decides the prediction (the largest one; column 0 for one output).
    Returns the contributions and that column."""
    row = np.asarray(row).reshape(1, -1)
    raw = ensemble.predict_raw(row)[0]
    target = int(np.argmax(raw)) if raw.shape[0] > 1 else 0
    leaves = ensemble.apply(row)[0]
    contribution = np.zeros(ensemble.n_trees, dtype=np.float64)
    for index, (tree, leaf) in enumerate(zip(ensemble.trees, leaves)):
        position = target - int(ensemble.tree_output[index])
        if 0 <= position < tree.value.shape[1]:
            contribution[index] = ensemble.tree_scale[index] * tree.value[int(leaf), position]
    if ensemble.aggregation == "mean":
        contribution /= ensemble.n_trees
    return contribution, target


def tree_overview(ensemble: Ensemble) -> dict:
    """Per-tree numbers for the ensemble overview bars."""
    return {
        "leaves": [int(tree.n_leaves) for tree in ensemble.trees],
        "depth": [int(tree.max_depth) for tree in ensemble.trees],
        "nodes": [int(tree.n_nodes) for tree in ensemble.trees],
    }
