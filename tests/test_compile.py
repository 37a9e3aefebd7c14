"""``btt.compile_kernels`` / ``bandit-tree-tools compile``, and the note of a first compilation."""

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from bandit_tree_tools import _compile, _numba_config, cli
from bandit_tree_tools.exceptions import ParameterError

ROOT = Path(__file__).resolve().parents[1]

# every capability once, in a new process; prints how many kernels it compiled
CAPABILITIES = r"""
import warnings
warnings.simplefilter("ignore")
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(getattr(ev.data["dispatcher"], "py_func", ev.data["dispatcher"]))
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
import bandit_tree_tools as btt
X, y = make_classification(n_samples=1200, n_features=10, n_informative=6, random_state=1)
forest = RandomForestClassifier(n_estimators=10, max_depth=8, random_state=1).fit(X[:600], y[:600])
btt.from_model(forest).predict_proba(X)
try:
    import lightgbm
    btt.from_model(lightgbm.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, y)).predict_proba(X)
    three = y + (X[:, 0] > 0)  # a softmax model: its link takes the C library's exp in a kernel
    btt.from_model(lightgbm.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, three)).predict_proba(X)
except ImportError:
    pass
btt.prune(forest, X[600:], y[600:], random_state=0, progress=False)
btt.prune(forest, X[600:], y[600:], X_train=X[:600], y_train=y[:600], random_state=0, progress=False)
btt.bandit_prune(forest, X[600:], y[600:], n_rounds=50, random_state=0, progress=False)
from bandit_tree_tools.pruning._engine._search import leaf_dtype
bushy = RandomForestClassifier(n_estimators=3, max_leaf_nodes=100, random_state=1).fit(X[:900], y[:900])
assert leaf_dtype(btt.from_model(bushy)) == np.int16  # the search's leaves in int16, not int8
btt.prune(bushy, X[900:], y[900:], tolerance=0.05, random_state=0, progress=False)
btt.prune(bushy, X[900:], y[900:], X_train=X[:900], y_train=y[:900], tolerance=0.05, random_state=0, progress=False)
btt.leaf_medoids(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y), X, n_medoids=3)
btt.MABSplitForestClassifier(n_estimators=2, max_depth=4, random_state=0).fit(X, y)
btt.TSDTClassifier(lambda_=0.01, max_iter=50, random_state=0).fit((X[:, :5] > 0).astype(int), y)
try:
    btt.TreeView(forest, X[:200], y[:200])
except ImportError:
    pass
print("COMPILED", len(compiled), sorted({f"{f.__module__}.{f.__qualname__}" for f in compiled})[:20])
"""


