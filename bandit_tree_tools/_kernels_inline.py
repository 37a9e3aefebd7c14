"""New arrays inside kernels: :func:`empty` and :func:`zeros`.

numba compiles ``np.empty`` and ``np.zeros`` as functions of their own, one
for each shape type and dtype they meet, again in every process with an
empty cache (about 35 ms each; ``np.zeros`` is three: its own, ``np.empty``'s
and its zero fill). Over the first calls of all capabilities that was 133
compilations and 4 s. These two emit numba's own allocation code (the one
``np.empty`` calls) inside the kernel that calls them instead, so they
compile nothing of their own.

Kernels call them as they would numpy, with the dtype positional:
``empty(shape, dtype)``, ``shape`` an integer or a tuple of integers, ``dtype``
a numpy scalar type or an array's ``.dtype``. Python code keeps numpy's
functions: these exist only inside kernels. They rest on numba's array
allocation helpers (``numba.np.arrayobj``), which are not public API;
``tests/test_kernels_alloc.py`` checks them against numpy.
"""

from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.extending import intrinsic
from numba.np.arrayobj import _empty_nd_impl, _parse_shape


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
