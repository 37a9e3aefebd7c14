"""A capability's first call in a fresh environment, compiled on two cores.

numba compiles one function at a time, on one core, so a capability's first call in a fresh
environment compiles its kernels one after another: TSDT's fit compiles 44 functions in 9-10 s
on a 2-core machine (``docs/expect/first_call.md``). Where a core is free, that first call starts
one more Python process, which compiles the same functions for the same types in the opposite
order and saves them to numba's cache. Each function the call then reaches that the other process
has saved is loaded from the cache, not compiled: the two meet in the middle. Where they meet,
the call waits for the function the other process is compiling (it marks it in a folder of its
own) instead of compiling it a second time. The other process is stopped when the call returns.

Which functions, for which types: ``_side_compile.json`` beside this module, written by
``python -m bandit_tree_tools._side_compile_probes``. That runs each capability's probe on tiny
data in a fresh cache, in a process of its own, and lists numba's compile events in their order.
A function the user's call takes with other types (float32 rows, say) is compiled by the call
itself, as without the other process, whose work on it is then only spent, never wrong: numba
keys each cached function by its types. ``tests/test_side_compile.py`` checks that the list
still covers each probe. That process imports only the modules of the functions it compiles, not
the ``__init__`` of their subpackages: those import the public API and scikit-learn with it, a
second of its start, during which the call compiles alone.

No process is started when numba's cache holds the list's last function already (a later process,
or after ``bandit-tree-tools compile``), on one core, in a worker of a process pool (joblib's,
dask's: the pool has the other cores), without POSIX file locks (two processes saving at once need
them: ``_numba_config``), with numba's JIT disabled, inside ``compile_kernels``, or when
``BANDIT_TREE_TOOLS_SIDE_COMPILE=0``.
"""

import importlib
import importlib.machinery
import importlib.util
import json
import logging
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numba

from ._numba_config import BEFORE_CACHE_LOOKUP, SAVES_LOCKED, cache_file, compile_note_shown

#: the functions each probe compiles, in order: {"probes": {probe: [[module, name, [argument types]]]}}
SIGNATURES = Path(__file__).with_name("_side_compile.json")

#: set to "0" to start no second process (it is set so in that process itself)
SWITCH = "BANDIT_TREE_TOOLS_SIDE_COMPILE"

_lock = threading.Lock()
_started: set = set()  # probes whose first call this process has made (one that failed is taken back)
_running: dict = {}  # probe -> (its second process, the folder where it marks what it compiles)
_off = {"depth": 0}  # compile_kernels: its own workers compile
_signatures: dict = {}  # the file's probes, read once


def _entries(probe: str) -> list:
    """[(module, function name, encoded argument types)] of ``probe``, in compile order."""
    if not _signatures:
        try:
            _signatures.update(json.loads(SIGNATURES.read_text())["probes"])
        except (OSError, ValueError, KeyError):
            _signatures["-"] = []  # unreadable: no side compilation, asked once
    return _signatures.get(probe, [])


# Argument types as JSON: a named numba type or an array as numba writes it ("int64", "bool", "none",
# "array(float64, 2d, C)", "readonly array(int8, 1d, A)"), and {"tuple": [types]},
# {"namedtuple": ["module:class", [types]]}, {"function": [result, *arguments]} (a C callback's
# type), {"literal": value}, {"omitted": default}.
# Any other type leaves its function out of the list: the call compiles that one itself.

_ARRAY = re.compile(r"(readonly )?array\((\w+), (\d)d, ([CFA])\)")
_named: dict = {}  # numba's named types by name, gathered once


def _encode(numba_type):
    """``numba_type`` as JSON (above), or None where it has no encoding here."""
    from numba.core import types

    if isinstance(numba_type, types.Array):
        text = str(numba_type)  # numba's own notation: "array(float64, 1d, C)", "readonly array(...)"
        return text if _ARRAY.fullmatch(text) and _named_types().get(str(numba_type.dtype)) else None
    if isinstance(numba_type, types.BaseTuple):
        items = [_encode(item) for item in numba_type.types]
        if any(item is None for item in items):
            return None
        if isinstance(numba_type, types.BaseAnonymousTuple):
            return {"tuple": items}
        cls = numba_type.instance_class
        return {"namedtuple": [f"{cls.__module__}:{cls.__qualname__}", items]}
    if isinstance(numba_type, types.FunctionType):  # a C callback's (a medoid metric's)
        signature = numba_type.signature
        items = [_encode(item) for item in (signature.return_type, *signature.args)]
        return None if any(item is None for item in items) else {"function": items}
    if isinstance(numba_type, types.Literal):
        return {"literal": numba_type.literal_value}
    if isinstance(numba_type, types.Omitted):
        return {"omitted": numba_type.value}
    return str(numba_type) if _named_types().get(str(numba_type)) == numba_type else None


