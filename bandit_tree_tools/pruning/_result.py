"""What every pruning method returns: :class:`PruneResult` (the paper's
bandit pruning and the baselines; ``btt.prune`` returns its subclass
:class:`~bandit_tree_tools.pruning.PrunePathResult`)."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._html import html_view
from .._plotting import axes_for
from .._validation import Interval
from ..exceptions import ParameterError
from ..tree import Ensemble
from ._metrics import before_after, check_weights, model_metrics

__all__ = ["PruneResult"]

# what PruneResult.deployment's parameters accept (_validation.check_params)
_DEPLOYMENT_CONSTRAINTS = {
    "batch_rows": [Interval(int, 1, None)],
    "n_repeats": [Interval(int, 1, None)],
    "random_state": ["random_state"],
}


def _four_places(value: float) -> str:
    return f"{value:.4f}"


@dataclass(frozen=True, repr=False, eq=False)
class PruneResult:
    """A pruned model and how it was found.

    Attributes
    ----------
    method : str
        "prune" (:func:`~bandit_tree_tools.prune`), "bandit",
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
        (a property of :class:`PrunePathResult`; ``path`` is the chosen walk's).
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
        """Nodes pruned over every tree: the length of ``pruned_nodes`` summed."""
        return int(sum(len(nodes) for nodes in self.pruned_nodes.values()))

    def to_model(self):
        """The pruned model as a native object of the input's library."""
        from ..interop import to_model

        return to_model(self.ensemble)

    def deployment(self, X, *, batch_rows=10_000, n_repeats=5, random_state=None) -> pd.DataFrame:
        """What the pruned model costs where it is deployed, beside the
        unpruned one: its native file's size and the native library's
        prediction time for a batch of rows and for one row.

        Both models are exported (:meth:`to_model`, and the same for
        ``original``, which predicts exactly like the model you passed and
        writes a file of its size), written to a temporary file and timed
        with the library's own predictor:

        ============  ==================================  ====================================
        library       file (``file_bytes``)               predictor
        ============  ==================================  ====================================
        scikit-learn  ``joblib.dump`` (uncompressed)      ``predict_proba`` (``predict`` for
                                                          regressors)
        LightGBM      ``Booster.save_model`` (model text) ``Booster.predict``
        XGBoost       ``Booster.save_model``, UBJSON      ``Booster.inplace_predict``
                      (``.ubj``, as ``save_raw()``)       (``predict`` on a DMatrix for DART)
        ============  ==================================  ====================================

        The predictors run with the models' own settings (threads included).
        The two models are timed in turns within each repeat, so that a
        machine busier at one moment slows both alike; timings on a shared
        machine still vary from call to call, the ratios less. Nothing is
        timed when the result is printed: this method takes some seconds.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Rows the model will meet (the validation rows, say), with the
            model's columns; passed to the predictors as given (a pandas
            frame stays one). The batch is a random sample of
            ``batch_rows`` of them, or all of them repeated when there are
            fewer.
        batch_rows : int, default=10_000
            Rows of the batch.
        n_repeats : int, default=5
            Timed calls on the batch, and timed runs of 20 one-row calls
            (on 20 rows of the batch); each time is the median of its
            repeats, after one untimed call.
        random_state : None, int, Generator or RandomState
            Which rows form the batch, in which order.

        Returns
        -------
        DataFrame
            Rows "before" (the unpruned model), "after" (the pruned one) and
            "ratio" (before / after: how many times fewer, smaller or
            faster); columns ``leaves``, ``trees``, ``file_bytes``,
            ``batch_seconds`` (one call on the batch) and ``row_seconds``
            (one call on one row). ``attrs`` name the ``file`` and the
            ``predictor`` and hold ``batch_rows``, ``rows_per_repeat`` and
            ``n_repeats``.

        Raises
        ------
        DataError
            ``X`` has other columns than the model's, or no rows.
        ParameterError
            ``batch_rows`` or ``n_repeats`` is not a positive int.
        UnsupportedModelError
            The model's library has no exporter (an ensemble built here).

        Examples
        --------
        >>> import bandit_tree_tools as btt
        >>> from sklearn.datasets import make_classification
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> X, y = make_classification(n_samples=1200, random_state=0)
        >>> model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[:600], y[:600])
        >>> result = btt.prune(model, X[600:], y[600:], tolerance=0.02, random_state=0, progress=False)
        >>> table = result.deployment(X[600:], batch_rows=1000, n_repeats=2, random_state=0)
        >>> table.index.tolist()
        ['before', 'after', 'ratio']
        >>> table.columns.tolist()
        ['leaves', 'trees', 'file_bytes', 'batch_seconds', 'row_seconds']
        >>> int(table.loc["after", "leaves"]) == result.ensemble.n_leaves
        True
        >>> bool(table.loc["ratio", "file_bytes"] > 1)  # the pruned model's pickle is smaller
        True
        >>> table.attrs["predictor"]
        'RandomForestClassifier.predict_proba'
        """
        from .._validation import check_params
        from ._deployment import deployment_table

        check_params(
            {"batch_rows": batch_rows, "n_repeats": n_repeats, "random_state": random_state},
            _DEPLOYMENT_CONSTRAINTS,
            owner="deployment",
        )
        return deployment_table(
            self.original, self.ensemble, X, batch_rows=batch_rows, n_repeats=n_repeats, random_state=random_state
        )

    def _ensemble_by_position(self) -> Ensemble:
        """``ensemble`` with as many trees as ``original``, for views that pair
        them by position (these methods never remove a tree)."""
        return self.ensemble

    # btt.prune's path: PrunePathResult has one, the other methods none
    def _no_path(self, what: str) -> ParameterError:
        return ParameterError(f"{what} needs a result of btt.prune, this one comes from {self.method!r}")

    @property
    def metric_bound(self) -> float:
        """``prune`` results: the worst validation metric the tolerance accepts."""
        raise self._no_path("metric_bound")

    def choose(self, tolerance: float, margin: float | None = None) -> "PruneResult":
        """``prune`` results: the smallest model of the path within another tolerance."""
        raise self._no_path("choose()")

    @property
    def walks(self) -> pd.DataFrame:
        """``prune`` results: one row per walk the search took."""
        raise self._no_path("walks")

    def evaluate(self, X, y, weights=None) -> pd.DataFrame:
        """Before/after metrics on other data (for example a test set)."""
        from ._inputs import check_target

        weights = self.params.get("weights", (1.0, 2.5, 1.0)) if weights is None else check_weights(weights)
        X = self.original.check_X(X)  # once for both models: they read the same columns
        target = check_target(self.original, y, X.shape[0], name="y")
        return before_after(
            model_metrics(self.original, X, target, weights, check_input=False),
            model_metrics(self.ensemble, X, target, weights, check_input=False),
        )

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
            warnings.warn("PruneResult.plot(axes=...) is deprecated; pass ax=... instead", FutureWarning, stacklevel=2)
            ax = axes if ax is None else ax
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

    def _head(self) -> str:
        """The first line of the repr: what was pruned, how, in what time."""
        source = self.original.source
        head = (
            f"PruneResult(method={self.method!r}, model={source.library}:{source.estimator}, "
            f"trees={self.original.n_trees}, pruned_nodes={self.n_pruned}, elapsed={self.elapsed:.3f}s"
        )
        if self.method == "bandit":
            head += f", policy={self.params.get('policy')!r}, rounds={len(self.history)}, arms={len(self.arms)}"
        return head + ")"

    def _tables(self) -> list:
        """The tables the repr shows under its first line."""
        return [self.metrics]

    def __repr__(self) -> str:
        tables = [table.to_string(float_format=_four_places) for table in self._tables()]
        return "\n".join([self._head(), *tables])

    def _repr_html_(self) -> str:
        """Jupyter's view: the first line, and the tables as HTML tables."""
        return html_view(self._head(), self._tables(), float_format=_four_places)
