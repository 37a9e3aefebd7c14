"""Input handling shared by the pruning methods."""

import numbers
import time

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..exceptions import DataError, ParameterError
from ..tree import Ensemble, collapse
from ._evaluator import IncrementalEvaluator, check_target
from ._result import PruneResult, model_metrics


def to_ensemble(model) -> Ensemble:
    """Import any supported model (an Ensemble passes through unchanged)."""
    if isinstance(model, Ensemble):
        return model
    from ..interop import from_model

    return from_model(model)


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
        raise ValueError(
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
    """Ensemble, validated X, target and evaluator."""
    ensemble = to_ensemble(model)
    X = ensemble.check_X(X)
    if X.shape[0] == 0:
        raise DataError(f"{name} has no rows; pruning needs validation data")
    check_no_missing_target(y, "y" + name[1:])
    target = check_target(ensemble, y, X.shape[0], name="y" + name[1:])
    evaluator = IncrementalEvaluator(ensemble, X, target, check_weights(weights))
    return ensemble, X, target, evaluator


def rng_from(random_state) -> np.random.Generator:
    return np.random.default_rng(check_random_state(random_state).randint(0, 2**31 - 1))


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def finish(method, ensemble, X, target, evaluator, weights, started, **parts) -> PruneResult:
    """Build the pruned ensemble from the evaluator's collapsed nodes and the result."""
    pruned_nodes = evaluator.collapsed_nodes()
    pruned = collapse(ensemble, pruned_nodes) if pruned_nodes else ensemble
    metrics = pd.DataFrame(
        {"before": model_metrics(ensemble, X, target, weights), "after": model_metrics(pruned, X, target, weights)}
    ).T
    return PruneResult(
        method=method,
        ensemble=pruned,
        original=ensemble,
        pruned_nodes=pruned_nodes,
        metrics=metrics,
        elapsed=time.perf_counter() - started,
        **parts,
    )
