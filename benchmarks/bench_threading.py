"""Prediction speed of the common format under each numba threading layer, side by side.

Trains a LightGBM, an XGBoost and a scikit-learn forest once, imports them, and
times ``Ensemble.predict_raw`` in one subprocess per layer (the layer is fixed per
process), layers interleaved over several rounds; prints the best time per layer and
the ratio to OpenMP's (below 1: faster than OpenMP). Best-of timings, because the
machine is shared: the minimum is the run least disturbed by other work. Also checks
which layers survive a fork after a prediction and two threads predicting at once.

    python benchmarks/bench_threading.py [--rows 100000] [--rounds 3]
"""

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

LAYERS = ("omp", "tbb", "workqueue")

CHILD = r"""
import json, os, pickle, sys, time, threading
import numpy as np
import bandit_tree_tools as btt
from bandit_tree_tools.tree import _kernels  # noqa: F401 (imports the layer choice)
import numba
path, mode = sys.argv[1], sys.argv[2]
with open(path, "rb") as handle:
    ensembles, X = pickle.load(handle)
for ensemble in ensembles.values():
    ensemble.predict_raw(X[:100])
out = {"layer": numba.threading_layer(), "threads": numba.get_num_threads()}
if mode == "time":
    for name, ensemble in ensembles.items():
        best = np.inf
        for _ in range(5):
            start = time.perf_counter()
            ensemble.predict_raw(X)
            best = min(best, time.perf_counter() - start)
        out[name] = best
elif mode == "threads":
    ensemble = next(iter(ensembles.values()))
    workers = [threading.Thread(target=lambda: [ensemble.predict_raw(X[:20000]) for _ in range(5)]) for _ in range(2)]
    [w.start() for w in workers]
    [w.join() for w in workers]
    out["ok"] = True
elif mode == "fork":
    import multiprocessing
    ensemble = next(iter(ensembles.values()))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(ensemble.predict_raw, [X[:1000], X[1000:2000]]).get(timeout=60)
    out["ok"] = len(results) == 2
print(json.dumps(out))
"""


def build(rows, path):
    import lightgbm
    import xgboost
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    import bandit_tree_tools as btt

    X, y = make_classification(n_samples=20_000 + rows, n_features=30, n_informative=15, random_state=0)
    X_train, y_train, X_test = X[:20_000], y[:20_000], X[20_000:]
    models = {
        "LightGBM 200x63": lightgbm.LGBMClassifier(n_estimators=200, num_leaves=63, verbose=-1, random_state=0),
        "XGBoost 200 depth 6": xgboost.XGBClassifier(n_estimators=200, max_depth=6, random_state=0, n_jobs=1),
        "RandomForest 100": RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=1),
    }
    ensembles = {name: btt.from_model(model.fit(X_train, y_train)) for name, model in models.items()}
    with open(path, "wb") as handle:
        pickle.dump((ensembles, X_test), handle)


def run(layer, path, mode):
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, path, mode], env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "models.pkl")
        build(args.rows, path)
        best = {}
        for _ in range(args.rounds):
            for layer in LAYERS:
                result = run(layer, path, "time")
                for name, seconds in result.items():
                    if name not in ("layer", "threads", "error"):
                        best.setdefault(name, {})[layer] = min(best.get(name, {}).get(layer, np.inf), seconds)
                    if name == "error":
                        print(f"{layer}: {seconds}")
        print(f"predict_raw of {args.rows} rows, best of {args.rounds} rounds x 5; ratio = layer / omp")
        print(f"{'model':24s}" + "".join(f"{layer:>20s}" for layer in LAYERS))
        for name, times in best.items():
            cells = "".join(
                f"{times.get(layer, np.nan):9.4f} s ({times.get(layer, np.nan) / times['omp']:4.2f})".rjust(20)
                for layer in LAYERS
            )
            print(f"{name:24s}{cells}")
        for mode in ("threads", "fork"):
            print(
                f"{mode}: "
                + ", ".join(f"{layer} {'ok' if run(layer, path, mode).get('ok') else 'FAILS'}" for layer in LAYERS)
            )


if __name__ == "__main__":
    main()
