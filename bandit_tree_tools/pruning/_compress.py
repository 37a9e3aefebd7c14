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
   squared error, log-loss through the sigmoid or softmax, Poisson for the log
   link; smooth losses to second order) on the ranking rows if it alone were
   applied, plus one spread of its per-row changes; candidates are ranked by
   that per leaf removed. The spread discounts candidates whose few rows
   happen to agree: with thousands of candidates the plain sum picks exactly
   those (on a 300-tree LightGBM model it raised validation balanced
   accuracy by 1.5 points while test accuracy fell).
4. **Bandit.** With ``search="exact"`` every ranking row enters every cost;
   with ``search="bandit"`` the costs are estimated from a growing sample of
   the rows (one fixed random permutation, batches doubling) with confidence
   intervals (normal, finite-population correction), and sampling stops as
   soon as the chosen set's cost is known to ``DECISION_ACCURACY`` of the
   model's loss: best-arm identification over removals, the way MABSplit
   identifies splits. When the rows run out first, the exact costs are
   computed, so with a full budget (``confidence=inf``) both searches walk
   the same path.
5. **Step.** The best-ranked candidates that do not overlap are applied until
   a tenth of the current leaves is gone; then, with training rows, every
   leaf of a boosted model is re-fitted by one backfitting pass of Newton
   steps damped to 0.1 (a boosting learning rate), so what remains takes over
   the removed parts' work. (Re-fitting on the validation rows, or with a step
   of 0.5, made test scores worse.)
6. **Check.** The metric is measured on rows the choice has not seen: with
   ``X_train``, the training rows rank and re-fit and every validation row
   checks; without it, half of the validation rows rank and the other half
   checks. The walk goes on past models outside the tolerance (a re-fitted
   model further down can be back within it) and ends after ``PATIENCE``
   models far outside it. The chosen model is the smallest whose metric,
   averaged with its neighbours on the path and held two standard errors of
   its paired difference from the unpruned model inside, is within the
   tolerance: without the averaging and the margin, one lucky point at the
   edge where the metric falls off would be chosen. Measured on 20 models of
   5 data sets (``benchmarks/bench_compression.py``): with a margin of one
   standard error the test score fell by more than the tolerance in 5 cases
   (by up to 0.78 points, median compression 6.0x); with two, in none
   (median 3.5x).
