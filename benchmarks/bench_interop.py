"""Import, export and prediction speed of the common format against the native libraries.

Models: a 500-tree LightGBM model (255 leaves), a 500-tree XGBoost model
(depth 8) and a 300-tree scikit-learn random forest, trained on
``--train-rows`` rows. Printed side by side, measured in one run:

- import (``btt.from_model``) and export (``btt.to_model``) seconds, the
  export of the same model after collapsing two twigs in every tree (every
  tree changed), and treelite's import time when treelite is installed;
- raw-score prediction of 1,000, 10,000 and ``--rows`` rows (200,000 by
  default), every predictor with the same ``--threads`` (2): our numba
  engine, the library's own predictor (LightGBM ``predict(raw_score=True)``,
  XGBoost ``inplace_predict``, scikit-learn ``predict_proba``), treelite's
  GTIL, tl2cgen (treelite's model compiled to C with gcc, ``-O3``) and, for
  LightGBM, lleaves (LLVM-compiled), run from a virtual environment of its own
  that this script creates in the temporary directory (lleaves needs an older
  llvmlite than numba's; it is skipped with a message where it cannot be
  installed). Times are the best of repeated calls, the predictors taking
  turns within each repetition; ratios are ``other / ours`` (above 1: ours is
  faster), and ``max |diff|`` compares our raw scores with the native ones.

Targets: ours at least 1.0x XGBoost's ``inplace_predict``, 1.5x scikit-learn's
``predict_proba``, 3x LightGBM's predict, faster than tl2cgen on all three,
and at 1,000 rows no more than 2x the native library's time per call;
import + export of each model under 2 s.

    python benchmarks/bench_interop.py [--rows 200000] [--train-rows 50000] [--threads 2] [--quick]
        [--only lightgbm xgboost forest] (some of the models only)
        [--no-compiled]   (skip tl2cgen and lleaves, whose compilation takes minutes: gcc took 3-6 min for
                           the boosted models here; lleaves over 25 min for the LightGBM one, so it is
                           given --lleaves-time-limit seconds, 1,200 by default)
"""

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time
import venv
from pathlib import Path

import numpy as np
from _timing import best_of
from sklearn.datasets import make_classification

LLEAVES_REQUIREMENTS = ["lleaves", "llvmlite<0.44", "lightgbm", "numpy<2.3"]
CACHE = Path(tempfile.gettempdir()) / "bandit_tree_tools_bench"

LLEAVES_RUNNER = r"""
import json, sys, time
import numpy as np
import lleaves
model_file, cache, threads, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
model = lleaves.Model(model_file=model_file)
start = time.perf_counter()
model.compile(cache=cache)
compile_seconds = time.perf_counter() - start
out = {"compile": compile_seconds}
for path in sys.argv[5:]:
    X = np.load(path)
    model.predict(X[:10], raw_score=True, n_jobs=threads)
    best = np.inf
    for _ in range(repeat if len(X) > 10_000 else 5 * repeat):
        start = time.perf_counter()
        raw = model.predict(X, raw_score=True, n_jobs=threads)
        best = min(best, time.perf_counter() - start)
    np.save(path + ".lleaves.npy", raw)
    out[str(len(X))] = best
print(json.dumps(out))
"""


MODELS = ("lightgbm", "xgboost", "forest")


def build_models(X_train, y_train, scale, threads, only=MODELS):
    """The models of ``only`` (names of ``MODELS``), trained, with their native predictors."""
    import lightgbm
    import xgboost
    from sklearn.ensemble import RandomForestClassifier

    n_lgbm, n_xgb, n_rf = (int(500 * scale), int(500 * scale), int(300 * scale))
    start = time.perf_counter()
    models = {}
    if "lightgbm" in only:
        lgbm = lightgbm.LGBMClassifier(
            n_estimators=n_lgbm,
            num_leaves=255,
            min_child_samples=5,
            learning_rate=0.05,
            verbose=-1,
            random_state=0,
            n_jobs=threads,
        ).fit(X_train, y_train)
        models[f"LightGBM {n_lgbm} x 255 leaves"] = (
            lgbm,
            lambda X: lgbm.booster_.predict(X, raw_score=True, num_threads=threads),
        )
    if "xgboost" in only:
        xgb = xgboost.XGBClassifier(
            n_estimators=n_xgb, max_depth=8, learning_rate=0.05, random_state=0, n_jobs=threads
        ).fit(X_train, y_train)
        booster = xgb.get_booster()
        models[f"XGBoost {n_xgb} depth 8"] = (xgb, lambda X: booster.inplace_predict(X, predict_type="margin"))
    if "forest" in only:
        forest = RandomForestClassifier(n_estimators=n_rf, min_samples_leaf=5, n_jobs=threads, random_state=0).fit(
            X_train, y_train
        )
        models[f"sklearn RandomForest {n_rf}"] = (forest, lambda X: forest.predict_proba(X))
    print(f"trained {len(models)} model(s) in {time.perf_counter() - start:.1f} s")
    return models


