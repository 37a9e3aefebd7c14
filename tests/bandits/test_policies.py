"""Bookkeeping and decisions of every policy, checked against values
computed by hand (or with scipy for the Beta quantile)."""

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_distribution

from bandit_tree_tools.bandits import (
    KLUCB,
    POLICIES,
    UCB1,
    BayesUCB,
    EpsilonGreedy,
    Softmax,
    ThompsonSampling,
    WinStayLoseShift,
    bayes_ucb_index,
    bernoulli_kl,
    hoeffding_radius,
    kl_ucb_index,
    make_policy,
    play,
    ucb1_index,
)
from bandit_tree_tools.exceptions import ParameterError


def fed(policy, pulls, n_arms=3):
    """A started policy that has seen ``pulls`` [(arm, reward), ...]."""
    policy.start(n_arms, random_state=0)
    for arm, reward in pulls:
        policy.update(arm, reward)
    return policy


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_running_mean_bookkeeping(name):
    policy = fed(make_policy(name), [(0, 1.0), (2, 0.25), (0, 0.5), (2, 0.0)])
    np.testing.assert_array_equal(policy.counts_, [2, 0, 2])
    np.testing.assert_allclose(policy.sums_, [1.5, 0.0, 0.25])
    np.testing.assert_allclose(policy.means_, [0.75, 0.0, 0.125])
    assert policy.t_ == 4


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_arm_is_tried_once_first_in_random_order(name):
    policy = make_policy(name).start(6, random_state=3)
    seen = []
    for _ in range(6):
        arm = policy.select()
        seen.append(arm)
        policy.update(arm, 0.0)
    assert sorted(seen) == list(range(6))
    again = make_policy(name).start(6, random_state=3)
    replay = []
    for _ in range(6):
        arm = again.select()
        replay.append(arm)
        again.update(arm, 0.0)
    assert replay == seen  # same random_state, same order


def test_ucb1_index_by_hand():
    # arm 0: mean 0.5 over 2 pulls; arm 1: mean 0.2 over 1 pull; next round t = 4
    policy = fed(UCB1(), [(0, 0.0), (0, 1.0), (1, 0.2)], n_arms=2)
    expected = [0.5 + math.sqrt(2 * math.log(4) / 2), 0.2 + math.sqrt(2 * math.log(4) / 1)]
    np.testing.assert_allclose(policy.index(), expected)
    assert policy.select() == 1
    assert ucb1_index([0.3], [0], 5)[0] == np.inf


def test_kl_ucb_index_is_the_largest_q_within_the_budget():
    means, counts, t = np.array([0.2, 0.5, 0.9, 0.0]), np.array([3, 10, 4, 2]), 17
    index = kl_ucb_index(means, counts, t)
    grid = np.linspace(0, 1, 200001)
    for mean, n, value in zip(means, counts, index):
        inside = grid[(grid >= mean) & (n * bernoulli_kl(mean, grid) <= math.log(t))]
        assert value == pytest.approx(inside.max(), abs=1e-5)
    policy = fed(KLUCB(), [(0, 0.2), (1, 0.5), (1, 0.5)], n_arms=2)
    np.testing.assert_allclose(policy.index(), kl_ucb_index([0.2, 0.5], [1, 2], 4))


def test_bernoulli_kl_by_hand():
    assert bernoulli_kl(0.5, 0.25) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75))
    assert bernoulli_kl(0.3, 0.3) == pytest.approx(0.0)


def test_bayes_ucb_index_is_the_beta_quantile():
    policy = fed(BayesUCB(), [(0, 1.0), (0, 0.0), (1, 1.0), (1, 1.0), (1, 0.0)], n_arms=2)
    t = 6
    expected = [beta_distribution.ppf(1 - 1 / t, 1 + 1, 1 + 1), beta_distribution.ppf(1 - 1 / t, 1 + 2, 1 + 1)]
    np.testing.assert_allclose(policy.index(), expected, rtol=1e-9)
    np.testing.assert_allclose(
        bayes_ucb_index([3.0], [1.0], 10, horizon_power=1.0),
        beta_distribution.ppf(1 - 1 / (10 * math.log(10)), 4, 2),
    )


