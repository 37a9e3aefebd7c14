"""Parameter rules of MABSplit: the constraints of the split search (shared by
the estimators, :func:`find_split` and :func:`resplit`), ``max_features`` and
fractions of rows, each resolved by one function."""

from __future__ import annotations

import numbers
from math import log2, sqrt

import numpy as np

from .._validation import Interval, Options, check_params
from ._builder import SOLVERS
from ..exceptions import ParameterError

# What every split search takes (a table is merged into each owner's own).
SEARCH_CONSTRAINTS = {
    "solver": [Options(SOLVERS)],
    "bins": [Options({"linspace", "quantile"})],
    "n_bins": [Interval(int, 1, None)],
    "batch_size": [Interval(int, 1, None)],
    "z": [Interval(float, 0.0, None, "neither")],
    "min_samples_leaf": [Interval(int, 1, None)],
    "random_state": ["random_state"],
}

# scikit-learn's max_features: all features, sqrt, log2, a count or a fraction.
MAX_FEATURES = [Options({"sqrt", "log2"}), Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"), None]

# A number of rows: a count, or a fraction of the rows there are.
N_ROWS = [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right")]

# Parameters that must be finite (an Interval without an upper end lets inf through).
_FINITE = ("z", "lambda_", "optimism", "time_limit")


def check_params_and_finite(params: dict, constraints: dict, owner: str) -> None:
    """:func:`~bandit_tree_tools._validation.check_params`, then refuse
    infinite values of the parameters that must be finite."""
    check_params(params, constraints, owner=owner)
    for name in _FINITE:
        value = params.get(name)
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and not np.isfinite(value):
            raise ParameterError(f"{name} of {owner} must be a finite number, got {value!r}")


def resolve_max_features(max_features, n_features: int) -> int:
    """Features drawn at each node, by scikit-learn's rule: None is every
    feature, ``"sqrt"``/``"log2"`` that function of ``n_features`` (at least
    1), an int that many (at most ``n_features``), a float in (0, 1] that
    fraction (at least 1)."""
    check_params({"max_features": max_features}, {"max_features": MAX_FEATURES}, owner="the estimator")
    if max_features is None:
        return int(n_features)
    if max_features == "sqrt":
        return max(1, int(sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(log2(n_features)))
    if isinstance(max_features, numbers.Integral):
        if max_features > n_features:
            raise ParameterError(f"max_features must be at most the number of features ({n_features}), got {max_features}")
        return int(max_features)
    return max(1, int(max_features * n_features))


def resolve_n_rows(value, n_rows: int, name: str) -> int:
    """A number of rows given as a count in ``[1, n_rows]`` or a fraction in
    (0, 1] of ``n_rows`` (rounded to the nearest count, at least 1: the rule of
    scikit-learn's ``max_samples``)."""
    check_params({name: value}, {name: N_ROWS})
    if isinstance(value, numbers.Integral):
        if value > n_rows:
            raise ParameterError(f"{name}={value} must be between 1 and the number of rows ({n_rows})")
        return int(value)
    return max(1, int(round(value * n_rows)))
