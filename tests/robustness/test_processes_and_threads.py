"""Predictions survive every way of running work in parallel: a fork after a
parallel kernel ran (multiprocessing's default start method on Linux),
joblib's multiprocessing backend (also through ``leaf_medoids(n_jobs=2)``),
spawn, joblib's loky, dask's process and thread schedulers, and two Python
threads predicting at the same time (the panels run their loops in a thread).

Each group of probes runs in its own process with two numba threads, so an
abort or a hang fails the test instead of the run; every probe prints its
name before it starts, so a failure names the probe that died.
"""

import json
import textwrap

import pytest

from ._isolated import run_isolated

# Top level: only what workers need to unpickle and run ``predict`` (spawned
# workers import this module again; the model is built under __main__ only).
HEADER = """
import json, sys
import numpy as np


def predict(args):
    ensemble, rows = args
    return ensemble.predict_proba(rows)


def report(name, results, expected):
    assert all(np.array_equal(a, b) for a, b in zip(results, expected)), name
    print(json.dumps({"probe": name, "ok": True}), flush=True)


def start(name):
    print(json.dumps({"probe": name, "started": True}), flush=True)


if __name__ == "__main__":
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    import bandit_tree_tools as btt

    X, y = make_classification(n_samples=3000, n_features=8, random_state=0)
    model = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    chunks = [X[:1000], X[1000:2000], X[2000:]]
    jobs = [(ensemble, rows) for rows in chunks]
    expected = [ensemble.predict_proba(rows) for rows in chunks]  # parallel kernels ran before any worker starts
"""

GROUPS = {
    "fork": """
    import multiprocessing
    from joblib import Parallel, delayed, parallel_backend

    start("fork pool")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        report("fork pool", pool.map_async(predict, jobs).get(timeout=60), expected)
    start("joblib multiprocessing")
    report("joblib multiprocessing", Parallel(n_jobs=2, backend="multiprocessing")(delayed(predict)(job) for job in jobs),
           expected)
    start("leaf_medoids under joblib multiprocessing")
    reference = btt.leaf_medoids(model.estimators_[0], X, n_medoids=2, random_state=0, n_jobs=1)
    with parallel_backend("multiprocessing"):
        found = btt.leaf_medoids(model.estimators_[0], X, n_medoids=2, random_state=0, n_jobs=2)
    report("leaf_medoids under joblib multiprocessing", [np.concatenate(list(found.medoids.values()))],
           [np.concatenate(list(reference.medoids.values()))])
    """,
    "threads": """
    from concurrent.futures import ThreadPoolExecutor

    start("two threads")
    with ThreadPoolExecutor(2) as pool:  # many concurrent launches of the parallel kernels
        report("two threads", list(pool.map(predict, jobs * 20)), expected * 20)
    try:
        import dask
    except ImportError:
        dask = None
    if dask is not None:
        start("dask threads")
        report("dask threads", dask.compute(*[dask.delayed(predict)(job) for job in jobs * 5], scheduler="threads",
                                            num_workers=2), expected * 5)
    """,
    "fresh interpreters": """
    import multiprocessing
    from joblib import Parallel, delayed

    start("spawn pool")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        report("spawn pool", pool.map_async(predict, jobs).get(timeout=90), expected)
    start("joblib loky")
    report("joblib loky", Parallel(n_jobs=2, backend="loky")(delayed(predict)(job) for job in jobs), expected)
    try:
        import dask
    except ImportError:
        dask = None
    if dask is not None:
        start("dask processes")
        report("dask processes", dask.compute(*[dask.delayed(predict)(job) for job in jobs], scheduler="processes",
                                              num_workers=2), expected)
    """,
}


@pytest.mark.parametrize(
    "group", [pytest.param(name, marks=[pytest.mark.slow] if name == "fresh interpreters" else []) for name in GROUPS]
)
def test_parallel_work_after_a_prediction(group, tmp_path):
    script = tmp_path / "probe.py"  # spawned workers re-import the main module: it must be a file
    script.write_text(HEADER + textwrap.indent(textwrap.dedent(GROUPS[group]), "    "))
    done = run_isolated(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", timeout=150)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    started = [line["probe"] for line in lines if line.get("started")]
    finished = [line["probe"] for line in lines if line.get("ok")]
    assert done.returncode == 0 and started == finished, (
        f"probe {started[-1] if started else '?'} failed:\n{done.stderr[-3000:]}"
    )
    assert finished
