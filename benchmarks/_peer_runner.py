"""Runs one peer pruner on one exported XGBoost model, inside the peer's own
virtual environment (``bench_compression.py --lop-repo/--forestprune-repo``
builds it and starts this script; the project's environment never imports a
peer).

    python _peer_runner.py {lop,forestprune} REPO FOLDER

FOLDER holds what ``bench_compression.py`` wrote:

- ``model.json``: the XGBoost model (binary:logistic), as its own ``save_model`` writes it;
- ``X_train.npy``, ``y_train.npy``, ``X_val.npy``, ``y_val.npy``, ``X_test.npy``: the
  benchmark's split (features float64, labels 0/1); the test labels stay out;
- ``params.json``: ``{"tolerance": points of validation balanced accuracy as a fraction,
  "seed": int}``.

It writes ``result.json`` (``leaves_before``, ``leaves_after``, ``trees_after``,
``seconds`` of the peer's own work, ``val_score``, ``conversion_error``: the
largest difference between the peer's reading of the model and XGBoost's own
margin on the validation rows) and ``val_pred.npy``, ``test_pred.npy``: the
pruned model's predicted classes (0/1).

Both peers are given the same inputs and the same rule: fit on the training
rows, keep the smallest model whose validation balanced accuracy is at most
``tolerance`` below the unpruned model's (LOP's rule).

- ``lop``: ``tree_compress.LassoCompress`` (the checkout's ``src/``) on the model as
  Veritas reads it, with balanced accuracy as its metric and ``ref - value > tolerance``
  as its ``isworse``, two rounds (``max_rounds=2``), as its authors' experiments call it.
- ``forestprune``: the solver of ``code/ForestPrune.py`` (``solve_weighted``: which
  depth layers of each tree to keep, a penalty on the nodes kept; ``prune_polish``: a
  ridge re-weighting of the trees kept). It is written for squared error on scikit-learn
  trees; here its inputs are built from XGBoost's trees: a tree's value at each depth of a
  row's path is the node's XGBoost weight (an inner node's ``base_weights`` times the
  learning rate: what it would predict as a leaf), the root's value is the tree's first layer (its own
  experiments' trees, fitted to residuals, drop a root value near zero; XGBoost's do not),
  and the squared error is to the unpruned model's margin on the training rows (the
  model's own outputs: the labels are 0/1, the margins are not). The penalties are its
  notebook's: 100 values from 10^2.5 down to 10^-6.
"""

import json
import random
import sys
import time
from pathlib import Path

import numpy as np


def main():
    peer, repo, folder = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    params = json.loads((folder / "params.json").read_text())
    data = {name: np.load(folder / f"{name}.npy") for name in ("X_train", "y_train", "X_val", "y_val", "X_test")}
    booster = load_booster(folder / "model.json")
    run = {"lop": run_lop, "forestprune": run_forestprune}[peer]
    result, val_pred, test_pred = run(repo, booster, data, params)
    np.save(folder / "val_pred.npy", val_pred.astype(np.int64))
    np.save(folder / "test_pred.npy", test_pred.astype(np.int64))
    (folder / "result.json").write_text(json.dumps(result))


def load_booster(path):
    """The model in this environment's XGBoost; a model file written by a newer
    XGBoost, whose ``base_score`` is a one-element vector (``"[5E-1]"``), is read
    with the scalar instead."""
    import xgboost as xgb

    model = json.loads(Path(path).read_text())
    parameters = model["learner"]["learner_model_param"]
    base = parameters.get("base_score", "")
    if base.startswith("["):
        values = base.strip("[]").split(",")
        if len(values) != 1:
            raise SystemExit(f"a model with {len(values)} base scores: only binary models are run here")
        parameters["base_score"] = values[0]
    booster = xgb.Booster()
    booster.load_model(bytearray(json.dumps(model).encode()))
    return booster


def margin(booster, X):
    import xgboost as xgb

    return booster.predict(xgb.DMatrix(X), output_margin=True)


def balanced_accuracy(y, predicted):
    from sklearn.metrics import balanced_accuracy_score

    return float(balanced_accuracy_score(y, predicted))


