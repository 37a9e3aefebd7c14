"""Numba kernels of :func:`bandit_tree_tools.prune`.

Every tree keeps its original node ids throughout the search (global id =
``offset[tree] + local id``). Rows are routed once to their original leaf;
``current[node]`` is the node that stands for it in the model as pruned so
far (the node itself, or the outermost collapsed ancestor), so a row's
current leaf in a tree is ``current[offset + leaf]`` and every candidate
collapse is an ancestor of it: walking that leaf's parent chain visits each
candidate a row can touch exactly once.

Losses (``loss_kind``), per row, of the raw score ``z`` against the label:

* ``SQUARED``: ``(z - y)**2`` (regression with the identity link);
* ``LOGISTIC``: binary log-loss of ``sigmoid(scale * z)`` against the class
  code (with one sigmoid per class, whether the row is of column ``k``'s
  class), or against the probability in ``targets`` where the code is -1
  (soft labels: the unpruned model's own outputs, or the targets of a
  regression through the sigmoid, which are probabilities);
* ``SOFTMAX``: multiclass log-loss of ``softmax(z)``;
* ``FRACTIONS``: ``-log(clip(z[y]))``, trees that output class fractions;
* ``FRACTION_SQUARES``: ``(1 - z[y])**2``, the same trees by the squared error
  of the true class's fraction: bounded, so that a row every tree gets wrong
  (a noisy label) weighs no more than a row all of them get right;
* ``POISSON``: ``exp(z) - y * z`` (regression with the log link).

``targets`` is float64 (n_rows, width): one column (regression values, or
one soft probability per row), or one per raw column (soft labels of
several classes; class code -1 marks soft labels).

Candidate costs need the loss change of every (row, ancestor) pair; for the
smooth losses (logistic, softmax, Poisson) it is taken to second order from
the row's derivatives, and for the squared loss it is a quadratic already.
So a row's change under any ancestor is a polynomial in how far the
ancestor's value lies from the row's current leaf value, and the rows are
summed into moments per current leaf once (``collapse_costs``).
"""

from typing import NamedTuple

import numba
import numpy as np

from ..._kernels_inline import empty, full, larger, smaller, zeros
from ..._numba_config import helper, kernel
from ..._threads import chunk_size, run_chunks
from .._kernels import LOG_LOSS_EPS

SQUARED, LOGISTIC, SOFTMAX, FRACTIONS, POISSON, FRACTION_SQUARES = 0, 1, 2, 3, 4, 5
EPS = LOG_LOSS_EPS  # probabilities are clipped as every pruning method clips them
RAW_BLOCK = 1024  # rows of one block of raw_scores

# Kernels whose loops are split over threads take the range ``[lo, hi)`` of rows, nodes or trees
# they do first, release the GIL, and are run over chunks of the range by the plain function of
# their name (``_threads.run_chunks``: serial kernels compile two to three times faster than
# ``prange`` ones). Each chunk writes its own rows, nodes or trees' part of the outputs.


class PrunedModel(NamedTuple):
    """The model as pruned so far, as :func:`collapse_costs` reads it."""

    offset: np.ndarray  # int64 (n_trees + 1,): global id of each tree's root, then the number of nodes
    parent: np.ndarray  # int64 (n_nodes,): local id of each node's parent, -1 at a root
    current: np.ndarray  # int64 (n_nodes,): the node standing for each node (itself or a collapsed ancestor)
    value: np.ndarray  # float64 (n_nodes, width): each node's value now
    tree_output: np.ndarray  # int64 (n_trees,): each tree's first raw column
    factor: np.ndarray  # float64 (n_trees,): each tree's scale
    alive: np.ndarray  # bool (n_trees,): the tree is still in the model
    internal: np.ndarray  # bool (n_nodes,): an internal node of a live tree


class RankRows(NamedTuple):
    """The rows whose loss changes :func:`collapse_costs` sums, and what their losses read."""

    leaf: (
        np.ndarray
    )  # int8, int16 or int32 (n_trees, n_rows): original local leaf, -1 where the tree leaves the row out
    row_scale: np.ndarray  # float64 (n_rows,): of raw_scores
    raw: np.ndarray  # float64 (n_rows, n_outputs): the rows' raw scores now
    codes: np.ndarray  # int64 (n_rows,): class codes, -1 for soft labels and regression
    targets: np.ndarray  # float64 (n_rows, 1 or n_outputs): regression values or soft probabilities
    loss_kind: int  # SQUARED, LOGISTIC, SOFTMAX, FRACTIONS, POISSON or FRACTION_SQUARES
    grad: np.ndarray  # float64 (len(rows), n_outputs): the smooth losses' derivatives (of ``gradients``)
    hess: np.ndarray  # float64 (len(rows), n_outputs)


