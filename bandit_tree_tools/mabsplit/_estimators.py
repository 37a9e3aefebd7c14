"""MABSplit trees and forests with scikit-learn's estimator API.

Every fitted estimator exposes ``ensemble_`` in the common format, so
pruning, medoids, panels and ``btt.to_model`` (which returns the equivalent
scikit-learn tree or forest) work on it.

Comparisons happen in float32, as in scikit-learn: ``X`` is cast to float32
before fitting and predicting, and every threshold is a float32 value, so the
exported scikit-learn model routes every row exactly like this estimator.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._side_compile import compiling_beside
from .._validation import (
    MAX_FEATURES,
    N_ROWS,
    Interval,
    Options,
    check_params,
    check_random_state,
    resolve_max_features,
    resolve_n_jobs,
    resolve_n_rows,
    seed_from,
)
from ..exceptions import DataError, NotFittedError
from ..tree import Ensemble, FrozenDict, Source, averaged_ensemble, refuse_single_class
from ..tree._input import check_unique_columns, non_numeric_columns
from ._builder import GrowthSettings, grow_tree
from ._inputs import check_target_range, refuse_infinite, refuse_non_finite_targets
from ._params import SEARCH_CONSTRAINTS

_MAX_SEED = np.iinfo(np.int32).max


# ------------------------------------------------------------------- base
class _MABSplitBase(BaseEstimator):
    """Shared parameter checks, input handling and the common-format output."""

    _is_forest = False
    _parameter_constraints: dict = {}

    def _check_params(self) -> None:
        check_params(self.get_params(deep=False), self._parameter_constraints, owner=type(self).__name__)

    def _settings(self, n_features: int) -> GrowthSettings:
        """The validated parameters as the builder's settings."""
        self._check_params()
        bins = self.bins
        if self._is_forest and self.splitter == "random":
            bins = "random"
        return GrowthSettings(
            criterion=self.criterion,
            solver=self.solver,
            bins=bins,
            n_bins=int(self.n_bins),
            batch_size=int(self.batch_size),
            z=float(self.z),
            max_depth=self.max_depth,
            min_samples_leaf=int(self.min_samples_leaf),
            max_leaf_nodes=self.max_leaf_nodes,
            max_features=resolve_max_features(self.max_features, n_features),
        )

    def _validate_X_y(self, X, y):
        check_unique_columns(X)
        bad = non_numeric_columns(X)
        if bad:
            raise DataError(
                f"X has non-numeric columns {bad[:10]}; MABSplit splits on numbers only: encode them first "
                "(for example with sklearn.preprocessing.OrdinalEncoder or pandas .cat.codes)"
            )
        if self._task == "regression":
            refuse_non_finite_targets(y)
        X, y = validate_data(
            self, X, y, dtype=np.float32, order="C", ensure_all_finite=False, y_numeric=self._task == "regression"
        )
        refuse_infinite(X, getattr(self, "feature_names_in_", None))
        return np.require(X, np.float32, ["C", "W"]), y

    def _check_fitted(self) -> None:
        # this library's NotFittedError, also scikit-learn's (so its estimator checks pass)
        if not hasattr(self, "ensemble_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def _validate_X(self, X) -> np.ndarray:
        self._check_fitted()
        check_unique_columns(X)
        bad = non_numeric_columns(X)
        if bad:
            raise DataError(f"X has non-numeric columns {bad[:10]}; pass the same numeric columns as at training time")
        X = validate_data(self, X, reset=False, dtype=np.float32, order="C", ensure_all_finite=False)
        refuse_infinite(X, getattr(self, "feature_names_in_", None))
        return X

    def _targets(self, y):
        """Class codes (classification) or float targets (regression)."""
        if self._task == "classification":
            try:
                check_classification_targets(y)
            except ValueError as error:
                raise DataError(
                    f"{error} -- {type(self).__name__} needs class labels; for a numeric target use "
                    f"{type(self).__name__.replace('Classifier', 'Regressor')}"
                ) from None
            classes, codes = np.unique(y, return_inverse=True)
            refuse_single_class(classes)
            self.classes_ = classes
            self.n_classes_ = int(classes.shape[0])
            return codes.astype(np.int64), np.empty(0), self.n_classes_
        values = np.array(y, dtype=np.float64)
        check_target_range(values)
        return np.empty(0, dtype=np.int64), values, 1

    def _make_ensemble(self, grown, estimator: str, params: dict) -> Ensemble:
        import sklearn

        classification = self._task == "classification"
        self.ensemble_ = averaged_ensemble(
            [result.tree for result in grown],
            n_features=self.n_features_in_,
            classes=self.classes_ if classification else None,
            feature_names=getattr(self, "feature_names_in_", None),
            source=Source(
                library="sklearn",
                estimator=estimator,
                version=sklearn.__version__,
                payload={"params": FrozenDict(params)},
            ),
        )
        self.node_insertions_ = tuple(result.insertions for result in grown)
        self.n_insertions_ = int(sum(result.n_insertions for result in grown))
        return self.ensemble_

    @property
    def feature_importances_(self) -> np.ndarray:
        """Impurity-based importances (mean decrease in impurity), normalised
        per tree, averaged over trees, summing to 1 (0 for a single leaf)."""
        self._check_fitted()
        per_tree = []
        for tree in self.ensemble_.trees:
            importance = np.zeros(self.n_features_in_)
            internal = tree.children_left >= 0
            np.add.at(importance, tree.feature[internal], tree.gain[internal])
            if importance.sum() > 0:
                per_tree.append(importance / importance.sum())
        if not per_tree:
            return np.zeros(self.n_features_in_)
        mean = np.mean(per_tree, axis=0)
        return mean / mean.sum()

    def predict(self, X):
        """The class with the largest averaged fraction (classifiers) or the
        mean of the reached leaves' values over the trees (regressors)."""
        X = self._validate_X(X)
        return self.ensemble_.predict(X)

    def apply(self, X):
        """The leaf (node id) each row reaches: ``(n_rows,)`` for a tree,
        ``(n_rows, n_estimators)`` for a forest, as scikit-learn's ``apply``."""
        leaves = self.ensemble_.apply(self._validate_X(X))
        return leaves[:, 0] if isinstance(self, _MABSplitTree) else leaves

    def decision_path(self, X):
        """The nodes each row passes (scipy CSR, ``n_rows x n_nodes``); a
        forest also returns each tree's first column, as scikit-learn's."""
        indicator, offsets = self.ensemble_.decision_path(self._validate_X(X))
        return indicator if isinstance(self, _MABSplitTree) else (indicator, offsets)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


_TREE_CONSTRAINTS = {
    **SEARCH_CONSTRAINTS,
    "max_depth": [Interval(int, 0, None), None],
    "max_leaf_nodes": [Interval(int, 2, None), None],
    "max_features": MAX_FEATURES,
}

_FOREST_CONSTRAINTS = {
    **_TREE_CONSTRAINTS,
    "n_estimators": [Interval(int, 1, None)],
    "bootstrap": ["boolean"],
    "max_samples": [None, *N_ROWS],
    "splitter": [Options({"histogram", "random"})],
    "n_jobs": [None, int],
}

_CLASSIFICATION = {"criterion": [Options({"gini", "entropy"})]}
_REGRESSION = {"criterion": [Options({"squared_error"})]}


class _ClassifierMixin(ClassifierMixin):
    _task = "classification"

    def predict_proba(self, X):
        """Class fractions of the reached leaves (averaged over trees)."""
        X = self._validate_X(X)
        return self.ensemble_.predict_proba(X)

    def predict_log_proba(self, X):
        """The log of :meth:`predict_proba` (-inf for a class no reached leaf holds)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class _RegressorMixin(RegressorMixin):
    _task = "regression"


# ------------------------------------------------------------------ trees
class _MABSplitTree(_MABSplitBase):
    def get_depth(self) -> int:
        """Depth of the tree (0 for a single leaf)."""
        self._check_fitted()
        return int(self.ensemble_.max_depth)

    def get_n_leaves(self) -> int:
        """Number of leaves of the tree."""
        self._check_fitted()
        return int(self.ensemble_.n_leaves)

    def fit(self, X, y):
        """Grow the tree; returns self."""
        X, y = self._validate_X_y(X, y)
        settings = self._settings(X.shape[1])
        y_code, y_value, n_classes = self._targets(y)
        seed = seed_from(self.random_state)
        with compiling_beside(f"mabsplit_{self._task}"):
            grown = grow_tree(X, np.arange(X.shape[0]), y_code, y_value, n_classes, settings, seed)
        params = {
            "criterion": self.criterion,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "max_leaf_nodes": self.max_leaf_nodes,
            "max_features": self.max_features,
            "random_state": self.random_state if isinstance(self.random_state, (int, type(None))) else None,
        }
        name = "DecisionTreeClassifier" if self._task == "classification" else "DecisionTreeRegressor"
        self._make_ensemble([grown], name, params)
        return self


# Raises and the start of the example: the same for every MABSplit estimator.
_RAISES_AND_DATA = """    Raises
    ------
    ParameterError
        From ``fit``, for a parameter outside the accepted values.
    DataError
        For infinite values, non-numeric columns or unusable targets.

    Notes
    -----
    NaN is a missing value, as in scikit-learn's trees: each candidate
    threshold of a feature with NaN at a node is two arms, NaN sent left and
    NaN sent right, and the split keeps the better one; a split on a
    feature without NaN at its node sends NaN to the child with more rows.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import {make}
    >>> X, y = {make}(n_samples=200, random_state=0)
"""


_TREE_DOC = """{kind} tree grown with MABSplit: at every node, the (feature, threshold)
    arms of histograms over candidate thresholds compete in a bandit; arms whose
    impurity reduction is clearly worse are dropped after a few batches of rows
    (successive elimination, :func:`bandit_tree_tools.bandits.eliminate`).

    Parameters
    ----------
    criterion : {criteria}
    max_depth : int or None, default None
    min_samples_leaf : int, default 1
        A node with fewer than ``2 * min_samples_leaf`` rows is a leaf; a split
        the bandit chose on estimated child sizes that leaves a child below
        this on the real rows is not made (the node stays a leaf).
    max_leaf_nodes : int or None, default None
        Grow best-first (largest weighted impurity reduction) up to this many leaves.
    max_features : None, 'sqrt', 'log2', int or float, default None
        Features drawn at random at every node, by scikit-learn's rule (None:
        all; an int: that many, at most the number of features; a float in
        (0, 1]: that fraction, at least one).
    solver : {{'mab', 'exact'}}, default 'mab'
        'exact' inserts every row of the node: same candidates, no sampling.
    bins : {{'linspace', 'quantile'}}, default 'linspace'
        Candidate thresholds: ``n_bins`` evenly spaced edges between the node's
        minimum and maximum, or ``n_bins`` quantiles of up to ``256 * n_bins``
        sampled rows of the node. Edges are float32 values.
    n_bins : int, default 11
        Edges per feature and node. A split sends the rows at or below an edge
        left, and 'linspace' counts the node's minimum and maximum among its
        edges: the maximum splits nothing off, so ``n_bins=2`` leaves the
        minimum alone (the one split of a binary feature, but of a continuous
        one only its lowest value).
    batch_size : int, default 1000
        Rows sampled (without replacement) per bandit round.
    z : float, default 3
        Confidence-interval multiplier (finite, > 0).
    random_state : None, int, numpy Generator or RandomState, default None
        The library's one rule (:func:`bandit_tree_tools._validation.check_random_state`).

    Attributes
    ----------
    ensemble_ : Ensemble
        The tree in the common format (``btt.to_model`` gives the equivalent
        scikit-learn {sklearn}).
    n_insertions_ : int
        Histogram insertions (rows x features) of all split searches.
    node_insertions_ : tuple of int64 arrays
        Insertions at every node of every tree (0 where no search ran).
    feature_importances_ : ndarray