# ------------------------------------------------------------------ LOP
def run_lop(repo, booster, data, params):
    sys.path.insert(0, str(repo / "src"))
    import tree_compress
    import veritas

    tolerance = params["tolerance"]
    X = {name: data[name].astype(veritas.FloatT) for name in ("X_train", "X_val", "X_test")}
    at = veritas.get_addtree(booster, silent=True)
    conversion = float(np.max(np.abs(at.eval(X["X_val"])[:, 0] - margin(booster, X["X_val"]))))
    # the test slot of its Data holds the validation rows: it only reports on them, and the
    # test rows' labels stay with the benchmark
    compress_data = tree_compress.Data(
        X["X_train"], data["y_train"], X["X_val"], data["y_val"], X["X_val"], data["y_val"]
    )
    started = time.perf_counter()
    compressor = tree_compress.LassoCompress(
        compress_data,
        at,
        metric=balanced_accuracy,
        isworse=lambda value, reference: reference - value > tolerance,
        linclf_type="Lasso",
        seed=params["seed"],
        silent=True,
    )
    compressor.no_convergence_warning = True
    pruned = compressor.compress(max_rounds=2)
    seconds = time.perf_counter() - started
    val_pred = (pruned.eval(X["X_val"])[:, 0] >= 0.0).astype(int)
    test_pred = (pruned.eval(X["X_test"])[:, 0] >= 0.0).astype(int)
    result = {
        "leaves_before": int(at.num_leafs()),
        "leaves_after": int(pruned.num_leafs()),
        "trees_after": len(pruned),
        "seconds": seconds,
        "val_score": balanced_accuracy(data["y_val"], val_pred),
        "conversion_error": conversion,
    }
    return result, val_pred, test_pred


# ---------------------------------------------------------- ForestPrune
class _Trees:
    """XGBoost's trees as arrays: per tree, each node's depth, whether it is a
    leaf, and its value (its weight times the learning rate)."""

    def __init__(self, booster):
        model = json.loads(booster.save_raw("json"))
        trees = model["learner"]["gradient_booster"]["model"]["trees"]
        eta = float(json.loads(booster.save_config())["learner"]["gradient_booster"]["tree_train_param"]["eta"])
        self.parents, self.depths, self.is_leaf, self.values = [], [], [], []
        for tree in trees:
            left = np.asarray(tree["left_children"])
            right = np.asarray(tree["right_children"])
            depth = np.zeros(len(left), dtype=np.int64)
            parent = np.full(len(left), -1, dtype=np.int64)
            for node in range(len(left)):  # XGBoost numbers a node after its parent
                for child in (left[node], right[node]):
                    if child != -1:
                        parent[child] = node
                        depth[child] = depth[node] + 1
            leaf = left == -1
            # an inner node's base_weight is its Newton weight before the learning rate; a
            # leaf's is its value (the learning rate applied), as its split_condition is,
            # except a tree that is a single leaf, whose base_weight is before it
            weight = np.asarray(tree["base_weights"], dtype=np.float64)
            leaf_value = np.asarray(tree["split_conditions"], dtype=np.float64)
            as_value = np.isclose(weight, leaf_value, rtol=1e-5, atol=1e-7)
            scaled = np.isclose(weight * eta, leaf_value, rtol=1e-5, atol=1e-7)
            if not np.all(as_value[leaf] | scaled[leaf]):
                raise SystemExit("the leaves' base_weights differ from their values: another XGBoost format")
            value = np.where(leaf, leaf_value, weight * eta)
            self.parents.append(parent)
            self.depths.append(depth)
            self.is_leaf.append(leaf)
            self.values.append(value)
        self.max_depth = int(max(depth.max() for depth in self.depths))

    def layers(self, booster, X):
        """(trees, rows, max_depth + 1): column 0 the root's value, column d the
        change of the tree's value from depth d - 1 to depth d on the row's path
        (0 past its leaf); a row's columns add up to its leaf's value."""
        import xgboost as xgb

        leaves = booster.predict(xgb.DMatrix(X), pred_leaf=True).astype(np.int64).reshape(len(X), -1)
        out = np.zeros((len(self.values), len(X), self.max_depth + 1))
        for t, (parent, depth, value) in enumerate(zip(self.parents, self.depths, self.values)):
            by_depth = np.zeros((len(value), self.max_depth + 1))  # the value at each depth of the path
            for node in range(len(value)):  # parents first
                if parent[node] >= 0:
                    by_depth[node] = by_depth[parent[node]]
                by_depth[node, depth[node] :] = value[node]
            path = by_depth[leaves[:, t]]
            out[t, :, 0] = path[:, 0]
            out[t, :, 1:] = np.diff(path, axis=1)
        return out

    def nodes_per_layer(self):
        """(trees, max_depth + 1, max_depth + 1) diagonal: the nodes a layer adds."""
        out = np.zeros((len(self.depths), self.max_depth + 1, self.max_depth + 1))
        for t, depth in enumerate(self.depths):
            counts = np.bincount(depth, minlength=self.max_depth + 1)
            out[t] = np.diag(counts.astype(np.float64))
        return out

    def leaves(self, kept):
        """Leaves of the trees truncated to ``kept[t]`` layers (0: the tree is removed)."""
        total = 0
        for depth, leaf, layers in zip(self.depths, self.is_leaf, kept):
            if layers > 0:
                cut = layers - 1  # the deepest depth kept
                total += int(np.sum(depth == cut) + np.sum(leaf & (depth < cut)))
        return total