class Costs(NamedTuple):
    """Per node: of :func:`collapse_costs`."""

    change: np.ndarray  # float64 (n_nodes,): sum over the rows of the loss change
    square: np.ndarray  # float64 (n_nodes,): sum of its squares
    reached: np.ndarray  # int64 (n_nodes,): rows below the node


@helper(inline="always")
def _clip(p):
    return smaller(larger(p, EPS), 1.0 - EPS)


@kernel(nogil=True)
def _raw_scores_rows(lo, hi, leaf, first, offset, table, tree_output, factor, alive, base_score, row_scale, raw):
    n_trees = leaf.shape[0]
    width = table.shape[0]
    n_outputs = base_score.shape[0]
    for first_row in range(lo, hi, RAW_BLOCK):
        count = smaller(RAW_BLOCK, hi - first_row)
        acc = empty((n_outputs, count), np.float64)  # per block, as in a prange body
        for k in range(n_outputs):
            acc[k, :] = base_score[k]
        for tree in range(n_trees):
            if not alive[tree]:
                continue
            root, first_column, scale = offset[tree], tree_output[tree], factor[tree]
            for j in range(width):
                column, values = acc[first_column + j], table[j]
                for i in range(count):
                    local = leaf[tree, first_row + i]
                    if local >= 0:
                        column[i] += scale * row_scale[first_row + i] * values[root + local]
        for i in range(count):
            for k in range(n_outputs):
                raw[first_row - first + i, k] = acc[k, i]


def raw_scores(leaf, lo, hi, offset, table, tree_output, factor, alive, base_score, row_scale):
    """``base_score + sum over live trees of factor * row_scale * table[:, root + leaf]``
    for the rows ``lo:hi`` (taken here, not sliced by the caller, so that one
    contiguous signature compiles); ``table``: the current value of every
    node, one row per output column (``table[j, node] = value[current[node], j]``).

    ``leaf`` is int8, int16 or int32 (n_trees, n_rows) of original local leaf
    ids; -1 leaves a row out of a tree (out-of-bag rows: a tree that drew
    the row), and ``row_scale`` turns a forest's mean over its live trees
    into the mean over those that hold the row. Blocks of rows run on
    threads, tree after tree within a block (sums in tree order, from the
    base score). Every node's current value is looked up once, into the
    table, and each block sums into its own small buffer, which reads less
    memory than ``value[current[...]]`` per row into ``raw``."""
    raw = np.empty((hi - lo, base_score.shape[0]), dtype=np.float64)
    run_chunks(
        _raw_scores_rows,
        lo,
        hi,
        chunk_size(hi - lo, RAW_BLOCK),
        leaf,
        lo,
        offset,
        table,
        tree_output,
        factor,
        alive,
        base_score,
        row_scale,
        raw,
    )
    return raw


@kernel(nogil=True)
def _live_trees_rows(lo, hi, leaf, alive, count):
    for row in range(lo, hi):
        for tree in range(leaf.shape[0]):
            if alive[tree] and leaf[tree, row] >= 0:
                count[row] += 1.0


def live_trees_per_row(leaf, alive):
    """Per row: how many live trees hold it (``leaf`` >= 0)."""
    n_rows = leaf.shape[1]
    count = np.zeros(n_rows, dtype=np.float64)
    run_chunks(_live_trees_rows, 0, n_rows, chunk_size(n_rows, 1024), leaf, alive, count)
    return count


@kernel(nogil=True)
def _newton_sums_trees(
    lo, hi, leaf, offset, parent, current, value, tree_output, factor, alive, grad, hess, numerator, hessian
):
    n_rows = leaf.shape[1]
    for tree in range(lo, hi):
        if not alive[tree]:
            continue
        root, end, k, scale = offset[tree], offset[tree + 1], tree_output[tree], factor[tree]
        for row in range(n_rows):  # the rows' hessians, summed at their current leaves
            hessian[current[root + leaf[tree, row]]] += hess[row, k]
        # then each leaf walks up its ancestors once. In node order an internal node is visited
        # before the leaves below it add to it, so a non-zero sum is a leaf's own (hessians are > 0)
        for start in range(root, end):
            h = hessian[start]
            if h == 0.0:
                continue
            a = h * scale * value[start, 0]
            up = parent[start]
            node = up if up < 0 else root + up
            while node >= 0:
                numerator[node] += a
                hessian[node] += h
                up = parent[node]
                node = up if up < 0 else root + up


