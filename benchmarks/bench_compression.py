"""Compression at the user's tolerance: ``btt.prune`` against the baselines,
XGBoost's own pruner and LOP's published figures.

    python benchmarks/bench_compression.py [--datasets adult,california,...] [--models lightgbm,xgboost,rf,hgb]
                                           [--tolerance 0.005] [--skip-slow] [--accelerator] [--rows 1000000]
                                           [--random-states 0,1,2,3] [--data-dir ../shared/datasets]
                                           [--lop-repo PATH] [--forestprune-repo PATH]
                                           [--peer-venvs ~/.cache/bandit_tree_tools/peers] [--peer-timeout 3600]

Protocol (LOP's, Devos et al. 2025): one fixed 60/20/20 train/validation/test
split per data set; the tolerance is 0.5 points of validation balanced
accuracy (R^2 for the California regression); every figure below is on the
test rows. ``california_binary`` is the task LOP reports for California (OpenML's
binary version: is the house value above the median?), on the same features.
``mnist_2v4`` is LOP's Mnist[2v4] (is the digit a 4 or a 2?) on the 2,014 twos and fours
of MNIST's test split, the part of MNIST in the shared data (LOP's has the training
split's too: about seven times as many rows).
Models: LightGBM 300 trees x 63 leaves, XGBoost 300 trees of depth 6,
scikit-learn RandomForest 100 trees, HistGradientBoosting 200 iterations;
``xgboost50`` is LOP's protocol model, XGBoost 50 trees of depth 6 at learning
rate 0.25 (not in the default list).

``test_se`` is the standard error of the test change from the unpruned
model, paired by row: the test rows are a sample too, and a change within
about two of them of the tolerance cannot tell a model past it from one
inside it.

Methods side by side: the unpruned model; ``btt.prune`` (fitting rows =
the training rows), and the model its path holds under LOP's and XGBoost's
rule (``choose(tolerance, margin=0)``: the validation metric itself, averaged
with its neighbours on the path, within the tolerance; no rerun);
``reduced_error_prune``; ``bandit_prune`` with its defaults; for XGBoost models XGBoost's own held-out pruner
(``process_type="update", updater="refresh,prune"`` on the validation rows)
with the ``gamma`` of fewest leaves whose validation balanced accuracy (R^2)
stays within the same tolerance, and again under ``btt.prune``'s own rule (two
standard errors of the paired difference inside the tolerance); then the same
two with the leaves refreshed and the gains measured on the training rows
(``on X_train``: the rows ``btt.prune`` fits on), the validation rows only
choosing ``gamma``. ``export`` says whether the exported native model predicts
like the pruned ensemble.

``--lop-repo PATH``, ``--forestprune-repo PATH``: the peers' own code beside
``btt.prune`` on every XGBoost classifier (``xgboost``, ``xgboost50``), on the
same model (exported as XGBoost JSON) and the same split: LOP's
``LassoCompress`` (a checkout of laudv/tree_compress at commit 1208651; its older
``Compress`` class is not used) and ForestPrune (a checkout of
mazumder-lab/ForestPrune). Each runs in a virtual environment of its own, built
with ``python -m venv`` and pip under ``--peer-venvs`` on first use and reused
(LOP's: numpy < 2, scikit-learn 1.5, XGBoost 2.1, dtai-veritas 0.2.3), by
``benchmarks/_peer_runner.py`` in a subprocess: the project's environment never
imports them. Both fit on the training rows and keep the smallest model whose
validation balanced accuracy is within the tolerance; how each is called (and how
ForestPrune's squared-error solver is given XGBoost's trees) is in that script's
docstring. A path that holds no such checkout is skipped with a message, and so is
a peer that fails or takes more than ``--peer-timeout`` seconds. With a peer,
``btt.prune`` also runs in the other mode (without the training rows, or with them
under ``--validation-only``), and a last table puts them side by side: leaf
compression (leaves of the unpruned model over leaves kept, each tool's leaves
counted on its own pruned model), test change in points, its paired standard
error, seconds (a peer's own work only, timed inside its process; ForestPrune's
numba kernels compiled before, LOP's compile inside its call, as in its own
timings), then each ``btt.prune`` mode's compression over the peer's and its time
as a fraction of the peer's.

``--validation-only``: ``btt.prune`` without the training rows (a model handed
over with a held-out set only); XGBoost's pruner is still measured both ways.

``--random-states``: ``btt.prune`` also with other seeds (they draw the
perturbed training rows, the row orders and the bandit's samples), to see how
much its choice varies; the summary line counts the first.

``--accelerator``: a synthetic problem with a 1,000,000-row validation set;
row evaluations (rows x trees scored) and seconds of ``search="bandit"``
against ``search="exact"`` (in all and choosing the steps, the part the search
changes), and the final validation metric of both.
"""

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.metrics import balanced_accuracy_score, log_loss, r2_score
from sklearn.model_selection import train_test_split

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._engine._metrics import (
    _bound,
    _row_terms,
    metric_value,
    paired_standard_error,
    within,
    within_margin,
)
from bandit_tree_tools.pruning._inputs import check_target

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
# LOP's published leaf compression of XGBoost models (Devos et al., ICML 2025)
# (its California is the binary task of OpenML's version, a house value above the median: our
# "california_binary"; our "california" is the regression and has no LOP figure)
LOP = {"adult": 31.8, "california_binary": 9.2, "electricity": 5.2, "compas": 356.8}
# the peers' own code, each in a virtual environment of its own built from a local checkout of its
# repository: (the file that must be in the checkout, the packages its environment installs);
# LOP's are the versions its pre-release code (laudv/tree_compress, commit 1208651) is known to
# run with
PEERS = {
    "lop": (
        "src/tree_compress/lasso_compress.py",
        ["numpy<2", "scikit-learn==1.5.*", "xgboost==2.1.*", "dtai-veritas==0.2.3", "colorama", "numba"],
    ),
    "forestprune": (
        "code/ForestPrune.py",
        ["numpy<2", "scikit-learn==1.5.*", "xgboost==2.1.*", "pandas<2.3", "numba", "matplotlib"],
    ),
}
PEER_NAMES = {"lop": "LOP LassoCompress", "forestprune": "ForestPrune"}
GAMMAS = [0.0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384]


