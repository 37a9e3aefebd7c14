"""Medoid prototypes of every leaf of a tree: which real rows does a leaf
stand for? :func:`leaf_medoids` and its result :class:`LeafMedoids`."""

import numbers
from dataclasses import dataclass, field

import joblib
import numpy as np

from ..exceptions import DataError, NodeError, ParameterError
from ._core import check_rows, distances_to, fit_medoids, numba_threads
from ._distances import resolve_metric


@dataclass
class LeafMedoids:
    """Medoids of the training rows that reach each leaf of one tree.

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
    feature_names : array of str or None
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

    @property
    def leaves(self) -> np.ndarray:
        return np.array(sorted(self.medoids), dtype=np.int64)

    @property
    def algorithm(self) -> str:
        used = sorted(set(self.algorithms.values()))
        return "+".join(used) if used else "none"

    def __repr__(self) -> str:
        lines = [
            f"LeafMedoids(tree={self.tree}, leaves={len(self.medoids)}, metric={self.metric!r}, "
            f"algorithm={self.algorithm!r}, n_distance_calls={self.n_distance_calls})"
        ]
        for leaf in self.leaves[:8]:
            lines.append(
                f"  leaf {leaf:>5}: {self.n_samples[leaf]:>6} rows, medoid rows {self.medoids[leaf].tolist()}, "
                f"sizes {self.cluster_sizes[leaf].tolist()}, loss {self.loss[leaf]:.4g}"
            )
        if len(self.medoids) > 8:
            lines.append(f"  ... {len(self.medoids) - 8} more leaves")
        return "\n".join(lines)

    def plot(self, image_shape=None, *, max_leaves=12, cmap="gray_r"):
        """Draw the prototypes of the largest ``max_leaves`` leaves. With
        ``image_shape`` (e.g. (8, 8) for digits) each medoid is an image and
        the leaves are laid out in blocks side by side (the figure stays
        about as wide as tall); otherwise each leaf gets a panel of feature
        profiles, one line per medoid, the legend outside the data. Returns
        the matplotlib Figure."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        leaves = sorted((leaf for leaf in self.medoids if len(self.medoids[leaf])),
                        key=lambda leaf: (-self.n_samples[leaf], leaf))[:max_leaves]
        title = f"Medoids of the leaves of tree {self.tree} ({self.metric})"
        if not leaves:
            figure, axis = plt.subplots(figsize=(4, 1))
            axis.text(0.5, 0.5, "no leaf has rows", ha="center", va="center")
            axis.set_axis_off()
            return figure
        if image_shape is not None:
            image_shape = tuple(int(size) for size in image_shape)
            width = self.prototypes[leaves[0]].shape[1]
            if int(np.prod(image_shape)) != width:
                raise DataError(f"image_shape {image_shape} holds {int(np.prod(image_shape))} values, "
                                f"but the rows have {width} features")
            k = max(len(self.medoids[leaf]) for leaf in leaves)
            # blocks of k panels per leaf, as many blocks per row as keep
            # the grid near square (no tall strip of three columns)
            per_row = max(1, min(len(leaves), int(np.ceil(np.sqrt(len(leaves) / k)))))
            n_rows = int(np.ceil(len(leaves) / per_row))
            figure, axes = plt.subplots(n_rows, per_row * k, squeeze=False, layout="constrained",
                                        figsize=(1.25 * per_row * k + 0.6, 1.45 * n_rows + 0.5))
            used = set()
            for index, leaf in enumerate(leaves):
                row, block = divmod(index, per_row)
                for column in range(len(self.medoids[leaf])):
                    axis = axes[row, block * k + column]
                    used.add((row, block * k + column))
                    axis.set_xticks([])
                    axis.set_yticks([])
                    axis.imshow(self.prototypes[leaf][column].reshape(image_shape), cmap=cmap)
                    axis.set_title(f"row {self.medoids[leaf][column]} ({self.cluster_sizes[leaf][column]})",
                                   fontsize=7)
                axes[row, block * k].set_ylabel(f"leaf {leaf}\n{self.n_samples[leaf]} rows", fontsize=8)
            for (row, column), axis in np.ndenumerate(axes):
                if (row, column) not in used:
                    figure.delaxes(axis)  # cells without a medoid: nothing drawn, nothing counted
            figure.suptitle(title + "; (n): rows nearest each medoid", fontsize=9)
            return figure
        figure, axes = plt.subplots(len(leaves), 1, figsize=(8.5, 1.5 * len(leaves) + 0.8), squeeze=False,
                                    sharex=True, layout="constrained")
        for row, leaf in enumerate(leaves):
            axis = axes[row, 0]
            for column, values in enumerate(self.prototypes[leaf]):
                axis.plot(values, marker=".", label=f"row {self.medoids[leaf][column]} "
                          f"({self.cluster_sizes[leaf][column]})")
            axis.set_ylabel(f"leaf {leaf}\n{self.n_samples[leaf]} rows", fontsize=8)
            axis.yaxis.set_major_locator(MaxNLocator(nbins=4))
            axis.tick_params(labelsize=7)
            # outside the data, on the right of each panel
            axis.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)
        bottom = axes[-1, 0]
        if self.feature_names is not None and len(self.feature_names) <= 30:
            bottom.set_xticks(range(len(self.feature_names)))
            bottom.set_xticklabels(self.feature_names, rotation=60, ha="right", fontsize=7)
        else:
            bottom.xaxis.set_major_locator(MaxNLocator(integer=True))  # features are counted
            bottom.set_xlabel("feature index")
        figure.suptitle(title + "; (n): rows nearest each medoid", fontsize=9)
        return figure


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


