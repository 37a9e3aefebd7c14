"""Medoid prototypes of every leaf of a tree: which real rows does a leaf
stand for? :func:`leaf_medoids` and its result :class:`LeafMedoids`."""

import hashlib
from dataclasses import dataclass, field

import joblib
import numpy as np
from tqdm.auto import tqdm

from .._html import html_view
from .._numba_config import numba_threads
from .._side_compile import compiling_beside
from .._validation import Interval, Options, check_params, check_random_state, validate_params
from ..exceptions import DataError, NodeError, ParameterError
from ._core import ALGORITHMS, as_rows, check_finite_loss, check_rows, distances_to, fit_medoids
from ._distances import resolve_metric


def rows_fingerprint(values: np.ndarray) -> str:
    """A short hash of float64 rows: equal for the same rows in the same order."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    digest = hashlib.blake2b(repr(values.shape).encode(), digest_size=8)
    digest.update(values.view(np.uint8).reshape(-1))
    return digest.hexdigest()


def tree_fingerprint(ensemble, tree: int) -> str:
    """A short hash of one tree's structure (children, features, thresholds)
    and of the ensemble's size: another model, or an edited tree, differs."""
    arrays = ensemble.trees[tree]
    digest = hashlib.blake2b(f"{ensemble.n_trees}/{ensemble.n_features_in_}/{tree}".encode(), digest_size=8)
    for name in ("children_left", "children_right", "feature", "threshold"):
        digest.update(np.ascontiguousarray(getattr(arrays, name)).view(np.uint8).reshape(-1))
    return digest.hexdigest()


def check_embedding(embedding, n_rows: int) -> np.ndarray:
    """The rows the distances are measured on: finite float64, one per row of X."""
    points = check_rows(embedding, what="embedding")
    if points.shape[0] != n_rows:
        raise DataError(f"embedding has {points.shape[0]} rows and X {n_rows}; pass one row of embedding per row of X")
    if points.shape[1] == 0:
        raise DataError("embedding has no columns; every row needs at least one coordinate to measure distances on")
    return points


PLOT_CONSTRAINTS = {"max_leaves": [None, Interval(int, 1, None)]}  # None: every leaf with rows


def check_image_shape(image_shape, n_features: int) -> tuple:
    """``image_shape`` as (height, width): two positive integers whose
    product is the number of features; ParameterError otherwise."""
    if isinstance(image_shape, (str, bytes)) or not hasattr(image_shape, "__len__"):
        sizes = None
    else:
        sizes = tuple(image_shape)
    if (
        sizes is None
        or len(sizes) != 2
        or not all(Interval(int, 1, None).accepts(size) for size in sizes)
        or sizes[0] * sizes[1] != n_features
    ):
        raise ParameterError(
            f"image_shape must be (height, width), two positive ints with height * width == {n_features} (the "
            f"number of features), got {image_shape!r}"
        )
    return int(sizes[0]), int(sizes[1])