def newton_sums(leaf, offset, parent, current, value, tree_output, factor, alive, grad, hess):
    """Per internal node, over the rows below it: ``sum(h * c)`` and
    ``sum(h)``, with ``c`` the row's current contribution from the node's
    tree (the rows are summed per current leaf first; the leaves' own entries
    are left as scratch).

    ``numerator / (hessian + lambda)`` is then the constant closest to what
    the subtree outputs now, in the loss's second-order metric: the value a
    collapsed node takes. (The residual is left to the re-fit that follows a
    step: Newton corrections of many nodes at once would add up and
    overshoot.) Trees on threads: each writes its own nodes."""
    n_trees = leaf.shape[0]
    n_nodes = parent.shape[0]
    numerator = np.zeros(n_nodes, dtype=np.float64)
    hessian = np.zeros(n_nodes, dtype=np.float64)
    run_chunks(
        _newton_sums_trees,
        0,
        n_trees,
        chunk_size(n_trees),
        leaf,
        offset,
        parent,
        current,
        value,
        tree_output,
        factor,
        alive,
        grad,
        hess,
        numerator,
        hessian,
    )
    return numerator, hessian


@helper
def _softmax_parts(raw, row):
    top = raw[row, 0]
    for k in range(1, raw.shape[1]):
        top = larger(top, raw[row, k])
    total = 0.0
    for k in range(raw.shape[1]):
        total += np.exp(raw[row, k] - top)
    return top, total


@helper(inline="always")
def _clear_costs(tree, model, out):
    """Zero the costs of a live tree's root and internal nodes: the rows'
    ancestors, the only entries a candidate reads."""
    root, end = model.offset[tree], model.offset[tree + 1]
    out.change[root] = out.square[root] = 0.0
    out.reached[root] = 0
    for node in range(root + 1, end):
        if model.internal[node]:
            out.change[node] = out.square[node] = 0.0
            out.reached[node] = 0


LOG_RATIO_REACH = 0.125  # |w / z - 1| up to which _log_ratio's series is taken (below)
PAIRS = 1024  # (row, ancestor) pairs of one batch of _log_costs_trees


@helper(inline="always")
def _log_ratio(w, z):
    """``log(w / z)`` for ``|w / z - 1| <= LOG_RATIO_REACH``, as ``2 atanh(s)``
    with ``s = (w - z) / (w + z)``: ``|s| <= 1/15``, so seven terms of its
    series reach double precision. Plain arithmetic, so a loop of them is
    vectorised (a loop of ``np.log`` calls its library one value at a
    time), and more accurate than ``log(w) - log(z)`` for ``w`` near ``z``."""
    s = (w - z) / (w + z)  # w - z is exact here
    t = s * s
    series = 1.0 / 11.0 + t / 13.0
    series = 1.0 / 9.0 + t * series
    series = 1.0 / 7.0 + t * series
    series = 1.0 / 5.0 + t * series
    series = 1.0 / 3.0 + t * series
    return 2.0 * s * (1.0 + t * series)


@helper(error_model="numpy")  # Python's check of each divisor would stop the vectorising
def _add_log_changes(n, nodes, moved, before, changes, out, count):
    """Add the loss change ``-log(moved[k] / before[k])`` of the first ``n``
    pairs to their node ``nodes[k]``: first every series, in one vectorised
    loop, then ``np.log`` where the ratio lies past the series' reach;
    ``count``: and one row to ``out.reached``. Not inlined: at its two calls
    it compiled its loops twice, and ran slower."""
    for k in range(n):
        changes[k] = -_log_ratio(moved[k], before[k])
    for k in range(n):
        change = changes[k]
        if abs(moved[k] - before[k]) > LOG_RATIO_REACH * before[k]:
            change = -np.log(moved[k]) + np.log(before[k])
        node = nodes[k]
        out.change[node] += change
        out.square[node] += change * change
        if count:
            out.reached[node] += 1


