"""k-medoids: our "auto", "banditpam" and "pam" against the `banditpam`
package (BanditPAM, C++) and the `kmedoids` package (FasterPAM, Rust).

Data: scikit-learn's digits; MNIST test images (n = 1,000, 3,000, 10,000,
d = 784); Gaussian mixtures in d = 784 (n up to 30,000) and d = 10 (n up to
100,000); k = 5 and 10; L2 and L1. Each run happens in a forked child
process, so that its peak memory (VmHWM - VmRSS at the start, in MiB) is its
own; a run past ``--timeout`` seconds is stopped and reported as such.
Printed side by side for every problem:

- seconds, and time / the fastest run given the same input: the rows, or the
  ready distance matrix (built with scikit-learn's
  ``pairwise_distances(n_jobs=-1)`` outside the clock). Given a matrix run
  the `kmedoids` package (FasterPAM) and our "auto" with
  ``metric="precomputed"``; the `kmedoids` package is listed again among the
  runs given rows, with the time to build its matrix added
  ("kmedoids-pkg+matrix");
- final loss / exact PAM's loss (or / the lowest loss, where PAM cannot run);
- distance calls / n^2 (where the method reports them);
- peak memory (for runs given a matrix, including that matrix).

Targets: our loss equals exact PAM's wherever PAM can run; "auto" never
slower than 1.5x the fastest peer given the same input; faster than the
banditpam package at every size; BanditPAM at least 10x fewer distance calls
than n^2 at n = 30,000; where the n^2 matrix would not fit, BanditPAM still
finishes.

    python benchmarks/bench_kmedoids.py [--quick] [--timeout 120]
"""

import argparse
import gzip
import multiprocessing
import resource
import time
from pathlib import Path

import numpy as np

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
OURS = ("auto", "banditpam", "pam")
# fed the ready distance matrix (built outside the clock) instead of the rows
ON_MATRIX = ("auto-on-matrix", "kmedoids-pkg")


def load_mnist(n):
    path = DATASETS / "mnist" / "t10k-images-idx3-ubyte.gz"
    if not path.exists():
        return None
    with gzip.open(path, "rb") as handle:
        images = np.frombuffer(handle.read(), dtype=np.uint8, offset=16).reshape(-1, 784)
    return images[:n].astype(np.float64) / 255.0


def mixture(n, d, centers=10, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(centers, d))
    return means[rng.integers(centers, size=n)] + rng.normal(size=(n, d))


def problems(quick):
    from sklearn.datasets import load_digits

    digits = load_digits().data.astype(np.float64)
    yield "digits", digits, 5, "euclidean"
    yield "digits", digits, 10, "manhattan"
    for n, k, metric in [
        (1000, 5, "euclidean"),
        (1000, 5, "manhattan"),
        (3000, 10, "euclidean"),
        (10000, 5, "euclidean"),
    ]:
        if quick and n > 1000:
            continue
        X = load_mnist(n)
        if X is None:
            print(f"(MNIST not found under {DATASETS}; skipping it)")
            break
        yield f"mnist{n}", X, k, metric
    for n, k in [(3000, 5), (10000, 10), (30000, 5)]:
        if not quick or n <= 3000:
            yield f"gauss784-{n}", mixture(n, 784), k, "euclidean"
    for n, k, metric in [(10000, 5, "manhattan"), (30000, 10, "euclidean"), (100000, 5, "euclidean")]:
        if not quick or n <= 10000:
            yield f"gauss10-{n}", mixture(n, 10), k, metric


