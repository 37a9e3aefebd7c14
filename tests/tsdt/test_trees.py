"""Multiway trees, their common-format encoding, and the exact solver."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError
from bandit_tree_tools.tree import validate
from bandit_tree_tools.tsdt import TSDTClassifier, optimal_categorical_tree
from tests.oracles.tsdt import reference_optimal_value, reference_predict_proba

from .conftest import or_of_equal


@st.composite
def small_problems(draw):
    n_features = draw(st.integers(1, 3))
    n_categories = draw(st.lists(st.integers(2, 3), min_size=n_features, max_size=n_features))
    n_rows = draw(st.integers(4, 40))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, c, n_rows) for c in n_categories])
    n_classes = draw(st.integers(2, 3))
    y = rng.integers(0, n_classes, n_rows)
    y[:2] = [0, 1]  # at least two classes
    lambda_ = draw(st.sampled_from([0.0, 0.01, 0.05, 0.2]))
    return X, y, lambda_


@settings(max_examples=25, deadline=None)
@given(small_problems())
def test_exact_solver_equals_brute_force(problem):
    X, y, lambda_ = problem
    model = optimal_categorical_tree(X, y, lambda_)
    assert model.objective_ == pytest.approx(reference_optimal_value(X, y, lambda_), abs=1e-9)
    assert model.objective_ == pytest.approx(model.score(X, y) - lambda_ * model.n_splits_)


def _probe_rows(n_features, n_categories, n_rows, seed):
    """Codes inside and outside the training range, negative codes and NaN."""
    rng = np.random.default_rng(seed)
    probe = rng.integers(-1, int(np.max(n_categories)) + 2, size=(n_rows, n_features)).astype(np.float64)
    probe[rng.random(probe.shape) < 0.1] = np.nan
    return probe


@settings(max_examples=15, deadline=None)
@given(small_problems(), st.integers(0, 1000))
def test_common_format_predicts_exactly_like_the_multiway_tree(problem, seed):
    X, y, lambda_ = problem
    for model in (
        optimal_categorical_tree(X, y, lambda_),
        TSDTClassifier(lambda_=lambda_, max_iter=30, batch_size=10, random_state=seed).fit(X, y),
    ):
        ensemble = model.ensemble_
        validate(ensemble.trees[0], n_features=X.shape[1])
        probe = np.vstack([X, _probe_rows(X.shape[1], model.n_categories_, 60, seed)])
        np.testing.assert_array_equal(ensemble.predict_proba(probe), model.predict_proba(probe))
        np.testing.assert_array_equal(ensemble.predict(probe), model.predict(probe))
        np.testing.assert_array_equal(model.predict_proba(probe), reference_predict_proba(model.tree_, probe))
        # one extra leaf per multiway split holds the node's own value (unseen categories)
        assert ensemble.trees[0].n_node_samples[0] == len(y)


def test_unseen_category_gets_the_majority_class_of_the_node():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 0], [2, 1]] * 5)
    y = np.array([1, 1, 0, 0, 1, 1, 1] * 5)  # root majority: 1; x0 decides
    model = optimal_categorical_tree(X, y, 0.01)
    assert model.tree_.feature[0] == 0
    unseen = np.array([[7.0, 0.0], [-1.0, 1.0], [np.nan, 0.0]])
    np.testing.assert_array_equal(model.predict(unseen), [1, 1, 1])
    np.testing.assert_array_equal(model.ensemble_.predict(unseen), [1, 1, 1])
    np.testing.assert_allclose(model.predict_proba(unseen)[0], model.tree_.value[0])


def test_pandas_categoricals_keep_names_and_codes():
    X, y = or_of_equal(n_rows=200, seed=4)
    frame = pd.DataFrame(
        {
            name: pd.Categorical.from_codes(X[:, j], categories=["lo", "mid", "hi"])
            for j, name in enumerate(["a", "b", "c", "d"])
        }
    )
    model = TSDTClassifier(max_iter=100, random_state=0).fit(frame, np.where(y == 1, "yes", "no"))
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(model.n_categories_, [3, 3, 3, 3])
    np.testing.assert_array_equal(model.predict(frame), model.ensemble_.predict(frame))
    assert set(model.predict(frame)) <= {"yes", "no"}
    assert btt.from_model(model) is model.ensemble_
    assert model.ensemble_.source.estimator == "TSDTClassifier"
    assert "split on" in model.tree_.describe(model.feature_names_in_, model.classes_)


def test_exact_solver_leaves_out_attributes_that_never_vary():
    """``discretize(X, model=...)`` keeps every column the model does not
    split as one category; 70 of them made 2**70 combinations of tests, which
    the solver refused, though none of them can separate a row."""
    X, y = or_of_equal(n_rows=300, seed=0)
    narrow = optimal_categorical_tree(X, y, 0.01)
    wide = np.hstack([np.zeros((300, 70), dtype=np.int64), X, np.ones((300, 3), dtype=np.int64)])
    model = optimal_categorical_tree(wide, y, 0.01)
    assert model.objective_ == narrow.objective_ and model.n_splits_ == narrow.n_splits_
    np.testing.assert_array_equal(
        model.tree_.feature[model.tree_.feature >= 0] - 70, narrow.tree_.feature[narrow.tree_.feature >= 0]
    )
    np.testing.assert_array_equal(model.predict(wide), narrow.predict(X))
    constant = optimal_categorical_tree(np.zeros((300, 5), dtype=np.int64), y, 0.01)  # nothing to split on
    assert constant.n_leaves_ == 1
    with pytest.raises(DataError, match="63 attributes that vary"):
        optimal_categorical_tree(np.tile(np.arange(300)[:, None] % 2, (1, 63)), y, 0.01)


def test_exact_solver_refuses_problems_that_are_too_large():
    X, y = or_of_equal(n_rows=300, seed=0)
    with pytest.raises(DataError, match="max_subproblems"):
        optimal_categorical_tree(X, y, 0.0001, max_subproblems=3)


def test_exact_solver_monk1_has_the_27_leaf_tree():
    from .conftest import load_monk1

    X_train, y_train, X_test, y_test = load_monk1()
    model = optimal_categorical_tree(X_train, y_train, 0.01)
    assert model.n_leaves_ == 27 and model.score(X_test, y_test) == 1.0
    assert model.ensemble_.source.estimator == "OptimalCategoricalTree"