@kernel(nogil=True)
def _log_costs_trees(lo, hi, rows, model, candidate_value, on, out, count):
    # the log-loss of class fractions: not a polynomial in the value's change, so each row walks up
    # its leaf's ancestors; only the true class's column changes the loss, by
    # -log(clip(z + delta) / clip(z)), summed over batches of (row, ancestor) pairs (_add_log_changes)
    offset, parent, current, value = model.offset, model.parent, model.current, model.value
    width = value.shape[1]
    nodes, moved, before, changes = (
        empty(PAIRS, np.int64),
        empty(PAIRS, np.float64),
        empty(PAIRS, np.float64),
        empty(PAIRS, np.float64),
    )
    for tree in range(lo, hi):  # trees own disjoint node ranges: no two threads write one node
        if not model.alive[tree]:
            continue
        _clear_costs(tree, model, out)
        root, first, scale = offset[tree], model.tree_output[tree], model.factor[tree]
        n_held = 0
        n = np.int64(0)  # pairs in the batch; not a literal 0: numba would compile _add_log_changes for it too
        for index in range(rows.shape[0]):
            row = rows[index]
            local = on.leaf[tree, row]
            if local < 0:
                continue
            n_held += 1
            start = current[root + local]
            row_factor = scale * on.row_scale[row]
            column = on.codes[row] - first
            in_tree = 0 <= column < width
            z = on.raw[row, on.codes[row]] if in_tree else 0.0
            clipped = _clip(z)
            now = value[start, column] if in_tree else 0.0  # the leaf's value, read once for all ancestors
            up = parent[start]
            node = up if up < 0 else root + up
            while node >= 0:
                if not in_tree:  # a class outside the tree's columns: no change, but the row is below
                    if count:
                        out.reached[node] += 1
                else:
                    if n == PAIRS:
                        _add_log_changes(n, nodes, moved, before, changes, out, count)
                        n = np.int64(0)
                    nodes[n] = node
                    moved[n] = _clip(z + row_factor * (candidate_value[node, column] - now))
                    before[n] = clipped
                    n += 1
                up = parent[node]
                node = up if up < 0 else root + up
        _add_log_changes(n, nodes, moved, before, changes, out, count)
        if count:  # every row the tree holds, also where the tree is one leaf now
            out.reached[root] = n_held


@kernel(nogil=True)
def _moment_costs_trees(lo, hi, rows, model, candidate_value, on, moment, held, out, count):
    # every other loss: a row's change is a polynomial in the value's change, so the rows are summed
    # into moments per current leaf (and column), and only the leaves walk up their ancestors
    offset, parent, current, value = model.offset, model.parent, model.current, model.value
    raw, codes, targets, grad, hess = on.raw, on.codes, on.targets, on.grad, on.hess
    loss_kind = on.loss_kind
    width = value.shape[1]
    smooth = loss_kind == LOGISTIC or loss_kind == SOFTMAX or loss_kind == POISSON
    # one moment slot per (leaf, column) the rows' changes read: the true class's column for the
    # fractions' squared error, else the tree's one column
    stride = width if loss_kind == FRACTION_SQUARES else 1
    for tree in range(lo, hi):  # trees own disjoint node ranges: no two threads write one node
        if not model.alive[tree]:
            continue
        _clear_costs(tree, model, out)
        root, end = offset[tree], offset[tree + 1]
        first, scale = model.tree_output[tree], model.factor[tree]
        n_held = 0
        for index in range(rows.shape[0]):
            row = rows[index]
            local = on.leaf[tree, row]
            if local < 0:
                continue
            n_held += 1
            start = current[root + local]
            row_factor = scale * on.row_scale[row]
            column = 0
            if loss_kind == FRACTION_SQUARES:  # (1 - z - delta)**2 - (1 - z)**2 of the true class's column
                g, h = 0.0, 0.0  # a class outside the tree's columns: no change, but the row is below
                if 0 <= codes[row] - first < width:
                    column = codes[row] - first
                    g, h = -2.0 * (1.0 - raw[row, codes[row]]), 2.0
            elif smooth:
                g, h = grad[index, first], hess[index, first]
            else:  # squared error: (z + delta - y)**2 - (z - y)**2
                g, h = 2.0 * (raw[row, first] - targets[row, 0]), 2.0
            a, b = row_factor * g, row_factor * row_factor * h
            slot = start * stride + column
            moment[slot, 0] += a
            moment[slot, 1] += b
            moment[slot, 2] += a * a
            moment[slot, 3] += a * b
            moment[slot, 4] += b * b
            held[slot] += 1
        for start in range(root, end):  # in node order: leaves near each other share ancestors
            for column in range(stride):
                slot = start * stride + column
                if held[slot] == 0:
                    continue
                up = parent[start]
                node = up if up < 0 else root + up
                while node >= 0:
                    d = candidate_value[node, column] - value[start, column]
                    out.change[node] += d * moment[slot, 0] + 0.5 * d * d * moment[slot, 1]
                    # a sum of squares, but from moments: cancellation can leave it a hair below 0
                    out.square[node] += larger(
                        0.0, d * d * (moment[slot, 2] + d * moment[slot, 3] + 0.25 * d * d * moment[slot, 4])
                    )
                    if count:
                        out.reached[node] += held[slot]
                    up = parent[node]
                    node = up if up < 0 else root + up
                for j in range(5):  # left as found: all zero
                    moment[slot, j] = 0.0
                held[slot] = 0
        if count:  # every row the tree holds, also where the tree is one leaf now
            out.reached[root] = n_held


