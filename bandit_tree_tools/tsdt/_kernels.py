"""Numba kernels of TSDT and Fast-TSDT (Chaouki, Read & Bifet, AISTATS 2024).

Two trees live here. The *decision-tree nodes* ("DT nodes") are identified by
their root-to-node path (a sequence of attribute = category tests); each is
created once and shared by every candidate tree that contains the path, so its
statistics are never copied (paper, section 4.3). The *search nodes* are the
states of the Monte Carlo search: a search node is its parent's tree plus one
split (or, for a "stop" child, the same tree declared terminal), so a tree is
stored as the chain of splits from the search root.

Statistics. A DT node that has received data owns a *slot* holding, for every
attribute ``j`` and category ``v``: the class counts ``n_jvk`` of the rows it
saw and the prequential count of rows that ``argmax_k n_jvk`` (computed before
the row was counted) classified correctly. The child of node ``p`` for
``x_f = v`` is the set of rows of ``p`` with ``x_f = v``, so its own class
counts and prequential accuracy (equations 4-6 and the ``m(l_ij)`` statistic of
section 4.3) are exactly the cell ``(f, v)`` of ``p``'s slot: children always
see every row their parent saw, which is the point of not copying nodes. The
root's leaf statistics are kept apart.

Everything is in preallocated arrays (:class:`SearchState`); when one runs out,
the kernel returns ``NEEDS_SPACE`` before touching anything and the Python side
grows the arrays and calls again.

This module holds the search itself (simulation, expansion, the main loop);
the state is in :mod:`._kernels_state`, the posteriors of trees in
:mod:`._kernels_posterior` and what is computed after the search in
:mod:`._kernels_result`. Their names are importable from here.
"""

import numpy as np

from .._kernels_inline import zeros
from .._numba_config import helper, kernel
from ..bandits._random import normal as _normal
from ..bandits._random import shuffle as _shuffle
from ..tree._impurity import GINI, class_impurity
from ._kernels_posterior import (  # noqa: F401 (re-exported)
    _combine_children,
    _evaluate_child,
    _mark,
    _posterior,
    _tree_size,
    beta_normal,
    clark_max,
    evaluate_marked_tree,
)
from ._kernels_result import (  # noqa: F401 (re-exported)
    apply_categorical,
    best_assembled_tree,
    counting_work,
    current_lower_bounds,
    dt_keys,
    exact_completion,
    exact_dt_counts,
    exact_objectives,
    node_class_counts,
    tried_split_counts,
    tried_splits,
)
from ._kernels_state import (  # noqa: F401 (re-exported)
    C_DT,
    C_PENDING,
    C_POOL,
    C_POSITION,
    C_ROOT_CORRECT,
    C_SEARCH,
    C_SLOTS,
    DONE,
    EXPANDED,
    EXPANDING,
    MIN_SAMPLES,
    N_COUNTERS,
    NEEDS_SPACE,
    PURE_GINI,
    UNVISITED,
    SearchState,
    _argmax_first,
    _leaf_counts,
)


# ----------------------------------------------------------------- simulation
@helper
def _allocate_slot(state, node):
    slot = state.counters[C_SLOTS]
    state.counters[C_SLOTS] += 1
    state.dt_slot[node] = slot
    state.slot_total[slot] = 0
    state.slot_counts[slot, :, :] = 0
    state.slot_correct[slot, :] = 0
    state.slot_child[slot, :] = -1
    return slot


@helper
def _observe(state, x, label, cat_offset):
    """Send one row down the marked tree, updating every node on its path:
    the prediction is made before the row is counted (prequential)."""
    counts = state.root_counts
    seen = 0
    for k in range(counts.shape[0]):
        seen += counts[k]
    if seen > 0 and _argmax_first(counts) == label:
        state.counters[C_ROOT_CORRECT] += 1
    counts[label] += 1
    node = 0
    n_classes = counts.shape[0]
    slot_counts = state.slot_counts
    slot_correct = state.slot_correct
    while True:
        slot = state.dt_slot[node]
        if slot < 0:
            slot = _allocate_slot(state, np.int64(node))  # int64, never a literal: one specialization
        for attribute in range(cat_offset.shape[0]):
            cell = cat_offset[attribute] + x[attribute]
            best = -1
            predicted = 0
            for k in range(n_classes):
                if slot_counts[slot, cell, k] > best:
                    best = slot_counts[slot, cell, k]
                    predicted = k
            if best > 0 and predicted == label:  # best > 0: the cell has rows, so a prediction exists
                slot_correct[slot, cell] += 1
            slot_counts[slot, cell, label] += 1
        state.slot_total[slot] += 1
        feature = state.split_of[node]
        if feature < 0:
            return
        node = state.slot_child[slot, feature] + x[feature]


