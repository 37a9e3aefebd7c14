"""``PruneResult.deployment``: the native file's size and the native
library's prediction times before and after pruning, measured on the
exported models. Speed itself is not checked here (a benchmark's job): the
tests check what is counted, what is written and that the user's model is
left alone."""

import os
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, ParameterError
from tests.optional import lgb, xgb

COLUMNS = ["leaves", "trees", "file_bytes", "batch_seconds", "row_seconds"]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(3000, 10, n_informative=6, flip_y=0.05, random_state=0)
    return X[:1500], y[:1500], X[1500:], y[1500:]


def _forest():
    return RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0)


def _lightgbm():
    return lgb.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1, random_state=0)


def _xgboost():
    return xgb.XGBClassifier(n_estimators=30, max_depth=4, random_state=0)


def _native_counts(native) -> tuple:
    """(leaves, trees) as the library itself counts them."""
    if hasattr(native, "estimators_"):
        trees = list(native.estimators_)
        return sum(int(tree.tree_.n_leaves) for tree in trees), len(trees)
    if hasattr(native, "booster_"):  # LightGBM
        dumped = native.booster_.dump_model()["tree_info"]
        return sum(int(tree["num_leaves"]) for tree in dumped), len(dumped)
    booster = native.get_booster()
    frame = booster.trees_to_dataframe()
    return int((frame["Feature"] == "Leaf").sum()), len(booster.get_dump())


def _write(native, path) -> int:
    """The size of the file the library's own call writes: what a user deploys."""
    if hasattr(native, "estimators_"):
        joblib.dump(native, path)
    elif hasattr(native, "booster_"):
        native.booster_.save_model(str(path))
    else:
        native.get_booster().save_model(str(path))  # the .ubj suffix: UBJSON
    return os.path.getsize(path)


@pytest.mark.parametrize(("make", "suffix"), [(_forest, ".joblib"), (_lightgbm, ".txt"), (_xgboost, ".ubj")])
def test_the_table_counts_and_writes_what_the_library_does(data, make, suffix, tmp_path):
    X_train, y_train, X_val, y_val = data
    model = make().fit(X_train, y_train)
    user_file = _write(model, tmp_path / f"user{suffix}")
    user_predictions = model.predict_proba(X_val)
    result = btt.prune(
        model, X_val, y_val, tolerance=0.02, X_train=X_train, y_train=y_train, random_state=0, progress=False
    )
    assert result.ensemble.n_leaves < result.original.n_leaves  # the comparisons below need a pruned model

    table = result.deployment(X_val, batch_rows=500, n_repeats=2, random_state=0)

    assert table.shape == (3, 5) and table.index.tolist() == ["before", "after", "ratio"]
    assert table.columns.tolist() == COLUMNS
    # leaves and trees: the ensembles' counts, and the exported models' counts as their library counts them
    after_native, before_native = result.to_model(), btt.to_model(result.original)
    for row, ensemble, native in (("before", result.original, before_native), ("after", result.ensemble, after_native)):
        assert table.loc[row, "leaves"] == ensemble.n_leaves
        assert table.loc[row, "trees"] == ensemble.n_trees
        assert (table.loc[row, "leaves"], table.loc[row, "trees"]) == _native_counts(native)
        # the size of the native file the library writes for that model
        assert table.loc[row, "file_bytes"] == _write(native, tmp_path / f"{row}{suffix}")
    assert table.loc["after", "file_bytes"] < table.loc["before", "file_bytes"]
    # the unpruned export stands for the user's own file: the same size within its metadata
    assert table.loc["before", "file_bytes"] == pytest.approx(user_file, rel=0.01)
    times = table[["batch_seconds", "row_seconds"]].to_numpy()
    assert np.isfinite(times).all() and (times > 0).all()
    np.testing.assert_allclose(table.loc["ratio"], table.loc["before"] / table.loc["after"])
    assert table.attrs["batch_rows"] == 500 and table.attrs["n_repeats"] == 2 and table.attrs["rows_per_repeat"] == 20
    assert table.attrs["file"].endswith(suffix)
    # the user's model is left as it was: its predictions and its file
    np.testing.assert_array_equal(model.predict_proba(X_val), user_predictions)
    assert _write(model, tmp_path / f"user_again{suffix}") == user_file


@pytest.mark.parametrize(
    ("make", "predictor"),
    [
        (_forest, "RandomForestClassifier.predict_proba"),
        (_lightgbm, "lightgbm.Booster.predict"),
        (_xgboost, "xgboost.Booster.inplace_predict"),
    ],
)
def test_the_library_own_predictor_reads_the_rows_as_given(data, make, predictor):
    # a model fitted on a pandas frame is timed on the frame: its feature names reach the
    # predictor (scikit-learn warns when they do not), and fewer rows than the batch are repeated
    X_train, y_train, X_val, y_val = data
    columns = [f"x{k}" for k in range(X_train.shape[1])]
    frame_train, frame_val = pd.DataFrame(X_train, columns=columns), pd.DataFrame(X_val[:300], columns=columns)
    model = make().fit(frame_train, y_train)
    result = btt.prune(model, frame_val, y_val[:300], tolerance=0.05, random_state=0, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = result.deployment(frame_val, batch_rows=1000, n_repeats=1, random_state=0)
    assert table.attrs["predictor"] == predictor and table.attrs["batch_rows"] == 1000
    assert (table[["batch_seconds", "row_seconds"]].to_numpy() > 0).all()


def test_results_of_the_other_methods_report_the_same(data):
    X_train, y_train, X_val, y_val = data
    model = DecisionTreeClassifier(max_depth=8, random_state=0).fit(X_train, y_train)
    result = btt.reduced_error_prune(model, X_val, y_val)
    table = result.deployment(X_val.tolist(), batch_rows=100, n_repeats=1)  # a list of rows too
    assert table.loc["after", "leaves"] == result.ensemble.n_leaves < result.original.n_leaves
    assert table.loc["ratio", "file_bytes"] > 1


@pytest.fixture(scope="module")
def forest_result(data):
    X_train, y_train, X_val, y_val = data
    model = _forest().fit(X_train, y_train)
    return btt.prune(model, X_val, y_val, tolerance=0.02, random_state=0, progress=False)


def test_bad_rows_and_parameters_are_refused_with_what_to_do(data, forest_result):
    X_val = data[2]
    with pytest.raises(DataError, match="X has 9 features, but the model was trained on 10; pass the same columns"):
        forest_result.deployment(X_val[:, :9])
    with pytest.raises(DataError, match="X has no rows; deployment needs at least one row"):
        forest_result.deployment(X_val[:0])
    with pytest.raises(ParameterError, match=r"n_repeats of deployment must be an int in \[1, inf\], got 0"):
        forest_result.deployment(X_val, n_repeats=0)
    with pytest.raises(ParameterError, match=r"batch_rows of deployment must be an int in \[1, inf\], got True"):
        forest_result.deployment(X_val, batch_rows=True)
    with pytest.raises(ParameterError, match="random_state of deployment must be"):
        forest_result.deployment(X_val, random_state="seed")
