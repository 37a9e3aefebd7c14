"""Synthetic rows and edits for the adapters' round-trip tests (scikit-learn, XGBoost)."""

import numpy as np

from bandit_tree_tools.tree import TREE_LEAF


def make_data(rng, task, n_rows, n_features, n_classes=3, with_nan=False, *, string_labels=False):
    """Rows of normal noise, column 0 rounded to one decimal (repeated values:
    thresholds between close neighbours), a tenth of the cells NaN when
    ``with_nan``, and a target from columns 0 and -1: ``task`` "regression"
    (numbers), "poisson" (counts), "binary" or "multiclass" (``n_classes``
    labels, each present at least once; named "a", "b", ... for more than two
    classes when ``string_labels``)."""
    X = rng.normal(size=(n_rows, n_features))
    X[:, 0] = np.round(X[:, 0], 1)
    if with_nan:
        X[rng.random((n_rows, n_features)) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, -1]) + 0.3 * rng.normal(size=n_rows)
    if task == "regression":
        return X, signal * 3.0
    if task == "poisson":
        return X, rng.poisson(np.exp(signal * 0.5))
    n = 2 if task == "binary" else n_classes
    labels = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n + 1)[1:-1]))
    labels[:n] = np.arange(n)  # every class present
    if string_labels and n > 2:
        return X, np.array([chr(ord("a") + code) for code in range(n)])[labels]
    return X, labels


def random_internal_nodes(ensemble, rng):
    """Up to two internal nodes of each of up to three trees, for ``btt.collapse``."""
    chosen = {}
    for index in rng.choice(ensemble.n_trees, size=min(3, ensemble.n_trees), replace=False):
        candidates = np.flatnonzero(ensemble.trees[index].children_left != TREE_LEAF)
        if candidates.size:
            chosen[int(index)] = rng.choice(candidates, size=min(2, candidates.size), replace=False).tolist()
    return chosen
