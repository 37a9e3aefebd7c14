"""``btt.prune``: the smallest model the user's tolerance allows.

The search walks a path of ever smaller models, from the imported one down,
and returns the smallest whose validation metric stays within ``tolerance``
of the unpruned model's. One step:

1. **Candidates.** Every internal node of every tree can become a leaf; the
   root of a tree of a summed (boosted) ensemble stands for removing the
   whole tree, its constant folded into the other trees' leaves; a tree of an
   averaged ensemble (random forest) can be dropped from the mean.
2. **Values.** A collapsed node of a boosted model takes the mean of the
   current leaf values below it, weighted by the covers the library recorded
   (hessian sums; hessians of the fitting rows where none are recorded): the
   constant closest to what the subtree outputs now. A Newton correction per
   candidate was measured and dropped: applied to many candidates at once the
   corrections add up and overshoot. Averaged models keep their stored values
   (class fractions, means), so exported scikit-learn trees stay plain trees.
3. **Costs.** Each candidate's cost is the change of the loss (the model's own:
   log-loss through the sigmoid or softmax, squared error, Poisson for the
   log link; other regression objectives by squared error, or Poisson
   deviance through the log link: ``_loss_kind``; smooth losses to second
   order) on the ranking rows if it alone were applied, plus one spread of
   its per-row changes; candidates are ranked by that per leaf removed.
   The spread discounts candidates whose few rows happen to agree: with
   thousands of candidates the plain sum picks exactly those (on a large
   boosted model it raised the validation metric while the test metric
   fell). Half a spread and two spreads moved the benchmark's median from
   6.4x to 6.2x and 4.3x.
4. **Bandit.** With ``search="exact"`` every ranking row enters every cost;
   with ``search="bandit"`` the costs are estimated from a growing sample of
   the rows (stored in one fixed random order, batches doubling) with
   confidence intervals (normal, finite-population correction), and sampling
   stops as soon as the chosen set's cost is known to ``DECISION_ACCURACY``
   of the model's loss (on the first batch): best-arm identification over
   removals, the way MABSplit identifies splits. When the rows run out
   first, the exact costs are computed, so with a full budget
   (``confidence=inf``) both searches walk the same path.
5. **Step.** The best-ranked candidates that do not overlap are applied until
   a tenth of the current leaves is gone (a twentieth took 1.5x the time and
   moved the benchmark's median from 6.4x to 6.1x, 15% to 4.5x); then, with
   training rows, every leaf of a boosted model is re-fitted by one
   backfitting pass of Newton steps damped to 0.1 (a boosting learning rate),
   so what remains takes over the removed parts' work. (Re-fitting on the
   validation rows, or with a step of 0.5, made test scores worse; a step of
   0.2 moved the benchmark's median from 6.4x to 6.3x.) Re-fitting
   on the training rows wins where the model has not memorised them (Adult
   LightGBM: 48x against 4.5x without) and loses where it has (California as a
   binary task, XGBoost: 1.4x against 4.9x, and its test log-loss grows): the
   fitted leaves grow more confident on rows they already fit. So
   ``refit="auto"`` walks twice, with and without, and keeps the smaller model
   within the tolerance.
   LOP's scale and shift of whole trees (two numbers per tree, one Newton
   step each) or of the subtrees below depth 2, in place of the per-leaf
   pass or before it, was measured and not kept: over the benchmark's 18
   boosted cases the median went from 4.5x to 4.3x (trees) and 4.2x
   (subtrees) in place of it, and to 4.9x before it, but over all 24 cases
   from 6.4x to 6.2x; as a further walk beside it, 6.45x to 6.5x for two
   thirds more walks (``docs/expect/pruning.md``).
6. **Re-weighted start.** Removing trees one at a time never raises the
   weight of the trees that stay. So, for boosted binary classifiers,
   further walks start from an L1-penalised fit of every tree's weight and
   the intercept on the fitting rows (``_compress_weights``, the first
   level of LOP): the sparsest point of its penalty path within half the
   tolerance drops most trees and scales the rest, and the search prunes on
   from there. It wins where many trees are redundant (Adult, COMPAS) and
   finds no start where the weights fitted on memorised training rows are
   off (California as a binary task).
7. **Out of bag.** A bootstrapped scikit-learn forest's trees fit the rows
   they drew to the last row, so on the training rows every node looks
   useful. When ``X_train`` are the forest's own training rows (the draws,
   redrawn from the seeds the forest kept, reproduce every leaf's recorded
   cover), a further walk ranks each tree's removals on the rows it did not
   draw, under the mean of the trees that did not draw them either: the
   forest's out-of-bag prediction. It wins on Adult (2.0x to 35x), California
   (6.4x to 8.4x), California as a binary task (1.9x to 7.4x) and
   Electricity (4.1x to 6.2x, where the test rows fall 0.56 points against
   the validation rows' 0.11); on the small COMPAS set (60x against 378x)
   and the noisy synthetic one the walk on every training row stays ahead.
8. **Towards the model's own outputs.** On its training rows a boosted
   model's outputs are as sure as the labels, so those rows rank and re-fit
   towards the labels it memorised. A further walk (re-fitted, from the
   model and from re-weighted trees) ranks and re-fits on perturbed copies
   of the training rows instead (each value, with probability 0.2, another
   training row's value of that feature), towards the unpruned model's own
   probabilities or predictions there: a step costs what it changes of the
   model's behaviour near its training rows. The validation rows stay
   unseen until the check. (Ranking on the validation rows' own outputs
   looked far better on them and did not hold on the test rows: the walk
   had fitted the very rows that checked it.) For boosted trees; a
   multiclass model's soft labels are its probabilities of every class
   (on a synthetic five-class set it won with XGBoost, 1.5x to 2.3x; with
   LightGBM and HistGB there, and on MNIST, the walk on the training rows
   stayed ahead).
9. **Check.** The metric is measured on rows the choice has not seen: with
   ``X_train``, the training rows rank and re-fit and every validation row
   checks; without it, half of the validation rows rank and the other half
   checks. The walk goes on past models outside the tolerance (a re-fitted
   model further down can be back within it) and ends after ``PATIENCE``
   models far outside it. The chosen model is the smallest whose metric,
   averaged with its neighbours on the path and held ``margin`` (two)
   standard errors of its paired difference from the unpruned model inside,
   is within the tolerance: without the averaging and the margin, one lucky
   point at the edge where the metric falls off would be chosen. (Why two
   standard errors and not one or none: the figures of
   ``benchmarks/bench_compression.py`` in ``docs/expect/pruning.md``.)
10. **Monotone constraints.** A model trained with them walks without
    re-fitted leaves or re-weighted trees, which could break its order.
    Where every split bounds each side's subtree by the middle of its two
    outputs (XGBoost, scikit-learn, LightGBM's "basic" method), a node
    collapsed into a mean of its leaves keeps the order; under LightGBM's
    "intermediate" and "advanced" methods it need not, and only whole trees
    go.
"""

