"""Sorting inside kernels, without numba's quicksort.

``np.sort``, ``np.argsort`` and ``array.sort()`` inside a kernel compile numba's
quicksort (half a dozen functions, 0.8-0.9 s in every fresh environment). Where
any correct sort gives the same result (distinct keys; finite floats, whose only
equal values that differ are -0.0 and 0.0), these few lines of heap sort (and
insertion sort for a dozen values) do the same work. Not stable: do not use them
where ties between distinguishable items would decide an outcome.
"""

import numpy as np

from ._numba_config import helper


@helper
def _sift_down(keys, items, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and keys[child] < keys[child + 1]:
            child += 1
        if not keys[root] < keys[child]:
            return
        keys[root], keys[child] = keys[child], keys[root]
        items[root], items[child] = items[child], items[root]
        root = child


@helper
def sort_by_key(keys, items, n):
    """Sort ``keys[:n]`` (distinct) in increasing order, ``items[:n]`` along with them."""
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(keys, items, root, n)
    for end in range(n - 1, 0, -1):
        keys[0], keys[end] = keys[end], keys[0]
        items[0], items[end] = items[end], items[0]
        _sift_down(keys, items, np.int64(0), end)


@helper
def _sift_down_values(values, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and values[child] < values[child + 1]:
            child += 1
        if not values[root] < values[child]:
            return
        values[root], values[child] = values[child], values[root]
        root = child


@helper
def sort_values(values):
    """Sort ``values`` (no NaN; infinities sort to the ends) in place, in increasing order."""
    n = values.shape[0]
    if n <= 16:  # insertion sort: a dozen values
        for i in range(1, n):
            v = values[i]
            j = i - 1
            while j >= 0 and values[j] > v:
                values[j + 1] = values[j]
                j -= 1
            values[j + 1] = v
        return
    for root in range(n // 2 - 1, -1, -1):
        _sift_down_values(values, root, n)
    for end in range(n - 1, 0, -1):
        values[0], values[end] = values[end], values[0]
        _sift_down_values(values, np.int64(0), end)
