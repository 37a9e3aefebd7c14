"""One node's split: the bandit against the exact splitter and the reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.mabsplit import find_split
from tests.oracles.mabsplit import reference_exact_split


def node_data(seed, n_rows, task, n_features=5, discrete=False, missing=False):
    """A node's rows; with ``missing``, feature 1 (the signal's) is NaN in a
    tenth of the rows, and feature 3 (noise) is NaN where y is high."""
    random = np.random.RandomState(seed)
    X = random.normal(size=(n_rows, n_features))
    if discrete:
        X = np.round(X * 3) / 3
    X = X.astype(np.float32)
    signal = X[:, 1] - 0.5 * X[:, 2]
    if task == "classification":
        y = (signal + random.normal(scale=0.8, size=n_rows) > 0.3).astype(int) + (X[:, 0] > 1.0)
    else:
        y = signal + random.normal(scale=0.5, size=n_rows)
    if missing:
        X[random.uniform(size=n_rows) < 0.1, 1] = np.nan
        X[(random.uniform(size=n_rows) < 0.5) & (y > np.median(y)), 3] = np.nan
    return X, y


CASES = st.tuples(
    st.integers(0, 10_000),
    st.sampled_from(["gini", "entropy", "squared_error"]),
    st.sampled_from(["linspace", "quantile", "random"]),
    st.integers(1, 30),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=30, deadline=None)
@given(case=CASES)
def test_bandit_with_a_budget_covering_the_node_returns_the_exact_split(case):
    seed, criterion, bins, min_samples_leaf, discrete, missing = case
    task = "regression" if criterion == "squared_error" else "classification"
    X, y = node_data(seed, 400, task, discrete=discrete, missing=missing)
    common = dict(criterion=criterion, bins=bins, min_samples_leaf=min_samples_leaf, random_state=seed)
    exact = find_split(X, y, solver="exact", **common)
    bandit = find_split(X, y, solver="mab", batch_size=400, **common)
    assert (bandit.feature, bandit.threshold, bandit.missing_go_to_left) == (
        exact.feature,
        exact.threshold,
        exact.missing_go_to_left,
    ) or (bandit.feature == exact.feature == -1)
    assert bandit.reduction == pytest.approx(exact.reduction, rel=1e-9, abs=1e-12)
    assert bandit.exact and exact.exact
    # ... and both are the slow reference's answer over the same candidates
    n_classes = None if task == "regression" else int(y.max()) + 1
    feature, threshold, missing_left, reduction = reference_exact_split(
        X, y, exact.features, exact.edges, criterion, n_classes, min_samples_leaf
    )
    assert exact.feature == feature
    if feature >= 0:
        assert (exact.threshold, exact.missing_go_to_left) == (threshold, missing_left)
        assert exact.reduction == pytest.approx(reduction, rel=1e-9)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), criterion=st.sampled_from(["gini", "entropy", "squared_error"]))
def test_bandit_that_uses_up_the_data_in_several_batches_is_exact(seed, criterion):
    # With huge confidence intervals and no tie rule nothing is eliminated on
    # estimates, so the search ends when the node's rows are used up.
    task = "regression" if criterion == "squared_error" else "classification"
    X, y = node_data(seed, 700, task)
    exact = find_split(X, y, solver="exact", criterion=criterion)
    bandit = find_split(X, y, criterion=criterion, batch_size=128, z=1e6, tie_tolerance=0.0, random_state=seed)
    assert bandit.n_rows_used == 700
    assert (bandit.feature, bandit.threshold) == (exact.feature, exact.threshold)


def test_exact_solver_inserts_every_row_into_every_feature_with_candidates():
    X, y = node_data(0, 500, "classification")
    X[:, 4] = 2.0  # constant: no candidate, never inserted
    split = find_split(X, y, solver="exact")
    assert split.n_insertions == 500 * 4
    assert split.edges[4].size == 0


def test_bandit_drops_bad_arms_on_a_large_node():
    X, y = node_data(1, 30_000, "classification", n_features=10)
    exact = find_split(X, y, solver="exact")
    bandit = find_split(X, y, random_state=0)
    assert (bandit.feature, bandit.threshold) == (exact.feature, exact.threshold)
    assert bandit.n_insertions < exact.n_insertions / 3
    assert bandit.n_rows_used < X.shape[0]


def test_no_split_on_a_pure_node_or_constant_features():
    X, _ = node_data(0, 100, "classification")
    assert find_split(X, np.zeros(100, dtype=int), solver="exact").feature == -1
    constant = np.ones((50, 3), dtype=np.float32)
    split = find_split(constant, np.arange(50) % 2)
    assert split.feature == -1 and split.n_insertions == 0


def test_find_split_refuses_bad_input():
    X, y = node_data(0, 50, "classification")
    with pytest.raises(ParameterError, match="batch_size of find_split must be an int in"):
        find_split(X, y, batch_size=0)
    with pytest.raises(DataError, match="infinity"):
        find_split(np.where(X > 1, np.inf, X), y)
    with pytest.raises(DataError, match="numeric y"):
        find_split(X, np.array(["a", "b"] * 25), criterion="squared_error")


def test_a_feature_missing_where_the_class_is_one_splits_on_its_nan():
    # x0 alone says nothing, its being NaN says the class: the best split sends NaN one way
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, 600)
    X = rng.normal(size=(600, 2)).astype(np.float32)
    X[(y == 1) & (rng.uniform(size=600) < 0.9), 0] = np.nan
    for solver in ("exact", "mab"):
        split = find_split(X, y, solver=solver, random_state=0)
        assert split.feature == 0 and split.exact
        nan_side = np.isnan(X[:, 0])
        left = (X[:, 0] <= split.threshold) | (nan_side & split.missing_go_to_left)
        assert y[nan_side].mean() > 0.99 and (y[left].mean() > 0.9 or y[~left].mean() > 0.9)
    assert "NaN" in repr(split) or not split.missing_go_to_left