import time
import warnings

import numpy as np
import pandas as pd

from .._numba_config import numba_threads
from .._validation import Interval, Options, check_params, check_random_state
from ..exceptions import DataError, ParameterError
from ._common import monotone_method, to_ensemble
from ._compress_metrics import (MARGIN, METRICS, _bound, _check_margin, _check_metric, _check_tolerance,
                               _check_validation, _halves)
from ._compress_search import (FAR, _Search, distillable, model_target, out_of_bag_rows, perturbed_rows,
                               ranking_rows, refittable, reweightable, row_sets)
from ._evaluator import check_target
from ._result import HALF_OF_VALIDATION, PruneResult, Walk

__all__ = ["METRICS", "prune"]  # METRICS: the CLI lists the metrics from here

SEARCHES = ("bandit", "exact")
START_SHARE = 0.5  # share of the tolerance the re-weighted start may use; the search prunes on with the rest

# what each parameter of prune accepts (checked by _validation.check_params)
PRUNE_PARAMETERS = {
    "tolerance": [Interval(float, 0, None, closed="left")],
    "margin": [Interval(float, 0, None, closed="left")],
    "metric": [Options(METRICS), None],
    "search": [Options(SEARCHES)],
    "confidence": [Interval(float, 0, None, closed="neither")],
    "refit": [Options(("auto",)), "boolean"],
    "reweight": ["boolean"],
    "random_state": ["random_state"],
    "progress": ["boolean"],
    "callback": [callable, None],
    "n_jobs": [None, int],
}


