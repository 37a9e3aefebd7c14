"""The routing engine's two node layouts: the 8-byte compact one (float32 cuts),
chosen at pack time where it is exact, and the 16-byte wide one, its fallback;
and the steps compiled without the NaN rule for rows that hold no NaN."""

import numpy as np
import pytest

from bandit_tree_tools.tree import make_tree
from bandit_tree_tools.tree._arrays import MISSING_ZERO_OR_NAN
from tests.oracles.tree import reference_apply, reference_predict_raw
from tests.tree.random_trees import random_tree
from tests.tree.test_kernels_engine import EDGE_THRESHOLDS, _chain, _ensemble, _stump


def _numerical_tree(rng, max_depth, input_dtype):
    """A random tree without general splits (no categories, no zero-as-missing);
    for float64 inputs its thresholds are float32 values, so the compact layout applies."""
    tree = random_tree(rng, n_features=4, max_depth=max_depth, n_words=0, p_split=0.9)
    internal = tree.children_left != -1
    threshold = tree.threshold + np.where(internal, rng.normal(scale=0.3, size=tree.threshold.shape), 0.0)
    if input_dtype == "float64":
        threshold = threshold.astype(np.float32).astype(np.float64)
    missing_type = np.where(tree.missing_type == MISSING_ZERO_OR_NAN, 0, tree.missing_type)
    return tree._replace(threshold=threshold, missing_type=missing_type.astype(tree.missing_type.dtype))


def _categorical_tree():
    tree = _stump(0.0)
    return tree._replace(
        is_categorical=np.array([1, 0, 0], dtype=tree.is_categorical.dtype),
        category_left=np.array([[5], [0], [0]], dtype=np.uint32),
        category_right=np.array([[2], [0], [0]], dtype=np.uint32),
    )


def _edge_rows(thresholds, n_features=1):
    """Values on the thresholds, next to them in float32 and float64, NaN, +-inf and signed zeros."""
    t = np.asarray(thresholds, dtype=np.float64)
    with np.errstate(over="ignore"):
        t32 = t.astype(np.float32)
        values = np.concatenate(
            [
                t,
                np.nextafter(t, np.inf),
                np.nextafter(t, -np.inf),
                t32.astype(np.float64),
                np.nextafter(t32, np.float32(np.inf)).astype(np.float64),
                np.nextafter(t32, np.float32(-np.inf)).astype(np.float64),
                [np.nan, 0.0, -0.0, np.inf, -np.inf],
            ]
        )
    return np.repeat(values[:, None], n_features, axis=1)


def _check_against_reference(ensemble, X):
    np.testing.assert_array_equal(ensemble.apply(X), reference_apply(ensemble, X))
    np.testing.assert_array_equal(ensemble.predict_raw(X), reference_predict_raw(ensemble, X))


def test_the_compact_layout_is_chosen_only_where_it_is_exact():
    odd = [_stump(0.1), _stump(1.0 / 3.0)]  # thresholds float32 cannot hold
    exact = [_stump(0.5), _stump(-0.25), _stump(3.0)]
    assert _ensemble(odd, 1, input_dtype="float32").packed.compact  # float32 rows: a float32 stand-in always exists
    assert _ensemble(odd, 1, input_dtype="float32", split_rule="lt").packed.compact
    assert not _ensemble(odd, 1, input_dtype="float64").packed.compact
    assert _ensemble(exact, 1, input_dtype="float64").packed.compact
    # general splits: categories, zero-as-missing, "x < -inf"
    assert not _ensemble(exact + [_categorical_tree()], 1, input_dtype="float32").packed.compact
    assert not _ensemble(
        exact + [_stump(0.5, missing_type=MISSING_ZERO_OR_NAN)], 1, input_dtype="float32"
    ).packed.compact
    assert not _ensemble([_stump(-np.inf)], 1, input_dtype="float32", split_rule="lt").packed.compact
    assert _ensemble([_stump(-np.inf)], 1, input_dtype="float32", split_rule="le").packed.compact


def test_a_left_child_too_far_for_the_word_falls_back_to_the_wide_layout():
    balanced = make_tree(
        [1, 3, 5, -1, -1, -1, -1],
        [2, 4, 6, -1, -1, -1, -1],
        [0, 0, 0, -2, -2, -2, -2],
        [0.0, -1.0, 1.0, -2, -2, -2, -2],
        np.arange(7.0),
    )
    # 2**28 features leave 3 bits for the distance to a left child (at most 7); node 2's is 3, node 0's 1
    assert _ensemble([balanced], 2**28, input_dtype="float32").packed.compact
    # a full tree of depth 4 has a node (id 7) whose left child (id 15) is 8 further on: too far
    depth4 = make_tree(*_full_tree(4))
    assert not _ensemble([depth4], 2**28, input_dtype="float32").packed.compact
    assert _ensemble([depth4], 30, input_dtype="float32").packed.compact


