"""numpy's and Python's functions that kernels call, emitted inline.

numba compiles ``np.empty``, ``np.zeros``, ``np.full`` and the builtins
``min`` and ``max`` as functions of their own, one for each combination of
argument types they meet, again in every process with an empty cache (about
20-35 ms each; ``np.zeros`` is three: its own, ``np.empty``'s and its zero
fill). Over the first calls of all capabilities that was 178 compilations
and 5 s. The stand-ins here emit numba's own code for them (the allocation
``np.empty`` calls, the comparison ``min`` makes) inside the kernel that
calls them, so they compile nothing of their own:

- ``empty(shape, dtype)``, ``zeros(shape, dtype)``, ``full(shape, value,
  dtype)``: numpy's, with the dtype positional and never left out; ``shape``
  an integer or a tuple of integers, ``dtype`` a numpy scalar type or an
  array's ``.dtype``;
- ``smaller(a, b)``, ``larger(a, b)``: ``min(a, b)`` and ``max(a, b)`` of two
  numbers, Python's rule included (the first unless the second is smaller,
  or larger: ``smaller(1.0, nan)`` is 1.0).

Python code keeps numpy's and Python's functions: these exist only inside
kernels. They rest on numba's code generators (``numba.np.arrayobj``,
``numba.cpython.builtins``), which are not public API;
``tests/test_kernels_inline.py`` checks them against numpy and Python.
"""

import operator

import numba
import numpy as np
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.cpython.builtins import do_minmax
from numba.extending import intrinsic
from numba.np.arrayobj import _empty_nd_impl, _parse_shape, store_item


def _array_type(shape, dtype, name):
    nb_dtype, ndim = parse_dtype(dtype), parse_shape(shape)
    if nb_dtype is None or ndim is None:
        raise TypingError(
            f"{name}(shape, dtype) takes an integer or a tuple of integers and a numpy dtype, got {shape} and {dtype}"
        )
    return types.Array(nb_dtype, ndim, "C")


def _allocate(context, builder, signature, args):
    # the same checks as np.empty: negative dimensions and sizes that overflow raise ValueError
    shapes = _parse_shape(context, builder, signature.args[0], args[0])
    return _empty_nd_impl(context, builder, signature.return_type, shapes)


@intrinsic
def empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)``, inside a kernel."""

    def codegen(context, builder, signature, args):
        return _allocate(context, builder, signature, args)._getvalue()

    return _array_type(shape, dtype, "empty")(shape, dtype), codegen


@intrinsic
def zeros(typingctx, shape, dtype):
    """``np.zeros(shape, dtype)``, inside a kernel."""

    def codegen(context, builder, signature, args):
        array = _allocate(context, builder, signature, args)
        cgutils.memset(builder, array.data, builder.mul(array.itemsize, array.nitems), 0)
        return array._getvalue()

    return _array_type(shape, dtype, "zeros")(shape, dtype), codegen


@intrinsic
def full(typingctx, shape, value, dtype):
    """``np.full(shape, value, dtype)``, inside a kernel."""
    array_type = _array_type(shape, dtype, "full")
    if not isinstance(value, (types.Number, types.Boolean)):
        raise TypingError(f"full(shape, value, dtype) takes a number as its value, got {value}")

    def codegen(context, builder, signature, args):
        array = _allocate(context, builder, signature, args)
        fill = context.cast(builder, args[1], signature.args[1], array_type.dtype)
        with cgutils.for_range(builder, array.nitems) as loop:
            store_item(context, builder, array_type, fill, builder.gep(array.data, [loop.index]))
        return array._getvalue()

    return array_type(shape, value, dtype), codegen


def _two_numbers(typingctx, a, b, name):
    both = typingctx.unify_types(a, b)
    if not all(isinstance(t, (types.Number, types.Boolean)) for t in (a, b)) or both is None:
        raise TypingError(f"{name}(a, b) takes two numbers, got {a} and {b}")
    return both(a, b)


@intrinsic
def smaller(typingctx, a, b):
    """``min(a, b)``, inside a kernel."""

    def codegen(context, builder, signature, args):
        return do_minmax(context, builder, list(signature.args), list(args), operator.lt)

    return _two_numbers(typingctx, a, b, "smaller"), codegen


@intrinsic
def larger(typingctx, a, b):
    """``max(a, b)``, inside a kernel."""

    def codegen(context, builder, signature, args):
        return do_minmax(context, builder, list(signature.args), list(args), operator.gt)

    return _two_numbers(typingctx, a, b, "larger"), codegen


if numba.config.DISABLE_JIT:  # kernels run as Python (a debugging session): numpy's and Python's own

    def empty(shape, dtype):  # noqa: F811
        return np.empty(shape, dtype)

    def zeros(shape, dtype):  # noqa: F811
        return np.zeros(shape, dtype)

    def full(shape, value, dtype):  # noqa: F811
        return np.full(shape, value, dtype)

    smaller, larger = min, max  # noqa: F811
