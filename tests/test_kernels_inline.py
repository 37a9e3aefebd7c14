"""The kernels' stand-ins (``_kernels_inline``) against numpy's and Python's own, and their use."""

import ast
import itertools
import math
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

from bandit_tree_tools._kernels_inline import empty, full, larger, smaller, zeros


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


@numba.njit
def _filled(n):
    return (
        full(n, np.inf, np.float64),
        full((n, 2), -1, np.int64),
        full(n, -2.5, np.float32),
        full(3, True, np.bool_),
        full(n, 7, np.uint8),
        full(0, 1.5, np.float64),
    )


def test_full_fills_as_numpy_does():
    expected = [
        np.full(4, np.inf),
        np.full((4, 2), -1, np.int64),
        np.full(4, -2.5, np.float32),
        np.full(3, True),
        np.full(4, 7, np.uint8),
        np.full(0, 1.5),
    ]
    for got, want in zip(_filled(4), expected, strict=True):
        assert got.dtype == want.dtype and got.flags.c_contiguous
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

    @numba.njit
    def array_as_value(n, values):
        return full(n, values, np.float64)

    with pytest.raises(TypingError, match="takes a number"):
        array_as_value(3, np.zeros(2))

    @numba.njit
    def smaller_of_arrays(a, b):
        return smaller(a, b)

    with pytest.raises(TypingError, match="two numbers"):
        smaller_of_arrays(np.zeros(2), np.zeros(2))


@numba.njit
def _min_max(a, b):
    return smaller(a, b), larger(a, b)


def _same(got, want):
    return (got == want or (math.isnan(got) and math.isnan(want))) and math.copysign(1, got) == math.copysign(1, want)


def test_smaller_and_larger_follow_pythons_min_and_max():
    # Python's rule: the first unless the second compares smaller (larger); NaN and signed zeros tell
    floats = [1.0, -2.0, math.nan, math.inf, -math.inf, 0.0, -0.0]
    for a, b in itertools.product(floats, floats):
        low, high = _min_max(a, b)
        assert _same(low, min(a, b)) and _same(high, max(a, b)), (a, b)
    for a, b in itertools.product([3, -5, 0, 2**62], repeat=2):
        assert _min_max(a, b) == (min(a, b), max(a, b))
    assert _min_max(np.int32(2), 1.5) == (1.5, 2.0)  # unified as numba's min and max unify


PACKAGE = Path(__file__).resolve().parents[1] / "bandit_tree_tools"
JITTED = {"kernel", "helper", "njit", "jit", "overload"}
COMPILED_APART = {"empty", "zeros", "full", "ones"}  # numpy's, compiled per shape and dtype


def _decorator_name(decorator):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return getattr(target, "attr", getattr(target, "id", ""))


def _compiled_apart(path):
    """Calls inside a module's kernels that numba compiles as functions of
    their own: ``np.empty``/``zeros``/``full``/``ones``, ``min``, ``max``."""
    found = []

    def visit(node, in_kernel):
        for child in ast.iter_child_nodes(node):
            inside = in_kernel or (
                isinstance(child, ast.FunctionDef) and any(_decorator_name(d) in JITTED for d in child.decorator_list)
            )
            if inside and isinstance(child, ast.Call):
                function = child.func
                if isinstance(function, ast.Name) and function.id in ("min", "max"):
                    found.append(f"{path.name}:{child.lineno} {function.id}()")
                if (
                    isinstance(function, ast.Attribute)
                    and getattr(function.value, "id", "") == "np"
                    and function.attr in COMPILED_APART
                ):
                    found.append(f"{path.name}:{child.lineno} np.{function.attr}()")
            visit(child, inside)

    visit(ast.parse(path.read_text()), False)
    return found


def test_kernels_call_the_inline_stand_ins():
    # each of these would compile one more function per argument types in every fresh environment
    found = [call for path in sorted(PACKAGE.rglob("*.py")) for call in _compiled_apart(path)]
    assert found == [], f"call _kernels_inline's stand-ins instead: {found}"
