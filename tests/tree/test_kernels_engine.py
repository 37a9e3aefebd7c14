"""The routing engine's rewrites (breadth-first records, ``x <= cut`` for every
numerical split, lockstep lanes, blocks) against the slow reference."""

import numpy as np
import pytest

from bandit_tree_tools.tree import Ensemble, Source, _kernels, make_tree
from tests.oracles.tree import reference_apply, reference_predict_raw
from tests.tree.random_trees import probe_rows, random_ensemble


def _ensemble(trees, n_features, **options):
    defaults = dict(
        task="regression",
        n_features_in_=n_features,
        n_outputs=1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="sum",
        base_score=0.0,
        link="identity",
        source=Source("bandit_tree_tools", "test"),
    )
    defaults.update(options)
    return Ensemble(trees=trees, **defaults)


def _stump(threshold, missing_left=0, missing_type=0):
    return make_tree(
        [1, -1, -1],
        [2, -1, -1],
        [0, -2, -2],
        [threshold, -2.0, -2.0],
        [0.0, -1.0, 1.0],
        missing_go_to_left=[missing_left, 0, 0],
        missing_type=[missing_type, 0, 0],
    )


# thresholds where "x < t" and "x <= below(t)" could part: not float32-representable,
# infinities, signed zeros, subnormals, the float32 range's ends
EDGE_THRESHOLDS = [
    0.1,
    -0.1,
    1.0 / 3.0,
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    1e-45,
    1.5e-45,
    np.inf,
    -np.inf,
    3.4028234663852886e38,
    -3.4028234663852886e38,
    3.5e38,
    -3.5e38,
    1e300,
    -1e300,
    16777217.0,
    2.0**-149,
    2.0**-126,
]


@pytest.mark.parametrize("split_rule", ["le", "lt"])
@pytest.mark.parametrize("input_dtype", ["float32", "float64"])
def test_numerical_rewrite_is_exact_at_edge_thresholds(split_rule, input_dtype):
    trees = [_stump(t, missing_left=i % 2, missing_type=i % 2) for i, t in enumerate(EDGE_THRESHOLDS)]
    ensemble = _ensemble(trees, 1, split_rule=split_rule, input_dtype=input_dtype)
    t = np.array(EDGE_THRESHOLDS)
    with np.errstate(over="ignore"):
        t32 = t.astype(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):  # the neighbours of float32's largest value are inf, as meant
        values = np.concatenate(
            [
                t,
                np.nextafter(t, np.inf),
                np.nextafter(t, -np.inf),
                t32,
                np.nextafter(t32.astype(np.float32), np.float32(np.inf)).astype(np.float64),
                np.nextafter(t32.astype(np.float32), np.float32(-np.inf)).astype(np.float64),
                [np.nan, 0.0, -0.0, np.inf, -np.inf],
            ]
        )
    X = values.reshape(-1, 1)
    np.testing.assert_array_equal(ensemble.apply(X), reference_apply(ensemble, X))
    np.testing.assert_array_equal(ensemble.predict_raw(X), reference_predict_raw(ensemble, X))


def test_below_is_the_largest_value_under_the_threshold():
    t = np.array([1.0, 0.1, 0.0, -0.0, np.inf, 3.5e38, -3.5e38, 2.0**-149])
    cut32 = _kernels.below(t, "float32")
    assert np.all(cut32 < t)
    assert np.all(cut32.astype(np.float32).astype(np.float64) == cut32)  # a float32 value
    with np.errstate(over="ignore"):
        assert np.all(np.nextafter(cut32.astype(np.float32), np.float32(np.inf)).astype(np.float64) >= t)
    np.testing.assert_array_equal(_kernels.below(t, "float64"), np.nextafter(t, -np.inf))


def _chain(depth, rng):
    """A tree that is one long path (every right child a leaf): lockstep routing
    must keep rows that stopped early where they are."""
    n = 2 * depth + 1
    left, right, feature, threshold = [-1] * n, [-1] * n, [-2] * n, [-2.0] * n
    for level in range(depth):
        node = 2 * level
        left[node], right[node] = node + 2, node + 1
        feature[node] = int(rng.integers(3))
        threshold[node] = float(rng.normal())
    return make_tree(left, right, feature, threshold, rng.normal(size=n), missing_go_to_left=rng.integers(2, size=n))


