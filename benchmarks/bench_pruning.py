"""Bandit pruning against the unpruned tree, cost-complexity and reduced-error
pruning, following the paper's protocol, plus forests and boosted models.

    python benchmarks/bench_pruning.py [--seeds 10] [--ensemble-seeds 3] [--quick]

Protocol (the paper's, with the changes its ambiguities force): per seed, a
stratified 65:35 train/test split; the training part is split again 70:30
into the rows the tree is fitted on and the validation rows that the bandit
rewards, the CCP alpha choice and REP use (the paper rewards on "0.02% of
the training data", less than one row); ``DecisionTreeClassifier(max_depth=7,
min_samples_leaf=3, min_samples_split=3)``; 1,100 rounds; arms are twigs at
depth >= 4; score = accuracy + 2.5 F1 - logloss/34.5 on the test part.
Then one 100-tree random forest, one LightGBM and one XGBoost model per data
set (fewer seeds). The paper's Table I is printed beside our figures: its
scores are on a log-loss scale it does not state, so compare the gains.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.pruning._inputs import check_target
from bandit_tree_tools.pruning._metrics import model_metrics

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
POLICIES = ["ucb1", "thompson", "softmax", "wsls", "bayes_ucb", "kl_ucb", "epsilon_greedy"]
VARIANTS = [("ucb1_internal", "ucb1", 4), ("ucb1_internal_d1", "ucb1", 1), ("thompson_internal_d1", "thompson", 1)]
EXTRA = ["ucb1_sequential"] + [label for label, _, _ in VARIANTS]
# Table I of the paper (test scores), for the four data sets we have
PAPER = {
    "pima": {
        "unpruned": 1.350,
        "ccp": 1.320,
        "ucb1": 1.447,
        "thompson": 1.526,
        "softmax": 1.460,
        "wsls": 1.429,
        "bayes_ucb": 1.401,
        "kl_ucb": 1.401,
    },
    "breast_cancer": {
        "unpruned": 3.175,
        "ccp": 3.203,
        "ucb1": 3.238,
        "thompson": 3.238,
        "softmax": 3.238,
        "wsls": 3.238,
        "bayes_ucb": 3.238,
        "kl_ucb": 3.238,
    },
    "ionosphere": {
        "unpruned": 2.854,
        "ccp": 2.948,
        "ucb1": 3.038,
        "thompson": 3.038,
        "softmax": 3.038,
        "wsls": 3.133,
        "bayes_ucb": 3.038,
        "kl_ucb": 3.038,
    },
    "titanic": {
        "unpruned": 1.883,
        "ccp": 2.000,
        "ucb1": 2.083,
        "thompson": 2.052,
        "softmax": 1.883,
        "wsls": 2.002,
        "bayes_ucb": 2.052,
        "kl_ucb": 1.932,
    },
}


def load(name):
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        return load_breast_cancer(return_X_y=True)
    if name == "pima":
        frame = pd.read_csv(DATASETS / "pima" / "diabetes.csv")
        return frame.drop(columns="Outcome").to_numpy(float), frame["Outcome"].to_numpy()
    if name == "ionosphere":
        frame = pd.read_csv(DATASETS / "ionosphere" / "ionosphere.csv", header=None)
        X = frame.iloc[:, :34].drop(columns=1).to_numpy(float)  # column 2 is constant
        return X, (frame.iloc[:, 34] == "g").to_numpy(int)
    if name == "titanic":
        frame = pd.read_csv(DATASETS / "titanic" / "train.csv")
        X = pd.DataFrame(
            {
                "pclass": frame["Pclass"],
                "male": (frame["Sex"] == "male").astype(int),
                "age": frame["Age"].fillna(frame["Age"].median()),
                "sibsp": frame["SibSp"],
                "parch": frame["Parch"],
                "fare": frame["Fare"],
                "embarked": frame["Embarked"].fillna("S").map({"S": 0, "C": 1, "Q": 2}),
            }
        )
        return X.to_numpy(float), frame["Survived"].to_numpy()
    raise KeyError(name)


def splits(X, y, seed):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.35, random_state=seed, stratify=y)
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.3, random_state=seed, stratify=y_train)
    return X_fit, y_fit, X_val, y_val, X_test, y_test


def test_metrics(ensemble, X_test, y_test):
    return model_metrics(ensemble, X_test, check_target(ensemble, y_test, len(y_test)))


def run_records(runs, ensemble, X_test, y_test, columns, **keys):
    """One record per method of ``runs`` (method -> (result, seconds); None:
    the unpruned model): ``keys``, the method, the test ``columns`` of its
    model, its time and its number of arms."""
    records = []
    for method, (result, seconds) in runs.items():
        metrics = test_metrics(ensemble if result is None else result.ensemble, X_test, y_test)
        arms = len(result.arms) if result is not None and len(result.arms) else 0
        records.append(dict(**keys, method=method, **{c: metrics[c] for c in columns}, seconds=seconds, arms=arms))
    return records


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def run_trees(names, seeds, n_rounds, log):
    records = []
    for name in names:
        X, y = load(name)
        for seed in range(seeds):
            X_fit, y_fit, X_val, y_val, X_test, y_test = splits(X, y, seed)
            tree = DecisionTreeClassifier(max_depth=7, min_samples_leaf=3, min_samples_split=3, random_state=seed)
            ensemble = btt.from_model(tree.fit(X_fit, y_fit))
            runs = {"unpruned": (None, 0.0)}
            runs["ccp"] = timed(btt.cost_complexity_prune, ensemble, X_fit, y_fit, X_val, y_val)
            runs["rep"] = timed(btt.reduced_error_prune, ensemble, X_val, y_val)
            for policy in POLICIES:
                runs[policy] = timed(
                    btt.bandit_prune,
                    ensemble,
                    X_val,
                    y_val,
                    policy=policy,
                    n_rounds=n_rounds,
                    random_state=seed,
                    progress=False,
                )
            runs["ucb1_sequential"] = timed(
                btt.bandit_prune,
                ensemble,
                X_val,
                y_val,
                policy="ucb1",
                strategy="sequential",
                n_rounds=n_rounds,
                random_state=seed,
                progress=False,
            )
            # beyond the paper: every internal node as an arm (nested arms), and arms up to depth 1
            for label, policy, min_depth in VARIANTS:
                runs[label] = timed(
                    btt.bandit_prune,
                    ensemble,
                    X_val,
                    y_val,
                    policy=policy,
                    n_rounds=n_rounds,
                    candidates="internal",
                    min_depth=min_depth,
                    random_state=seed,
                    progress=False,
                )
            records += run_records(
                runs, ensemble, X_test, y_test, ("score", "accuracy", "leaves"), dataset=name, seed=seed
            )
            log(f"  {name} seed {seed}: done")
    return pd.DataFrame(records)


def ensemble_models(seed):
    from sklearn.ensemble import RandomForestClassifier

    models = {
        "random_forest": RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=seed, n_jobs=1)
    }
    try:
        import lightgbm

        models["lightgbm"] = lightgbm.LGBMClassifier(n_estimators=100, verbose=-1, random_state=seed, n_jobs=1)
    except ImportError:
        pass
    try:
        import xgboost

        models["xgboost"] = xgboost.XGBClassifier(n_estimators=100, max_depth=6, random_state=seed, n_jobs=1)
    except ImportError:
        pass
    return models


def run_ensembles(names, seeds, n_rounds, log):
    records = []
    for name in names:
        X, y = load(name)
        for seed in range(seeds):
            X_fit, y_fit, X_val, y_val, X_test, y_test = splits(X, y, seed)
            for kind, model in ensemble_models(seed).items():
                ensemble = btt.from_model(model.fit(X_fit, y_fit))
                runs = {"unpruned": (None, 0.0)}
                if kind == "random_forest":
                    runs["ccp"] = timed(btt.cost_complexity_prune, ensemble, X_fit, y_fit, X_val, y_val)
                runs["rep"] = timed(btt.reduced_error_prune, ensemble, X_val, y_val)
                for policy in ("ucb1", "thompson"):
                    runs[policy] = timed(
                        btt.bandit_prune,
                        ensemble,
                        X_val,
                        y_val,
                        policy=policy,
                        n_rounds=n_rounds,
                        random_state=seed,
                        progress=False,
                    )
                records += run_records(
                    runs, ensemble, X_test, y_test, ("score", "leaves"), dataset=name, model=kind, seed=seed
                )
            log(f"  {name} seed {seed}: ensembles done")
    return pd.DataFrame(records)


def tree_report(frame):
    lines = []
    methods = ["unpruned", "ccp", "rep", *POLICIES, *EXTRA]
    for name, part in frame.groupby("dataset", sort=False):
        unpruned = part[part.method == "unpruned"]["score"].mean()
        paper = PAPER.get(name, {})
        lines.append(
            f"\n{name} ({part.seed.nunique()} seeds): test score mean +- sd, gain over unpruned; "
            "paper's Table I beside it"
        )
        lines.append(
            f"  {'method':20s} {'score':>15s} {'gain':>7s} {'leaves':>7s} {'arms':>5s} {'time ms':>8s}"
            f" | {'paper':>6s} {'gain':>7s}"
        )
        for method in methods:
            rows = part[part.method == method]
            mean, sd = rows.score.mean(), rows.score.std()
            paper_score = paper.get(method)
            paper_text = (
                f"{paper_score:6.3f} {100 * (paper_score / paper['unpruned'] - 1):+6.1f}%"
                if paper_score is not None
                else f"{'':6s} {'':7s}"
            )
            lines.append(
                f"  {method:20s} {mean:7.3f} +- {sd:5.3f} {100 * (mean / unpruned - 1):+6.1f}% "
                f"{rows.leaves.mean():7.1f} {rows.arms.mean():5.1f} {1000 * rows.seconds.mean():8.1f}"
                f" | {paper_text}"
            )
    return "\n".join(lines)


def summary(frame):
    """Over all data sets and seeds: mean score, paired t-tests against the
    unpruned tree and CCP (the paper's Tables III and IV), and the targets."""
    pivot = frame.pivot_table(index=["dataset", "seed"], columns="method", values="score")
    lines = [
        "\nAll data sets: mean test score, paired t-test against unpruned and against CCP "
        f"({len(pivot)} dataset x seed pairs)"
    ]
    lines.append(
        f"  {'method':20s} {'score':>7s} {'vs unpruned':>12s} {'p':>7s} {'vs CCP':>8s} {'p':>7s}"
        f" | {'paper vs unpruned':>17s} {'paper vs CCP':>13s}"
    )
    paper_mean = {m: np.mean([PAPER[d][m] for d in PAPER]) for m in PAPER["pima"]}
    for method in ["unpruned", "ccp", "rep", *POLICIES, *EXTRA]:
        scores = pivot[method]
        gain_u = 100 * (scores.mean() / pivot["unpruned"].mean() - 1)
        gain_c = 100 * (scores.mean() / pivot["ccp"].mean() - 1)
        p_u = ttest_rel(scores, pivot["unpruned"]).pvalue if method != "unpruned" else np.nan
        p_c = ttest_rel(scores, pivot["ccp"]).pvalue if method != "ccp" else np.nan
        paper_text = ""
        if method in paper_mean:
            paper_text = (
                f"{100 * (paper_mean[method] / paper_mean['unpruned'] - 1):+16.1f}% "
                f"{100 * (paper_mean[method] / paper_mean['ccp'] - 1):+12.1f}%"
            )
        lines.append(
            f"  {method:20s} {scores.mean():7.3f} {gain_u:+11.1f}% {p_u:7.3f} {gain_c:+7.1f}% {p_c:7.3f} | {paper_text}"
        )
    means = pivot.mean()
    policy_means = means[POLICIES]
    lines.append("\nTargets (the paper's setting: the seven policies, twigs at depth >= 4, strategy 'rank')")
    worst = policy_means.idxmin()
    lines.append(
        f"  every policy >= unpruned on average: {'PASS' if policy_means.min() >= means['unpruned'] else 'FAIL'}"
        f" (worst {worst} {policy_means.min():.4f} vs unpruned {means['unpruned']:.4f})"
    )
    best = policy_means.idxmax()
    lines.append(
        f"  best policy beats CCP: {'PASS' if policy_means.max() > means['ccp'] else 'FAIL'}"
        f" (best {best} {policy_means.max():.4f} vs CCP {means['ccp']:.4f})"
    )
    per_dataset = pivot.groupby(level="dataset").mean()
    below = [
        (d, p) for d in per_dataset.index for p in POLICIES if per_dataset.loc[d, p] < per_dataset.loc[d, "unpruned"]
    ]
    if below:
        lines.append("  policies below unpruned on a data set: " + ", ".join(f"{p}@{d}" for d, p in below))
    best_any = means[POLICIES + EXTRA].idxmax()
    lines.append(
        f"  best bandit variant overall: {best_any} {means[best_any]:.4f} vs CCP {means['ccp']:.4f}"
        f" ({'beats' if means[best_any] > means['ccp'] else 'does not beat'} CCP)"
    )
    seconds = frame[frame.method.isin(POLICIES)].seconds
    lines.append(
        f"  1,100 rounds on a depth-7 tree (whole bandit_prune call): median {1000 * seconds.median():.0f} ms,"
        f" max {1000 * seconds.max():.0f} ms"
    )
    return "\n".join(lines)


def ensemble_report(frame):
    lines = ["\nEnsembles (100 trees each): test score mean, gain over unpruned, leaves, time"]
    for (name, kind), part in frame.groupby(["dataset", "model"], sort=False):
        unpruned = part[part.method == "unpruned"]
        lines.append(f"  {name} / {kind} ({part.seed.nunique()} seeds)")
        for method, rows in part.groupby("method", sort=False):
            lines.append(
                f"    {method:10s} {rows.score.mean():7.3f} {100 * (rows.score.mean() / unpruned.score.mean() - 1):+6.2f}%"
                f" leaves {rows.leaves.mean():7.0f} arms {rows.arms.mean():6.0f} {rows.seconds.mean():6.2f} s"
            )
    forest = frame[(frame.model == "random_forest") & frame.method.isin(["ucb1", "thompson"])]
    if len(forest):
        worst = forest.seconds.max()
        lines.append(
            f"\n  bandit pruning a 100-tree forest: max {worst:.2f} s, mean {forest.seconds.mean():.2f} s "
            f"(target < 10 s: {'PASS' if worst < 10 else 'FAIL'})"
        )
    return "\n".join(lines)


def warm_up():
    """Compile (or load from numba's cache) every kernel before timing anything."""
    X, y = load("breast_cancer")
    ensemble = btt.from_model(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X[:300], y[:300]))
    for policy in POLICIES:
        timed(btt.bandit_prune, ensemble, X[300:], y[300:], policy=policy, n_rounds=50, min_depth=1, progress=False)
    timed(btt.bandit_prune, ensemble, X[300:], y[300:], n_rounds=50, min_depth=1, strategy="sequential", progress=False)
    timed(btt.cost_complexity_prune, ensemble, X[:300], y[:300], X[300:], y[300:])
    timed(btt.reduced_error_prune, ensemble, X[300:], y[300:])


