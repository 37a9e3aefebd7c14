"""TSDT kernels, after the search: lower bounds of the visited trees, the
exact class counts of the tried splits, the best tree assembled from them by
dynamic programming, and multiway prediction."""

import numba
import numpy as np

from ._kernel_posterior import _mark, evaluate_marked_tree
from ._kernel_state import C_DT, C_SEARCH, C_SLOTS


@numba.njit(cache=True)
def current_lower_bounds(state, n_cat, cat_offset, lambda_, gamma, z):
    """``mean - z * sd`` of the posterior of every search node's own tree (as
    a terminal tree) from the statistics of now (the posteriors stored in the
    search tree date from each node's last visit). The largest of thousands
    of means is mostly luck: trees whose deep leaves saw few rows look better
    than they are, and their sd says so."""
    n_search = state.counters[C_SEARCH]
    out = np.empty(n_search, dtype=np.float64)
    for node in range(n_search):
        _mark(state, node, True)
        mu, sd = evaluate_marked_tree(state, state.s_n_splits[node], n_cat, cat_offset, lambda_, gamma)
        out[node] = mu - z * sd
        _mark(state, node, False)
    return out


@numba.njit(cache=True)
def tried_splits(state, n_features, visited_only):
    """(slot, attribute) mask of the splits the search created (in the trees
    of its search nodes), or only of those in the trees of visited ones."""
    tried = np.zeros((state.counters[C_SLOTS], n_features), dtype=np.uint8)
    for node in range(state.counters[C_SEARCH]):
        leaf = state.s_split_leaf[node]
        if leaf >= 0 and (state.s_visits[node] > 0 or not visited_only):
            tried[state.dt_slot[leaf], state.s_split_feature[node]] = 1
    return tried


@numba.njit(cache=True)
def counting_work(state, tried, n_cat, cat_offset):
    """Expected (node, split) steps per row of :func:`exact_dt_counts` with
    the splits ``tried``: the sum over DT nodes that have a slot of their
    chain-rule share of the rows times the splits tried there."""
    n_dt = state.counters[C_DT]
    share = np.zeros(n_dt, dtype=np.float64)
    share[0] = 1.0
    work = 0.0
    for dt in range(n_dt):  # parents come first
        if dt > 0:
            parent_slot = state.dt_slot[state.dt_parent[dt]]
            if parent_slot < 0 or not tried[parent_slot, state.dt_feature[dt]]:
                continue
            total = state.slot_total[parent_slot]
            if total == 0:
                continue
            cell = cat_offset[state.dt_feature[dt]] + state.dt_category[dt]
            n_cell = 0
            for k in range(state.slot_counts.shape[2]):
                n_cell += state.slot_counts[parent_slot, cell, k]
            share[dt] = share[state.dt_parent[dt]] * n_cell / total
        slot = state.dt_slot[dt]
        if slot >= 0:
            for feature in range(n_cat.shape[0]):
                if tried[slot, feature]:
                    work += share[dt]
    return work


@numba.njit(cache=True)
def exact_dt_counts(state, X, y, n_cat, tried, budget):
    """Class counts on the rows ``X, y`` of every DT node reached by the
    splits in ``tried`` (:func:`tried_splits`), exactly: every row goes
    down every path of those splits that it matches (splits tried at a node
    share its rows). Other DT nodes get zeros. Stops after the first row
    that brings the steps (a row past one tried split) beyond ``budget``:
    returns (counts, whether every row was counted)."""
    n_dt = state.counters[C_DT]
    n_slots = state.counters[C_SLOTS]
    n_features = n_cat.shape[0]
    # The tried splits of each slot, listed once (most slots try few of many attributes).
    start = np.zeros(n_slots + 1, dtype=np.int64)
    for slot in range(n_slots):
        start[slot + 1] = start[slot]
        for feature in range(n_features):
            if tried[slot, feature]:
                start[slot + 1] += 1
    split_feature = np.empty(start[n_slots], dtype=np.int64)
    split_first = np.empty(start[n_slots], dtype=np.int64)
    for slot in range(n_slots):
        position = start[slot]
        for feature in range(n_features):
            if tried[slot, feature]:
                split_feature[position] = feature
                split_first[position] = state.slot_child[slot, feature]
                position += 1
    counts = np.zeros((n_dt, state.root_counts.shape[0]), dtype=np.int64)
    stack = np.empty(n_dt + 1, dtype=np.int64)
    work = 0
    for row in range(X.shape[0]):
        label = y[row]
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            dt = stack[top]
            counts[dt, label] += 1
            slot = state.dt_slot[dt]
            if slot < 0:
                continue
            for position in range(start[slot], start[slot + 1]):
                stack[top] = split_first[position] + X[row, split_feature[position]]
                top += 1
            work += start[slot + 1] - start[slot]
        if work > budget:
            return counts, False
    return counts, True


