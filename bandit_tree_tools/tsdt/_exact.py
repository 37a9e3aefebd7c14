"""The exact optimum of TSDT's objective on a data set, by dynamic programming
over partial assignments (the oracle that TSDT is checked against)."""

import time

import numpy as np

from .._validation import Interval, validate_params
from ..exceptions import DataError
from ..tree import refuse_single_class
from ._categorical_tree import (
    CategoricalTreeModel,
    categorical_codes,
    encode_labels,
    tree_from_data,
    varying_attributes,
)
from ._kernels_exact import ABORTED, _solve


def _solve_all(X, y, n_categories, n_classes, lambda_, max_subproblems):
    radix = np.ones(len(n_categories), dtype=np.int64)
    for feature in range(1, len(n_categories)):
        radix[feature] = radix[feature - 1] * (n_categories[feature - 1] + 1)
    budget = np.array([max_subproblems], dtype=np.int64)
    penalty = float(lambda_) * X.shape[0]
    value, keys, choices = _solve(X, y, n_categories, radix, n_classes, penalty, budget)
    memo_choice = dict(zip(keys.tolist(), choices.tolist()))
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
                split = memo_choice.get(int(key), -1)
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
    tree_, ensemble_, n_leaves_, n_splits_, objective_, feature_importances_,
    classes_, n_categories_, n_features_in_, feature_names_in_ (pandas input only),
    lambda_, n_subproblems_ (memoised subproblems solved), seconds_.
    """

    def __repr__(self) -> str:
        if not hasattr(self, "tree_"):
            return "OptimalCategoricalTree(unfitted)"
        return (
            f"OptimalCategoricalTree(lambda_={self.lambda_}, objective_={self.objective_:.6f}, "
            f"n_leaves_={self.n_leaves_}, n_splits_={self.n_splits_}, n_subproblems_={self.n_subproblems_})"
        )


OPTIMAL_TREE_CONSTRAINTS = {
    "lambda_": [Interval(float, 0.0, None, finite=True)],
    "max_subproblems": [Interval(int, 1, None)],
}


@validate_params(OPTIMAL_TREE_CONSTRAINTS, data=("X", "y"))
def optimal_categorical_tree(X, y, lambda_=0.01, *, max_subproblems=500_000) -> OptimalCategoricalTree:
    """The tree with multiway splits that maximises
    ``training accuracy - lambda_ * (number of splits)``, exactly.

    Dynamic programming over partial assignments (sets of attribute = category
    tests, in any order), memoised, with two bounds: a node whose majority is
    within ``lambda_ * n`` rows of all its rows stays a leaf, and a split is
    abandoned as soon as its children cannot beat the best option found.
    Ties go to the leaf, then to the lowest attribute index. Feasible for
    MONK, Car, tic-tac-toe sizes, or larger ones with a large ``lambda_``.

    Parameters
    ----------
    X : array-like or pandas DataFrame (n_rows, n_features)
        Categorical attributes: non-negative integer codes or pandas
        categoricals (:func:`discretize` makes them from numbers).
    y : array-like (n_rows,)
        Class labels, at least two classes.
    lambda_ : float, default 0.01
        Penalty per split (a multiway split counts once); finite, >= 0.
    max_subproblems : int, default 500_000
        Budget of memoised subproblems.

    Returns
    -------
    OptimalCategoricalTree
        A fitted model (``predict``, ``score``, ``tree_``, ``ensemble_``,
        ``objective_``, ``n_splits_``, ``n_leaves_``).

    Raises
    ------
    ParameterError
        For a bad ``lambda_`` or ``max_subproblems``.
    DataError
        When the problem needs more than ``max_subproblems`` memoised
        subproblems (raise it, raise ``lambda_``, or use
        :class:`TSDTClassifier`), when the attributes have too many category
        combinations to index, or for data that are not categorical.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(300, 4))
    >>> y = (X[:, 0] == X[:, 1]).astype(int)
    >>> tree = btt.optimal_categorical_tree(X, y, lambda_=0.01)
    >>> tree.n_splits_, float(tree.score(X, y)), round(tree.objective_, 2)
    (4, 1.0, 0.96)
    """
    codes, n_categories, feature_names, feature_categories = categorical_codes(X, fitting=True)
    classes, y_codes = encode_labels(y, codes.shape[0])
    refuse_single_class(classes)
    X_codes = codes.astype(np.int64)
    n_categories = np.asarray(n_categories, dtype=np.int64)
    varies = varying_attributes(X_codes)  # a column discretize did not cut has one value
    varies[0] |= not varies.any()  # the solver needs an attribute: with none that varies, its answer is a leaf
    combinations = 1.0
    for count in n_categories[varies]:
        combinations *= float(count) + 1.0
    if combinations >= 2.0**62:
        raise DataError(
            f"{int(varies.sum())} attributes that vary, with {int(np.sum(n_categories[varies]))} categories in total, "
            "are too many for the exact solver (it indexes every combination of tests); use TSDTClassifier, or "
            "fewer attributes"
        )
    started = time.perf_counter()
    searched = X_codes[:, varies]
    value, radix, memo_choice, used = _solve_all(
        searched, y_codes, n_categories[varies], len(classes), float(lambda_), int(max_subproblems)
    )
    if value == ABORTED:
        raise DataError(
            f"the exact solver needed more than max_subproblems={int(max_subproblems)} subproblems on "
            f"{X_codes.shape[0]} rows and {searched.shape[1]} attributes that vary; raise max_subproblems, increase "
            f"lambda_ (now {lambda_}), or use TSDTClassifier for a problem this size"
        )
    feature, first_child = _structure(
        searched, y_codes, n_categories[varies], len(classes), lambda_, radix, memo_choice
    )
    feature = np.where(feature >= 0, np.flatnonzero(varies)[feature.clip(0)], feature)  # back to X's columns
    model = OptimalCategoricalTree()
    model.lambda_ = float(lambda_)
    model.classes_ = classes
    model.n_categories_ = n_categories
    model.n_features_in_ = int(len(n_categories))
    if feature_names is not None:
        model.feature_names_in_ = feature_names
    if feature_categories is not None and any(values is not None for values in feature_categories):
        model.feature_categories_ = feature_categories
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