def prune(model, X_val, y_val, *, tolerance: float = 0.005, metric: str | None = None, X_train=None, y_train=None,
          margin: float = MARGIN, search: str = "bandit", confidence: float = 3.0, refit: bool | str = "auto",
          reweight: bool = True, random_state=None, progress: bool = True, callback=None, n_jobs=-1) -> PruneResult:
    """Prune any imported model to the smallest one within ``tolerance``.

    Parameters
    ----------
    model : fitted scikit-learn, LightGBM or XGBoost tree model, or Ensemble
        Never modified.
    X_val, y_val : validation rows (not used in training)
        Measure the tolerance; without ``X_train``, half of them rank the
        removals and the other half measures.
    tolerance : float, default 0.005
        How much worse than the unpruned model the pruned one may be on the
        validation rows: absolute for accuracy, balanced accuracy, ROC AUC and
        R^2 (0.005 is half a point), relative for log-loss and MSE (0.005
        allows 0.5% more).
    margin : float, default 2.0
        How many standard errors of its paired difference from the unpruned
        model (on the checking rows) the chosen model's validation metric
        must stay inside the tolerance by: the validation rows are a sample,
        and the smallest model that merely measures within the tolerance
        often is not on new rows. 0 holds the metric itself (averaged with
        its neighbours on the path, as every margin does) within the
        tolerance: the rule of LOP and of XGBoost's pruner.
    metric : {"balanced_accuracy", "accuracy", "roc_auc", "log_loss", "r2", "mse"}, optional
        Default: balanced accuracy for classifiers, R^2 for regressors.
    X_train, y_train : optional
        The training rows: they rank the removals and re-fit the leaves, and
        every validation row then measures the tolerance. A bootstrapped
        scikit-learn forest's own training rows (in their order) also rank
        out of bag, each tree on the rows it did not draw, in a further walk
        (``params["ranked_on"]`` says which walk won). For boosted models a
        further walk ranks and re-fits on perturbed copies of the training
        rows towards the unpruned model's own outputs there (``"the model's
        outputs on perturbed X_train"``).
    search : {"bandit", "exact"}, default "bandit"
        How candidate removals are scored: on samples of the ranking rows with
        confidence bounds (from 40,000 ranking rows up; fewer are scored
        exactly), or on every row.
    confidence : float, default 3.0
        Width of the bandit's confidence intervals in standard errors;
        ``inf`` makes the bandit score every row (the exact path).
    refit : bool or "auto", default "auto"
        Boosted models with ``X_train``: after every step, re-fit every leaf
        value by a damped Newton pass on the training rows (True), or keep
        the values (False). ``"auto"`` walks both ways and keeps the smaller
        model within the tolerance (``params["refit"]`` says which); the
        walk on perturbed training rows re-fits unless ``refit=False``.
        Without ``X_train`` leaves keep their values (re-fitting them on
        validation rows made test scores worse in our measurements), and so
        do the leaves of a model trained with monotone constraints, which
        re-fitting could break (``refit=True`` then raises).
    reweight : bool, default True
        Also walk from re-weighted trees: an L1-penalised fit of the trees'
        weights on the training rows (the ranking half of the validation
        rows without them) drops trees and scales the others, up to half the
        tolerance; the search prunes on from there, and the smaller model
        wins (``params["reweighted"]`` says which). For binary classifiers
        of the boosting libraries (summed trees, one raw output) without
        monotone constraints; other models ignore it.
    random_state : int, RandomState, Generator or None
        Seeds the split of the validation rows and the bandit's sampling.
    progress : bool, default True
        Show a progress bar of the steps.
    callback : callable, optional
        Called after every step with a dict of that step's path row and
        ``walk`` (0 for the first walk, counting up: ``refit="auto"``,
        ``reweight`` and out-of-bag ranking add walks); a return value of
        True stops the search.
    n_jobs : int or None, default -1
        Threads of the search's parallel kernels, by joblib's rule: -1 every
        core, None one.

    Returns
    -------
    PruneResult
        ``method="compress"``; ``path`` (one row per visited model: step,
        leaves, trees, nodes, metric, metric_se, elapsed, within_tolerance),
        ``chosen`` (row of the returned model), ``metrics`` (before/after on
        the checking rows, those ``path``'s metric is measured on: every
        validation row with ``X_train``, else the half that did not rank; the
        ``rows`` column says how many, and ``evaluate`` measures on others),
        ``choose(tolerance, margin=None)``, ``plot()``,
        ``to_model()``; ``params["warnings"]`` holds the note below, if any;
        ``params["row_evaluations"]`` (rows x live trees read to score
        the candidates and to fit the re-weighted start) and
        ``params["scoring_seconds"]`` (the time spent choosing steps, the
        part ``search`` changes) measure the search.

    Raises
    ------
    ParameterError
        A parameter outside what ``PRUNE_PARAMETERS`` allows.
    DataError
        Validation rows that cannot measure the metric at the tolerance.
    UnsupportedModelError
        A model whose training objective the metrics cannot judge:
        quantile regression, ranking, survival, XGBoost's
        ``binary:logitraw`` (see ``pruning._common.UNJUDGED_OBJECTIVES``).

    Warns
    -----
    UserWarning
        No model smaller than the unpruned one is within the tolerance: the
        note says what the first step measured and what would let it prune.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> result = btt.prune(model, X[200:], y[200:], tolerance=0.02, random_state=0, progress=False)
    >>> result.ensemble.n_leaves <= result.original.n_leaves
    True
    >>> list(result.path.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['step', 'leaves', 'trees', 'nodes', 'metric', 'metric_se', 'elapsed', 'within_tolerance']
    >>> type(result.to_model()).__name__
    'DecisionTreeClassifier'
    """
    started = time.perf_counter()
    check_params(dict(tolerance=tolerance, margin=margin, metric=metric, search=search, confidence=confidence,
                      refit=refit, reweight=reweight, random_state=random_state, progress=progress, callback=callback,
                      n_jobs=n_jobs),
                 PRUNE_PARAMETERS, owner="prune")
    ensemble = to_ensemble(model)
    monotone = monotone_method(ensemble)
    if monotone is not None:
        # "basic" constraints bound each side's subtree of a split, so a node collapsed into a mean of
        # its leaves and a removed tree keep the model monotone; re-fitted leaves and re-weighted trees
        # need not (measured: LightGBM's raw score then fell 0.27 along its increasing feature), and
        # under LightGBM's other methods neither need collapses (0.016): there only whole trees go
        if refit is True:
            raise ParameterError("refit=True would move the leaves of a model trained with monotone constraints "
                                 "out of their order; pass refit='auto' or False, which keep the constraints")
        refit, reweight = False, False
    tolerance = _check_tolerance(tolerance)  # and finite
    margin = _check_margin(margin)
    metric = _check_metric(metric, ensemble)
    X_val = ensemble.check_X(X_val)
    if X_val.shape[0] == 0:
        raise DataError("X_val has no rows; pruning needs validation rows")
    target = check_target(ensemble, y_val, X_val.shape[0], name="y_val")
    if (X_train is None) != (y_train is None):
        raise ParameterError("pass X_train and y_train together (the rows to rank removals and re-fit leaves on), "
                             "or neither")
    rng = check_random_state(random_state)
    halves = _halves(target, rng) if X_train is None else None
    _check_validation(metric, target, tolerance, np.arange(X_val.shape[0]) if halves is None else halves[1])
    X_fit = fit_target = None
    if X_train is not None:
        X_fit = ensemble.check_X(X_train)
        if X_fit.shape[0] == 0:
            raise DataError("X_train has no rows; pass the training rows, or leave X_train and y_train out")
        fit_target = check_target(ensemble, y_train, X_fit.shape[0], name="y_train")

    with numba_threads(n_jobs):  # every parallel kernel of the walks and the result
        rankings = _rankings(ensemble, X_val, target, halves, X_fit, fit_target, refit, rng)
        walks, baseline, row_evaluations, scoring_seconds = _walks(
            ensemble, rankings, metric, tolerance, search, confidence, reweight, progress, callback, started,
            monotone not in (None, "basic"))
        result = PruneResult(
            method="compress",
            ensemble=ensemble,
            original=ensemble,
            pruned_nodes={},
            metrics=pd.DataFrame(),
            path=walks[0].path,
            # choose() adds the chosen walk's refit, reweighted and ranked_on
            params=dict(tolerance=tolerance, margin=margin, metric=metric, baseline=baseline, search=search,
                        confidence=confidence, row_evaluations=row_evaluations, scoring_seconds=scoring_seconds),
            elapsed=time.perf_counter() - started,
        )
        result._walks = walks
        checking, on_training_rows = rankings[0][1][1:]  # every walk checks on the same rows
        result._checking = (X_val, None if on_training_rows else checking.order, checking.target)
        result._before = result._summary(ensemble, *result._checking, raw=checking.predict_raw())
        result = result.choose(tolerance)
    for note in result.params["warnings"]:
        warnings.warn(note, UserWarning, stacklevel=2)
    return result