@dataclass
class LeafMedoids:
    """Medoids of the training rows that reach each leaf of one tree.

    What it was computed with is recorded (``n_medoids``, ``tree``,
    ``metric``, ``p``, ``n_rows``, ``rows_fingerprint``, ``n_trees``,
    ``tree_nodes``, ``model_fingerprint``): :meth:`check_matches` tells
    whether the result belongs to a model, tree and rows, and
    :class:`~bandit_tree_tools.widgets.MedoidPanel` uses it.

    Attributes
    ----------
    tree : int
        Index of the tree in the ensemble.
    medoids : dict int -> int64 array
        Leaf id (node id in the common format, equal to the native library's
        leaf index for an unmodified import, e.g. scikit-learn's ``apply``) ->
        indices into ``X`` of the leaf's medoid rows. A leaf with fewer rows
        than ``n_medoids`` gets all its rows; a leaf no row reaches, none.
    cluster_sizes : dict int -> int64 array
        Rows of the leaf nearest to each medoid (same order as ``medoids``).
    loss : dict int -> float
        Sum of distances of the leaf's rows to their nearest medoid.
    n_samples : dict int -> int
        Rows of ``X`` reaching each leaf.
    prototypes : dict int -> float64 array (n_medoids, n_features)
        The medoid rows themselves (for plotting).
    metric, algorithm : str
        Distance used and algorithm that ran ("auto" resolved; per leaf in
        ``algorithms``).
    n_distance_calls : int
        Distance evaluations over all leaves.
    distance_calls : dict int -> int
        Distance evaluations per leaf.
    feature_names : array of str or None
    n_medoids : int
        Medoids asked for per leaf.
    p : float
        Power of the "minkowski" metric.
    n_rows : int
        Rows of ``X``.
    rows_fingerprint : str
        A hash of the rows of ``X`` (as float64).
    n_trees, tree_nodes : int
        Trees of the model and nodes of tree ``tree``.
    model_fingerprint : str
        A hash of tree ``tree``'s structure and of the model's size.
    embedding_fingerprint : str
        A hash of the ``embedding`` the distances were measured on; "" when
        they were measured on ``X``.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = DecisionTreeClassifier(max_leaf_nodes=4, random_state=0).fit(X, y)
    >>> result = btt.leaf_medoids(model, X, n_medoids=2)
    >>> result.n_medoids, result.tree, result.n_rows, len(result.leaves)
    (2, 0, 200, 4)
    >>> result.check_matches(model, X[:100])
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.DataError: these medoids were computed on 200 rows of X, not on these 100 rows
    """

    tree: int
    medoids: dict
    cluster_sizes: dict
    loss: dict
    n_samples: dict
    prototypes: dict = field(repr=False)
    metric: str = "euclidean"
    algorithms: dict = field(default_factory=dict, repr=False)
    n_distance_calls: int = 0
    feature_names: np.ndarray | None = field(default=None, repr=False)
    n_medoids: int = 0
    p: float = 2.0
    n_rows: int = 0
    rows_fingerprint: str = ""
    n_trees: int = 0
    tree_nodes: int = 0
    model_fingerprint: str = ""
    distance_calls: dict = field(default_factory=dict, repr=False)
    embedding_fingerprint: str = ""

    @property
    def leaves(self) -> np.ndarray:
        """The leaves of tree ``tree`` (node ids, ascending), one per key of ``medoids``."""
        return np.array(sorted(self.medoids), dtype=np.int64)

    @property
    def algorithm(self) -> str:
        """The algorithms that found the medoids, joined by "+" ("none" when no leaf had rows)."""
        used = sorted(set(self.algorithms.values()))
        return "+".join(used) if used else "none"

    def differences(
        self, *, ensemble=None, X=None, tree=None, n_medoids=None, metric=None, embedding_fingerprint=None
    ) -> list:
        """What differs between this result's record and the given model
        (an :class:`Ensemble`), rows (float64 2-D), tree, number of medoids,
        metric and embedding (its fingerprint, "" for none) (``None``: not
        compared); one sentence each."""
        found = []
        if embedding_fingerprint is not None and embedding_fingerprint != self.embedding_fingerprint:
            computed = "an embedding" if self.embedding_fingerprint else "X"
            if self.embedding_fingerprint and embedding_fingerprint:
                computed = "another embedding"
            given = "this embedding" if embedding_fingerprint else "X"
            found.append(f"these medoids were computed with distances on {computed}, not on {given}")
        if tree is not None and int(tree) != self.tree:
            found.append(f"these medoids are of tree {self.tree}, not of tree {int(tree)}")
        if n_medoids is not None and int(n_medoids) != self.n_medoids:
            found.append(f"these medoids were computed with n_medoids={self.n_medoids}, not {int(n_medoids)}")
        if metric is not None and metric != self.metric:
            found.append(f"these medoids were computed with metric={self.metric!r}, not {metric!r}")
        if ensemble is not None:
            if ensemble.n_trees != self.n_trees or not 0 <= self.tree < ensemble.n_trees:
                found.append(
                    f"these medoids were computed on a model of {self.n_trees} trees, not on this one of "
                    f"{ensemble.n_trees}"
                )
            elif ensemble.trees[self.tree].n_nodes != self.tree_nodes:
                found.append(
                    f"tree {self.tree} had {self.tree_nodes} nodes when these medoids were computed, "
                    f"this model's has {ensemble.trees[self.tree].n_nodes}"
                )
            elif tree_fingerprint(ensemble, self.tree) != self.model_fingerprint:
                found.append(
                    f"tree {self.tree} of this model splits differently from the one these medoids were computed on"
                )
        if X is not None:
            if X.shape[0] != self.n_rows:
                found.append(f"these medoids were computed on {self.n_rows} rows of X, not on these {X.shape[0]} rows")
            elif rows_fingerprint(X) != self.rows_fingerprint:
                found.append(
                    f"these medoids were computed on other rows of X (the same number, {self.n_rows}, "
                    "with other values or in another order)"
                )
        return found

    def check_matches(self, model=None, X=None, *, tree=None, n_medoids=None, metric=None) -> None:
        """Raise :class:`~bandit_tree_tools.DataError` (another model or other
        rows) or :class:`~bandit_tree_tools.ParameterError` (another tree,
        ``n_medoids`` or metric) saying what differs; ``None`` arguments are
        not compared."""
        from ..interop import from_model

        ensemble = from_model(model) if model is not None else None
        values = as_rows(X) if X is not None else None
        data = self.differences(ensemble=ensemble, X=values)
        if data:
            raise DataError("; ".join(data))
        settings = self.differences(tree=tree, n_medoids=n_medoids, metric=metric)
        if settings:
            raise ParameterError("; ".join(settings))

    def to_frame(self):
        """One row per leaf: its rows, its medoids (row numbers of ``X``), their
        clusters' sizes, the loss (sum of distances to the nearest medoid) and
        the algorithm that found them."""
        import pandas as pd

        leaves = self.leaves.tolist()
        return pd.DataFrame(
            {
                "leaf": leaves,
                "n_samples": [int(self.n_samples[leaf]) for leaf in leaves],
                "medoids": [self.medoids[leaf].tolist() for leaf in leaves],
                "cluster_sizes": [self.cluster_sizes[leaf].tolist() for leaf in leaves],
                "loss": [float(self.loss[leaf]) for leaf in leaves],
                "algorithm": [self.algorithms.get(leaf, "none") for leaf in leaves],
            }
        )

    def _head(self) -> str:
        return (
            f"LeafMedoids(tree={self.tree}, n_medoids={self.n_medoids}, leaves={len(self.medoids)}, "
            f"metric={self.metric!r}, algorithm={self.algorithm!r}, n_distance_calls={self.n_distance_calls})"
        )

    def _repr_html_(self) -> str:
        """Jupyter's view: the first line of the repr and the leaves' table
        (the first 50 leaves)."""
        return html_view(self._head(), [self.to_frame()], index=False, rows="leaves")

    def __repr__(self) -> str:
        lines = [self._head()]
        for leaf in self.leaves[:8]:
            lines.append(
                f"  leaf {leaf:>5}: {self.n_samples[leaf]:>6} rows, medoid rows {self.medoids[leaf].tolist()}, "
                f"sizes {self.cluster_sizes[leaf].tolist()}, loss {self.loss[leaf]:.4g}"
            )
        if len(self.medoids) > 8:
            lines.append(f"  ... {len(self.medoids) - 8} more leaves")
        return "\n".join(lines)

    def _plotted_leaves(self, max_leaves) -> list:
        return sorted(
            (leaf for leaf in self.medoids if len(self.medoids[leaf])), key=lambda leaf: (-self.n_samples[leaf], leaf)
        )[:max_leaves]

    def n_panels(self, image_shape=None, *, max_leaves=12) -> int:
        """How many Axes :meth:`plot` draws on with these arguments (the
        length of the ``ax`` sequence it takes): one per medoid image with
        ``image_shape``, one per leaf otherwise, 1 when no leaf has rows."""
        check_params(dict(max_leaves=max_leaves), PLOT_CONSTRAINTS, owner="LeafMedoids.n_panels")
        leaves = self._plotted_leaves(max_leaves)
        if not leaves:
            return 1
        if image_shape is None:
            return len(leaves)
        return sum(len(self.medoids[leaf]) for leaf in leaves)

    def plot(self, image_shape=None, *, ax=None, max_leaves=12, cmap="gray_r"):
        """Draw the prototypes of the largest ``max_leaves`` leaves (None:
        every leaf with rows) and
        return the :class:`matplotlib.figure.Figure` (the project's plotting
        convention).

        With ``image_shape`` (e.g. (8, 8) for digits) each medoid is an image,
        one Axes per medoid, and a new figure lays the leaves out in blocks
        side by side (about as wide as tall); otherwise each leaf gets an
        Axes of feature profiles, one line per medoid, the legend outside the
        data. ``ax``: None (a new figure) or a sequence of
        ``n_panels(image_shape, max_leaves=...)`` Axes, filled in order
        (leaves largest first)."""
        from .._plotting import axes_for, pyplot

        check_params(dict(max_leaves=max_leaves), PLOT_CONSTRAINTS, owner="LeafMedoids.plot")
        leaves = self._plotted_leaves(max_leaves)
        title = f"Medoids of the leaves of tree {self.tree} ({self.metric}); (n): rows nearest each medoid"
        if image_shape is not None and leaves:
            image_shape = check_image_shape(image_shape, self.prototypes[leaves[0]].shape[1])
        if ax is not None:
            figure, axes = axes_for(ax, self.n_panels(image_shape, max_leaves=max_leaves))
        elif not leaves:
            figure, axes = axes_for(None, 1, panel_size=(4, 1))
        elif image_shape is not None:
            figure, axes = self._image_grid(leaves, pyplot())
        else:
            figure, axes = axes_for(None, len(leaves), panel_size=(8.5, 1.5), ncols=1)
            figure.set_size_inches(8.5, 1.5 * len(leaves) + 0.8)
        if not leaves:
            axes[0].text(0.5, 0.5, "no leaf has rows", ha="center", va="center")
            axes[0].set_axis_off()
        elif image_shape is not None:
            self._draw_images(leaves, axes, image_shape, cmap)
        else:
            self._draw_profiles(leaves, axes, share=ax is None)
        if ax is None and leaves:
            figure.suptitle(title, fontsize=9)
        return figure

    def _image_grid(self, leaves, plt):
        """A new figure: blocks of k image panels per leaf, as many blocks per
        row as keep the grid near square; cells without a medoid removed.
        Returns the medoids' Axes in drawing order."""
        k = max(len(self.medoids[leaf]) for leaf in leaves)
        per_row = max(1, min(len(leaves), int(np.ceil(np.sqrt(len(leaves) / k)))))
        n_rows = int(np.ceil(len(leaves) / per_row))
        figure, grid = plt.subplots(
            n_rows,
            per_row * k,
            squeeze=False,
            layout="constrained",
            figsize=(1.25 * per_row * k + 0.6, 1.45 * n_rows + 0.5),
        )
        axes, used = [], set()
        for index, leaf in enumerate(leaves):
            row, block = divmod(index, per_row)
            for column in range(len(self.medoids[leaf])):
                axes.append(grid[row, block * k + column])
                used.add((row, block * k + column))
        for (row, column), axis in np.ndenumerate(grid):
            if (row, column) not in used:
                figure.delaxes(axis)  # cells without a medoid: nothing drawn, nothing counted
        return figure, axes

    def _draw_images(self, leaves, axes, image_shape, cmap) -> None:
        panels = iter(axes)
        for leaf in leaves:
            for column in range(len(self.medoids[leaf])):
                axis = next(panels)
                axis.set_xticks([])
                axis.set_yticks([])
                axis.imshow(self.prototypes[leaf][column].reshape(image_shape), cmap=cmap)
                axis.set_title(f"row {self.medoids[leaf][column]} ({self.cluster_sizes[leaf][column]})", fontsize=7)
                if column == 0:
                    axis.set_ylabel(f"leaf {leaf}\n{self.n_samples[leaf]} rows", fontsize=8)

    def _draw_profiles(self, leaves, axes, share: bool) -> None:
        from matplotlib.ticker import MaxNLocator

        for axis, leaf in zip(axes, leaves):
            for column, values in enumerate(self.prototypes[leaf]):
                axis.plot(
                    values, marker=".", label=f"row {self.medoids[leaf][column]} ({self.cluster_sizes[leaf][column]})"
                )
            axis.set_ylabel(f"leaf {leaf}\n{self.n_samples[leaf]} rows", fontsize=8)
            axis.yaxis.set_major_locator(MaxNLocator(nbins=4))
            axis.tick_params(labelsize=7)
            # outside the data, on the right of each panel
            axis.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)
        for axis in axes[:-1] if share else ():  # the user's Axes keep their own sharing
            axis.sharex(axes[-1])
            axis.tick_params(labelbottom=False)
        bottom = axes[-1]
        if self.feature_names is not None and len(self.feature_names) <= 30:
            bottom.set_xticks(range(len(self.feature_names)))
            bottom.set_xticklabels(self.feature_names, rotation=60, ha="right", fontsize=7)
        else:
            bottom.xaxis.set_major_locator(MaxNLocator(integer=True))  # features are counted
            bottom.set_xlabel("feature index")