"""

import math
import numbers
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..exceptions import DataError, ParameterError, UnsupportedModelError
from ..tree import Ensemble, node_parent, outermost_nodes, rebuild_tree
from . import _compress_kernels as kernels
from ._common import rng_from, to_ensemble
from ._evaluator import Target, check_target
from ._kernels import _preorder
from ._result import PruneResult

# name -> (task, higher is better, tolerance is relative)
METRICS = {
    "balanced_accuracy": ("classification", True, False),
    "accuracy": ("classification", True, False),
    "roc_auc": ("classification", True, False),
    "log_loss": ("classification", False, True),
    "r2": ("regression", True, False),
    "mse": ("regression", False, True),
}
SEARCHES = ("bandit", "exact")

STEP_FRACTION = 0.10  # share of the current leaves one step removes
PATIENCE = 3  # the walk ends after this many models in a row far outside the tolerance:
FAR = 4.0  # worse than the unpruned model by FAR times the tolerance
MARGIN = 2.0  # a model is within the tolerance when it is by this many standard errors of its difference
REG_LAMBDA = 1.0  # L2 penalty of collapsed and re-fitted leaf values (XGBoost's default)
REFIT_STEP = 0.1  # damping of the backfitting pass after every step (a boosting learning rate)
PESSIMISM = 1.0  # candidates rank by cost + PESSIMISM * sqrt(sum of squared changes), per leaf
FIRST_BATCH = 2_000  # ranking rows of the bandit's first batch (at least; then doubling)
SAMPLED_FROM = 40_000  # fewer ranking rows than this are scored exactly
DECISION_ACCURACY = 0.002  # the bandit stops sampling when its choice's cost is known to 0.2% of the model's loss
MAX_STEPS = 1_000


def prune(model, X_val, y_val, *, tolerance: float = 0.005, metric: str | None = None, X_train=None, y_train=None,
          search: str = "bandit", confidence: float = 3.0, refit: bool = True, random_state=None,
          progress: bool = True, callback=None) -> PruneResult:
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
    metric : {"balanced_accuracy", "accuracy", "roc_auc", "log_loss", "r2", "mse"}, optional
        Default: balanced accuracy for classifiers, R^2 for regressors.
    X_train, y_train : optional
        The training rows: they rank the removals and re-fit the leaves, and
        every validation row then measures the tolerance.
    search : {"bandit", "exact"}, default "bandit"
        How candidate removals are scored: on samples of the ranking rows with
        confidence bounds (from 40,000 ranking rows up; fewer are scored
        exactly), or on every row.
    confidence : float, default 3.0
        Width of the bandit's confidence intervals in standard errors;
        ``inf`` makes the bandit score every row (the exact path).
    refit : bool, default True
        Boosted models with ``X_train``: after every step, re-fit every leaf
        value by a damped Newton pass on the training rows. Without
        ``X_train`` leaves keep their values (re-fitting them on validation
        rows made test scores worse in our measurements).
    random_state : int, RandomState, Generator or None
        Seeds the split of the validation rows and the bandit's sampling.
    progress : bool, default True
        Show a progress bar of the steps.
    callback : callable, optional
        Called after every step with a dict of that step's path row; a
        return value of True stops the search there.

    Returns
    -------
    PruneResult
        ``method="compress"``; ``path`` (one row per visited model: step,
        leaves, trees, nodes, metric, metric_se, elapsed, within_tolerance),
        ``chosen`` (row of the returned model), ``metrics`` (before/after on
        the validation rows), ``choose(tolerance)``, ``plot()``,
        ``to_model()``.
    """
    started = time.perf_counter()
    ensemble = to_ensemble(model)
    tolerance = _check_tolerance(tolerance)
    metric = _check_metric(metric, ensemble)
    if search not in SEARCHES:
        raise ParameterError(f"search must be one of {SEARCHES}, got {search!r}")
    if not isinstance(confidence, numbers.Real) or isinstance(confidence, bool) or not confidence > 0:
        raise ParameterError(f"confidence must be a positive number of standard errors (or inf), got {confidence!r}")
    if callback is not None and not callable(callback):
        raise ParameterError(f"callback must be callable (it receives a dict per step), got {type(callback).__name__}")
    X_val = ensemble.check_X(X_val)
    if X_val.shape[0] == 0:
        raise DataError("X_val has no rows; pruning needs validation rows")
    target = check_target(ensemble, y_val, X_val.shape[0], name="y_val")
    if (X_train is None) != (y_train is None):
        raise ParameterError("pass X_train and y_train together (the rows to rank removals and re-fit leaves on), "
                             "or neither")
    rng = rng_from(random_state)
    halves = _halves(target, rng) if X_train is None else None
    _check_validation(metric, target, tolerance, np.arange(X_val.shape[0]) if halves is None else halves[1])
    if X_train is not None:
        X_fit = ensemble.check_X(X_train)
        if X_fit.shape[0] == 0:
            raise DataError("X_train has no rows; pass the training rows, or leave X_train and y_train out")
        fit_target = check_target(ensemble, y_train, X_fit.shape[0], name="y_train")
    else:
        X_fit, fit_target = X_val, target

    engine = _Search(ensemble, X_val, target, halves, X_fit, fit_target, metric, search, float(confidence), refit,
                     rng)
    baseline = engine.metric_value()
    bound = _bound(metric, baseline, tolerance)
    path, states = engine.run(bound, _bound(metric, baseline, FAR * tolerance), progress, callback, started)
    result = PruneResult(
        method="compress",
        ensemble=ensemble,
        original=ensemble,
        pruned_nodes={},
        metrics=pd.DataFrame(),
        path=path,
        params=dict(tolerance=tolerance, metric=metric, baseline=baseline, search=search, confidence=confidence,
                    ranked_on="X_train" if X_train is not None else "half of X_val", refit=engine.refit,
                    row_evaluations=engine.row_evaluations),
        elapsed=time.perf_counter() - started,
    )
    result._states = states
    result._validation = (X_val, target)
    return result.choose(tolerance)


# ---------------------------------------------------------------- checking
def _check_tolerance(tolerance) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not math.isfinite(tolerance) \
            or tolerance < 0:
        raise ParameterError(f"tolerance must be a finite number >= 0 (0.005 is half a point of accuracy), "
                             f"got {tolerance!r}")
    return float(tolerance)


def _check_metric(metric, ensemble: Ensemble) -> str:
    if metric is None:
        return "balanced_accuracy" if ensemble.task == "classification" else "r2"
    if metric not in METRICS:
        raise ParameterError(f"unknown metric {metric!r}; known metrics: {', '.join(METRICS)}")
    task = METRICS[metric][0]
    if task != ensemble.task:
        fitting = [name for name, spec in METRICS.items() if spec[0] == ensemble.task]
        raise ParameterError(f"metric {metric!r} is for {task} models, but this is a {ensemble.task} model; "
                             f"use one of {', '.join(fitting)}")
    return metric


