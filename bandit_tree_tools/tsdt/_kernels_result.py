"""TSDT kernels, after the search: lower bounds of the visited trees, the
exact class counts of the tried splits, the best tree assembled from them by
dynamic programming, and multiway prediction."""

import numpy as np

from .._kernels_inline import empty, full, zeros
from .._kernels_sort import sort_by_key
from .._numba_config import helper, kernel
from ._kernels_exact import ABORTED, NO_STEP_LIMIT, _find, _solve_node
from ._kernels_posterior import _mark, evaluate_marked_tree
from ._kernels_state import C_DT, C_SEARCH, C_SLOTS


@kernel
def current_lower_bounds(state, n_cat, cat_offset, lambda_, gamma, z):
    """``mean - z * sd`` of the posterior of every search node's own tree (as
    a terminal tree) from the statistics of now (the posteriors stored in the
    search tree date from each node's last visit). The largest of thousands
    of means is mostly luck: trees whose deep leaves saw few rows look better
    than they are, and their sd says so."""
    n_search = state.counters[C_SEARCH]
    out = empty(n_search, np.float64)
    for node in range(n_search):
        _mark(state, node, True)
        mu, sd = evaluate_marked_tree(state, state.s_n_splits[node], n_cat, cat_offset, lambda_, gamma)
        out[node] = mu - z * sd
        _mark(state, node, False)
    return out


@helper
def tried_splits(state, n_features, visited_only):
    """(slot, attribute) mask of the splits the search created (in the trees
    of its search nodes), or only of those in the trees of visited ones."""
    tried = zeros((state.counters[C_SLOTS], n_features), np.uint8)
    for node in range(state.counters[C_SEARCH]):
        leaf = state.s_split_leaf[node]
        if leaf >= 0 and (state.s_visits[node] > 0 or not visited_only):
            tried[state.dt_slot[leaf], state.s_split_feature[node]] = 1
    return tried


@helper
def counting_work(state, tried, n_cat, cat_offset):
    """Expected (node, split) steps per row of :func:`exact_dt_counts` with
    the splits ``tried``: the sum over DT nodes that have a slot of their
    chain-rule share of the rows times the splits tried there."""
    n_dt = state.counters[C_DT]
    share = zeros(n_dt, np.float64)
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


@helper
def exact_dt_counts(state, X, y, weight, n_cat, tried, budget):
    """Class counts on the rows ``X, y`` of every DT node reached by the
    splits in ``tried`` (:func:`tried_splits`), exactly: every row goes
    down every path of those splits that it matches (splits tried at a node
    share its rows; row ``r`` counts ``weight[r]`` times). Other DT nodes
    get zeros. Stops after the first row that brings the steps (a row past
    one tried split) beyond ``budget``: returns (counts, whether every row
    was counted)."""
    n_dt = state.counters[C_DT]
    n_slots = state.counters[C_SLOTS]
    n_features = n_cat.shape[0]
    # The tried splits of each slot, listed once (most slots try few of many attributes).
    start = zeros(n_slots + 1, np.int64)
    for slot in range(n_slots):
        start[slot + 1] = start[slot]
        for feature in range(n_features):
            if tried[slot, feature]:
                start[slot + 1] += 1
    split_feature = empty(start[n_slots], np.int64)
    split_first = empty(start[n_slots], np.int64)
    for slot in range(n_slots):
        position = start[slot]
        for feature in range(n_features):
            if tried[slot, feature]:
                split_feature[position] = feature
                split_first[position] = state.slot_child[slot, feature]
                position += 1
    counts = zeros((n_dt, state.root_counts.shape[0]), np.int64)
    stack = empty(n_dt + 1, np.int64)
    work = 0
    for row in range(X.shape[0]):
        label = y[row]
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            dt = stack[top]
            counts[dt, label] += weight[row]
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


@kernel
def tried_split_counts(state, X, y, weight, n_cat, cat_offset, budget):
    """(class counts of :func:`exact_dt_counts`, the splits ``tried``) of
    every split the search created (the children of visited trees too),
    unless counting them would take more than ``budget`` steps (many
    attributes, many rows): then of the visited trees' splits only, whatever
    they cost."""
    # np.bool_ and np.int64: literal arguments would compile the callees once more, for their literal types
    n_features = n_cat.shape[0]
    tried = tried_splits(state, n_features, np.bool_(False))
    if X.shape[0] * counting_work(state, tried, n_cat, cat_offset) <= budget:
        counts, complete = exact_dt_counts(state, X, y, weight, n_cat, tried, budget)
        if complete:
            return counts, tried
    # the estimate was over the budget, or short of the count
    tried = tried_splits(state, n_features, np.bool_(True))
    counts, _ = exact_dt_counts(state, X, y, weight, n_cat, tried, np.int64(NO_STEP_LIMIT))
    return counts, tried


