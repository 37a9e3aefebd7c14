"""Multiway categorical trees (what TSDT and the exact solver return), their
input checks, and their translation into the common binary format."""

import warnings
from dataclasses import dataclass

import numpy as np
import sklearn.exceptions

from ..exceptions import DataError, NotFittedError
from ..tree import (
    TREE_LEAF,
    TREE_UNDEFINED,
    Ensemble,
    Source,
    check_X,
    class_codes,
    make_tree,
    one_per_row,
    refuse_missing,
)
from ._kernels import apply_categorical, node_class_counts

MAX_CATEGORIES = 1024  # more categories than this in one column is an ID or a numeric column


class CodesTypeError(DataError, TypeError):
    """``X`` holds objects that are not numbers (a DataError, also a TypeError
    as numpy's conversion error is)."""


@dataclass(frozen=True, eq=False)
class CategoricalTree:
    """A decision tree with multiway splits on categorical attributes.

    Node 0 is the root; the children of an internal node ``i`` that splits
    on attribute ``f = feature[i]`` are ``first_child[i] + v`` for every
    category ``v`` in ``range(n_categories[f])`` (one child per category,
    contiguous ids, always larger than the parent's id). A row whose category
    has no child (negative, ``>= n_categories[f]`` or missing) stops at the
    splitting node and gets that node's ``value``. Nodes that no training row
    reached carry their parent's ``value``.

    Attributes
    ----------
    feature : int64 (n,)
        Attribute tested at the node, ``-2`` at leaves.
    first_child : int64 (n,)
        Id of the child for category 0, ``-1`` at leaves.
    n_categories : int64 (n_features,)
        Number of categories of each attribute at training time.
    value : float64 (n, n_classes)
        Class fractions of the training rows at the node.
    n_node_samples : int64 (n,)
        Training rows (or stream rows) that reached the node.
    """

    feature: np.ndarray
    first_child: np.ndarray
    n_categories: np.ndarray
    value: np.ndarray
    n_node_samples: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.feature < 0

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.is_leaf))

    @property
    def n_splits(self) -> int:
        """Internal nodes; a multiway split counts once."""
        return self.n_nodes - self.n_leaves

    @property
    def max_depth(self) -> int:
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes):
            if self.feature[node] >= 0:
                n_children = self.n_categories[self.feature[node]]
                depth[self.first_child[node] : self.first_child[node] + n_children] = depth[node] + 1
        return int(depth.max())

    @property
    def parent(self) -> np.ndarray:
        """Parent of each node, -1 at the root."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        for node in np.flatnonzero(self.feature >= 0):
            first = self.first_child[node]
            parent[first : first + self.n_categories[self.feature[node]]] = node
        return parent

    def feature_importances(self) -> np.ndarray:
        """Mean decrease in Gini impurity per attribute: at each split, its
        rows times their impurity less the same over its children, summed per
        attribute and normalised to sum 1 (all 0 for a single leaf), as
        scikit-learn's trees compute ``feature_importances_``."""
        counts = self.n_node_samples.astype(np.float64)
        weighted = counts * (1.0 - np.square(self.value).sum(axis=1))
        importance = np.zeros(len(self.n_categories))
        for node in np.flatnonzero(self.feature >= 0):
            first = self.first_child[node]
            children = slice(first, first + self.n_categories[self.feature[node]])
            importance[self.feature[node]] += weighted[node] - weighted[children].sum()
        total = importance.sum()
        return importance / total if total > 0 else importance

    def apply(self, X_codes: np.ndarray) -> np.ndarray:
        """Node where each row stops (a leaf, or a split meeting an unseen category)."""
        return apply_categorical(
            np.ascontiguousarray(X_codes, dtype=np.float64), self.feature, self.first_child, self.n_categories
        )

    def describe(self, feature_names=None, class_names=None) -> str:
        """The tree as indented text, one line per node."""
        names = feature_names if feature_names is not None else [f"x{j}" for j in range(len(self.n_categories))]
        lines = []

        def visit(node, indent, label):
            klass = int(np.argmax(self.value[node]))
            shown = class_names[klass] if class_names is not None else klass
            head = f"{'  ' * indent}{label}"
            if self.feature[node] < 0:
                lines.append(f"{head}-> {shown} (n={int(self.n_node_samples[node])})")
                return
            feature = int(self.feature[node])
            lines.append(f"{head}split on {names[feature]} (n={int(self.n_node_samples[node])}, else {shown})")
            for category in range(int(self.n_categories[feature])):
                visit(int(self.first_child[node]) + category, indent + 1, f"{names[feature]}={category}: ")

        visit(0, 0, "")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"CategoricalTree(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, n_splits={self.n_splits}, "
            f"max_depth={self.max_depth}, n_classes={self.value.shape[1]})"
        )