def collapse_costs(rows, model, candidate_value, on, moment, held, out, count=True):
    """Per node, over ``rows``: the sum and the sum of squares of each row's
    loss change if the node were collapsed into a leaf of value
    ``candidate_value[node]`` (rows not below a node contribute zero), and
    how many of the rows are below it, if ``count`` (the bandit reads it; an
    exact step does not, and the count took 7% of a forest's log-loss costs;
    else those entries are 0) (``on``: a :class:`RankRows`; ``model``: a
    :class:`PrunedModel`). For the smooth losses ``on.grad`` and ``on.hess`` are the
    derivatives of ``gradients`` at ``on.raw[rows]``, one row per entry of
    ``rows``.

    A row's change under an ancestor of its current leaf is ``a * d + b *
    d**2 / 2`` with ``d`` the ancestor's candidate value minus the leaf's
    value: ``a, b`` are the row's scaled derivatives (exact for the squared
    loss, second order for the smooth ones). So the rows are summed into
    five moments per current leaf, and only the leaves walk up their
    ancestors; for the squared error of class fractions, per current leaf and
    class (the true class's column is the only one whose change a row reads)
    (``_moment_costs_trees``). Their log-loss (not a polynomial in ``d``)
    walks up row by row (``_log_costs_trees``), and takes the logarithms of
    a batch of (row, ancestor) pairs in one vectorised loop.

    ``out`` (a :class:`Costs` of n_nodes entries each) is returned with the
    entries of every live tree's root and internal nodes (``model.internal``)
    overwritten, the only ones a candidate reads; the others keep what they
    held. ``moment`` (float64 (n_nodes * n_columns, 5)) and ``held`` (int64
    (n_nodes * n_columns,)) are scratch that must be all zero, and are left
    so: one slot per node and column, ``n_columns`` the trees' width for the
    squared error of class fractions and 1 for the other losses (of size 0
    for the log-loss of class fractions, which uses neither). The caller
    keeps all of them from call to call: fresh arrays cost a page fault per
    4 KB (10,000 per call on a forest of 860,000 nodes), and writing every
    node, most of them below collapsed nodes late in a walk, took more time
    than the sums."""
    n_trees = model.offset.shape[0] - 1
    if on.loss_kind == FRACTIONS:  # two kernels: a first prune compiles only the one its loss takes
        run_chunks(_log_costs_trees, 0, n_trees, chunk_size(n_trees), rows, model, candidate_value, on, out, count)
    else:
        run_chunks(
            _moment_costs_trees,
            0,
            n_trees,
            chunk_size(n_trees),
            rows,
            model,
            candidate_value,
            on,
            moment,
            held,
            out,
            count,
        )
    return out


@kernel(nogil=True)
def _removal_rows(lo, hi, rows, live, tree_sum, base_score, codes, loss_kind, before, before_loss, pure_change):
    # each row's score before any removal, and for class fractions its loss: the same for every tree;
    # and the log-loss change when the tree dropped gave the row's class a fraction of 0 or of 1:
    # a pure leaf, which most leaves of a fully grown forest are, so most pairs take no logarithm
    n_outputs = base_score.shape[0]
    for index in range(lo, hi):
        row = rows[index]
        if live[row] < 2.0:  # no other tree holds the row: it does not count
            continue
        for k in range(n_outputs):
            before[index, k] = tree_sum[row, k] / live[row] + base_score[k]
        if loss_kind == FRACTIONS and 0 <= codes[row] < n_outputs:  # the squared error needs none
            code = codes[row]
            before_loss[index] = np.log(_clip(before[index, code]))
            for fraction in range(2):  # as _removal_costs_trees takes them, bit for bit
                z = before[index, code]
                delta = (tree_sum[row, code] - float(fraction)) / (live[row] - 1.0) + base_score[code] - z
                pure_change[index, fraction] = -np.log(_clip(z + delta)) + before_loss[index]


