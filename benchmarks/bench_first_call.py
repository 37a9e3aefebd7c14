"""The first call of each capability in a fresh environment, against its second call.

numba compiles every kernel on its first use and keeps it in its cache for later
processes, so a new virtual environment, container, JupyterHub session or CI run
pays the compilation once. Each capability below runs in a process of its own
with an empty ``NUMBA_CACHE_DIR`` (a new temporary folder), as a new user would
meet it; the probe times its first call and its second call, and records numba's
``numba:compile`` events (``numba.core.event``) to say which kernels the wait
went to. Printed: one table of first and second calls (and the seconds of
compilation seen), then the kernels that took longest to compile (top 20 by
their own time: a kernel's time less the time of the kernels compiled inside it).
The first calls of the capabilities in ``_side_compile_probes.PROBES`` start a second process
that compiles their kernels from the other end (``bandit_tree_tools/_side_compile.py``); its
compilation is not among the events counted, which are the calling process's
(``BANDIT_TREE_TOOLS_SIDE_COMPILE=0`` in the environment measures without it).

``--baseline PATH`` runs the same probes with another checkout of the package
first on ``sys.path`` (for instance a detached ``git worktree`` of main), taking
turns with this one, so both are measured side by side on the same machine load.

    python benchmarks/bench_first_call.py [--only prune leaf_medoids ...] [--baseline PATH]
        [--top 20] [--warm]   (--warm: run `bandit-tree-tools compile`'s work first, in the same
                               cache folder, and check that the probes compile nothing)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent

# name -> (what the table says, the code of the probe: sets up `call`, a callable run twice)
PROBES = {
    "lgbm_predict": (
        "from_model(lgbm).predict_proba",
        """
import lightgbm
model = lightgbm.LGBMClassifier(n_estimators=50, num_leaves=31, verbose=-1, random_state=0).fit(X, y)
ensemble = btt.from_model(model)
call = lambda: ensemble.predict_proba(X)
""",
    ),
    "forest_predict": (
        "from_model(forest).predict_proba",
        """
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=30, max_depth=8, random_state=0).fit(X, y)
ensemble = btt.from_model(model)
call = lambda: ensemble.predict_proba(X)
""",
    ),
    "prune": (
        "btt.prune (validation rows only)",
        """
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=30, max_depth=8, random_state=0).fit(X[:1000], y[:1000])
call = lambda: btt.prune(model, X[1000:], y[1000:], random_state=0, progress=False)
""",
    ),
    "prune_lgbm": (
        "btt.prune of LightGBM (validation rows only)",
        """
import lightgbm
model = lightgbm.LGBMClassifier(n_estimators=50, num_leaves=31, verbose=-1, random_state=0).fit(X[:1000], y[:1000])
call = lambda: btt.prune(model, X[1000:], y[1000:], random_state=0, progress=False)
""",
    ),
    "prune_train": (
        "btt.prune with training rows (after the above)",
        """
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=30, max_depth=8, random_state=0).fit(X[:1000], y[:1000])
btt.prune(model, X[1000:], y[1000:], random_state=0, progress=False)
events.clear()
call = lambda: btt.prune(model, X[1000:], y[1000:], X_train=X[:1000], y_train=y[:1000], random_state=0,
                         progress=False)
""",
    ),
    "bandit_prune": (
        "bandit_prune",
        """
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=10, max_depth=8, random_state=0).fit(X[:1000], y[:1000])
call = lambda: btt.bandit_prune(model, X[1000:], y[1000:], n_rounds=200, random_state=0, progress=False)
""",
    ),
    "leaf_medoids": (
        "leaf_medoids",
        """
from sklearn.tree import DecisionTreeClassifier
model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
call = lambda: btt.leaf_medoids(model, X, n_medoids=3, progress=False)
""",
    ),
    "mabsplit_fit": (
        "MABSplitForestClassifier.fit",
        """
call = lambda: btt.MABSplitForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(X, y)
""",
    ),
    "tsdt_fit": (
        "TSDTClassifier.fit",
        """
Xb = (X[:, :6] > 0).astype(int)
call = lambda: btt.TSDTClassifier(lambda_=0.01, max_iter=200, random_state=0).fit(Xb, y)
""",
    ),
    "tree_view": (
        "TreeView construction",
        """
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
call = lambda: btt.TreeView(model, X[:500], y[:500])
""",
    ),
}

PROBE_PREAMBLE = """
import json, sys, time, warnings
sys.path.insert(0, {source!r})
warnings.simplefilter("ignore")
from numba.core import event

events = []          # (name, seconds of its own, seconds in all)
_stack = []


