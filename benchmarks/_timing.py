"""Timing helper shared by the benchmark scripts."""

import time

import numpy as np


def best_of(function, repeat=3):
    """(fastest wall time of ``repeat`` calls, the last call's result)."""
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result
