"""Bad input is refused with messages that say what to do."""

import numpy as np
import pandas as pd
import pytest

from bandit_tree_tools.exceptions import DataError, NotFittedError, ParameterError
from bandit_tree_tools.tsdt import TSDTClassifier, optimal_categorical_tree

from .conftest import or_of_equal


def test_float_features_point_to_discretize():
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(DataError, match="btt.discretize"):
        TSDTClassifier().fit(X, y)
    with pytest.raises(DataError, match="btt.discretize"):
        optimal_categorical_tree(X, y)


def test_whole_floats_are_codes():
    X, y = or_of_equal(n_rows=100)
    model = TSDTClassifier(max_iter=20, random_state=0).fit(X.astype(float), y)
    np.testing.assert_array_equal(model.predict(X), model.predict(X.astype(float)))


def test_single_class_is_refused():
    X, _ = or_of_equal(n_rows=30)
    # the label as a number, not numpy's repr (np.float64(1.0))
    with pytest.raises(DataError, match=r"^y has one class only \(1.0\); a classifier needs at least two"):
        TSDTClassifier().fit(X, np.ones(30))
    with pytest.raises(DataError, match=r"^y has one class only \(1.0\); a classifier needs at least two"):
        optimal_categorical_tree(X, np.ones(30))
    with pytest.raises(DataError, match="classes="):
        TSDTClassifier().partial_fit(X, np.ones(30))


@pytest.mark.parametrize("lambda_", [-0.1, float("nan"), float("inf")])
def test_negative_lambda_is_refused(lambda_):
    X, y = or_of_equal(n_rows=30)
    with pytest.raises(ParameterError, match="lambda_ of TSDTClassifier must be"):
        TSDTClassifier(lambda_=lambda_).fit(X, y)
    with pytest.raises(ParameterError, match="lambda_ of optimal_categorical_tree must be"):
        optimal_categorical_tree(X, y, lambda_)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"variant": "slow"}, "variant"),
        ({"max_iter": 0}, "max_iter"),
        ({"n_iter": 0}, "n_iter"),
        ({"gamma": 0}, "gamma"),
        ({"batch_size": 0}, "batch_size"),
        ({"time_limit": -1}, "time_limit"),
    ],
)
def test_other_bad_parameters(params, match):
    X, y = or_of_equal(n_rows=30)
    with pytest.raises(ParameterError, match=f"{match} of TSDTClassifier must be"):
        TSDTClassifier(**params).fit(X, y)


def test_empty_data_is_refused():
    with pytest.raises(DataError, match="no rows"):
        TSDTClassifier().fit(np.empty((0, 3)), np.empty(0))
    with pytest.raises(DataError, match="no columns"):
        TSDTClassifier().fit(np.empty((5, 0)), np.arange(5) % 2)


def test_missing_and_negative_codes_are_refused_at_fit():
    X, y = or_of_equal(n_rows=30)
    X = X.astype(float)
    X[3, 1] = np.nan
    with pytest.raises(DataError, match="missing value"):
        TSDTClassifier().fit(X, y)
    X[3, 1] = -1
    with pytest.raises(DataError, match="negative"):
        TSDTClassifier().fit(X, y)


def test_string_columns_name_the_fix():
    frame = pd.DataFrame({"a": ["x", "y"] * 10, "b": [0, 1] * 10})
    with pytest.raises(DataError, match="categorical"):
        TSDTClassifier().fit(frame, np.arange(20) % 2)


def test_unseen_categories_at_predict_never_raise():
    X, y = or_of_equal(n_rows=100)
    model = TSDTClassifier(max_iter=50, random_state=0).fit(X, y)
    probe = np.array([[99, 0, 0, 0], [-5, 2, 7, 1], [np.nan, np.nan, np.nan, np.nan]])
    assert model.predict(probe).shape == (3,)
    with pytest.raises(DataError, match="4"):
        model.predict(X[:, :3])
    with pytest.raises(DataError, match="btt.discretize"):
        model.predict(X + 0.5)


def test_partial_fit_refuses_new_categories_and_columns():
    X, y = or_of_equal(n_rows=100)
    model = TSDTClassifier(batch_size=20, random_state=0).partial_fit(X, y)
    with pytest.raises(DataError, match="n_categories="):
        model.partial_fit(X + 1, y)
    with pytest.raises(DataError, match="same columns"):
        model.partial_fit(X[:, :2], y)
    with pytest.raises(
        DataError, match=r"y contains labels the model never saw: 5, 6; the model.s classes are \[0, 1\]"
    ):
        model.partial_fit(X, y + 5)


def test_unfitted_model():
    with pytest.raises(NotFittedError, match="fit"):
        TSDTClassifier().predict(np.zeros((1, 2)))


def test_clone_keeps_parameters():
    from sklearn.base import clone

    model = TSDTClassifier(lambda_=0.2, variant="clark", random_state=3)
    assert clone(model).get_params() == model.get_params()


def test_the_former_n_iter_still_works_with_a_future_warning():
    X, y = or_of_equal(n_rows=40)
    with pytest.warns(FutureWarning, match=r"n_iter=\.\.\.\) is now max_iter"):
        model = TSDTClassifier(n_iter=7, random_state=0).fit(X, y)
    assert model.n_iter_ == 7
    assert model.n_iter_ == TSDTClassifier(max_iter=7, random_state=0).fit(X, y).n_iter_
