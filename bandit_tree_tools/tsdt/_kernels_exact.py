"""Numba kernels of the exact solver: depth-first dynamic programming over
partial assignments with a memo table that calls on the same rows can share
(:func:`optimal_categorical_tree` and the exact completion of TSDT's final
tree both use them)."""

import numpy as np

from .._kernels_inline import empty, full, larger, zeros
from .._kernels_reduce import array_max, array_sum
from .._numba_config import helper, kernel

TOLERANCE = 1e-7  # in units of rows: a split must win by more than this (ties go to fewer splits)
ABORTED = -np.inf


ENTER, NEXT_FEATURE, NEXT_CHILD = 0, 1, 2
EMPTY = -1  # free slot of the memo table (keys are >= 0)
NO_STEP_LIMIT = np.iinfo(np.int64).max  # budget[1] of a solve that only counts subproblems


@kernel
def _find(table_keys, key):
    """Slot of ``key`` in an open-addressing table (linear probing), or of
    the free slot where it would go. (Numba's typed dict costs seconds of
    compilation in every new process; this does not.)"""
    mask = table_keys.shape[0] - 1
    slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
    while table_keys[slot] != EMPTY and table_keys[slot] != key:
        slot = (slot + 1) & mask
    return slot


@helper
def _grown(table_keys, table_value, table_choice):
    capacity = 2 * table_keys.shape[0]
    keys = full(capacity, EMPTY, np.int64)
    values = zeros(capacity, np.float64)
    choices = zeros(capacity, np.int64)
    for old in range(table_keys.shape[0]):
        if table_keys[old] != EMPTY:
            slot = _find(keys, table_keys[old])
            keys[slot] = table_keys[old]
            values[slot] = table_value[old]
            choices[slot] = table_choice[old]
    return keys, values, choices