@kernel
def exact_objectives(state, counts, n_rows, n_cat, lambda_):
    """Training objective (accuracy - lambda * splits) of every search node's
    tree from the exact DT-node ``counts`` of :func:`exact_dt_counts`: a
    tree's accuracy is the sum of its leaves' majority counts over n_rows."""
    n_search = state.counters[C_SEARCH]
    out = empty(n_search, np.float64)
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


@kernel
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
    _, majority = _sizes_and_majorities(counts, n_dt)
    best = zeros(n_dt, np.float64)
    choice = full(n_dt, -1, np.int64)
    unsolved = zeros(n_dt, np.uint8)  # no exact values: the tried splits only
    _assemble(state, majority, unsolved, zeros(n_dt, np.float64), n_cat, tried, lambda_ * n_rows, best, choice)
    return choice, best[0]


@helper
def _sizes_and_majorities(counts, n_dt):
    """Rows and majority count of every DT node."""
    size = zeros(n_dt, np.int64)
    majority = zeros(n_dt, np.int64)
    for dt in range(n_dt):
        for k in range(counts.shape[1]):
            size[dt] += counts[dt, k]
            if counts[dt, k] > majority[dt]:
                majority[dt] = counts[dt, k]
    return size, majority


# ------------------------------------------------ exact completion of the DP
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array(
    [
        0,
        1,
        48,
        2,
        57,
        49,
        28,
        3,
        61,
        58,
        50,
        42,
        38,
        29,
        17,
        4,
        62,
        55,
        59,
        36,
        53,
        51,
        43,
        22,
        45,
        39,
        33,
        30,
        24,
        18,
        12,
        5,
        63,
        47,
        56,
        27,
        60,
        41,
        37,
        16,
        54,
        35,
        52,
        21,
        44,
        32,
        23,
        11,
        46,
        26,
        40,
        15,
        34,
        20,
        31,
        10,
        25,
        14,
        19,
        9,
        13,
        8,
        7,
        6,
    ],
    dtype=np.int64,
)


@kernel
def row_bits(X, cat_offset, n_cells):
    """One bit set per (attribute, category) cell: bit ``r`` of row
    ``cell`` is set when row ``r`` has that category (the rows of a DT node
    are the AND of the cells on its path)."""
    n_words = (X.shape[0] + 63) // 64
    bits = zeros((n_cells, n_words), np.uint64)
    for row in range(X.shape[0]):
        for feature in range(X.shape[1]):
            cell = cat_offset[feature] + X[row, feature]
            bits[cell, row >> 6] |= np.uint64(1) << np.uint64(row & 63)
    return bits


@helper
def dt_keys(state, radix):
    """Key of every DT node in the exact solver's indexing of partial
    assignments (the same set of tests gives the same key, whatever the
    order of the path)."""
    n_dt = state.counters[C_DT]
    keys = zeros(n_dt, np.int64)
    for dt in range(1, n_dt):
        keys[dt] = keys[state.dt_parent[dt]] + (state.dt_category[dt] + 1) * radix[state.dt_feature[dt]]
    return keys


@helper
def _rows_of(state, dt, bits, cat_offset, mask, out):
    """Rows of DT node ``dt`` written to ``out``; returns (count, steps)."""
    n_words = bits.shape[1]
    mask[:] = ~np.uint64(0)
    depth = 0
    node = dt
    while node > 0:
        cell = cat_offset[state.dt_feature[node]] + state.dt_category[node]
        for word in range(n_words):
            mask[word] &= bits[cell, word]
        depth += 1
        node = state.dt_parent[node]
    n = 0
    for word in range(n_words):
        w = mask[word]
        while w != np.uint64(0):
            low = w & (~w + np.uint64(1))
            row = word * 64 + _DEBRUIJN_INDEX[np.int64((low * _DEBRUIJN) >> np.uint64(58))]
            if row < out.shape[0]:
                out[n] = row
                n += 1
            w ^= low
    return n, (depth + 1) * n_words + n


@helper
def _assemble(state, majority, solved, exact, n_cat, tried, penalty, best, choice):
    """The DP of :func:`best_assembled_tree` where solved DT nodes take
    their exact value (choice -2)."""
    for dt in range(state.counters[C_DT] - 1, -1, -1):  # children are created after their parent
        if solved[dt]:
            best[dt] = exact[dt]
            choice[dt] = -2
            continue
        best[dt] = majority[dt]
        choice[dt] = -1
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