def _rankings(ensemble, X_val, target, halves, X_fit, fit_target, refit, rng) -> list:
    """(ranked_on, (ranking rows, checking rows, on training rows), the walks' refit values) of
    every ranking of one ``prune``: with training rows, re-fitting the leaves helps on some models
    and hurts on others, and so do ranking a forest out of bag and walking towards the model's own
    outputs (module docstring), so every walk is taken and the smallest model kept."""
    refits = [True, False] if refit == "auto" and X_fit is not None and refittable(ensemble) else [refit is True]
    if X_fit is None:
        return [(HALF_OF_VALIDATION, row_sets(ensemble, X_val, target, halves, None, None, rng), refits)]
    training = row_sets(ensemble, X_val, target, None, X_fit, fit_target, rng)
    checking = training[1:]  # every walk checks on the same validation rows, stored once
    rankings = [("X_train", training, refits)]
    out_of_bag = out_of_bag_rows(ensemble, training[0], fit_target, rng)
    if out_of_bag is not None:
        rankings.append(("X_train, out of bag", (out_of_bag, *checking), refits))
    if distillable(ensemble):  # re-fitted only: kept leaf values won none of the benchmark's cases
        X_soft = perturbed_rows(X_fit, rng)
        soft_rows = ranking_rows(ensemble, X_soft, model_target(ensemble, X_soft), rng, soft=True)
        rankings.append(("the model's outputs on perturbed X_train", (soft_rows, *checking),
                         [refit in ("auto", True)]))
    return rankings