# ------------------------------------------------------------------- data
def load(name):
    """(X, y, task) with categorical columns as integer codes."""
    if name == "adult":
        columns = [
            "age",
            "workclass",
            "fnlwgt",
            "education",
            "education-num",
            "marital-status",
            "occupation",
            "relationship",
            "race",
            "sex",
            "capital-gain",
            "capital-loss",
            "hours-per-week",
            "native-country",
            "income",
        ]
        parts = [
            pd.read_csv(
                DATASETS / "adult" / file,
                header=None,
                names=columns,
                skipinitialspace=True,
                na_values="?",
                skiprows=skip,
            )
            for file, skip in (("adult.data.gz", 0), ("adult.test.gz", 1))
        ]
        frame = pd.concat(parts, ignore_index=True)
        y = frame.pop("income").str.rstrip(".").eq(">50K").to_numpy(int)
        return _codes(frame), y, "classification"
    if name in ("california", "california_binary"):
        frame = pd.read_csv(DATASETS / "california_housing" / "housing.csv")
        y = frame.pop("median_house_value").to_numpy(float) / 100_000.0
        frame["total_bedrooms"] = frame["total_bedrooms"].fillna(frame["total_bedrooms"].median())
        if name == "california_binary":  # the task LOP measured: is the value above the median?
            return _codes(frame), (y > np.median(y)).astype(int), "classification"
        return _codes(frame), y, "regression"
    if name == "electricity":
        frame = pd.read_csv(DATASETS / "electricity" / "electricity.csv")
        y = frame.pop("class").eq("UP").to_numpy(int)
        return frame.to_numpy(float), y, "classification"
    if name == "compas":
        frame = pd.read_csv(DATASETS / "tsdt" / "compas-binary.csv", sep=";")
        y = frame.pop(frame.columns[-1]).to_numpy(int)
        return frame.to_numpy(float), y, "classification"
    if name == "mnist_2v4":  # LOP's Mnist[2v4]: is the digit a 4 (or a 2)?
        X, digits = mnist(DATASETS / "mnist")
        keep = (digits == 2) | (digits == 4)
        return X[keep].astype(float), (digits[keep] == 4).astype(int), "classification"
    if name == "synthetic":
        X, y = make_classification(24_000, 20, n_informative=10, flip_y=0.08, random_state=0)
        return X, y, "classification"
    raise ValueError(name)