@kernel
def exact_completion(
    state,
    X,
    y,
    weight,
    counts,
    n_cat,
    cat_offset,
    tried,
    radix,
    n_classes,
    penalty,
    budget,
    table_keys,
    table_value,
    table_choice,
    stored,
):
    """The DP of :func:`best_assembled_tree` (``counts`` and values in
    rows, row ``r`` of ``X`` standing for ``weight[r]`` rows), where DT nodes
    that the exact solver finishes within ``budget`` (steps, shared;
    decremented) take their exact value. Rounds: assemble the best tree, solve exactly its nodes that
    a split could still improve (impure leaves and internal nodes, smallest
    first, so a parent reuses its children's entries of the one memo table),
    assemble again, until the tree's nodes are all solved (its root solved:
    the exact optimum) or a node does not fit the budget. Returns (choice per
    DT node: an attribute, -1 a leaf, -2 the exact subtree of the node's key
    in the table; the root's value in rows; the table; the key of every DT
    node, :func:`dt_keys`). Exact values are at
    least those of the tried splits, so the tree is never worse than the one
    of :func:`best_assembled_tree`."""
    n_dt = state.counters[C_DT]
    size, majority = _sizes_and_majorities(counts, n_dt)
    keys = dt_keys(state, radix)
    solved = zeros(n_dt, np.uint8)
    exact = zeros(n_dt, np.float64)
    best = zeros(n_dt, np.float64)
    choice = full(n_dt, -1, np.int64)
    bits = row_bits(X, cat_offset, state.slot_counts.shape[1])
    budget[1] -= bits.shape[0] * bits.shape[1] + X.shape[0] * X.shape[1]
    mask = empty(bits.shape[1], np.uint64)
    rows = empty(X.shape[0], np.int64)
    pending = empty(n_dt, np.int64)
    order_key = empty(n_dt, np.int64)
    stack = empty(n_dt + 1, np.int64)
    while True:
        _assemble(state, majority, solved, exact, n_cat, tried, penalty, best, choice)
        # The tree's nodes where a split could pay (every row right, one split) and not solved yet.
        n_pending = 0
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            dt = stack[top]
            if solved[dt]:
                continue
            if size[dt] > 0 and majority[dt] < size[dt] - penalty:
                pending[n_pending] = dt
                order_key[n_pending] = size[dt] * n_dt + (n_dt - 1 - dt)  # smallest first, children first
                n_pending += 1
            if choice[dt] >= 0:
                first = state.slot_child[state.dt_slot[dt], choice[dt]]
                for category in range(n_cat[choice[dt]]):
                    stack[top] = first + category
                    top += 1
        if n_pending == 0 or budget[1] < 0:
            return choice, best[0], table_keys, table_value, table_choice, keys
        sort_by_key(order_key, pending, n_pending)  # distinct keys: the order of np.argsort
        for dt in pending[:n_pending]:
            slot = _find(table_keys, keys[dt])
            if table_keys[slot] == keys[dt]:  # the same tests in another order, or inside a node solved before
                solved[dt] = 1
                exact[dt] = table_value[slot]
                continue
            n, steps = _rows_of(state, dt, bits, cat_offset, mask, rows)
            budget[1] -= steps
            value, table_keys, table_value, table_choice = _solve_node(
                X,
                y,
                weight,
                rows[:n],
                keys[dt],
                n_cat,
                radix,
                n_classes,
                penalty,
                budget,
                table_keys,
                table_value,
                table_choice,
                stored,
            )
            if value == ABORTED:
                budget[1] = -1
                break
            solved[dt] = 1
            exact[dt] = value


# ------------------------------------------------------- multiway trees
@kernel
def apply_categorical(X, feature, first_child, n_categories):
    """Node reached by each row in a multiway tree; a row stops at the node
    whose split meets a category the tree has no child for (negative, too
    large, NaN), so it gets that node's majority class."""
    out = empty(X.shape[0], np.int64)
    for row in range(X.shape[0]):
        node = 0
        while feature[node] >= 0:
            x = X[row, feature[node]]
            if not (x >= 0.0 and x < n_categories[feature[node]]):
                break
            node = first_child[node] + np.int64(x)
        out[row] = node
    return out


@kernel
def node_class_counts(X, y, weight, n_classes, feature, first_child, n_categories):
    """Class counts (row ``r`` counting ``weight[r]``) of every node a row passes in a multiway
    tree, the root included."""
    counts = zeros((feature.shape[0], n_classes), np.int64)
    for row in range(X.shape[0]):
        node = 0
        counts[node, y[row]] += weight[row]
        while feature[node] >= 0:
            x = X[row, feature[node]]
            if x < 0 or x >= n_categories[feature[node]]:
                break
            node = first_child[node] + np.int64(x)
            counts[node, y[row]] += weight[row]
    return counts
