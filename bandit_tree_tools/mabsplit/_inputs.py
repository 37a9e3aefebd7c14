"""Checks of the rows and targets given to MABSplit (estimators and
:func:`resplit`): no infinity, finite targets whose squared sums fit in
float64 (numeric columns: ``tree._input.non_numeric_columns``)."""

import numpy as np

from ..exceptions import DataError
from ..tree import one_per_row, refuse_missing

# Impurities sum squared targets over a node's rows in float64; beyond this the sums
# overflow to inf and every split's score is NaN.
_MAX_SQUARED_SUM = 1e300


def refuse_non_finite_targets(y) -> None:
    """Refuse NaN, None and infinity among regression targets with a
    DataError that says which rows (scikit-learn's own check raises a plain
    ValueError)."""
    values = np.asarray(y)  # not np.ndim(y): scikit-learn's checks pass objects that allow only __array__
    if values.ndim == 0:
        return  # None or a scalar: scikit-learn's checks say what is wrong
    values = one_per_row(values, values.shape[0], what="target")
    refuse_missing(values, "y", "targets")
    infinite = np.flatnonzero(np.isinf(values)) if values.dtype.kind == "f" else ()
    if len(infinite):
        raise DataError(f"y has {infinite.size:,} infinite targets, the first at row {infinite[0]}; drop those rows")


def check_target_range(values: np.ndarray) -> None:
    """Refuse regression targets so large that their squared sums overflow float64."""
    if values.size == 0 or not np.all(np.isfinite(values)):
        return  # NaN and infinity are refused by the target's validation with their own message
    largest = float(np.max(np.abs(values)))
    if largest * largest * values.size > _MAX_SQUARED_SUM:
        limit = float(np.sqrt(_MAX_SQUARED_SUM / values.size))
        raise DataError(
            f"y has values up to {largest:.3g} in absolute value; with {values.size} rows their squared sums "
            f"overflow float64 (limit about {limit:.3g}), which makes every split's impurity NaN. Rescale y "
            "(for example y / y.std()) and scale the predictions back"
        )


def refuse_infinite(X: np.ndarray, feature_names=None) -> None:
    """Refuse infinity, naming the columns that hold it (NaN is a missing
    value, which the splits learn where to send)."""
    infinite = np.isinf(X)
    if not infinite.any():
        return
    names = feature_names if feature_names is not None else [f"column {j}" for j in range(X.shape[1])]
    columns = [str(names[j]) for j in np.flatnonzero(infinite.any(axis=0))[:10]]
    raise DataError(
        f"X contains inf (or a value too large for float32) in {columns}; MABSplit compares float32 values: clip "
        "them (for example to np.finfo(np.float32).max), or drop them or set them to NaN, which the splits treat "
        "as missing"
    )
