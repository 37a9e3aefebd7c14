"""Slow, obvious reference versions of the pruning kernels and of the exact
(full-budget) versions of the pruning strategies: every score is computed by
collapsing nodes with ``collapse`` and predicting all rows again."""

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

from bandit_tree_tools.tree import collapse, node_depth

EPS = 1e-15
TIE = 1e-12


def reference_leaves(tree, X, split_rule="le"):
    """Leaf of every row, routing all rows one level at a time (numeric
    splits without missing values, which is all the pruning tests use)."""
    node = np.zeros(len(X), dtype=np.int64)
    while True:
        inner = tree.children_left[node] != -1
        if not inner.any():
            return node
        rows = np.flatnonzero(inner)
        x = X[rows, tree.feature[node[rows]]]
        threshold = tree.threshold[node[rows]]
        left = x < threshold if split_rule == "lt" else x <= threshold
        node[rows] = np.where(left, tree.children_left[node[rows]], tree.children_right[node[rows]])


def reference_output(ensemble, X):
    """Probabilities (classification, one column per class) or predictions."""
    X = np.asarray(X, dtype=np.float32 if ensemble.input_dtype == "float32" else np.float64)
    raw = np.zeros((len(X), ensemble.n_outputs))
    for t, tree in enumerate(ensemble.trees):
        value = tree.value[reference_leaves(tree, X, ensemble.split_rule)] * ensemble.tree_scale[t]
        first = ensemble.tree_output[t]
        raw[:, first : first + value.shape[1]] += value
    if ensemble.aggregation == "mean":
        raw /= ensemble.n_trees
    out = ensemble.transform_raw(raw + ensemble.base_score)
    if ensemble.task == "classification" and out.shape[1] == 1:
        out = np.hstack([1.0 - out, out])
    return out


def reference_score(ensemble, X, y, weights=(1.0, 2.5, 1.0), variance=None):
    """The paper's score (classification) or 1 - MSE/variance (regression)."""
    if ensemble.task == "regression":
        prediction = reference_output(ensemble, X)[:, 0]
        variance = np.var(y) if variance is None else variance
        return 1.0 - np.mean((prediction - y) ** 2) / (variance if variance > 0 else 1.0)
    return _classification_metrics(reference_output(ensemble, X), ensemble.classes_, y, weights)["score"]


def _classification_metrics(proba, classes, y, weights):
    """Accuracy, F1 (positive class ``classes[1]``, macro-F1 for more classes),
    clipped log-loss and the paper's score, by scikit-learn's metrics."""
    predicted = classes[np.argmax(proba, axis=1)]
    accuracy = accuracy_score(y, predicted)
    if len(classes) == 2:
        f1 = f1_score(y, predicted, pos_label=classes[1], average="binary", zero_division=0)
    else:
        f1 = f1_score(y, predicted, average="macro", zero_division=0)
    column = np.array([list(classes).index(label) for label in y])
    log_loss = float(np.mean(-np.log(np.clip(proba[np.arange(len(y)), column], EPS, 1 - EPS))))
    a, g, b = weights
    return {
        "accuracy": accuracy,
        "f1": f1,
        "log_loss": log_loss,
        "score": a * accuracy + g * f1 - b * log_loss / -np.log(EPS),
    }


def collapsed(ensemble, pruned):
    """``pruned``: iterable of (tree, node)."""
    nodes = {}
    for tree, node in pruned:
        nodes.setdefault(int(tree), []).append(int(node))
    return collapse(ensemble, nodes) if nodes else ensemble


def reference_delta(ensemble, X, y, pruned, arm, weights, variance=None, before=None):
    """Score change of additionally collapsing ``arm`` = (tree, node)."""
    if before is None:
        before = reference_score(collapsed(ensemble, pruned), X, y, weights, variance)
    after = reference_score(collapsed(ensemble, list(pruned) + [arm]), X, y, weights, variance)
    return after - before


def _hidden(tree, pruned_nodes):
    hidden = np.zeros(tree.n_nodes, dtype=bool)
    for node in range(tree.n_nodes):
        left = tree.children_left[node]
        if left != -1 and (hidden[node] or node in pruned_nodes):
            hidden[left] = hidden[tree.children_right[node]] = True
    return hidden


def reference_arms(ensemble, candidates, min_depth, pruned=()):
    """(tree, node) arms of the ensemble with ``pruned`` nodes collapsed, in
    (tree, node) order, written out node by node."""
    arms = []
    for t, tree in enumerate(ensemble.trees):
        done = {node for tree_index, node in pruned if tree_index == t}
        hidden = _hidden(tree, done)
        depth = node_depth(tree)

        def is_leaf(node):
            return tree.children_left[node] == -1 or node in done

        for node in range(tree.n_nodes):
            if is_leaf(node) or hidden[node] or depth[node] < min_depth or not tree.has_leaf_value[node]:
                continue
            if candidates == "twigs" and not (is_leaf(tree.children_left[node]) and is_leaf(tree.children_right[node])):
                continue
            arms.append((t, node))
    return arms


