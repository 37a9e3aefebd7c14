"""Grow one tree with the MABSplit kernels and return it in the common format."""

from dataclasses import dataclass

import numpy as np

from .._validation import check_random_state
from ..bandits._random import kernel_rng
from ..tree import TreeArrays, make_tree
from . import _kernels

CRITERIA = {"gini": _kernels.GINI, "entropy": _kernels.ENTROPY, "squared_error": _kernels.SQUARED_ERROR}
BINS = {"linspace": _kernels.BINS_LINSPACE, "quantile": _kernels.BINS_QUANTILE, "random": _kernels.BINS_RANDOM}
SOLVERS = ("mab", "exact")

# The exact solver never samples, so the tie rule only matters for the bandit.
DEFAULT_TIE_TOLERANCE = 0.01


@dataclass(frozen=True)
class GrowthSettings:
    """Everything the builder kernel needs besides the data (validated)."""

    criterion: str = "gini"
    solver: str = "mab"
    bins: str = "linspace"
    n_bins: int = 11
    batch_size: int = 1000
    z: float = 3.0
    tie_tolerance: float = DEFAULT_TIE_TOLERANCE
    max_depth: int | None = None
    min_samples_leaf: int = 1
    max_leaf_nodes: int | None = None
    max_features: int | None = None


@dataclass(frozen=True)
class GrownTree:
    """A tree and what growing it cost: histogram insertions (points x
    features) and rows sampled by the split search of every node (0 at nodes
    that were not searched)."""

    tree: TreeArrays
    insertions: np.ndarray
    rows_used: np.ndarray

    @property
    def n_insertions(self) -> int:
        return int(self.insertions.sum())


def seed_state(random_state) -> np.ndarray:
    """The kernels' generator state (:func:`bandit_tree_tools.bandits._random.kernel_rng`)."""
    return kernel_rng(random_state)


def node_capacity(n_rows: int, max_depth: int | None, max_leaf_nodes: int | None) -> int:
    """An upper bound on the number of nodes, to preallocate the arrays."""
    capacity = 2 * max(n_rows, 1) - 1
    if max_depth is not None and max_depth < 62:
        capacity = min(capacity, 2 ** (max_depth + 1) - 1)
    if max_leaf_nodes is not None:
        capacity = min(capacity, 2 * max_leaf_nodes - 1)
    return max(capacity, 1)


def grow_tree(
    X: np.ndarray,
    rows: np.ndarray,
    y_code: np.ndarray,
    y_value: np.ndarray,
    n_classes: int,
    settings: GrowthSettings,
    random_state,
    has_missing: bool | None = None,
) -> GrownTree:
    """Grow a tree on ``X[rows]`` (rows may repeat: bootstrap samples).

    ``X`` is C-contiguous float32 or float64; thresholds are rounded to X's
    dtype, so comparing in that dtype reproduces the kernels' partitions.
    ``y_code`` holds class codes ``0..n_classes-1`` (classification) and
    ``y_value`` the targets (regression); the other one may be empty.
    ``random_state`` (anything :func:`~bandit_tree_tools._validation.check_random_state`
    takes) orders the rows and seeds the kernels. ``has_missing``: whether
    ``X[rows]`` may hold NaN (None: looked up here; a forest looks it up
    once for all its trees).
    """
    criterion = CRITERIA[settings.criterion]
    is_regression = criterion == _kernels.SQUARED_ERROR
    n_features = X.shape[1]
    max_features = n_features if settings.max_features is None else int(settings.max_features)
    # The kernel wants the rows in random order, stored contiguously: then the
    # head of every node's slice is a sample without replacement and batches
    # are read in memory order. A permuted copy of X[rows] gives both.
    rows = np.asarray(rows, dtype=np.int64)
    generator = check_random_state(random_state)
    order = rows[generator.permutation(rows.shape[0])]
    X_order = np.ascontiguousarray(X[order])
    y_code = np.ascontiguousarray(np.asarray(y_code, dtype=np.int64)[order] if len(y_code) else y_code, dtype=np.int64)
    y_value = np.ascontiguousarray(
        np.asarray(y_value, dtype=np.float64)[order] if len(y_value) else y_value, dtype=np.float64
    )
    capacity = node_capacity(rows.shape[0], settings.max_depth, settings.max_leaf_nodes)
    search = _kernels.SplitSearch(
        criterion,
        settings.solver == "mab",
        int(settings.batch_size),
        float(settings.z),
        float(settings.tie_tolerance),
        int(settings.min_samples_leaf),
    )
    if has_missing is None:
        has_missing = bool(np.isnan(X_order).any())
    node_edges = _kernels.NodeEdges(BINS[settings.bins], int(settings.n_bins), X.dtype == np.float32, has_missing)
    limits = _kernels.TreeLimits(
        -1 if settings.max_depth is None else int(settings.max_depth),
        0 if settings.max_leaf_nodes is None else int(settings.max_leaf_nodes),
        max_features,
        capacity,
    )
    (left, right, feature, threshold, missing_left, value, n_node_samples, impurity, insertions, rows_used) = (
        _kernels._build_tree(
            X_order,
            np.arange(rows.shape[0], dtype=np.int64),
            y_code,
            y_value,
            1 if is_regression else int(n_classes),
            search,
            node_edges,
            limits,
            kernel_rng(generator),
        )
    )
    internal = left >= 0
    gain = np.full(left.shape[0], np.nan)
    weighted = n_node_samples * impurity
    gain[internal] = weighted[internal] - weighted[left[internal]] - weighted[right[internal]]
    tree = make_tree(
        left,
        right,
        feature,
        threshold,
        value,
        missing_go_to_left=missing_left,
        n_node_samples=n_node_samples,
        weighted_n_node_samples=n_node_samples.astype(np.float64),
        impurity=impurity,
        gain=gain,
        check=False,
    )
    return GrownTree(tree=tree, insertions=insertions.copy(), rows_used=rows_used.copy())
