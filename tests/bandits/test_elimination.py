import numpy as np
import pytest

from bandit_tree_tools.bandits import eliminate, finite_population_factor, normal_radius, serfling_factor
from bandit_tree_tools.bandits._elimination import STRICTLY_NEGATIVE


def test_eliminate_drops_arms_whose_lower_bound_exceeds_the_best_upper_bound():
    estimate = np.array([0.0, 0.5, 1.0, 0.25])
    radius = np.array([0.1, 0.1, 0.1, 0.2])
    alive = np.ones(4, dtype=np.bool_)
    left = eliminate(estimate, radius, alive, np.ones(4, dtype=np.bool_), np.inf)
    # best upper bound 0.1: arm 1 (lower 0.4) and arm 2 (0.9) go, arm 3 (lower 0.05) stays
    assert left == 2
    assert alive.tolist() == [True, False, False, True]


def test_ineligible_arms_are_kept_but_do_not_set_the_bound():
    estimate = np.array([0.0, 0.5])
    radius = np.array([0.1, 0.1])
    alive = np.ones(2, dtype=np.bool_)
    assert eliminate(estimate, radius, alive, np.array([False, True]), np.inf) == 2  # bound is arm 1's 0.6
    assert eliminate(estimate, radius, alive, np.array([True, True]), np.inf) == 1
    assert alive.tolist() == [True, False]


def test_the_cap_drops_arms_that_cannot_beat_it_and_strictly_negative_keeps_only_negative_lower_bounds():
    estimate = np.array([0.5, 1.0, 1.2])
    radius = np.full(3, 0.6)
    alive = np.ones(3, dtype=np.bool_)
    # best upper bound 1.1 without a cap: every lower bound (-0.1, 0.4, 0.6) is below it
    assert eliminate(estimate, radius, alive.copy(), alive, np.inf) == 3
    assert eliminate(estimate, radius, alive, alive.copy(), 0.0) == 1  # lower bounds -0.1, 0.4, 0.6 against 0
    assert alive.tolist() == [True, False, False]
    zero = np.ones(2, dtype=np.bool_)
    assert eliminate(np.array([0.0, -1e-300]), np.zeros(2), zero, np.zeros(2, dtype=np.bool_), 0.0) == 2
    assert eliminate(np.array([0.0, -1e-300]), np.zeros(2), zero, np.zeros(2, dtype=np.bool_), STRICTLY_NEGATIVE) == 1
    assert zero.tolist() == [False, True]


def test_nan_arms_are_dropped():
    alive = np.ones(2, dtype=np.bool_)
    assert eliminate(np.array([np.nan, 0.0]), np.array([0.1, 0.1]), alive, alive.copy(), np.inf) == 1
    assert alive.tolist() == [False, True]


@pytest.mark.parametrize(("n", "population", "expected"), [(1, 10, 1.0), (10, 10, 0.0), (4, 7, 0.5), (5, 1, 0.0)])
def test_finite_population_factor(n, population, expected):
    assert finite_population_factor(float(n), population) == pytest.approx(expected)


def test_serfling_factor_and_normal_radius():
    assert serfling_factor(1.0, 10) == 1.0
    assert serfling_factor(6.0, 10) == pytest.approx(0.5)
    assert serfling_factor(20.0, 10) == 0.0
    assert normal_radius(4.0, 3.0) == 6.0