def _full_tree(depth):
    n = 2 ** (depth + 1) - 1
    left = [2 * i + 1 if 2 * i + 1 < n else -1 for i in range(n)]
    right = [2 * i + 2 if 2 * i + 2 < n else -1 for i in range(n)]
    feature = [0 if left[i] >= 0 else -2 for i in range(n)]
    threshold = [float(i) / n if left[i] >= 0 else -2.0 for i in range(n)]
    return left, right, feature, threshold, np.arange(float(n))


@pytest.mark.parametrize("split_rule", ["le", "lt"])
@pytest.mark.parametrize("input_dtype", ["float32", "float64"])
def test_steps_are_exact_at_float32_edges(split_rule, input_dtype):
    thresholds = EDGE_THRESHOLDS if input_dtype == "float32" else [0.5, -0.25, 0.0, -0.0, 2.0**-149, 3.0, -7.5]
    if split_rule == "lt":
        thresholds = [t for t in thresholds if t != -np.inf]  # "x < -inf" is a general split
    trees = [_stump(t, missing_left=i % 2, missing_type=i % 2) for i, t in enumerate(thresholds)]
    ensemble = _ensemble(trees, 1, split_rule=split_rule, input_dtype=input_dtype, tree_scale=0.5)
    # float64 rows and "x < t": the float64 cut below t has no float32 stand-in, the wide layout decides
    assert ensemble.packed.compact == (input_dtype == "float32" or split_rule == "le")
    X = _edge_rows(thresholds)
    _check_against_reference(ensemble, X)
    _check_against_reference(ensemble, X[~np.isnan(X[:, 0])])  # the steps compiled without the NaN rule


@pytest.mark.parametrize("seed", range(4))
def test_compact_and_wide_layouts_route_alike(seed):
    """The same trees packed both ways (a categorical tree added forces the wide
    layout) reach the same leaves, with and without NaN in the rows."""
    rng = np.random.default_rng(seed)
    input_dtype = ["float32", "float64"][seed % 2]
    trees = [_numerical_tree(rng, max_depth=int(rng.integers(1, 7)), input_dtype=input_dtype) for _ in range(6)]
    split_rule = "le" if input_dtype == "float64" else ["le", "lt"][seed // 2]  # float64 "lt": wide only
    options = dict(input_dtype=input_dtype, split_rule=split_rule, accumulate_float32=seed == 3)
    compact = _ensemble(trees, 4, **options)
    wide = _ensemble(trees + [_categorical_tree()], 4, **options)
    assert compact.packed.compact and not wide.packed.compact
    thresholds = np.concatenate([tree.threshold[tree.children_left != -1] for tree in trees])
    pool = _edge_rows(thresholds)[:, 0]
    X = rng.choice(pool, size=(500, 4))
    finite = X[~np.isnan(X).any(axis=1)]
    for rows in (X, finite):
        leaves = compact.apply(rows)
        np.testing.assert_array_equal(leaves, wide.apply(rows)[:, :6])
        np.testing.assert_array_equal(leaves, reference_apply(compact, rows))
        np.testing.assert_array_equal(compact.predict_raw(rows), reference_predict_raw(compact, rows))
    # a row routes the same whether or not another row of its batch holds a NaN
    np.testing.assert_array_equal(compact.apply(finite), compact.apply(np.vstack([finite, [[np.nan] * 4]]))[:-1])


def test_deep_trees_in_the_compact_layout_match_the_reference():
    rng = np.random.default_rng(11)
    ensemble = _ensemble(
        [_chain(40, rng), _chain(3, rng), _stump(0.5)], 3, input_dtype="float32", tree_scale=[1.0, 0.5, 0.1]
    )
    assert ensemble.packed.compact and ensemble.packed.tree_depth.max() == 40
    X = rng.normal(size=(300, 3))
    _check_against_reference(ensemble, X)
    X[rng.random(X.shape) < 0.1] = np.nan
    _check_against_reference(ensemble, X)
    indicator, _ = ensemble.decision_path(X)
    assert indicator.nnz == ensemble.decision_path(X.astype(np.float32))[0].nnz