def mnist(folder):
    """(images, labels) of MNIST's test split: (10000, 784) uint8 pixels, row-major 28 x 28,
    and (10000,) uint8 digits, read from the idx files of ``folder``."""
    images = _idx(Path(folder) / "t10k-images-idx3-ubyte.gz", magic=2051, header=16)
    labels = _idx(Path(folder) / "t10k-labels-idx1-ubyte.gz", magic=2049, header=8)
    return images.reshape(len(labels), -1), labels


def _idx(path, magic, header):
    with gzip.open(path) as file:
        buffer = file.read()
    found = int.from_bytes(buffer[:4], "big")
    if found != magic:
        raise ValueError(f"{path} is not an idx file of magic {magic} (its first four bytes read {found})")
    return np.frombuffer(buffer, np.uint8, offset=header)


def _codes(frame):
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].astype("category").cat.codes.replace(-1, np.nan)
    return out.to_numpy(float)


def split(X, y, task):
    stratify = y if task == "classification" else None
    X_train, X_rest, y_train, y_rest = train_test_split(X, y, test_size=0.4, random_state=0, stratify=stratify)
    stratify = y_rest if task == "classification" else None
    X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0, stratify=stratify)
    return X_train, y_train, X_val, y_val, X_test, y_test


def make_model(kind, task):
    classify = task == "classification"
    if kind == "lightgbm":
        import lightgbm as lgb

        cls = lgb.LGBMClassifier if classify else lgb.LGBMRegressor
        return cls(n_estimators=300, num_leaves=63, verbose=-1, random_state=0, n_jobs=2)
    if kind in ("xgboost", "xgboost50"):  # xgboost50: LOP's protocol models
        import xgboost as xgb

        cls = xgb.XGBClassifier if classify else xgb.XGBRegressor
        if kind == "xgboost50":
            return cls(n_estimators=50, max_depth=6, learning_rate=0.25, random_state=0, n_jobs=2)
        return cls(n_estimators=300, max_depth=6, random_state=0, n_jobs=2)
    if kind == "rf":
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        cls = RandomForestClassifier if classify else RandomForestRegressor
        return cls(n_estimators=100, random_state=0, n_jobs=2)
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        cls = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
        return cls(max_iter=200, early_stopping=False, random_state=0)
    raise ValueError(kind)


# ---------------------------------------------------------------- scoring
def quality(ensemble, X, y, task):
    """(test balanced accuracy or R^2, test log-loss or NaN)."""
    if task == "classification":
        proba = ensemble.predict_proba(X)
        predicted = ensemble.classes_[np.argmax(proba, axis=1)]
        return balanced_accuracy_score(y, predicted), log_loss(y, np.clip(proba, 1e-15, 1 - 1e-15))
    return r2_score(y, ensemble.predict(X)), np.nan


