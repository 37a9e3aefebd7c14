"""The routing engine's breadth-first renumbering against a queue per tree."""

import numpy as np
import pytest

from bandit_tree_tools.exceptions import InvalidTreeError
from bandit_tree_tools.tree import node_offsets
from bandit_tree_tools.tree._arrays import breadth_first_positions
from bandit_tree_tools.tree._kernels import LOCKSTEP_DEPTH
from bandit_tree_tools.tree._packing import breadth_first
from tests.oracles.tree import reference_breadth_first
from tests.tree.random_trees import random_tree


def _stacked(trees):
    left = np.concatenate([tree.children_left for tree in trees])
    right = np.concatenate([tree.children_right for tree in trees])
    return node_offsets(trees), left, right


def _chain(depth):
    """A tree whose left child is always a leaf: ``depth`` levels, one split each."""
    n = 2 * depth + 1
    left, right = np.full(n, -1), np.full(n, -1)
    for level in range(depth):
        left[2 * level], right[2 * level] = 2 * level + 1, 2 * level + 2
    return left, right


@pytest.mark.parametrize("seed", range(20))
def test_random_trees_renumber_as_a_queue_does(seed):
    rng = np.random.default_rng(seed)
    trees = [random_tree(rng, max_depth=int(rng.integers(0, 16))) for _ in range(int(rng.integers(1, 6)))]
    offsets, left, right = _stacked(trees)
    got = breadth_first(offsets, left, right)
    want = reference_breadth_first(offsets, left, right, LOCKSTEP_DEPTH)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_deep_chains_beside_a_stump_take_their_lockstep_from_the_shallowest_leaf():
    parts = [_chain(40), (np.array([-1]), np.array([-1])), _chain(13)]
    offsets = np.cumsum([0] + [len(left) for left, _ in parts])
    left, right = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    new_of_old, depth, lockstep = breadth_first(offsets, left, right)
    np.testing.assert_array_equal(depth, [40, 0, 13])
    np.testing.assert_array_equal(lockstep, [20, 0, 6])  # deep: half the depth, at least the first leaf's (1)
    want = reference_breadth_first(offsets, left, right, LOCKSTEP_DEPTH)
    np.testing.assert_array_equal(new_of_old, want[0])


def test_a_node_shared_by_two_parents_or_a_cycle_is_refused():
    left, right = np.array([1, 3, -1, -1]), np.array([2, 3, -1, -1])  # node 3 is both children of node 1
    with pytest.raises(InvalidTreeError, match="child of two parents"):
        breadth_first_positions(np.array([0, 4]), left, right)
    cycle_left, cycle_right = np.array([1, 0, -1]), np.array([2, -1, -1])  # node 1's left child is the root
    with pytest.raises(InvalidTreeError, match="form a cycle"):
        breadth_first_positions(np.array([0, 3]), cycle_left, cycle_right)


def test_children_shared_level_after_level_are_refused_before_the_levels_grow():
    # node k's two children are both node k + 1: each level would double without a bound
    depth = 80
    left = np.append(np.arange(1, depth + 1), -1)
    with pytest.raises(InvalidTreeError, match="child of two parents"):
        breadth_first_positions(np.array([0, depth + 1]), left, left.copy())


def test_a_node_no_root_reaches_keeps_position_minus_one():
    left, right = np.array([1, -1, -1, -1]), np.array([2, -1, -1, -1])  # node 3 hangs from nothing
    position, level = breadth_first_positions(np.array([0, 4]), left, right)
    np.testing.assert_array_equal(position, [0, 1, 2, -1])
    np.testing.assert_array_equal(level, [0, 1, 1, -1])
