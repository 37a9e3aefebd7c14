"""The validated inputs every pruning method starts from: the model
imported (and refused where pruning cannot judge its objective), the
targets as class codes or values, and how the model kept its monotone
constraints."""

from dataclasses import dataclass

import numpy as np

from ..exceptions import DataError, ParameterError, UnsupportedModelError
from ..tree import Ensemble, class_codes, one_per_row, refuse_missing


@dataclass(frozen=True)
class Target:
    """Validated targets: class codes (classification) or values."""

    codes: np.ndarray  # int64 (n,), -1 for regression
    values: np.ndarray  # float64 (n,), 0 for classification
    n_classes: int  # 0 for regression
    positive: int  # class whose F1 counts; -1 for macro-F1 (and regression)
    variance: float  # Var(y) for regression (1.0 if constant), 1.0 otherwise


def check_target(ensemble: Ensemble, y, n_rows: int, name: str = "y_val") -> Target:
    if ensemble.task == "regression" and ensemble.n_outputs != 1:  # before y's shape, which follows from it
        raise UnsupportedModelError(
            f"multi-output models are not supported by pruning: this {ensemble.source.library} "
            f"{ensemble.source.estimator} has {ensemble.n_outputs} outputs (targets or quantiles); prune a "
            "single-output model per target"
        )
    y = one_per_row(y, n_rows, name, rows="X" + name[1:], what="target")  # y_val: X_val
    if n_rows == 0:
        raise DataError(f"{name} is empty; pruning needs validation rows")
    if ensemble.task == "regression":
        refuse_missing(y, name, "targets")
        try:
            values = y.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{name} must be numeric for a regression model, got dtype {y.dtype}") from None
        if not np.all(np.isfinite(values)):
            raise DataError(f"{name} contains infinite values; drop those rows")
        if ensemble.link == "sigmoid" and (values.min() < 0.0 or values.max() > 1.0):
            raise DataError(
                f"{name} holds values outside [0, 1] (from {values.min():g} to {values.max():g}), but the model "
                "predicts probabilities through the sigmoid (XGBoost reg:logistic, LightGBM cross_entropy); pass "
                "the targets it was trained on, in [0, 1]"
            )
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            variance = float(np.var(values))
        if not np.isfinite(variance):
            raise DataError(
                f"{name} holds values too large to measure squared errors in float64 (up to "
                f"{np.abs(values).max():g}: their variance overflows); rescale the targets (and train the model on "
                "the rescaled ones), for example in units of 1e100"
            )
        return Target(np.full(n_rows, -1, np.int64), values, 0, -1, variance if variance > 0 else 1.0)
    classes = ensemble.classes_
    codes = class_codes(y, classes, name)
    positive = 1 if len(classes) == 2 else -1
    return Target(codes, np.zeros(n_rows), len(classes), positive, 1.0)


# training objectives whose predictions the pruning methods cannot judge (their families, from
# Adapter.objective), and why
UNJUDGED_OBJECTIVES = {
    "quantile": "its predictions estimate a quantile of y, but pruning measures them (R^2, MSE) and re-fits them as "
    "estimates of the mean, so the pruned model would drift towards the mean",
    "ranking": "its scores order the rows of each query, and pruning has no ranking metric: it would judge the scores "
    "as predictions of the relevance labels",
    "survival": "its predictions are hazard ratios, which pruning's metrics cannot compare with survival times",
    "margin": "it predicts margins (raw scores), not probabilities, so pruning would judge it as a regression of "
    "the class labels; prune a model trained with a probability objective instead ('binary:logistic' in XGBoost; "
    "'binary' or 'multiclass' in LightGBM, where a classifier's custom objective gives raw scores too)",
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


def check_training_pair(X_train, y_train) -> None:
    """Training rows come as ``X_train`` and ``y_train`` together, or not at all."""
    if (X_train is None) != (y_train is None):
        raise ParameterError(
            "pass X_train and y_train together (the rows to rank removals and re-fit leaves on), or neither"
        )


def callback_stops(answer) -> bool:
    """A callback's answer asks to stop when it is True, numpy's True included
    (``np.bool_`` from a comparison); None, False and any other value go on."""
    return isinstance(answer, (bool, np.bool_)) and bool(answer)
