"""Confidence bounds and indices of the classic stochastic bandit policies.

Plain numpy functions over arrays of arms, so any algorithm of the library
(pruning, MABSplit, BanditPAM) can use them without a policy object.
"""

import numpy as np
from scipy.special import betaincinv

from .._kernels_inline import empty, larger, smaller
from .._numba_config import helper, kernel
from ..exceptions import ParameterError

__all__ = [
    "bayes_ucb_index",
    "bernoulli_kl",
    "hoeffding_radius",
    "kl_ucb_index",
    "ucb1_index",
]

_KL_EPS = 1e-12


def hoeffding_radius(n_samples, delta: float, value_range: float = 1.0) -> np.ndarray:
    """Half-width of the two-sided Hoeffding confidence interval.

    With probability at least ``1 - delta`` the mean of ``n_samples`` i.i.d.
    values in an interval of length ``value_range`` lies within this radius of
    its expectation: ``value_range * sqrt(log(2 / delta) / (2 n))``.
    ``n_samples == 0`` gives ``inf``.
    """
    if not 0.0 < delta < 1.0:
        raise ParameterError(f"delta must be in (0, 1), got {delta}")
    n = np.asarray(n_samples, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(n > 0, value_range * np.sqrt(np.log(2.0 / delta) / (2.0 * np.maximum(n, 1.0))), np.inf)


def ucb1_index(means, counts, t: int, exploration: float = 2.0) -> np.ndarray:
    """UCB1 index (Auer, Cesa-Bianchi and Fischer 2002):
    ``mean + sqrt(exploration * ln(t) / n)``, ``inf`` for arms never pulled."""
    means = np.asarray(means, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    bonus = np.sqrt(exploration * np.log(max(t, 1)) / np.maximum(counts, 1.0))
    return np.where(counts > 0, means + bonus, np.inf)


def bernoulli_kl(p, q) -> np.ndarray:
    """Kullback-Leibler divergence between Bernoulli(p) and Bernoulli(q),
    with both clipped into ``[1e-12, 1 - 1e-12]`` so the result is finite."""
    p = np.clip(np.asarray(p, dtype=np.float64), _KL_EPS, 1.0 - _KL_EPS)
    q = np.clip(np.asarray(q, dtype=np.float64), _KL_EPS, 1.0 - _KL_EPS)
    return p * np.log(p / q) + (1.0 - p) * np.log((1.0 - p) / (1.0 - q))


def kl_ucb_index(means, counts, t: int, c: float = 0.0, tolerance: float = 1e-9) -> np.ndarray:
    """KL-UCB index (Garivier and Cappe 2011) for rewards in [0, 1]:
    the largest ``q >= mean`` with ``n * kl(mean, q) <= ln(t) + c ln(ln(t))``,
    found by bisection; ``inf`` for arms never pulled. ``c = 0`` is the
    authors' recommendation in practice."""
    means = np.ascontiguousarray(np.clip(np.asarray(means, dtype=np.float64), 0.0, 1.0))
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    log_t = np.log(max(t, 1))
    budget = log_t + (c * np.log(log_t) if c and log_t > 1.0 else 0.0)
    return _kl_ucb(means, counts, float(budget), float(tolerance))


@helper
def _kl(p, q):
    p = smaller(larger(p, _KL_EPS), 1.0 - _KL_EPS)
    q = smaller(larger(q, _KL_EPS), 1.0 - _KL_EPS)
    return p * np.log(p / q) + (1.0 - p) * np.log((1.0 - p) / (1.0 - q))


@kernel
def _kl_ucb(means, counts, budget, tolerance):
    index = empty(means.shape[0], np.float64)
    for arm in range(means.shape[0]):
        if counts[arm] <= 0:
            index[arm] = np.inf
            continue
        level = budget / counts[arm]
        # kl(mean, q) increases with q on [mean, 1]: keep kl(low) <= level < kl(high)
        # (or high = 1 when even q = 1 is within the budget)
        low, high = means[arm], 1.0
        while high - low > tolerance:
            middle = 0.5 * (low + high)
            if _kl(means[arm], middle) <= level:
                low = middle
            else:
                high = middle
        index[arm] = low
    return index


def bayes_ucb_index(successes, failures, t: int, horizon_power: float = 0.0, prior=(1.0, 1.0)) -> np.ndarray:
    """Bayes-UCB index (Kaufmann, Cappe and Garivier 2012) with a Beta prior:
    the ``1 - 1 / (t * ln(t)^c)`` quantile of ``Beta(prior_a + successes,
    prior_b + failures)``. ``c = 0`` is what the authors use in practice."""
    successes = np.asarray(successes, dtype=np.float64)
    failures = np.asarray(failures, dtype=np.float64)
    t = max(int(t), 1)
    scale = t * (np.log(t) ** horizon_power if horizon_power and t > 1 else 1.0)
    level = 1.0 - 1.0 / max(scale, 1.0)
    if level <= 0.0:  # t = 1: the quantile 0 carries no information; use the median
        level = 0.5
    return betaincinv(prior[0] + successes, prior[1] + failures, level)
