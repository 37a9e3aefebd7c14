"""The kernels' stand-ins (``_kernels_inline``, ``_kernels_reduce``) against numpy's and Python's own, and their use."""

import ast
import itertools
import math
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

from bandit_tree_tools._kernels_inline import empty, full, larger, smaller, zeros
from bandit_tree_tools._kernels_reduce import array_any, array_max, array_sum, flatnonzero


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


@numba.njit(fastmath=True)  # a fastmath caller: array_sum keeps its order (and rounding) regardless
def _reductions(values):
    return array_sum(values), array_max(values), array_any(values), flatnonzero(values)


@numba.njit
def _empty_reductions(values):
    return array_sum(values), array_any(values), flatnonzero(values)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_])
def test_reductions_give_numpys_results(dtype):
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 1000):
        values = (rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, n)).astype(dtype)
        if dtype != np.bool_:
            values[rng.random(n) < 0.3] = 0
        got_sum, got_max, got_any, got_nonzero = _reductions(values)
        if values.dtype.kind == "f":
            in_order = values.dtype.type(0)
            for value in values:  # numba's values.sum() adds in index order
                in_order += value
            assert got_sum == in_order
        elif values.dtype.kind in "iu":  # in 64 bits, as numpy's
            assert got_sum == values.sum()
        assert got_max == values.max() and got_any == values.any()
        np.testing.assert_array_equal(got_nonzero, np.flatnonzero(values))
        assert got_nonzero.dtype == np.int64
    empty_sum, empty_any, empty_nonzero = _empty_reductions(np.zeros(0))
    assert empty_sum == 0.0 and not empty_any and empty_nonzero.shape == (0,)


PACKAGE = Path(__file__).resolve().parents[1] / "bandit_tree_tools"
JITTED = {"kernel", "helper", "njit", "jit", "overload"}
COMPILED_APART = {"empty", "zeros", "full", "ones", "flatnonzero"}  # numpy's, compiled per shape and dtype
REDUCTIONS = {"sum", "max", "min", "any", "all", "mean"}  # array methods: numpy's reductions, compiled apart


def _decorator_name(decorator):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return getattr(target, "attr", getattr(target, "id", ""))


def _compiled_apart(path):
    """Calls inside a module's kernels that numba compiles as functions of
    their own: ``np.empty``/``zeros``/``full``/``ones``/``flatnonzero``,
    ``min``, ``max``, an array's ``.sum()`` and the other reductions; and
    arrays copied by slice assignment (``a[:] = b``), which compiles numba's
    shape check and its message's string functions."""
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
                if isinstance(function, ast.Attribute) and function.attr in REDUCTIONS and not child.args:
                    found.append(f"{path.name}:{child.lineno} .{function.attr}()")
            if inside and isinstance(child, ast.Assign) and isinstance(child.value, ast.Name):
                target = child.targets[0]
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Slice):
                    found.append(f"{path.name}:{child.lineno} {ast.unparse(child)}")
            visit(child, inside)

    visit(ast.parse(path.read_text()), False)
    return found


def test_kernels_call_the_inline_stand_ins():
    # each of these would compile one more function per argument types in every fresh environment
    found = [call for path in sorted(PACKAGE.rglob("*.py")) for call in _compiled_apart(path)]
    assert found == [], f"call the stand-ins of _kernels_inline or _kernels_reduce (or copy in a loop): {found}"
