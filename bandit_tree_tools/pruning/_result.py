"""What every pruning method returns, and the metrics it reports."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._plotting import axes_for
from ..exceptions import ParameterError
from ..tree import Ensemble
from ..tree._ensemble import LABEL_RULE_CODES
from ..tree._links import LINK_CODES
from . import _kernels

__all__ = ["PruneResult", "Walk", "before_after", "model_metrics"]


HALF_OF_VALIDATION = "half of X_val"  # Walk.ranked_on without training rows


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


def model_metrics(ensemble: Ensemble, X, target, weights=(1.0, 2.5, 1.0), *, check_input: bool = True) -> dict:
    """Metrics of ``ensemble`` on all rows of ``X``, from its raw scores
    (``predict_raw``; ``check_input=False`` for X from ``ensemble.check_X``).

    Classification: accuracy, F1 (positive class ``classes_[1]`` when
    binary, macro-F1 otherwise), log-loss (probabilities clipped at 1e-15),
    score = ``a*accuracy + g*F1 - b*logloss/-log(1e-15)``. Regression: MSE,
    R^2 and score = R^2 (against the variance of these rows). Both report
    the number of leaves and the maximum depth."""
    return metrics_of_raw(ensemble, ensemble.predict_raw(X, check_input=check_input), target, weights)


COUNTS = ("leaves", "trees", "depth", "rows")  # columns of a before/after table that count


def before_after(before: dict, after: dict) -> pd.DataFrame:
    """The before/after table of a result (rows "before" and "after"), its
    counts as integers: printed with the metrics' decimals they read 19.0000."""
    frame = pd.DataFrame({"before": before, "after": after}).T
    return frame.astype({name: np.int64 for name in COUNTS if name in frame.columns})


def row_outputs(ensemble: Ensemble, raw: np.ndarray, target, *, with_loss: bool = True) -> tuple:
    """Per row of raw scores: the predicted class code (-1 for regression)
    and the loss (clipped log-loss of the true class, or the squared error of
    the prediction), through the model's link (``tree._links``).
    ``with_loss=False``: a classifier's classes only (loss None)."""
    raw = np.ascontiguousarray(raw, dtype=np.float64)
    n_rows = raw.shape[0]
    prediction = np.empty(n_rows, dtype=np.int64)
    link, link_scale, float32 = LINK_CODES[ensemble.link], float(ensemble.link_scale), bool(ensemble.accumulate_float32)
    rule = LABEL_RULE_CODES[ensemble.label_rule]
    if not with_loss and target.n_classes:
        _kernels._row_classes(raw, link, link_scale, float32, rule, target.n_classes, prediction)
        return prediction, None
    loss = np.empty(n_rows, dtype=np.float64)
    _kernels._row_outputs(raw, np.arange(n_rows, dtype=np.int64), target.codes, target.values, link, link_scale,
                          float32, rule, target.n_classes, prediction, loss)
    return prediction, loss


def metrics_of_raw(ensemble: Ensemble, raw: np.ndarray, target, weights=(1.0, 2.5, 1.0)) -> dict:
    """:func:`model_metrics` from raw scores already computed: the link, the
    per-row losses and the score are the pruning kernels' (one definition for
    the evaluator's pulls and for what a result reports)."""
    shape = {"leaves": ensemble.n_leaves, "depth": ensemble.max_depth}
    prediction, loss = row_outputs(ensemble, raw, target)
    rows = np.arange(prediction.shape[0], dtype=np.int64)
    stats = _kernels._subset_stats(rows, prediction, loss, target.codes, target.n_classes)
    a, g, b = (float(w) for w in weights)
    score = float(_kernels._score(stats, a, g, b, target.n_classes, target.positive, target.variance))
    n = stats[_kernels.STAT_N]
    if target.n_classes == 0:
        mse = float(stats[_kernels.STAT_MAIN] / n)
        return {"mse": mse, "r2": score, "score": score, **shape}
    accuracy = float(stats[_kernels.STAT_MAIN] / n)
    f1 = float(_kernels._f1(stats, target.n_classes, target.positive))
    log_loss = float(stats[_kernels.STAT_LOSS] / n)
    return {"accuracy": accuracy, "f1": f1, "log_loss": log_loss, "score": score, **shape}


