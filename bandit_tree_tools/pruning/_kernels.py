"""Numba kernels of the incremental evaluation behind every pruning method.

The validation rows are routed once (leaf per row and tree). Rows are then
sorted, per tree, by the pre-order position of their leaf, so the rows under
any node form one contiguous slice of that order. Collapsing node ``v`` of
tree ``t`` changes, for the rows of that slice only, the tree's contribution
from ``value[current node of the row]`` to ``value[v]``; everything else of
the raw score stays. A pull therefore costs O(rows under the node), and the
score of an evaluation subset is updated from sufficient statistics.

Statistics vector (float64), ``K`` classes:
``[n_rows, correct (classification) or squared-error sum (regression),
log-loss sum, tp[0..K), fp[0..K), fn[0..K)]``.
"""

from typing import NamedTuple

import numpy as np

from .._kernels_inline import empty, larger, smaller, zeros
from .._numba_config import helper, kernel
from .._threads import chunk_size, run_chunks
from ..tree._links import SIGMOID, link_row, link_value

LOG_LOSS_EPS = 1e-15
# a binary sigmoid's margin past this (scaled) puts P(positive) so far from 1/2 (2.5e-4) that no
# float64 or float32 rounding can turn the class: the class is the margin's sign, no exp needed
CLEAR_MARGIN = 1e-3
# logloss of one row lies in [0, -log(eps)] once probabilities are clipped; dividing by
# this bound is how the paper's "scaled logarithmic loss [0, 1]" is made concrete.
LOG_LOSS_BOUND = -np.log(LOG_LOSS_EPS)

STAT_N, STAT_MAIN, STAT_LOSS, STAT_HEAD = 0, 1, 2, 3
ROW_BLOCK = 4096  # rows per task of _row_classes and _row_outputs


class RowRule(NamedTuple):
    """How a row's class and loss are read from its raw scores (:func:`_row_output`):
    the rows' targets and the model's link and label rule."""

    codes: np.ndarray  # int64 (n_rows,): the true class code of each row, -1 for regression
    values: np.ndarray  # float64 (n_rows,): the regression target, 0 for classification
    link: int | None  # the link's code, None for the identity (tree._links.kernel_link)
    link_scale: float
    float32: bool  # the link computed in float32 (XGBoost)
    label_rule: int  # LABEL_RULE_CODES: 0 "proba", 1 "raw>=0", 2 "raw>0"
    n_classes: int  # 0 for regression


class RowScores(NamedTuple):
    """The evaluated model's scores of every row, kept up to date as nodes collapse."""

    raw: np.ndarray  # float64 (n_rows, n_outputs)
    prediction: np.ndarray  # int64 (n_rows,): the predicted class code, -1 for regression
    loss: np.ndarray  # float64 (n_rows,): the row's loss (see _row_output)


@kernel
def _preorder(children_left, children_right):
    """Pre-order position of every node and the position one past its subtree."""
    n = children_left.shape[0]
    position = empty(n, np.int64)
    end = empty(n, np.int64)
    stack = empty(n, np.int64)
    top = 0
    stack[0] = 0
    counter = 0
    while top >= 0:
        node = stack[top]
        top -= 1
        position[node] = counter
        counter += 1
        if children_left[node] != -1:
            top += 1
            stack[top] = children_right[node]
            top += 1
            stack[top] = children_left[node]
    # children have larger ids than parents; loops, not np.ones and an array sum, which compile
    # numpy's implementations in a fresh environment
    for node in range(n - 1, -1, -1):
        size = 1
        left, right = children_left[node], children_right[node]
        if left != -1:
            size += end[left] - position[left] + end[right] - position[right]
        end[node] = position[node] + size
    return position, end


@kernel
def _arm_mask(children_left, children_right, collapsed, twigs_only):
    """Internal nodes of the tree as currently pruned (``collapsed`` nodes are
    leaves, their descendants are gone); with ``twigs_only`` only those whose
    two children are (current) leaves."""
    n = children_left.shape[0]
    hidden = zeros(n, np.bool_)
    mask = zeros(n, np.bool_)
    for node in range(n):
        left = children_left[node]
        if left == -1:
            continue
        right = children_right[node]
        if hidden[node] or collapsed[node]:
            hidden[left] = True
            hidden[right] = True
            continue
        if twigs_only:
            left_leaf = children_left[left] == -1 or collapsed[left]
            right_leaf = children_left[right] == -1 or collapsed[right]
            mask[node] = left_leaf and right_leaf
        else:
            mask[node] = True
    return mask