def test_standard_error(ensemble, pruned, X, y, task):
    """Standard error of the test score's change from ``ensemble`` to
    ``pruned``, paired by row (the rule btt.prune holds on the validation
    rows): how far the test change itself is from the model's true change."""
    metric = "balanced_accuracy" if task == "classification" else "r2"
    target = check_target(ensemble, y, len(y))
    terms = [_row_terms(metric, model, model.predict_raw(X), target) for model in (pruned, ensemble)]
    return paired_standard_error(metric, terms[0], terms[1], target)


def exports_exactly(ensemble, X):
    native = btt.to_model(ensemble)
    back = btt.from_model(native)
    return bool(np.array_equal(back.predict_raw(X), ensemble.predict_raw(X)))


def xgboost_prune(model, X_fit, y_fit, X_val, y_val, task, tolerance):
    """XGBoost's own refresh+prune: leaves refreshed and gains measured on
    ``X_fit`` (the validation rows, or the training rows), gamma chosen on the
    validation rows under the tolerance.

    Returns ({rule: (leaves, gamma, pruned model imported)}, seconds). Two rules: the plain one (validation
    metric within the tolerance) and btt.prune's own (held two standard errors of the paired
    difference inside it), so that both pruners are also compared under the same guard."""
    import xgboost as xgb

    booster = model.get_booster()
    objective = json.loads(booster.save_config())["learner"]["objective"]["name"]
    dfit = xgb.DMatrix(X_fit, label=y_fit)
    ensemble = btt.from_model(model)
    metric = "balanced_accuracy" if task == "classification" else "r2"
    target = check_target(ensemble, y_val, len(y_val))
    base_raw = ensemble.predict_raw(X_val)
    base_terms = _row_terms(metric, ensemble, base_raw, target)
    bound = _bound(metric, metric_value(metric, ensemble, base_raw, target, base_terms), tolerance)
    best = {}
    started = time.perf_counter()
    for gamma in GAMMAS:
        params = {
            "objective": objective,
            "process_type": "update",
            "updater": "refresh,prune",
            "refresh_leaf": 1,
            "gamma": gamma,
            "max_depth": 6,
            "nthread": 2,
        }
        pruned = xgb.train(params, dfit, num_boost_round=booster.num_boosted_rounds(), xgb_model=booster.copy())
        imported = btt.from_model(pruned)
        raw = imported.predict_raw(X_val)
        terms = _row_terms(metric, imported, raw, target)
        value = metric_value(metric, imported, raw, target, terms)
        rules = {
            "plain": within(metric, value, bound),
            "margin": within_margin(metric, value, paired_standard_error(metric, terms, base_terms, target), bound),
        }
        for rule, ok in rules.items():
            if ok and (rule not in best or imported.n_leaves < best[rule][0]):
                best[rule] = (imported.n_leaves, gamma, imported)
    return best, time.perf_counter() - started


# ------------------------------------------------------------------ peers
def peer_python(peer, venvs):
    """The interpreter of ``peer``'s virtual environment under ``venvs``, built with
    ``python -m venv`` and pip on first use and reused while its package list is the same."""
    venv = Path(venvs).expanduser() / peer
    python = venv / "bin" / "python"
    stamp = venv / "bench_compression-packages.txt"
    packages = PEERS[peer][1]
    if python.exists() and stamp.exists() and stamp.read_text() == "\n".join(packages):
        return python
    print(f"building {peer}'s environment in {venv} ({', '.join(packages)})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *packages], check=True
    )
    stamp.write_text("\n".join(packages))
    return python


