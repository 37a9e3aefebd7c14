"""Reductions inside kernels, without numpy's.

``values.sum()``, ``values.max()``, ``values.any()`` and ``np.flatnonzero``
inside a kernel compile numba's implementations of them in every fresh
environment (0.1-0.5 s each, with the helpers they call); these loops compile
in a few hundredths of a second and cache. Each gives numpy's result inside a
kernel; ``array_sum`` adds in index order, as numba's ``sum`` does, whatever
its caller's ``fastmath`` (a helper never takes its caller's: ``_numba_config``).
"""

import numpy as np

from ._kernels_inline import empty, larger
from ._numba_config import helper


@helper
def array_sum(values):
    """``values.sum()`` of a 1-D array of numbers, added in index order."""
    result = values.dtype.type(0)
    for k in range(values.shape[0]):
        result += values[k]
    return result


@helper
def array_max(values):
    """``values.max()`` of a non-empty 1-D array of integers."""
    result = values[0]
    for k in range(1, values.shape[0]):
        result = larger(result, values[k])
    return result


@helper
def array_any(values):
    """``values.any()`` of a 1-D array."""
    for k in range(values.shape[0]):
        if values[k]:
            return True
    return False


@helper
def flatnonzero(values):
    """``np.flatnonzero(values)`` of a 1-D array: int64 positions, increasing."""
    count = 0
    for k in range(values.shape[0]):
        if values[k] != 0:
            count += 1
    out = empty(count, np.int64)
    count = 0
    for k in range(values.shape[0]):
        if values[k] != 0:
            out[count] = k
            count += 1
    return out
