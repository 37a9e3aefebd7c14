"""Bad arguments are refused with an error of a documented type whose message
names the argument (the sweep found holes that silently did something else,
and messages such as "Input contains NaN." that named nothing)."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import bandit_tree_tools as btt

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4))
y = (X[:, 0] + X[:, 1] > 0).astype(int)
TREE = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)
y_nan = y.astype(float)
y_nan[3] = np.nan


@numba.njit
def negative_manhattan(a, b):
    return -np.abs(a - b).sum()


CASES = {
    "resplit n_bins=0": (
        lambda: btt.resplit(TREE, X, y, nodes=[0], n_bins=0),
        btt.ParameterError,
        r"n_bins of resplit must be an int in \[1",
    ),
    "resplit z=0": (
        lambda: btt.resplit(TREE, X, y, nodes=[0], z=0),
        btt.ParameterError,
        r"z of resplit must be a finite float in \(0",
    ),
    "resplit z<0": (
        lambda: btt.resplit(TREE, X, y, nodes=[0], z=-1.0),
        btt.ParameterError,
        r"z of resplit must be a finite float in \(0",
    ),
    "resplit z=nan": (
        lambda: btt.resplit(TREE, X, y, nodes=[0], z=np.nan),
        btt.ParameterError,
        r"z of resplit must be a finite float in \(0",
    ),
    "resplit z=inf": (
        lambda: btt.resplit(TREE, X, y, nodes=[0], z=np.inf),
        btt.ParameterError,
        r"z of resplit must be a finite float in \(0.0, inf\), got inf",
    ),
    "collapse bool tree index": (
        lambda: btt.collapse(btt.from_model(TREE), {True: [0]}),
        btt.NodeError,
        r"tree indices must be ints, got True",
    ),
    "Ensemble.node_depths out of range": (  # raised a tuple's IndexError; -1 read the last tree
        lambda: btt.from_model(TREE).node_depths(-1),
        btt.NodeError,
        r"tree index -1 does not exist; the ensemble has trees 0..0",
    ),
    "Ensemble.node_depths str": (
        lambda: btt.from_model(TREE).node_depths("a"),
        btt.NodeError,
        r"tree indices must be ints, got 'a' \(str\)$",
    ),
    "collapse scalar node": (
        lambda: btt.collapse(btt.from_model(TREE), {0: 3}),
        btt.NodeError,
        r"nodes\[0\] must be a list of node ids.*\{0: \[3\]\}",
    ),
    "leaf_medoids random_state": (
        lambda: btt.leaf_medoids(TREE, X, n_medoids=2, random_state="x"),
        btt.ParameterError,
        r"random_state of leaf_medoids must be a random state",
    ),
    "bandit_prune eval_size": (
        lambda: btt.bandit_prune(TREE, X, y, eval_size="half", progress=False),
        btt.ParameterError,
        r"eval_size of bandit_prune must be",
    ),
    "bandit_prune weights": (
        lambda: btt.bandit_prune(TREE, X, y, weights="abc", progress=False),
        btt.ParameterError,
        r"weights of bandit_prune must be array-like",
    ),
    "bandit_prune reward_threshold": (
        lambda: btt.bandit_prune(TREE, X, y, reward_threshold=float("nan"), progress=False),
        btt.ParameterError,
        r"reward_threshold of bandit_prune must be a float \(not NaN\), got nan",
    ),
    "bandit_prune NaN in y": (
        lambda: btt.bandit_prune(TREE, X, y_nan, progress=False),
        btt.DataError,
        r"y_val has 1 missing labels.*row 3",
    ),
    "prune random_state": (
        lambda: btt.prune(TREE, X, y, random_state=-1, progress=False),
        btt.ParameterError,
        r"random_state of prune must be a random state",
    ),
    "reduced_error_prune scoring": (
        lambda: btt.reduced_error_prune(TREE, X, y, scoring="f1"),
        btt.ParameterError,
        r"scoring of reduced_error_prune must be one of 'accuracy', 'score', got 'f1'",
    ),
    "cost_complexity_path criterion": (
        lambda: btt.cost_complexity_path(TREE, X, y, criterion="mse"),
        btt.ParameterError,
        r"criterion of cost_complexity_path must be one of",
    ),
    "reduced_error_prune NaN in y": (
        lambda: btt.reduced_error_prune(TREE, X, y_nan),
        btt.DataError,
        r"y_val has 1 missing labels",
    ),
    "TSDT NaN label": (
        lambda: btt.TSDTClassifier(lambda_=0.01, random_state=0).fit((X > 0).astype(int), y_nan),
        btt.DataError,
        r"y has 1 missing labels",
    ),
    "TSDT None label": (
        lambda: btt.TSDTClassifier(lambda_=0.01).fit((X > 0).astype(int)[:4], np.array(["a", "b", None, "a"], object)),
        btt.DataError,
        r"missing labels",
    ),
    "KMedoids negative distances": (
        lambda: btt.KMedoids(n_clusters=2, metric=negative_manhattan, random_state=0).fit(X[:40]),
        btt.DataError,
        r"returned a negative distance",
    ),
    "MABSplit huge targets": (
        lambda: btt.MABSplitTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0] * 1e300),
        btt.DataError,
        r"squared sums overflow float64.*Rescale y",
    ),
    "resplit huge targets": (
        lambda: btt.resplit(DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0]), X, X[:, 0] * 1e300, nodes=[0]),
        btt.DataError,
        r"squared sums overflow",
    ),
    "from_xgboost learning_rate": (
        lambda: btt.from_xgboost(
            pytest.importorskip("xgboost").XGBClassifier(n_estimators=2).fit(X, y), learning_rate="a"
        ),
        btt.ParameterError,
        r"learning_rate must be a number",
    ),
    "from_xgboost learning_rate beyond float32": (  # became inf, the internal values NaN
        lambda: btt.from_xgboost(
            pytest.importorskip("xgboost").XGBClassifier(n_estimators=2).fit(X, y), learning_rate=1e300
        ),
        btt.ParameterError,
        r"learning_rate must be a number > 0 that float32 holds",
    ),
    "from_xgboost iteration_range not a pair": (  # int()'s ValueError, or 'int' object is not iterable
        lambda: btt.from_xgboost(
            pytest.importorskip("xgboost").XGBClassifier(n_estimators=2).fit(X, y), iteration_range=5
        ),
        btt.ParameterError,
        r"iteration_range must be a pair of ints \(begin, end\) or None, got 5",
    ),
    "from_xgboost iteration_range of floats": (  # (1.5, 3) was read as (1, 3)
        lambda: btt.from_xgboost(
            pytest.importorskip("xgboost").XGBClassifier(n_estimators=2).fit(X, y), iteration_range=(1.5, 3)
        ),
        btt.ParameterError,
        r"iteration_range must be a pair of ints",
    ),
    "from_lightgbm num_iteration bool": (  # True was read as 1
        lambda: btt.from_lightgbm(
            pytest.importorskip("lightgbm").LGBMClassifier(n_estimators=2, verbose=-1).fit(X, y), num_iteration=True
        ),
        btt.ParameterError,
        r"num_iteration must be an int or None, got bool",
    ),
    "compile_kernels progress": (
        lambda: btt.compile_kernels(progress="yes"),
        btt.ParameterError,
        r"progress of compile_kernels must be boolean",
    ),
    "ragged X": (
        lambda: btt.from_model(TREE).predict([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]]),
        btt.DataError,
        r"X must be a 2-D array of numbers",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_argument_is_refused_with_a_message_naming_it(case):
    call, error, message = CASES[case]
    with pytest.raises(error, match=message):
        call()


def test_sparse_X_is_accepted_as_scikit_learn_accepts_it():
    ensemble = btt.from_model(TREE)
    for matrix in (sp.csr_matrix(X), sp.csc_matrix(X), sp.coo_matrix(X)):
        np.testing.assert_array_equal(ensemble.predict_proba(matrix), TREE.predict_proba(matrix))
    # sparse rows prune exactly as their dense copy: same nodes removed, same pruned model
    rows = np.random.default_rng(1).normal(size=(300, 4))
    rows[rows[:, 2] < 0, 2] = 0.0  # zeros a sparse matrix leaves out
    labels = (rows[:, 0] > 0).astype(int)  # a simpler rule than the tree's, so some twigs go
    settings = dict(n_rounds=300, min_depth=1, progress=False, random_state=0)
    sparse = btt.bandit_prune(TREE, sp.csr_matrix(rows), labels, **settings)
    dense = btt.bandit_prune(TREE, rows, labels, **settings)
    assert sparse.n_pruned == dense.n_pruned > 0
    np.testing.assert_array_equal(sparse.ensemble.predict_proba(X), dense.ensemble.predict_proba(X))


def test_parameter_errors_are_value_and_type_errors():
    assert issubclass(btt.ParameterError, ValueError) and issubclass(btt.ParameterError, TypeError)
    assert issubclass(btt.ParameterError, btt.BanditTreeToolsError)
