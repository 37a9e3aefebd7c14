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
"""

import math
from typing import NamedTuple

import numba
import numpy as np

from ..bandits._random import normal as _normal
from ..bandits._random import shuffle as _shuffle
from ..tree._impurity import GINI, class_impurity

DONE = 0
NEEDS_SPACE = 1

# search-node states
UNVISITED = 0  # never simulated: its untreated leaves are not known yet
EXPANDING = 1  # some leaves still untreated: the node is selected itself
EXPANDED = 2  # every leaf treated (or a stop node): selection goes through it

# counters[...]
C_DT, C_SLOTS, C_SEARCH, C_POOL, C_PENDING, C_POSITION, C_ROOT_CORRECT = range(7)
N_COUNTERS = 8

MIN_SAMPLES = 2  # a leaf needs this many rows of its own before it is split (reference: min_samples)
PURE_GINI = 1e-6  # leaves at most this impure are never split (reference: thresh_leaf)


class SearchState(NamedTuple):
    """Every array of a running search (numba takes the tuple as is).

    Capacities: ``dt_*`` and the scratch arrays by DT node, ``slot_*`` by
    slot, ``s_*`` by search node, ``pool_*`` by pool entry (the untreated
    leaves of each visited search node, ``s_pool_start[t]`` to
    ``s_pool_start[t] + s_pool_len[t]``).
    """

    counters: np.ndarray  # int64 (N_COUNTERS,)
    rng: np.ndarray  # uint64 (4,): the kernels' generator state (bandits._random)
    root_counts: np.ndarray  # int64 (K,)
    dt_parent: np.ndarray  # int64
    dt_feature: np.ndarray  # int64: attribute of the parent's split, -1 at the root
    dt_category: np.ndarray  # int64
    dt_depth: np.ndarray  # int64
    dt_slot: np.ndarray  # int64, -1 until the node sees a row
    split_of: np.ndarray  # int64 scratch: attribute a DT node is split on in the current tree, else -1
    stack_node: np.ndarray  # int64 scratch
    stack_weight: np.ndarray  # float64 scratch
    slot_counts: np.ndarray  # int64 (slots, n_cells, K)
    slot_correct: np.ndarray  # int64 (slots, n_cells)
    slot_total: np.ndarray  # int64 (slots,)
    slot_child: np.ndarray  # int64 (slots, n_features): first DT child of the split on f, -1 if never split
    s_parent: np.ndarray  # int64
    s_split_leaf: np.ndarray  # int64: DT node split to go from the parent's tree to this one, -1 for stop/root
    s_split_feature: np.ndarray  # int64
    s_n_splits: np.ndarray  # int64
    s_is_stop: np.ndarray  # uint8
    s_state: np.ndarray  # uint8
    s_first_child: np.ndarray  # int64
    s_last_child: np.ndarray  # int64
    s_next_sibling: np.ndarray  # int64
    s_visits: np.ndarray  # int64
    s_mu: np.ndarray  # float64
    s_sd: np.ndarray  # float64
    s_wide: np.ndarray  # float64: sd widened by the gain bound (optimistic search), else s_sd
    s_pool_start: np.ndarray  # int64
    s_pool_len: np.ndarray  # int64
    pool_leaf: np.ndarray  # int64
    pool_done: np.ndarray  # uint8


@numba.njit(cache=True)
def clark_max(mu1, sd1, mu2, sd2):
    """Clark's (1961) Normal approximation of max(N(mu1, sd1^2), N(mu2, sd2^2))
    for independent variables. The spread is ``a = sqrt(sd1^2 + sd2^2)``, a
    standard deviation: the TSDT paper (appendix C) and its reference code
    use the variance ``sd1^2 + sd2^2`` there, which is wrong."""
    a = math.sqrt(sd1 * sd1 + sd2 * sd2)
    if a < 1e-300:
        if mu1 >= mu2:
            return mu1, sd1
        return mu2, sd2
    alpha = (mu1 - mu2) / a
    cdf = 0.5 * math.erfc(-alpha / math.sqrt(2.0))
    cdf_minus = 0.5 * math.erfc(alpha / math.sqrt(2.0))
    pdf = math.exp(-0.5 * alpha * alpha) / math.sqrt(2.0 * math.pi)
    mu = mu1 * cdf + mu2 * cdf_minus + a * pdf
    second = (mu1 * mu1 + sd1 * sd1) * cdf + (mu2 * mu2 + sd2 * sd2) * cdf_minus + (mu1 + mu2) * a * pdf
    variance = second - mu * mu
    if variance < 0.0:  # rounding when one variable dominates
        variance = 0.0
    return mu, math.sqrt(variance)


@numba.njit(cache=True)
def beta_normal(correct, n_rows):
    """Mean and sd of the Normal matching Beta(1 + correct, 1 + scored - correct),
    where the first row of a leaf is not scored (no prediction exists yet:
    equations 5-6 sum from i = 2)."""
    scored = n_rows - 1 if n_rows > 0 else 0
    alpha = 1.0 + correct
    beta = 1.0 + scored - correct
    total = alpha + beta
    return alpha / total, math.sqrt(alpha * beta / (total * total * (total + 1.0)))


@numba.njit(cache=True)
def _argmax_first(counts):
    best = 0
    for k in range(1, counts.shape[0]):
        if counts[k] > counts[best]:
            best = k
    return best


@numba.njit(cache=True)
def _leaf_counts(state, node, n_cat_offset):
    """Class counts of DT node ``node`` as a leaf, and its prequential correct count."""
    if node == 0:
        return state.root_counts, state.counters[C_ROOT_CORRECT]
    parent_slot = state.dt_slot[state.dt_parent[node]]
    cell = n_cat_offset[state.dt_feature[node]] + state.dt_category[node]
    return state.slot_counts[parent_slot, cell], state.slot_correct[parent_slot, cell]


# --------------------------------------------------------------- tree marking
@numba.njit(cache=True)
def _mark(state, search_node, value_if_set):
    """Write (value_if_set=True) or clear the splits of ``search_node``'s tree in ``split_of``."""
    node = search_node
    while node >= 0:
        leaf = state.s_split_leaf[node]
        if leaf >= 0:
            state.split_of[leaf] = state.s_split_feature[node] if value_if_set else -1
        node = state.s_parent[node]