def _check_validation(metric: str, target: Target, tolerance: float, check_rows) -> None:
    """Refuse validation rows that cannot measure the metric at the tolerance
    on the half of them that checks it."""
    n_rows = target.codes.shape[0]
    if target.n_classes:
        counts = np.bincount(target.codes, minlength=target.n_classes)
        if np.count_nonzero(counts) < 2:
            raise DataError(f"y_val holds one class only ({np.flatnonzero(counts).tolist()} of the model's "
                            f"{target.n_classes}); the validation rows need at least two classes")
        counts = np.bincount(target.codes[check_rows], minlength=target.n_classes)
    elif n_rows < 4:
        raise DataError(f"y_val needs at least 4 rows to measure R^2 or MSE (half of them check it), got {n_rows}")
    n_rows = check_rows.shape[0]
    if tolerance == 0 or METRICS[metric][2]:
        return
    if metric == "accuracy":
        needed = math.ceil(1.0 / tolerance)
        have = n_rows
    elif metric == "balanced_accuracy":
        present = int(np.count_nonzero(counts))
        needed = math.ceil(1.0 / (present * tolerance))  # rows of the rarest class
        have = int(counts[counts > 0].min())
    elif metric == "roc_auc":
        needed = math.ceil(1.0 / tolerance)  # positive x negative pairs
        have = int(np.sort(counts)[-1] * np.sort(counts[counts > 0])[0])
    else:
        return
    if have < needed:
        what = {"accuracy": "rows", "balanced_accuracy": "rows of the rarest class",
                "roc_auc": "pairs of rows from different classes"}[metric]
        raise DataError(f"too few validation rows to measure {metric} at tolerance {tolerance}: half of them "
                        f"check the tolerance, and there one row moves the metric by more than the tolerance; the "
                        f"checking half needs at least {needed} {what}, got {have}, so pass at least twice as many "
                        f"or a larger tolerance")


def _halves(target: Target, rng) -> tuple:
    """Two disjoint halves of the rows (each class split evenly between them)."""
    n_rows = target.codes.shape[0]
    groups = target.codes if target.n_classes else np.zeros(n_rows, dtype=np.int64)
    order = rng.permutation(n_rows)
    order = order[np.argsort(groups[order], kind="stable")]  # shuffled within each class
    first = np.zeros(n_rows, dtype=bool)
    position = np.arange(n_rows)
    for label in np.unique(groups):
        members = position[groups[order] == label]
        first[order[members[::2]]] = True
    return np.flatnonzero(first), np.flatnonzero(~first)


def _bound(metric: str, baseline: float, tolerance: float) -> float:
    _, higher, relative = METRICS[metric]
    if relative:
        return baseline * (1.0 + tolerance)
    return baseline - tolerance if higher else baseline + tolerance


def within(metric: str, value: float, bound: float) -> bool:
    return value >= bound - 1e-12 if METRICS[metric][1] else value <= bound + 1e-12


def _row_terms(metric: str, ensemble: Ensemble, raw: np.ndarray, target: Target):
    """Per-row terms whose (class-balanced) mean is the metric: correct
    predictions, log-losses or squared errors; None for ROC AUC."""
    prediction = ensemble.transform_raw(raw)
    if target.n_classes == 0:
        return (prediction[:, 0] - target.values) ** 2
    if metric == "roc_auc":
        return None
    proba = np.hstack([1.0 - prediction, prediction]) if prediction.shape[1] == 1 else prediction
    codes = target.codes
    if metric == "log_loss":
        return -np.log(np.clip(proba[np.arange(codes.shape[0]), codes], kernels.EPS, 1.0 - kernels.EPS))
    return (np.argmax(proba, axis=1) == codes).astype(np.float64)


def paired_standard_error(metric: str, terms, base_terms, target: Target) -> float:
    """Standard error of the metric's difference from the unpruned model on
    the same rows (0 for ROC AUC, whose terms do not separate by row)."""
    if terms is None:
        return 0.0
    difference = terms - base_terms
    if metric == "balanced_accuracy":
        present = [difference[target.codes == c] for c in range(target.n_classes)]
        present = [part for part in present if part.size]
        variance = sum(np.var(part) / part.size for part in present) / len(present) ** 2
    else:
        variance = np.var(difference) / difference.size
    if metric == "r2":
        variance /= target.variance ** 2
    return float(np.sqrt(variance))


