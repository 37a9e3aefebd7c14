"""The one helper that runs the kernels' chunks on threads (``_threads.run_chunks``)."""

import ast
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from bandit_tree_tools import _threads
from bandit_tree_tools._numba_config import numba_threads

from .robustness._isolated import run_isolated

PACKAGE = Path(_threads.__file__).parent


@numba.njit(nogil=True)
def _square_into(lo, hi, x, out):
    for i in range(lo, hi):
        out[i] = x[i] * x[i]
    return hi - lo


@pytest.mark.parametrize("n_jobs", [1, 2, 4])
@pytest.mark.parametrize("n, step", [(0, 3), (1, 3), (10, 3), (1000, 7), (1000, 1000), (1000, 5000)])
def test_every_chunk_runs_once_and_results_come_in_order(n_jobs, n, step):
    x = np.arange(n, dtype=np.float64)
    out = np.full(n, np.nan)
    with numba_threads(n_jobs):
        sizes = _threads.run_chunks(_square_into, 0, n, step, x, out)
    np.testing.assert_array_equal(out, x * x)
    assert sizes == [min(step, n - start) for start in range(0, n, step)]


def test_a_range_that_does_not_start_at_zero():
    x = np.arange(50, dtype=np.float64)
    out = np.zeros(50)
    with numba_threads(2):
        _threads.run_chunks(_square_into, 13, 41, 4, x, out)
    np.testing.assert_array_equal(out[13:41], x[13:41] ** 2)
    assert not out[:13].any() and not out[41:].any()


def test_the_thread_count_is_numbas_for_the_calling_thread():
    seen = set()

    def record(lo, hi):
        seen.add(threading.get_ident())
        threading.Event().wait(0.01)  # long enough for a second thread to take a chunk

    with numba_threads(1):
        _threads.run_chunks(record, 0, 8, 1)
    assert seen == {threading.get_ident()}
    assert _threads.n_threads() == numba.get_num_threads()


def test_a_call_from_a_pool_thread_runs_its_chunks_there():
    """No nested waiting on the pool: a chunk that itself runs chunks does
    them in its own thread, so a busy pool cannot stall it."""
    main = threading.get_ident()

    def outer(lo, hi):
        threading.Event().wait(0.01)  # long enough for the pool's threads to take chunks
        ran = []
        _threads.run_chunks(lambda a, b: ran.append(threading.get_ident()), 0, 4, 1)
        return threading.get_ident(), ran, _threads.n_threads()

    with numba_threads(2):
        results = _threads.run_chunks(outer, 0, 6, 1)
    assert sum(len(ran) for _, ran, _ in results) == 24
    for thread, ran, threads in results:
        if thread != main:
            assert set(ran) == {thread} and threads == 1


def test_an_error_in_any_chunk_reaches_the_caller():
    def fail_late(lo, hi):
        if lo == 5:
            raise ValueError("chunk 5 failed")

    with numba_threads(2), pytest.raises(ValueError, match="chunk 5 failed"):
        _threads.run_chunks(fail_late, 0, 8, 1)


def test_chunk_size_is_a_multiple_of_the_alignment():
    with numba_threads(2):
        assert _threads.chunk_size(10_000, 64) % 64 == 0
        assert _threads.chunk_size(10, 64) == 64
        assert _threads.chunk_size(0) == 1


def _parallel_kernels(path):
    """Functions of a module decorated with ``numba.njit(..., parallel=True)``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and any(
                    keyword.arg == "parallel" and getattr(keyword.value, "value", False)
                    for keyword in decorator.keywords
                ):
                    found.append(node.name)
    return found


@pytest.mark.parametrize(
    "module", ["tree/_kernels.py", "pruning/_kernels.py", "pruning/_engine/_kernels.py"], ids=lambda m: m
)
def test_the_routing_and_pruning_kernels_compile_no_parallel_region(module):
    """``prange`` kernels compile two to three times slower than serial ones
    run on threads by ``run_chunks`` (a fresh environment compiles them all);
    ``refit_leaves``, run once per step of the search on the training rows, is
    the one left."""
    assert set(_parallel_kernels(PACKAGE / module)) <= {"refit_leaves"}


def test_a_small_batch_routes_in_one_chunk_and_a_large_one_in_blocks():
    from bandit_tree_tools.tree._kernels import BLOCK, LANES, MIN_CHUNK_ROUTES, block_rows, chunk_rows

    with numba_threads(2):
        # too few row-tree routes for a second thread: one chunk holds every row
        assert chunk_rows(MIN_CHUNK_ROUTES // 200, block_rows(100)) >= 100
        # enough: chunks of one block, claimed by whichever thread is free
        assert block_rows(10_000) == BLOCK and chunk_rows(200, block_rows(10_000)) == BLOCK
        assert chunk_rows(200, LANES) == LANES


def test_side_by_side_runs_the_tasks_at_the_same_time_and_returns_them_in_order():
    meet = threading.Barrier(3, timeout=10)  # passed only when all three tasks run at once

    def task(answer):
        meet.wait()
        return answer, threading.get_ident()

    with numba_threads(2):
        results = _threads.side_by_side([lambda: task("a"), lambda: task("b"), lambda: task("c")])
    assert [answer for answer, _ in results] == ["a", "b", "c"]
    assert results[0][1] == threading.get_ident() and len({ident for _, ident in results}) == 3


def test_side_by_side_on_one_thread_runs_the_tasks_one_after_another_in_the_caller_the_first_last():
    ran = []

    def task(answer):
        ran.append((answer, threading.get_ident()))
        return answer

    with numba_threads(1):
        results = _threads.side_by_side([lambda: task("a"), lambda: task("b"), lambda: task("c")])
    assert results == ["a", "b", "c"]
    assert ran == [(answer, threading.get_ident()) for answer in "bca"]  # the first may wait for the others


def test_side_by_side_gives_every_thread_the_callers_numba_thread_count():
    # in a process of three numba threads, so that a new thread's own count (3) differs from the caller's
    done = run_isolated(
        """
        import numba
        from bandit_tree_tools import _threads
        from bandit_tree_tools._numba_config import numba_threads

        with numba_threads(2):
            print(_threads.side_by_side([numba.get_num_threads, numba.get_num_threads]))
        """,
        threads=3,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[2, 2]"


@pytest.mark.parametrize("failing", [0, 1], ids=["the caller's task", "another thread's"])
def test_side_by_side_raises_a_tasks_error_after_asking_the_others_to_stop(failing):
    stop = threading.Event()

    def waits_for_stop():
        assert stop.wait(timeout=10)  # ended early by the other task's failure
        return "stopped"

    def fails():
        raise ValueError("the task failed")

    tasks = [waits_for_stop, waits_for_stop]
    tasks[failing] = fails
    with numba_threads(2), pytest.raises(ValueError, match="the task failed"):
        _threads.side_by_side(tasks, stop)
    assert stop.is_set()