@numba.njit(cache=True)
def _tree_size(state, search_node, n_cat):
    size = 1
    node = search_node
    while node >= 0:
        if state.s_split_leaf[node] >= 0:
            size += n_cat[state.s_split_feature[node]]
        node = state.s_parent[node]
    return size


@numba.njit(cache=True)
def evaluate_marked_tree(state, n_splits, n_cat, cat_offset, lambda_, gamma, divisor=0.0):
    """Posterior (mu, sd) of the tree written in ``split_of``; with
    ``divisor > 0``, sd is at least gain / divisor (the gain bound of
    :func:`_posterior`: the spread of the optimistic search)."""
    mu, sd, gain = _posterior(state, n_splits, n_cat, cat_offset, lambda_, gamma)
    if divisor > 0.0 and gain / divisor > sd:
        sd = gain / divisor
    return mu, sd


@numba.njit(cache=True)
def _posterior(state, n_splits, n_cat, cat_offset, lambda_, gamma):
    """Posterior N(mu, sd^2) of the tree currently written in ``split_of``:
    mu = sum_l p(l) mu_l - lambda * splits and
    sd = (sum_l (p(l) sd_l)^2)^(gamma / 2) (equations 9-10 with the gamma
    exponent of appendix B applied to the standard deviation, as the
    reference code does), where p(l) is the chain-rule estimator of
    section 4.4: the product along the path of n(node) / n(parent).

    Returns ``(mu, sd, gain)``, where ``gain`` is an upper bound of what
    splitting its leaves further can add:
    ``sum_l max(0, p(l) * (1 - majority share of l) - lambda)`` over the
    leaves that can still be split (a deeper tree is at best right on every
    row of the leaf, and costs at least one more split)."""
    mean = 0.0
    variance = 0.0
    gain = 0.0
    n_features = n_cat.shape[0]
    state.stack_node[0] = 0
    state.stack_weight[0] = 1.0
    top = 1
    while top > 0:
        top -= 1
        node = state.stack_node[top]
        weight = state.stack_weight[top]
        feature = state.split_of[node]
        if feature >= 0:
            slot = state.dt_slot[node]
            total = state.slot_total[slot]
            first = state.slot_child[slot, feature]
            for category in range(n_cat[feature]):
                cell = cat_offset[feature] + category
                n_child = 0
                for k in range(state.slot_counts.shape[2]):
                    n_child += state.slot_counts[slot, cell, k]
                if n_child > 0:  # empty children have p = 0 and add nothing
                    state.stack_node[top] = first + category
                    state.stack_weight[top] = weight * n_child / total
                    top += 1
        else:
            counts, correct = _leaf_counts(state, node, cat_offset)
            n_rows = 0
            for k in range(counts.shape[0]):
                n_rows += counts[k]
            if n_rows > 0:
                leaf_mu, leaf_sd = beta_normal(correct, n_rows)
                mean += weight * leaf_mu
                variance += weight * weight * leaf_sd * leaf_sd
                if n_rows >= MIN_SAMPLES and state.dt_depth[node] < n_features:
                    majority = 0
                    for k in range(counts.shape[0]):
                        if counts[k] > majority:
                            majority = counts[k]
                    room = weight * (1.0 - majority / n_rows) - lambda_
                    if room > 0.0:
                        gain += room
    return mean - lambda_ * n_splits, variance ** (0.5 * gamma), gain