def treelite_model(model):
    try:
        import treelite
    except ImportError:
        return None, None
    module = type(model).__module__.split(".")[0]
    if module == "lightgbm":
        return best_of(lambda: treelite.frontend.from_lightgbm(model.booster_), repeat=1)
    if module == "xgboost":
        return best_of(lambda: treelite.frontend.from_xgboost(model.get_booster()), repeat=1)
    return best_of(lambda: treelite.sklearn.import_model(model), repeat=1)


def tl2cgen_predictor(name, tl_model, threads, input_dtype):
    """A predictor of the model compiled with gcc (cached by the model's bytes), or a reason why not."""
    try:
        import tl2cgen
    except ImportError:
        return None, "tl2cgen is not installed (pip install 'bandit-tree-tools[bench]')"
    digest = hashlib.sha1(bytes(tl_model.serialize_bytes())).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    library = CACHE / f"tl2cgen-{digest}.so"
    if not library.exists():
        start = time.perf_counter()
        tl2cgen.export_lib(
            tl_model, toolchain="gcc", libpath=str(library), params={"parallel_comp": 32}, nthread=threads
        )
        print(f"  tl2cgen: compiled {name} with gcc in {time.perf_counter() - start:.0f} s ({library})")
    predictor = tl2cgen.Predictor(str(library), nthread=threads)

    def predict(X):
        # tl2cgen's DMatrix asks numpy for a view (copy=False), which numpy 2 refuses where a cast is needed
        dense = np.ascontiguousarray(X, dtype=input_dtype)
        return predictor.predict(tl2cgen.DMatrix(dense, dtype=input_dtype), pred_margin=True)

    return predict, None


def lleaves_python():
    """The python of a virtual environment with lleaves, created on first use, or a reason why not."""
    where = CACHE / "lleaves-venv"
    python = where / "bin" / "python"
    if not (where / ".ready").exists():
        print(f"  lleaves: creating {where} (pip install {' '.join(LLEAVES_REQUIREMENTS)}) ...")
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(where)
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", *LLEAVES_REQUIREMENTS],
                check=True,
                capture_output=True,
                text=True,
                timeout=1200,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
            detail = getattr(error, "stderr", "") or str(error)
            return None, f"lleaves could not be installed: {detail.strip().splitlines()[-1] if detail else error}"
        (where / ".ready").touch()
    return python, None


def lleaves_seconds(model, batches, threads, repeat, time_limit):
    """{rows: seconds} of lleaves' raw-score predict (its results saved beside the batches), or a reason why not.
    Its compilation (single-threaded LLVM, cached once it finishes) may take longer than ``time_limit`` seconds."""
    python, reason = lleaves_python()
    if python is None:
        return None, reason
    work = Path(tempfile.mkdtemp(prefix="lleaves-", dir=CACHE))
    model_file = work / "model.txt"
    model.booster_.save_model(str(model_file))
    paths = []
    for X in batches:
        path = work / f"X{len(X)}.npy"
        np.save(path, X)
        paths.append(str(path))
    runner = work / "run_lleaves.py"
    runner.write_text(LLEAVES_RUNNER)
    digest = hashlib.sha1(model_file.read_bytes()).hexdigest()[:16]
    cache = CACHE / f"lleaves-{digest}.o"
    try:
        done = subprocess.run(
            [str(python), str(runner), str(model_file), str(cache), str(threads), str(repeat), *paths],
            capture_output=True,
            text=True,
            timeout=time_limit,
        )
    except subprocess.TimeoutExpired:
        return None, f"lleaves did not compile and predict within {time_limit:.0f} s (--lleaves-time-limit)"
    if done.returncode != 0:
        return (
            None,
            f"lleaves failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}",
        )
    times = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  lleaves: compiled in {times.pop('compile'):.0f} s (cached as {cache})")
    outputs = {int(rows): np.load(path + ".lleaves.npy") for rows, path in zip(times, paths)}
    return ({int(rows): seconds for rows, seconds in times.items()}, outputs), None