class _Compiles(event.Listener):
    def on_start(self, ev):
        _stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, inner = _stack.pop()
        total = time.perf_counter() - start
        if _stack:
            _stack[-1][1] += total
        dispatcher = ev.data["dispatcher"]
        function = getattr(dispatcher, "py_func", None)
        name = f"{{function.__module__}}.{{function.__qualname__}}" if function else str(dispatcher)
        events.append((name, total - inner, total))


event.register("numba:compile", _Compiles())
start = time.perf_counter()
import bandit_tree_tools as btt
import_seconds = time.perf_counter() - start
import_compiles = len(events)
assert btt.__file__.startswith({source!r}), btt.__file__
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=2000, n_features=10, n_informative=6, random_state=0)
"""

PROBE_RUN = """
setup_events = len(events)
start = time.perf_counter(); call(); first = time.perf_counter() - start
first_events = events[setup_events:]
start = time.perf_counter(); call(); second = time.perf_counter() - start
print("RESULT " + json.dumps(dict(first=first, second=second, import_seconds=import_seconds,
                                  import_compiles=import_compiles, setup_compiles=setup_events,
                                  events=first_events, all_events=events)))
"""


def run_probe(name, source, cache_dir, warm):
    code = PROBE_PREAMBLE.format(source=str(source))
    if warm:
        code += "btt.compile_kernels(progress=False)\nevents.clear()\n"
    code += PROBES[name][1] + PROBE_RUN
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir()
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"probe {name} failed in {source}:\n{done.stderr[-3000:]}")


def kernel_table(results, top):
    """{kernel: own seconds} summed over the probes' first calls, largest first."""
    totals = {}
    for result in results.values():
        for name, own, _ in result["all_events"]:
            short = name.replace("bandit_tree_tools.", "")
            totals.setdefault(short, [0.0, 0])
            totals[short][0] += own
            totals[short][1] += 1
    return sorted(totals.items(), key=lambda item: -item[1][0])[:top]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=list(PROBES), default=list(PROBES))
    parser.add_argument("--baseline", type=Path, help="another checkout, measured side by side")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--warm", action="store_true", help="compile_kernels() first; expect no compilation")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()

    trees = {"this": SOURCE}
    if args.baseline:
        trees = {"baseline": args.baseline.resolve(), "this": SOURCE}
    results = {label: {} for label in trees}
    for name in args.only:
        for label, source in trees.items():  # taking turns: both see the same machine load
            with tempfile.TemporaryDirectory(prefix="btt-first-call-") as cache_dir:
                started = time.perf_counter()
                results[label][name] = run_probe(name, source, cache_dir, args.warm)
                print(
                    f"  {name:<15} {label:<8} {time.perf_counter() - started:6.1f} s in all",
                    file=sys.stderr,
                    flush=True,
                )

    labels = list(trees)
    header = (
        "| capability | "
        + " | ".join(f"{label}: first | {label}: second | {label}: compiled" for label in labels)
        + " |"
    )
    print(header)
    print("|---" * (1 + 3 * len(labels)) + "|")
    sums = {label: [0.0, 0.0, 0.0] for label in labels}
    for name in args.only:
        cells = []
        for label in labels:
            result = results[label][name]
            compiled = sum(own for _, own, _ in result["events"])
            sums[label][0] += result["first"]
            sums[label][1] += result["second"]
            sums[label][2] += compiled
            cells.append(f"{result['first']:.2f} s | {result['second']:.2f} s | {compiled:.1f} s")
        print(f"| {PROBES[name][0]} | " + " | ".join(cells) + " |")
    print(
        "| **all** | "
        + " | ".join(f"{first:.1f} s | {second:.1f} s | {compiled:.1f} s" for first, second, compiled in sums.values())
        + " |"
    )
    print()
    for label in labels:
        some = next(iter(results[label].values()))
        n_compiles = sum(len(result["all_events"]) for result in results[label].values())
        print(
            f"{label}: import {some['import_seconds']:.3f} s, {some['import_compiles']} compilations at import; "
            f"{n_compiles} compilations over all probes ({trees[label]})"
        )
    for label in labels:
        print(f"\nkernels compiled, {label} (own seconds summed over the probes, the number of compilations):")
        print("| kernel | seconds | compilations |\n|---|---|---|")
        for kernel, (seconds, count) in kernel_table(results[label], args.top):
            print(f"| {kernel} | {seconds:.2f} | {count} |")
    if args.json:
        args.json.write_text(
            json.dumps(
                {label: {name: dict(result) for name, result in value.items()} for label, value in results.items()}
            )
        )


if __name__ == "__main__":
    main()
