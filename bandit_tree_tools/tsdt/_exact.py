"""The exact optimum of TSDT's objective on a data set, by dynamic programming
over partial assignments (the oracle that TSDT is checked against)."""

import time

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from ..exceptions import DataError
from ._categorical_tree import CategoricalTreeModel, categorical_codes, encode_labels, tree_from_data

TOLERANCE = 1e-7  # in units of rows: a split must win by more than this (ties go to fewer splits)
ABORTED = -np.inf


@numba.njit(cache=True)
def _solve(X, y, rows, key, used, n_categories, radix, n_classes, penalty, memo_value, memo_choice, budget):
    """Best value (correct rows - penalty * splits) of a tree for the rows
    ``rows`` (the partial assignment ``key``), with the attributes in
    ``used`` no longer available. Memoised by ``key``; counts down
    ``budget[0]`` per new subproblem and returns -inf once it is spent."""
    n_rows = rows.shape[0]
    counts = np.zeros(n_classes, dtype=np.int64)
    for row in rows:
        counts[y[row]] += 1
    leaf = counts.max()
    # No split can be worth more than n_rows - penalty (every row right, one split).
    if leaf >= n_rows - penalty:
        return np.float64(leaf)
    if key in memo_value:
        return memo_value[key]
    budget[0] -= 1
    if budget[0] < 0:
        return -np.inf
    best = np.float64(leaf)
    choice = -1
    buffer = np.empty(n_rows, dtype=np.int64)
    for feature in range(n_categories.shape[0]):
        if used[feature]:
            continue
        if best >= n_rows - penalty - TOLERANCE:
            break  # nothing can beat the best any more
        n_cat = n_categories[feature]
        sizes = np.zeros(n_cat + 1, dtype=np.int64)
        for row in rows:
            sizes[X[row, feature] + 1] += 1
        non_empty = 0
        for category in range(n_cat):
            if sizes[category + 1] > 0:
                non_empty += 1
        if non_empty < 2:
            continue  # constant here: the split only costs
        starts = np.cumsum(sizes)
        fill = starts[:n_cat].copy()
        for row in rows:
            category = X[row, feature]
            buffer[fill[category]] = row
            fill[category] += 1
        total = -penalty
        remaining = n_rows
        pruned = False
        used[feature] = 1
        for category in range(n_cat):
            size = starts[category + 1] - starts[category]
            if size == 0:
                continue
            # Each child is worth at most its number of rows.
            if total + remaining <= best + TOLERANCE:
                pruned = True
                break
            child = _solve(
                X, y, buffer[starts[category] : starts[category + 1]].copy(), key + (category + 1) * radix[feature],
                used, n_categories, radix, n_classes, penalty, memo_value, memo_choice, budget,
            )
            if child == -np.inf:
                used[feature] = 0
                return -np.inf
            total += child
            remaining -= size
        used[feature] = 0
        if not pruned and total > best + TOLERANCE:
            best = total
            choice = feature
    memo_value[key] = best
    memo_choice[key] = choice
    return best


def _solve_all(X, y, n_categories, n_classes, lambda_, max_subproblems):
    radix = np.ones(len(n_categories), dtype=np.int64)
    for feature in range(1, len(n_categories)):
        radix[feature] = radix[feature - 1] * (n_categories[feature - 1] + 1)
    memo_value = Dict.empty(key_type=types.int64, value_type=types.float64)
    memo_choice = Dict.empty(key_type=types.int64, value_type=types.int64)
    budget = np.array([max_subproblems], dtype=np.int64)
    penalty = float(lambda_) * X.shape[0]
    value = _solve(
        X, y, np.arange(X.shape[0], dtype=np.int64), np.int64(0), np.zeros(len(n_categories), dtype=np.uint8),
        n_categories, radix, n_classes, penalty, memo_value, memo_choice, budget,
    )
    return value, radix, memo_choice, max_subproblems - int(budget[0])


def _structure(X, y, n_categories, n_classes, lambda_, radix, memo_choice):
    """Multiway arrays of the optimal tree, read back from the memo."""
    penalty = float(lambda_) * X.shape[0]
    feature, first_child = [], []
    queue = [(np.arange(X.shape[0]), 0)]
    position = 0
    while position < len(queue):
        rows, key = queue[position]
        split = -1
        if len(rows) > 0:
            leaf = np.bincount(y[rows], minlength=n_classes).max()
            if leaf < len(rows) - penalty:
                split = memo_choice.get(np.int64(key), -1)
        if split < 0:
            feature.append(-2)
            first_child.append(-1)
        else:
            feature.append(split)
            first_child.append(len(queue))
            for category in range(int(n_categories[split])):
                queue.append((rows[X[rows, split] == category], key + (category + 1) * int(radix[split])))
        position += 1
    return np.array(feature, dtype=np.int64), np.array(first_child, dtype=np.int64)