def run_peers(model, splits, tolerance, peers, venvs, timeout):
    """{peer: (result dict, validation classes, test classes)} of each peer whose checkout is
    given, run by ``_peer_runner.py`` in its own environment on ``model`` exported as XGBoost
    JSON and on the same split; a peer that is absent, fails or runs out of time is left out
    with a printed message."""
    X_train, y_train, X_val, y_val, X_test, _ = splits
    out = {}
    with tempfile.TemporaryDirectory(prefix="btt-peers-") as folder:
        folder = Path(folder)
        model.get_booster().save_model(folder / "model.json")
        for name, array in (
            ("X_train", X_train),
            ("y_train", y_train),
            ("X_val", X_val),
            ("y_val", y_val),
            ("X_test", X_test),
        ):
            np.save(folder / f"{name}.npy", np.asarray(array))
        (folder / "params.json").write_text(json.dumps({"tolerance": tolerance, "seed": 0}))
        for peer, repo in peers.items():
            repo = Path(repo).expanduser().resolve()
            if not (repo / PEERS[peer][0]).exists():
                print(f"{PEER_NAMES[peer]} skipped: no {PEERS[peer][0]} in {repo}", flush=True)
                continue
            for stale in ("result.json", "val_pred.npy", "test_pred.npy"):
                (folder / stale).unlink(missing_ok=True)
            command = [
                str(peer_python(peer, venvs)),
                str(Path(__file__).with_name("_peer_runner.py")),
                peer,
                str(repo),
                str(folder),
            ]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                print(f"{PEER_NAMES[peer]} skipped: still running after {timeout:.0f} s (--peer-timeout)", flush=True)
                continue
            if done.returncode != 0:
                print(f"{PEER_NAMES[peer]} failed (exit {done.returncode}):\n{done.stderr[-2000:]}", flush=True)
                continue
            result = json.loads((folder / "result.json").read_text())
            out[peer] = (result, np.load(folder / "val_pred.npy"), np.load(folder / "test_pred.npy"))
    return out


