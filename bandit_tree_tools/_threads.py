"""Chunks of a range on threads: how the package's row and tree loops use several cores.

A kernel that does the work of a range ``[lo, hi)`` (rows, nodes or trees)
and releases the GIL (``numba.njit(nogil=True)``) is called by
:func:`run_chunks` on consecutive chunks of a larger range, from a pool of
Python threads, the calling thread taking its share. A chunk writes only its
own part of the outputs, so the results do not depend on the number of
threads or on the order in which the chunks finish.

Why threads around serial kernels, and not numba's ``parallel=True``: a
``prange`` loop is compiled into a parallel region of its own (the parfor
passes, a gufunc per loop), and that compilation took two to three times as
long as the serial kernel's on every kernel measured, in every fresh
environment (``benchmarks/bench_first_call.py``, ``docs/expect/first_call.md``).
Over row blocks of a few thousand rows the threads cost what numba's own
thread pool costs.

The number of threads is numba's for the calling thread
(``numba.get_num_threads()``), so ``_numba_config.numba_threads(n_jobs)`` and
``numba.set_num_threads`` keep their meaning. A call from inside one of the
pool's threads runs its chunks in that thread (no nested waiting on the same
pool), and a pool inherited through ``fork()`` is replaced by a new one.

:func:`side_by_side` runs a few independent tasks at the same time, each on a
thread of its own: where a task's Python steps leave the cores idle between
its kernels, the other's kernels fill them.
"""

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba

_state = threading.local()  # .worker: True in the pool's threads
_pool_lock = threading.Lock()
_pool = {"executor": None, "pid": None}


def _mark_worker():
    _state.worker = True


def _executor() -> ThreadPoolExecutor:
    """The shared pool (made on first use, and again in a child after a fork),
    one thread fewer than numba's largest thread count: the caller works too."""
    with _pool_lock:
        if _pool["executor"] is None or _pool["pid"] != os.getpid():
            size = max(1, int(numba.config.NUMBA_NUM_THREADS) - 1)
            _pool["executor"] = ThreadPoolExecutor(
                size, thread_name_prefix="bandit_tree_tools", initializer=_mark_worker
            )
            _pool["pid"] = os.getpid()
        return _pool["executor"]


def n_threads() -> int:
    """Threads a call of :func:`run_chunks` may use from this thread."""
    return 1 if getattr(_state, "worker", False) else int(numba.get_num_threads())


def chunk_size(n: int, align: int = 1, per_thread: int = 4) -> int:
    """A chunk length for ``n`` items: about ``per_thread`` chunks per thread
    (for balance on a loaded machine), a multiple of ``align``, at least ``align``."""
    pieces = max(1, n_threads() * per_thread)
    size = -(-n // pieces)
    return max(align, -(-size // align) * align)


def run_chunks(kernel, lo: int, hi: int, step: int, *args) -> list:
    """``[kernel(start, min(start + step, hi), *args) for start in range(lo, hi, step)]``,
    the calls spread over :func:`n_threads` threads (``kernel`` should release
    the GIL: ``nogil=True``). Chunks are taken in order by whichever thread is
    free; the results come back in chunk order."""
    step = max(1, int(step))
    starts = range(int(lo), int(hi), step)
    threads = min(n_threads(), len(starts))
    if threads <= 1:
        return [kernel(start, min(start + step, hi), *args) for start in starts]
    results = [None] * len(starts)
    claim = itertools.count()  # next() of a count is atomic under the GIL

    def work():
        while True:
            index = next(claim)
            if index >= len(starts):
                return
            start = starts[index]
            results[index] = kernel(start, min(start + step, hi), *args)

    pool = _executor()
    futures = [pool.submit(work) for _ in range(threads - 1)]
    try:
        work()
    finally:
        # a task that has not started yet finds nothing left: cancel it rather than wait for a busy pool
        for future in futures:
            if not future.cancel():
                future.exception()  # waits; an error is raised below
    for future in futures:
        if not future.cancelled() and future.exception() is not None:
            raise future.exception()
    return results


def side_by_side(tasks, stop: threading.Event | None = None, names=None) -> list:
    """``[task() for task in tasks]``, the tasks run at the same time, the
    first in the calling thread and each other one in a thread of its own
    (``names``: those threads' names, for ``tasks[1:]``), when this thread
    may use several cores (:func:`n_threads`); one after another otherwise,
    the first last (it may wait for what the others give). Every thread
    keeps the caller's numba thread count.

    When a task raises (an interrupt included), ``stop`` is set, for the
    other tasks to read and end early; the first error is raised once every
    task has ended."""
    if len(tasks) < 2 or n_threads() < 2:
        others = [task() for task in tasks[1:]]
        return [tasks[0](), *others]
    threads = numba.get_num_threads()
    results, errors = [None] * len(tasks), [None] * len(tasks)

    def run(index):
        try:
            numba.set_num_threads(threads)  # numba's count is per thread
            results[index] = tasks[index]()
        except BaseException as error:  # raised in the caller, below
            errors[index] = error
            if stop is not None:
                stop.set()

    names = [None] * (len(tasks) - 1) if names is None else list(names)
    helpers = [
        threading.Thread(target=run, args=(index,), name=names[index - 1], daemon=True)
        for index in range(1, len(tasks))
    ]
    for helper in helpers:
        helper.start()
    run(0)
    for helper in helpers:
        while helper.is_alive():
            try:
                helper.join()
            except BaseException as error:  # an interrupt while waiting: ask the others to end, and wait
                if stop is not None:
                    stop.set()
                errors[0] = errors[0] or error
    for error in errors:
        if error is not None:
            raise error
    return results
