"""The link table: the numba bodies (``link_row``) against the numpy ones
(``apply_link``), in float64 and in float32."""

import os
import subprocess
import sys

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
        # XGBoost's softmax sums its float32 exponentials in float64, numpy's float32 softmax in float32
        np.testing.assert_array_max_ulp(got.astype(np.float32), expected.astype(np.float32), maxulp=4)
    else:
        np.testing.assert_array_max_ulp(got, expected, maxulp=2)
    # with the C library's exp (LightGBM's and XGBoost's), apply_link gives the numba body's values
    assert np.array_equal(apply_link(name, raw, scale, float32, exp="libm"), got)
    if name != "identity":
        # the other precision is measurably different: each flag selects its arithmetic
        assert not np.array_equal(got, apply_link(name, raw, scale, not float32))


def test_every_link_has_a_distinct_code():
    assert sorted(LINK_CODES.values()) == list(range(len(LINKS)))


def test_an_identity_model_compiles_no_other_link(tmp_path):
    """The pruning kernels of a forest (identity link) type the link as None and
    drop the other links' branches: a fresh process compiles none of them."""
    code = """
import numpy as np
from bandit_tree_tools.pruning import _kernels
from bandit_tree_tools.tree import _links
raw = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
rule = _kernels.RowRule(np.array([1, 0, 1]), np.zeros(3), _links.kernel_link("identity"), 1.0, False, 0, 2)
scores = _kernels.RowScores(raw, np.empty(3, np.int64), np.empty(3))
_kernels._row_outputs(np.arange(3), scores, rule)
prediction = np.empty(3, np.int64)
_kernels._row_classes(raw, rule, prediction)
assert list(scores.prediction) == [1, 0, 0] and list(prediction) == [1, 0, 0], (scores.prediction, prediction)
assert np.allclose(scores.loss, -np.log([0.8, 0.6, 0.5]))
others = (_links.link_row, _links.sigmoid, _links._softmax_row32, _links._softmax_row64)
print([f.py_func.__name__ for f in others if f.signatures])
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