# ------------------------------------------------------------------ expansion
@helper
def _new_search_node(state, parent, split_leaf, split_feature, n_splits, is_stop):
    node = state.counters[C_SEARCH]
    state.counters[C_SEARCH] += 1
    state.s_parent[node] = parent
    state.s_split_leaf[node] = split_leaf
    state.s_split_feature[node] = split_feature
    state.s_n_splits[node] = n_splits
    state.s_is_stop[node] = is_stop
    state.s_state[node] = EXPANDED if is_stop else UNVISITED
    state.s_first_child[node] = -1
    state.s_last_child[node] = -1
    state.s_next_sibling[node] = -1
    state.s_visits[node] = 0
    state.s_mu[node] = 0.0
    state.s_sd[node] = 0.0
    state.s_wide[node] = 0.0
    state.s_pool_start[node] = 0
    state.s_pool_len[node] = 0
    if parent >= 0:
        if state.s_first_child[parent] < 0:
            state.s_first_child[parent] = node
        else:
            state.s_next_sibling[state.s_last_child[parent]] = node
        state.s_last_child[parent] = node
    return node


@helper
def _activate(state, node, n_cat):
    """List the leaves of the marked tree that can be split: enough rows of
    their own and an attribute left on their path (purity is checked when a
    leaf is picked, with the statistics of that moment)."""
    n_features = n_cat.shape[0]
    start = state.counters[C_POOL]
    count = 0
    top = 1
    state.stack_node[0] = 0
    while top > 0:
        top -= 1
        dt = state.stack_node[top]
        feature = state.split_of[dt]
        if feature >= 0:
            first = state.slot_child[state.dt_slot[dt], feature]
            for category in range(n_cat[feature]):
                state.stack_node[top] = first + category
                top += 1
        else:
            slot = state.dt_slot[dt]
            if slot >= 0 and state.slot_total[slot] >= MIN_SAMPLES and state.dt_depth[dt] < n_features:
                state.pool_leaf[start + count] = dt
                state.pool_done[start + count] = 0
                count += 1
    state.counters[C_POOL] += count
    state.s_pool_start[node] = start
    state.s_pool_len[node] = count


@helper
def _gini(counts):
    """Gini impurity of a leaf's class counts (the shared definition)."""
    total = 0
    for k in range(counts.shape[0]):
        total += counts[k]
    return class_impurity(counts, np.float64(total), np.int64(GINI))  # a global is a literal: one compilation


@helper
def _expand_one_leaf(state, node, n_cat, cat_offset, lambda_, gamma, clark, divisor, blocked, used):
    """Expansion (appendix B): split the untreated leaf of highest Gini impurity
    on every attribute left on its path (but the ``blocked`` ones), add the
    "stop" child on the first expansion, refresh the children's posteriors
    from the shared statistics and set the node's posterior from them.
    Returns nothing; the node becomes EXPANDED when no untreated leaf is
    left."""
    n_features = n_cat.shape[0]
    start = state.s_pool_start[node]
    best = -1
    best_gini = -1.0
    for i in range(start, start + state.s_pool_len[node]):
        if state.pool_done[i] == 0:
            counts, _ = _leaf_counts(state, state.pool_leaf[i], cat_offset)
            impurity = _gini(counts)
            if impurity > best_gini:
                best_gini = impurity
                best = i
    if best < 0 or best_gini <= PURE_GINI:
        # Only pure leaves are left: nothing worth splitting (reference: thresh_leaf).
        for i in range(start, start + state.s_pool_len[node]):
            state.pool_done[i] = 1
    else:
        state.pool_done[best] = 1
        leaf = state.pool_leaf[best]
        if state.s_first_child[node] < 0:
            _new_search_node(state, node, np.int64(-1), np.int64(-1), state.s_n_splits[node], np.int64(1))
        for feature in range(n_features):
            used[feature] = blocked[feature]
        dt = leaf
        while dt > 0:
            used[state.dt_feature[dt]] = 1
            dt = state.dt_parent[dt]
        slot = state.dt_slot[leaf]
        for feature in range(n_features):
            if used[feature]:
                continue
            if state.slot_child[slot, feature] < 0:
                first = state.counters[C_DT]
                for category in range(n_cat[feature]):
                    child = first + category
                    state.dt_parent[child] = leaf
                    state.dt_feature[child] = feature
                    state.dt_category[child] = category
                    state.dt_depth[child] = state.dt_depth[leaf] + 1
                    state.dt_slot[child] = -1
                    state.split_of[child] = -1
                state.counters[C_DT] += n_cat[feature]
                state.slot_child[slot, feature] = first
            _new_search_node(state, node, leaf, feature, state.s_n_splits[node] + 1, np.int64(0))
    remaining = 0
    for i in range(start, start + state.s_pool_len[node]):
        if state.pool_done[i] == 0:
            remaining += 1
    if remaining == 0:
        state.s_state[node] = EXPANDED
    else:
        state.s_state[node] = EXPANDING
    if state.s_first_child[node] < 0:
        # Nothing was ever split: the node is a terminal tree.
        state.s_mu[node], state.s_sd[node] = evaluate_marked_tree(
            state, state.s_n_splits[node], n_cat, cat_offset, lambda_, gamma
        )
        state.s_wide[node] = state.s_sd[node]
        return
    # The children have never been selected (selection stops at a node that is
    # not fully expanded), so they are search leaves: refresh each one.
    child = state.s_first_child[node]
    while child >= 0:
        _evaluate_child(state, child, n_cat, cat_offset, lambda_, gamma, divisor)
        child = state.s_next_sibling[child]
    _combine_children(state, node, clark)