def speed(log):
    """The cost of the rounds alone: 1,100 rounds minus 1 round, on depth-7 trees."""
    X, y = load("pima") if (DATASETS / "pima").exists() else load("breast_cancer")
    lines = ["\nSpeed of the rounds (1,100 rounds minus a 1-round call, median of 5, depth-7 trees on pima)"]
    for candidates, min_depth in (("twigs", 4), ("internal", 1)):
        costs, arms = [], 0
        for seed in range(5):
            X_fit, y_fit, X_val, y_val, _, _ = splits(X, y, seed)
            tree = DecisionTreeClassifier(max_depth=7, min_samples_leaf=3, min_samples_split=3, random_state=seed)
            ensemble = btt.from_model(tree.fit(X_fit, y_fit))
            kwargs = dict(candidates=candidates, min_depth=min_depth, random_state=seed, progress=False)
            full, full_seconds = timed(btt.bandit_prune, ensemble, X_val, y_val, n_rounds=1100, **kwargs)
            _, one_seconds = timed(btt.bandit_prune, ensemble, X_val, y_val, n_rounds=1, **kwargs)
            costs.append(full_seconds - one_seconds)
            arms = len(full.arms)
        lines.append(
            f"  {candidates:8s} depth >= {min_depth}: {1000 * np.median(costs):6.1f} ms for 1,100 rounds"
            f" (~{arms} arms; target well under 1 s: {'PASS' if np.median(costs) < 0.5 else 'FAIL'})"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--ensemble-seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1100)
    parser.add_argument("--quick", action="store_true", help="2 seeds, 1 ensemble seed")
    parser.add_argument(
        "--parts", default="trees,speed,ensembles", help="comma-separated subset of trees, speed, ensembles"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="numba threads (these data sets are too small to gain from more)"
    )
    args = parser.parse_args(argv)
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    if args.quick:
        args.seeds, args.ensemble_seeds = 2, 1
    names = ["breast_cancer"] + [n for n in ("pima", "titanic", "ionosphere") if (DATASETS / n).exists()]
    missing = {"pima", "titanic", "ionosphere"} - set(names)
    started = time.perf_counter()
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    if missing:
        log(f"data sets not found under {DATASETS}: {sorted(missing)}; skipped")
    warm_up()
    parts = set(args.parts.split(","))
    if "trees" in parts:
        log("single trees (the paper's protocol)")
        trees = run_trees(names, args.seeds, args.rounds, log)
        print(tree_report(trees))
        print(summary(trees), flush=True)
    if "speed" in parts:
        print(speed(log), flush=True)
    if "ensembles" in parts:
        log("ensembles")
        ensembles = run_ensembles(names, args.ensemble_seeds, args.rounds, log)
        print(ensemble_report(ensembles))
    print(f"\ntotal time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