def _seed_source(random_state):
    """``random_state`` as numpy's ``default_rng`` takes it (a RandomState gives one draw)."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    accepted = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)
    if random_state is None or isinstance(random_state, accepted):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ParameterError(
            f"random_state must be None, an int >= 0, a numpy Generator or a RandomState, got {random_state!r}"
        )
    return int(random_state)


def leaf_medoids(model_or_ensemble, X, *, n_medoids=3, tree=0, leaves=None, metric="euclidean", p=2.0,
                 algorithm="auto", max_iter=100, random_state=0, n_jobs=None) -> LeafMedoids:
    """Medoid rows of every leaf of one tree.

    The rows of ``X`` are routed through tree ``tree`` of the model
    (imported with :func:`bandit_tree_tools.from_model`, never modified);
    the rows reaching each leaf are clustered with :class:`KMedoids`' kernels
    (``algorithm="auto"``: exact PAM at the usual leaf sizes). Leaves run in
    parallel with joblib (``n_jobs``; any joblib backend, e.g. dask). The
    result is the same for every ``n_jobs`` and backend.

    ``metric`` (and ``p``) as in :class:`KMedoids`, except "precomputed";
    ``leaves`` restricts the work to some leaf ids (node ids of the tree);
    ``random_state`` seeds each leaf's run (BanditPAM's permutation,
    FasterPAM's start) in leaf order, whatever the backend.
    ``n_distance_calls`` counts the algorithms' calls, not the final
    assignment of rows to medoids.
    """
    from ..interop import from_model
    from ..tree import check_X

    ensemble = from_model(model_or_ensemble)
    if isinstance(tree, bool) or not isinstance(tree, (int, np.integer)) or not 0 <= tree < ensemble.n_trees:
        raise NodeError(f"tree must be an index in [0, {ensemble.n_trees}), got {tree!r}")
    if isinstance(n_medoids, bool) or not isinstance(n_medoids, (int, np.integer)) or n_medoids < 1:
        raise DataError(f"n_medoids must be an integer >= 1, got {n_medoids!r}")
    if isinstance(metric, str) and metric.lower() == "precomputed":
        raise DataError("leaf_medoids needs the rows of X, not distances: metric='precomputed' is not supported")
    resolve_metric(metric, p)  # fail early, with the metric's own message
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
    values = check_rows(check_X(X, ensemble.n_features_in_, ensemble.feature_names_in_, "float64"))
    leaf_of_row = ensemble.apply(X, trees=[tree])[:, 0]  # routes this tree only
    seeds = np.random.default_rng(_seed_source(random_state)).integers(0, 2**31 - 1, size=chosen.size)
    jobs = []
    for leaf, seed in zip(chosen, seeds):
        rows = np.flatnonzero(leaf_of_row == leaf)
        jobs.append(joblib.delayed(_one_leaf)(rows, values[rows], int(n_medoids), metric, p, algorithm, int(seed),
                                              max_iter))
    outputs = joblib.Parallel(n_jobs=n_jobs)(jobs)
    result = LeafMedoids(tree=int(tree), medoids={}, cluster_sizes={}, loss={}, n_samples={}, prototypes={},
                         metric=metric if isinstance(metric, str) else resolve_metric(metric, p).name,
                         feature_names=ensemble.feature_names_in_)
    for leaf, (medoid_rows, sizes, loss, calls, used) in zip(chosen.tolist(), outputs):
        result.medoids[leaf] = medoid_rows
        result.cluster_sizes[leaf] = sizes
        result.loss[leaf] = loss
        result.n_samples[leaf] = int(sizes.sum())
        result.prototypes[leaf] = values[medoid_rows]
        result.algorithms[leaf] = used
        result.n_distance_calls += calls
    return result


__all__ = ["LeafMedoids", "leaf_medoids"]