# ------------------------------------------------------------------ main loop
@helper
def _select(state, wide):
    """Thompson sampling down the search tree: at every fully expanded node,
    draw one value from each child's Normal posterior (with the widened sd
    if ``wide``) and follow the largest."""
    node = 0
    while state.s_state[node] == EXPANDED and state.s_first_child[node] >= 0:
        best = -np.inf
        pick = state.s_first_child[node]
        child = pick
        while child >= 0:
            spread = state.s_wide[child] if wide else state.s_sd[child]
            draw = state.s_mu[child] + spread * _normal(state.rng)
            if draw > best:
                best = draw
                pick = child
            child = state.s_next_sibling[child]
        node = pick
    return node


@helper
def _has_space(state, node, n_cat, n_cells):
    size = _tree_size(state, node, n_cat)
    return (
        state.counters[C_DT] + n_cells <= state.dt_parent.shape[0]
        and state.counters[C_SEARCH] + n_cat.shape[0] + 1 <= state.s_parent.shape[0]
        and state.counters[C_SLOTS] + size <= state.slot_total.shape[0]
        and state.counters[C_POOL] + size <= state.pool_leaf.shape[0]
    )


@kernel
def run_search(
    state,
    X,
    y,
    order,
    n_iter,
    batch_size,
    cycle,
    n_cat,
    cat_offset,
    lambda_,
    gamma,
    clark,
    divisor,
    blocked,
    trace_mu,
    trace_sd,
):
    """Run up to ``n_iter`` iterations of (Fast-)TSDT (Algorithm 1).

    Each iteration: select a search node by Thompson sampling, stream
    ``batch_size`` rows of ``X[order]`` through its tree, expand one of its
    untreated leaves (or, for a terminal tree, refresh its posterior), then
    back-propagate to the root, refreshing every ancestor's "stop" child on
    the way (its leaves' shared statistics have just changed). With ``cycle``
    the rows are reshuffled and reused when exhausted (a data set replayed
    as a stream); without it the call ends when the rows run out.

    Returns ``(iterations done, DONE or NEEDS_SPACE)``; the root posterior
    after each iteration is written to ``trace_mu`` and ``trace_sd``.
    Attributes flagged in ``blocked`` (uint8) are never split.
    """
    n_cells = state.slot_counts.shape[1]
    n_rows = X.shape[0]
    used = zeros(n_cat.shape[0], np.uint8)
    done = 0
    while done < n_iter:
        if not cycle and state.counters[C_POSITION] >= n_rows:
            break
        node = state.counters[C_PENDING]
        if node < 0:
            node = _select(state, divisor > 0.0)
        if not _has_space(state, node, n_cat, n_cells):
            state.counters[C_PENDING] = node  # resume here once the arrays have grown
            return done, NEEDS_SPACE
        state.counters[C_PENDING] = -1
        ancestor = node
        while ancestor >= 0:
            state.s_visits[ancestor] += 1
            ancestor = state.s_parent[ancestor]
        _mark(state, node, True)
        for _ in range(batch_size):
            if state.counters[C_POSITION] >= n_rows:
                if not cycle:
                    break
                _shuffle(order, state.rng)
                state.counters[C_POSITION] = 0
            row = order[state.counters[C_POSITION]]
            state.counters[C_POSITION] += 1
            _observe(state, X[row], y[row], cat_offset)
        if state.s_state[node] != EXPANDED:
            if state.s_state[node] == UNVISITED:
                _activate(state, node, n_cat)
            _expand_one_leaf(state, node, n_cat, cat_offset, lambda_, gamma, clark, divisor, blocked, used)
        else:
            state.s_mu[node], state.s_sd[node] = evaluate_marked_tree(
                state, state.s_n_splits[node], n_cat, cat_offset, lambda_, gamma
            )
            state.s_wide[node] = state.s_sd[node]
        child = node
        while True:
            leaf = state.s_split_leaf[child]
            if leaf >= 0:
                state.split_of[leaf] = -1  # the marked tree is now the parent's
            parent = state.s_parent[child]
            if parent < 0:
                break
            stop = state.s_first_child[parent]
            if state.s_is_stop[stop] == 1:
                state.s_mu[stop], state.s_sd[stop] = evaluate_marked_tree(
                    state, state.s_n_splits[parent], n_cat, cat_offset, lambda_, gamma
                )
                state.s_wide[stop] = state.s_sd[stop]
            _combine_children(state, parent, clark)
            child = parent
        trace_mu[done] = state.s_mu[0]
        trace_sd[done] = state.s_sd[0]
        done += 1
    return done, DONE