# ------------------------------------------------------------------- runs
def run_case(
    name,
    kind,
    tolerance,
    skip_slow,
    random_states=(0,),
    validation_only=False,
    peers=None,
    venvs=None,
    peer_timeout=3600.0,
):
    X, y, task = load(name)
    splits = split(X, y, task)
    X_train, y_train, X_val, y_val, X_test, y_test = splits
    model = make_model(kind, task).fit(X_train, y_train)
    ensemble = btt.from_model(model)
    rows = []

    def add(method, pruned, seconds, note=""):
        score, loss = quality(pruned, X_test, y_test, task)
        rows.append(
            {
                "data": name,
                "model": kind,
                "method": method,
                "leaves": pruned.n_leaves,
                "trees": pruned.n_trees,
                "ratio": ensemble.n_leaves / pruned.n_leaves,
                "test_score": score,
                "test_se": test_standard_error(ensemble, pruned, X_test, y_test, task)
                if pruned is not ensemble
                else 0.0,
                "test_log_loss": loss,
                "seconds": seconds,
                "export": exports_exactly(pruned, X_test) if method != "unpruned" else "",
                "note": note,
            }
        )

    add("unpruned", ensemble, 0.0)
    for state in random_states:  # the first is the benchmark's; others show how much the choice varies
        started = time.perf_counter()
        training = {} if validation_only else dict(X_train=X_train, y_train=y_train)
        result = btt.prune(model, X_val, y_val, tolerance=tolerance, random_state=state, progress=False, **training)
        add(
            "btt.prune" if state == random_states[0] else f"btt.prune, random_state={state}",
            result.ensemble,
            time.perf_counter() - started,
            f"val {result.params['metric']} {result.path['metric'].iat[0]:.4f}->"
            f"{result.path['metric'].iat[result.chosen]:.4f}, {len(result.path)} steps, "
            f"refit {result.params['refit']}, reweighted {result.params['reweighted']}, "
            f"ranked on {result.params['ranked_on']}",
        )
        if state == random_states[0] and peers:  # beside the peers: the other mode too
            started = time.perf_counter()
            other = {} if not validation_only else dict(X_train=X_train, y_train=y_train)
            result_other = btt.prune(
                model, X_val, y_val, tolerance=tolerance, random_state=state, progress=False, **other
            )
            add(
                "btt.prune, with training rows" if validation_only else "btt.prune, validation rows only",
                result_other.ensemble,
                time.perf_counter() - started,
            )
        if state == random_states[0]:  # LOP's and XGBoost's rule, from the same path: no margin
            plain = result.choose(tolerance, margin=0.0)
            add(
                "btt.prune, margin 0",
                plain.ensemble,
                0.0,
                f"val {plain.path['metric'].iat[plain.chosen]:.4f}, refit {plain.params['refit']}, "
                f"reweighted {plain.params['reweighted']}, ranked on {plain.params['ranked_on']}",
            )
    if not (skip_slow and kind == "rf"):
        started = time.perf_counter()
        rep = btt.reduced_error_prune(model, X_val, y_val)
        add("reduced_error_prune", rep.ensemble, time.perf_counter() - started)
    if task == "classification":
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            paper = btt.bandit_prune(model, X_val, y_val, random_state=0, progress=False)
        add("bandit_prune", paper.ensemble, time.perf_counter() - started)
    if kind.startswith("xgboost"):
        for rows_name, X_fit, y_fit in (("", X_val, y_val), (" on X_train", X_train, y_train)):
            best, seconds = xgboost_prune(model, X_fit, y_fit, X_val, y_val, task, tolerance)
            for rule, suffix in (("plain", ""), ("margin", ", margin")):
                if rule in best:
                    add(f"xgboost refresh,prune{rows_name}{suffix}", best[rule][2], seconds, f"gamma {best[rule][1]}")
        if name in LOP and kind == "xgboost":
            rows.append({"data": name, "model": kind, "method": "LOP (published)", "ratio": LOP[name]})
    if peers and kind.startswith("xgboost") and task == "classification":
        metric_target = check_target(ensemble, y_test, len(y_test))
        base_terms = _row_terms("balanced_accuracy", ensemble, ensemble.predict_raw(X_test), metric_target)
        for peer, (result, _, test_pred) in run_peers(model, splits, tolerance, peers, venvs, peer_timeout).items():
            terms = (test_pred == metric_target.codes).astype(np.float64)
            rows.append(
                {
                    "data": name,
                    "model": kind,
                    "method": PEER_NAMES[peer],
                    "leaves": result["leaves_after"],
                    "trees": result["trees_after"],
                    "ratio": ensemble.n_leaves / result["leaves_after"],
                    "test_score": balanced_accuracy_score(y_test, ensemble.classes_[test_pred]),
                    "test_se": paired_standard_error("balanced_accuracy", terms, base_terms, metric_target),
                    "test_log_loss": np.nan,
                    "seconds": result["seconds"],
                    "export": "",
                    "note": f"its leaves before {result['leaves_before']}, val {result['val_score']:.4f}, "
                    f"conversion {result['conversion_error']:.1e}",
                }
            )
    elif peers:
        print(f"peers skipped on {name} {kind}: they run on XGBoost classifiers only", flush=True)
    return rows