def _walks(ensemble, rankings, metric, tolerance, search, confidence, reweight, progress, callback, started,
           whole_trees):
    """Every walk of one ``prune`` (from the model, and from re-weighted trees where they apply),
    the unpruned model's checking metric, and the row evaluations and the seconds spent choosing
    steps of all walks; ``whole_trees``: the walks only remove trees."""
    walks, stopped, row_evaluations, scoring_seconds = [], False, 0, 0.0
    starts = (False, True) if reweight and reweightable(ensemble) else (False,)
    planned = len(starts) * sum(len(walk_refits) for _, _, walk_refits in rankings)  # less where no start is found
    for ranked_on, rows, walk_refits in rankings:  # the rows are stored once for the walks they serve
        start = None
        for reweighted in starts:
            for walk_refit in walk_refits:
                if stopped:
                    break
                engine = _Search(ensemble, *rows, metric, search, float(confidence), walk_refit, whole_trees)
                baseline = engine.metric_value()
                if reweighted:  # one start per ranking, for both of its re-weighted walks
                    fitting = f"pruning, ranked on {ranked_on}: the trees' weights, L1 path"
                    start = start or engine.reweighted_start(_bound(metric, baseline, START_SHARE * tolerance),
                                                             progress, fitting)
                    if start is None:
                        break
                report = None if callback is None else _WalkCallback(callback, len(walks))
                label = (f"pruning, walk {len(walks) + 1} of up to {planned}: ranked on {ranked_on}"
                         f"{', from re-weighted trees' if reweighted else ''}{', re-fitted' if walk_refit else ''}")
                path, states = engine.run(_bound(metric, baseline, tolerance),
                                          _bound(metric, baseline, FAR * tolerance), progress, report, started,
                                          start=start, label=label)
                stopped = report is not None and report.stopped
                walks.append(Walk(path, states, engine.refit, reweighted, ranked_on))
                row_evaluations += engine.row_evaluations
                scoring_seconds += engine.scoring_seconds
    return walks, baseline, row_evaluations, scoring_seconds


class _WalkCallback:
    """The user's callback, told which walk a step belongs to; remembers a
    request to stop, which ends every walk."""

    def __init__(self, callback, walk):
        self.callback, self.walk, self.stopped = callback, walk, False

    def __call__(self, row: dict) -> bool:
        self.stopped = self.callback(dict(row, walk=self.walk)) is True
        return self.stopped