def tree_from_counts(feature, first_child, n_categories, counts) -> CategoricalTree:
    """Values from per-node class counts (empty nodes inherit their parent's);
    ``n_node_samples`` of an internal node is the sum of its children's, so
    parents and children agree even when the counts of different nodes come
    from different parts of a stream."""
    counts = np.asarray(counts, dtype=np.float64)
    feature = np.asarray(feature, dtype=np.int64)
    first_child = np.asarray(first_child, dtype=np.int64)
    own = counts.sum(axis=1)
    value = np.zeros_like(counts)
    value[0] = counts[0] / own[0] if own[0] > 0 else 1.0 / counts.shape[1]
    for node in range(len(feature)):  # parents come before children
        if node > 0 and own[node] > 0:
            value[node] = counts[node] / own[node]
        if feature[node] >= 0:
            for category in range(int(n_categories[feature[node]])):
                child = first_child[node] + category
                if own[child] == 0:
                    value[child] = value[node]
    n_node_samples = np.rint(own).astype(np.int64)
    for node in range(len(feature) - 1, -1, -1):  # children come after parents
        if feature[node] >= 0:
            first = first_child[node]
            n_node_samples[node] = n_node_samples[first : first + int(n_categories[feature[node]])].sum()
    return CategoricalTree(
        feature=feature,
        first_child=first_child,
        n_categories=np.asarray(n_categories, dtype=np.int64),
        value=value,
        n_node_samples=n_node_samples,
    )


def tree_from_data(feature, first_child, n_categories, X_codes, y_codes, n_classes, weight=None) -> CategoricalTree:
    """Values from the rows (row ``r`` standing for ``weight[r]`` rows)."""
    if weight is None:
        weight = np.ones(len(y_codes), dtype=np.int64)
    feature = np.asarray(feature, dtype=np.int64)
    first_child = np.asarray(first_child, dtype=np.int64)
    n_categories = np.asarray(n_categories, dtype=np.int64)
    counts = node_class_counts(
        X_codes, y_codes, np.asarray(weight, dtype=np.int64), n_classes, feature, first_child, n_categories
    )
    return tree_from_counts(feature, first_child, n_categories, counts)