@numba.njit(cache=True)
def _evaluate_child(state, child, n_cat, cat_offset, lambda_, gamma, divisor):
    """Posterior of a child of the search node whose tree is marked, and its
    sd widened by the gain bound (a "stop" child is final: not widened)."""
    leaf = state.s_split_leaf[child]
    if leaf >= 0:
        state.split_of[leaf] = state.s_split_feature[child]
    mu, sd, gain = _posterior(state, state.s_n_splits[child], n_cat, cat_offset, lambda_, gamma)
    if leaf >= 0:
        state.split_of[leaf] = -1
    state.s_mu[child] = mu
    state.s_sd[child] = sd
    wide = sd
    if divisor > 0.0 and state.s_is_stop[child] == 0 and gain / divisor > sd:
        wide = gain / divisor
    state.s_wide[child] = wide


@numba.njit(cache=True)
def _combine_children(state, node, clark):
    """Back-propagation rule: Fast-TSDT takes the child with the largest
    posterior mean (equation 12); TSDT folds Clark's approximation over the
    children in order (appendix C)."""
    child = state.s_first_child[node]
    mu = state.s_mu[child]
    sd = state.s_sd[child]
    wide = state.s_wide[child]
    child = state.s_next_sibling[child]
    while child >= 0:
        if clark:
            mu, sd = clark_max(mu, sd, state.s_mu[child], state.s_sd[child])
            wide = sd
        elif state.s_mu[child] > mu:
            mu = state.s_mu[child]
            sd = state.s_sd[child]
            wide = state.s_wide[child]
        child = state.s_next_sibling[child]
    state.s_mu[node] = mu
    state.s_sd[node] = sd
    state.s_wide[node] = wide


# ----------------------------------------------------------------- simulation
@numba.njit(cache=True)
def _allocate_slot(state, node):
    slot = state.counters[C_SLOTS]
    state.counters[C_SLOTS] += 1
    state.dt_slot[node] = slot
    state.slot_total[slot] = 0
    state.slot_counts[slot, :, :] = 0
    state.slot_correct[slot, :] = 0
    state.slot_child[slot, :] = -1
    return slot


@numba.njit(cache=True)
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
            slot = _allocate_slot(state, node)
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
@numba.njit(cache=True)
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


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def _gini(counts):
    """Gini impurity of a leaf's class counts (the shared definition)."""
    total = 0
    for k in range(counts.shape[0]):
        total += counts[k]
    return class_impurity(counts, np.float64(total), GINI)


@numba.njit(cache=True)
def _expand_one_leaf(state, node, n_cat, cat_offset, lambda_, gamma, clark, divisor, used):
    """Expansion (appendix B): split the untreated leaf of highest Gini impurity
    on every attribute left on its path, add the "stop" child on the first
    expansion, refresh the children's posteriors from the shared statistics
    and set the node's posterior from them. Returns nothing; the node becomes
    EXPANDED when no untreated leaf is left."""
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
            _new_search_node(state, node, -1, -1, state.s_n_splits[node], 1)
        used[:] = 0
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
            _new_search_node(state, node, leaf, feature, state.s_n_splits[node] + 1, 0)
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
@numba.njit(cache=True)
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


@numba.njit(cache=True)
def _has_space(state, node, n_cat, n_cells):
    size = _tree_size(state, node, n_cat)
    return (
        state.counters[C_DT] + n_cells <= state.dt_parent.shape[0]
        and state.counters[C_SEARCH] + n_cat.shape[0] + 1 <= state.s_parent.shape[0]
        and state.counters[C_SLOTS] + size <= state.slot_total.shape[0]
        and state.counters[C_POOL] + size <= state.pool_leaf.shape[0]
    )


@numba.njit(cache=True)
def run_search(
    state, X, y, order, n_iter, batch_size, cycle, n_cat, cat_offset, lambda_, gamma, clark, divisor, trace_mu,
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
    """
    n_cells = state.slot_counts.shape[1]
    n_rows = X.shape[0]
    used = np.zeros(n_cat.shape[0], dtype=np.uint8)
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
            _expand_one_leaf(state, node, n_cat, cat_offset, lambda_, gamma, clark, divisor, used)
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