@kernel(nogil=True)
def _removal_costs_trees(
    lo,
    hi,
    rows,
    leaf,
    offset,
    table,
    tree_output,
    alive,
    live,
    tree_sum,
    base_score,
    codes,
    targets,
    loss_kind,
    before,
    before_loss,
    pure_change,
    total_change,
    total_square,
):
    width = table.shape[0]
    n_outputs = base_score.shape[0]
    fractions = loss_kind == FRACTIONS or loss_kind == FRACTION_SQUARES
    for tree in range(lo, hi):
        if not alive[tree]:
            continue
        root, first = offset[tree], tree_output[tree]
        for index in range(rows.shape[0]):
            row = rows[index]
            local = leaf[tree, row]
            # the loss reads one column: the true class's fraction, or the regression's one output
            k = codes[row] if fractions else 0
            if local < 0 or live[row] < 2.0 or not 0 <= k < n_outputs:
                continue
            own = table[k - first, root + local] if first <= k < first + width else 0.0
            if loss_kind == FRACTIONS and (own == 0.0 or own == 1.0):
                change = pure_change[index, int(own)]
            else:
                z = before[index, k]
                delta = (tree_sum[row, k] - own) / (live[row] - 1.0) + base_score[k] - z
                if loss_kind == SQUARED:  # (z + delta - y)**2 - (z - y)**2
                    change = delta * (2.0 * (z - targets[row, 0]) + delta)
                elif loss_kind == FRACTION_SQUARES:  # (1 - z - delta)**2 - (1 - z)**2
                    change = delta * (delta - 2.0 * (1.0 - z))
                else:
                    change = -np.log(_clip(z + delta)) + before_loss[index]
            total_change[tree] += change
            total_square[tree] += change * change


def removal_costs(rows, leaf, offset, table, tree_output, alive, live, tree_sum, base_score, codes, targets, loss_kind):
    """Averaged ensembles (squared loss or class fractions): per tree, the sum
    and sum of squares over ``rows`` of the loss change if the tree were
    dropped (the mean then runs over one tree fewer). ``table``: as
    :func:`raw_scores` reads it (one look-up per row and tree where
    ``value[current[...]]`` took two, which each waited for memory).
    ``tree_sum`` is the sum of the live trees' values per row and ``live``
    how many live trees hold the row (``live_trees_per_row``); rows a tree
    does not hold, or that no other tree holds, do not count."""
    n_trees, n_rows = leaf.shape[0], rows.shape[0]
    before = np.empty((n_rows, base_score.shape[0]))
    before_loss = np.zeros(n_rows)
    pure_change = np.zeros((n_rows if loss_kind == FRACTIONS else 0, 2))
    run_chunks(
        _removal_rows,
        0,
        n_rows,
        chunk_size(n_rows, 1024),
        rows,
        live,
        tree_sum,
        base_score,
        codes,
        loss_kind,
        before,
        before_loss,
        pure_change,
    )
    total_change = np.zeros(n_trees, dtype=np.float64)
    total_square = np.zeros(n_trees, dtype=np.float64)
    run_chunks(
        _removal_costs_trees,
        0,
        n_trees,
        chunk_size(n_trees),
        rows,
        leaf,
        offset,
        table,
        tree_output,
        alive,
        live,
        tree_sum,
        base_score,
        codes,
        targets,
        loss_kind,
        before,
        before_loss,
        pure_change,
        total_change,
        total_square,
    )
    return total_change, total_square


@kernel(inline="always")
def _derivatives(raw, row, k, code, targets, loss_kind, link_scale, kept):
    """First and second derivative of a row's loss by raw column ``k``
    (``targets``: one column, or one per raw column for soft labels of
    several classes). ``kept`` is what the loss reads of the row's
    exponentials, which the callers keep (:func:`_kept_exp`): the softmax
    of column ``k`` (its normaliser is shared over the columns), else
    column ``k``'s own exponential."""
    z = raw[row, k]
    if loss_kind == SQUARED:
        return z - targets[row, 0], 1.0
    if loss_kind == POISSON:
        return kept - targets[row, 0], kept
    if code < 0:  # a soft label: the probability of column k's class
        label = targets[row, smaller(k, targets.shape[1] - 1)]
    elif raw.shape[1] == 1:
        label = float(code)
    else:  # one sigmoid per class (LightGBM's multiclassova) or the softmax: column k is "class k or not"
        label = 1.0 if code == k else 0.0
    if loss_kind == LOGISTIC:
        p = 1.0 / (1.0 + kept)  # sigmoid(z, link_scale), the format's link (tree._links)
        return link_scale * (p - label), larger(link_scale * link_scale * p * (1.0 - p), 1e-16)
    return kept - label, larger(kept * (1.0 - kept), 1e-16)


@kernel(inline="always")
def _kept_exp(raw, row, k, loss_kind, link_scale, shift):
    """The exponential of raw column ``k`` that ``_derivatives`` reads:
    ``exp(-link_scale * z)`` (logistic), ``exp(z)`` (Poisson), ``exp(z -
    shift)`` (softmax, before its normalisation), 0 for the squared error."""
    z = raw[row, k]
    if loss_kind == LOGISTIC:
        return np.exp(-(link_scale * z))
    if loss_kind == POISSON:
        return np.exp(z)
    if loss_kind == SOFTMAX:
        return np.exp(z - shift)
    return 0.0