# -------------------------------------------------------------- common format
def to_tree_arrays(tree: CategoricalTree):
    """Binary common-format tree predicting exactly like ``tree``.

    A multiway split of node ``i`` on attribute ``f`` becomes a chain of
    categorical nodes: the j-th sends the j-th category that has training
    rows to the left (to that child's subtree) and the later ones to the
    right. Everything else (categories without rows, unseen categories,
    negative codes, NaN) is routed right at every link
    (``unknown_category_go_to_left = missing_go_to_left = 0``) and ends in
    a last leaf holding node ``i``'s value: the majority class of the node,
    as :meth:`CategoricalTree.apply` gives. Each split therefore adds one
    leaf to the binary tree.
    """
    n_words = max(1, int((int(tree.n_categories.max(initial=1)) + 31) // 32))
    rows = []  # dicts of one binary node each, in preorder

    def add(feature, value, n_samples, left_set=(), right_set=()):
        rows.append(
            {
                "feature": feature,
                "value": value,
                "n": n_samples,
                "left_set": tuple(left_set),
                "right_set": tuple(right_set),
                "left": TREE_LEAF,
                "right": TREE_LEAF,
            }
        )
        return len(rows) - 1

    def build(node):
        counts = tree.value[node] * tree.n_node_samples[node]
        if tree.feature[node] < 0:
            return add(TREE_UNDEFINED, tree.value[node], int(tree.n_node_samples[node]))
        feature = int(tree.feature[node])
        first = int(tree.first_child[node])
        explicit = [
            category
            for category in range(int(tree.n_categories[feature]))
            if tree.n_node_samples[first + category] > 0 or tree.feature[first + category] >= 0
        ]
        if not explicit:
            return add(TREE_UNDEFINED, tree.value[node], int(tree.n_node_samples[node]))
        top = None
        previous = None
        for position, category in enumerate(explicit):
            later = explicit[position + 1 :]
            child = first + category
            n_here = int(sum(tree.n_node_samples[first + c] for c in explicit[position:]))
            counts_here = sum(tree.value[first + c] * tree.n_node_samples[first + c] for c in explicit[position:])
            value_here = counts_here / n_here if n_here > 0 else tree.value[node]
            link = add(feature, value_here, n_here, (category,), later)
            if previous is None:
                top = link
            else:
                rows[previous]["right"] = link
            rows[link]["left"] = build(child)
            previous = link
        rows[previous]["right"] = add(TREE_UNDEFINED, tree.value[node], 0)
        del counts
        return top

    build(0)
    n = len(rows)
    children_left = np.array([row["left"] for row in rows], dtype=np.int64)
    children_right = np.array([row["right"] for row in rows], dtype=np.int64)
    feature = np.array([row["feature"] for row in rows], dtype=np.int64)
    value = np.array([row["value"] for row in rows], dtype=np.float64)
    n_node_samples = np.array([row["n"] for row in rows], dtype=np.int64)
    category_left = np.zeros((n, n_words), dtype=np.uint32)
    category_right = np.zeros((n, n_words), dtype=np.uint32)
    for index, row in enumerate(rows):
        for category in row["left_set"]:
            category_left[index, category // 32] |= np.uint32(1 << (category % 32))
        for category in row["right_set"]:
            category_right[index, category // 32] |= np.uint32(1 << (category % 32))
    internal = children_left != TREE_LEAF
    return make_tree(
        children_left,
        children_right,
        feature,
        np.full(n, float(TREE_UNDEFINED)),
        value,
        missing_go_to_left=np.zeros(n, dtype=np.uint8),
        is_categorical=internal.astype(np.uint8),
        category_left=category_left,
        category_right=category_right,
        unknown_category_go_to_left=np.zeros(n, dtype=np.uint8),
        n_node_samples=n_node_samples,
        weighted_n_node_samples=n_node_samples.astype(np.float64),
        impurity=1.0 - np.sum(value * value, axis=1),
    )


def to_ensemble(tree: CategoricalTree, classes, feature_names, estimator: str, feature_categories=None) -> Ensemble:
    if feature_categories is not None:  # pandas categoricals are read by value, as at fitting time
        feature_categories = tuple(None if values is None else tuple(values) for values in feature_categories)
    return Ensemble(
        trees=(to_tree_arrays(tree),),
        task="classification",
        n_features_in_=int(len(tree.n_categories)),
        n_outputs=int(tree.value.shape[1]),
        tree_output=0,
        tree_scale=1.0,
        aggregation="sum",
        base_score=0.0,
        link="identity",
        source=Source(library="bandit_tree_tools", estimator=estimator),
        classes_=np.asarray(classes),
        feature_names_in_=feature_names,
        feature_categories=feature_categories,
    )


# ------------------------------------------------------------------- inputs
def _float_codes(values, column) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    finite = values[~np.isnan(values)]
    if finite.size and np.any(finite != np.floor(finite)):
        example = float(finite[finite != np.floor(finite)][0])
        raise DataError(
            f"feature {column!r} holds non-integer numbers (for example {example!r}); TSDT needs categorical "
            "attributes given as integer codes 0, 1, 2, ... (NaN marks a missing value at prediction) or pandas "
            "categoricals; turn numeric features "
            "into categories first with btt.discretize(X) (quantile bins) or btt.discretize(X, model) "
            "(the thresholds your model uses)"
        )
    return values


def categorical_codes(X, *, fitting: bool, categories=None):
    """Turn ``X`` into float64 category codes (NaN where missing).

    Returns ``(codes, n_categories, feature_names, feature_categories)``;
    ``n_categories`` is read from pandas categoricals or is ``max code + 1``
    of other columns. A pandas categorical column is read by value: coded
    against ``categories[j]`` (the category values a model was fitted with)
    where given, else against its own categories, which become
    ``feature_categories[j]`` (None for a column of codes). So a frame that
    lists its categories in another order, or lacks some, is coded as at
    fitting time.
    """
    feature_names = None
    declared = None
    feature_categories = None
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        labels = [str(column) for column in X.columns]
        if len(set(labels)) != len(labels):
            repeated = sorted({name for name in labels if labels.count(name) > 1})
            raise DataError(
                f"X has duplicate column names {repeated[:5]}; every column of a DataFrame must have its own "
                "name: rename or drop the repeated columns"
            )
        feature_names = np.asarray(labels, dtype=object)
        columns, declared, feature_categories = [], [], []
        for position, column in enumerate(X.columns):
            series = X.iloc[:, position]
            if str(series.dtype) == "category":
                codes, values = _categorical_column_codes(series, column, categories, position, fitting)
                feature_categories.append(values)
                declared.append(len(values))
            else:
                feature_categories.append(None)
                try:
                    codes = series.to_numpy(dtype=np.float64, na_value=np.nan)
                except (TypeError, ValueError):
                    raise DataError(
                        f"column {column!r} has dtype {series.dtype}; encode it as a pandas categorical "
                        f"(X[{column!r}].astype('category')) or as integer codes"
                    ) from None
                codes = _float_codes(codes, column)
                declared.append(-1)
            columns.append(codes)
        codes = np.column_stack(columns) if columns else np.empty((len(X), 0))
        declared = np.asarray(declared, dtype=np.int64)
    else:
        _refuse_sparse_and_complex(X)
        try:
            codes = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as error:
            kind = CodesTypeError if isinstance(error, TypeError) else DataError
            raise kind(
                f"X must hold integer category codes; converting it to numbers failed: {error}. "
                "Encode strings with pandas (.astype('category')) or sklearn's OrdinalEncoder"
            ) from None
        if codes.ndim != 2:
            raise DataError(
                f"X must be 2-D (n_rows, n_features), got an array with {codes.ndim} dimensions. Reshape your "
                "data: X.reshape(-1, 1) for a single feature, X.reshape(1, -1) for a single row"
            )
    if codes.ndim != 2:
        raise DataError(f"X must be 2-D (n_rows, n_features), got {codes.ndim} dimensions")
    if codes.shape[0] == 0:
        raise DataError("X has no rows; TSDT needs at least one row of each of two classes")
    if codes.shape[1] == 0:
        raise DataError(
            f"X has no columns: 0 feature(s) (shape={codes.shape}) while a minimum of 1 is required; "
            "pass at least one categorical feature"
        )
    if np.isinf(codes).any():
        row, column = np.argwhere(np.isinf(codes))[0]
        raise DataError(f"X has an infinite value inf (row {row}, feature {column}); codes must be 0, 1, 2, ...")
    if fitting and np.isnan(codes).any():
        row, column = np.argwhere(np.isnan(codes))[0]
        raise DataError(
            f"X has a missing value NaN (row {row}, feature {column}); give missing values their own category "
            "(btt.discretize does this for numeric columns)"
        )
    if declared is None:  # frames were checked column by column above
        for column in range(codes.shape[1]):
            _float_codes(codes[:, column], column)
    n_categories = None
    if fitting:
        if (codes < 0).any():
            row, column = np.argwhere(codes < 0)[0]
            raise DataError(
                f"Negative values in data passed to fit: X has a negative category code "
                f"{codes[row, column]:g} (row {row}, feature {column}); codes must be 0, 1, 2, ..."
            )
        n_categories = codes.max(axis=0).astype(np.int64) + 1
        if declared is not None:
            n_categories = np.where(declared > 0, np.maximum(declared, n_categories), n_categories)
        if n_categories.max() > MAX_CATEGORIES:
            column = int(np.argmax(n_categories))
            raise DataError(
                f"feature {column} has {int(n_categories[column])} categories (more than {MAX_CATEGORIES}); "
                "this looks like a numeric or identifier column: bin it with btt.discretize or drop it"
            )
    return codes, n_categories, feature_names, feature_categories


def _categorical_column_codes(series, column, categories, position, fitting):
    """Codes of a pandas categorical column by value, and the category values
    they index (the model's, where it has them for this column)."""
    known = None if categories is None or position >= len(categories) else categories[position]
    if known is None:
        values = list(series.cat.categories)
    else:
        values = list(known)
        if fitting:  # a later chunk of a stream: a category the stream was not declared with is an error
            allowed = set(values)
            unseen = [value for value in series.cat.categories if value not in allowed and (series == value).any()]
            if unseen:
                raise DataError(
                    f"column {column!r} holds categories {unseen[:5]} that the stream's first chunk did not "
                    f"declare (it declared {values[:10]}); declare every category on the first partial_fit call, "
                    "for example with pd.Categorical(values, categories=[...])"
                )
        series = series.cat.set_categories(values)
    codes = series.cat.codes.to_numpy().astype(np.float64)
    codes[codes < 0] = np.nan
    return codes, values


def _refuse_sparse_and_complex(X):
    if hasattr(X, "tocsr") or type(X).__module__.startswith("scipy.sparse"):
        raise CodesTypeError(
            "X is a sparse matrix; TSDT needs a dense array of category codes (sparse input is not supported): "
            "pass X.toarray()"
        )
    if getattr(getattr(X, "dtype", None), "kind", None) == "c":
        raise DataError("X holds complex numbers: Complex data not supported; pass integer category codes")


def varying_attributes(X_codes) -> np.ndarray:
    """Whether each attribute takes more than one value over the rows of
    ``X_codes``. A split on one that does not keeps every row in one child,
    at the cost of a split: the exact solver, the completion's index of
    tests and the default search leave those out."""
    return np.any(X_codes != X_codes[:1], axis=0)


def encode_labels(y, n_rows: int, classes=None):
    if y is None:
        raise DataError("this estimator requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # taken as 1-D, with the warning scikit-learn's estimators give
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it is used as y.ravel()",
            sklearn.exceptions.DataConversionWarning,
            stacklevel=3,
        )
    y = one_per_row(y, n_rows, what="label")
    refuse_missing(y, "y", "labels")
    if classes is None:
        if y.dtype.kind == "f" and np.any(y != np.floor(y)):
            raise DataError(
                "Unknown label type: continuous. y holds non-integer numbers; a classifier needs class labels"
            )
        classes, codes = np.unique(y, return_inverse=True)
    else:
        classes = np.asarray(classes)
        codes = class_codes(y, classes)
    return classes, codes.astype(np.int64)


class CategoricalTreeModel:
    """Prediction methods shared by the fitted models that hold a ``tree_``."""

    def __sklearn_is_fitted__(self) -> bool:
        # parameters such as lambda_ end with "_": scikit-learn's default test would see a fitted model
        return hasattr(self, "tree_")

    def _check_fitted(self):
        if not hasattr(self, "tree_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def _codes_for_predict(self, X) -> np.ndarray:
        self._check_fitted()
        if not hasattr(X, "columns"):
            _refuse_sparse_and_complex(X)
            shape = np.shape(np.asarray(X)) if not isinstance(X, np.ndarray) else X.shape
            if len(shape) == 1:
                raise DataError(
                    f"X must be 2-D (n_rows, {self.n_features_in_}), got a 1-D array of {shape[0]} values. "
                    "Reshape your data: X.reshape(1, -1) for a single row, X.reshape(-1, 1) for a single feature"
                )
            if len(shape) == 2 and shape[1] != self.n_features_in_:
                raise DataError(
                    f"X has {shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                    "features as input"
                )
        codes = check_X(
            X,
            self.n_features_in_,
            getattr(self, "feature_names_in_", None),
            feature_categories=getattr(self, "feature_categories_", None),
        )
        if np.isinf(codes).any():
            row, column = np.argwhere(np.isinf(codes))[0]
            raise DataError(
                f"X has an infinite value inf (row {row}, feature {column}); codes must be 0, 1, 2, ... "
                "(NaN for a missing value)"
            )
        for column in range(codes.shape[1]):
            _float_codes(codes[:, column], column)
        return codes

    def apply(self, X) -> np.ndarray:
        """Node of ``tree_`` where each row stops."""
        codes = self._codes_for_predict(X)  # checks that the model is fitted
        return self.tree_.apply(codes)

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the node each row reaches. Unseen categories
        (and missing values) stop at the split that meets them and get that
        node's class fractions: its majority class is predicted."""
        nodes = self.apply(X)
        return self.tree_.value[nodes]

    def predict_log_proba(self, X) -> np.ndarray:
        """The log of :meth:`predict_proba` (-inf for a class the node does not hold)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The class of largest fraction at the node each row reaches (see
        :meth:`predict_proba`)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of :meth:`predict` on ``X`` against ``y``, weighted by
        ``sample_weight`` (scikit-learn's ``accuracy_score``, with its checks
        of the rows and the labels)."""
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))

    def decision_path(self, X):
        """The nodes of ``tree_`` each row passes, from the root to where it
        stops (scipy CSR, ``n_rows x n_nodes``, as scikit-learn's trees)."""
        from scipy import sparse

        stops = self.apply(X)
        parent = self.tree_.parent
        rows, nodes = [], []
        row, node = np.arange(stops.shape[0]), stops
        while row.size:  # one level up at a time, until every row has passed the root
            rows.append(row)
            nodes.append(node)
            node = parent[node]
            row, node = row[node >= 0], node[node >= 0]
        rows, nodes = np.concatenate(rows), np.concatenate(nodes)
        path = sparse.csr_matrix(
            (np.ones(rows.shape[0], dtype=np.int64), (rows, nodes)), shape=(stops.shape[0], self.tree_.n_nodes)
        )
        path.sort_indices()
        return path

    @property
    def feature_importances_(self) -> np.ndarray:
        """Impurity-based importance of each attribute (mean decrease in Gini
        impurity over the splits on it, weighted by their rows), summing to 1
        (0 everywhere for a single leaf)."""
        self._check_fitted()
        return self.tree_.feature_importances()

    def get_depth(self) -> int:
        """Depth of the fitted tree (0 for a single leaf)."""
        self._check_fitted()
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """Leaves of the fitted tree (as :attr:`n_leaves_`)."""
        self._check_fitted()
        return self.tree_.n_leaves

    @property
    def n_leaves_(self) -> int:
        """Leaves of the fitted tree."""
        self._check_fitted()
        return self.tree_.n_leaves

    @property
    def n_splits_(self) -> int:
        """Splits of the fitted tree (a multiway split counts once: the count
        the objective's penalty ``lambda_`` multiplies)."""
        self._check_fitted()
        return self.tree_.n_splits

    @property
    def ensemble_(self) -> Ensemble:
        """``tree_`` in the common format (binary category-set splits)."""
        self._check_fitted()
        cached = self.__dict__.get("_ensemble_cache")
        if cached is None or cached[0] is not self.tree_:
            cached = (
                self.tree_,
                to_ensemble(
                    self.tree_,
                    self.classes_,
                    getattr(self, "feature_names_in_", None),
                    type(self).__name__,
                    getattr(self, "feature_categories_", None),
                ),
            )
            self.__dict__["_ensemble_cache"] = cached
        return cached[1]