def smoothed_metric(path: pd.DataFrame, row: int) -> float:
    """The mean metric of a path point and its neighbours on the path: where
    the metric falls off (the smallest models), one lucky point among many
    would otherwise be the one chosen."""
    values = path["metric"].to_numpy()
    return float(np.mean(values[max(row - 1, 0):row + 2]))


def within_margin(metric: str, value: float, standard_error: float, bound: float) -> bool:
    """Within the bound by ``MARGIN`` standard errors of the paired difference."""
    sign = 1.0 if METRICS[metric][1] else -1.0
    return within(metric, value - sign * MARGIN * standard_error, bound)


def metric_value(metric: str, ensemble: Ensemble, raw: np.ndarray, target: Target, terms=None) -> float:
    """The metric of raw scores ``raw`` (n_rows, n_outputs) of ``ensemble``'s
    kind; ``terms`` are its per-row terms when already computed."""
    if metric == "roc_auc":
        from sklearn.metrics import roc_auc_score

        prediction = ensemble.transform_raw(raw)
        codes = target.codes
        if target.n_classes == 2:
            return float(roc_auc_score(codes, prediction[:, -1]))
        present = np.unique(codes)
        columns = prediction[:, present] / np.sum(prediction[:, present], axis=1, keepdims=True)
        return float(roc_auc_score(codes, columns, multi_class="ovr", labels=present))
    terms = _row_terms(metric, ensemble, raw, target) if terms is None else terms
    if metric == "balanced_accuracy":
        hits = np.bincount(target.codes, weights=terms, minlength=target.n_classes)
        counts = np.bincount(target.codes, minlength=target.n_classes)
        present = counts > 0
        return float(np.mean(hits[present] / counts[present]))
    mean = float(np.mean(terms))
    return 1.0 - mean / target.variance if metric == "r2" else mean


# ------------------------------------------------------------------ search
class _Rows:
    """Rows the search works on: their original leaf per tree (int32
    (n_trees, n_rows)), their target and their current raw scores."""

    def __init__(self, ensemble=None, X=None, target=None, leaf=None):
        self.leaf = (np.ascontiguousarray(ensemble.apply(X, check_input=False).T, dtype=np.int32) if leaf is None
                     else leaf)  # X as prune validated it
        self.target = target
        self.raw = None

    def subset(self, rows) -> "_Rows":
        t = self.target
        target = Target(t.codes[rows], t.values[rows], t.n_classes, t.positive,
                        float(np.var(t.values[rows])) if t.n_classes == 0 else 1.0)
        return _Rows(target=target, leaf=np.ascontiguousarray(self.leaf[:, rows]))


@dataclass(frozen=True)
class _State:
    """A point of the path: which nodes are collapsed, which trees live, the
    values of every node and the intercept."""

    collapsed: np.ndarray
    alive: np.ndarray
    value: np.ndarray
    base_score: np.ndarray