@numba.njit(cache=True)
def exact_objectives(state, counts, n_rows, n_cat, lambda_):
    """Training objective (accuracy - lambda * splits) of every search node's
    tree from the exact DT-node ``counts`` of :func:`exact_dt_counts`: a
    tree's accuracy is the sum of its leaves' majority counts over n_rows."""
    n_search = state.counters[C_SEARCH]
    out = np.empty(n_search, dtype=np.float64)
    for node in range(n_search):
        _mark(state, node, True)
        correct = 0
        state.stack_node[0] = 0
        top = 1
        while top > 0:
            top -= 1
            dt = state.stack_node[top]
            feature = state.split_of[dt]
            if feature < 0:
                majority = 0
                for k in range(counts.shape[1]):
                    if counts[dt, k] > majority:
                        majority = counts[dt, k]
                correct += majority
                continue
            first = state.slot_child[state.dt_slot[dt], feature]
            for category in range(n_cat[feature]):
                state.stack_node[top] = first + category
                top += 1
        _mark(state, node, False)
        out[node] = correct / n_rows - lambda_ * state.s_n_splits[node]
    return out


@numba.njit(cache=True)
def best_assembled_tree(state, counts, n_rows, n_cat, lambda_, tried):
    """The best tree made of the splits the search tried (``tried``, see
    :func:`tried_splits`), by dynamic programming with the exact
    ``counts`` of their DT nodes: a node is a leaf (its majority count) or
    split on an attribute tried there (the sum of its children's best
    values, minus lambda * n_rows). Subtrees that
    different search branches tried can be combined this way. Returns the
    attribute each DT node splits on in that tree (-1: a leaf) and its value
    in rows (correct rows - lambda * n_rows * splits); a split must win by
    more than 1e-7 rows (ties go to fewer splits)."""
    n_dt = state.counters[C_DT]
    best = np.zeros(n_dt, dtype=np.float64)
    choice = np.full(n_dt, -1, dtype=np.int64)
    penalty = lambda_ * n_rows
    for dt in range(n_dt - 1, -1, -1):  # children are created after their parent
        majority = 0
        for k in range(counts.shape[1]):
            if counts[dt, k] > majority:
                majority = counts[dt, k]
        best[dt] = majority
        slot = state.dt_slot[dt]
        if slot < 0:
            continue
        for feature in range(n_cat.shape[0]):
            if not tried[slot, feature]:
                continue
            first = state.slot_child[slot, feature]
            value = -penalty
            for category in range(n_cat[feature]):
                value += best[first + category]
            if value > best[dt] + 1e-7:
                best[dt] = value
                choice[dt] = feature
    return choice, best[0]


# ------------------------------------------------------- multiway prediction
@numba.njit(cache=True)
def apply_categorical(X, feature, first_child, n_categories):
    """Node reached by each row in a multiway tree; a row stops at the node
    whose split meets a category the tree has no child for (negative, too
    large, NaN), so it gets that node's majority class."""
    out = np.empty(X.shape[0], dtype=np.int64)
    for row in range(X.shape[0]):
        node = 0
        while feature[node] >= 0:
            x = X[row, feature[node]]
            if not (x >= 0.0 and x < n_categories[feature[node]]):
                break
            node = first_child[node] + np.int64(x)
        out[row] = node
    return out