def _kept_whole(walks, chosen, tolerance, metric, margin) -> tuple:
    """``prune``'s note when no model smaller than the unpruned one is within
    the tolerance (none otherwise): what the first step measured, and what
    would let it prune."""
    stepped = [walk.path for walk in walks if len(walk.path) > 1]
    if chosen != 0 or not stepped:
        return ()
    first = stepped[0].iloc[1]
    change = first["metric"] - stepped[0]["metric"].iat[0]
    with_training_rows = any(walk.ranked_on != HALF_OF_VALIDATION for walk in walks)
    remedies = ("More validation rows or a larger tolerance" if with_training_rows else
                "More validation rows, X_train and y_train (then every validation row checks) or a larger tolerance")
    return (f"prune kept the unpruned model: no smaller model of its path is within the tolerance ({tolerance:g}) "
            f"by {margin:g} standard errors of its change in {metric} on the checking rows (after the first step the "
            f"change was {change:+.4f}, with a standard error of {first['metric_se']:.4f}). {remedies} let it "
            "prune; result.path holds every model it measured.",)


def _walk_choice(walk: Walk, metric: str, bound: float, margin: float) -> tuple:
    """(the walk's path with ``within_tolerance``, the row of its smallest
    model within ``bound`` by ``margin``): the rule of ``PruneResult.choose``
    on one walk."""
    from ._compress_metrics import smoothed_metric, within_margin

    path = walk.path.copy()
    path["within_tolerance"] = [row == 0 or within_margin(metric, smoothed_metric(path, row),
                                                          path["metric_se"].iat[row], bound, margin)
                                for row in range(len(path))]  # the unpruned model always qualifies
    fits = np.flatnonzero(path["within_tolerance"].to_numpy())
    return path, int(min(fits, key=lambda row: (path["leaves"].iat[row], row)))


