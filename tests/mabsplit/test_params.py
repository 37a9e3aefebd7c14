"""The one rule for max_features and for fractions of rows."""

import numpy as np
import pytest

from bandit_tree_tools._validation import resolve_max_features, resolve_n_rows
from bandit_tree_tools.exceptions import ParameterError


@pytest.mark.parametrize(
    ("max_features", "expected"),
    [(None, 10), ("sqrt", 3), ("log2", 3), (4, 4), (10, 10), (0.25, 2), (1.0, 10), (0.01, 1), (np.int64(2), 2)],
)
def test_max_features_follows_scikit_learn(max_features, expected):
    assert resolve_max_features(max_features, 10) == expected


@pytest.mark.parametrize("bad", [0, 11, 1.5, 0.0, "auto", True])
def test_bad_max_features_is_refused(bad):
    with pytest.raises(ParameterError, match="max_features"):
        resolve_max_features(bad, 10)


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (7, 7), (0.5, 5), (0.25, 2), (0.35, 4), (0.01, 1), (1.0, 10)])
def test_rows_from_a_count_or_a_fraction(value, expected):
    assert resolve_n_rows(value, 10, "max_samples") == expected


@pytest.mark.parametrize("bad", [0, 11, 0.0, 1.01, "half"])
def test_bad_rows_are_refused(bad):
    with pytest.raises(ParameterError, match="max_samples"):
        resolve_n_rows(bad, 10, "max_samples")
