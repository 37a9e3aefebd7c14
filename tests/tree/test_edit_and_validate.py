import pickle

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bandit_tree_tools import ConversionError, InvalidTreeError, NodeError, collapse, make_tree
from bandit_tree_tools.tree import (
    Source,
    node_depth,
    node_parent,
    outermost_nodes,
    subtree_nodes,
    subtree_sums,
    validate,
)
from bandit_tree_tools.tree._edit import rebuilt_node_ids
from tests.oracles.tree import reference_leaf
from tests.tree.random_trees import probe_rows, random_ensemble, random_tree


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_collapse_predicts_like_stopping_at_the_collapsed_node(seed):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng, n_trees=2)
    before = pickle.dumps(ensemble.trees)
    tree = ensemble.trees[0]
    internal = np.flatnonzero(tree.children_left != -1)
    assume(internal.size > 0)
    chosen = rng.choice(internal, size=min(3, internal.size), replace=False)
    collapsed = collapse(ensemble, {0: chosen})
    assert pickle.dumps(ensemble.trees) == before  # the input is untouched
    new = collapsed.trees[0]
    validate(new)
    X = probe_rows(rng, ensemble, n_rows=100)
    cast = X.astype(np.float32).astype(np.float64) if ensemble.input_dtype == "float32" else X
    stops = set(int(node) for node in chosen)
    parent = node_parent(tree)
    for row, leaf in zip(cast, collapsed.apply(X)[:, 0]):
        old_leaf = reference_leaf(tree, row, ensemble.split_rule)
        # the first collapsed ancestor on the old path, if any, is where the row stops
        path, node = [], old_leaf
        while node != -1:
            path.append(node)
            node = parent[node]
        stop = next((node for node in reversed(path) if node in stops), old_leaf)
        np.testing.assert_array_equal(new.value[leaf], tree.value[stop])
        assert new.n_node_samples[leaf] == tree.n_node_samples[stop]
    # counts stay consistent and the leaf count drops by what the subtrees held
    removed = set()
    for node in stops:
        removed |= set(subtree_nodes(tree, node)[1:].tolist())
    assert new.n_nodes == tree.n_nodes - len(removed)
    assert collapsed.trees[1] is ensemble.trees[1]


def test_collapse_refuses_leaves_and_unknown_nodes():
    ensemble = random_ensemble(np.random.default_rng(3), n_trees=2)
    tree = ensemble.trees[0]
    leaf = int(np.flatnonzero(tree.children_left == -1)[0])
    with pytest.raises(NodeError, match="already a leaf"):
        collapse(ensemble, {0: [leaf]})
    with pytest.raises(NodeError, match="does not exist in tree 0"):
        collapse(ensemble, {0: [tree.n_nodes]})
    with pytest.raises(NodeError, match="tree index 5 does not exist"):
        collapse(ensemble, {5: [0]})
    with pytest.raises(TypeError, match="dict"):
        collapse(ensemble, [0])


def test_collapse_refuses_nodes_without_a_leaf_value():
    rng = np.random.default_rng(4)
    tree = random_tree(rng, max_depth=2, p_split=1.0)
    unknown = make_tree(
        tree.children_left,
        tree.children_right,
        tree.feature,
        tree.threshold,
        tree.value,
        has_leaf_value=np.zeros(tree.n_nodes),
    )
    source = Source("sklearn", "GradientBoostingClassifier", collapse_hint="Pass X and y.")
    ensemble = random_ensemble(rng, n_trees=1, source=source).replace_trees([unknown])
    with pytest.raises(ConversionError, match="does not store the value.*Pass X and y"):
        collapse(ensemble, {0: [0]})
    # the payload key importers used before Source.collapse_hint still works
    older = Source("sklearn", "GradientBoostingClassifier", payload={"collapse_hint": "Pass X and y, too."})
    ensemble = random_ensemble(rng, n_trees=1, source=older).replace_trees([unknown])
    with pytest.raises(ConversionError, match="does not store the value.*Pass X and y, too"):
        collapse(ensemble, {0: [0]})


def test_depth_parent_and_subtree_helpers():
    tree = make_tree([1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [0, 1, -2, -2, -2], [0.5, 1.5, 0, 0, 0], np.arange(5.0))
    np.testing.assert_array_equal(node_depth(tree), [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(node_parent(tree), [-1, 0, 0, 1, 1])
    np.testing.assert_array_equal(subtree_nodes(tree, 1), [1, 3, 4])
    np.testing.assert_array_equal(subtree_sums(tree, np.ones(5, dtype=np.int64)), [5, 3, 1, 1, 1])
    assert tree.n_leaves == 3 and tree.max_depth == 2


@pytest.mark.parametrize(
    "left, right, message",
    [
        ([1, -1, -1], [-1, -1, -1], "exactly one child"),
        ([2, -1, -1], [1, -1, -1], None),
        ([0, -1, -1], [2, -1, -1], "larger ids"),
        ([1, -1, -1], [1, -1, -1], "parents"),
    ],
)
def test_validate_names_the_broken_invariant(left, right, message):
    if message is None:  # right child before left child is allowed
        make_tree(left, right, [0, -2, -2], [0.0, 0, 0], np.zeros(3))
        return
    with pytest.raises(InvalidTreeError, match=message):
        make_tree(left, right, [0, -2, -2], [0.0, 0, 0], np.zeros(3))


def test_validate_checks_counts_and_features():
    with pytest.raises(InvalidTreeError, match="n_node_samples=10, but its children have 9"):
        make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.0, 0, 0], np.zeros(3), n_node_samples=[10, 4, 5])
    tree = make_tree([1, -1, -1], [2, -1, -1], [3, -2, -2], [0.0, 0, 0], np.zeros(3))
    with pytest.raises(InvalidTreeError, match="feature 3, but there are 2 features"):
        validate(tree, n_features=2)


@pytest.mark.parametrize("seed", range(6))
def test_outermost_nodes_and_rebuilt_ids_follow_the_flagged_ancestors(seed):
    # a node is dropped exactly when a flagged node is above it: checked by walking up from every node
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, max_depth=9, p_split=0.9)
    parent = node_parent(tree)
    for share in (0.0, 0.05, 0.3, 1.0):
        mask = rng.random(tree.n_nodes) < share
        under = np.zeros(tree.n_nodes, dtype=bool)
        for node in range(tree.n_nodes):
            above = parent[node]
            while above >= 0 and not mask[above]:
                above = parent[above]
            under[node] = above >= 0
        np.testing.assert_array_equal(outermost_nodes(tree, mask), np.flatnonzero(mask & ~under))
        expected = np.full(tree.n_nodes, -1)
        expected[~under] = np.arange(np.count_nonzero(~under))
        np.testing.assert_array_equal(rebuilt_node_ids(tree, mask), expected)


@pytest.mark.parametrize("seed", range(5))
def test_subtree_sums_add_every_node_below(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, max_depth=5)
    values = rng.normal(size=(tree.n_nodes, 2))
    sums = subtree_sums(tree, values)
    for node in range(tree.n_nodes):
        np.testing.assert_allclose(sums[node], values[subtree_nodes(tree, node)].sum(axis=0), rtol=1e-12)
    sizes = subtree_sums(tree, np.ones(tree.n_nodes, dtype=np.int64))
    assert sizes.dtype == np.int64 and [len(subtree_nodes(tree, n)) for n in range(tree.n_nodes)] == sizes.tolist()
