"""TSDT reads pandas categoricals by value, never by code: a frame that lists
its categories in another order, lacks one, or a stream chunk that lists them
differently is coded as at fitting time."""

import numpy as np
import pandas as pd
import pytest

import bandit_tree_tools as btt

COLORS = ["red", "green", "blue"]


def _frame(n_rows=240, seed=3, order=COLORS):
    rng = np.random.default_rng(seed)
    color = rng.choice(COLORS, size=n_rows)
    shape = rng.choice(["round", "square"], size=n_rows)
    y = (color == "blue").astype(np.int64)
    X = pd.DataFrame(
        {
            "color": pd.Categorical(color, categories=order),
            "shape": pd.Categorical(shape, categories=["round", "square"]),
        }
    )
    return X, y


def _relisted(X, order):
    return X.assign(color=pd.Categorical(X["color"].astype(str), categories=order))


def test_fit_then_predict_with_categories_listed_in_another_order():
    X, y = _frame()
    model = btt.TSDTClassifier(max_iter=300, random_state=0).fit(X, y)
    assert model.score(X, y) == 1.0
    reordered = _relisted(X, ["blue", "red", "green"])
    assert model.score(reordered, y) == 1.0
    np.testing.assert_array_equal(model.ensemble_.predict(reordered), model.predict(X))


def test_a_test_frame_without_one_category_is_coded_by_value():
    X, y = _frame()
    model = btt.TSDTClassifier(max_iter=300, random_state=0).fit(X, y)
    keep = (X["color"] != "red").to_numpy()
    # pandas infers only the categories present: blue becomes code 0 in this frame
    inferred = X[keep].assign(color=X["color"][keep].astype(str).astype("category"))
    assert model.score(inferred, y[keep]) == 1.0


def test_partial_fit_chunks_listing_categories_differently():
    X, y = _frame(n_rows=300)
    model = btt.TSDTClassifier(batch_size=50, random_state=0)
    model.partial_fit(X[:150], y[:150], classes=[0, 1])
    model.partial_fit(_relisted(X[150:], ["green", "blue", "red"]), y[150:])
    assert model.score(X, y) == 1.0


def test_partial_fit_chunk_with_an_undeclared_category_is_refused():
    X, y = _frame(n_rows=100)
    model = btt.TSDTClassifier(batch_size=50, random_state=0).partial_fit(X, y, classes=[0, 1])
    odd = X.assign(color=pd.Categorical(["purple"] * len(X), categories=["purple", *COLORS]))
    with pytest.raises(btt.DataError, match=r"categories \['purple'\] that the stream's first chunk did not declare"):
        model.partial_fit(odd, y)


def test_optimal_categorical_tree_reads_categories_by_value():
    X, y = _frame(n_rows=120)
    tree = btt.optimal_categorical_tree(X, y, lambda_=0.01)
    assert tree.score(_relisted(X, ["green", "blue", "red"]), y) == 1.0


def test_compare_trees_codes_the_test_frame_against_the_training_frame():
    X, y = _frame(n_rows=200)
    X_test = _relisted(X, ["blue", "green", "red"])
    table = btt.compare_trees(X, y, X_test, y, lambdas=[0.01], max_iter=200, random_state=0)
    frame = table if hasattr(table, "columns") else pd.DataFrame(table)
    accuracy = [column for column in frame.columns if "test" in str(column) and "acc" in str(column)]
    assert accuracy, list(frame.columns)
    assert (frame[accuracy[0]] == 1.0).all(), frame


def test_partial_fit_labels_outside_the_declared_classes_are_refused():
    X, y = _frame(n_rows=100)
    labels = np.where(y == 1, "a", "b")
    with pytest.raises(btt.DataError, match=r"not in classes"):
        btt.TSDTClassifier(random_state=0).partial_fit(X, labels, classes=[0, 1])


@pytest.mark.parametrize("n_categories", [[3, 2.5], [3.0, True], [3], "32", [3, 0]])
def test_partial_fit_n_categories_must_be_whole_numbers(n_categories):
    X, y = _frame(n_rows=60)
    codes = np.column_stack([X["color"].cat.codes, X["shape"].cat.codes])
    with pytest.raises(btt.ParameterError, match=r"n_categories of partial_fit must be a list of 2 integers >= 1"):
        btt.TSDTClassifier(random_state=0).partial_fit(codes, y, classes=[0, 1], n_categories=n_categories)


def test_partial_fit_n_categories_as_floats_that_are_whole_numbers():
    X, y = _frame(n_rows=60)
    codes = np.column_stack([X["color"].cat.codes, X["shape"].cat.codes])
    model = btt.TSDTClassifier(random_state=0).partial_fit(codes, y, classes=[0, 1], n_categories=[4.0, 2])
    assert model.n_categories_.tolist() == [4, 2]
