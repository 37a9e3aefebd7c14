"""The one random generator of the numba kernels (MABSplit, TSDT).

xoshiro256** (Blackman and Vigna 2021, "Scrambled linear pseudorandom number
generators") with its state in an explicit ``uint64[4]`` array: no global
generator, so results depend only on the seed, not on the thread or process
that runs a kernel. :func:`kernel_rng` makes the state from a ``random_state``
by the library's one rule (:func:`bandit_tree_tools._validation.check_random_state`).
"""

import math

import numpy as np

from .._kernels_inline import smaller
from .._numba_config import helper, kernel
from .._validation import check_random_state

__all__ = ["kernel_rng", "next_u64", "normal", "randint", "shuffle", "uniform"]


def kernel_rng(random_state) -> np.ndarray:
    """A fresh kernel state (``uint64[4]``, never all zero) drawn from
    ``random_state``: an int gives the same state every time."""
    words = check_random_state(random_state).integers(1, 2**62, size=4)
    return words.astype(np.uint64)


@helper
def _rotl(x, k):
    return (x << k) | (x >> (np.uint64(64) - k))


@helper
def next_u64(rng):
    """The next 64 random bits; advances ``rng`` in place."""
    s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
    result = _rotl(s1 * np.uint64(5), np.uint64(7)) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, np.uint64(45))
    rng[0], rng[1], rng[2], rng[3] = s0, s1, s2, s3
    return result


@kernel
def uniform(rng):
    """Uniform in [0, 1) with 53 random bits."""
    return np.float64(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def randint(rng, n):
    """Uniform integer in [0, n)."""
    j = np.int64(uniform(rng) * n)
    return smaller(j, n - 1)


@kernel
def normal(rng):
    """Standard Normal draw (Box-Muller)."""
    u1 = 1.0 - uniform(rng)  # in (0, 1], so the log is finite
    u2 = uniform(rng)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@kernel
def shuffle(order, rng):
    """Fisher-Yates shuffle of ``order`` in place."""
    for i in range(order.shape[0] - 1, 0, -1):
        j = np.int64(uniform(rng) * (i + 1))
        if j > i:
            j = i
        order[i], order[j] = order[j], order[i]
