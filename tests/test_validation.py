import numpy as np
import pytest

from bandit_tree_tools import ParameterError
from bandit_tree_tools._validation import Interval, Options, check_params, check_random_state, resolve_n_jobs, seed_from


@pytest.mark.parametrize(
    "value, ok",
    [(1, True), (0, False), (True, False), (2.0, False), (None, True), ("auto", True), ("x", False)],
)
def test_check_params_reports_name_value_and_rule(value, ok):
    constraints = {"n": [Interval(int, 1, None), None, Options({"auto"})]}
    if ok:
        check_params({"n": value}, constraints)
    else:
        with pytest.raises(ParameterError, match=r"n of f must be an int in \[1, inf\] or None or one of .auto."):
            check_params({"n": value}, constraints, owner="f")


def test_interval_open_ends_and_nan():
    open_unit = Interval(float, 0.0, 1.0, closed="neither")
    assert open_unit.accepts(0.5) and not open_unit.accepts(0.0) and not open_unit.accepts(1.0)
    assert not open_unit.accepts(float("nan"))


def test_random_state_rule_is_one_rule():
    assert check_random_state(3).integers(1000) == check_random_state(3).integers(1000)
    generator = np.random.default_rng(0)
    assert check_random_state(generator) is generator
    legacy_a, legacy_b = np.random.RandomState(5), np.random.RandomState(5)
    assert seed_from(legacy_a) == seed_from(legacy_b)
    for bad in (-1, 1.5, "0", True, 2**32, 2**70):
        with pytest.raises(ParameterError, match=r"random_state must be None, an int in \[0, 2\*\*32 - 1\]"):
            check_random_state(bad)


def test_n_jobs_follows_joblib():
    assert resolve_n_jobs(None) == 1 and resolve_n_jobs(2) == 2 and resolve_n_jobs(-1) >= 1
    with pytest.raises(ParameterError, match="n_jobs must be"):
        resolve_n_jobs(0)
