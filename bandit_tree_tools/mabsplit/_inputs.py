"""Checks of the rows and targets given to MABSplit (estimators and
:func:`resplit`): numeric columns, finite values, targets whose squared sums
fit in float64."""

import numpy as np

from ..exceptions import DataError


def non_numeric_columns(X) -> list:
    """Names of the pandas columns that are not numbers or booleans."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return []
    bad = []
    for column, dtype in zip(X.columns, X.dtypes):
        kind = getattr(dtype, "kind", "O")
        if str(dtype) == "category" or kind not in "biuf":
            bad.append(column)
    return bad


# Impurities sum squared targets over a node's rows in float64; beyond this the sums
# overflow to inf and every split's score is NaN.
_MAX_SQUARED_SUM = 1e300


def check_target_range(values: np.ndarray) -> None:
    """Refuse regression targets so large that their squared sums overflow float64."""
    if values.size == 0 or not np.all(np.isfinite(values)):
        return  # NaN and infinity are refused by the input validation with their own message
    largest = float(np.max(np.abs(values)))
    if largest * largest * values.size > _MAX_SQUARED_SUM:
        limit = float(np.sqrt(_MAX_SQUARED_SUM / values.size))
        raise DataError(
            f"y has values up to {largest:.3g} in absolute value; with {values.size} rows their squared sums "
            f"overflow float64 (limit about {limit:.3g}), which makes every split's impurity NaN. Rescale y "
            "(for example y / y.std()) and scale the predictions back"
        )


def check_finite(X: np.ndarray, feature_names=None) -> None:
    """Refuse NaN and infinity, naming the columns that hold them."""
    finite = np.isfinite(X)
    if finite.all():
        return
    names = feature_names if feature_names is not None else [f"column {j}" for j in range(X.shape[1])]
    has_nan = np.isnan(X).any(axis=0)
    has_inf = (~finite & ~np.isnan(X)).any(axis=0)
    parts = []
    if has_nan.any():
        parts.append(f"NaN in {[str(names[j]) for j in np.flatnonzero(has_nan)[:10]]}")
    if has_inf.any():
        parts.append(
            f"inf (or a value too large for float32) in {[str(names[j]) for j in np.flatnonzero(has_inf)[:10]]}"
        )
    raise DataError(
        f"X contains {' and '.join(parts)}; MABSplit estimators have no missing-value handling: impute the "
        "missing values first (for example with sklearn.impute.SimpleImputer) and clip or drop infinite ones"
    )