@dataclass(repr=False, eq=False)
class PruneResult:
    """A pruned model and how it was found.

    Attributes
    ----------
    method : str
        "compress" (:func:`~bandit_tree_tools.prune`), "bandit",
        "cost_complexity" or "reduced_error".
    ensemble : Ensemble
        The pruned model in the common format.
    original : Ensemble
        The model before pruning (unchanged).
    pruned_nodes : dict of {tree: int64 array}
        Node ids (of ``original``) that became leaves.
    metrics : DataFrame
        Rows "before" and "after", on the validation data: accuracy, f1,
        log_loss, score, leaves, depth (classification) or mse, r2, score,
        leaves, depth (regression). For ``prune``: its metric, accuracy and
        log_loss (or r2 and mse), leaves, trees, depth and rows, on the rows
        that checked the tolerance (every validation row with ``X_train``,
        else the half that did not rank the removals): "before" is
        ``params["baseline"]`` and "after" the chosen point of ``path``.
    history : DataFrame
        One row per bandit round: round, phase, arm, tree, node, reward,
        score_delta. Empty for the baselines.
    arms : DataFrame
        One row per arm: arm, tree, node, depth, samples (training rows the
        model recorded, -1 if unknown), val_rows, pulls, mean_reward,
        mean_score_delta, rank, pruned.
    path : DataFrame
        The candidates of the final choice: for ``prune``, one row per model
        visited (``step, leaves, trees, nodes, metric, metric_se, elapsed,
        within_tolerance``; row 0 is the unpruned model; ``metric`` is
        measured on validation rows that did not rank the removals (all of
        them when ``X_train`` was given, else half), ``metric_se`` is the
        standard error of its difference from the unpruned model's);
        ``n_pruned`` and ``score`` for
        bandit pruning (c best arms pruned) and reduced-error pruning (nodes
        pruned so far), ``alpha``/``n_pruned``/``score`` for cost-complexity.
    chosen : int or None
        ``prune``: the row of ``path`` that ``ensemble`` is.
    walks : DataFrame
        ``prune``: one row per walk of the search, with the smallest model
        each reached within the tolerance and which walk was chosen
        (a property; ``path`` is the chosen walk's).
    params : dict
        The parameters the method was called with.
    elapsed : float
        Wall time in seconds.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> result = btt.reduced_error_prune(model, X[200:], y[200:])
    >>> result.n_pruned, list(result.metrics.index)
    (1, ['before', 'after'])
    >>> list(result.metrics.columns)
    ['accuracy', 'f1', 'log_loss', 'score', 'leaves', 'depth']
    >>> result.evaluate(X[:200], y[:200]).shape  # before/after on other rows
    (2, 6)
    >>> type(result.to_model()).__name__  # the pruned model, native again
    'DecisionTreeClassifier'
    """

    method: str
    ensemble: Ensemble
    original: Ensemble
    pruned_nodes: dict
    metrics: pd.DataFrame
    history: pd.DataFrame = field(default_factory=pd.DataFrame)
    arms: pd.DataFrame = field(default_factory=pd.DataFrame)
    path: pd.DataFrame = field(default_factory=pd.DataFrame)
    params: dict = field(default_factory=dict)
    elapsed: float = 0.0
    chosen: int | None = None

    @property
    def n_pruned(self) -> int:
        return int(sum(len(nodes) for nodes in self.pruned_nodes.values()))

    def to_model(self):
        """The pruned model as a native object of the input's library."""
        from ..interop import to_model

        return to_model(self.ensemble)

    def _ensemble_by_position(self) -> Ensemble:
        """``ensemble`` with as many trees as ``original``, for views that pair
        them by position: a tree ``prune`` removed stays as one leaf of value 0."""
        if self.ensemble.n_trees == self.original.n_trees:
            return self.ensemble
        from ._compress_state import build_ensemble

        return build_ensemble(self.original, self._walk.states[self.chosen], keep_dead_trees=True)

    @property
    def metric_bound(self) -> float:
        """``prune`` results: the worst validation metric the tolerance accepts."""
        from ._compress_metrics import _bound

        if self.method != "compress":
            raise ParameterError(f"metric_bound needs a result of btt.prune, this one comes from {self.method!r}")
        return float(_bound(self.params["metric"], self.params["baseline"], self.params["tolerance"]))

    def choose(self, tolerance: float, margin: float | None = None) -> "PruneResult":
        """``prune`` results: the smallest model of the path within another
        tolerance, or by another margin (same meanings as in
        :func:`~bandit_tree_tools.prune`; None keeps this result's margin), as
        a new result; nothing is rerun. The path holds the models the search
        visited, so a looser tolerance can only reach as far as it went."""
        from ._compress_metrics import _bound, _check_margin, _check_tolerance
        from ._compress_state import build_ensemble, pruned_nodes

        if self.method != "compress":
            raise ParameterError(f"choose() needs a result of btt.prune, this one comes from {self.method!r}")
        tolerance = _check_tolerance(tolerance)
        margin = self.params["margin"] if margin is None else _check_margin(margin)
        metric = self.params["metric"]
        bound = _bound(metric, self.params["baseline"], tolerance)
        # every walk the search took (with and without re-fitted leaves, from the unpruned and
        # from the re-weighted trees, ranked on every training row or out of bag); the smallest
        # model within the tolerance wins (the first walk of a tie), and ``path`` is the walk it is on
        choices = [_walk_choice(walk, metric, bound, margin) for walk in self._walks]
        best = min(range(len(choices)), key=lambda k: choices[k][0]["leaves"].iat[choices[k][1]])
        (path, chosen), walk = choices[best], self._walks[best]
        state = walk.states[chosen]
        pruned = build_ensemble(self.original, state)
        after = self._summary(pruned, *self._checking)  # self._before: the unpruned model's, set by prune
        result = PruneResult(
            method=self.method, ensemble=pruned, original=self.original,
            pruned_nodes=pruned_nodes(self.original, state),
            metrics=before_after(self._before, after),
            path=path, params=dict(self.params, tolerance=tolerance, margin=margin, refit=walk.refit,
                                   reweighted=walk.reweighted, ranked_on=walk.ranked_on,
                                   warnings=_kept_whole(self._walks, chosen, tolerance, metric, margin)),
            elapsed=self.elapsed, chosen=chosen)
        result._walks, result._walk, result._checking, result._before = (self._walks, walk, self._checking,
                                                                         self._before)
        return result

    @property
    def walks(self) -> pd.DataFrame:
        """``prune`` results: one row per walk the search took (``walk``, its
        number as ``callback`` gives it, from 0; the progress bar counts from
        1; ``ranked_on``, ``reweighted``, ``refit``; ``steps``), with the
        smallest model each reached within this result's tolerance and margin
        (``leaves``, ``trees`` and ``metric`` of that point of its path) and
        which one was ``chosen``: the smallest of all, the first of a tie."""
        if self.method != "compress":
            raise ParameterError(f"walks needs a result of btt.prune, this one comes from {self.method!r}")
        rows = []
        for index, walk in enumerate(self._walks):
            path, row = _walk_choice(walk, self.params["metric"], self.metric_bound, self.params["margin"])
            rows.append({"walk": index, "ranked_on": walk.ranked_on, "reweighted": walk.reweighted,
                         "refit": walk.refit, "steps": len(path) - 1, "leaves": int(path["leaves"].iat[row]),
                         "trees": int(path["trees"].iat[row]), "metric": float(path["metric"].iat[row]),
                         "chosen": walk is self._walk})
        return pd.DataFrame(rows)

    def _summary(self, ensemble, X_val, rows, target, raw=None) -> dict:
        """``prune``'s before/after row on the checking rows (``rows`` of
        ``X_val``, None for all of them; ``target`` theirs): its metric, the
        loss, accuracy or R^2, the size and the number of rows, from one pass
        of the rows through the model (or its ``raw`` scores on them, where
        already computed)."""
        from ._compress_metrics import metric_value

        if raw is None:  # X_val as prune validated it
            raw = ensemble.predict_raw(X_val if rows is None else X_val[rows], check_input=False)
        metric = self.params["metric"]
        row = {metric: metric_value(metric, ensemble, raw, target)}
        names = ("accuracy", "log_loss") if target.n_classes else ("r2", "mse")
        for name in names:
            row.setdefault(name, metric_value(name, ensemble, raw, target))
        row.update(leaves=ensemble.n_leaves, trees=ensemble.n_trees, depth=ensemble.max_depth, rows=raw.shape[0])
        return row

    def evaluate(self, X, y, weights=None) -> pd.DataFrame:
        """Before/after metrics on other data (for example a test set)."""
        from ._evaluator import check_target

        X = self.original.check_X(X)  # once for both models: they read the same columns
        target = check_target(self.original, y, X.shape[0], name="y")
        weights = self.params.get("weights", (1.0, 2.5, 1.0)) if weights is None else weights
        return before_after(model_metrics(self.original, X, target, weights, check_input=False),
                            model_metrics(self.ensemble, X, target, weights, check_input=False))

    # ----------------------------------------------------------------- display
    def plot(self, ax=None, *, axes=None):
        """Draw the result and return the matplotlib ``Figure``.

        ``prune`` results: the validation metric against the model size along
        the path (one Axes). Bandit pruning: reward per round, mean reward per
        arm and the score against the number of pruned branches (three Axes).
        The baselines: the score of the candidates (one Axes).

        Parameters
        ----------
        ax : matplotlib Axes, sequence of Axes, or None
            Where to draw: one Axes, or the three Axes of a bandit result;
            None draws on a new figure.
        axes : deprecated
            The former name of ``ax``.
        """
        import warnings

        if axes is not None:
            warnings.warn("PruneResult.plot(axes=...) is deprecated; pass ax=... instead", FutureWarning,
                          stacklevel=2)
            ax = axes if ax is None else ax
        if self.method == "compress":
            figure, (axis,) = axes_for(ax, 1, panel_size=(6.0, 3.6))
            self._plot_path(axis)
            return figure
        panels = 3 if len(self.history) else 1
        figure, axes = axes_for(ax, panels)
        if panels == 3:
            rounds, rewards = self.history["round"].to_numpy(), self.history["reward"].to_numpy()
            axes[0].plot(rounds, rewards, ".", markersize=2, alpha=0.4, label="reward")
            running = np.cumsum(rewards) / np.arange(1, len(rewards) + 1)
            axes[0].plot(rounds, running, "-", label="running mean")
            axes[0].set(xlabel="round", ylabel="reward", title="Reward per round")
            axes[0].legend(loc="best", fontsize="small")
            ranked = self.arms.sort_values("rank")
            colours = np.where(ranked["pruned"].to_numpy(), "tab:red", "tab:blue")
            axes[1].bar(np.arange(len(ranked)), ranked["mean_reward"].to_numpy(), color=colours)
            axes[1].set(xlabel="arm (by rank; red = pruned)", ylabel="mean reward", title="Reward per arm")
        last = axes[panels - 1]
        if len(self.path):
            x_name = "alpha" if "alpha" in self.path and self.method == "cost_complexity" else "n_pruned"
            last.plot(self.path[x_name].to_numpy(), self.path["score"].to_numpy(), "o-", markersize=3)
            chosen = self.metrics.loc["after", "score"]
            last.axhline(chosen, color="tab:red", linestyle=":", label="chosen")
            last.legend(loc="best", fontsize="small")
            last.set(xlabel=x_name.replace("_", " "), ylabel="validation score", title="Score of the candidates")
        return figure

    def _plot_path(self, ax):
        """Validation metric against model size along the path of ``prune``
        (the chosen walk's; the other walks in grey)."""
        from matplotlib.ticker import ScalarFormatter

        from ._compress_metrics import METRICS, smoothed_metric

        path, metric, margin = self.path, self.params["metric"], self.params["margin"]
        bound = self.metric_bound
        others = [walk.path for walk in self._walks if walk is not self._walk]
        for index, other in enumerate(others):  # the walks that found no smaller model
            ax.plot(other["leaves"], other["metric"], "-", color="tab:grey", linewidth=0.8, alpha=0.6,
                    label="other walks" if index == 0 else None)
        inside = path["within_tolerance"].to_numpy()
        ax.plot(path["leaves"], path["metric"], "-", color="tab:blue", linewidth=1, label="path")
        ax.plot(path["leaves"][inside], path["metric"][inside], "o", markersize=3, color="tab:blue",
                label="within tolerance")
        if (~inside).any():
            ax.plot(path["leaves"][~inside], path["metric"][~inside], "x", color="tab:grey", label="outside")
        if margin > 0:  # what choose() holds against the tolerance: the smoothed metric less the margin
            smoothed = np.array([smoothed_metric(path, row) for row in range(len(path))])
            sign = 1.0 if METRICS[metric][1] else -1.0
            ax.fill_between(path["leaves"], smoothed, smoothed - sign * margin * path["metric_se"].to_numpy(),
                            color="tab:blue", alpha=0.15, linewidth=0,
                            label=f"margin: {margin:g} standard errors")
        ax.axhline(self.params["baseline"], color="tab:green", linestyle="--", linewidth=1, label="unpruned")
        ax.axhline(bound, color="tab:orange", linestyle=":", linewidth=1, label="tolerance")
        chosen = path.iloc[self.chosen]
        ax.plot([chosen["leaves"]], [chosen["metric"]], "*", color="tab:red", markersize=14,
                label=f"chosen: {int(chosen['leaves']):,} leaves")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set(xlabel="leaves (log scale)", ylabel=f"validation {metric.replace('_', ' ')}",
               title="Model size against validation metric")
        ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small", frameon=False)
        return ax

    def _table(self) -> str:
        frame = self.metrics.copy()
        return frame.to_string(float_format=lambda v: f"{v:.4f}")

    def __repr__(self) -> str:
        source = self.original.source
        head = (
            f"PruneResult(method={self.method!r}, model={source.library}:{source.estimator}, "
            f"trees={self.original.n_trees}, pruned_nodes={self.n_pruned}, elapsed={self.elapsed:.3f}s"
        )
        if self.method == "compress":
            chosen = self.path.iloc[self.chosen]
            head += (f", metric={self.params['metric']!r}, tolerance={self.params['tolerance']}, "
                     f"leaves={self.original.n_leaves}->{int(chosen['leaves'])}, path={len(self.path)} models")
        if self.method == "bandit":
            head += f", policy={self.params.get('policy')!r}, rounds={len(self.history)}, arms={len(self.arms)}"
        return head + ")\n" + self._table()