def _decode(encoded):
    """The numba type of an :func:`_encode` result."""
    from numba.core import types
    from numba.core.typing import signature

    if isinstance(encoded, str):
        array = _ARRAY.fullmatch(encoded)
        if array is None:
            return _named_types()[encoded]
        readonly, dtype, ndim, layout = array.groups()
        return types.Array(_named_types()[dtype], int(ndim), layout, readonly=bool(readonly))
    ((kind, value),) = encoded.items()
    if kind == "tuple":
        return types.BaseTuple.from_types([_decode(item) for item in value])
    if kind == "namedtuple":
        module, name = value[0].split(":")
        cls = _attribute(importlib.import_module(module), name)
        return types.BaseTuple.from_types([_decode(item) for item in value[1]], cls)
    if kind == "function":
        result, *arguments = (_decode(item) for item in value)
        return types.FunctionType(signature(result, *arguments))
    if kind == "literal":
        return types.literal(value)
    if kind == "omitted":
        return types.Omitted(value)
    raise ValueError(f"no numba type {kind!r}")


def _named_types() -> dict:
    """{name: type} of numba's named types (int64, float32, bool, none, ...)."""
    if not _named:
        from numba.core import types

        _named.update((str(t), t) for t in vars(types).values() if isinstance(t, types.Type))
    return _named


def _attribute(target, dotted: str):
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


_empty_packages: set = set()  # the second process's packages whose __init__ did not run


def _import_past_package_inits(module: str) -> None:
    """Import ``module`` without running the ``__init__`` of the subpackages above it that are
    not imported yet. Those import the public API, and scikit-learn with it, a second of the
    second process's start. Only that process does this: its packages stay empty (the call's
    process keeps its full packages). Where a kernel module needs a package's public names, the
    packages are imported in full again."""
    importlib.import_module(module.partition(".")[0])  # the top package in full
    package = module.rpartition(".")[0]
    missing = []
    while package not in sys.modules:
        missing.append(package)
        package = package.rpartition(".")[0]
    for name in reversed(missing):  # outermost first: an empty module stands for the package
        parent, _, leaf = name.rpartition(".")
        spec = importlib.machinery.PathFinder.find_spec(name, sys.modules[parent].__path__)
        if spec is None:
            break
        sys.modules[name] = importlib.util.module_from_spec(spec)
        setattr(sys.modules[parent], leaf, sys.modules[name])
        _empty_packages.add(name)
    try:
        importlib.import_module(module)
    except ImportError:
        below = tuple(f"{name}." for name in _empty_packages)
        for name in [name for name in sys.modules if name in _empty_packages or name.startswith(below)]:
            del sys.modules[name]  # the empty packages and what was imported beneath them
        _empty_packages.clear()
        importlib.import_module(module)


def import_kernel_modules(probe: str) -> None:
    """Import the modules of ``probe``'s functions past their packages' ``__init__`` (above);
    the second process's first step."""
    for module in sorted({module for module, _, _ in _entries(probe)}):
        try:
            _import_past_package_inits(module)
        except ImportError:  # a stale entry: the call compiles its functions itself
            continue