def _one_leaf(rows, values, n_medoids, metric_spec, p, algorithm, seed, max_iter):
    """Medoids of one leaf's rows; runs in a joblib worker, so it resolves
    the metric itself and keeps numba on one thread (the workers are the
    parallelism)."""
    metric = resolve_metric(metric_spec, p)
    n = rows.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0, 0, "none"
    with numba_threads(1):
        if n <= n_medoids:
            medoids = np.arange(n, dtype=np.int64)
            calls, used = 0, "all rows"
        else:
            fit = fit_medoids(values, n_medoids, metric, algorithm=algorithm, max_iter=max_iter, random_state=seed)
            medoids, calls, used = fit.medoids, fit.n_distance_calls, fit.algorithm
        distances = distances_to(values, values, medoids, metric)
    labels = np.argmin(distances, axis=1)
    sizes = np.bincount(labels, minlength=medoids.shape[0]).astype(np.int64)
    loss = float(distances[np.arange(n), labels].sum())
    return rows[medoids], sizes, loss, int(calls), used


# what each parameter of leaf_medoids accepts (tree: an index below the number of trees, and
# leaves: leaf ids of that tree, checked against the model; metric further by resolve_metric)
LEAF_MEDOIDS_CONSTRAINTS = {
    "n_medoids": [Interval(int, 1, None)],
    "tree": [int],
    "leaves": [None, "array-like"],
    "metric": [str, callable],
    "p": [Interval(float, 0, None, "neither")],
    "algorithm": [Options(ALGORITHMS)],
    "max_iter": [Interval(int, 0, None)],
    "random_state": ["random_state"],
    "n_jobs": [None, int],
    "progress": ["boolean"],
    "embedding": [None, "array-like"],
}