@pytest.mark.slow
def test_after_compile_kernels_no_capability_compiles(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "bandit_tree_tools", "compile", "--quiet"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cached in" in done.stdout
    assert "compiling kernels once" not in done.stderr  # its own bar, not the note
    done = subprocess.run([sys.executable, "-c", CAPABILITIES], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "COMPILED 0 " in done.stdout, done.stdout


@pytest.mark.slow
def test_compile_kernels_in_this_process_runs_every_part():
    # the serial path (n_jobs=None); after `make compile` it loads the cache (a few seconds)
    seconds = _compile.compile_kernels(progress=False)
    assert list(seconds) == [label for label, _ in _compile._steps()]
    assert all(value > 0 for value in seconds.values())


def _save_from_two_threads(cache):
    def writer(worker):
        for i in range(200):
            cache.save((worker, i), (worker, i))

    threads = [threading.Thread(target=writer, args=(worker,)) for worker in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [cache.load((w, i)) for w in range(2) for i in range(200)]


EVERY_ENTRY = [(w, i) for w in range(2) for i in range(200)]


@pytest.mark.skipif(not _numba_config.SAVES_LOCKED, reason="no POSIX file locks here")
def test_locked_cache_saves_keep_every_entry(tmp_path):
    # Two writers saving different types of one function at once, as parallel processes do. numba's
    # own save picks the same data file name for both, and entries are lost or load the other
    # writer's data (over a hundred of these 400 in a trial); under the lock, none.
    from numba.core.caching import IndexDataCacheFile

    locked = _numba_config._LockedCacheFile(str(tmp_path / "locked"), "kernel", "stamp")
    os.makedirs(tmp_path / "locked")
    assert _save_from_two_threads(locked) == EVERY_ENTRY
    assert (tmp_path / "locked" / _numba_config.LOCK_NAME).exists()
    # the race is real: numba's own save, in the same two threads, loses or mixes entries
    os.makedirs(tmp_path / "plain")
    plain = IndexDataCacheFile(str(tmp_path / "plain"), "kernel", "stamp")
    if _save_from_two_threads(plain) == EVERY_ENTRY:
        pytest.skip("the unlocked race did not show in this run")  # it shows in almost every run


@pytest.mark.skipif(not _numba_config.SAVES_LOCKED, reason="no POSIX file locks here")
def test_a_cache_folder_without_locks_still_saves(tmp_path, monkeypatch):
    # a lock file that cannot be made, or a file system that refuses locks (ENOLCK on some
    # network mounts): the entry is saved as numba saves it, never a failed compilation
    cache = _numba_config._LockedCacheFile(str(tmp_path), "kernel", "stamp")
    monkeypatch.setattr(_numba_config, "LOCK_NAME", os.path.join("missing", "x.lock"))
    cache.save("a", 1)

    def refuse(*args):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(_numba_config, "LOCK_NAME", "x.lock")
    monkeypatch.setattr(_numba_config.fcntl, "flock", refuse)
    cache.save("b", 2)
    assert (cache.load("a"), cache.load("b")) == (1, 2)


def _package_kernels():
    """Every kernel and helper the package's modules define."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import bandit_tree_tools

    found = []
    for module in pkgutil.walk_packages(bandit_tree_tools.__path__, "bandit_tree_tools."):
        if module.name.endswith("__main__"):
            continue
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.name:
                found.append(value)
    assert len(found) > 100  # the kernels and helpers of every module
    return found


@pytest.mark.skipif(not _numba_config.SAVES_LOCKED, reason="no POSIX file locks here")
def test_every_kernel_of_the_package_saves_under_the_lock():
    from numba.core.caching import FunctionCache

    for dispatcher in _package_kernels():
        assert isinstance(dispatcher._cache, FunctionCache), dispatcher  # cache=True
        assert type(dispatcher._cache._cache_file) is _numba_config._LockedCacheFile, dispatcher
    # numba's other users keep numba's own save
    assert type(numba.njit(cache=True)(lambda x: x)._cache._cache_file) is not _numba_config._LockedCacheFile


def test_every_kernel_states_its_own_fastmath():
    # numba compiles a kernel that states none with its first caller's, and caches it for all
    for dispatcher in _package_kernels():
        assert "fastmath" in dispatcher.targetoptions, dispatcher


def test_a_helper_does_not_take_its_callers_fastmath():
    @_numba_config.helper
    def in_order(values):
        total = 0.0
        for k in range(values.shape[0]):
            total += values[k]
        return total

    @numba.njit(fastmath=True)  # compiles the helper first, for this caller
    def fast_caller(values):
        return in_order(values)

    values = np.array([1e16, 1.0, -1e16, 1.0] * 50 + [0.5] * 3)
    expected = 0.0
    for value in values:
        expected += value
    assert fast_caller(values) == expected  # a reassociated sum rounds these values otherwise


def test_compile_kernels_refuses_zero_workers():
    with pytest.raises(ParameterError, match=r"n_jobs must be None, a positive int"):
        _compile.compile_kernels(n_jobs=0, progress=False)


def test_compile_is_a_subcommand(capsys):
    assert cli.main([]) == 2
    assert "compile" in capsys.readouterr().out


def _kernel_of_the_package():
    def add_one(x):
        return x + 1

    add_one.__module__ = "bandit_tree_tools._compile_test"  # the note is about the package's kernels only
    return numba.njit(add_one)


def test_the_first_compilation_says_so_once(monkeypatch, caplog):
    monkeypatch.setitem(_numba_config._note, "shown", False)
    heard = []
    remove = _numba_config.add_compile_listener(lambda message, kernel: heard.append((message, kernel)))
    try:
        with caplog.at_level(logging.WARNING, logger="bandit_tree_tools"):
            _kernel_of_the_package()(1)
            _kernel_of_the_package()(2)
            numba.njit(lambda x: x + 2)(1)  # not the package's: no note, no call
    finally:
        remove()
    notes = [record for record in caplog.records if "compiling kernels once" in record.getMessage()]
    assert len(notes) == 1
    assert "later sessions load them from the cache" in notes[0].getMessage()
    assert [kernel for _, kernel in heard] == [
        "bandit_tree_tools._compile_test." + name for name in ("_kernel_of_the_package.<locals>.add_one",) * 2
    ]
    assert heard[0][0] == _numba_config.COMPILE_NOTE


def test_a_listener_that_fails_does_not_break_compilation(monkeypatch):
    monkeypatch.setitem(_numba_config._note, "shown", True)

    def broken(message, kernel):
        raise RuntimeError("display gone")

    remove = _numba_config.add_compile_listener(broken)
    try:
        assert _kernel_of_the_package()(1) == 2
    finally:
        remove()


def test_compile_kernels_silences_the_note(monkeypatch, caplog):
    monkeypatch.setitem(_numba_config._note, "shown", False)
    with caplog.at_level(logging.WARNING, logger="bandit_tree_tools"), _numba_config.compile_note_shown():
        _kernel_of_the_package()(1)
    assert not [record for record in caplog.records if "compiling kernels once" in record.getMessage()]


def test_a_kernel_only_kernels_call_refuses_python_callers():
    # compiled without numba's Python entry point: a call from Python must not reach a null pointer
    from bandit_tree_tools.tsdt._kernels import _gini

    assert isinstance(_gini, _numba_config._KernelOnly)
    with pytest.raises(TypeError, match=r"_gini is compiled for calls from other kernels only"):
        _gini(np.array([2.0, 2.0]))
    assert _gini.py_func(np.array([2.0, 2.0])) == pytest.approx(0.5)
