"""``btt.prune``: the public function, its parameters and the walks it takes
(the engine's map: ``pruning/_engine/__init__.py``)."""

import functools
import threading
import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from ..._numba_config import numba_threads
from ..._side_compile import compiling_beside
from ..._threads import side_by_side
from ..._validation import Interval, Options, check_random_state, validate_params
from ...exceptions import DataError, ParameterError
from .._inputs import callback_stops, check_target, check_training_pair, monotone_method, to_ensemble
from ._metrics import (
    MARGIN,
    METRICS,
    CrossFitted,
    _bound,
    _check_margin,
    _check_metric,
    _check_tolerance,
    _check_validation,
    _halves,
)
from ._result import (
    CROSS_FITTED,
    DISTILLED,
    OUT_OF_BAG,
    OUT_OF_BAG_SQUARES,
    OUTPUTS_ON_PERTURBED_VALIDATION,
    PrunePathResult,
    Walk,
)
from ._search import (
    FAR,
    _RowSet,
    _Search,
    class_fractions,
    distillable,
    model_target,
    node_layout,
    out_of_bag_rows,
    perturbed_rows,
    ranking_rows,
    refittable,
    reweightable,
)

__all__ = ["METRICS", "prune"]  # METRICS: the CLI lists the metrics from here

SEARCHES = ("bandit", "exact")
# perturbed rows that rank on the model's outputs: copies of the validation rows enough for this many
# rows, one at least and PERTURBED_COPIES at most (more rows than that ranked no better, for longer);
# of more training rows than this, a sample of this many is perturbed (one copy: more did not pay)
PERTURBED_ROWS = 40_000
PERTURBED_COPIES = 4
START_SHARE = 0.5  # share of the tolerance the re-weighted start may use; the search prunes on with the rest
START_THREAD = "bandit_tree_tools: re-weighted starts"  # the thread that fits them (_Starts)

