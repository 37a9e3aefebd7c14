import numpy as np
import pytest

from bandit_tree_tools import ParameterError
from bandit_tree_tools.tree._impurity import ENTROPY, GINI, class_impurity, impurity_of_counts, variance_from_sums


def test_class_impurity_matches_definitions():
    counts = np.array([3.0, 1.0, 0.0])
    p = counts / 4
    assert class_impurity(counts, 4.0, GINI) == pytest.approx(1 - np.sum(p**2))
    assert class_impurity(counts, 4.0, ENTROPY) == pytest.approx(-(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))
    assert class_impurity(np.zeros(2), 0.0, GINI) == 0.0


def test_vectorised_form_equals_kernel_and_variance():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(20, 3)).astype(float)
    counts[0] = 0.0
    for criterion, code in (("gini", GINI), ("entropy", ENTROPY), ("log_loss", ENTROPY)):
        weight, impurity = impurity_of_counts(counts, criterion)
        expected = [class_impurity(c, c.sum(), code) for c in counts]
        np.testing.assert_allclose(impurity, expected, atol=1e-12)
        np.testing.assert_array_equal(weight, counts.sum(axis=1))
    y = rng.normal(size=30)
    sums = np.array([[30.0, y.sum(), (y * y).sum()], [0.0, 0.0, 0.0]])
    weight, variance = impurity_of_counts(sums, "squared_error")
    assert variance[0] == pytest.approx(np.var(y)) and variance[1] == 0.0
    assert variance_from_sums(30.0, y.sum(), (y * y).sum()) == pytest.approx(np.var(y))
    with pytest.raises(ParameterError, match="criterion must be one of"):
        impurity_of_counts(sums, "mae")