def run_forestprune(repo, booster, data, params):
    import pandas as pd

    sys.path.insert(0, str(repo / "code"))
    import ForestPrune as fp

    tolerance, seed = params["tolerance"], params["seed"]
    trees = _Trees(booster)
    n_layers = trees.max_depth + 1
    shape = [type("Tree", (), {"max_depth": n_layers})() for _ in trees.values]  # what solve_weighted reads
    W = trees.nodes_per_layer()
    normalization = float(sum(len(value) for value in trees.values))
    # its numba kernels compile once, outside the timing, on a small problem
    fp.solve_weighted(pd.Series(np.zeros(4)), shape[:2], np.zeros((2, 4, n_layers)), 1.0, 1.0, W[:2], normalization)

    started = time.perf_counter()
    random.seed(seed)
    layers = {name: trees.layers(booster, data[name]) for name in ("X_train", "X_val", "X_test")}
    base = {name: margin(booster, data[name]) - layers[name].sum(axis=(0, 2)) for name in layers}
    target = pd.Series(margin(booster, data["X_train"]) - base["X_train"])
    val_score = balanced_accuracy(data["y_val"], margin(booster, data["X_val"]) > 0)
    best = None
    for alpha in np.flip(np.logspace(-6, 2.5, 100)):
        kept, _ = fp.solve_weighted(target, shape, layers["X_train"], alpha, 1.0, W, normalization)
        coef = fp.prune_polish(layers["X_train"], target, kept, 1.0)
        val_raw = _polished(layers["X_val"], kept, coef) + base["X_val"]
        score = balanced_accuracy(data["y_val"], val_raw > 0)
        n_leaves = trees.leaves(kept.sum(axis=1).astype(int))
        if val_score - score <= tolerance and (best is None or (n_leaves, -score) < (best[0], -best[1])):
            best = (n_leaves, score, kept.copy(), np.asarray(coef).copy())
    seconds = time.perf_counter() - started
    if best is None:  # no penalty kept the validation score: the unpruned model
        kept = np.ones((len(shape), n_layers))
        best = (trees.leaves(kept.sum(axis=1).astype(int)), val_score, kept, np.ones(len(shape)))
    n_leaves, score, kept, coef = best
    val_pred = (_polished(layers["X_val"], kept, coef) + base["X_val"] > 0).astype(int)
    test_pred = (_polished(layers["X_test"], kept, coef) + base["X_test"] > 0).astype(int)
    result = {
        "leaves_before": trees.leaves(np.full(len(shape), n_layers)),
        "leaves_after": n_leaves,
        "trees_after": int(np.sum(kept.sum(axis=1) > 0)),
        "seconds": seconds,
        "val_score": score,
        # the layers add up to XGBoost's margin less one constant (the base) on every row
        "conversion_error": float(np.ptp(base["X_val"])),
    }
    return result, val_pred, test_pred


def _polished(layers, kept, coef):
    """The margin, without the base, of the trees kept, each re-weighted by
    ``prune_polish``'s coefficient (one per tree kept, in order)."""
    out = np.zeros(layers.shape[1])
    j = 0
    for t in range(len(kept)):
        if kept[t].sum() > 0:
            out += layers[t] @ kept[t] * coef[j]
            j += 1
    return out


if __name__ == "__main__":
    main()
