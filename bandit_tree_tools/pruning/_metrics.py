"""The metrics every pruning result reports, from raw scores through the
model's link: one definition for the evaluator's pulls, the before/after
tables and the engine's checks."""

import numpy as np
import pandas as pd

from ..exceptions import ParameterError
from ..tree import Ensemble
from ..tree._ensemble import LABEL_RULE_CODES
from ..tree._links import kernel_link
from . import _kernels

__all__ = ["COUNTS", "SCORINGS", "before_after", "check_weights", "metrics_of_raw", "model_metrics", "row_outputs"]

SCORINGS = ("score", "accuracy")  # what the baselines (cost-complexity, reduced-error) choose their candidate by


def check_weights(weights) -> tuple:
    """The paper's score weights (accuracy, F1, log-loss) as three finite floats."""
    try:
        if isinstance(weights, (str, bytes)):
            raise TypeError
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ParameterError(
            f"weights must be three numbers (accuracy, f1, log_loss), like the paper's (1.0, 2.5, 1.0); got {weights!r}"
        ) from None
    if len(weights) != 3 or not all(np.isfinite(weights)):
        raise ParameterError(
            f"weights must be three finite numbers (accuracy, f1, log_loss), like the paper's (1.0, 2.5, 1.0); "
            f"got {weights!r}"
        )
    return weights


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
    rule = _kernels.RowRule(
        target.codes,
        target.values,
        kernel_link(ensemble.link),
        float(ensemble.link_scale),
        bool(ensemble.accumulate_float32),
        LABEL_RULE_CODES[ensemble.label_rule],
        int(target.n_classes),
    )
    if not with_loss and target.n_classes:
        _kernels._row_classes(raw, rule, prediction)
        return prediction, None
    loss = np.empty(n_rows, dtype=np.float64)
    _kernels._row_outputs(np.arange(n_rows, dtype=np.int64), _kernels.RowScores(raw, prediction, loss), rule)
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