def new_table():
    """An empty memo table (keys, values, attributes, [entries stored])
    for :func:`_solve_node`."""
    return (
        np.full(1024, EMPTY, dtype=np.int64),
        np.zeros(1024, dtype=np.float64),
        np.zeros(1024, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


@kernel
def _solve(X, y, n_categories, radix, n_classes, penalty, budget):
    """Best value (correct rows - penalty * splits) of a tree on all rows.

    Returns the value and the memoised splits (keys and attributes) of the
    subproblems that split; the value is -inf when more than ``budget[0]``
    subproblems would be needed (see :func:`_solve_node`).
    """
    table_keys = full(1024, EMPTY, np.int64)
    table_value = zeros(1024, np.float64)
    table_choice = zeros(1024, np.int64)
    stored = zeros(1, np.int64)
    work = empty(2, np.int64)
    work[0] = budget[0]
    work[1] = NO_STEP_LIMIT
    rows = empty(X.shape[0], np.int64)
    for row in range(X.shape[0]):
        rows[row] = row
    value, table_keys, table_value, table_choice = _solve_node(
        X,
        y,
        full(X.shape[0], 1, np.int64),
        rows,
        np.int64(0),  # a literal 0 would compile the solver a second time, for Literal[int](0)
        n_categories,
        radix,
        n_classes,
        penalty,
        work,
        table_keys,
        table_value,
        table_choice,
        stored,
    )
    budget[0] = work[0]
    if value == ABORTED:
        return value, empty(0, np.int64), empty(0, np.int64)
    splits = (table_keys != EMPTY) & (table_choice >= 0)
    return value, table_keys[splits], table_choice[splits]


@kernel
def _solve_node(
    X,
    y,
    weight,
    rows,
    key0,
    n_categories,
    radix,
    n_classes,
    penalty,
    budget,
    table_keys,
    table_value,
    table_choice,
    stored,
):
    """Best value (correct rows - penalty * splits) of a tree on ``rows``
    (indices into ``X``, the rows of the partial assignment ``key0``), row
    ``r`` standing for ``weight[r]`` rows (values are in weighted rows).

    Depth-first search with an explicit stack of frames (one per depth; a
    frame is a partial assignment ``key`` and its rows). The rows of a frame
    at depth ``d`` are ``part[d, lo:hi]``; when it tries attribute ``f``, it
    sorts them by category into ``part[d + 1, lo:hi]``, so its children's
    ranges nest inside its own. Values are memoised by ``key`` in the table
    given (grown as needed, returned; ``stored[0]`` counts its entries): a
    key's value depends on the key only (its rows are those of ``X`` that
    match it), so calls on the same ``X`` can share one table, and a call
    that stops early leaves only finished entries in it.

    Returns the value (-inf when more than ``budget[0]`` new subproblems or
    ``budget[1]`` steps, a row scanned for one attribute, would be needed;
    both are decremented) and the table.
    """
    n_stored = stored[0]
    n_rows, n_features = rows.shape[0], X.shape[1]
    depth_max = n_features + 2
    max_cat = array_max(n_categories)
    part = empty((depth_max, larger(n_rows, 1)), np.int64)
    for row in range(n_rows):
        part[0, row] = rows[row]
    lo = zeros(depth_max, np.int64)
    hi = zeros(depth_max, np.int64)
    key = zeros(depth_max, np.int64)
    phase = zeros(depth_max, np.int64)
    best = zeros(depth_max, np.float64)
    choice = zeros(depth_max, np.int64)
    feature = zeros(depth_max, np.int64)
    category = zeros(depth_max, np.int64)
    total = zeros(depth_max, np.float64)
    remaining = zeros(depth_max, np.float64)
    starts = zeros((depth_max, max_cat + 1), np.int64)
    upper = zeros((depth_max, max_cat), np.float64)
    child_counts = zeros((max_cat, n_classes), np.int64)
    used = zeros(n_features, np.uint8)
    counts = zeros(n_classes, np.int64)
    frame_size = zeros(depth_max, np.int64)  # weighted rows of each frame
    top = 0
    lo[0], hi[0], key[0], phase[0] = 0, n_rows, key0, ENTER
    returned = 0.0
    while True:
        d = top
        if phase[d] == ENTER:
            counts[:] = 0
            for i in range(lo[d], hi[d]):
                counts[y[part[d, i]]] += weight[part[d, i]]
            frame_size[d] = array_sum(counts)
            size = frame_size[d]
            leaf = np.float64(array_max(counts))
            # No split can be worth more than size - penalty (every row right, one split).
            slot = _find(table_keys, key[d])
            if leaf >= size - penalty:
                returned = leaf
            elif table_keys[slot] == key[d]:
                returned = table_value[slot]
            else:
                budget[0] -= 1
                if budget[0] < 0:
                    stored[0] = n_stored
                    return ABORTED, table_keys, table_value, table_choice
                best[d] = leaf
                choice[d] = -1
                feature[d] = -1
                phase[d] = NEXT_FEATURE
                continue
        elif phase[d] == NEXT_FEATURE:
            f = feature[d] + 1
            while f < n_features and used[f]:
                f += 1
            feature[d] = f
            if f >= n_features or best[d] >= frame_size[d] - penalty - TOLERANCE:
                if 2 * (n_stored + 1) > table_keys.shape[0]:
                    table_keys, table_value, table_choice = _grown(table_keys, table_value, table_choice)
                slot = _find(table_keys, key[d])
                table_keys[slot] = key[d]
                table_value[slot] = best[d]
                table_choice[slot] = choice[d]
                n_stored += 1
                returned = best[d]
            else:
                budget[1] -= hi[d] - lo[d]
                if budget[1] < 0:
                    stored[0] = n_stored
                    return ABORTED, table_keys, table_value, table_choice
                n_cat = n_categories[f]
                starts[d, : n_cat + 1] = 0
                child_counts[:n_cat, :] = 0
                for i in range(lo[d], hi[d]):
                    row = part[d, i]
                    starts[d, X[row, f] + 1] += 1
                    child_counts[X[row, f], y[row]] += weight[row]
                non_empty = 0
                bound = -penalty
                for c in range(n_cat):
                    if starts[d, c + 1] > 0:
                        non_empty += 1
                    # A child is worth at most max(its majority, its rows - penalty).
                    child_leaf = np.float64(array_max(child_counts[c, :]))
                    upper[d, c] = larger(child_leaf, array_sum(child_counts[c, :]) - penalty)
                    bound += upper[d, c]
                if non_empty < 2:
                    continue  # constant here: the split would only cost
                if bound <= best[d] + TOLERANCE:
                    continue  # cannot beat the best option found
                starts[d, 0] = lo[d]
                for c in range(n_cat):
                    starts[d, c + 1] += starts[d, c]
                fill = starts[d, :n_cat].copy()
                for i in range(lo[d], hi[d]):
                    row = part[d, i]
                    c = X[row, f]
                    part[d + 1, fill[c]] = row
                    fill[c] += 1
                used[f] = 1
                total[d] = -penalty
                remaining[d] = bound + penalty
                category[d] = -1
                phase[d] = NEXT_CHILD
                continue
        else:  # NEXT_CHILD
            f = feature[d]
            n_cat = n_categories[f]
            c = category[d] + 1
            while c < n_cat and starts[d, c + 1] == starts[d, c]:
                c += 1
            category[d] = c
            if c >= n_cat:
                used[f] = 0
                if total[d] > best[d] + TOLERANCE:
                    best[d] = total[d]
                    choice[d] = f
                phase[d] = NEXT_FEATURE
                continue
            if total[d] + remaining[d] <= best[d] + TOLERANCE:
                used[f] = 0
                phase[d] = NEXT_FEATURE
                continue
            top = d + 1
            lo[top], hi[top] = starts[d, c], starts[d, c + 1]
            key[top] = key[d] + (c + 1) * radix[f]
            phase[top] = ENTER
            continue
        # The frame at depth d is solved with value ``returned``: hand it to its parent.
        if d == 0:
            stored[0] = n_stored
            return returned, table_keys, table_value, table_choice
        top = d - 1
        total[top] += returned
        remaining[top] -= upper[top, category[top]]
