import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from bandit_tree_tools import DataError
from bandit_tree_tools.tree import Ensemble, Source, make_tree


def categorical_stump(feature_categories=None):
    """Category 1 goes left (value 10), category 0 right (value 20), unknown right, NaN left."""
    bits = np.zeros((3, 1), dtype=np.uint32)
    right = np.zeros((3, 1), dtype=np.uint32)
    bits[0, 0], right[0, 0] = 0b10, 0b01
    tree = make_tree(
        [1, -1, -1],
        [2, -1, -1],
        [0, -2, -2],
        [-2.0, 0, 0],
        [0.0, 10.0, 20.0],
        is_categorical=[1, 0, 0],
        category_left=bits,
        category_right=right,
        missing_go_to_left=[1, 0, 0],
        unknown_category_go_to_left=[0, 0, 0],
    )
    return Ensemble(
        trees=(tree,),
        task="regression",
        n_features_in_=2,
        n_outputs=1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="sum",
        base_score=0.0,
        link="identity",
        source=Source("bandit_tree_tools", "stump", payload={"a": [1]}),
        feature_names_in_=["colour", "size"],
        feature_categories=feature_categories,
    )


def test_pandas_categories_are_coded_by_value_against_the_training_categories():
    ensemble = categorical_stump(feature_categories=(("red", "blue"), None))
    frame = pd.DataFrame(
        {"colour": pd.Categorical(["blue", "red", "green", None], categories=["green", "blue", "red"]), "size": 1.0}
    )
    # blue is training code 1 -> left; red code 0 -> right; green unseen -> missing -> left; None -> left
    np.testing.assert_array_equal(ensemble.predict(frame), [10.0, 20.0, 10.0, 10.0])


def test_without_training_categories_the_frame_codes_are_used():
    ensemble = categorical_stump()
    frame = pd.DataFrame({"colour": pd.Categorical(["a", "b"], categories=["a", "b"]), "size": 1.0})
    np.testing.assert_array_equal(ensemble.predict(frame), [20.0, 10.0])


def test_reordered_or_renamed_columns_are_refused():
    ensemble = categorical_stump()
    with pytest.raises(DataError, match="another order"):
        ensemble.predict(pd.DataFrame({"size": [1.0], "colour": [0.0]}))
    with pytest.raises(DataError, match="missing \\['size'\\]"):
        ensemble.predict(pd.DataFrame({"colour": [1.0], "weight": [0.0]}))
    with pytest.raises(DataError, match="not numeric"):
        ensemble.predict(pd.DataFrame({"colour": ["x"], "size": [0.0]}))


def test_ensembles_pickle_and_their_payload_stays_read_only():
    ensemble = categorical_stump()
    copy = pickle.loads(pickle.dumps(ensemble))
    np.testing.assert_array_equal(copy.predict(np.array([[1.0, 0.0]])), [10.0])
    assert copy.source.payload == {"a": [1]}
    with pytest.raises(TypeError, match="read-only"):
        copy.source.payload["a"] = 2


def test_whitespace_in_names_may_stand_for_underscores():
    # LightGBM keeps "mean radius" as "mean_radius" and accepts frames with either
    ensemble = categorical_stump()
    frame = pd.DataFrame({"colour": [1.0], "size": [0.0]})
    renamed = dataclasses.replace(ensemble, feature_names_in_=["col_our", "size"])
    np.testing.assert_array_equal(renamed.predict(frame.rename(columns={"colour": "col our"})), [10.0])
    # the same frame out of order is told to reorder, not that "col_our" is missing
    reordered = frame.rename(columns={"colour": "col our"})[["size", "col our"]]
    with pytest.raises(DataError, match=r"another order .* reorder them with X\[\['col our', 'size'\]"):
        renamed.predict(reordered)


def test_one_value_per_row_takes_a_single_column_as_scikit_learn_does():
    from bandit_tree_tools.tree import one_per_row

    column = pd.DataFrame({"target": [1, 0, 1]})
    np.testing.assert_array_equal(one_per_row(column, 3), [1, 0, 1])
    np.testing.assert_array_equal(one_per_row(np.array([[1], [0], [1]]), 3), [1, 0, 1])
    with pytest.raises(DataError, match=r"y must be 1-D with one value per row of X, got shape \(3, 2\)"):
        one_per_row(np.zeros((3, 2)), 3)
    with pytest.raises(DataError, match="y_val has 3 rows, but X_val has 4; pass one target per row of X_val"):
        one_per_row([1, 0, 1], 4, "y_val", rows="X_val", what="target")
