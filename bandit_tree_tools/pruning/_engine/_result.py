"""What ``btt.prune`` returns: :class:`PrunePathResult`, the chosen model
with every walk of the search kept, so that ``choose`` can pick another
point of them without rerunning anything."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..._plotting import axes_for
from ...tree import Ensemble
from .._metrics import before_after
from .._result import PruneResult
from ._metrics import METRICS, _bound, _check_margin, _check_tolerance, metric_value, smoothed_metric, within_margin
from ._search import leaf_dtype, raw_through_leaves
from ._state import build_ensemble, pruned_nodes

__all__ = [
    "CROSS_FITTED",
    "DISTILLED",
    "OUT_OF_BAG",
    "OUT_OF_BAG_SQUARES",
    "OUTPUTS_ON_PERTURBED_VALIDATION",
    "PrunePathResult",
    "Walk",
]

CROSS_FITTED = "X_val, measured by walks on its halves"  # Walk.ranked_on without training rows, for forests
OUTPUTS_ON_PERTURBED_VALIDATION = "the model's outputs on perturbed X_val"  # the same, for boosted models
OUT_OF_BAG = "X_train, out of bag"
OUT_OF_BAG_SQUARES = "X_train, out of bag, by squared error"  # the class fractions' squared error ranks
DISTILLED = "the model's outputs on perturbed X_train"


@dataclass(frozen=True)
class Walk:
    """One walk of ``btt.prune``: its path (DataFrame), the state of every
    point, and how it went (leaves re-fitted, from re-weighted trees, which
    rows ranked the removals)."""

    path: pd.DataFrame
    states: list
    refit: bool
    reweighted: bool
    ranked_on: str


def _kept_whole(walks, chosen, tolerance, metric, margin) -> tuple:
    """``prune``'s note when no model smaller than the unpruned one is within
    the tolerance (none otherwise): what the first step measured, and what
    would let it prune."""
    stepped = [walk.path for walk in walks if len(walk.path) > 1]
    if chosen != 0 or not stepped:
        return ()
    first = stepped[0].iloc[1]
    change = first["metric"] - stepped[0]["metric"].iat[0]
    with_training_rows = any("X_train" in walk.ranked_on for walk in walks)
    remedies = (
        "More validation rows or a larger tolerance"
        if with_training_rows
        else "More validation rows, X_train and y_train (then every validation row checks) or a larger tolerance"
    )
    return (
        f"prune kept the unpruned model: no smaller model of its path is within the tolerance ({tolerance:g}) "
        f"by {margin:g} standard errors of its change in {metric} on the checking rows (after the first step the "
        f"change was {change:+.4f}, with a standard error of {first['metric_se']:.4f}). {remedies} let it "
        "prune; result.path holds every model it measured.",
    )


def _walk_choice(walk: Walk, metric: str, bound: float, margin: float) -> tuple:
    """(the walk's path with ``within_tolerance``, the row of its smallest
    model within ``bound`` by ``margin``): the rule of ``PruneResult.choose``
    on one walk. A point qualifies when both its own metric and its average
    with its neighbours are within: the averaging keeps out one lucky point
    among failing ones, and never lets in a point that is itself outside."""

    def within_bound(row: int) -> bool:
        standard_error = path["metric_se"].iat[row]
        return all(
            within_margin(metric, value, standard_error, bound, margin)
            for value in (path["metric"].iat[row], smoothed_metric(path, row))
        )

    path = walk.path.copy()
    # the unpruned model always qualifies
    path["within_tolerance"] = [row == 0 or within_bound(row) for row in range(len(path))]
    fits = np.flatnonzero(path["within_tolerance"].to_numpy())
    return path, int(min(fits, key=lambda row: (path["leaves"].iat[row], row)))


@dataclass(frozen=True, repr=False, eq=False)
class PrunePathResult(PruneResult):
    """What :func:`~bandit_tree_tools.prune` returns: a :class:`PruneResult`
    (``method="prune"``) whose ``path`` is the chosen walk's, ``chosen`` the
    row of ``path`` that ``ensemble`` is, with every walk of the search kept
    so that :meth:`choose` picks another point without rerunning anything.

    Fields beyond :class:`PruneResult`'s (private: read them through
    ``path``, ``walks``, ``metrics`` and :meth:`choose`): ``_walks``, every
    walk of the search; ``_walk``, the chosen one; ``_checking``, the validation
    rows (``X_val`` as validated, their target); ``_before``, the unpruned
    model's row of ``metrics``.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=600, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:300], y[:300])
    >>> result = btt.prune(model, X[300:], y[300:], tolerance=0.02, random_state=0, progress=False)
    >>> type(result).__name__, result.method
    ('PrunePathResult', 'prune')
    >>> looser = result.choose(0.05)  # a new result from the same walks, nothing rerun
    >>> looser.ensemble.n_leaves <= result.ensemble.n_leaves
    True
    """

    _walks: tuple = field(default=(), repr=False)
    _walk: Walk | None = field(default=None, repr=False)
    _checking: tuple = field(default=(), repr=False)
    _before: dict = field(default_factory=dict, repr=False)

    def _ensemble_by_position(self) -> Ensemble:
        """``ensemble`` with as many trees as ``original``, for views that pair
        them by position: a tree ``prune`` removed stays as one leaf of value 0."""
        if self.ensemble.n_trees == self.original.n_trees:
            return self.ensemble
        return build_ensemble(self.original, self._walk.states[self.chosen], keep_dead_trees=True)

    @property
    def metric_bound(self) -> float:
        """The worst validation metric the tolerance accepts."""
        return float(_bound(self.params["metric"], self.params["baseline"], self.params["tolerance"]))

    def choose(self, tolerance: float, margin: float | None = None) -> "PrunePathResult":
        """The smallest model of the path within another
        tolerance, or by another margin (same meanings as in
        :func:`~bandit_tree_tools.prune`; None keeps this result's margin), as
        a new result; nothing is rerun. The path holds the models the search
        visited, so a looser tolerance can only reach as far as it went."""
        metric = self.params["metric"]
        tolerance = _check_tolerance(tolerance, metric)
        margin = self.params["margin"] if margin is None else _check_margin(margin)
        bound = _bound(metric, self.params["baseline"], tolerance)
        # every walk the search took (with and without re-fitted leaves, from the unpruned and
        # from the re-weighted trees, ranked on every training row or out of bag); the smallest
        # model within the tolerance wins (the first walk of a tie), and ``path`` is the walk it is on
        choices = [_walk_choice(walk, metric, bound, margin) for walk in self._walks]
        best = min(range(len(choices)), key=lambda k: choices[k][0]["leaves"].iat[choices[k][1]])
        (path, chosen), walk = choices[best], self._walks[best]
        state = walk.states[chosen]
        pruned = build_ensemble(self.original, state)
        after = dict(self._summary(pruned, *self._checking), **{metric: float(path["metric"].iat[chosen])})
        return PrunePathResult(
            method=self.method,
            ensemble=pruned,
            original=self.original,
            pruned_nodes=pruned_nodes(self.original, state),
            metrics=before_after(self._before, after),
            path=path,
            params=dict(
                self.params,
                tolerance=tolerance,
                margin=margin,
                refit=walk.refit,
                reweighted=walk.reweighted,
                ranked_on=walk.ranked_on,
                warnings=_kept_whole(self._walks, chosen, tolerance, metric, margin),
            ),
            elapsed=self.elapsed,
            chosen=chosen,
            _walks=self._walks,
            _walk=walk,
            _checking=self._checking,
            _before=self._before,
        )

    @property
    def walks(self) -> pd.DataFrame:
        """``prune`` results: one row per walk the search took (``walk``, its
        number as ``callback`` gives it, from 0; the progress bar counts from
        1; ``ranked_on``, ``reweighted``, ``refit``; ``steps``), with the
        smallest model each reached within this result's tolerance and margin
        (``leaves``, ``trees`` and ``metric`` of that point of its path) and
        which one was ``chosen``: the smallest of all, the first of a tie."""
        rows = []
        for index, walk in enumerate(self._walks):
            path, row = _walk_choice(walk, self.params["metric"], self.metric_bound, self.params["margin"])
            rows.append(
                {
                    "walk": index,
                    "ranked_on": walk.ranked_on,
                    "reweighted": walk.reweighted,
                    "refit": walk.refit,
                    "steps": len(path) - 1,
                    "leaves": int(path["leaves"].iat[row]),
                    "trees": int(path["trees"].iat[row]),
                    "metric": float(path["metric"].iat[row]),
                    "chosen": walk is self._walk,
                }
            )
        return pd.DataFrame(rows)

    @property
    def validation_change(self) -> pd.DataFrame:
        """How sure the choice is, in one row: the chosen model's change of the
        metric from the unpruned model's on the checking rows (``change``), its
        paired standard error (``standard_error``), the change held ``margin``
        standard errors towards the worse side (``worst_plausible``: a
        one-sided bound on the change on new rows, at about 98% for the default
        margin of 2), the change the tolerance allows (``allowed``; relative
        metrics: as a change of the metric) and whether the bound is within it
        (``held``). ``rows``: how many rows checked. A ``held`` of False
        happens only where the choice held the path's average (the point and
        its neighbours) while the point itself falls short, or where
        nothing smaller was found (the unpruned model, change 0)."""
        metric, margin = self.params["metric"], self.params["margin"]
        point = self.path.iloc[self.chosen]
        change = float(point["metric"] - self.params["baseline"])
        standard_error = float(point["metric_se"])
        sign = 1.0 if METRICS[metric][1] else -1.0
        worst = change - sign * margin * standard_error
        allowed = float(self.metric_bound - self.params["baseline"])
        held = self.chosen == 0 or (worst >= allowed - 1e-12 if sign > 0 else worst <= allowed + 1e-12)
        return pd.DataFrame(
            [
                {
                    "metric": metric,
                    "change": change,
                    "standard_error": standard_error,
                    "margin": margin,
                    "worst_plausible": worst,
                    "allowed": allowed,
                    "held": bool(held),
                    "rows": int(self.metrics.loc["after", "rows"]),
                }
            ],
            index=["chosen"],
        )

    def _summary(self, ensemble, X_val, target, raw=None) -> dict:
        """``prune``'s before/after row on the validation rows ``X_val`` (their
        ``target``): its metric, the loss, accuracy or R^2, the size and the
        number of rows, from one pass of the rows through the model (or its
        ``raw`` scores on them, where already computed). The metric itself is
        the search's figure, set by the callers (``params["baseline"]``, the
        path's row): one quantity computed once, not twice in float32 and
        float64."""
        if raw is None:  # X_val as prune validated it; leaf ids as wide as the unpruned model's
            raw = raw_through_leaves(ensemble, X_val, None, leaf_dtype(self.original))
        metric = self.params["metric"]
        row = {metric: metric_value(metric, ensemble, raw, target)}
        names = ("accuracy", "log_loss") if target.n_classes else ("r2", "mse")
        for name in names:
            row.setdefault(name, metric_value(name, ensemble, raw, target))
        row.update(leaves=ensemble.n_leaves, trees=ensemble.n_trees, depth=ensemble.max_depth, rows=raw.shape[0])
        return row

    def plot(self, ax=None, *, axes=None):
        """Draw the validation metric against the model size along the path
        (one Axes; the other walks in grey) and return the ``Figure``."""
        import warnings

        if axes is not None:
            warnings.warn("PruneResult.plot(axes=...) is deprecated; pass ax=... instead", FutureWarning, stacklevel=2)
            ax = axes if ax is None else ax
        figure, (axis,) = axes_for(ax, 1, panel_size=(6.0, 3.6))
        self._plot_path(axis)
        return figure

    def _plot_path(self, ax):
        """Validation metric against model size along the path of ``prune``
        (the chosen walk's; the other walks in grey)."""
        from matplotlib.ticker import ScalarFormatter

        path, metric, margin = self.path, self.params["metric"], self.params["margin"]
        bound = self.metric_bound
        others = [walk.path for walk in self._walks if walk is not self._walk]
        for index, other in enumerate(others):  # the walks that found no smaller model
            ax.plot(
                other["leaves"],
                other["metric"],
                "-",
                color="tab:grey",
                linewidth=0.8,
                alpha=0.6,
                label="other walks" if index == 0 else None,
            )
        inside = path["within_tolerance"].to_numpy()
        ax.plot(path["leaves"], path["metric"], "-", color="tab:blue", linewidth=1, label="path")
        ax.plot(
            path["leaves"][inside],
            path["metric"][inside],
            "o",
            markersize=3,
            color="tab:blue",
            label="within tolerance",
        )
        if (~inside).any():
            ax.plot(path["leaves"][~inside], path["metric"][~inside], "x", color="tab:grey", label="outside")
        if margin > 0:  # what choose() holds against the tolerance: the smoothed metric less the margin
            smoothed = np.array([smoothed_metric(path, row) for row in range(len(path))])
            sign = 1.0 if METRICS[metric][1] else -1.0
            ax.fill_between(
                path["leaves"],
                smoothed,
                smoothed - sign * margin * path["metric_se"].to_numpy(),
                color="tab:blue",
                alpha=0.15,
                linewidth=0,
                label=f"margin: {margin:g} standard errors",
            )
        ax.axhline(self.params["baseline"], color="tab:green", linestyle="--", linewidth=1, label="unpruned")
        ax.axhline(bound, color="tab:orange", linestyle=":", linewidth=1, label="tolerance")
        chosen = path.iloc[self.chosen]
        ax.plot(
            [chosen["leaves"]],
            [chosen["metric"]],
            "*",
            color="tab:red",
            markersize=14,
            label=f"chosen: {int(chosen['leaves']):,} leaves",
        )
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set(
            xlabel="leaves (log scale)",
            ylabel=f"validation {metric.replace('_', ' ')}",
            title="Model size against validation metric",
        )
        ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small", frameon=False)
        return ax

    def _head(self) -> str:
        source = self.original.source
        chosen = self.path.iloc[self.chosen]
        return (
            f"PrunePathResult(method={self.method!r}, model={source.library}:{source.estimator}, "
            f"trees={self.original.n_trees}, pruned_nodes={self.n_pruned}, elapsed={self.elapsed:.3f}s, "
            f"metric={self.params['metric']!r}, tolerance={self.params['tolerance']}, "
            f"leaves={self.original.n_leaves}->{int(chosen['leaves'])}, path={len(self.path)} models)"
        )

    def _tables(self) -> list:
        return [self.metrics, self.validation_change]
