"""The numba threading layer of every ``parallel=True`` kernel, chosen in one place.

Imported by each module that defines parallel kernels, before any of them is
compiled or run: numba fixes its threading layer when the first parallel
kernel launches, and the layers differ in what they survive:

- GNU OpenMP (numba's usual choice on Linux) does not survive ``fork()``: a
  child that runs a parallel kernel after its parent did aborts, which breaks
  ``multiprocessing`` pools (fork is the default start method on Linux) and
  joblib's ``multiprocessing`` backend;
- ``workqueue`` survives fork but aborts the process when two Python threads
  launch parallel kernels at once (the panels run their loops in a background
  thread while the notebook goes on predicting);
- ``tbb`` survives both, and measured as fast as OpenMP on our prediction
  kernels (``benchmarks/bench_threading.py``).

So the layer is ``tbb``. The ``tbb`` wheel from PyPI puts ``libtbb`` in
``sys.prefix/lib``, which the dynamic loader of a virtual environment does not
search; it is loaded here by path first, so numba's own TBB extension finds it.
Without a loadable TBB, numba keeps its own choice (and fork after a parallel
prediction stays unsafe under GNU OpenMP: use the "spawn" or "forkserver"
start method). A layer set by the user, through ``NUMBA_THREADING_LAYER`` or
``numba.config.THREADING_LAYER`` before importing this package, is kept.
"""

import ctypes
import os
import sys

import numba

_TBB_NAMES = {"linux": ("libtbb.so.12",), "darwin": ("libtbb.12.dylib",), "win32": ("tbb12.dll",)}


def _load_tbb() -> bool:
    """Whether numba's TBB threading layer can be imported, loading the TBB
    library of the ``tbb`` wheel by path where the loader would not find it."""
    try:
        from numba.np.ufunc import tbbpool  # noqa: F401

        return True
    except ImportError:
        pass
    platform = "linux" if sys.platform.startswith("linux") else sys.platform
    folders = [os.path.join(prefix, "lib") for prefix in {sys.prefix, sys.base_prefix}]
    folders += [os.path.join(prefix, "Library", "bin") for prefix in {sys.prefix, sys.base_prefix}]
    for folder in folders:
        for name in _TBB_NAMES.get(platform, ()):
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            try:
                ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
                from numba.np.ufunc import tbbpool  # noqa: F401, F811

                return True
            except (OSError, ImportError):
                continue
    return False


def _choose_layer() -> str:
    # loaded even when the user picked a layer: "tbb", "safe" and "threadsafe" need it too
    tbb = _load_tbb()
    user_choice = os.environ.get("NUMBA_THREADING_LAYER") or numba.config.THREADING_LAYER != "default"
    if tbb and not user_choice:
        numba.config.THREADING_LAYER = "tbb"
    return str(numba.config.THREADING_LAYER)


#: the layer requested when this module was first imported ("tbb", or numba's "default")
THREADING_LAYER = _choose_layer()