def test_thompson_draws_from_the_beta_posterior():
    pulls = [(0, 1.0), (0, 1.0), (1, 0.0), (2, 1.0), (2, 0.0)]
    policy = ThompsonSampling(explore_untested_first=False)
    policy.start(3, random_state=np.random.default_rng(11))
    for arm, reward in pulls:
        policy.update(arm, reward)
    a, b = policy.posterior()
    np.testing.assert_array_equal(a, [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(b, [1.0, 2.0, 2.0])
    twin = np.random.default_rng(11)
    for _ in range(20):
        assert policy.select() == int(np.argmax(twin.beta(a, b)))


def test_softmax_probabilities_by_hand():
    policy = fed(Softmax(temperature=0.1), [(0, 0.1), (1, 0.3), (2, 0.3)])
    weights = np.exp(np.array([0.1, 0.3, 0.3]) / 0.1)
    np.testing.assert_allclose(policy.probabilities(), weights / weights.sum())
    draws = [policy.select() for _ in range(2000)]
    share = np.bincount(draws, minlength=3) / 2000
    np.testing.assert_allclose(share, weights / weights.sum(), atol=0.04)


def test_epsilon_greedy_extremes():
    greedy = fed(EpsilonGreedy(epsilon=0.0), [(0, 0.1), (1, 0.7), (2, 0.7)])
    assert {greedy.select() for _ in range(50)} == {1}  # lowest index among tied best
    uniform = fed(EpsilonGreedy(epsilon=1.0), [(0, 0.1), (1, 0.7), (2, 0.2)])
    assert {uniform.select() for _ in range(200)} == {0, 1, 2}


def test_win_stay_lose_shift():
    policy = fed(WinStayLoseShift(win_threshold=0.4), [(0, 0.0), (1, 0.0), (2, 0.9)])
    assert [policy.select() for _ in range(5)] == [2] * 5  # a win: stay
    policy.update(2, 0.4)  # not above the threshold: a loss
    shifted = {policy.select() for _ in range(100)}
    assert shifted == {0, 1}  # any other arm, never the loser
    policy.update(0, 0.41)
    assert policy.select() == 0


def test_play_finds_the_best_arm():
    means = np.array([0.2, 0.8, 0.5])
    rng = np.random.default_rng(0)
    policy = play("ucb1", lambda arm: float(rng.random() < means[arm]), n_arms=3, n_rounds=600, random_state=0)
    assert int(np.argmax(policy.counts_)) == 1
    assert policy.counts_.sum() == 600


def test_hoeffding_radius_by_hand():
    assert hoeffding_radius(50, 0.05) == pytest.approx(math.sqrt(math.log(40) / 100))
    assert hoeffding_radius(0, 0.05) == np.inf
    with pytest.raises(ParameterError, match="delta"):
        hoeffding_radius(3, 1.5)


def test_bad_use():
    with pytest.raises(ParameterError, match=r"unknown policy 'ucb2'; valid policies are \['bayes_ucb'"):
        make_policy("ucb2")
    with pytest.raises(RuntimeError, match="start"):
        UCB1().select()
    policy = UCB1().start(2)
    with pytest.raises(ParameterError, match=r"rewards must lie in \[0, 1\]"):
        policy.update(0, 1.5)
    with pytest.raises(ParameterError, match="arm 5 does not exist"):
        policy.update(5, 0.5)
    with pytest.raises(ParameterError, match="at least one arm"):
        UCB1().start(0)
    assert repr(Softmax(temperature=0.5)) == "Softmax(temperature=0.5)"
    assert make_policy(policy) is policy


@pytest.mark.parametrize(
    "policy, message",
    [
        # these were taken, and epsilon and temperature refused only at the first pull that read them
        (lambda: EpsilonGreedy(epsilon=2.0), r"epsilon of EpsilonGreedy must be a float in \[0, 1\], got 2.0"),
        (lambda: Softmax(temperature=0), r"temperature of Softmax must be a finite float in \(0, inf\), got 0"),
        (lambda: UCB1(exploration=-1.0), r"exploration of UCB1 must be a finite float in \[0, inf\]"),
        (lambda: KLUCB(c=float("nan")), r"c of KLUCB must be a finite float"),
        (lambda: BayesUCB(c="a"), r"c of BayesUCB must be a finite float"),
        (lambda: WinStayLoseShift(win_threshold=float("inf")), r"win_threshold of WinStayLoseShift must be"),
        (lambda: ThompsonSampling(explore_untested_first="yes"), r"explore_untested_first of ThompsonSampling"),
        # a name the policy does not take raised the constructor's TypeError
        (lambda: make_policy("ucb1", c=1.0), r"policy 'ucb1' takes the parameters exploration, .*; got 'c'"),
    ],
)
def test_parameters_are_checked_at_construction(policy, message):
    with pytest.raises(ParameterError, match=message):
        policy()
