"""Successive elimination for best-arm identification: the confidence radius
and the elimination step, as numba functions other kernels call.

The arms' values are minimised (MABSplit: impurity change of a split;
BanditPAM: loss of a medoid choice). After each batch of samples every
surviving arm has an estimate and a confidence radius; the best upper bound
``u* = min(cap, min over eligible survivors of estimate + radius)`` is
computed and every survivor whose lower bound ``estimate - radius`` exceeds
``u*`` is dropped (Even-Dar, Mannor and Mansour 2006, "Action elimination and
stopping conditions for the multi-armed bandit and reinforcement learning
problems", section 3). ``cap`` drops arms that cannot beat a known value:
MABSplit uses it to drop splits that cannot reduce impurity.

Samples are drawn without replacement from a finite population of ``N``
rows, so radii shrink by a finite-population factor and vanish once every row
was seen. Two factors are in use, both here:

- :func:`finite_population_factor` ``(N - n) / (N - 1)``, the exact factor of
  the variance of a mean of ``n`` draws without replacement (MABSplit's
  delta-method variances);
- :func:`serfling_factor` ``1 - (n - 1) / N``, Serfling's (1974) factor in
  the Hoeffding-type bound for sampling without replacement (BanditPAM).
"""

import numpy as np

from .._kernels_inline import larger
from .._numba_config import kernel

__all__ = ["eliminate", "finite_population_factor", "normal_radius", "serfling_factor", "STRICTLY_NEGATIVE"]

# The largest float below zero: with ``cap=STRICTLY_NEGATIVE`` an arm survives
# only if its lower bound is < 0 (``lower > cap`` is ``lower >= 0`` for floats).
STRICTLY_NEGATIVE = -np.nextafter(0.0, 1.0)


@kernel
def normal_radius(variance, z):
    """Half-width ``z * sqrt(variance)`` of a normal-approximation interval
    around an estimate whose variance is ``variance``."""
    return z * np.sqrt(variance)


@kernel
def finite_population_factor(n_sampled, population):
    """``(N - n) / (N - 1)``, clipped to [0, 1): the factor by which drawing
    ``n`` of ``N`` rows without replacement shrinks the variance of a mean
    (0 when ``N <= 1`` or every row was drawn)."""
    if population <= 1:
        return 0.0
    factor = (population - n_sampled) / (population - 1.0)
    if factor < 0.0:
        return 0.0
    return factor


@kernel
def serfling_factor(n_sampled, population):
    """``max(1 - (n - 1) / N, 0)``: Serfling's finite-population factor of
    the squared Hoeffding radius after ``n`` of ``N`` draws without
    replacement."""
    return larger(1.0 - (n_sampled - 1.0) / population, 0.0)


@kernel
def eliminate(estimate, radius, alive, eligible, cap):
    """One successive-elimination step over flat arrays of arms (smaller is
    better). ``alive`` is updated in place; returns the number of arms left.

    The best upper bound is taken over arms that are ``alive`` and
    ``eligible`` (an arm may be ineligible to win yet, for example a split
    whose children look too small on the sample, and still be kept) and
    capped at ``cap``; every alive arm whose lower bound exceeds it is
    dropped, and so is an arm whose bounds are NaN (its value is undefined,
    it cannot be shown to be the best)."""
    best_upper = cap
    for a in range(estimate.shape[0]):
        if alive[a] and eligible[a]:
            upper = estimate[a] + radius[a]
            if upper < best_upper:
                best_upper = upper
    n_alive = 0
    for a in range(estimate.shape[0]):
        if alive[a]:
            if not estimate[a] - radius[a] <= best_upper:
                alive[a] = False
            else:
                n_alive += 1
    return n_alive