def _dispatcher(module: str, name: str):
    """The numba dispatcher ``module.name`` (None if it is not one any more)."""
    try:
        target = _attribute(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return target if hasattr(target, "compile") and hasattr(target, "_cache") else None


def _cached(dispatcher) -> bool:
    """Whether numba's cache holds an entry of ``dispatcher`` (its index file exists); True
    where nothing is cached (numba's JIT disabled): nothing to gain then."""
    files = cache_file(dispatcher)
    return files is None or os.path.exists(files._index_path)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _site_folders() -> set:
    """The installation's site-packages folders (a new interpreter finds packages there itself;
    put first on its path, they could hide the standard library's modules)."""
    import site

    folders = [*getattr(site, "getsitepackages", list)(), getattr(site, "getusersitepackages", str)()]
    return {str(Path(folder).resolve()) for folder in folders if folder}


def _start(probe: str):
    """(the process compiling ``probe``'s list from its end, the folder of its marks), or None
    where none should run."""
    with _lock:
        if probe in _started or _off["depth"] or os.environ.get(SWITCH) == "0":
            return None
        _started.add(probe)
    if numba.config.DISABLE_JIT or not SAVES_LOCKED or _cores() < 2 or not sys.executable:
        return None
    if multiprocessing.parent_process() is not None:  # a pool's worker: the pool has the other cores
        return None
    entries = _entries(probe)
    last = _dispatcher(*entries[-1][:2]) if entries else None
    if last is None or _cached(last):
        return None
    env = dict(os.environ, **{SWITCH: "0"})
    package_parent = str(Path(__file__).resolve().parent.parent)
    if package_parent not in _site_folders():  # sources on sys.path: this copy of the package, not another
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    if numba.config.CACHE_DIR:  # set on numba.config alone when numba was imported before the package
        env["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR
    marks = tempfile.mkdtemp(prefix="bandit_tree_tools-side-")
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "bandit_tree_tools._side_compile", probe, marks],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        shutil.rmtree(marks, ignore_errors=True)
        return None
    return process, marks


@contextmanager
def compiling_beside(probe: str):
    """Run the block (the public call of ``probe``'s capability) with a second
    process compiling its kernels from the other end, where that can help: on the
    first call of a process, or the first that did not fail."""
    try:
        started = _start(probe)
    except Exception:  # a speed-up only (a full temporary folder, an odd installation): the call goes on
        logging.getLogger(__package__).debug("no second process for %s", probe, exc_info=True)
        started = None
    if started is not None:
        with _lock:
            _running[probe] = started
    try:
        yield
    except BaseException:
        with _lock:  # the call failed (bad input, say): the user's next call may start one again
            _started.discard(probe)
        raise
    finally:
        if started is not None:
            with _lock:
                del _running[probe]
            process, marks = started
            if process.poll() is None:
                process.kill()  # numba writes each cache file whole (a temporary file, then a rename)
                process.wait()
            shutil.rmtree(marks, ignore_errors=True)


def _wait_while_compiled_beside(index_name: str) -> None:
    """Before a cache lookup in this process: while a second process compiles that function
    (its mark exists), wait for it to save it rather than compile it here too."""
    with _lock:
        running = list(_running.values())
    for process, marks in running:
        mark = os.path.join(marks, index_name)
        deadline = time.monotonic() + _LONGEST_WAIT
        while os.path.exists(mark) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)


#: seconds a lookup waits at most for the other process (one kernel compiles in 0.1-2 s)
_LONGEST_WAIT = 30.0

BEFORE_CACHE_LOOKUP.append(_wait_while_compiled_beside)


@contextmanager
def no_side_compile():
    """Within this block no call starts a second process (``compile_kernels``'s own workers)."""
    with _lock:
        _off["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _off["depth"] -= 1


def compile_from_end(probe: str, marks: str | None = None) -> int:
    """Compile ``probe``'s list from its last function to its first; the number compiled. While
    compiling one, mark it in the folder ``marks`` (an empty file named as its cache index)."""
    compiled = 0
    for module, name, encoded in reversed(_entries(probe)):
        dispatcher = _dispatcher(module, name)
        if dispatcher is None:
            continue
        files = cache_file(dispatcher)
        mark = os.path.join(marks, files._index_name) if marks and files is not None else None
        try:
            if mark:
                open(mark, "w").close()
            dispatcher.compile(tuple(_decode(item) for item in encoded))
            compiled += 1
        except Exception:  # a stale entry (other code, other numba): the call compiles it itself
            continue
        finally:
            if mark and os.path.exists(mark):
                os.remove(mark)
    return compiled


def main(argv=None) -> None:
    """``python -m bandit_tree_tools._side_compile PROBE [MARKS]``: the process a first call starts."""
    import warnings

    argv = sys.argv[1:] if argv is None else argv
    warnings.simplefilter("ignore")
    if len(argv) not in (1, 2) or not _entries(argv[0]):
        raise SystemExit(
            "usage: python -m bandit_tree_tools._side_compile PROBE [MARKS] (a probe of _side_compile.json)"
        )
    import_kernel_modules(argv[0])
    with compile_note_shown():
        compile_from_end(*argv)


if __name__ == "__main__":
    main()