@helper
def _row_output(raw, row, target_code, target_value, link, link_scale, float32, label_rule, n_classes, proba):
    """(predicted class or -1, per-row loss) of row ``row`` of ``raw``;
    ``proba`` is a work buffer of at least two values.

    Classification: the loss is the clipped log-loss of the true class, and
    the class is the one ``Ensemble.predict`` gives (:func:`_row_class`).
    Regression: the squared error of ``link(raw)``. The link is the format's
    (:mod:`~bandit_tree_tools.tree._links`)."""
    if n_classes == 0:
        error = link_value(raw[row, 0], link, link_scale, float32) - target_value
        return -1, error * error
    _class_proba(raw, row, link, link_scale, float32, proba)
    best = _row_class(raw, row, proba, label_rule, n_classes)
    p = smaller(larger(proba[target_code], LOG_LOSS_EPS), 1.0 - LOG_LOSS_EPS)
    return best, -np.log(p)


@helper
def _class_proba(raw, row, link, link_scale, float32, proba):
    """A classifier's class probabilities of row ``row`` of ``raw`` into
    ``proba`` (a binary margin gives P(positive class) and its complement)."""
    if raw.shape[1] == 1:
        proba[1] = link_value(raw[row, 0], link, link_scale, float32)
        # the other class in the link's precision, as Ensemble.predict_proba (XGBoost's float32)
        proba[0] = np.float64(np.float32(1.0) - np.float32(proba[1])) if float32 else 1.0 - proba[1]
    elif link is None:  # the identity, without compiling link_row's other links
        for k in range(raw.shape[1]):
            proba[k] = link_value(raw[row, k], link, link_scale, float32)
    else:
        link_row(raw[row], link, link_scale, float32, proba[: raw.shape[1]])


@helper
def _row_class(raw, row, proba, label_rule, n_classes):
    """The class ``Ensemble.predict`` gives row ``row`` of ``raw``, by
    ``label_rule`` (coded by ``LABEL_RULE_CODES``): 0 "proba", the first
    class of the highest probability (``proba`` filled by
    :func:`_class_proba`); 1 "raw>=0" and 2 "raw>0", the sign of a binary
    margin, else the first highest score."""
    best = 0
    if label_rule == 0:
        for k in range(1, n_classes):
            if proba[k] > proba[best]:
                best = k
    elif raw.shape[1] == 1:
        if raw[row, 0] > 0.0 or (label_rule == 1 and raw[row, 0] == 0.0):
            best = 1
    else:
        for k in range(1, raw.shape[1]):
            if raw[row, k] > raw[row, best]:
                best = k
    return best


@kernel(nogil=True)
def _row_classes_rows(lo, hi, raw, rule, binary_sigmoid, prediction):
    proba = empty(larger(rule.n_classes, 2), np.float64)
    for row in range(lo, hi):
        if rule.label_rule == 0:
            if binary_sigmoid:
                margin = rule.link_scale * raw[row, 0]
                if abs(margin) > CLEAR_MARGIN:
                    prediction[row] = 1 if margin > 0.0 else 0
                    continue
            _class_proba(raw, row, rule.link, rule.link_scale, rule.float32, proba)
        prediction[row] = _row_class(raw, row, proba, rule.label_rule, rule.n_classes)


def _row_classes(raw, rule, prediction):
    """``prediction`` of every row of a classifier's ``raw``: the classes
    without the losses (the margin rules need no link either, nor a binary
    sigmoid's probabilities where the margin is clear: ten times faster)."""
    n = raw.shape[0]
    binary_sigmoid = raw.shape[1] == 1 and rule.link == SIGMOID
    run_chunks(_row_classes_rows, 0, n, chunk_size(n, ROW_BLOCK), raw, rule, binary_sigmoid, prediction)


@kernel(nogil=True)
def _row_outputs_rows(lo, hi, rows, scores, rule):
    proba = empty(larger(rule.n_classes, 2), np.float64)
    for i in range(lo, hi):
        row = rows[i]
        best, row_loss = _row_output(
            scores.raw,
            row,
            rule.codes[row],
            rule.values[row],
            rule.link,
            rule.link_scale,
            rule.float32,
            rule.label_rule,
            rule.n_classes,
            proba,
        )
        scores.prediction[row] = best
        scores.loss[row] = row_loss


def _row_outputs(rows, scores, rule):
    """Refresh ``scores.prediction`` and ``scores.loss`` of ``rows`` from
    ``scores.raw`` (chunks of rows on threads, each with its own scratch
    probabilities)."""
    n = rows.shape[0]
    run_chunks(_row_outputs_rows, 0, n, chunk_size(n, ROW_BLOCK), rows, scores, rule)


@helper
def _add_row(stats, sign, predicted, row_loss, true_code, n_classes):
    stats[STAT_N] += sign
    if n_classes == 0:
        stats[STAT_MAIN] += sign * row_loss
        return
    if predicted == true_code:
        stats[STAT_MAIN] += sign
        stats[STAT_HEAD + true_code] += sign  # true positive of its class
    else:
        stats[STAT_HEAD + n_classes + predicted] += sign  # false positive
        stats[STAT_HEAD + 2 * n_classes + true_code] += sign  # false negative
    stats[STAT_LOSS] += sign * row_loss


