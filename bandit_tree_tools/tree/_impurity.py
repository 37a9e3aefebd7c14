"""Node impurity from counts or sums: the one definition every folder uses.

Classification: Gini index ``1 - sum p_k^2`` or entropy in bits
``-sum p_k log2 p_k`` (scikit-learn's ``entropy``/``log_loss`` criteria report
bits). Regression: the weighted variance ``s2/w - (s/w)^2`` from the sums of
weights ``w``, of ``w*y`` (``s``) and of ``w*y^2`` (``s2``), clipped at 0.

The numba bodies (``class_impurity``, ``variance_from_sums``) are callable
from other kernels; :func:`impurity_of_counts` is the vectorised form for
arrays of nodes.
"""

import numpy as np

from .._kernels_inline import larger
from .._numba_config import kernel
from ..exceptions import ParameterError

GINI = 0
ENTROPY = 1
SQUARED_ERROR = 2

CRITERIA = {"gini": GINI, "entropy": ENTROPY, "log_loss": ENTROPY, "squared_error": SQUARED_ERROR}

_INV_LN2 = 1.0 / np.log(2.0)


def criterion_code(criterion: str) -> int:
    """The kernels' integer code of a criterion name."""
    try:
        return CRITERIA[criterion]
    except (KeyError, TypeError):
        raise ParameterError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}") from None


@kernel
def class_impurity(counts, total, criterion):
    """Gini (``criterion == GINI``) or entropy in bits of class ``counts``
    summing to ``total``; 0 for an empty node."""
    if total <= 0.0:
        return 0.0
    impurity = 1.0 if criterion == GINI else 0.0
    for k in range(counts.shape[0]):
        p = counts[k] / total
        if criterion == GINI:
            impurity -= p * p
        elif p > 0.0:
            impurity -= p * np.log(p) * _INV_LN2
    return larger(impurity, 0.0)


@kernel
def variance_from_sums(weight, total, total_sq):
    """Weighted variance from ``sum w``, ``sum w y`` and ``sum w y^2``."""
    if weight <= 0.0:
        return 0.0
    mean = total / weight
    return larger(total_sq / weight - mean * mean, 0.0)


def impurity_of_counts(counts: np.ndarray, criterion: str) -> tuple[np.ndarray, np.ndarray]:
    """``(weight, impurity)`` per row of ``counts``.

    ``counts`` is ``(n_nodes, n_classes)`` class weights for ``gini`` and
    ``entropy``/``log_loss``, or ``(n_nodes, 3)`` sums ``(w, w*y, w*y^2)`` for
    ``squared_error``.
    """
    code = criterion_code(criterion)
    counts = np.asarray(counts, dtype=np.float64)
    if code == SQUARED_ERROR:
        weight = counts[:, 0]
        safe = np.where(weight > 0, weight, 1.0)
        mean = counts[:, 1] / safe
        variance = np.where(weight > 0, np.maximum(counts[:, 2] / safe - mean * mean, 0.0), 0.0)
        return weight, variance
    weight = counts.sum(axis=1)
    p = counts / np.where(weight > 0, weight, 1.0)[:, None]
    if code == GINI:
        impurity = 1.0 - np.sum(p * p, axis=1)
    else:
        logs = np.log2(np.where(p > 0, p, 1.0))
        impurity = -np.sum(p * logs, axis=1)
    return weight, np.where(weight > 0, np.maximum(impurity, 0.0), 0.0)
