"""The scikit-learn estimator: :class:`KMedoids`."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .._numba_config import numba_threads
from .._validation import Interval, Options, check_params, seed_from
from ..exceptions import DataError
from ..tree._input import non_numeric_columns
from ._core import (
    ALGORITHMS,
    check_confidence,
    check_finite_loss,
    check_n_clusters,
    check_rows,
    distances_to,
    fit_medoids,
)
from ._distances import CALLABLE, PRECOMPUTED, check_precomputed, resolve_metric


class KMedoids(ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-medoids clustering: k actual rows that minimise the sum of distances
    of every row to its nearest medoid, under any distance.

    Parameters
    ----------
    n_clusters : int, default=5
        Number of medoids, ``1 <= n_clusters <= n_samples``
        (``n_clusters == n_samples`` makes every row a medoid; more raises
        :class:`~bandit_tree_tools.DataError`).
    metric : str or numba-compiled function, default="euclidean"
        "euclidean" ("l2"), "sqeuclidean", "manhattan" ("l1", "cityblock"),
        "minkowski" (power ``p``), "chebyshev", "cosine" (1 - cosine
        similarity; a zero row is at distance 1 from other rows),
        "precomputed" (X is a symmetric, non-negative (n, n) distance
        matrix; predict/transform then take distances to the training rows,
        (n_queries, n_train)), or a ``@numba.njit`` function
        ``f(a, b) -> float`` of two float64 rows (the distance of row ``a``
        to medoid ``b``).
    p : float, default=2.0
        Power of the "minkowski" metric.
    algorithm : {"auto", "pam", "fasterpam", "banditpam"}, default="auto"
        "pam": exact PAM (BUILD, then SWAP with FastPAM1) on the distance
        matrix, the reference. "fasterpam": eager swaps on the matrix from a
        random start (loss usually equal to PAM's, much faster). "banditpam":
        BanditPAM++, which returns PAM's medoids with high probability from
        sampled distances; it caches the distances it computes, for rows of
        64 or more features (or a user metric) in up to a quarter of the
        available memory. Its savings depend on the data: they shrink when
        the best candidates differ little (by O(1/sqrt(n)) on mixtures of
        equal-size clusters); the README gives measured figures. "auto": PAM
        for small n, FasterPAM while the matrix is cheap and fits in memory,
        BanditPAM beyond (thresholds in ``bandit_tree_tools.medoids._core``).
    max_iter : int, default=100
        Maximum number of swaps (PAM, BanditPAM) or passes (FasterPAM).
    build_confidence, swap_confidence : float, default=5.0 and 8.0
        BanditPAM's confidence: the radius of an arm after ``t`` references is
        ``sigma * sqrt((confidence + ln(arms)) / t)``. Larger is safer and
        slower; ``math.inf`` evaluates every arm exactly, which makes
        BanditPAM return exactly PAM's medoids.
    batch_size : int, default=100
        References sampled per round of BanditPAM.
    random_state : int, RandomState or None
        Seeds BanditPAM's permutation of the references and FasterPAM's start.
    n_jobs : int or None, default=-1
        Threads of the numba kernels, by the library's rule for ``n_jobs``
        (None or 1: serial; -1: every core; -2: all but one).

    Attributes
    ----------
    medoid_indices_ : int64 (n_clusters,)
        Rows of the training data chosen as medoids.
    cluster_centers_ : (n_clusters, n_features) or None
        The medoid rows (None for "precomputed").
    labels_ : int64 (n_samples,)
        Index of each training row's nearest medoid.
    inertia_ : float
        Sum of distances of the training rows to their nearest medoid.
    n_iter_ : int
        Swaps performed (PAM, BanditPAM) or passes over the data (FasterPAM).
    n_distance_calls_ : int
        Distance evaluations (for "precomputed": matrix entries read).
    algorithm_ : str
        The algorithm that ran ("auto" resolved).

    Raises
    ------
    ParameterError
        In ``fit``, for a bad parameter (``n_clusters`` < 1, an unknown
        ``algorithm`` or ``metric``, ...).
    DataError
        In ``fit``, for bad data (NaN, more clusters than rows, a
        precomputed matrix that is not a distance matrix, values whose
        distances overflow float64).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.2], [5.0, 5.0], [5.1, 5.0], [5.0, 5.3]])
    >>> model = btt.KMedoids(n_clusters=2, random_state=0).fit(X)
    >>> sorted(model.medoid_indices_.tolist()), model.algorithm_
    ([0, 3], 'pam')
    >>> model.predict([[0.05, 0.1], [4.9, 5.2]]).tolist() == model.labels_[[0, 3]].tolist()
    True
    >>> round(model.inertia_, 3)
    0.7
    """

    def __init__(
        self,
        n_clusters=5,
        *,
        metric="euclidean",
        p=2.0,
        algorithm="auto",
        max_iter=100,
        build_confidence=5.0,
        swap_confidence=8.0,
        batch_size=100,
        random_state=None,
        n_jobs=-1,
    ):
        self.n_clusters = n_clusters
        self.metric = metric
        self.p = p
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.build_confidence = build_confidence
        self.swap_confidence = swap_confidence
        self.batch_size = batch_size
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        return tags

    # what each parameter accepts (metric and p further by resolve_metric: a known name or a
    # numba function, a finite p > 0 for minkowski; the confidences take math.inf)
    _parameter_constraints: dict = {
        "n_clusters": [Interval(int, 1, None)],
        "metric": [str, callable],
        "p": [float],
        "build_confidence": [Interval(float, 0, None, closed="left")],
        "swap_confidence": [Interval(float, 0, None, closed="left")],
        "algorithm": [Options(ALGORITHMS)],
        "max_iter": [Interval(int, 0, None)],
        "batch_size": [Interval(int, 1, None)],
        "random_state": ["random_state"],
        "n_jobs": [int, None],
    }

    def _check_params(self):
        check_params(self.get_params(deep=False), self._parameter_constraints, owner="KMedoids")
        build = check_confidence("build_confidence", self.build_confidence)
        swap = check_confidence("swap_confidence", self.swap_confidence)
        return resolve_metric(self.metric, self.p), build, swap

    def fit(self, X, y=None):
        """Choose the medoids among the rows of ``X``."""
        metric, build, swap = self._check_params()
        _refuse_non_numeric(X)
        # NaN and infinity are left to check_rows, whose DataError says what to do
        X = validate_data(self, X, dtype=np.float64, order="C", ensure_min_samples=1, ensure_all_finite=False)
        X = check_rows(X)
        if metric.code == PRECOMPUTED:
            check_precomputed(X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        seed = seed_from(self.random_state)
        with numba_threads(self.n_jobs):
            result = fit_medoids(
                X,
                k,
                metric,
                algorithm=self.algorithm,
                max_iter=self.max_iter,
                build_confidence=build,
                swap_confidence=swap,
                batch_size=self.batch_size,
                random_state=seed,
            )
            distances = distances_to(X, X, result.medoids, metric)
        if metric.code == CALLABLE and distances.size and np.nanmin(distances) < 0:
            row, column = np.unravel_index(np.nanargmin(distances), distances.shape)
            raise DataError(
                f"the metric {metric.name!r} returned a negative distance ({float(distances[row, column]):.6g}, "
                f"between rows {int(row)} and {int(result.medoids[column])}); k-medoids needs distances >= 0"
            )
        inertia = float(np.min(distances, axis=1).sum())
        check_finite_loss(inertia, metric, X)  # before any fitted attribute is set
        if not result.converged:
            warnings.warn(
                f"KMedoids ({result.algorithm}) stopped after max_iter={self.max_iter} before converging; "
                "increase max_iter",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.medoid_indices_ = result.medoids.astype(np.int64)
        self.cluster_centers_ = None if metric.code == PRECOMPUTED else X[self.medoid_indices_].copy()
        self.labels_ = np.argmin(distances, axis=1).astype(np.int64)
        self.inertia_ = inertia
        self.n_iter_ = result.n_iter
        self.n_distance_calls_ = result.n_distance_calls
        self.algorithm_ = result.algorithm
        self._train = None if metric.code == PRECOMPUTED else X[self.medoid_indices_].copy()
        self._n_features_out = k  # transform's columns: kmedoids0, kmedoids1, ... (get_feature_names_out)
        return self

    def transform(self, X):
        """Distances of the rows of ``X`` to the medoids, (n_samples, n_clusters).
        For "precomputed", X holds distances to the training rows, (n_samples, n_train).
        A DataFrame with ``set_output(transform="pandas")``."""
        return self._distances(X)

    def _distances(self, X) -> np.ndarray:
        check_is_fitted(self, "medoid_indices_")
        metric = resolve_metric(self.metric, self.p)
        _refuse_non_numeric(X)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False, ensure_all_finite=False)
        X = check_rows(X)
        with numba_threads(self.n_jobs):
            if metric.code == PRECOMPUTED:
                return distances_to(X, None, self.medoid_indices_, metric)
            return distances_to(X, self._train, np.arange(self._train.shape[0]), metric)

    def predict(self, X):
        """Index of the nearest medoid of each row of ``X``."""
        return np.argmin(self._distances(X), axis=1).astype(np.int64)

    def fit_predict(self, X, y=None):
        """Fit on ``X`` and return each row's cluster label (``labels_``);
        ``y`` is ignored."""
        return self.fit(X).labels_


def _refuse_non_numeric(X) -> None:
    """Text and category columns have no distance to measure (scikit-learn's
    conversion would fail on the first string with a bare ValueError)."""
    bad = non_numeric_columns(X)
    if bad:
        raise DataError(
            f"X has non-numeric columns {bad[:10]}; k-medoids measures distances between numbers: encode them "
            "(for example one-hot with sklearn.preprocessing.OneHotEncoder), drop them, or pass distances of your "
            "own with metric='precomputed'"
        )