class OptimalCategoricalTree(CategoricalTreeModel):
    """Result of :func:`optimal_categorical_tree`: a fitted tree with the same
    attributes and prediction methods as :class:`TSDTClassifier`.

    Attributes
    ----------
    tree_, ensemble_, n_leaves_, n_splits_, objective_, classes_,
    n_categories_, n_features_in_, feature_names_in_ (pandas input only),
    lambda_, n_subproblems_ (memoised subproblems solved), seconds_.
    """

    def __repr__(self) -> str:
        if not hasattr(self, "tree_"):
            return "OptimalCategoricalTree(unfitted)"
        return (
            f"OptimalCategoricalTree(lambda_={self.lambda_}, objective_={self.objective_:.6f}, "
            f"n_leaves_={self.n_leaves_}, n_splits_={self.n_splits_}, n_subproblems_={self.n_subproblems_})"
        )


def optimal_categorical_tree(X, y, lambda_=0.01, *, max_subproblems=500_000) -> OptimalCategoricalTree:
    """The tree with multiway splits that maximises
    ``training accuracy - lambda_ * (number of splits)``, exactly.

    Dynamic programming over partial assignments (sets of attribute = category
    tests, in any order), memoised, with two bounds: a node whose majority is
    within ``lambda_ * n`` rows of all its rows stays a leaf, and a split is
    abandoned as soon as its children cannot beat the best option found.
    Ties go to the leaf, then to the lowest attribute index. Feasible for
    MONK, Car, tic-tac-toe sizes, or larger ones with a large ``lambda_``.

    Raises :class:`~bandit_tree_tools.exceptions.DataError` when the problem
    needs more than ``max_subproblems`` memoised subproblems (raise it, raise
    ``lambda_``, or use :class:`TSDTClassifier`), or when the attributes have
    too many category combinations to index.
    """
    if not np.isfinite(lambda_) or lambda_ < 0:
        raise ValueError(f"optimal_categorical_tree: lambda_ must be a finite number >= 0, got {lambda_!r}")
    if int(max_subproblems) < 1:
        raise ValueError(f"max_subproblems must be >= 1, got {max_subproblems!r}")
    codes, n_categories, feature_names = categorical_codes(X, fitting=True)
    classes, y_codes = encode_labels(y, codes.shape[0])
    if len(classes) < 2:
        raise DataError(
            f"y has a single class ({classes[0]!r}); a classifier needs at least two classes in the training data"
        )
    combinations = 1.0
    for count in n_categories:
        combinations *= float(count) + 1.0
    if combinations >= 2.0**62:
        raise DataError(
            f"{len(n_categories)} attributes with {int(np.sum(n_categories))} categories in total are too many for "
            "the exact solver (it indexes every combination of tests); use TSDTClassifier, or fewer attributes"
        )
    X_codes = codes.astype(np.int64)
    started = time.perf_counter()
    value, radix, memo_choice, used = _solve_all(
        X_codes, y_codes, n_categories, len(classes), float(lambda_), int(max_subproblems)
    )
    if value == ABORTED:
        raise DataError(
            f"the exact solver needed more than max_subproblems={int(max_subproblems)} subproblems on "
            f"{X_codes.shape[0]} rows and {X_codes.shape[1]} attributes; raise max_subproblems, increase lambda_ "
            f"(now {lambda_}), or use TSDTClassifier for a problem this size"
        )
    feature, first_child = _structure(X_codes, y_codes, n_categories, len(classes), lambda_, radix, memo_choice)
    model = OptimalCategoricalTree()
    model.lambda_ = float(lambda_)
    model.classes_ = classes
    model.n_categories_ = n_categories
    model.n_features_in_ = int(len(n_categories))
    if feature_names is not None:
        model.feature_names_in_ = feature_names
    model.tree_ = tree_from_data(feature, first_child, n_categories, X_codes, y_codes, len(classes))
    correct = np.argmax(model.tree_.value[model.tree_.apply(X_codes)], axis=1) == y_codes
    model.objective_ = float(np.mean(correct)) - float(lambda_) * model.tree_.n_splits
    model.n_subproblems_ = used
    model.seconds_ = time.perf_counter() - started
    # The DP value and the rebuilt tree must agree (ties aside, to rounding).
    expected = value / X_codes.shape[0]
    if abs(expected - model.objective_) > 1e-6:
        raise AssertionError(f"exact solver inconsistency: DP value {expected}, tree objective {model.objective_}")
    return model
