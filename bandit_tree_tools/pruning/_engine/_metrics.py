"""The metrics of :func:`bandit_tree_tools.prune` and what "within the
tolerance" means: the metric table, the checks of the tolerance, metric and
validation rows, per-row terms, paired standard errors and the smoothing of
the path."""

import math
import numbers
import threading

import numpy as np
import pandas as pd

from ...exceptions import DataError, ParameterError
from ...tree import Ensemble
from .._inputs import Target
from .._metrics import row_outputs

# name -> (task, higher is better, tolerance is relative)
METRICS = {
    "balanced_accuracy": ("classification", True, False),
    "accuracy": ("classification", True, False),
    "roc_auc": ("classification", True, False),
    "log_loss": ("classification", False, True),
    "r2": ("regression", True, False),
    "mse": ("regression", False, True),
}
MARGIN = 2.0  # prune's default margin: a model is within the tolerance by this many standard errors of its difference


def _finite_non_negative(value, message: str) -> float:
    """``value`` as a float; ParameterError ``message`` (and what was given)
    unless it is a finite real number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ParameterError(f"{message}, got {value!r}")
    return float(value)


# metrics that lie in [0, 1], whose absolute tolerance of 1 or more would let any model through
UNIT_RANGE_METRICS = ("balanced_accuracy", "accuracy", "roc_auc")


def _check_tolerance(tolerance, metric: str) -> float:
    tolerance = _finite_non_negative(
        tolerance, "tolerance must be a finite number >= 0 (0.005 is half a point of accuracy)"
    )
    if metric in UNIT_RANGE_METRICS and tolerance >= 1.0:
        raise ParameterError(
            f"tolerance={tolerance:g} spans the whole range of {metric} ([0, 1]): every model would be within it. "
            f"The tolerance of {metric} is absolute: 0.05 is five points, 0.005 half a point"
        )
    return tolerance


def _check_margin(margin) -> float:
    return _finite_non_negative(
        margin,
        f"margin must be a finite number >= 0 of standard errors ({MARGIN:g} by "
        "default; 0 holds the validation metric itself within the tolerance)",
    )


def _check_metric(metric, ensemble: Ensemble) -> str:
    if metric is None:
        return "balanced_accuracy" if ensemble.task == "classification" else "r2"
    if metric not in METRICS:
        raise ParameterError(f"unknown metric {metric!r}; known metrics: {', '.join(METRICS)}")
    task = METRICS[metric][0]
    if task != ensemble.task:
        fitting = [name for name, spec in METRICS.items() if spec[0] == ensemble.task]
        raise ParameterError(
            f"metric {metric!r} is for {task} models, but this is a {ensemble.task} model; "
            f"use one of {', '.join(fitting)}"
        )
    return metric


def _check_validation(metric: str, target: Target, tolerance: float, checks: list, classes=None) -> None:
    """Refuse validation rows that cannot measure the metric at the tolerance
    on every part of them that checks it (``checks``: the row numbers of each
    part: every row, or each half); ``classes``: the model's labels, by code,
    for the messages."""
    n_rows = target.codes.shape[0]
    halves = len(checks) > 1
    if target.n_classes:
        counts = np.bincount(target.codes, minlength=target.n_classes)
        if np.count_nonzero(counts) < 2:
            present = np.flatnonzero(counts)
            named = present.tolist() if classes is None else np.asarray(classes)[present].tolist()
            raise DataError(
                f"y_val holds one class only ({named} of the model's {target.n_classes}); the validation "
                "rows need at least two classes"
            )
    elif n_rows < 4:
        raise DataError(f"y_val needs at least 4 rows to measure R^2 or MSE, got {n_rows}")
    for rows in checks:
        if metric == "r2":
            with np.errstate(under="ignore"):
                spread = float(np.var(target.values[rows]))
            if not spread > 0:
                raise DataError(
                    "R^2 is undefined on these validation rows: y_val has variance 0 in float64 on "
                    f"{'one half of them (each half checks a walk)' if halves else 'them'} "
                    "(constant targets, or values so small that their squares underflow); pass metric='mse', "
                    "or varied (or rescaled) targets"
                )
        if tolerance == 0 or METRICS[metric][2]:
            continue
        counts = np.bincount(target.codes[rows], minlength=target.n_classes) if target.n_classes else None
        if metric == "accuracy":
            needed = math.ceil(1.0 / tolerance)
            have = rows.shape[0]
        elif metric == "balanced_accuracy":
            present = int(np.count_nonzero(counts))
            needed = math.ceil(1.0 / (present * tolerance))  # rows of the rarest class
            have = int(counts[counts > 0].min())
        elif metric == "roc_auc":
            needed = math.ceil(1.0 / tolerance)  # positive x negative pairs
            have = int(np.sort(counts)[-1] * np.sort(counts[counts > 0])[0])
        else:
            continue
        if have < needed:
            what = {
                "accuracy": "rows",
                "balanced_accuracy": "rows of the rarest class",
                "roc_auc": "pairs of rows from different classes",
            }[metric]
            where = "each half of them checks a walk, and there " if halves else ""
            more = "at least twice as many" if halves else "more"
            raise DataError(
                f"too few validation rows to measure {metric} at tolerance {tolerance}: {where}one row moves "
                f"the metric by more than the tolerance; {'each half' if halves else 'it'} needs at least "
                f"{needed} {what}, got {have}, so pass {more} or a larger tolerance"
            )


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


class CrossFitted:
    """The metric of a walk ranked on every validation row, estimated from
    two walks that each ranked on one half of the rows and checked on the
    other. Called with a model's leaves, it returns (metric, standard error):
    the mean over the two walks of the change from their unpruned model at
    their smallest model of at least that many leaves, added to
    ``baseline``, with the standard error of that mean (the halves are
    disjoint); None below the smallest model either walk reached (it ended
    far outside the tolerance there).

    A walk whose choices read its checking rows measures them too well; a
    walk whose checking rows are half of them measures with a wide error.
    Each half walk stands for the walk on every row at the same size, which
    ranks on twice the rows: the estimate is that of cross-validation.

    The half walks may still be running: ``add`` takes each of their path's
    rows as it is measured and ``end`` their end, and a call waits until
    both have gone below the size asked for or ended, so that it answers as
    it would once they are done."""

    def __init__(self, baseline: float):
        self.baseline = baseline
        self._points = [[], []]  # per half walk: (leaves, metric, standard error) of each model of its path
        self._ended = [False, False]
        self._changed = threading.Condition()

    def add(self, walk: int, row: dict) -> None:
        with self._changed:
            self._points[walk].append((row["leaves"], row["metric"], row["metric_se"]))
            self._changed.notify_all()

    def end(self, walk: int) -> None:
        with self._changed:
            self._ended[walk] = True
            self._changed.notify_all()

    def __call__(self, leaves: int):
        with self._changed:  # a walk's sizes fall step by step: past ``leaves``, its answer is final
            self._changed.wait_for(
                lambda: all(
                    ended or (points and points[-1][0] < leaves) for points, ended in zip(self._points, self._ended)
                )
            )
            changes, errors = [], []
            for points in self._points:
                if not points or leaves < points[-1][0]:  # below its last model, its smallest
                    return None
                sizes = np.array([size for size, _, _ in points])
                row = np.flatnonzero(sizes >= leaves)[-1]
                changes.append(points[row][1] - points[0][1])
                errors.append(points[row][2])
            return self.baseline + float(np.mean(changes)), float(np.hypot(*errors) / 2)


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
    if metric == "roc_auc":
        return None
    # the per-row predictions and losses every pruning method reports (pruning._kernels)
    wants_loss = target.n_classes == 0 or metric == "log_loss"
    predicted, loss = row_outputs(ensemble, raw, target, with_loss=wants_loss)
    if wants_loss:
        return loss
    return (predicted == target.codes).astype(np.float64)


def _class_moments(codes, values, n_classes):
    """Per class: (rows, sum of ``values``, sum of their squares), each sum
    taken in the rows' order (``np.bincount``; a mask per class cost 14 ms
    at 500,000 rows)."""
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    return counts, np.bincount(codes, values, n_classes), np.bincount(codes, values * values, n_classes)


def paired_standard_error(metric: str, terms, base_terms, target: Target) -> float:
    """Standard error of the metric's difference from the unpruned model on
    the same rows (0 for ROC AUC, whose terms do not separate by row)."""
    if terms is None:
        return 0.0
    difference = terms - base_terms
    if metric == "balanced_accuracy":
        counts, total, square = _class_moments(target.codes, difference, target.n_classes)
        present = counts > 0
        counts, mean, square = counts[present], total[present] / counts[present], square[present] / counts[present]
        variance = np.sum(np.maximum(square - mean * mean, 0.0) / counts) / counts.size**2
    else:
        variance = np.var(difference) / difference.size
    if metric == "r2":
        variance /= target.variance**2
    return float(np.sqrt(variance))


def smoothed_metric(path: pd.DataFrame, row: int) -> float:
    """The mean metric of a path point and its neighbours on the path: where
    the metric falls off (the smallest models), one lucky point among many
    would otherwise be the one chosen."""
    values = path["metric"].to_numpy()
    return float(np.mean(values[max(row - 1, 0) : row + 2]))


def within_margin(metric: str, value: float, standard_error: float, bound: float, margin: float = MARGIN) -> bool:
    """Within the bound by ``margin`` standard errors of the paired difference."""
    sign = 1.0 if METRICS[metric][1] else -1.0
    return within(metric, value - sign * margin * standard_error, bound)


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
        counts, hits, _ = _class_moments(target.codes, terms, target.n_classes)
        present = counts > 0
        return float(np.mean(hits[present] / counts[present]))
    mean = float(np.mean(terms))
    return 1.0 - mean / target.variance if metric == "r2" else mean