{raises_and_data}    >>> tree = btt.MABSplitTree{suffix}(max_depth=3, random_state=0).fit(X, y)
    >>> tree.predict(X[:5]).shape
    (5,)
    >>> type(btt.to_model(tree)).__name__
    '{sklearn}'
    """


class MABSplitTreeClassifier(_ClassifierMixin, _MABSplitTree):
    __doc__ = _TREE_DOC.format(
        kind="A classification",
        criteria="{'gini', 'entropy'}, default 'gini'",
        sklearn="DecisionTreeClassifier",
        suffix="Classifier",
        raises_and_data=_RAISES_AND_DATA.format(make="make_classification"),
    )
    _parameter_constraints = {**_TREE_CONSTRAINTS, **_CLASSIFICATION}

    def __init__(
        self,
        *,
        criterion="gini",
        max_depth=None,
        min_samples_leaf=1,
        max_leaf_nodes=None,
        max_features=None,
        solver="mab",
        bins="linspace",
        n_bins=11,
        batch_size=1000,
        z=3.0,
        random_state=None,
    ):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.solver = solver
        self.bins = bins
        self.n_bins = n_bins
        self.batch_size = batch_size
        self.z = z
        self.random_state = random_state


class MABSplitTreeRegressor(_RegressorMixin, _MABSplitTree):
    __doc__ = _TREE_DOC.format(
        kind="A regression",
        criteria="{'squared_error'}",
        sklearn="DecisionTreeRegressor",
        suffix="Regressor",
        raises_and_data=_RAISES_AND_DATA.format(make="make_regression"),
    )
    _parameter_constraints = {**_TREE_CONSTRAINTS, **_REGRESSION}

    def __init__(
        self,
        *,
        criterion="squared_error",
        max_depth=None,
        min_samples_leaf=1,
        max_leaf_nodes=None,
        max_features=None,
        solver="mab",
        bins="linspace",
        n_bins=11,
        batch_size=1000,
        z=3.0,
        random_state=None,
    ):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.solver = solver
        self.bins = bins
        self.n_bins = n_bins
        self.batch_size = batch_size
        self.z = z
        self.random_state = random_state


# ---------------------------------------------------------------- forests
def _fit_forest_tree(X, y_code, y_value, n_classes, settings, seed, bootstrap, n_rows, has_missing):
    """One forest tree: its rows (bootstrap / subsample) drawn from ``seed``,
    then grown with the same seed (module-level so joblib can ship it)."""
    n = X.shape[0]
    random = check_random_state(seed)
    if bootstrap:
        rows = random.integers(0, n, n_rows)
    elif n_rows < n:
        rows = random.choice(n, n_rows, replace=False)
    else:
        rows = np.arange(n)
    return grow_tree(X, rows, y_code, y_value, n_classes, settings, random, has_missing)


class _MABSplitForest(_MABSplitBase):
    _is_forest = True

    def fit(self, X, y):
        """Grow the forest (trees in parallel with joblib); returns self."""
        from joblib import Parallel, delayed

        X, y = self._validate_X_y(X, y)
        settings = self._settings(X.shape[1])
        y_code, y_value, n_classes = self._targets(y)
        n = X.shape[0]
        n_rows = self._n_rows(n)
        seeds = check_random_state(self.random_state).integers(_MAX_SEED, size=self.n_estimators)
        has_missing = bool(np.isnan(X).any())  # once, not once per tree
        with compiling_beside(f"mabsplit_{self._task}"):
            grown = Parallel(n_jobs=resolve_n_jobs(self.n_jobs), prefer="threads")(
                delayed(_fit_forest_tree)(
                    X, y_code, y_value, n_classes, settings, int(seed), self.bootstrap, n_rows, has_missing
                )
                for seed in seeds
            )
        classification = self._task == "classification"
        kind = "Classifier" if classification else "Regressor"
        name = ("ExtraTrees" if self.splitter == "random" else "RandomForest") + kind
        params = {
            "n_estimators": self.n_estimators,
            "criterion": self.criterion,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "max_leaf_nodes": self.max_leaf_nodes,
            "max_features": self.max_features,
            "bootstrap": self.bootstrap,
            "random_state": self.random_state if isinstance(self.random_state, (int, type(None))) else None,
        }
        if self.bootstrap and self.max_samples is not None:
            params["max_samples"] = self.max_samples
        self._make_ensemble(grown, name, params)
        self.estimators_ = self._tree_estimators(grown, seeds)
        return self

    def _n_rows(self, n: int) -> int:
        """Rows drawn for each tree (``max_samples``; all rows when None)."""
        return n if self.max_samples is None else resolve_n_rows(self.max_samples, n, "max_samples")

    def _tree_estimators(self, grown, seeds) -> list:
        """One fitted MABSplit tree estimator per grown tree (scikit-learn's
        ``estimators_``): the forest's tree parameters, the tree's own seed,
        and an ``ensemble_`` holding that tree alone, so each predicts like
        the forest's tree."""
        classification = self._task == "classification"
        tree_class = MABSplitTreeClassifier if classification else MABSplitTreeRegressor
        names = tree_class().get_params(deep=False).keys()
        params = {name: value for name, value in self.get_params(deep=False).items() if name in names}
        single = "ExtraTree" if self.splitter == "random" else "DecisionTree"
        single += "Classifier" if classification else "Regressor"
        tree_params = {
            key: params[key] for key in ("criterion", "max_depth", "min_samples_leaf", "max_leaf_nodes", "max_features")
        }
        estimators = []
        for result, seed in zip(grown, seeds):
            estimator = tree_class(**{**params, "random_state": int(seed)})
            estimator.n_features_in_ = self.n_features_in_
            if hasattr(self, "feature_names_in_"):
                estimator.feature_names_in_ = self.feature_names_in_
            if classification:
                estimator.classes_ = self.classes_
                estimator.n_classes_ = self.n_classes_
            estimator._make_ensemble([result], single, {**tree_params, "random_state": int(seed)})
            estimators.append(estimator)
        return estimators


