"""numba's threading layer, kernel cache directory and kernel decorators, chosen in one place.

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

The kernels are compiled with ``cache=True``: numba writes them next to the
sources, in ``__pycache__``. Where the installed package is read-only (a
system or container site-packages), numba falls back to ``~/.cache/numba``
only when that is writable, and otherwise refuses to define the kernels
("cannot cache function ...: no locator available"). So when the package
folder is not writable and ``NUMBA_CACHE_DIR`` is not set, it is set to
``$XDG_CACHE_HOME/bandit_tree_tools/numba`` (``~/.cache/...``), or to
``bandit_tree_tools-numba-<uid>`` in the temporary folder when the home
folder is not writable either. ``NUMBA_CACHE_DIR`` moves the cache of every
numba user of the process, so it is set only then; set it yourself to choose
the place. It is set when ``bandit_tree_tools`` is imported, before numba is
(and on ``numba.config`` if numba was imported already).
"""

import ctypes
import os
import sys
from contextlib import contextmanager

from . import _NUMBA_CACHE_DIR

#: where the kernels are cached when the package folder is read-only (None: next
#: to the sources); chosen by the package's ``__init__``, which runs before any
#: module that defines a kernel (numba picks a function's cache folder when the
#: function is defined, and refuses ``cache=True`` when it finds none)
CACHE_DIR = _NUMBA_CACHE_DIR

import numba  # noqa: E402

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


