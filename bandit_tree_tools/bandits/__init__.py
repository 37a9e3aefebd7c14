"""Multi-armed bandit policies and confidence bounds: the one place the bandit
maths lives. Policies are small strategy objects usable on their own
(:func:`play`), by the pruning loop, or by any other algorithm; the numba
functions of successive elimination (:mod:`._elimination`: confidence radius,
finite-population factors, the elimination step) are called by the kernels of
MABSplit and BanditPAM."""

from ._bounds import bayes_ucb_index, bernoulli_kl, hoeffding_radius, kl_ucb_index, ucb1_index
from ._elimination import eliminate, finite_population_factor, normal_radius, serfling_factor
from ._policies import (
    KLUCB,
    POLICIES,
    UCB1,
    BayesUCB,
    EpsilonGreedy,
    Policy,
    Softmax,
    ThompsonSampling,
    WinStayLoseShift,
    make_policy,
    play,
)

__all__ = [
    "KLUCB",
    "POLICIES",
    "UCB1",
    "BayesUCB",
    "EpsilonGreedy",
    "Policy",
    "Softmax",
    "ThompsonSampling",
    "WinStayLoseShift",
    "bayes_ucb_index",
    "bernoulli_kl",
    "eliminate",
    "finite_population_factor",
    "hoeffding_radius",
    "kl_ucb_index",
    "make_policy",
    "normal_radius",
    "play",
    "serfling_factor",
    "ucb1_index",
]
