"""Bandit policies as small strategy objects sharing one interface.

A policy is created with its parameters, started for a number of arms, then
asked alternately which arm to pull (:meth:`Policy.select`) and told the
reward that pull earned (:meth:`Policy.update`); rewards lie in [0, 1].

>>> policy = UCB1(random_state=0).start(3)
>>> arm = policy.select()
>>> policy.update(arm, 1.0)

Every policy keeps the same bookkeeping (``counts_``, ``sums_``, ``means_``,
``t_``), which the paper's Algorithm 2 (line 17) updates as a running mean.
Like the paper, every policy first plays each arm once, in random order
(Algorithm 2, lines 8-9), unless ``explore_untested_first=False``.
"""

import numpy as np

from .._validation import Interval, check_params, check_random_state
from ..exceptions import ParameterError
from ._bounds import bayes_ucb_index, kl_ucb_index, ucb1_index

__all__ = [
    "POLICIES",
    "BayesUCB",
    "EpsilonGreedy",
    "KLUCB",
    "Policy",
    "Softmax",
    "ThompsonSampling",
    "UCB1",
    "WinStayLoseShift",
    "make_policy",
    "play",
]


class Policy:
    """Base class: bookkeeping, the untested-arms-first rule and validation.

    Subclasses set ``name`` and ``reward_family`` ("bounded": rewards anywhere
    in [0, 1]; "bernoulli": the paper feeds them 0/1 rewards) and implement
    ``_choose`` (and ``_observe`` if they keep more state).

    Attributes (after :meth:`start`)
    --------------------------------
    n_arms_ : int
    counts_ : int64 (n_arms,)  pulls per arm
    sums_ : float64 (n_arms,)  sum of rewards per arm
    t_ : int  pulls so far
    """

    name = "policy"
    reward_family = "bounded"
    _params: tuple = ()
    _constraints: dict = {}  # what each of _params accepts (_validation.check_params)

    def __init__(self, *, explore_untested_first: bool = True, random_state=None):
        check_params(
            dict(explore_untested_first=explore_untested_first),
            {"explore_untested_first": ["boolean"]},
            owner=type(self).__name__,
        )
        self.explore_untested_first = explore_untested_first
        self.random_state = random_state

    def _check_params(self) -> None:
        """Refuse a bad parameter at construction (a subclass calls it once
        its parameters are set), not at the first pull that reads it."""
        check_params({name: getattr(self, name) for name in self._params}, self._constraints, owner=type(self).__name__)

    # ------------------------------------------------------------ interface
    def start(self, n_arms: int, random_state=None) -> "Policy":
        """Forget everything and prepare for ``n_arms`` arms. ``random_state``
        overrides the constructor's (the pruning loop passes its own)."""
        n_arms = int(n_arms)
        if n_arms < 1:
            raise ParameterError(f"a bandit needs at least one arm, got n_arms={n_arms}")
        self.n_arms_ = n_arms
        self.counts_ = np.zeros(n_arms, dtype=np.int64)
        self.sums_ = np.zeros(n_arms, dtype=np.float64)
        self.t_ = 0
        self.rng_ = check_random_state(self.random_state if random_state is None else random_state)
        self._reset()
        return self

    def select(self) -> int:
        """The arm to pull next."""
        if not hasattr(self, "counts_"):
            raise RuntimeError(f"call {type(self).__name__}.start(n_arms) before select()")
        if self.explore_untested_first:
            untested = np.flatnonzero(self.counts_ == 0)
            if untested.size:
                return int(untested[self.rng_.integers(untested.size)])
        return int(self._choose())

    def update(self, arm: int, reward: float) -> None:
        """Record that pulling ``arm`` earned ``reward`` (in [0, 1])."""
        arm = int(arm)
        if not 0 <= arm < self.n_arms_:
            raise ParameterError(f"arm {arm} does not exist; arms are 0..{self.n_arms_ - 1}")
        reward = float(reward)
        if not 0.0 <= reward <= 1.0:
            raise ParameterError(f"rewards must lie in [0, 1], got {reward} for arm {arm}; rescale them first")
        self.counts_[arm] += 1
        self.sums_[arm] += reward
        self.t_ += 1
        self._observe(arm, reward)

    @property
    def means_(self) -> np.ndarray:
        """Mean reward per arm, 0 for arms never pulled (Algorithm 2, line 3)."""
        return np.divide(self.sums_, self.counts_, out=np.zeros(self.n_arms_), where=self.counts_ > 0)

    # ------------------------------------------------------------ subclass hooks
    def _reset(self) -> None:
        pass

    def _observe(self, arm: int, reward: float) -> None:
        pass

    def _choose(self) -> int:
        raise NotImplementedError

    # ------------------------------------------------------------ display
    def get_params(self) -> dict:
        names = self._params + ("explore_untested_first", "random_state")
        return {name: getattr(self, name) for name in names}

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.get_params().items() if key in self._params)
        return f"{type(self).__name__}({shown})"