def in_subtree(tree, top, node):
    """Whether ``node`` is ``top`` or one of its descendants in ``tree``."""
    stack = [top]
    while stack:
        current = stack.pop()
        if current == node:
            return True
        if tree.children_left[current] != -1:
            stack += [tree.children_left[current], tree.children_right[current]]
    return False


def _is_nested(ensemble, arm, other):
    if arm[0] != other[0]:
        return False
    tree = ensemble.trees[arm[0]]
    return in_subtree(tree, arm[1], other[1]) or in_subtree(tree, other[1], arm[1])


def exact_rank_prune(ensemble, X, y, candidates, min_depth, weights, variance=None):
    """The paper's final step with exact rewards: rank arms by their score
    change on all rows (best first, ties by arm order), keep non-nested
    ones, prune the best prefix (c = 0 included, ties to more pruning)."""
    arms = reference_arms(ensemble, candidates, min_depth)
    unpruned = reference_score(ensemble, X, y, weights, variance)
    deltas = [reference_delta(ensemble, X, y, [], arm, weights, variance, unpruned) for arm in arms]
    order = sorted(range(len(arms)), key=lambda i: (-round(deltas[i], 10), i))
    chosen = []
    for i in order:
        if not any(_is_nested(ensemble, arms[i], arms[j]) for j in chosen):
            chosen.append(i)
    best, best_c = reference_score(ensemble, X, y, weights, variance), 0
    for c in range(1, len(chosen) + 1):
        score = reference_score(collapsed(ensemble, [arms[i] for i in chosen[:c]]), X, y, weights, variance)
        if score >= best - TIE:
            best, best_c = max(score, best), c
    return sorted(arms[i] for i in chosen[:best_c])


def exact_sequential_prune(ensemble, X, y, candidates, min_depth, weights, variance=None):
    """Commit the arm with the best exact score change while the score does
    not drop; recompute the arms after each commit."""
    pruned = []
    current = reference_score(ensemble, X, y, weights, variance)
    while True:
        arms = reference_arms(ensemble, candidates, min_depth, pruned)
        if not arms:
            break
        deltas = [reference_delta(ensemble, X, y, pruned, arm, weights, variance, current) for arm in arms]
        best = min(range(len(arms)), key=lambda i: (-round(deltas[i], 10), i))
        score = current + deltas[best]
        if score < current - TIE:
            break
        pruned.append(arms[best])
        current = score
    return _outermost(ensemble, pruned)


def _outermost(ensemble, pruned):
    out = []
    for arm in pruned:
        if not any(
            other != arm and _is_nested(ensemble, other, arm) and _below(ensemble, other, arm) for other in pruned
        ):
            out.append(arm)
    return sorted(out)


def _below(ensemble, top, arm):
    """Whether ``arm`` lies strictly inside ``top``'s subtree."""
    return top[0] == arm[0] and top[1] != arm[1] and _is_nested(ensemble, top, arm) and top[1] < arm[1]


def reference_rep(ensemble, X, y, weights=(1.0, 0.0, 0.0)):
    """Reduced-error pruning: children before parents, tree after tree;
    prune when the whole model's validation score does not drop."""
    pruned = []
    current = reference_score(ensemble, X, y, weights)
    for t, tree in enumerate(ensemble.trees):
        for node in range(tree.n_nodes - 1, -1, -1):
            if tree.children_left[node] == -1 or not tree.has_leaf_value[node]:
                continue
            score = reference_score(collapsed(ensemble, pruned + [(t, node)]), X, y, weights)
            if score >= current - TIE:
                pruned.append((t, node))
                current = score
    return _outermost(ensemble, pruned)


def reference_metrics(ensemble, X, y, weights=(1.0, 2.5, 1.0)):
    """``model_metrics`` from the ensemble's own numpy predictions (its
    ``predict_proba`` / ``predict``, links by scipy) and scikit-learn's metrics."""
    if ensemble.task == "regression":
        prediction = ensemble.predict(X)
        mse = float(np.mean((prediction - y) ** 2))
        variance = float(np.var(y)) or 1.0
        return {"mse": mse, "r2": 1.0 - mse / variance, "score": 1.0 - mse / variance}
    return _classification_metrics(ensemble.predict_proba(X), ensemble.classes_, y, weights)
