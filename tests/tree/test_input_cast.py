"""One cast rule for every input path: each value rounded once to the model's
dtype, as scikit-learn and XGBoost cast; clear errors for frames whose columns
cannot be read one by one."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from tests.optional import xgb

BASE = 2**61
STEP = 2**38  # float32's spacing at 2**61; float64's is 2**9
# rounds to BASE + STEP straight to float32, but to BASE + STEP/2 in float64 and then
# (a tie, to even) to BASE in float32: the two roads end on opposite sides of the threshold
AWKWARD = BASE + STEP // 2 + 1


def _training():
    X = np.array([[BASE], [BASE + STEP]] * 20, dtype=np.int64)
    y = np.array([0, 1] * 20)
    return X, y


def _inputs():
    column = np.array([AWKWARD, BASE, BASE + STEP], dtype=np.int64)
    return {
        "int64 array": column.reshape(-1, 1),
        "int64 frame": pd.DataFrame({"x": column}),
        "nullable Int64 frame": pd.DataFrame({"x": pd.array(column, dtype="Int64")}),
        "uint64 array": column.astype(np.uint64).reshape(-1, 1),
        "longdouble array": column.astype(np.longdouble).reshape(-1, 1),
        "int64 csr": sp.csr_matrix(column.reshape(-1, 1)),
    }


@pytest.mark.parametrize("name", sorted(_inputs()))
def test_sklearn_rows_are_rounded_once_to_float32(name):
    X, y = _training()
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    rows = _inputs()[name]
    expected = model.predict(np.asarray(_inputs()["int64 array"]))
    assert expected.tolist() == [1, 0, 1]  # the awkward row is on the upper side for scikit-learn
    ensemble = btt.from_model(model)
    if isinstance(rows, pd.DataFrame):
        ensemble = btt.from_model(DecisionTreeClassifier(random_state=0).fit(pd.DataFrame({"x": X[:, 0]}), y))
    np.testing.assert_array_equal(ensemble.predict(rows), expected)


@pytest.mark.parametrize("name", ["int64 array", "longdouble array", "uint64 array"])
def test_xgboost_rows_are_rounded_once_to_float32(name):
    X, y = _training()
    model = xgb.XGBClassifier(n_estimators=1, max_depth=1, learning_rate=1.0, base_score=0.5).fit(
        X.astype(np.float32), y
    )
    rows = _inputs()[name]
    native = model.predict(rows)
    assert native.tolist() == [1, 0, 1]
    np.testing.assert_array_equal(btt.from_model(model).predict(rows), native)


def test_a_frame_with_duplicate_column_names_is_refused_by_name():
    X, y = _training()
    frame = pd.DataFrame(np.column_stack([X, X]).astype(float), columns=["size", "size"])
    ensemble = btt.from_model(DecisionTreeClassifier(random_state=0).fit(np.column_stack([X, X]), y))
    with pytest.raises(btt.DataError, match=r"duplicate column names \['size'\]"):
        ensemble.predict(frame)
    with pytest.raises(btt.DataError, match=r"^X_val has duplicate column names \['size'\]"):
        ensemble.check_X(frame, name="X_val")  # the argument's name, not a column's
