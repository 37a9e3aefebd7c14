import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracles.tree import reference_apply, reference_predict_raw
from tests.tree.random_trees import probe_rows, random_ensemble


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_outputs=st.sampled_from([1, 3]))
def test_apply_and_predict_raw_match_the_reference(seed, n_outputs):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng, n_outputs=n_outputs)
    X = probe_rows(rng, ensemble)
    np.testing.assert_array_equal(ensemble.apply(X), reference_apply(ensemble, X))
    np.testing.assert_array_equal(ensemble.predict_raw(X), reference_predict_raw(ensemble, X))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_decision_path_ends_in_the_applied_leaves(seed):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng)
    X = probe_rows(rng, ensemble, n_rows=50)
    indicator, offsets = ensemble.decision_path(X)
    leaves = ensemble.apply(X)
    for row in range(X.shape[0]):
        path = indicator.indices[indicator.indptr[row] : indicator.indptr[row + 1]]
        for tree in range(ensemble.n_trees):
            in_tree = path[(path >= offsets[tree]) & (path < offsets[tree + 1])] - offsets[tree]
            assert in_tree[0] == 0
            assert in_tree.max() == leaves[row, tree]


def test_float32_input_is_cast_before_comparison():
    rng = np.random.default_rng(0)
    ensemble = random_ensemble(rng, input_dtype="float32", split_rule="le")
    X = probe_rows(rng, ensemble) + 1e-12  # differences float32 cannot see
    np.testing.assert_array_equal(ensemble.apply(X), ensemble.apply(X.astype(np.float32)))


def test_empty_input_gives_empty_output():
    ensemble = random_ensemble(np.random.default_rng(1), n_outputs=2)
    assert ensemble.predict_raw(np.empty((0, 4))).shape == (0, 2)
    assert ensemble.apply(np.empty((0, 4))).shape == (0, 3)


@pytest.mark.parametrize("bad", [np.zeros(4), np.zeros((2, 3)), np.zeros((1, 2, 4))])
def test_wrong_shapes_are_refused(bad):
    from bandit_tree_tools import DataError

    ensemble = random_ensemble(np.random.default_rng(2))
    with pytest.raises(DataError, match="X"):
        ensemble.predict_raw(bad)
