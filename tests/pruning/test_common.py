"""Input rules shared by the pruning methods."""

import pytest

from bandit_tree_tools import DataError, ParameterError
from bandit_tree_tools.pruning._common import eval_rows


@pytest.mark.parametrize(
    "eval_size, expected",
    [(1, 1), (40, 40), (200, 200), (40.0, 40), (0.5, 100), (1.0, 200), (0.0025, 1), (0.0001, 1), (0.4975, 100)],
)
def test_eval_size_is_rows_or_a_fraction(eval_size, expected):
    assert eval_rows(eval_size, 200) == expected


@pytest.mark.parametrize("eval_size", [0, -3, 0.0, -0.5, 1.5, float("nan"), float("inf"), True, "half", None])
def test_bad_eval_sizes_are_parameter_errors(eval_size):
    with pytest.raises(ParameterError, match="eval_size"):
        eval_rows(eval_size, 200)


def test_more_rows_than_the_validation_set_is_a_data_error():
    with pytest.raises(DataError, match=r"eval_size=201 rows .* only 200 rows"):
        eval_rows(201, 200)
    with pytest.raises(DataError, match=r"eval_size=201 rows"):
        eval_rows(201.0, 200)