@validate_params(LEAF_MEDOIDS_CONSTRAINTS, data=("model_or_ensemble", "X"))
@compiling_beside("leaf_medoids")  # a fresh environment's first call: a second core compiles too
def leaf_medoids(
    model_or_ensemble,
    X,
    *,
    n_medoids=3,
    tree=0,
    leaves=None,
    metric="euclidean",
    p=2.0,
    algorithm="auto",
    max_iter=100,
    random_state=0,
    n_jobs=None,
    progress=True,
    embedding=None,
) -> LeafMedoids:
    """Medoid rows of every leaf of one tree.

    The rows of ``X`` are routed through tree ``tree`` of the model
    (imported with :func:`bandit_tree_tools.from_model`, never modified;
    only that tree is routed); the rows reaching each leaf are clustered
    with :class:`KMedoids`' kernels (``algorithm="auto"``: exact PAM at the
    usual leaf sizes), on ``X`` itself or on ``embedding``: the model reads
    ``X`` as it is (NaN included) while the distances are measured where
    they mean something (imputed, scaled or embedded rows). Leaves run in
    parallel with joblib (``n_jobs`` workers, joblib's rule; any joblib
    backend, e.g. dask). The result is the same for every ``n_jobs`` and
    backend.

    Parameters
    ----------
    model_or_ensemble : fitted model or Ensemble
    X : array-like (n_rows, n_features)
        The rows to summarise (usually the training rows), as the model
        reads them; finite values unless ``embedding`` is given.
    n_medoids : int, default 3
        Medoids per leaf; a leaf with fewer rows gets all of them.
    tree : int, default 0
        Tree of an ensemble.
    leaves : array-like of int, optional
        Restrict the work to these leaf ids (node ids of the tree).
    metric, p
        As in :class:`KMedoids`, except "precomputed".
    algorithm : {"auto", "pam", "fasterpam", "banditpam"}
    max_iter : int, default 100
    random_state : int, RandomState, Generator or None, default 0
        Seeds each leaf's run (BanditPAM's permutation, FasterPAM's start),
        in leaf order, whatever the backend.
    n_jobs : int or None
        joblib workers (None: 1, -1: every core).
    progress : bool, default True
        Show a ``tqdm`` progress bar over the leaves (large ``X`` takes
        minutes: 500,000 rows in the 236 leaves of a depth-8 tree about 70 s).
    embedding : array-like (n_rows, n_dims), optional
        Where the distances are measured, one finite row per row of ``X``
        (any number of columns): for example ``X`` imputed where it holds
        NaN, standardised where its features' units differ, or embedded.
        None: on ``X``. The medoids are rows of ``X`` either way, and
        ``prototypes`` holds them as the model reads them.

    Returns
    -------
    LeafMedoids
        It records ``n_medoids``, ``tree``, ``metric``, ``p``, the rows
        (number and fingerprint) and the tree's identity.
        ``n_distance_calls`` (``distance_calls`` per leaf) counts the
        algorithms' calls, not the final assignment of rows to medoids.

    Raises
    ------
    ParameterError
        A bad parameter (``n_medoids``, ``p``, ``algorithm``, ``metric``,
        ``random_state``, ...).
    NodeError
        ``tree`` is not a tree of the model, or ``leaves`` holds a node that
        is not one of its leaves.
    DataError
        ``X`` does not fit the model or has no rows; the rows the distances
        are measured on (``embedding``, or ``X``) hold NaN or infinity or
        give non-finite distances (values too large for the metric's
        arithmetic); ``embedding`` has another number of rows than ``X``.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=3, max_leaf_nodes=5, random_state=0).fit(X, y)
    >>> result = btt.leaf_medoids(forest, X, n_medoids=2, tree=2, random_state=np.random.RandomState(0))
    >>> result.tree, result.n_medoids, sorted(result.medoids) == sorted(set(forest.estimators_[2].apply(X)))
    (2, 2, True)
    >>> sum(result.n_samples.values())
    200
    """
    from ..interop import from_model
    from ..tree import check_tree_index, check_X

    ensemble = from_model(model_or_ensemble)
    tree = check_tree_index(tree, ensemble.n_trees)
    if isinstance(metric, str) and metric.lower() == "precomputed":
        raise ParameterError("leaf_medoids needs the rows of X, not distances: metric='precomputed' is not supported")
    resolved = resolve_metric(metric, p)  # early, with the metric's own message
    generator = check_random_state(random_state)
    arrays = ensemble.trees[tree]
    all_leaves = np.flatnonzero(arrays.children_left == -1)
    if leaves is None:
        chosen = all_leaves
    else:
        chosen = np.unique(np.asarray(leaves, dtype=np.int64).reshape(-1))
        unknown = chosen[~np.isin(chosen, all_leaves)]
        if unknown.size:
            bad = int(unknown[0])
            kind = "an internal node" if 0 <= bad < arrays.n_nodes else "not a node"
            raise NodeError(
                f"leaf id {bad} of tree {tree} is {kind}; the tree's {all_leaves.size} leaves are "
                f"{all_leaves[:20].tolist()}{' ...' if all_leaves.size > 20 else ''}"
            )
    # X as the model reads it (its categories by value), float64 for the prototypes and the fingerprint
    routed = as_rows(
        check_X(
            X,
            ensemble.n_features_in_,
            ensemble.feature_names_in_,
            "float64",
            ensemble.feature_categories,
            library=ensemble.source.library,
        )
    )
    if routed.shape[0] == 0:
        raise DataError("X has no rows; leaf_medoids chooses each leaf's medoids among the rows of X that reach it")
    if embedding is None:
        points = check_rows(
            routed,
            fix="pass finite rows for the distances as embedding= (X imputed, and standardised where its features' "
            "units differ; the model still reads X as it is), or drop those rows",
        )
    else:
        points = check_embedding(embedding, routed.shape[0])
    leaf_of_row = ensemble.apply(X, trees=[tree])[:, 0]  # routes this tree only
    seeds = generator.integers(0, 2**31 - 1, size=chosen.size)
    jobs = []
    for leaf, seed in zip(chosen, seeds):
        rows = np.flatnonzero(leaf_of_row == leaf)
        jobs.append(
            joblib.delayed(_one_leaf)(rows, points[rows], int(n_medoids), metric, p, algorithm, int(seed), max_iter)
        )
    try:
        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")  # the bar counts leaves as they finish
    except ValueError:  # a backend that returns every result at once (joblib's "multiprocessing")
        parallel = joblib.Parallel(n_jobs=n_jobs)
    outputs = []
    with tqdm(total=len(jobs), desc="leaf medoids", unit="leaf", disable=not progress, leave=False) as bar:
        for output in parallel(jobs):
            outputs.append(output)
            bar.update()
    check_finite_loss(sum(output[2] for output in outputs), resolved, points)
    result = LeafMedoids(
        tree=int(tree),
        medoids={},
        cluster_sizes={},
        loss={},
        n_samples={},
        prototypes={},
        metric=metric if isinstance(metric, str) else resolved.name,
        feature_names=ensemble.feature_names_in_,
        n_medoids=int(n_medoids),
        p=float(p),
        n_rows=int(routed.shape[0]),
        rows_fingerprint=rows_fingerprint(routed),
        n_trees=int(ensemble.n_trees),
        tree_nodes=int(arrays.n_nodes),
        model_fingerprint=tree_fingerprint(ensemble, int(tree)),
        embedding_fingerprint="" if embedding is None else rows_fingerprint(points),
    )
    for leaf, (medoid_rows, sizes, loss, calls, used) in zip(chosen.tolist(), outputs):
        result.medoids[leaf] = medoid_rows
        result.cluster_sizes[leaf] = sizes
        result.loss[leaf] = loss
        result.n_samples[leaf] = int(sizes.sum())
        result.prototypes[leaf] = routed[medoid_rows]
        result.algorithms[leaf] = used
        result.distance_calls[leaf] = int(calls)
        result.n_distance_calls += calls
    return result


__all__ = ["LeafMedoids", "leaf_medoids"]
