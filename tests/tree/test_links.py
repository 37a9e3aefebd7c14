"""The link table: the numba bodies (``link_row``) against the numpy ones
(``apply_link``), in float64 and in float32."""

import numpy as np
import pytest

from bandit_tree_tools.tree._links import LINK_CODES, LINKS, apply_link, kernel_link, link_row


@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("name", sorted(LINKS))
@pytest.mark.parametrize("scale", [1.0, 0.7])
def test_numba_and_numpy_links_agree(name, float32, scale):
    rng = np.random.default_rng(0)
    n_outputs = 3 if name == "softmax" else 1
    raw = rng.normal(scale=4.0, size=(500, n_outputs))
    expected = apply_link(name, raw, scale, float32)
    got = np.empty_like(raw)
    for row in range(raw.shape[0]):
        link_row(raw[row], LINK_CODES[name], scale, float32, got[row])
    # the code the pruning kernels receive (None for the identity) computes the same values
    by_kernel_code = np.empty_like(raw)
    for row in range(raw.shape[0]):
        link_row(raw[row], kernel_link(name), scale, float32, by_kernel_code[row])
    assert np.array_equal(by_kernel_code, got)
    assert (kernel_link(name) is None) == (name == "identity")
    if float32:
        assert np.all(got.astype(np.float32).astype(np.float64) == got)  # float32 arithmetic
        np.testing.assert_array_max_ulp(got.astype(np.float32), expected.astype(np.float32), maxulp=2)
    else:
        np.testing.assert_array_max_ulp(got, expected, maxulp=2)
    if name != "identity":
        # the other precision is measurably different: each flag selects its arithmetic
        assert not np.array_equal(got, apply_link(name, raw, scale, not float32))


def test_every_link_has_a_distinct_code():
    assert sorted(LINK_CODES.values()) == list(range(len(LINKS)))