def accelerator(n_rows, tolerance):
    """Bandit against exact search on a 1,000,000-row validation set."""
    import lightgbm as lgb

    X, y = make_classification(n_rows + 40_000, 20, n_informative=10, flip_y=0.05, random_state=1)
    X_train, y_train, X_val, y_val = X[:40_000], y[:40_000], X[40_000:], y[40_000:]
    model = lgb.LGBMClassifier(n_estimators=100, num_leaves=31, verbose=-1, random_state=0).fit(X_train, y_train)
    btt.prune(model, X_val[:20_000], y_val[:20_000], progress=False)  # numba compiles outside the timings
    out = []
    for search in ("bandit", "exact"):
        started = time.perf_counter()
        # no training rows: the model's outputs on a perturbed copy of the million validation rows rank
        # the removals, and every validation row checks
        result = btt.prune(model, X_val, y_val, tolerance=tolerance, search=search, random_state=0, progress=False)
        seconds = time.perf_counter() - started
        out.append(
            {
                "search": search,
                "seconds": seconds,
                "scoring_seconds": result.params["scoring_seconds"],
                "other_seconds": seconds - result.params["scoring_seconds"],
                "row_evaluations": result.params["row_evaluations"],
                "leaves": result.ensemble.n_leaves,
                "val_metric": result.path["metric"].iat[result.chosen],
                "steps": len(result.path),
            }
        )
    frame = pd.DataFrame(out).set_index("search")
    print(f"\nAccelerator: {n_rows:,} validation rows, LightGBM 100 x 31 ({model.booster_.num_trees()} trees)")
    print(frame.to_string(float_format=lambda v: f"{v:,.4f}"))
    exact, bandit = frame.loc["exact"], frame.loc["bandit"]
    scoring = exact.scoring_seconds / bandit.scoring_seconds
    print(
        f"exact / bandit: row evaluations {exact.row_evaluations / bandit.row_evaluations:.1f}x, "
        f"time {exact.seconds / bandit.seconds:.1f}x (choosing the steps {scoring:.1f}x; the rest, "
        f"routing, checks, re-weighted start and summary, "
        f"{exact.other_seconds:.1f} s and {bandit.other_seconds:.1f} s); validation metric difference "
        f"{abs(exact.val_metric - bandit.val_metric):.4f}"
    )


def main():
    global DATASETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="adult,california,california_binary,electricity,compas,synthetic")
    parser.add_argument("--models", default="lightgbm,xgboost,rf,hgb")
    parser.add_argument("--tolerance", type=float, default=0.005)
    parser.add_argument("--skip-slow", action="store_true", help="no reduced-error pruning of random forests")
    parser.add_argument("--accelerator", action="store_true", help="only the 1,000,000-row bandit/exact comparison")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--validation-only",
        action="store_true",
        help="btt.prune without X_train, y_train: the model and its validation rows only",
    )
    parser.add_argument("--data-dir", default=str(DATASETS), help="the shared data sets' folder")
    parser.add_argument("--lop-repo", help="a checkout of laudv/tree_compress (commit 1208651): run its LassoCompress")
    parser.add_argument("--forestprune-repo", help="a checkout of mazumder-lab/ForestPrune: run its solver")
    parser.add_argument(
        "--peer-venvs",
        default="~/.cache/bandit_tree_tools/peers",
        help="where the peers' virtual environments are built (once) and reused",
    )
    parser.add_argument("--peer-timeout", type=float, default=3600.0, help="seconds a peer may take on one model")
    parser.add_argument(
        "--random-states",
        default="0",
        help="btt.prune's random_state; more than one also runs it with the others (the summary line counts the first)",
    )
    args = parser.parse_args()
    DATASETS = Path(args.data_dir)
    if args.accelerator:
        accelerator(args.rows, args.tolerance)
        return
    peers = {peer: repo for peer, repo in (("lop", args.lop_repo), ("forestprune", args.forestprune_repo)) if repo}
    rows = []
    for name in args.datasets.split(","):
        for kind in args.models.split(","):
            case = run_case(
                name,
                kind,
                args.tolerance,
                args.skip_slow,
                tuple(int(state) for state in args.random_states.split(",")),
                args.validation_only,
                peers,
                args.peer_venvs,
                args.peer_timeout,
            )
            print(pd.DataFrame(case).to_string(index=False, float_format=lambda v: f"{v:.4f}"), flush=True)
            rows += case
    frame = pd.DataFrame(rows)
    base = frame[frame.method == "unpruned"].set_index(["data", "model"])
    for method in ("btt.prune", "btt.prune, margin 0"):
        chosen = frame[frame.method == method].set_index(["data", "model"])
        drop = base.test_score - chosen.test_score
        print(
            f"\n{method}: median leaf compression {chosen.ratio.median():.1f}x (mean {chosen.ratio.mean():.1f}x) "
            f"over {len(chosen)} cases; test score drop: max {drop.max():.4f}, median {drop.median():.4f}"
            + (f"; slowest {chosen.seconds.max():.1f} s" if method == "btt.prune" else "")
        )
        for (name, kind), fall in drop[drop > args.tolerance].items():
            se = chosen.test_se[(name, kind)]
            print(
                f"  {name} {kind}: the test score falls {fall:.4f}, {(fall - args.tolerance) / se:.1f} "
                f"standard errors of the test change ({se:.4f}) beyond the tolerance"
            )
        for peer_method in sorted(m for m in frame.method.unique() if m.startswith("xgboost refresh,prune")):
            peer = frame[frame.method == peer_method].set_index(["data", "model"])
            cases = peer.index.intersection(chosen.index)
            behind = [
                f"{name} {chosen.leaves[(name, kind)]:.0f} vs {peer.leaves[(name, kind)]:.0f} "
                f"(its test change {peer.test_score[(name, kind)] - base.test_score[(name, kind)]:+.4f})"
                for name, kind in cases
                if chosen.leaves[(name, kind)] >= peer.leaves[(name, kind)]
            ]
            print(
                f"{method}: fewer leaves than {peer_method} in {len(cases) - len(behind)} of {len(cases)}"
                + (f"; not on {', '.join(behind)}" if behind else "")
            )
        lop = [
            f"{name} {chosen.ratio[(name, 'xgboost')]:.1f}x vs {ratio}x"
            for name, ratio in LOP.items()
            if (name, "xgboost") in chosen.index
        ]
        if lop:
            print(f"{method} against LOP's published compression (XGBoost): {', '.join(lop)}")
    if peers:
        peer_table(frame, base)