# what each parameter of prune accepts (_validation.validate_params)
PRUNE_CONSTRAINTS = {
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


@validate_params(PRUNE_CONSTRAINTS, data=("model", "X_val", "y_val", "X_train", "y_train"))
def prune(
    model,
    X_val,
    y_val,
    *,
    tolerance: float = 0.005,
    metric: str | None = None,
    X_train=None,
    y_train=None,
    margin: float = MARGIN,
    search: str = "bandit",
    confidence: float = 3.0,
    refit: bool | str = "auto",
    reweight: bool = True,
    random_state=None,
    progress: bool = True,
    callback=None,
    n_jobs=-1,
) -> PrunePathResult:
    """Prune any imported model to the smallest one within ``tolerance``.

    Parameters
    ----------
    model : fitted scikit-learn, LightGBM or XGBoost tree model, or Ensemble
        Never modified.
    X_val, y_val : validation rows (not used in training)
        Measure the tolerance. Without ``X_train``, a boosted model's
        removals are ranked (and its leaves re-fitted) on its own outputs on
        perturbed copies of the validation rows (as many as reach 40,000
        rows, up to four): no label ranks, so every labelled validation row
        checks the tolerance (``"the model's outputs on perturbed X_val"``).
        A forest's leaves take no such targets: it ranks on the validation
        rows' labels, and two walks, each ranked on one half of them and
        checked on the other, measure that walk: a model's metric is the
        unpruned model's plus their mean change at its size, with that
        mean's standard error (cross-validation; ``"X_val, measured by walks
        on its halves"``).
    tolerance : float, default 0.005
        How much worse than the unpruned model the pruned one may be on the
        validation rows: absolute for accuracy, balanced accuracy, ROC AUC and
        R^2 (0.005 is half a point; 1 or more, the whole range of the first
        three, is refused), relative for log-loss and MSE (0.005 allows 0.5%
        more).
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
        scikit-learn forest's own training rows (in their order; with or
        without ``class_weight``) rank out of bag instead, each tree on the
        rows it did not draw, in two walks: by the log-loss and by the
        squared error of the true class's fraction (``params["ranked_on"]``
        says which walk won); a forest without
        out-of-bag rows (grown on every training row, as ExtraTrees are by
        default, or given other rows) also takes the walk on the validation
        rows' labels that it takes without them. For boosted models
        further walks rank and re-fit towards the unpruned model's own outputs
        on perturbed copies of the training rows (of 40,000 of them, where
        there are more: ``"the model's outputs on perturbed X_train"``) and
        of the validation rows (``"... X_val"``).
        ``WALKS_WITH_TRAINING_ROWS`` lists every walk and why it is there.
    search : {"bandit", "exact"}, default "bandit"
        How candidate removals are scored: on samples of the ranking rows with
        confidence bounds, or on every row. The bandit samples from 100,000
        ranking rows up, in steps whose rows times live trees are at least
        1,000 times the candidates (a boosted model's few nodes per tree, not
        a fully grown forest's thousands); other steps score every row.
    confidence : float, default 3.0
        Width of the bandit's confidence intervals in standard errors;
        ``inf`` makes the bandit score every row (the exact path).
    refit : bool or "auto", default "auto"
        Boosted models with ``X_train``: after every step, re-fit every leaf
        value by a damped Newton pass on the training rows (True), or keep
        the values (False). ``"auto"`` walks both ways and keeps the smaller
        model within the tolerance (``params["refit"]`` says which); the
        walk on perturbed training rows re-fits unless ``refit=False``.
        Without ``X_train``, the re-fit targets the model's own outputs on
        the perturbed validation rows (never their labels), and "auto"
        walks both ways only from re-weighted trees: from the model itself
        it re-fits. The leaves of a model trained with monotone constraints
        keep their values, which re-fitting could move out of order
        (``refit=True`` then raises).
    reweight : bool, default True
        Also walk from re-weighted trees: an L1-penalised fit of the trees'
        weights on the ranking rows drops trees and scales the others, up to half the
        tolerance; the search prunes on from there, and the smaller model
        wins (``params["reweighted"]`` says which). For binary classifiers
        of the boosting libraries (summed trees, one raw output) without
        monotone constraints; other models ignore it.
    random_state : int, RandomState, Generator or None
        Seeds the perturbed rows, the split of the validation rows and the
        bandit's sampling.
    progress : bool, default True
        Show a progress bar of the steps.
    callback : callable, optional
        Called after every step with a dict of that step's path row and
        ``walk`` (0 for the first walk, counting up: ``refit="auto"``,
        ``reweight`` and out-of-bag ranking add walks); a return value of
        True (Python's or numpy's) stops the search. A forest without
        ``X_train`` takes, beside its walk, the two walks on the halves that
        measure it, which report nothing (their progress bars show them).
    n_jobs : int or None, default -1
        Threads of the search's parallel kernels, by joblib's rule: -1 every
        core, None one. With more than one, a forest's walk on the
        validation rows and the two walks on their halves that measure it run
        side by side, each on a thread of its own (the callback is called
        from the calling thread).

    Returns
    -------
    PrunePathResult
        ``method="prune"``; ``path`` (one row per visited model: step,
        leaves, trees, nodes, metric, metric_se, elapsed, within_tolerance),
        ``chosen`` (row of the returned model), ``metrics`` (before/after on
        the validation rows; its metric is ``params["baseline"]`` and the
        path's row, for a forest without ``X_train`` the walks on the halves'
        estimate, whose other columns are measured on rows that also ranked;
        the ``rows`` column says how many, and ``evaluate`` measures on
        others),
        ``choose(tolerance, margin=None)``, ``plot()``,
        ``to_model()``; ``params["warnings"]`` holds the note below, if any;
        ``params["row_evaluations"]`` (rows x live trees read to score
        the candidates and to fit the re-weighted start) and
        ``params["scoring_seconds"]`` (the time spent choosing steps, the
        part ``search`` changes, summed over the walks: a forest without
        training rows takes its three walks side by side, so there it can
        exceed the time the call took) measure the search.

    Raises
    ------
    ParameterError
        A parameter outside what ``PRUNE_CONSTRAINTS`` allows.
    DataError
        Validation rows that cannot measure the metric at the tolerance.
    UnsupportedModelError
        A model whose training objective the metrics cannot judge:
        quantile regression, ranking, survival, margins (XGBoost's
        ``binary:logitraw``, a LightGBM classifier's custom objective; see
        ``pruning._inputs.UNJUDGED_OBJECTIVES``).

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
    ensemble = to_ensemble(model)
    if not isinstance(refit, str):  # numpy's booleans too: one meaning for every walk
        refit = bool(refit)
    monotone = monotone_method(ensemble)
    if monotone is not None:
        # "basic" constraints bound each side's subtree of a split, so a node collapsed into a mean of
        # its leaves and a removed tree keep the model monotone; re-fitted leaves and re-weighted trees
        # need not (LightGBM's raw score then fell along its increasing feature), and
        # under LightGBM's other methods neither need collapses: there only whole trees go
        if refit is True:
            raise ParameterError(
                "refit=True would move the leaves of a model trained with monotone constraints "
                "out of their order; pass refit='auto' or False, which keep the constraints"
            )
        refit, reweight = False, False
    metric = _check_metric(metric, ensemble)
    tolerance = _check_tolerance(tolerance, metric)  # and finite
    margin = _check_margin(margin)
    X_val = ensemble.check_X(X_val, name="X_val")
    if X_val.shape[0] == 0:
        raise DataError("X_val has no rows; pruning needs validation rows")
    target = check_target(ensemble, y_val, X_val.shape[0], name="y_val")
    check_training_pair(X_train, y_train)
    rng = check_random_state(random_state)
    plan = _plan(ensemble, X_train is not None, refit, reweight)
    halves = _halves(target, rng) if plan[0][0] == CROSS_FITTED else None
    checks = [np.arange(X_val.shape[0])] if halves is None else list(halves)
    _check_validation(metric, target, tolerance, checks, ensemble.classes_)
    X_fit = fit_target = None
    if X_train is not None:
        X_fit = ensemble.check_X(X_train, name="X_train")
        if X_fit.shape[0] == 0:
            raise DataError("X_train has no rows; pass the training rows, or leave X_train and y_train out")
        fit_target = check_target(ensemble, y_train, X_fit.shape[0], name="y_train")

    side = "prune_boosted" if distillable(ensemble) else "prune_forest"  # its first call's kernels
    with numba_threads(n_jobs), compiling_beside(side):  # every parallel kernel of the walks and the result
        rankings, half_rows = _rankings(
            ensemble, X_val, target, halves, X_fit, fit_target, plan, rng, metric, tolerance
        )
        walks, baseline, row_evaluations, scoring_seconds = _walks(
            ensemble,
            rankings,
            half_rows,
            plan,
            metric,
            tolerance,
            search,
            confidence,
            progress,
            callback,
            started,
            monotone not in (None, "basic"),
        )
        checking = next(iter(rankings.values()))[1]  # every walk checks on the same rows
        result = PrunePathResult(
            method="prune",
            ensemble=ensemble,
            original=ensemble,
            pruned_nodes={},
            metrics=pd.DataFrame(),
            path=walks[0].path,
            # choose() adds the chosen walk's refit, reweighted and ranked_on
            params=dict(
                tolerance=tolerance,
                margin=margin,
                metric=metric,
                baseline=baseline,
                search=search,
                confidence=confidence,
                row_evaluations=row_evaluations,
                scoring_seconds=scoring_seconds,
            ),
            elapsed=time.perf_counter() - started,
            _walks=tuple(walks),
            _checking=(X_val, checking.target),
        )
        before = result._summary(ensemble, *result._checking, raw=checking.predict_raw())
        result = replace(result, _before=dict(before, **{metric: float(baseline)}))
        result = result.choose(tolerance)
    for note in result.params["warnings"]:
        warnings.warn(note, UserWarning, stacklevel=3)  # past validate_params: at the caller
    return result


# The walks of one prune: (the rows that rank, from re-weighted trees, re-fitted leaves). Every
# walk is taken and the smallest model within the tolerance kept; each of these is the only one to
# reach the smallest model on some case of the benchmark (docs/expect/pruning.md), and a walk that
# never did was dropped. With training rows:
WALKS_WITH_TRAINING_ROWS = (
    ("X_train", False, True),  # re-fitting wins where the model has not memorised its training rows
    ("X_train", False, False),  # and loses where it has; forests and class fractions keep their values
    ("X_train", True, True),  # re-weighted trees: many redundant trees (binary boosted models)
    ("X_train", True, False),
    (OUT_OF_BAG, False, False),  # a bootstrapped forest's trees, each on the rows it did not draw (in
    # place of the walks on every training row, whose drawn rows make each node look useful)
    (OUT_OF_BAG_SQUARES, False, False),  # the same by a bounded loss: rows every tree gets wrong (noisy
    # labels) weigh no more than others, and where they held the log-loss walk, more goes
    (DISTILLED, True, True),  # the model's outputs near its memorised training rows (from the model
    # itself where no re-weighting applies: regression, multiclass)
    (OUTPUTS_ON_PERTURBED_VALIDATION, False, True),  # its outputs near the rows it will meet
    (CROSS_FITTED, False, False),  # a forest that drew no bootstrap samples (or whose training rows
    # these are not) has no out-of-bag rows, and every node looks useful on rows its trees memorised
)
# Without training rows no label ranks (boosted models); a forest, whose leaves take no soft targets,
# ranks on the validation rows' labels, and walks on each half, checked on the other, measure it.
WALKS_WITHOUT_TRAINING_ROWS = (
    (OUTPUTS_ON_PERTURBED_VALIDATION, False, True),  # re-fitted only: towards the model's own outputs a
    # re-fit fits no label noise (the same walk with the values kept reached no smaller model)
    (OUTPUTS_ON_PERTURBED_VALIDATION, True, True),
    (OUTPUTS_ON_PERTURBED_VALIDATION, True, False),
    (CROSS_FITTED, False, False),
)


def _plan(ensemble, with_training_rows: bool, refit, reweight: bool) -> list:
    """The walks this model takes: ``WALKS_*`` less those that do not apply
    (re-fitted leaves need Newton values, re-weighted trees a binary boosted
    model, soft targets Newton leaves), with ``refit`` forced where the user
    set it (True or False for every walk; "auto": as planned)."""
    soft = distillable(ensemble)
    plan = []
    for ranked_on, reweighted, refitted in (
        WALKS_WITH_TRAINING_ROWS if with_training_rows else WALKS_WITHOUT_TRAINING_ROWS
    ):
        if ranked_on == CROSS_FITTED and soft:
            continue
        if ranked_on in (DISTILLED, OUTPUTS_ON_PERTURBED_VALIDATION) and not soft:
            continue
        if ranked_on == OUT_OF_BAG_SQUARES and not class_fractions(ensemble):
            continue
        if reweighted and not (reweight and reweightable(ensemble)):
            if ranked_on != DISTILLED:
                continue
            reweighted = False
        refitted = (refitted and refittable(ensemble)) if isinstance(refit, str) else bool(refit)
        if (ranked_on, reweighted, refitted) not in plan:
            plan.append((ranked_on, reweighted, refitted))
    return plan


def _rankings(ensemble, X_val, target, halves, X_fit, fit_target, plan, rng, metric, tolerance) -> tuple:
    """The rows of every ranking the ``plan`` walks on: ``ranked_on`` ->
    (ranking rows, checking rows, whether the ranking rows may re-fit
    leaves), and the rows of the walks on the validation rows' halves that
    measure the walk ranked on their labels (:func:`_half_rows`; None
    without that walk). The checking rows are the same for every walk:
    every validation row, routed once for every row set made from them.

    ``halves``: the validation rows' halves of a prune without training
    rows, None with them; there, the walk on the validation rows' labels is
    taken only where the forest has no out-of-bag rows and each half of the
    validation rows can check (:func:`_check_validation`)."""
    checking = _RowSet(ensemble, X_val, np.arange(X_val.shape[0]), target)
    rankings, half_rows = {}, None
    for ranked_on in dict.fromkeys(name for name, _, _ in plan):  # in the plan's order
        if ranked_on == CROSS_FITTED:
            if halves is None:  # with training rows: only a forest without out-of-bag rows takes it
                halves = None if OUT_OF_BAG in rankings else _checking_halves(metric, target, tolerance, rng)
                if halves is None:
                    continue
            rankings[CROSS_FITTED] = (checking.subset(rng.permutation(checking.n)), checking, False)
            half_rows = _half_rows(checking, halves, rng)
            continue
        if ranked_on == "X_train":
            rows = ranking_rows(ensemble, X_fit, fit_target, rng)
        elif ranked_on == OUT_OF_BAG:
            rows = out_of_bag_rows(ensemble, rankings["X_train"][0], fit_target, rng)
            if rows is None:  # not the forest's own training rows
                continue
        elif ranked_on == OUT_OF_BAG_SQUARES:  # the same rows, ranked by another loss
            if OUT_OF_BAG not in rankings:
                continue
            rows = rankings[OUT_OF_BAG][0]
        elif ranked_on == DISTILLED:
            sample = X_fit  # X_fit stays whole for the walks on the training rows' labels
            if X_fit.shape[0] > PERTURBED_ROWS:
                sample = X_fit[np.sort(rng.choice(X_fit.shape[0], PERTURBED_ROWS, replace=False))]
            rows = _model_outputs(ensemble, perturbed_rows(sample, rng), rng)
        else:
            copies = min(PERTURBED_COPIES, int(np.ceil(PERTURBED_ROWS / X_val.shape[0])))
            rows = _model_outputs(ensemble, np.concatenate([perturbed_rows(X_val, rng) for _ in range(copies)]), rng)
        rankings[ranked_on] = (rows, checking, True)
    if OUT_OF_BAG in rankings:
        # a bootstrapped forest's trees memorised the rows they drew: ranked on every training row,
        # each node looks useful, and the out-of-bag walks take that walk's place
        del rankings["X_train"]
    return rankings, half_rows


def _checking_halves(metric, target, tolerance, rng):
    """The validation rows' halves for the walk on their labels beside walks on training rows,
    or None where a half has too few rows to check it (the other walks check on all of them)."""
    halves = _halves(target, rng)
    try:
        _check_validation(metric, target, tolerance, list(halves))
    except DataError:
        return None
    return halves


def _half_rows(checking, halves, rng) -> list:
    """(ranking rows, checking rows) of the two walks that measure the walk
    ranked on every validation row (``checking``, as ``_rankings`` made it):
    each half of them ranks, the other checks (``_metrics.CrossFitted``)."""
    first, second = halves
    return [
        (checking.subset(ranking[rng.permutation(ranking.shape[0])]), checking.subset(measuring))
        for ranking, measuring in ((first, second), (second, first))
    ]


def _model_outputs(ensemble, X_soft, rng):
    """Ranking rows that spend no label: ``X_soft`` with the unpruned model's
    own outputs there as their targets."""
    return ranking_rows(ensemble, X_soft, model_target(ensemble, X_soft), rng, soft=True)


def _walks(
    ensemble, rankings, half_rows, plan, metric, tolerance, search, confidence, progress, callback, started, whole_trees
):
    """Every walk of the ``plan`` whose rows exist, the unpruned model's
    checking metric, and the row evaluations and the seconds spent choosing
    steps of all walks; ``half_rows``: the rows of the walks that measure the
    walk ranked on every validation row (:func:`_half_rows`), or None;
    ``whole_trees``: the walks only remove trees."""
    plan = [walk for walk in plan if walk[0] in rankings]
    layout = node_layout(ensemble)  # read by every walk, built once

    def search_on(ranked_on, refit=False):
        return _Search(
            ensemble,
            *rankings[ranked_on],
            metric,
            search,
            float(confidence),
            refit,
            whole_trees,
            fraction_squares=ranked_on == OUT_OF_BAG_SQUARES,
            layout=layout,
        )

    reweighted_rankings = [ranked_on for ranked_on, reweighted, _ in plan if reweighted]
    starts = _Starts(reweighted_rankings, search_on, metric, tolerance, progress)  # one per ranking

    def take_walks():
        walks, stopped, row_evaluations, scoring_seconds = [], False, 0, 0.0
        for ranked_on, reweighted, refit in plan:
            if stopped:
                break
            engine = search_on(ranked_on, refit)
            baseline = engine.metric_value()
            start = None
            if reweighted:
                start = starts.get(ranked_on)
                if start is None:  # no point of the L1 path leaves a tree out within the tolerance
                    continue
            report = None if callback is None else _WalkCallback(callback, len(walks))
            label = (
                f"pruning, walk {len(walks) + 1} of up to {len(plan)}: ranked on {ranked_on}"
                f"{', from re-weighted trees' if reweighted else ''}{', re-fitted' if engine.refit else ''}"
            )

            def run_walk(estimate=None):
                return engine.run(
                    _bound(metric, baseline, FAR * tolerance),
                    progress,
                    report,
                    started,
                    start=start,
                    label=label,
                    estimate=estimate,
                )

            if ranked_on == CROSS_FITTED:

                def half_walk(half, record):  # one of the two walks that measure the walk on every validation row
                    sizing = _Search(
                        ensemble,
                        *half_rows[half],
                        False,
                        metric,
                        search,
                        float(confidence),
                        refit,
                        whole_trees,
                        layout=layout,
                    )
                    sizing.run(
                        _bound(metric, sizing.metric_value(), FAR * tolerance),
                        progress,
                        record,
                        started,
                        label=f"pruning, measuring walk {half + 1} of 2: ranked on one half of X_val, checked on the other",
                        keep_states=False,
                    )
                    return sizing

                (path, states), measuring = _measured_walk(run_walk, half_walk, baseline)
                row_evaluations += sum(sizing.row_evaluations for sizing in measuring)
                scoring_seconds += sum(sizing.scoring_seconds for sizing in measuring)
            else:
                path, states = run_walk()
            stopped = report is not None and report.stopped
            walks.append(Walk(path, states, engine.refit, reweighted, ranked_on))
            row_evaluations += engine.row_evaluations
            scoring_seconds += engine.scoring_seconds
        return walks, baseline, row_evaluations, scoring_seconds

    if not reweighted_rankings:
        return take_walks()

    def walks_then_stop():
        try:
            return take_walks()
        finally:
            starts.stop.set()  # a fit still running (for a walk a stopped prune never took) ends

    (walks, baseline, row_evaluations, scoring_seconds), _ = side_by_side(
        [walks_then_stop, starts.fit_all], starts.stop, names=[START_THREAD]
    )
    return walks, baseline, row_evaluations + starts.row_evaluations, scoring_seconds


class _Starts:
    """The re-weighted starts of one prune's walks, one per ranking
    (``_Search.reweighted_start``). Their L1 paths run on one core, so
    ``_walks`` runs :meth:`fit_all` beside the walks (``_threads.side_by_side``:
    on a thread of its own where a second core is free, else before them),
    and a re-weighted walk waits for its start (:meth:`get`): the same start,
    bit for bit, as one fitted when its walk comes. Setting ``stop`` ends the
    fits at their next point of the path."""

    def __init__(self, ranked_on, search_on, metric, tolerance, progress):
        self._metric, self._tolerance, self._progress = metric, tolerance, progress
        self._starts, self._error = {}, None
        self.stop = threading.Event()
        self.row_evaluations = 0  # the rows x trees the fits read
        self._searches = [(name, search_on(name)) for name in dict.fromkeys(ranked_on)]
        for _, search in self._searches:
            search.route_start_rows()  # from this thread, before another reads the same rows
        self._ready = {name: threading.Event() for name, _ in self._searches}

    def fit_all(self) -> None:
        """Fit every start, in the order the walks need them."""
        try:
            for ranked_on, search in self._searches:
                if self.stop.is_set():
                    break
                label = f"pruning, ranked on {ranked_on}: the trees' weights, L1 path"
                bound = _bound(self._metric, search.metric_value(), START_SHARE * self._tolerance)
                self._starts[ranked_on] = search.reweighted_start(bound, self._progress, label, stop=self.stop)
                self.row_evaluations += search.row_evaluations
                self._ready[ranked_on].set()
        except Exception as error:  # raised in the walk that asks for the start, if one does
            self._error = error
        finally:
            for ready in self._ready.values():
                ready.set()

    def get(self, ranked_on):
        """The start of the walks ranked on ``ranked_on`` (a ``_State``), or
        None where no point of the L1 path leaves a tree out within half the
        tolerance."""
        self._ready[ranked_on].wait()
        if ranked_on not in self._starts:
            raise self._error
        return self._starts[ranked_on]


def _measured_walk(run_walk, half_walk, baseline: float):
    """(the path and states of the walk ranked on every validation row,
    ``run_walk(estimate)``; the searches of the two walks that measure it,
    ``half_walk(half, record)``, each ranked on one half of those rows and
    checked on the other, ``record`` taking each row of its path).
    ``baseline``: the unpruned model's metric on every validation row.

    The three run side by side on threads (``_threads.side_by_side``): one
    walk's kernels use the cores while another runs Python between its own.
    The walk waits for the halves' measurements of each of its sizes
    (:class:`CrossFitted`); the halves end when the walk has ended."""
    estimate = CrossFitted(baseline)
    stop = threading.Event()  # the walk has ended, or one of the three failed: the others end at their next step

    def measured():
        try:
            return run_walk(estimate)
        finally:
            stop.set()

    def measuring(half):
        def record(row):
            estimate.add(half, row)
            return stop.is_set()

        try:
            return half_walk(half, record)
        finally:
            estimate.end(half)

    path_and_states, *measuring_searches = side_by_side(
        [measured, functools.partial(measuring, 0), functools.partial(measuring, 1)], stop
    )
    return path_and_states, measuring_searches


class _WalkCallback:
    """The user's callback, told which walk a step belongs to; remembers a
    request to stop, which ends every walk."""

    def __init__(self, callback, walk):
        self.callback, self.walk, self.stopped = callback, walk, False

    def __call__(self, row: dict) -> bool:
        self.stopped = callback_stops(self.callback(dict(row, walk=self.walk)))
        return self.stopped
