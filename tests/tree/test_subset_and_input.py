"""``Ensemble.subset``, routing chosen trees, and validating X once
(``check_X`` then ``check_input=False``)."""

import numpy as np
import pytest

from bandit_tree_tools import DataError, NodeError, ParameterError
from tests.oracles.tree import reference_apply, reference_predict_raw
from tests.tree.random_trees import probe_rows, random_ensemble


@pytest.mark.parametrize("seed", range(6))
def test_subset_routes_and_predicts_like_its_trees(seed):
    rng = np.random.default_rng(seed)
    ensemble = random_ensemble(rng, n_trees=5, n_outputs=int(rng.choice([1, 3])))
    X = probe_rows(rng, ensemble, n_rows=120)
    leaves = reference_apply(ensemble, X)
    chosen = rng.permutation(5)[:3]
    part = ensemble.subset(chosen)
    assert part.n_trees == 3 and part.source is ensemble.source and part.link == ensemble.link
    np.testing.assert_array_equal(part.base_score, ensemble.base_score)
    np.testing.assert_array_equal(part.apply(X), leaves[:, chosen])
    np.testing.assert_array_equal(part.predict_raw(X), reference_predict_raw(part, X))
    # the documented sum: base score plus the listed trees (their mean for averaged ensembles)
    expected = np.zeros((X.shape[0], ensemble.n_outputs))
    for t in chosen:
        tree = ensemble.trees[t]
        width = tree.value.shape[1]
        first = ensemble.tree_output[t]
        expected[:, first : first + width] += ensemble.tree_scale[t] * tree.value[leaves[:, t]]
    if ensemble.aggregation == "mean":
        expected /= 3
    np.testing.assert_allclose(part.predict_raw(X), expected + ensemble.base_score, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ensemble.subset([int(chosen[0])]).apply(X)[:, 0], leaves[:, chosen[0]])


def test_subset_refuses_bad_indices():
    ensemble = random_ensemble(np.random.default_rng(1), n_trees=3)
    with pytest.raises(NodeError, match="tree index 3 does not exist; the ensemble has trees 0..2"):
        ensemble.subset([0, 3])
    with pytest.raises(ParameterError, match="at least one tree"):
        ensemble.subset([])
    with pytest.raises(ParameterError, match="tree indices"):
        ensemble.subset(["a"])


@pytest.mark.parametrize("input_dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_dtype", [np.float32, np.float64])
def test_validated_X_is_reused_without_a_copy(input_dtype, x_dtype):
    rng = np.random.default_rng(2)
    ensemble = random_ensemble(rng, n_trees=3, input_dtype=input_dtype)
    X = probe_rows(rng, ensemble, n_rows=80).astype(x_dtype)
    checked = ensemble.check_X(X)
    assert checked.dtype == np.dtype(input_dtype) and checked.flags.c_contiguous
    # float32 -> float64 is exact, so one direct cast equals the cast through float64
    np.testing.assert_array_equal(checked, X.astype(np.float64).astype(input_dtype))
    if x_dtype == np.dtype(input_dtype):
        assert checked is X  # already the model's dtype and layout: no copy at all
    assert ensemble.check_X(checked) is checked
    for method in ("apply", "predict_raw", "predict"):
        np.testing.assert_array_equal(
            getattr(ensemble, method)(checked, check_input=False), getattr(ensemble, method)(X)
        )


def test_unchecked_input_must_be_what_check_X_returns():
    ensemble = random_ensemble(np.random.default_rng(3), n_trees=2, input_dtype="float32")
    X = np.zeros((4, 4))
    with pytest.raises(DataError, match="check_input=False needs X as Ensemble.check_X returns it"):
        ensemble.apply(X, check_input=False)  # float64, the model reads float32
    with pytest.raises(DataError, match="check_input=False"):
        ensemble.predict_raw(np.zeros((4, 4), dtype=np.float32)[:, ::2], check_input=False)
    with pytest.raises(DataError, match="check_input=False"):
        ensemble.predict_raw(np.asfortranarray(np.zeros((4, 4), dtype=np.float32)), check_input=False)


def test_averaged_ensemble_predicts_like_the_forest_it_holds():
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    import bandit_tree_tools as btt
    from bandit_tree_tools.tree import Source, averaged_ensemble

    X, y = make_classification(n_samples=200, random_state=0)
    forest = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    imported = btt.from_model(forest)
    rebuilt = averaged_ensemble(
        imported.trees, n_features=X.shape[1], source=Source("bandit_tree_tools", "test"), classes=forest.classes_
    )
    assert rebuilt.aggregation == "mean" and rebuilt.input_dtype == "float32"
    np.testing.assert_array_equal(rebuilt.predict_proba(X), imported.predict_proba(X))
    np.testing.assert_allclose(rebuilt.predict_proba(X), forest.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("n_outputs", [1, 3])
def test_transform_raw_takes_raw_scores_of_the_model_shape_only(n_outputs):
    # a raw array of another width went through the link column by column: numbers, silently wrong
    rng = np.random.default_rng(0)
    ensemble = random_ensemble(rng, n_trees=3, n_outputs=n_outputs)
    raw = ensemble.predict_raw(probe_rows(rng, ensemble, n_rows=20))
    np.testing.assert_array_equal(ensemble.transform_raw(raw.tolist()), ensemble.transform_raw(raw))
    for bad in (raw[:, 0], np.hstack([raw, raw]), raw.astype(str)):
        with pytest.raises(DataError, match=rf"raw must hold raw scores of shape \(n_rows, {n_outputs}\)"):
            ensemble.transform_raw(bad)
