"""Parameter rules of MABSplit: the constraints of the split search, shared by
the estimators, :func:`find_split` and :func:`resplit` (``max_features`` and
fractions of rows follow the library's rules in ``_validation``)."""

from __future__ import annotations

from .._validation import Interval, Options
from ._builder import SOLVERS

# What every split search takes (a table is merged into each owner's own).
SEARCH_CONSTRAINTS = {
    "solver": [Options(SOLVERS)],
    "bins": [Options({"linspace", "quantile"})],
    "n_bins": [Interval(int, 1, None)],
    "batch_size": [Interval(int, 1, None)],
    "z": [Interval(float, 0.0, None, "neither", finite=True)],
    "min_samples_leaf": [Interval(int, 1, None)],
    "random_state": ["random_state"],
}