_FOREST_DOC = """A random forest of MABSplit trees ({kind}).

    Each tree is grown on a bootstrap sample (``bootstrap=True``) or on a
    subsample without replacement of ``max_samples`` rows (``bootstrap=False``:
    random patches together with ``max_features``), with ``max_features``
    features drawn at every node. ``splitter='random'`` uses ``n_bins`` random
    thresholds per feature between the node's minimum and maximum
    (ExtraTrees-style); ``'histogram'`` uses ``bins``. Trees are grown in
    parallel with joblib (``n_jobs``; the kernels release the GIL, and any
    joblib backend, for example dask, can be chosen with
    ``joblib.parallel_config``). The same ``random_state`` gives the same
    trees whatever the backend.

    Other parameters and attributes as in the tree estimators; ``ensemble_``
    averages the trees (``btt.to_model`` gives the equivalent scikit-learn
    {sklearn} or ExtraTrees{kind}).

    Parameters
    ----------
    n_estimators : int, default 100
    max_features : None, 'sqrt', 'log2', int or float, default {max_features}
    bootstrap : bool, default True
    max_samples : None, int or float in (0, 1], default None
        Rows drawn for each tree: all (None), a count, or a fraction of the
        rows (rounded to the nearest count, at least 1).
    splitter : {{'histogram', 'random'}}, default 'histogram'
    n_jobs : int or None, default None
        Workers growing trees (joblib's rule: None is 1, -1 every core).
    criterion, max_depth, min_samples_leaf, max_leaf_nodes, solver, bins, n_bins, batch_size, z, random_state
        As in :class:`MABSplitTree{kind}`.

    Attributes
    ----------
    estimators_ : list of MABSplitTree{kind}
        scikit-learn's ``estimators_``: one fitted tree estimator per tree,
        with the forest's tree parameters, its own seed as ``random_state``
        and an ``ensemble_`` holding that tree alone, so it predicts like the
        forest's tree. The trees as arrays are ``ensemble_.trees``.
    ensemble_, n_insertions_, node_insertions_, feature_importances_
        As in :class:`MABSplitTree{kind}`.

{raises_and_data}    >>> forest = btt.MABSplitForest{kind}(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> len(forest.estimators_), type(forest.estimators_[0]).__name__
    (5, 'MABSplitTree{kind}')
    >>> type(btt.to_model(forest)).__name__
    '{sklearn}'
    """


