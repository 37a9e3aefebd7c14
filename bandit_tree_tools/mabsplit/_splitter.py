"""The split of a single node, bandit or exact: for inspection, teaching and
tests. Trees call the same kernels through :mod:`._builder`."""

from dataclasses import dataclass

import numpy as np

from .._validation import Interval, Options, check_params, check_random_state
from ..exceptions import DataError
from . import _kernels
from ._builder import BINS, CRITERIA, DEFAULT_TIE_TOLERANCE, seed_state
from ._params import SEARCH_CONSTRAINTS


@dataclass(frozen=True)
class NodeSplit:
    """The best (feature, threshold) of one node and what finding it cost.

    ``feature`` is -1 when no candidate reduces impurity (``threshold`` NaN).
    ``reduction`` is the parent impurity minus the weighted child impurity,
    estimated on the ``n_rows_used`` sampled rows (exact when
    ``n_rows_used == n_rows``). ``edges[j]`` are the candidate thresholds of
    ``features[j]`` (a row goes left when ``x <= threshold``). A row whose
    feature is NaN goes left when ``missing_go_to_left``; where the feature
    has no NaN among the rows, that is False and says nothing.
    """

    feature: int
    threshold: float
    missing_go_to_left: bool
    reduction: float
    n_insertions: int
    n_rows_used: int
    n_rows: int
    features: np.ndarray
    edges: tuple

    @property
    def exact(self) -> bool:
        return self.n_rows_used == self.n_rows

    def __repr__(self) -> str:
        where = "no split" if self.feature < 0 else f"x[{self.feature}] <= {self.threshold:.6g}"
        if self.missing_go_to_left:
            where += " or NaN"
        return (
            f"NodeSplit({where}, reduction={self.reduction:.6g}, n_insertions={self.n_insertions}, "
            f"rows used {self.n_rows_used}/{self.n_rows})"
        )


def encode_target(y, criterion: str):
    """Class codes or float targets for the kernels, and the number of classes."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"y must be 1-D (one target per row), got shape {y.shape}")
    if criterion == "squared_error":
        try:
            values = y.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(
                "criterion 'squared_error' needs a numeric y; for class labels use 'gini' or 'entropy'"
            ) from None
        if not np.all(np.isfinite(values)):
            raise DataError("y contains NaN or infinity; drop or impute those rows first")
        return np.empty(0, dtype=np.int64), values, 1
    classes, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.int64), np.empty(0), int(classes.shape[0])


FIND_SPLIT_CONSTRAINTS = {
    **SEARCH_CONSTRAINTS,
    "criterion": [Options(set(CRITERIA))],
    "bins": [Options(set(BINS))],
    "tie_tolerance": [Interval(float, 0.0, None)],
}


def find_split(
    X,
    y,
    *,
    criterion: str = "gini",
    solver: str = "mab",
    bins: str = "linspace",
    n_bins: int = 11,
    batch_size: int = 1000,
    z: float = 3.0,
    tie_tolerance: float = DEFAULT_TIE_TOLERANCE,
    min_samples_leaf: int = 1,
    features=None,
    dtype=np.float32,
    random_state=None,
) -> NodeSplit:
    """Find the best split of the node holding all rows of ``X``.

    ``solver="mab"`` runs successive elimination over the (feature, edge)
    arms with batches of ``batch_size`` rows drawn without replacement and
    confidence intervals ``z * sd`` (delta method, finite-population
    correction); survivors within ``tie_tolerance`` (relative) of the best
    are ties and end the search. ``solver="exact"`` inserts every row. Both
    see the same candidate thresholds for the same ``random_state``, and the
    bandit returns the exact answer whenever it uses up the node's rows. NaN
    in ``X`` is a missing value: each threshold of a feature with NaN is
    tried with NaN on either side (:attr:`NodeSplit.missing_go_to_left`).
    """
    check_params(
        {
            "criterion": criterion,
            "solver": solver,
            "bins": bins,
            "n_bins": n_bins,
            "batch_size": batch_size,
            "z": z,
            "tie_tolerance": tie_tolerance,
            "min_samples_leaf": min_samples_leaf,
            "random_state": random_state,
        },
        FIND_SPLIT_CONSTRAINTS,
        owner="find_split",
    )
    X = np.require(np.asarray(X, dtype=dtype), dtype, ["C", "W"])
    if X.ndim != 2 or X.shape[0] == 0:
        raise DataError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    if np.isinf(X).any():
        raise DataError("X contains infinity (or a value too large for its dtype); clip or drop those rows first")
    y_code, y_value, n_classes = encode_target(y, criterion)
    if max(y_code.shape[0], y_value.shape[0]) != X.shape[0]:
        raise DataError(f"X has {X.shape[0]} rows but y has {np.asarray(y).shape[0]}")
    candidates = np.arange(X.shape[1], dtype=np.int64) if features is None else np.asarray(features, dtype=np.int64)
    n_candidates = candidates.shape[0]
    width = 3 if criterion == "squared_error" else n_classes
    generator = check_random_state(random_state)
    # the node's rows in random order: batches read in order are samples without replacement
    rows = generator.permutation(X.shape[0]).astype(np.int64)
    rng = seed_state(generator)
    edges = np.zeros((n_candidates, n_bins))
    n_edges = np.zeros(n_candidates, dtype=np.int64)
    n_missing = np.zeros(n_candidates, dtype=np.int64)
    _kernels._node_edges(
        X,
        rows,
        0,
        X.shape[0],
        candidates,
        n_candidates,
        BINS[bins],
        int(n_bins),
        X.dtype == np.float32,
        rng,
        edges,
        n_edges,
        True,
        n_missing,
    )
    shift = float(y_value.mean()) if criterion == "squared_error" else 0.0
    search = _kernels.SplitSearch(
        CRITERIA[criterion], solver == "mab", int(batch_size), float(z), float(tie_tolerance), int(min_samples_leaf)
    )
    n_arms = 2 * n_bins if n_missing.any() else n_bins  # each edge twice, NaN sent right then left
    tables = _kernels.ArmTables(
        np.zeros((n_candidates, n_bins + 2, width)),
        np.zeros((n_candidates, n_arms), dtype=np.bool_),
        np.zeros((n_candidates, n_arms)),
        np.zeros((n_candidates, n_arms)),
        np.zeros((n_candidates, n_arms), dtype=np.bool_),
        np.zeros(n_candidates, dtype=np.bool_),
    )
    slot, arm, value, insertions, used = _kernels._find_split(
        X,
        rows,
        0,
        X.shape[0],
        candidates,
        n_candidates,
        edges,
        n_edges,
        n_missing,
        y_code,
        y_value,
        shift,
        search,
        tables,
    )
    found = slot != _kernels.NO_SPLIT and value < 0.0
    return NodeSplit(
        feature=int(candidates[slot]) if found else -1,
        threshold=float(edges[slot, arm % n_bins]) if found else float("nan"),
        missing_go_to_left=bool(found and arm >= n_bins),
        reduction=float(-value) if found else 0.0,
        n_insertions=int(insertions),
        n_rows_used=int(used),
        n_rows=int(X.shape[0]),
        features=candidates,
        edges=tuple(edges[a, : n_edges[a]].copy() for a in range(n_candidates)),
    )
