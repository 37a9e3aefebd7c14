"""TSDT kernels, state: the preallocated arrays of a running search
(:class:`SearchState`), their constants and the leaf statistics read from
them; the layout is described in :mod:`._kernels`."""

from typing import NamedTuple

import numpy as np

from .._numba_config import helper

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


@helper
def _argmax_first(counts):
    best = 0
    for k in range(1, counts.shape[0]):
        if counts[k] > counts[best]:
            best = k
    return best


@helper
def _leaf_counts(state, node, n_cat_offset):
    """Class counts of DT node ``node`` as a leaf, and its prequential correct count."""
    if node == 0:
        return state.root_counts, state.counters[C_ROOT_CORRECT]
    parent_slot = state.dt_slot[state.dt_parent[node]]
    cell = n_cat_offset[state.dt_feature[node]] + state.dt_category[node]
    return state.slot_counts[parent_slot, cell], state.slot_correct[parent_slot, cell]
