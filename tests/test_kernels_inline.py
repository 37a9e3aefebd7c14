"""The kernels' allocations (``_kernels_alloc``) against numpy's own."""

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

from bandit_tree_tools._kernels_alloc import empty, zeros


@numba.njit
def _allocate(n, m, like):
    # garbage first, so that zeros must clear what an earlier array left in the memory it reuses
    for _ in range(3):
        scratch = empty((n, m), np.float64)
        scratch[:] = 7.0
    return (
        zeros((n, m), np.float64),
        zeros(n, np.int32),
        zeros((n, m, 2), np.bool_),
        zeros(3, np.uint8),
        empty(n, like.dtype),
        empty((m, n), np.int64),
        empty(0, np.float32),
    )


def test_allocations_have_numpys_shapes_dtypes_and_layout():
    like = np.zeros((4, 2), dtype=np.float32)
    arrays = _allocate(5, 3, like)
    expected = [
        np.zeros((5, 3)),
        np.zeros(5, np.int32),
        np.zeros((5, 3, 2), np.bool_),
        np.zeros(3, np.uint8),
        np.empty(5, np.float32),
        np.empty((3, 5), np.int64),
        np.empty(0, np.float32),
    ]
    for got, want in zip(arrays, expected, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        assert got.flags.c_contiguous and got.flags.writeable
    for got, want in zip(arrays[:4], expected[:4], strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_negative_dimension_raises_valueerror_as_numpy_does():
    with pytest.raises(ValueError, match="negative dimensions not allowed"):
        _allocate(-1, 3, np.zeros((1, 1)))
    with pytest.raises(ValueError, match="negative dimensions"):
        np.zeros(-1)


def test_a_shape_or_dtype_numpy_would_refuse_fails_typing():
    @numba.njit
    def array_as_dtype(n, values):
        return empty(n, values)

    @numba.njit
    def float_shape(n):
        return zeros(n * 0.5, np.float64)

    with pytest.raises(TypingError, match="empty"):
        array_as_dtype(3, np.zeros(2))
    with pytest.raises(TypingError, match="zeros"):
        float_shape(3)