REFIT_CHUNK = 4096  # rows per partial sum of refit_leaves: fixed, so its sums do not depend on the thread count


@kernel(parallel=True)
def refit_leaves(
    leaf,
    offset,
    current,
    value,
    tree_output,
    factor,
    alive,
    raw,
    codes,
    targets,
    loss_kind,
    link_scale,
    reg_lambda,
    step,
):
    """One backfitting pass: tree after tree, every current leaf takes a
    damped Newton step ``-step * G / (H + lambda)`` on the rows it holds, and
    the rows' scores follow before the next tree is fitted.

    The trees go in order; the rows of each are summed in parallel, in chunks
    of ``REFIT_CHUNK`` added up in order. One pass over the rows per tree
    applies the step of the tree before and sums the derivatives for this one.

    ``value`` and ``raw`` are updated in place (the search's working copies).
    The derivatives of the logistic, Poisson and softmax losses read each
    row's exponentials (:func:`_kept_exp`). They are taken once a pass; a
    leaf's step moves its rows' exponentials by one factor, the step's own
    exponential, so a tree costs one ``exp`` per leaf, not one per row (which
    took two thirds of the pass). The softmax keeps each row's sum of them up
    to date too."""
    n_trees, n_rows = leaf.shape
    n_chunks = (n_rows + REFIT_CHUNK - 1) // REFIT_CHUNK
    softmax = loss_kind == SOFTMAX
    kept_exp = softmax or loss_kind == LOGISTIC or loss_kind == POISSON
    n_kept = n_rows if kept_exp else 0
    shift, total = zeros(n_kept, np.float64), zeros(n_kept, np.float64)  # the softmax's; 0 for the others
    exponential = zeros((n_kept, raw.shape[1]), np.float64)
    for row in range(n_kept):  # serial: each prange loop is a parallel region numba compiles apart
        if softmax:
            shift[row], total[row] = _softmax_parts(raw, row)
        for j in range(raw.shape[1]):
            exponential[row, j] = _kept_exp(raw, row, j, loss_kind, link_scale, shift[row])
    # a score lowered by d multiplies exp(-scale * z) by exp(scale * d), and exp(z) and exp(z - shift) by exp(-d)
    sign = link_scale if loss_kind == LOGISTIC else -1.0
    step_of = zeros(value.shape[0], np.float64)  # each node's change of its rows' raw score
    moved_by = zeros(value.shape[0], np.float64)  # and the factor of their exponentials
    previous, previous_root, previous_k = -1, 0, 0
    for tree in range(n_trees + 1):
        last = tree == n_trees  # only the step of the tree before is left to apply
        if not last and not alive[tree]:
            continue
        root = 0 if last else offset[tree]
        width = 0 if last else offset[tree + 1] - root
        k = 0 if last else tree_output[tree]
        grad_part = zeros((n_chunks, width), np.float64)
        hess_part = zeros((n_chunks, width), np.float64)
        for chunk in numba.prange(n_chunks):
            for row in range(chunk * REFIT_CHUNK, smaller(n_rows, (chunk + 1) * REFIT_CHUNK)):
                if previous >= 0:
                    moved_node = current[previous_root + leaf[previous, row]]
                    raw[row, previous_k] -= step_of[moved_node]
                    if kept_exp:
                        before = exponential[row, previous_k]
                        moved = before * moved_by[moved_node]
                        if not 0.0 < moved < np.inf:  # past float64's range: from the score itself
                            moved = _kept_exp(raw, row, previous_k, loss_kind, link_scale, shift[row])
                        exponential[row, previous_k] = moved
                        if softmax:
                            total[row] += moved - before
                if not last:
                    node = current[root + leaf[tree, row]] - root
                    kept = 0.0
                    if kept_exp:
                        kept = exponential[row, k] / total[row] if softmax else exponential[row, k]
                    g, h = _derivatives(raw, row, k, codes[row], targets, loss_kind, link_scale, kept)
                    grad_part[chunk, node] += g
                    hess_part[chunk, node] += h
        if last:
            break
        scale = factor[tree]
        for node in range(width):  # nodes that hold no row do not move
            grad, hess = 0.0, 0.0
            for chunk in range(n_chunks):
                grad += grad_part[chunk, node]
                hess += hess_part[chunk, node]
            change = step * grad / (hess + reg_lambda)
            step_of[root + node] = change
            if kept_exp:
                moved_by[root + node] = np.exp(sign * change)
            value[root + node, 0] -= change / scale
        previous, previous_root, previous_k = tree, root, k