@contextmanager
def numba_threads(n_jobs):
    """Run numba's parallel kernels on ``n_jobs`` threads, by the library's
    one rule for ``n_jobs`` (``_validation.resolve_n_jobs``: None is 1, -1
    every core), capped at numba's thread count. The count is numba's per
    Python thread, so a panel's background run keeps its own."""
    from ._validation import resolve_n_jobs

    threads = int(min(resolve_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


# -- saving to the cache, one process at a time --------------------------------------------------
#
# numba's cache is not safe for two processes saving different types of one function at once: its
# save reads the function's index, picks the first free data-file name and writes both, so both
# pick the same name; one entry is lost, or its index entry points at the other process's machine
# code, which a later process would load for the wrong types. Several processes compile at once
# whenever work is spread over processes in a fresh environment (joblib's workers,
# `bandit-tree-tools compile`'s workers, a test runner's). So every kernel of the package saves
# holding an exclusive lock on one file in its cache folder; loading needs none, since numba
# replaces each file whole. Only the package's own kernels are affected, not numba's other users.

try:
    import fcntl
except ImportError:  # Windows: numba's unlocked saves
    fcntl = None

from numba.core.caching import IndexDataCacheFile  # noqa: E402

#: whether the package's kernels save to numba's cache under a lock (POSIX file locks)
SAVES_LOCKED = fcntl is not None

#: the lock file in each cache folder
LOCK_NAME = "bandit_tree_tools-saving.lock"


#: callables run with a function's index file name before its cache lookup (``_side_compile``'s wait)
BEFORE_CACHE_LOOKUP: list = []


class _LockedCacheFile(IndexDataCacheFile):
    """numba's index and data files of one function, saved under the folder's lock."""

    def load(self, key):
        for hook in BEFORE_CACHE_LOOKUP:
            hook(self._index_name)
        return super().load(key)

    def save(self, key, data):
        try:
            lock = open(os.path.join(self._cache_path, LOCK_NAME), "a")
        except OSError:  # the folder refuses the lock file: numba's own save
            return super().save(key, data)
        with lock:  # closing the file releases the lock
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
            except OSError:  # a file system without locks (some network mounts): numba's own save
                pass
            return super().save(key, data)


def cache_file(dispatcher):
    """numba's index and data files of ``dispatcher`` (None where it is not cached: numba's JIT
    disabled); their ``_index_name`` and ``_index_path`` name its cache index."""
    return getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)


def _lock_cache_saves(dispatcher):
    """``dispatcher``, whose cache entries are saved under its folder's lock (where locks exist)."""
    files = cache_file(dispatcher)
    if SAVES_LOCKED and type(files) is IndexDataCacheFile:
        files.__class__ = _LockedCacheFile  # the same file names and state, a locked save
    return dispatcher


# -- how the kernels are compiled ----------------------------------------------------------------
#
# numba builds two entry points beside each compiled function: one Python can call (it unboxes
# every argument: for a kernel taking a named tuple of thirty arrays, a large piece of code) and a
# C-callable one (for taking the function's address). The package never takes a kernel's address,
# and most kernels are only called by other kernels, which call the compiled function directly.
# Building neither where it is not used cut a fresh environment's compilation by 8% over every
# capability, TSDT's by a sixth (benchmarks/bench_first_call.py); the compiled kernels are the same.
#
# Every kernel states its own ``fastmath`` (False unless it asks). numba otherwise compiles a
# kernel called from another with its caller's ``fastmath``, once per argument types, and caches
# that machine code under the argument types alone: a helper first compiled for a fastmath kernel
# would then round differently for every other caller, in that process and in every later one
# that loads the cache.


def kernel(function=None, /, **options):
    """``numba.njit(cache=True, **options)`` for a kernel that Python calls
    (a wrapper's, a test's or ``run_chunks``'s): without numba's C-callable entry
    point, which nothing here uses. ``@kernel`` or ``@kernel(nogil=True)``."""
    options = {"cache": True, "no_cfunc_wrapper": True, "fastmath": False, **options}
    if function is None:
        return lambda function: _lock_cache_saves(numba.njit(**options)(function))
    return _lock_cache_saves(numba.njit(**options)(function))


class _KernelOnly(numba.core.registry.CPUDispatcher):
    """A kernel compiled without its Python entry point: other kernels call it,
    Python may not (numba would call a null pointer)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.py_func.__module__}.{self.py_func.__qualname__} is compiled for calls from other "
            "kernels only; from Python, call its `.py_func` or declare it with `@kernel`"
        )


def helper(function=None, /, **options):
    """Like :func:`kernel`, for a function only other kernels call: numba's
    Python entry point is not compiled either, and a call from Python raises
    ``TypeError``. ``@helper`` or ``@helper(fastmath=...)``."""
    if numba.config.DISABLE_JIT:
        return kernel(function, **options)
    options = {
        "nopython": True,
        "boundscheck": None,
        "no_cpython_wrapper": True,
        "no_cfunc_wrapper": True,
        "fastmath": False,
        **options,
    }

    def decorate(function):
        dispatcher = _KernelOnly(py_func=function, locals={}, targetoptions=options)
        dispatcher.enable_caching()
        return _lock_cache_saves(dispatcher)

    return decorate if function is None else decorate(function)


# -- the first compilation says so ----------------------------------------------------------------
#
# A fresh environment compiles each kernel on its first call (later calls and later processes load
# it from the cache). So that the wait is not a silent freeze, the first compilation of one of the
# package's kernels in a process logs one line on the "bandit_tree_tools" logger (shown on stderr
# when logging is not configured). Panels and progress bars can ask to hear of each compilation
# too (``add_compile_listener``); ``btt.compile_kernels`` shows its own bar and silences the line.

import logging  # noqa: E402
import threading  # noqa: E402

from numba.core import event as _event  # noqa: E402

#: the line logged when a process first compiles a kernel of the package
COMPILE_NOTE = (
    "bandit_tree_tools: compiling kernels once (seconds to a minute); later calls and later sessions "
    "load them from the cache. `bandit-tree-tools compile` does it ahead of time."
)

_logger = logging.getLogger("bandit_tree_tools")
_lock = threading.Lock()
_listeners = []  # callables (message, kernel name) -> None
_note = {"shown": False, "silenced": 0}


def _kernel_name(event) -> str | None:
    """``module.function`` of a kernel of this package being compiled, else None."""
    function = getattr((event.data or {}).get("dispatcher"), "py_func", None)
    module = getattr(function, "__module__", "") or ""
    if not module.startswith("bandit_tree_tools"):
        return None
    return f"{module}.{function.__qualname__}"


class _CompileNotes(_event.Listener):
    def __init__(self):
        self.depth = threading.local()

    def on_start(self, event):
        depth = getattr(self.depth, "value", 0)
        self.depth.value = depth + 1
        if depth:  # a kernel compiled inside another: the outer one was announced
            return
        name = _kernel_name(event)
        if name is None:
            return
        with _lock:
            show = not _note["shown"] and not _note["silenced"]
            _note["shown"] = _note["shown"] or show
            listeners = list(_listeners)
        if show:
            _logger.warning(COMPILE_NOTE)
        for listener in listeners:
            try:
                listener(COMPILE_NOTE, name)
            except Exception:  # a display's failure must never break a compilation
                _logger.debug("compile listener %r failed", listener, exc_info=True)

    def on_end(self, event):
        self.depth.value = getattr(self.depth, "value", 1) - 1


_event.register("numba:compile", _CompileNotes())


def add_compile_listener(listener):
    """Call ``listener(message, kernel)`` whenever one of the package's kernels
    starts compiling in this process (``message`` is :data:`COMPILE_NOTE`,
    ``kernel`` the kernel's ``module.function``), from the thread that compiles.

    For the panels: a run's first call in a fresh environment compiles for
    seconds before the first progress; a panel shows the message in its status
    line while its run goes on. Returns a function that removes the listener.
    A listener that raises is logged at debug level and otherwise ignored."""
    with _lock:
        _listeners.append(listener)

    def remove():
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return remove


@contextmanager
def compile_note_shown():
    """Within this block compilations log no note (a caller that shows its own progress)."""
    with _lock:
        _note["silenced"] += 1
    try:
        yield
    finally:
        with _lock:
            _note["silenced"] -= 1