class _Search:
    def __init__(self, ensemble, X_val, target, halves, X_fit, fit_target, metric, search, confidence, refit, rng):
        self.ensemble, self.metric, self.search, self.confidence = ensemble, metric, search, confidence
        trees = ensemble.trees
        self.n_trees = len(trees)
        self.offset = _node_offsets(ensemble)
        self.tree_of = np.repeat(np.arange(self.n_trees), np.diff(self.offset))
        self.children_left = np.concatenate([tree.children_left for tree in trees])
        self.children_right = np.concatenate([tree.children_right for tree in trees])
        self.is_root = np.zeros(self.offset[-1], dtype=bool)
        self.is_root[self.offset[:-1]] = True
        parents, order, end = [], [], []
        for root, tree in zip(self.offset, trees):
            parents.append(node_parent(tree))
            position, stop = _preorder(tree.children_left, tree.children_right)
            by_position = np.empty(tree.n_nodes, dtype=np.int64)
            by_position[position] = np.arange(tree.n_nodes)
            order.append(root + by_position)
            end.append(np.stack([root + position, root + stop], axis=1))
        self.parent = np.concatenate(parents)
        self.preorder_nodes = np.concatenate(order)  # global ids in pre-order, tree after tree
        self.subtree_span = np.concatenate(end)  # [start, stop) of every node's subtree in preorder_nodes
        self.stored_value = np.concatenate([tree.value for tree in trees]).astype(np.float64)
        self.has_value = np.concatenate([tree.has_leaf_value for tree in trees]).astype(bool)
        cover = np.concatenate([tree.weighted_n_node_samples for tree in trees]).astype(np.float64)
        # collapsed values weight the leaves by the model's own covers where it recorded them,
        # else by hessians summed over the fitting rows
        self.cover = cover if np.all(np.isfinite(cover)) and np.all(cover >= 0) else None

        self.loss_kind = _loss_kind(ensemble)
        self.averaged = ensemble.aggregation == "mean"
        # Newton values need a loss of the raw score and trees that add up; class fractions and
        # averaged trees keep their stored values
        self.newton = not self.averaged and self.loss_kind != kernels.FRACTIONS
        self.refit = refit and self.newton and X_fit is not X_val
        if self.averaged and np.any(ensemble.tree_scale != 1.0):
            raise UnsupportedModelError("prune supports averaged ensembles (forests) whose trees all have weight 1")
        # The tolerance is checked on rows the choice of removals has not seen: with training rows
        # those rank and re-fit, and every validation row checks; without them one half of the
        # validation rows ranks and the other checks.
        val = _Rows(ensemble, X_val, target)
        if X_fit is X_val:
            self.rank, self.check = val.subset(halves[0]), val.subset(halves[1])
            self.fit = self.rank
        else:
            self.rank = self.fit = _Rows(ensemble, X_fit, fit_target)
            self.check = val
        self.n_rank = self.rank.leaf.shape[1]
        self.row_evaluations = 0
        self.permutation = rng.permutation(self.n_rank)
        # the working state
        self.collapsed = np.zeros(self.offset[-1], dtype=bool)
        self.current = np.arange(self.offset[-1], dtype=np.int64)
        self.alive = np.ones(self.n_trees, dtype=bool)
        self.value = self.stored_value.copy()
        self.base_score = ensemble.base_score.astype(np.float64).copy()
        self.tree_output = ensemble.tree_output
        self.n_outputs = ensemble.n_outputs
        self.per_iteration = _trees_per_iteration(ensemble)
        self._scores()

    # --------------------------------------------------------------- scores
    def factor(self) -> np.ndarray:
        if self.averaged:
            return self.ensemble.tree_scale / max(int(np.count_nonzero(self.alive)), 1)
        return self.ensemble.tree_scale

    def _raw(self, leaf):
        return kernels.raw_scores(leaf, self.offset, self.current, self.value, self.tree_output, self.factor(),
                                  self.alive, self.base_score)

    def _scores(self):
        for rows in {id(rows): rows for rows in (self.check, self.rank, self.fit)}.values():
            rows.raw = self._raw(rows.leaf)

    def metric_value(self) -> float:
        return metric_value(self.metric, self.ensemble, self.check.raw, self.check.target)

    # ----------------------------------------------------------------- size
    def size(self) -> dict:
        counts = kernels.current_leaf_counts(self.children_left, self.children_right, self.offset, self.collapsed)
        roots = self.offset[:-1]
        alive = self.alive
        stumps = 0
        if not self.averaged and self.per_iteration > 1:
            # dead trees of a partly live iteration stay as one-leaf trees
            groups = alive.reshape(-1, self.per_iteration)
            partly = groups.any(axis=1)
            stumps = int(np.count_nonzero(~groups[partly]))
        n_trees = int(np.count_nonzero(alive)) + stumps
        visible = self.current == np.arange(self.current.shape[0])
        internal = visible & (self.children_left != -1) & ~self.collapsed & alive[self.tree_of]
        leaves = int(counts[roots[alive]].sum()) + stumps
        return {"leaves": leaves, "trees": n_trees, "nodes": leaves + int(np.count_nonzero(internal))}

    # ----------------------------------------------------------- candidates
    def candidate_values(self) -> np.ndarray:
        """The value each node would take if collapsed now."""
        if not self.newton:
            return self.stored_value
        if self.cover is not None:
            values = kernels.cover_weighted_values(self.children_left, self.children_right, self.offset,
                                                   self.collapsed, self.cover, self.value)
            return np.where(np.isnan(values), self.value, values)
        fit = self.fit.target
        grad, hess = kernels.gradients(self.fit.raw, fit.codes, fit.values, self.loss_kind,
                                       float(self.ensemble.link_scale))
        factor = self.factor()
        numerator, hessian = kernels.newton_sums(self.fit.leaf, self.offset, self.parent, self.current, self.value,
                                                 self.tree_output, factor, self.alive, grad, hess)
        values = self.value.copy()
        internal = self._internal()
        values[internal, 0] = numerator[internal] / (hessian[internal] + REG_LAMBDA) / factor[self.tree_of[internal]]
        return values

    def _internal(self) -> np.ndarray:
        """Internal nodes of the live trees as pruned so far."""
        visible = self.current == np.arange(self.current.shape[0])
        return visible & (self.children_left != -1) & ~self.collapsed & self.alive[self.tree_of]

    def costs(self, rows, candidate_value):
        """Loss change on ``rows`` (of the ranking rows) per candidate: sum,
        sum of squares, rows reached."""
        on = self.rank
        t, leaf = on.target, on.leaf
        self.row_evaluations += rows.shape[0] * int(np.count_nonzero(self.alive))
        link_scale = float(self.ensemble.link_scale)
        change, square, reached = kernels.collapse_costs(
            rows, leaf, self.offset, self.parent, self.current, self.value, candidate_value,
            self.tree_output, self.factor(), self.alive, on.raw, t.codes, t.values, self.loss_kind, link_scale)
        roots = self.offset[:-1]
        if self.averaged:  # a root stands for dropping its tree from the mean
            tree_sum = kernels.raw_scores(leaf, self.offset, self.current, self.value, self.tree_output,
                                          self.ensemble.tree_scale, self.alive, np.zeros(self.n_outputs))
            change[roots], square[roots] = kernels.removal_costs(
                rows, leaf, self.offset, self.current, self.value, self.tree_output, self.alive,
                int(np.count_nonzero(self.alive)), tree_sum, self.ensemble.base_score, t.codes, t.values,
                self.loss_kind)
        reached[roots] = rows.shape[0]
        return change, square, reached

    def candidates(self):
        """Ids of the current candidates and the leaves each would remove.

        Internal nodes collapse into leaves. A root stands for the whole tree:
        summed trees fold their constant into the intercept (at export, into
        a kept tree's leaves), averaged trees leave the mean; the last live
        tree stays (its root can still collapse into a single leaf when the
        trees are summed)."""
        counts = kernels.current_leaf_counts(self.children_left, self.children_right, self.offset, self.collapsed)
        mask = self._internal()
        if not self.newton:
            mask &= self.has_value
        n_alive = int(np.count_nonzero(self.alive))
        roots = self.offset[:-1]
        if self.averaged:
            mask[roots] = self.alive & (n_alive > 1)
        elif n_alive > 1:
            mask[roots] = self.alive  # one-leaf trees too: their value moves into the intercept
        ids = np.flatnonzero(mask)
        benefit = counts[ids] - 1
        if n_alive > 1:
            benefit[self.is_root[ids]] += 1  # the whole tree goes
        return ids, benefit.astype(np.float64)

    def select(self, ids, benefit, cost, budget) -> list:
        """Greedy: the best cost per leaf first, skipping overlaps, until ``budget`` leaves are gone."""
        order = np.argsort(cost / np.maximum(benefit, 1.0), kind="stable")
        taken = np.zeros(self.current.shape[0], dtype=bool)  # in or above a chosen subtree
        chosen, removed = [], 0.0
        trees_left = int(np.count_nonzero(self.alive))
        for position in order:
            node = ids[position]
            if taken[node] or (self.is_root[node] and trees_left <= 1):
                continue
            start, stop = self.subtree_span[node]
            inside = self.preorder_nodes[start:stop]
            if taken[inside].any():
                continue
            taken[inside] = True
            root = self.offset[self.tree_of[node]]
            up = self.parent[node]
            while up >= 0:
                taken[root + up] = True
                up = self.parent[root + up]
            trees_left -= int(self.is_root[node])
            chosen.append(node)
            removed += benefit[position]
            if removed >= budget:
                break
        return chosen

    def choose_step(self, budget):
        ids, benefit = self.candidates()
        if ids.size == 0:
            return [], None
        candidate_value = self.candidate_values()
        if self.search == "bandit":
            chosen = self._bandit_step(ids, benefit, budget, candidate_value)
            if chosen is not None:
                return chosen, candidate_value
        # exact: every validation row (also where the bandit's rows ran out before its choice was clear)
        cost, square, _ = self.costs(np.arange(self.n_rank), candidate_value)
        return self.select(ids, benefit, _pessimistic(cost[ids], square[ids]), budget), candidate_value

    def _bandit_step(self, ids, benefit, budget, candidate_value):
        """The step's removals from growing samples of the ranking rows; None
        when the rows run out before the choice is clear.

        Each candidate's cost over all ``n`` rows is estimated from the rows
        sampled so far with a confidence interval (``confidence`` standard
        errors, finite-population correction). The choice is clear when the
        chosen candidates' intervals, added in quadrature, are narrower than
        ``DECISION_ACCURACY`` of the model's loss on the ranking rows: then
        the chosen set costs what its estimate says, up to that."""
        n = self.n_rank
        if n < SAMPLED_FROM:
            return None  # too few rows for sampling to save anything: the doubling batches reach n at once
        sampled, batch = 0, max(FIRST_BATCH, n // 100)
        total, square = np.zeros(self.current.shape[0]), np.zeros(self.current.shape[0])
        reached = np.zeros(self.current.shape[0], dtype=np.int64)
        allowed = DECISION_ACCURACY * n * self.rank_loss()
        while sampled + batch < n:
            change, change_square, hits = self.costs(self.permutation[sampled:sampled + batch], candidate_value)
            total += change
            square += change_square
            reached += hits
            sampled += batch
            # one pseudo-row of typical size, so that candidates few sampled rows reached stay uncertain
            seen = reached[ids] > 0
            typical = float(np.median(square[ids][seen] / reached[ids][seen])) if seen.any() else 0.0
            mean = total[ids] / sampled
            second = (square[ids] + typical) / sampled
            variance = np.maximum(second - mean * mean, 0.0)
            with np.errstate(invalid="ignore"):
                radius = n * self.confidence * np.sqrt(variance / sampled * (n - sampled) / (n - 1))
            estimate = _pessimistic(n * mean, n * square[ids] / sampled)
            chosen = self.select(ids, benefit, estimate, budget)
            if chosen and np.sqrt(np.nansum(radius[np.searchsorted(ids, chosen)] ** 2)) <= allowed:
                return chosen
            batch = min(2 * batch, n - sampled)
        return None

    # ----------------------------------------------------------------- step
    def apply(self, chosen, candidate_value) -> None:
        factor = self.factor()
        for node in chosen:
            tree = self.tree_of[node]
            if self.is_root[node] and (self.averaged or np.count_nonzero(self.alive) > 1):
                if not self.averaged:  # the tree's constant moves into the intercept
                    self.base_score[self.tree_output[tree]] += factor[tree] * candidate_value[node, 0]
                self.alive[tree] = False
                continue
            start, stop = self.subtree_span[node]
            self.current[self.preorder_nodes[start:stop]] = node
            self.collapsed[node] = True
            self.value[node] = candidate_value[node]
        self._scores()
        if self.refit:
            self._refit(factor)

    def _refit(self, factor) -> None:
        """Re-fit every leaf by one damped Newton pass on the training rows."""
        fit = self.fit
        kernels.refit_leaves(fit.leaf, self.offset, self.current, self.value, self.tree_output, factor, self.alive,
                             fit.raw, fit.target.codes, fit.target.values, self.loss_kind,
                             float(self.ensemble.link_scale), REG_LAMBDA, REFIT_STEP)
        self._scores()

    def rank_loss(self) -> float:
        """Mean loss of the model on the ranking rows (log-loss or squared error)."""
        name = "log_loss" if self.ensemble.task == "classification" else "mse"
        return metric_value(name, self.ensemble, self.rank.raw, self.rank.target)

    def state(self) -> _State:
        # averaged models never change their values: every state shares them
        value = self.value.copy() if self.newton else self.value
        return _State(self.collapsed.copy(), self.alive.copy(), value, self.base_score.copy())

    def run(self, bound, far_bound, progress, callback, started):
        """Walk the path; return it (a DataFrame) and the state of every point.

        Every step is taken, also those that leave the tolerance: the metric
        of the checking rows is noisy, and a later, re-fitted model can be
        back within it. The walk ends after ``PATIENCE`` models in a row
        that are ``FAR`` times the tolerance worse than the unpruned one."""
        rows, states = [], []

        base_terms = _row_terms(self.metric, self.ensemble, self.check.raw, self.check.target)

        def record():
            terms = _row_terms(self.metric, self.ensemble, self.check.raw, self.check.target)
            metric = metric_value(self.metric, self.ensemble, self.check.raw, self.check.target, terms)
            se = paired_standard_error(self.metric, terms, base_terms, self.check.target)
            row = {"step": len(rows), **self.size(), "metric": metric, "metric_se": se,
                   "elapsed": time.perf_counter() - started}
            rows.append(row)
            states.append(self.state())
            return callback is not None and callback(dict(row)) is True

        stop = record()
        outside = 0
        with tqdm(desc="pruning", unit="step", disable=not progress, leave=False) as bar:
            while not stop and outside < PATIENCE and len(rows) < MAX_STEPS:
                chosen, candidate_value = self.choose_step(max(1.0, STEP_FRACTION * rows[-1]["leaves"]))
                if not chosen:
                    break
                self.apply(chosen, candidate_value)
                stop = record()
                outside = 0 if within(self.metric, rows[-1]["metric"], far_bound) else outside + 1
                bar.update(1)
                bar.set_postfix(leaves=rows[-1]["leaves"], metric=f"{rows[-1]['metric']:.4f}")
        return pd.DataFrame(rows), states

    # --------------------------------------------------------------- models


def build_ensemble(ensemble: Ensemble, state: _State) -> Ensemble:
    """The ensemble of a path point: trees rebuilt with their collapsed nodes
    and values, dead trees dropped (or kept as one-leaf trees of value 0
    where a boosting iteration still has live trees)."""
    per_iteration = _trees_per_iteration(ensemble)
    offset = _node_offsets(ensemble)
    keep_stump = np.zeros(ensemble.n_trees, dtype=bool)
    if ensemble.aggregation == "sum" and per_iteration > 1:
        groups = state.alive.reshape(-1, per_iteration)
        keep_stump = (~groups & groups.any(axis=1, keepdims=True)).ravel()
    trees, kept = [], []
    for index, tree in enumerate(ensemble.trees):
        values = state.value[offset[index]:offset[index + 1]]
        make_leaf = state.collapsed[offset[index]:offset[index + 1]]
        if not state.alive[index]:
            if not keep_stump[index]:
                continue
            values = np.zeros_like(values)
            make_leaf = np.zeros_like(make_leaf)
            make_leaf[0] = True
        make_leaf = make_leaf & (tree.children_left != -1)
        # a collapsed node's value is the search's own, also where the library stored none
        known = np.asarray(tree.has_leaf_value) | make_leaf
        trees.append(rebuild_tree(tree._replace(value=np.array(values), has_leaf_value=known.astype(np.uint8)),
                                  make_leaf))
        kept.append(index)
    base_score = state.base_score.copy()
    if ensemble.aggregation == "sum":
        # Removed trees left their constants in the intercept; move them into the leaves of a kept
        # tree of the same output, so the exported model keeps its own intercept (XGBoost stores it
        # as a rounded probability, scikit-learn in its init estimator).
        outputs = ensemble.tree_output[kept]
        for k in np.flatnonzero(base_score != ensemble.base_score):
            holders = np.flatnonzero(outputs == k)
            if holders.size:
                position = int(holders[0])
                tree = trees[position]
                shift = (base_score[k] - ensemble.base_score[k]) / ensemble.tree_scale[kept[position]]
                trees[position] = tree._replace(value=np.asarray(tree.value) + shift)
                base_score[k] = ensemble.base_score[k]
    return replace(ensemble, trees=tuple(trees), tree_output=ensemble.tree_output[kept],
                   tree_scale=ensemble.tree_scale[kept], base_score=base_score)


def pruned_nodes(ensemble: Ensemble, state: _State) -> dict:
    """{tree: original node ids that became leaves}; a removed tree lists its root."""
    offset = _node_offsets(ensemble)
    out = {}
    for index, tree in enumerate(ensemble.trees):
        if not state.alive[index]:
            out[index] = np.zeros(1, dtype=np.int64)
            continue
        mask = state.collapsed[offset[index]:offset[index + 1]]
        if mask.any():
            out[index] = outermost_nodes(tree, mask)
    return out


def _pessimistic(cost, square):
    """A candidate's cost plus one spread of its rows' changes: with thousands
    of candidates, ranking by the plain sum favours those whose few rows
    happen to agree (the winner's curse); this discounts them."""
    return cost + PESSIMISM * np.sqrt(square)


def _node_offsets(ensemble: Ensemble) -> np.ndarray:
    """Global id of every tree's root (and the total), in the search's numbering: original ids, tree after tree."""
    offset = np.zeros(ensemble.n_trees + 1, dtype=np.int64)
    offset[1:] = np.cumsum([tree.n_nodes for tree in ensemble.trees])
    return offset


def _loss_kind(ensemble: Ensemble) -> int:
    if ensemble.task == "regression":
        return kernels.POISSON if ensemble.link == "exp" else kernels.SQUARED
    return {"sigmoid": kernels.LOGISTIC, "softmax": kernels.SOFTMAX, "identity": kernels.FRACTIONS}[ensemble.link]


def _trees_per_iteration(ensemble: Ensemble) -> int:
    """Trees per boosting iteration when tree t feeds raw column t % K, else 1."""
    k = ensemble.n_outputs
    if k > 1 and ensemble.trees[0].value.shape[1] == 1 and ensemble.n_trees % k == 0 and np.array_equal(
            ensemble.tree_output, np.arange(ensemble.n_trees) % k):
        return k
    return 1