def interleaved_best(predictors, X, repeat):
    """Best seconds of each predictor, the predictors taking turns in every repetition."""
    best = {name: np.inf for name in predictors}
    results = {}
    for name, predict in predictors.items():
        results[name] = predict(X[: min(len(X), 10)])  # warm-up (compilation, thread pools)
    for _ in range(repeat):
        for name, predict in predictors.items():
            start = time.perf_counter()
            results[name] = predict(X)
            best[name] = min(best[name], time.perf_counter() - start)
    return best, results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the largest batch to predict")
    parser.add_argument("--train-rows", type=int, default=50_000, help="rows to train on")
    parser.add_argument("--threads", type=int, default=2, help="threads of every predictor")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of the largest batch (more for small ones)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the trees and rows, for a smoke run")
    parser.add_argument("--no-compiled", action="store_true", help="skip tl2cgen and lleaves")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=MODELS,
        default=list(MODELS),
        help="benchmark only these models (all three by default)",
    )
    parser.add_argument("--lleaves-time-limit", type=float, default=1200, help="seconds for lleaves to compile and run")
    args = parser.parse_args()
    threads = args.threads
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))

    import bandit_tree_tools as btt
    from bandit_tree_tools._demo import collapse_twigs

    scale = 0.1 if args.quick else 1.0
    rows = int(args.rows * scale)
    sizes = sorted({min(1_000, rows), min(10_000, rows), rows})
    X, y = make_classification(n_samples=args.train_rows + rows, n_features=30, n_informative=15, random_state=0)
    X_train, y_train, X_test = X[: args.train_rows], y[: args.train_rows], X[args.train_rows :]
    models = build_models(X_train, y_train, scale, threads, args.only)

    print("\nimport and export, seconds")
    print(f"{'model':30s} {'import':>8s} {'export':>8s} {'edited':>8s} {'treelite import':>16s}")
    prepared = {}
    for name, (model, native_predict) in models.items():
        import_seconds, ensemble = best_of(lambda: btt.from_model(model), repeat=2)
        export_seconds, _ = best_of(lambda: btt.to_model(ensemble), repeat=2)
        edited_seconds, _ = best_of(lambda: btt.to_model(collapse_twigs(ensemble, per_tree=2)), repeat=2)
        treelite_seconds, tl_model = treelite_model(model)
        text = "-" if treelite_seconds is None else f"{treelite_seconds:.2f}"
        print(f"{name:30s} {import_seconds:>8.2f} {export_seconds:>8.2f} {edited_seconds:>8.2f} {text:>16s}")
        prepared[name] = (model, native_predict, ensemble, tl_model)

    print(f"\nraw-score prediction, {threads} threads each; seconds per call (best of repeated calls) and other / ours")
    columns = ("ours", "native", "GTIL", "tl2cgen", "lleaves")
    print(
        f"{'model':30s} {'rows':>8s} "
        + " ".join(f"{c + ' s':>10s}" for c in columns)
        + " "
        + " ".join(f"{c + '/ours':>13s}" for c in columns[1:])
        + f" {'max |diff|':>11s}"
    )
    notes = []
    for name, (model, native_predict, ensemble, tl_model) in prepared.items():
        input_dtype = ensemble.input_dtype
        predictors = {"ours": ensemble.predict_raw, "native": native_predict}
        if tl_model is not None:
            import treelite

            predictors["GTIL"] = lambda X, m=tl_model: treelite.gtil.predict(
                m, np.asarray(X, dtype=input_dtype), nthread=threads, pred_margin=True
            )
            if not args.no_compiled:
                predict, reason = tl2cgen_predictor(name, tl_model, threads, input_dtype)
                if predict is None:
                    notes.append(f"tl2cgen skipped: {reason}")
                else:
                    predictors["tl2cgen"] = predict
        else:
            notes.append("treelite is not installed (pip install 'bandit-tree-tools[bench]'): no GTIL, no tl2cgen")
        lleaves = None
        if "LightGBM" in name and not args.no_compiled:
            lleaves, reason = lleaves_seconds(
                model, [X_test[:n] for n in sizes], threads, args.repeat, args.lleaves_time_limit
            )
            if lleaves is None:
                notes.append(f"lleaves skipped: {reason}")
        for n in sizes:
            batch = X_test[:n]
            repeat = args.repeat if n > 10_000 else 10 * args.repeat
            seconds, results = interleaved_best(predictors, batch, repeat)
            if lleaves is not None:
                seconds["lleaves"], results["lleaves"] = lleaves[0][n], lleaves[1][n]
            ours = results["ours"]
            native = np.asarray(results["native"]).reshape(n, -1)[:, -ours.shape[1] :]
            difference = float(np.abs(native - ours).max()) if n else 0.0
            for other in ("GTIL", "tl2cgen", "lleaves"):
                if other in results:
                    raw = np.asarray(results[other], dtype=np.float64).reshape(n, -1)[:, -ours.shape[1] :]
                    if not np.allclose(raw, native, rtol=1e-4, atol=1e-5):
                        notes.append(
                            f"{name}, {n} rows: {other}'s output differs from the native one by up to "
                            f"{np.abs(raw - native).max():.2g}"
                        )
            times = " ".join(f"{seconds[c]:>10.4f}" if c in seconds else f"{'-':>10s}" for c in columns)
            ratios = " ".join(
                f"{seconds[c] / seconds['ours']:>13.2f}" if c in seconds else f"{'-':>13s}" for c in columns[1:]
            )
            print(f"{name:30s} {n:>8,d} {times} {ratios} {difference:>11.2g}", flush=True)
    for note in dict.fromkeys(notes):
        print(f"note: {note}")
    print(
        "(scikit-learn's predict_proba sums the trees' fractions in threads, in no fixed order: "
        "differences of a few ulps from ours are expected there)"
    )


if __name__ == "__main__":
    main()