class MABSplitForestClassifier(_ClassifierMixin, _MABSplitForest):
    __doc__ = _FOREST_DOC.format(
        kind="Classifier",
        sklearn="RandomForestClassifier",
        max_features="'sqrt'",
        raises_and_data=_RAISES_AND_DATA.format(make="make_classification"),
    )
    _parameter_constraints = {**_FOREST_CONSTRAINTS, **_CLASSIFICATION}

    def __init__(
        self,
        *,
        n_estimators=100,
        criterion="gini",
        max_depth=None,
        min_samples_leaf=1,
        max_leaf_nodes=None,
        max_features="sqrt",
        bootstrap=True,
        max_samples=None,
        splitter="histogram",
        solver="mab",
        bins="linspace",
        n_bins=11,
        batch_size=1000,
        z=3.0,
        n_jobs=None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.splitter = splitter
        self.solver = solver
        self.bins = bins
        self.n_bins = n_bins
        self.batch_size = batch_size
        self.z = z
        self.n_jobs = n_jobs
        self.random_state = random_state


class MABSplitForestRegressor(_RegressorMixin, _MABSplitForest):
    __doc__ = _FOREST_DOC.format(
        kind="Regressor",
        sklearn="RandomForestRegressor",
        max_features="1.0",
        raises_and_data=_RAISES_AND_DATA.format(make="make_regression"),
    )
    _parameter_constraints = {**_FOREST_CONSTRAINTS, **_REGRESSION}

    def __init__(
        self,
        *,
        n_estimators=100,
        criterion="squared_error",
        max_depth=None,
        min_samples_leaf=1,
        max_leaf_nodes=None,
        max_features=1.0,
        bootstrap=True,
        max_samples=None,
        splitter="histogram",
        solver="mab",
        bins="linspace",
        n_bins=11,
        batch_size=1000,
        z=3.0,
        n_jobs=None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.splitter = splitter
        self.solver = solver
        self.bins = bins
        self.n_bins = n_bins
        self.batch_size = batch_size
        self.z = z
        self.n_jobs = n_jobs
        self.random_state = random_state
