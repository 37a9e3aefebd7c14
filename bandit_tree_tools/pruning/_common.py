"""Input handling shared by the pruning methods."""

import numbers
import time

import numpy as np
import pandas as pd

from .._validation import resolve_n_rows
from ..exceptions import DataError, ParameterError, UnsupportedModelError
from ..tree import Ensemble, collapse
from ._evaluator import IncrementalEvaluator, check_target
from ._result import PruneResult, before_after, metrics_of_raw


# training objectives whose predictions the pruning methods cannot judge (their families, from
# Adapter.objective), and why
UNJUDGED_OBJECTIVES = {
    "quantile": "its predictions estimate a quantile of y, but pruning measures them (R^2, MSE) and re-fits them as "
                "estimates of the mean, so the pruned model would drift towards the mean",
    "ranking": "its scores order the rows of each query, and pruning has no ranking metric: it would judge the scores "
               "as predictions of the relevance labels",
    "survival": "its predictions are hazard ratios, which pruning's metrics cannot compare with survival times",
    "margin": "it predicts margins, not probabilities, so pruning would judge it as a regression of the class labels; "
              "prune a model trained with 'binary:logistic' instead (its probabilities come from the same margins)",
}


def _adapter(ensemble: Ensemble):
    """The adapter of the ensemble's library; None for an ensemble built by
    hand (it records no training parameters)."""
    from ..interop import ADAPTERS

    return ADAPTERS.get(ensemble.source.library)


def to_ensemble(model) -> Ensemble:
    """Import any supported model (an Ensemble passes through unchanged).
    Raises UnsupportedModelError for a model whose training objective the
    pruning methods cannot judge (``UNJUDGED_OBJECTIVES``)."""
    from ..interop import from_model

    ensemble = model if isinstance(model, Ensemble) else from_model(model)
    adapter = _adapter(ensemble)
    name, family = adapter.objective(ensemble) if adapter is not None else ("", ensemble.task)
    if family in UNJUDGED_OBJECTIVES:
        raise UnsupportedModelError(
            f"pruning does not support this {ensemble.source.estimator} trained with the objective {name!r}: "
            f"{UNJUDGED_OBJECTIVES[family]}"
        )
    return ensemble


def monotone_method(ensemble: Ensemble) -> str | None:
    """How the model enforced its monotone constraints, None without any
    (``Adapter.monotone_method``)."""
    adapter = _adapter(ensemble)
    return adapter.monotone_method(ensemble) if adapter is not None else None


def check_weights(weights) -> tuple:
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


def check_no_missing_target(y, name: str) -> None:
    """Refuse NaN / None targets with a message that names the argument."""
    values = np.asarray(getattr(y, "to_numpy", lambda: y)())
    if values.dtype.kind in "fcO":
        missing = np.flatnonzero(pd.isna(values).ravel())
        if missing.size:
            raise DataError(
                f"{name} has {missing.size} missing targets (NaN or None), the first at row {int(missing[0])}; "
                "drop those rows before pruning"
            )


def prepare(model, X, y, weights, *, name: str = "X_val"):
    """Ensemble, validated X, target and evaluator: X is validated here once
    and routed once (by the evaluator); pass the returned X on with
    ``check_input=False``."""
    ensemble = to_ensemble(model)
    X = ensemble.check_X(X)
    if X.shape[0] == 0:
        raise DataError(f"{name} has no rows; pruning needs validation data")
    check_no_missing_target(y, "y" + name[1:])
    target = check_target(ensemble, y, X.shape[0], name="y" + name[1:])
    evaluator = IncrementalEvaluator(ensemble, X, target, check_weights(weights), check_input=False)
    return ensemble, X, target, evaluator


def eval_rows(eval_size, n_rows: int, name: str = "eval_size") -> int:
    """Rows drawn each round out of ``n_rows``: the library's rule for a
    number of rows (``_validation.resolve_n_rows``: an int count, or a
    fraction in (0, 1] rounded to the nearest row, at least 1), also taking a
    whole float > 1 as a count (a form field or the CLI gives one). More rows
    than the validation set has is a DataError that says what to pass."""
    if isinstance(eval_size, float) and eval_size > 1 and eval_size.is_integer():
        eval_size = int(eval_size)
    if isinstance(eval_size, numbers.Integral) and not isinstance(eval_size, (bool, np.bool_)) \
            and eval_size > n_rows:
        raise DataError(
            f"{name}={eval_size} rows are drawn each round, but the validation set has only {n_rows} rows; "
            f"pass more validation rows or a smaller {name} (e.g. a fraction such as 0.5)"
        )
    return resolve_n_rows(eval_size, n_rows, name)


def finish(method, ensemble, X, target, evaluator, weights, started, **parts) -> PruneResult:
    """Build the pruned ensemble from the evaluator's collapsed nodes and the result.

    The before/after metrics come from the rows the evaluator routed (``X``
    is not routed again): the unpruned model's raw scores it kept, and the
    pruned model's from each row's leaf in the rebuilt trees (the same sums
    as ``predict_raw``, so the same bits)."""
    pruned_nodes = evaluator.collapsed_nodes()
    pruned = collapse(ensemble, pruned_nodes) if pruned_nodes else ensemble
    after_raw = pruned._raw_from_leaves(evaluator.pruned_leaves(pruned_nodes))
    metrics = before_after(metrics_of_raw(ensemble, evaluator.initial_raw, target, weights),
                           metrics_of_raw(pruned, after_raw, target, weights))
    return PruneResult(
        method=method,
        ensemble=pruned,
        original=ensemble,
        pruned_nodes=pruned_nodes,
        metrics=metrics,
        elapsed=time.perf_counter() - started,
        **parts,
    )