class UCB1(Policy):
    """Pull the arm with the largest ``mean + sqrt(exploration ln t / n)``
    (Auer et al. 2002; ``exploration = 2`` is the original constant)."""

    name = "ucb1"
    _params = ("exploration",)
    _constraints = {"exploration": [Interval(float, 0, None, finite=True)]}

    def __init__(self, *, exploration: float = 2.0, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.exploration = exploration
        self._check_params()

    def index(self) -> np.ndarray:
        return ucb1_index(self.means_, self.counts_, self.t_ + 1, self.exploration)

    def _choose(self):
        return np.argmax(self.index())


class KLUCB(Policy):
    """Pull the arm with the largest KL-UCB index (Garivier and Cappe 2011)."""

    name = "kl_ucb"
    _params = ("c",)
    _constraints = {"c": [Interval(float, 0, None, finite=True)]}

    def __init__(self, *, c: float = 0.0, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.c = c
        self._check_params()

    def index(self) -> np.ndarray:
        return kl_ucb_index(self.means_, self.counts_, self.t_ + 1, self.c)

    def _choose(self):
        return np.argmax(self.index())


class ThompsonSampling(Policy):
    """Beta-Bernoulli Thompson sampling: draw each arm's success rate from
    ``Beta(1 + successes, 1 + failures)`` and pull the largest draw.

    A reward ``r`` in [0, 1] counts as ``r`` successes and ``1 - r``
    failures, which is exact for the 0/1 rewards the paper uses with it and
    keeps the posterior deterministic for fractional ones."""

    name = "thompson"
    reward_family = "bernoulli"

    def posterior(self):
        return 1.0 + self.sums_, 1.0 + (self.counts_ - self.sums_)

    def _choose(self):
        a, b = self.posterior()
        return np.argmax(self.rng_.beta(a, b))


class BayesUCB(Policy):
    """Bayes-UCB (Kaufmann et al. 2012): pull the arm whose Beta posterior
    has the largest ``1 - 1 / (t ln(t)^c)`` quantile."""

    name = "bayes_ucb"
    reward_family = "bernoulli"
    _params = ("c",)
    _constraints = {"c": [Interval(float, 0, None, finite=True)]}

    def __init__(self, *, c: float = 0.0, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.c = c
        self._check_params()

    def index(self) -> np.ndarray:
        return bayes_ucb_index(self.sums_, self.counts_ - self.sums_, self.t_ + 1, self.c)

    def _choose(self):
        return np.argmax(self.index())


class Softmax(Policy):
    """Boltzmann exploration: pull arm ``i`` with probability proportional
    to ``exp(mean_i / temperature)``."""

    name = "softmax"
    _params = ("temperature",)
    _constraints = {"temperature": [Interval(float, 0, None, closed="neither", finite=True)]}

    def __init__(self, *, temperature: float = 0.1, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.temperature = temperature
        self._check_params()

    def probabilities(self) -> np.ndarray:
        logits = self.means_ / self.temperature
        weights = np.exp(logits - logits.max())  # shifted so exp never overflows
        return weights / weights.sum()

    def _choose(self):
        return self.rng_.choice(self.n_arms_, p=self.probabilities())


class EpsilonGreedy(Policy):
    """With probability ``epsilon`` pull a uniformly random arm, otherwise
    the arm with the largest mean (the lowest index among ties)."""

    name = "epsilon_greedy"
    _params = ("epsilon",)
    _constraints = {"epsilon": [Interval(float, 0, 1)]}

    def __init__(self, *, epsilon: float = 0.1, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.epsilon = epsilon
        self._check_params()

    def _choose(self):
        if self.rng_.random() < self.epsilon:
            return self.rng_.integers(self.n_arms_)
        return np.argmax(self.means_)


class WinStayLoseShift(Policy):
    """Win-Stay, Lose-Shift (Robbins 1952): pull the last arm again after a
    win (reward ``> win_threshold``), otherwise a uniformly random other arm.

    The pruning loop sets ``win_threshold`` to the reward of a pull that
    leaves the score unchanged, so a win means "pruning improved the score"."""

    name = "wsls"
    _params = ("win_threshold",)
    _constraints = {"win_threshold": [Interval(float, None, None, finite=True)]}

    def __init__(self, *, win_threshold: float = 0.5, explore_untested_first=True, random_state=None):
        super().__init__(explore_untested_first=explore_untested_first, random_state=random_state)
        self.win_threshold = win_threshold
        self._check_params()

    def _reset(self):
        self.last_arm_ = -1
        self.last_win_ = False

    def _observe(self, arm, reward):
        self.last_arm_ = arm
        self.last_win_ = reward > self.win_threshold

    def _choose(self):
        if self.last_arm_ < 0:
            return self.rng_.integers(self.n_arms_)
        if self.last_win_ or self.n_arms_ == 1:
            return self.last_arm_
        other = self.rng_.integers(self.n_arms_ - 1)
        return other + (other >= self.last_arm_)  # skip the arm that just lost


POLICIES = {
    cls.name: cls for cls in (UCB1, KLUCB, ThompsonSampling, BayesUCB, Softmax, WinStayLoseShift, EpsilonGreedy)
}


def make_policy(policy="ucb1", **params) -> Policy:
    """A policy from its name (see ``POLICIES``) or an existing policy object.

    Raises ParameterError (a ValueError) listing the valid names for an unknown one."""
    if isinstance(policy, Policy):
        if params:
            raise ParameterError(
                "parameters go to the policy's constructor; pass either a name with parameters or an object"
            )
        return policy
    if isinstance(policy, type) and issubclass(policy, Policy):
        return policy(**params)
    if not isinstance(policy, str) or policy.lower() not in POLICIES:
        raise ParameterError(f"unknown policy {policy!r}; valid policies are {sorted(POLICIES)} or a Policy object")
    cls = POLICIES[policy.lower()]
    accepted = cls._params + ("explore_untested_first", "random_state")
    unknown = [name for name in params if name not in accepted]
    if unknown:
        raise ParameterError(
            f"policy {cls.name!r} takes the parameters {', '.join(accepted)}; got {', '.join(map(repr, unknown))}"
        )
    return cls(**params)


def play(policy: Policy, pull, n_arms: int, n_rounds: int, random_state=None) -> Policy:
    """Run ``policy`` for ``n_rounds`` rounds; ``pull(arm)`` returns the reward
    in [0, 1]. Returns the started policy, whose ``counts_``/``means_`` hold
    the outcome."""
    policy = make_policy(policy)
    policy.start(n_arms, random_state=random_state)
    for _ in range(int(n_rounds)):
        arm = policy.select()
        policy.update(arm, pull(arm))
    return policy