@kernel
def _subset_stats(rows, prediction, loss, target_code, n_classes):
    """Sufficient statistics of the current model on ``rows``."""
    stats = zeros(STAT_HEAD + 3 * n_classes, np.float64)
    for i in range(rows.shape[0]):
        row = rows[i]
        _add_row(stats, 1.0, prediction[row], loss[row], target_code[row], n_classes)
    return stats


@kernel
def _pull_stats(
    base_stats,
    rows_under,
    in_subset,
    current_node,
    root,
    value,
    new_node,
    factor,
    first_output,
    raw,
    prediction,
    loss,
    target_code,
    target_value,
    link,
    link_scale,
    float32,
    label_rule,
    n_classes,
):
    """Statistics of the subset if local node ``new_node`` of the tree rooted
    at global id ``root`` were a leaf: only subset rows under it change.

    ``current_node[row]``: the local node whose value the row gets from this
    tree now; ``factor``: the tree's scale (divided by the number of trees
    for averaged ensembles).

    Flat arguments, not the named tuples of ``_row_outputs``: the bandit calls
    it once per pull, from Python, and numba types a named tuple argument in
    Python on every call (about 1 us each), which a pull's few rows do not hide."""
    stats = base_stats.copy()
    width = value.shape[1]
    new_raw = empty((1, raw.shape[1]), np.float64)  # one row, as _row_output reads rows
    proba = empty(larger(n_classes, 2), np.float64)
    new_global = root + new_node
    for i in range(rows_under.shape[0]):
        row = rows_under[i]
        if not in_subset[row]:
            continue
        old_global = root + current_node[row]
        if old_global == new_global:
            continue
        for k in range(raw.shape[1]):
            new_raw[0, k] = raw[row, k]
        for j in range(width):
            new_raw[0, first_output + j] += factor * (value[new_global, j] - value[old_global, j])
        best, row_loss = _row_output(
            new_raw,
            np.int64(0),
            target_code[row],
            target_value[row],
            link,
            link_scale,
            float32,
            label_rule,
            n_classes,
            proba,
        )
        _add_row(stats, -1.0, prediction[row], loss[row], target_code[row], n_classes)
        _add_row(stats, 1.0, best, row_loss, target_code[row], n_classes)
    return stats


@kernel
def _commit(rows_under, current_node, root, value, new_node, factor, first_output, raw):
    """Make local node ``new_node`` a leaf for ``rows_under``: update their raw
    scores and the node they now get this tree's value from."""
    width = value.shape[1]
    new_global = root + new_node
    for i in range(rows_under.shape[0]):
        row = rows_under[i]
        old_global = root + current_node[row]
        for j in range(width):
            raw[row, first_output + j] += factor * (value[new_global, j] - value[old_global, j])
        current_node[row] = new_node


@kernel
def _f1(stats, n_classes, positive):
    """F1 of class ``positive`` (binary), or macro-F1 over the classes present
    among the true or predicted labels (``positive == -1``), as scikit-learn
    averages."""
    if positive >= 0:
        tp = stats[STAT_HEAD + positive]
        denominator = 2.0 * tp + stats[STAT_HEAD + n_classes + positive] + stats[STAT_HEAD + 2 * n_classes + positive]
        return 2.0 * tp / denominator if denominator > 0 else 0.0
    total = 0.0
    present = 0
    for k in range(n_classes):
        tp = stats[STAT_HEAD + k]
        denominator = 2.0 * tp + stats[STAT_HEAD + n_classes + k] + stats[STAT_HEAD + 2 * n_classes + k]
        if denominator > 0:
            total += 2.0 * tp / denominator
            present += 1
    return total / present if present > 0 else 0.0


@kernel
def _score(stats, weight_accuracy, weight_f1, weight_loss, n_classes, positive, target_variance):
    """The paper's performance ``a*accuracy + g*F1 - b*scaled_logloss``
    (classification), or ``1 - MSE / Var(y)`` (regression; R^2 against the
    variance of the whole validation target, so score differences are MSE
    differences in units of that variance). ``positive``: see :func:`_f1`.
    The one definition of the score: the evaluator's pulls and the reported
    metrics (``model_metrics``) both compute it here."""
    n = stats[STAT_N]
    if n <= 0:
        return 0.0
    if n_classes == 0:
        return 1.0 - stats[STAT_MAIN] / n / target_variance
    accuracy = stats[STAT_MAIN] / n
    scaled_loss = stats[STAT_LOSS] / n / LOG_LOSS_BOUND
    return weight_accuracy * accuracy + weight_f1 * _f1(stats, n_classes, positive) - weight_loss * scaled_loss