def peer_table(frame, base):
    """btt.prune (with and without the training rows), XGBoost's pruner and the peers on the
    same models: leaf compression, test change in points, seconds; then each peer against
    btt.prune (its compression / the peer's, the peer's seconds / its)."""
    ours = [
        m
        for m in ("btt.prune", "btt.prune, with training rows", "btt.prune, validation rows only")
        if m in set(frame.method)
    ]
    # "margin 0": the model btt.prune's path holds under the peers' own rule (the validation
    # score within the tolerance, no margin), from the same run and so its seconds
    shown = ours + ["btt.prune, margin 0", "xgboost refresh,prune on X_train", *PEER_NAMES.values()]
    table = frame[frame.method.isin(shown) & frame.model.str.startswith("xgboost")].copy()
    if table.empty:
        return
    ran = table[table.method == "btt.prune"].set_index(["data", "model"]).seconds
    plain = table.method == "btt.prune, margin 0"
    table.loc[plain, "seconds"] = ran.reindex(list(zip(table.data[plain], table.model[plain]))).to_numpy()
    ours = [*ours, "btt.prune, margin 0"]
    table["test change"] = 100 * (
        table.test_score - base.test_score.reindex(list(zip(table.data, table.model))).to_numpy()
    )
    table["test se"] = 100 * table.test_se
    print("\nPeers on the same XGBoost models and splits (test change in points):")
    print(
        table[["data", "model", "method", "leaves", "ratio", "test change", "test se", "seconds"]].to_string(
            index=False, float_format=lambda v: f"{v:.2f}"
        )
    )
    for (name, kind), case in table.groupby(["data", "model"], sort=False):
        case = case.set_index("method")
        for peer in PEER_NAMES.values():
            if peer not in case.index:
                continue
            versus = [
                f"{method}: {case.ratio[method] / case.ratio[peer]:.2f}x its compression in "
                f"{case.seconds[method] / case.seconds[peer]:.3f} of its time"
                for method in ours
                if method in case.index
            ]
            print(
                f"{name} {kind} against {peer} ({case.ratio[peer]:.1f}x in {case.seconds[peer]:.1f} s): "
                + "; ".join(versus)
            )


if __name__ == "__main__":
    main()