@pytest.mark.parametrize(
    "n_rows",
    [1, 63, 64, 65, _kernels.LANES - 1, _kernels.LANES + 1, 300, 2 * _kernels.BLOCK + 17, 2 * _kernels.DEEP_BLOCK + 17],
)
def test_every_block_and_lane_count_matches_the_reference(n_rows):
    rng = np.random.default_rng(n_rows)
    trees = [_chain(40, rng), _chain(3, rng), _stump(0.5)]
    ensemble = _ensemble(trees, 3, tree_scale=[1.0, 0.5, 0.1])
    X = rng.normal(size=(n_rows, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    np.testing.assert_array_equal(ensemble.apply(X), reference_apply(ensemble, X))
    np.testing.assert_array_equal(ensemble.predict_raw(X), reference_predict_raw(ensemble, X))


def test_lockstep_steps_stop_before_the_leaves_of_deep_unbalanced_trees():
    rng = np.random.default_rng(3)
    balanced = make_tree(
        [1, 3, 5, -1, -1, -1, -1],
        [2, 4, 6, -1, -1, -1, -1],
        [0, 1, 2, -2, -2, -2, -2],
        [0.0, 0.5, -0.5, -2, -2, -2, -2],
        np.arange(7.0),
    )
    packed = _ensemble([_chain(40, rng), _chain(3, rng), _stump(0.5), balanced], 3).packed
    # deep: half the depth, or the shallowest leaf's depth (the chains' first leaf is at depth 1); shallow: the depth
    np.testing.assert_array_equal(packed.tree_depth, [40, 3, 1, 2])
    np.testing.assert_array_equal(packed.tree_lockstep, [20, 3, 1, 2])


@pytest.mark.parametrize("seed", range(6))
def test_subsets_of_trees_and_raw_from_leaves(seed):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng, n_trees=5, n_outputs=int(rng.choice([1, 3])))
    X = probe_rows(rng, ensemble, n_rows=150)
    leaves = reference_apply(ensemble, X)
    trees = rng.permutation(5)[:3]
    np.testing.assert_array_equal(ensemble.apply(X, trees=trees), leaves[:, trees])
    np.testing.assert_array_equal(ensemble.apply(X, trees=[4]), leaves[:, [4]])
    np.testing.assert_array_equal(ensemble._raw_from_leaves(ensemble.apply(X)), ensemble.predict_raw(X))
    np.testing.assert_array_equal(ensemble._raw_from_leaves(leaves), reference_predict_raw(ensemble, X))


@pytest.mark.parametrize("seed", range(4))
def test_apply_columns_routes_rows_in_any_order_a_slice_at_a_time(seed):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng, n_trees=4, n_outputs=int(rng.choice([1, 3])))
    n_rows = 2 * _kernels.BLOCK + 37
    X = ensemble.check_X(probe_rows(rng, ensemble, n_rows=n_rows))
    X[n_rows - 5 :, 0] = np.nan  # NaN in the last slice only: the first slices route without the NaN rule
    order = rng.permutation(n_rows)
    order = np.concatenate([order[order < n_rows - 5], order[order >= n_rows - 5]])
    expected = reference_apply(ensemble, X[order]).T
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        out = np.full((ensemble.n_trees, n_rows), -7, dtype=dtype)
        for lo, hi in ((0, 1), (1, _kernels.LANES + 3), (_kernels.LANES + 3, n_rows - 5), (n_rows - 5, n_rows)):
            ensemble._apply_columns(X, order, out, lo, hi)
            np.testing.assert_array_equal(out[:, :hi], expected[:, :hi])
            assert np.all(out[:, hi:] == -7)  # nothing past the slice is written
        # the transposed int8/int16/int32 view gives predict_raw bit for bit
        np.testing.assert_array_equal(ensemble._raw_from_leaves(out.T), ensemble.predict_raw(X[order]))


def test_apply_columns_refuses_ids_its_type_cannot_hold():
    rng = np.random.default_rng(5)
    ensemble = _ensemble([_chain(70, rng), _stump(0.5)], 3)  # 141 nodes: more than int8 holds
    X = ensemble.check_X(rng.normal(size=(10, 3)))
    order = np.arange(10)
    for out, match in (
        (np.zeros((2, 10), dtype=np.uint16), "signed integer"),
        (np.zeros((3, 10), dtype=np.int32), r"shape \(2, 10\)"),
        (np.zeros((2, 10), dtype=np.int8), "node ids up to 140"),
    ):
        with pytest.raises(ValueError, match=match):
            ensemble._apply_columns(X, order, out)
    with pytest.raises(ValueError, match="row indices of X"):
        ensemble._apply_columns(X, np.array([0, 10]), np.zeros((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="lo <= hi"):
        ensemble._apply_columns(X, order, np.zeros((2, 10), dtype=np.int32), 5, 3)
    out = np.zeros((2, 10), dtype=np.int16)
    ensemble._apply_columns(X, order, out)
    np.testing.assert_array_equal(out.T, reference_apply(ensemble, X))


def test_decision_path_lists_original_ids_in_path_order():
    rng = np.random.default_rng(7)
    ensemble = random_ensemble(rng, n_trees=4)
    X = probe_rows(rng, ensemble, n_rows=40)
    indicator, offsets = ensemble.decision_path(X)
    leaves = reference_apply(ensemble, X)
    for row in range(X.shape[0]):
        path = indicator.indices[indicator.indptr[row] : indicator.indptr[row + 1]]
        assert np.all(np.diff(path) > 0)  # root to leaf, tree after tree
        ends = [path[(path >= offsets[t]) & (path < offsets[t + 1])][-1] - offsets[t] for t in range(4)]
        assert ends == list(leaves[row])


def test_bad_tree_indices_are_refused():
    ensemble = random_ensemble(np.random.default_rng(3), n_trees=3)
    X = np.zeros((2, 4))
    with pytest.raises(IndexError, match="tree index 3 does not exist; the ensemble has trees 0..2"):
        ensemble.apply(X, trees=[0, 3])
    with pytest.raises(IndexError, match="tree index -1"):
        ensemble.apply(X, trees=[-1])
    with pytest.raises(ValueError, match="tree indices"):
        ensemble.apply(X, trees=["a"])
    with pytest.raises(ValueError, match="leaves must have shape"):
        ensemble._raw_from_leaves(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="node ids"):
        ensemble._raw_from_leaves(np.full((2, 3), 10_000, dtype=np.int64))
    leaves = ensemble.apply(X)
    for tree, bad in ((0, -1), (2, ensemble.trees[2].n_nodes)):  # one entry just outside one tree
        wrong = leaves.copy()
        wrong[-1, tree] = bad
        with pytest.raises(ValueError, match="node ids"):
            ensemble._raw_from_leaves(wrong)