def _status(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _loss(X, medoids, metric):
    from bandit_tree_tools.medoids import pairwise_distances

    total = 0.0
    for start in range(0, len(X), 4096):
        total += pairwise_distances(X[start : start + 4096], X[medoids], metric=metric).min(axis=1).sum()
    return total


def _run(method, X, k, metric, queue):
    # imports and numba's loading of its cached kernels (once per process)
    # happen before the clock starts, for every method alike
    from sklearn.metrics import pairwise_distances

    banditpam = _optional("banditpam")
    kmedoids = _optional("kmedoids")

    import bandit_tree_tools as btt

    if method in OURS:
        btt.KMedoids(2, metric=metric, algorithm=method, random_state=0).fit(X[:50])
    if method == "auto-on-matrix":
        btt.KMedoids(2, metric="precomputed", random_state=0).fit(pairwise_distances(X[:50], metric=metric))
    base = _status("VmRSS")
    calls = None
    matrix_seconds = 0.0
    start = time.perf_counter()
    if method in OURS:
        model = btt.KMedoids(k, metric=metric, algorithm=method, random_state=0).fit(X)
        medoids, calls, used = model.medoid_indices_, model.n_distance_calls_, model.algorithm_
    elif method == "auto-on-matrix":
        D = pairwise_distances(X, metric=metric, n_jobs=-1)
        matrix_seconds = time.perf_counter() - start
        start = time.perf_counter()
        model = btt.KMedoids(k, metric="precomputed", random_state=0).fit(D)
        medoids, calls, used = model.medoid_indices_, model.n_distance_calls_, model.algorithm_
    elif method == "banditpam-pkg":
        model = banditpam.KMedoids(n_medoids=k, algorithm="BanditPAM")
        model.fit(X, {"euclidean": "L2", "manhattan": "L1"}[metric])
        medoids, calls, used = np.asarray(model.medoids, dtype=np.int64), model.getDistanceComputations(True), ""
    else:
        D = pairwise_distances(X, metric=metric, n_jobs=-1)
        matrix_seconds = time.perf_counter() - start
        start = time.perf_counter()
        result = kmedoids.fasterpam(D, k, random_state=0)
        medoids, used = np.asarray(result.medoids, dtype=np.int64), ""
        calls = len(X) ** 2 // 2
    seconds = time.perf_counter() - start
    peak = _status("VmHWM") - base
    queue.put(
        dict(
            seconds=seconds,
            matrix_seconds=matrix_seconds,
            medoids=medoids,
            calls=calls,
            used=used,
            peak=peak,
            loss=_loss(X, medoids, metric),
        )
    )


def _warm_up(queue):
    import bandit_tree_tools as btt

    warm = mixture(300, 4)
    for algorithm in ("pam", "fasterpam", "banditpam"):
        for metric in ("euclidean", "manhattan"):
            btt.KMedoids(3, metric=metric, algorithm=algorithm, random_state=0).fit(warm)
    _loss(warm, np.arange(3), "euclidean")
    queue.put(dict(done=True))


def run(method, X, k, metric, timeout):
    """One run in a forked child. The parent never runs a numba parallel
    kernel: forking a process that has started OpenMP threads is unsafe."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(
        target=_warm_up if method == "warm-up" else _run,
        args=(method, X, k, metric, queue) if method != "warm-up" else (queue,),
    )
    child.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:
        result = None
    child.join(5)
    if child.is_alive():
        child.terminate()
        child.join()
    return result


def skip_reason(method, n, k):
    matrix_gib = 8 * n * n / 2**30
    if method in ("pam", "auto-on-matrix", "kmedoids-pkg") and matrix_gib > 2.0:
        return f"skipped: the n^2 matrix needs {matrix_gib:.1f} GiB"
    if method == "pam" and n * n * k > 2e9:
        return "skipped: exact PAM too slow at this size"
    if method == "banditpam-pkg" and n > 30000:
        return "skipped: takes minutes"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small problems only")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run before it is stopped")
    parser.add_argument("--no-peers", action="store_true", help="only our algorithms")
    args = parser.parse_args(argv)
    peers = (
        []
        if args.no_peers
        else [
            name
            for name, module in (("banditpam-pkg", "banditpam"), ("kmedoids-pkg", "kmedoids"))
            if _installed(module)
        ]
    )
    if not args.no_peers:
        for module in ("banditpam", "kmedoids"):
            if not _installed(module):
                print(f"(the {module!r} package is not installed: pip install {module} to compare with it)")
    # compile into numba's on-disk cache before any timing (children load it)
    run("warm-up", None, 0, None, 1800)
    header = (
        f"{'problem':<16}{'n':>7}{'d':>5}{'k':>4} {'metric':<10}{'method':<22}{'input':<7}{'seconds':>9}"
        f"{'x fastest':>10}"
        f"{'loss/PAM':>10}{'calls/n^2':>10}{'peak MiB':>10}  note"
    )
    print(header)
    print("-" * len(header))
    for name, X, k, metric in problems(args.quick):
        n, d = X.shape
        rows = []
        methods = list(OURS) + (["auto-on-matrix"] if "kmedoids-pkg" in peers else []) + peers
        for method in methods:
            reason = skip_reason(method, n, k)
            if reason:
                rows.append((method, None, reason))
                continue
            result = run(method, X, k, metric, args.timeout)
            if result is None:
                rows.append((method, None, f"stopped after {args.timeout:.0f} s"))
                continue
            rows.append((method, result, result["used"]))
            if method == "kmedoids-pkg":
                with_matrix = dict(result, seconds=result["seconds"] + result["matrix_seconds"])
                rows.append(("kmedoids-pkg+matrix", with_matrix, "sklearn pairwise_distances + FasterPAM"))
        finished = [result for _, result, _ in rows if result is not None]
        # times are compared among runs given the same input: rows, or the ready matrix
        fastest = {
            on_matrix: min(
                (
                    result["seconds"]
                    for method, result, _ in rows
                    if result is not None and (method in ON_MATRIX) == on_matrix
                ),
                default=float("nan"),
            )
            for on_matrix in (False, True)
        }
        pam = [result for method, result, _ in rows if method == "pam" and result is not None]
        reference = pam[0]["loss"] if pam else min((result["loss"] for result in finished), default=float("nan"))
        for method, result, note in rows:
            given = "matrix" if method in ON_MATRIX else "rows"
            if result is None:
                print(
                    f"{name:<16}{n:>7}{d:>5}{k:>4} {metric:<10}{method:<22}{given:<7}{'-':>9}{'-':>10}{'-':>10}"
                    f"{'-':>10}{'-':>10}  {note}"
                )
                continue
            calls = f"{result['calls'] / n**2:.3f}" if result["calls"] is not None else "-"
            print(
                f"{name:<16}{n:>7}{d:>5}{k:>4} {metric:<10}{method:<22}{given:<7}{result['seconds']:>9.2f}"
                f"{result['seconds'] / fastest[method in ON_MATRIX]:>10.2f}{result['loss'] / reference:>10.4f}"
                f"{calls:>10}{result['peak']:>10.0f}  {note}"
            )
        print()


def _optional(module):
    from importlib import import_module

    return import_module(module) if _installed(module) else None


def _installed(module):
    from importlib.util import find_spec

    return find_spec(module) is not None


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