@kernel
def gradients(raw, codes, targets, loss_kind, link_scale):
    """First and second derivatives of each row's loss by each raw column."""
    n_rows, n_outputs = raw.shape
    grad = empty((n_rows, n_outputs), np.float64)
    hess = empty((n_rows, n_outputs), np.float64)
    for row in range(n_rows):
        top, total = _softmax_parts(raw, row) if loss_kind == SOFTMAX else (0.0, 1.0)
        for k in range(n_outputs):
            kept = _kept_exp(raw, row, k, loss_kind, link_scale, top) / total
            grad[row, k], hess[row, k] = _derivatives(raw, row, k, codes[row], targets, loss_kind, link_scale, kept)
    return grad, hess


@kernel
def cover_weighted_values(children_left, children_right, offset, collapsed, cover, value):
    """Per node, the mean of the current leaf values below it weighted by
    their training cover (hessian sums or sample weights as the library
    recorded them): the constant closest to what the subtree outputs now,
    which is what a collapsed node takes. NaN where no cover is known."""
    n_nodes, width = value.shape
    numerator = zeros((n_nodes, width), np.float64)
    weight = zeros(n_nodes, np.float64)
    for tree in range(offset.shape[0] - 1):
        root = offset[tree]
        for node in range(offset[tree + 1] - 1, root - 1, -1):  # children have larger ids
            left = children_left[node]
            if left < 0 or collapsed[node]:
                weight[node] = cover[node]
                for j in range(width):
                    numerator[node, j] = cover[node] * value[node, j]
            else:
                right = children_right[node]
                weight[node] = weight[root + left] + weight[root + right]
                for j in range(width):
                    numerator[node, j] = numerator[root + left, j] + numerator[root + right, j]
    out = full((n_nodes, width), np.nan, np.float64)
    for node in range(n_nodes):
        if weight[node] > 0.0:
            for j in range(width):
                out[node, j] = numerator[node, j] / weight[node]
    return out


@kernel
def select_disjoint(
    order, ids, benefit, is_root, subtree_span, preorder_nodes, parent, offset, tree_of, trees_left, budget
):
    """The greedy step: candidates ``ids[order]`` one after the other, each
    taken unless it lies in or above one taken already (or is the last live
    tree's root), until ``budget`` leaves are gone. Returns the taken ids in
    that order, and whether they reach the budget. ``subtree_span[node]`` is
    the ``[start, stop)`` of the node's subtree in ``preorder_nodes``;
    ``parent`` holds local ids."""
    taken = zeros(is_root.shape[0], np.bool_)  # in or above a taken subtree
    chosen = empty(order.shape[0], np.int64)
    n_chosen, removed = 0, 0.0
    for position in order:
        node = ids[position]
        if taken[node] or (is_root[node] and trees_left <= 1):
            continue
        start, stop = subtree_span[node, 0], subtree_span[node, 1]
        overlaps = False
        for index in range(start, stop):
            if taken[preorder_nodes[index]]:
                overlaps = True
                break
        if overlaps:
            continue
        for index in range(start, stop):
            taken[preorder_nodes[index]] = True
        root = offset[tree_of[node]]
        up = parent[node]
        while up >= 0:
            taken[root + up] = True
            up = parent[root + up]
        if is_root[node]:
            trees_left -= 1
        chosen[n_chosen] = node
        n_chosen += 1
        removed += benefit[position]
        if removed >= budget:
            break
    return chosen[:n_chosen], removed >= budget


@kernel
def collapse_into(
    nodes,
    subtree_span,
    preorder_nodes,
    parent,
    offset,
    tree_of,
    current,
    collapsed,
    candidate_value,
    count,
    internal,
    table,
):
    """Collapse each of ``nodes`` (none in or above another) into a leaf:
    every node of its subtree now stands for it (``current``). The search's
    view of the model follows in place: the leaves below every node
    (``count``), its internal nodes (``internal``) and every node's current
    value (``table``, as :func:`raw_scores` reads it: the candidate value
    across the subtree). Passes over every node after each step would cost
    a forest of a million nodes more than the step. The caller sets the
    collapsed node's own value where it changes (Newton values)."""
    for node in nodes:
        root = offset[tree_of[node]]
        gone = count[node] - 1
        up = parent[node]
        while up >= 0:
            count[root + up] -= gone
            up = parent[root + up]
        count[node] = 1
        for index in range(subtree_span[node, 0], subtree_span[node, 1]):
            below = preorder_nodes[index]
            current[below] = node
            internal[below] = False
            for j in range(table.shape[0]):
                table[j, below] = candidate_value[node, j]
        collapsed[node] = True
