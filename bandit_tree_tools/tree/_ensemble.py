"""An ensemble of trees in the common format, with everything the source
libraries keep outside their trees, and validated prediction methods."""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from ..exceptions import DataError, InvalidTreeError, ParameterError
from . import _kernels
from ._arrays import freeze_tree, node_depth, validate
from ._input import _categories_as_the_library_reads_them, _is_sparse, check_X
from ._links import LINK_EXPS, LINKS, apply_link
from ._nodes import check_tree_index, check_tree_indices
from ._packing import PackedEnsemble, _pack

# a sparse X whose dense copy would pass this many bytes is routed a block of rows at a time
SPARSE_BLOCK_BYTES = 64 * 2**20

TASKS = ("classification", "regression")
AGGREGATIONS = ("sum", "mean")
SPLIT_RULES = ("le", "lt")
INPUT_DTYPES = ("float32", "float64")
LABEL_RULES = ("proba", "raw>=0", "raw>0")
LABEL_RULE_CODES = {rule: code for code, rule in enumerate(LABEL_RULES)}  # as the numba kernels read them


class FrozenDict(dict):
    """A read-only dict that pickles (``MappingProxyType`` does not)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("an ensemble's source payload is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))


@dataclass(frozen=True)
class Source:
    """Where an ensemble came from, and what its exporter needs.

    Attributes
    ----------
    library : str
        "sklearn", "lightgbm", "xgboost" or "bandit_tree_tools".
    estimator : str
        The class name of the imported object.
    version : str
        The library's version at import.
    payload : mapping
        Read-only, owned by the library's adapter (model header, parameters,
        a private copy of the estimator, ...). The user's object is never
        stored here; nothing outside the adapter reads it.
    collapse_hint : str
        Set by the importer where some internal nodes do not store the value
        they would have as leaves (``has_leaf_value == 0``): the sentence
        :func:`~bandit_tree_tools.collapse` adds to its error for such a
        node, saying how to import the model so that they do (for example
        "Import it with btt.from_model(model, X=X_train, y=y_train)").

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> btt.Source("lightgbm", "LGBMClassifier", "4.5.0")
    Source(library='lightgbm', estimator='LGBMClassifier', version='4.5.0')
    """

    library: str
    estimator: str
    version: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    collapse_hint: str = field(default="", repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "payload", FrozenDict(self.payload))


@dataclass(frozen=True, eq=False)
class Ensemble:
    """Trees in the common format plus how their outputs become predictions.

    ``raw[:, k] = base_score[k] + sum over trees t with output column k of
    tree_scale[t] * value_t[leaf_t(x)]`` (``aggregation="mean"`` divides the
    sum by the number of trees first). A tree's value row of width ``w``
    lands in raw columns ``tree_output[t] .. tree_output[t] + w - 1``.
    Probabilities are ``link(raw)``.

    Attributes
    ----------
    trees : tuple of TreeArrays
        All trees share the value width.
    task : {"classification", "regression"}
    n_features_in_ : int
    n_outputs : int
        Columns of the raw score (1 for regression and binary boosting,
        ``n_classes`` otherwise).
    tree_output : int64 (n_trees,)
        First raw column each tree contributes to.
    tree_scale : float64 (n_trees,)
        Factor applied to a tree's values (scikit-learn GradientBoosting's
        learning rate; 1.0 elsewhere, where leaf values already include it).
    aggregation : {"sum", "mean"}
    base_score : float64 (n_outputs,)
        Intercept in margin (raw) space.
    link : {"identity", "sigmoid", "softmax", "exp"}
        Raw score to prediction: probability of the positive class (sigmoid,
        binary), class probabilities (softmax, or identity when the trees
        already output class fractions), or the regression prediction.
    link_scale : float
        Factor inside the link (LightGBM's ``sigmoid`` parameter).
    classes_ : ndarray or None
        Class labels in the order of the probability columns.
    feature_names_in_ : ndarray of str or None
    split_rule : {"le", "lt"}
        Numerical splits send ``x <= threshold`` ("le": scikit-learn,
        LightGBM) or ``x < threshold`` ("lt": XGBoost) to the left.
    input_dtype : {"float32", "float64"}
        X is cast to this dtype before comparison, as the source library does.
    accumulate_float32 : bool
        The source library sums tree outputs in float32 (XGBoost).
    label_rule : {"proba", "raw>=0", "raw>0"}
        How ``predict`` picks a class, as the source library does: the
        argmax of the probabilities ("proba": forests, LightGBM, XGBoost's
        probability objectives) or of the raw score, the first class on
        ties; with one raw column, the positive class at ``raw >= 0``
        ("raw>=0": scikit-learn's GradientBoosting) or at ``raw > 0``
        ("raw>0": HistGradientBoosting; XGBoost's ``multi:softmax``, which
        has a column per class). The rules differ only at ``raw == 0`` and
        where the probabilities tie while the raw scores do not.
    link_exp : {"numpy", "libm"}
        Whose ``exp`` the softmax and exp links take, as the source library
        does: numpy's vectorised one ("numpy": scikit-learn, and XGBoost's
        ``multi:softmax``, whose probabilities are its wrapper's scipy
        softmax) or the C library's ("libm": LightGBM, XGBoost). They
        differ in the last bit of a few percent of values
        (``tree/_links.py``).
    feature_categories : tuple or None
        Per feature, the category values seen in training (a tuple) or None.
        A pandas categorical column of X is then coded by value against them,
        as LightGBM and XGBoost do, and values not seen in training become
        missing. Without it, a categorical column's own codes are used.
    source : Source

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> ensemble = btt.from_model(model)
    >>> ensemble  # doctest: +NORMALIZE_WHITESPACE
    Ensemble(source=sklearn:DecisionTreeClassifier, task='classification', n_classes=2, n_trees=1, n_leaves=10,
             max_depth=4, n_features_in_=20)
    >>> bool((ensemble.predict_proba(X) == model.predict_proba(X)).all())  # bit for bit
    True
    >>> ensemble.apply(X[:3]).shape  # the leaf of every row in every tree
    (3, 1)

    Validate X once, then skip the checks (and copies) in later calls:

    >>> rows = ensemble.check_X(X)
    >>> ensemble.predict_raw(rows, check_input=False).shape
    (400, 2)

    A forest's trees one at a time (:meth:`subset`):

    >>> from sklearn.ensemble import RandomForestClassifier
    >>> forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:200], y[:200])
    >>> one = btt.from_model(forest).subset([2])
    >>> bool((one.predict_proba(X) == forest.estimators_[2].predict_proba(X)).all())
    True
    """

    trees: tuple
    task: str
    n_features_in_: int
    n_outputs: int
    # given as array-likes (a scalar broadcasts); __post_init__ stores int64 / float64 arrays
    tree_output: np.ndarray
    tree_scale: np.ndarray
    aggregation: str
    base_score: np.ndarray
    link: str
    source: Source
    link_scale: float = 1.0
    classes_: np.ndarray | None = None
    feature_names_in_: np.ndarray | None = None
    split_rule: str = "le"
    input_dtype: str = "float64"
    accumulate_float32: bool = False
    feature_categories: tuple | None = None
    label_rule: str = "proba"
    link_exp: str = "numpy"

    def __post_init__(self):
        trees = tuple(freeze_tree(tree) for tree in self.trees)  # read-only: edits build new trees
        object.__setattr__(self, "trees", trees)
        n_trees = len(trees)
        object.__setattr__(
            self, "tree_output", np.ascontiguousarray(np.broadcast_to(self.tree_output, (n_trees,)), dtype=np.int64)
        )
        object.__setattr__(
            self, "tree_scale", np.ascontiguousarray(np.broadcast_to(self.tree_scale, (n_trees,)), dtype=np.float64)
        )
        object.__setattr__(
            self,
            "base_score",
            np.ascontiguousarray(np.broadcast_to(self.base_score, (self.n_outputs,)), dtype=np.float64),
        )
        if self.classes_ is not None:
            object.__setattr__(self, "classes_", np.asarray(self.classes_))
        if self.feature_names_in_ is not None:
            object.__setattr__(self, "feature_names_in_", np.asarray(self.feature_names_in_, dtype=object))
        for array in (self.tree_output, self.tree_scale, self.base_score):
            array.flags.writeable = False
        check_ensemble(self)

    # ------------------------------------------------------------------ shape
    @property
    def n_trees(self) -> int:
        """Trees of the model (a multiclass boosted model has one per class and iteration)."""
        return len(self.trees)

    @property
    def n_nodes(self) -> int:
        """Nodes of every tree together."""
        return sum(tree.n_nodes for tree in self.trees)

    @property
    def n_leaves(self) -> int:
        """Leaves of every tree together: the size pruning counts."""
        return sum(tree.n_leaves for tree in self.trees)

    @property
    def max_depth(self) -> int:
        """Depth of the deepest tree (a tree of one leaf has depth 0)."""
        return max(tree.max_depth for tree in self.trees)

    def replace_trees(self, trees) -> "Ensemble":
        """A new ensemble with other trees (as many as before) and everything else unchanged."""
        trees = tuple(trees)
        if len(trees) != self.n_trees:
            raise ParameterError(
                f"replace_trees needs {self.n_trees} trees, got {len(trees)}; use dataclasses.replace "
                "to change tree_output and tree_scale too"
            )
        return replace(self, trees=trees)

    def __repr__(self) -> str:
        classes = "" if self.classes_ is None else f", n_classes={len(self.classes_)}"
        return (
            f"Ensemble(source={self.source.library}:{self.source.estimator}, task={self.task!r}{classes}, "
            f"n_trees={self.n_trees}, n_leaves={self.n_leaves}, max_depth={self.max_depth}, "
            f"n_features_in_={self.n_features_in_})"
        )

    # ---------------------------------------------------------------- kernels
    @cached_property
    def packed(self) -> PackedEnsemble:
        return _pack(self)

    def _routing_args(self, X, trees=None, finite=None):
        """(X, roots, depths, lockstep steps, records, cuts, what the layout
        reads besides: ``PackedEnsemble.general``) for the engine; ``trees``
        routes only those trees (in that order); ``finite``: whether the rows
        to route hold no NaN (looked up in all of ``X`` by default)."""
        packed = self.packed
        roots, depths, lockstep = packed.tree_root, packed.tree_depth, packed.tree_lockstep
        if trees is not None:
            roots, depths, lockstep = (np.ascontiguousarray(a[trees]) for a in (roots, depths, lockstep))
        finite = not _kernels._has_nan(X) if finite is None else finite
        general = packed.general(self.split_rule, finite=finite)
        return (X, roots, depths, lockstep, packed.records, packed.cuts, general)

    def subset(self, trees) -> "Ensemble":
        """A new ensemble of the trees ``trees`` (indices, in that order), with
        the same source, link, base score and everything else.

        It predicts ``base_score`` plus the listed trees' outputs (each with
        its own ``tree_output`` column and ``tree_scale``); an averaged
        ensemble (``aggregation="mean"``) averages over the listed trees only.
        So ``subset([t]).apply(X)`` is column ``t`` of ``apply(X)`` and, for a
        forest, ``subset([t])`` predicts like tree ``t`` alone. To route a few
        trees of this ensemble without building a new one, use
        ``apply(X, trees=...)``. A subset is meant for routing and prediction:
        whether ``btt.to_model`` can write it depends on the library's adapter
        (the source's payload describes the whole model).
        """
        indices = check_tree_indices(trees, self.n_trees)
        if indices.size == 0:
            raise ParameterError("subset needs at least one tree index, got none")
        return replace(
            self,
            trees=tuple(self.trees[i] for i in indices),
            tree_output=self.tree_output[indices],
            tree_scale=self.tree_scale[indices],
        )

    # ------------------------------------------------------------- prediction
    def check_X(self, X, name: str = "X") -> np.ndarray:
        """Validate ``X`` against the training columns and cast it to ``input_dtype``;
        categorical features are read the way the source library reads them.

        The result can be passed to the prediction methods with
        ``check_input=False``, which then neither validate nor copy it. A
        C-contiguous float array of ``input_dtype`` is returned as it is (no
        copy) when no categorical feature needs rewriting. ``name``: the
        argument's name in error messages (``"X_val"``: "X_val has 3
        features, ...")."""
        array = check_X(
            X,
            self.n_features_in_,
            self.feature_names_in_,
            self.input_dtype,
            self.feature_categories,
            library=self.source.library,
            name=name,
        )
        return _categories_as_the_library_reads_them(self, array)

    def _input(self, X, check_input: bool) -> np.ndarray:
        """``X`` validated (``check_input``), or checked to be what :meth:`check_X`
        returns: a C-contiguous 2-D array of ``input_dtype`` with the model's columns."""
        if check_input:
            return self.check_X(X)
        if (
            not isinstance(X, np.ndarray)
            or X.dtype != np.dtype(self.input_dtype)
            or X.ndim != 2
            or X.shape[1] != self.n_features_in_
            or not X.flags.c_contiguous
        ):
            what = f"{type(X).__name__} {getattr(X, 'dtype', '')} {getattr(X, 'shape', '')}".rstrip()
            raise DataError(
                f"check_input=False needs X as Ensemble.check_X returns it (a C-contiguous {self.input_dtype} array "
                f"of shape (n_rows, {self.n_features_in_})), got {what}; pass check_input=True"
            )
        return X

    def _sparse_blocks(self, X, check_input: bool):
        """Row blocks of a sparse ``X`` too large to make dense at once (a
        wide matrix), as CSR slices; None for any other ``X``. The routing
        engine reads dense rows, so such an ``X`` is densified a block at a
        time, as scikit-learn predicts sparse input in place."""
        if not check_input or not _is_sparse(X) or getattr(X, "ndim", 2) != 2:
            return None
        n_rows, n_columns = X.shape
        row_bytes = max(1, n_columns) * np.dtype(self.input_dtype).itemsize
        if n_rows * row_bytes <= SPARSE_BLOCK_BYTES:
            return None
        from scipy.sparse import csc_matrix

        step = max(1, SPARSE_BLOCK_BYTES // row_bytes)
        rows = X.tocsr()
        blocks = [rows[start : start + step] for start in range(0, n_rows, step)]
        # keep CSC as CSC: LightGBM reads CSC and CSR input by different zero rules (tree._input)
        return [block.tocsc() for block in blocks] if isinstance(X, csc_matrix) else blocks

    def apply(self, X, trees=None, *, check_input: bool = True) -> np.ndarray:
        """Leaf id (local node id) reached in every tree: int64 (n_rows, n_trees).

        ``trees`` (tree indices) routes only those trees and returns one column
        per index, in the order given. ``check_input=False`` skips the
        validation of ``X``, which must then come from :meth:`check_X`."""
        blocks = self._sparse_blocks(X, check_input)
        if blocks is not None:
            return np.concatenate([self.apply(block, trees) for block in blocks])
        if trees is not None:
            trees = check_tree_indices(trees, self.n_trees)
        X = self._input(X, check_input)
        rows = _kernels.block_rows(X.shape[0], int(self.packed.tree_depth.max()))
        return _kernels._apply(*self._routing_args(X, trees), self.packed.leaf_id, rows)

    def _apply_columns(self, X, order, out, lo=0, hi=None) -> None:
        """``apply(X[order[lo:hi]]).T`` written into ``out[:, lo:hi]``: the
        leaves of the rows ``order`` of ``X`` (as :meth:`check_X` returns it)
        tree-major, in that order, in ``out``'s signed integer type, which
        must hold every node id; routed a slice at a time by callers that need
        only the first rows."""
        order = np.asarray(order, dtype=np.int64)
        hi = order.shape[0] if hi is None else hi
        X = self._input(X, check_input=False)
        n_nodes = int(np.diff(self.packed.node_offset).max())
        if out.dtype.kind != "i" or np.iinfo(out.dtype).max < n_nodes - 1 or out.shape != (self.n_trees, order.size):
            raise ValueError(
                f"out must be a signed integer array of shape ({self.n_trees}, {order.size}) holding "
                f"node ids up to {n_nodes - 1}, got {out.dtype} {out.shape}"
            )
        if not 0 <= lo <= hi <= order.shape[0]:
            raise ValueError(f"need 0 <= lo <= hi <= {order.shape[0]}, got lo={lo}, hi={hi}")
        routed = order[lo:hi]  # only these are read: prefix routing checks each slice once
        if routed.size and (routed.min() < 0 or routed.max() >= X.shape[0]):
            raise ValueError(f"order must hold row indices of X (0 to {X.shape[0] - 1})")
        finite = not _kernels._has_nan_in(X, order, lo, hi)  # of the rows routed now only
        X, *routing = self._routing_args(X, finite=finite)
        rows = _kernels.block_rows(hi - lo, int(self.packed.tree_depth.max()))
        _kernels._apply_columns(X, order, lo, hi, *routing, self.packed.leaf_id, out, rows)

    def predict_raw(self, X, *, check_input: bool = True) -> np.ndarray:
        """Raw scores (margins), float64 (n_rows, n_outputs). ``check_input=False``:
        see :meth:`apply`."""
        blocks = self._sparse_blocks(X, check_input)
        if blocks is not None:
            return np.concatenate([self.predict_raw(block) for block in blocks])
        packed = self.packed
        X = self._input(X, check_input)
        return _kernels._predict_raw(
            *self._routing_args(X),
            packed.leaf_value,
            packed.leaf_value32,
            self.tree_output,
            self.base_score,
            self.aggregation == "mean",
            self.accumulate_float32,
            _kernels.block_rows(X.shape[0], int(self.packed.tree_depth.max())),
        )

    def _raw_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """``predict_raw`` of the rows whose leaves ``apply`` gave, without routing
        them again (the same sums in the same order, so the same bits).
        ``leaves`` may also be int8, int16 or int32, and a view in any layout (the
        transpose of a tree-major matrix of :meth:`_apply_columns`)."""
        packed = self.packed
        leaves = np.asarray(leaves)
        if leaves.dtype not in (np.int8, np.int16, np.int32, np.int64):
            leaves = np.ascontiguousarray(leaves, dtype=np.int64)
        if leaves.ndim != 2 or leaves.shape[1] != self.n_trees:
            raise ValueError(f"leaves must have shape (n_rows, {self.n_trees}), got {leaves.shape}")
        raw, outside = _kernels._raw_from_leaves(
            leaves,
            packed.tree_root,
            np.diff(packed.node_offset),
            packed.new_of_old,
            packed.leaf_value,
            packed.leaf_value32,
            self.tree_output,
            self.base_score,
            self.aggregation == "mean",
            self.accumulate_float32,
        )
        if outside:
            raise ValueError("leaves must be node ids of their trees, as apply returns them")
        return raw

    def transform_raw(self, raw: np.ndarray) -> np.ndarray:
        """Probabilities (classification; a binary model's of its positive
        class only) or predictions (regression) from raw scores of shape
        ``(n_rows, n_outputs)``, as :meth:`predict_raw` gives them."""
        raw = np.asarray(raw)
        if raw.ndim != 2 or raw.shape[1] != self.n_outputs or raw.dtype.kind not in "fiu":
            raise DataError(
                f"raw must hold raw scores of shape (n_rows, {self.n_outputs}), as predict_raw gives them; got "
                f"{raw.dtype} of shape {raw.shape}"
            )
        if raw.dtype.kind != "f":
            raw = raw.astype(np.float64)
        return apply_link(self.link, raw, self.link_scale, self.accumulate_float32, self.link_exp)

    def predict_proba(self, X, *, check_input: bool = True) -> np.ndarray:
        """Class probabilities (n_rows, n_classes), in the order of ``classes_``."""
        if self.task != "classification":
            raise AttributeError("predict_proba is only defined for classification ensembles")
        proba = self.transform_raw(self.predict_raw(X, check_input=check_input))
        if proba.shape[1] == 1:  # binary models output P(positive class); the other's in the link's precision
            other = (
                (np.float32(1.0) - proba.astype(np.float32)).astype(np.float64)
                if self.accumulate_float32
                else 1.0 - proba
            )
            proba = np.hstack([other, proba])
        return proba

    def predict(self, X, *, check_input: bool = True) -> np.ndarray:
        """Class labels (classification) or predictions (regression)."""
        if self.task == "classification":
            return self.classes_[self._class_index(X, check_input)]  # type: ignore[index]  # a classifier has classes
        prediction = self.transform_raw(self.predict_raw(X, check_input=check_input))
        return prediction[:, 0] if prediction.shape[1] == 1 else prediction

    def _class_index(self, X, check_input: bool) -> np.ndarray:
        if self.label_rule == "proba":
            return np.argmax(self.predict_proba(X, check_input=check_input), axis=1)
        raw = self.predict_raw(X, check_input=check_input)
        if raw.shape[1] > 1:
            return np.argmax(raw, axis=1)
        positive = raw[:, 0] >= 0 if self.label_rule == "raw>=0" else raw[:, 0] > 0
        return positive.astype(np.int64)

    def decision_path(self, X, *, check_input: bool = True):
        """Node indicator (scipy CSR, n_rows x n_nodes over all trees) and the
        column offset of each tree, as scikit-learn's forests return."""
        from scipy.sparse import csr_matrix, vstack

        blocks = self._sparse_blocks(X, check_input)
        if blocks is not None:
            parts = [self.decision_path(block)[0] for block in blocks]
            return vstack(parts, format="csr"), self.packed.node_offset.copy()
        X, roots, _, _, records, cuts, general = self._routing_args(self._input(X, check_input))
        origin = self.packed.origin
        lengths = _kernels._path_lengths(X, roots, records, cuts, general, origin)
        indptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = _kernels._fill_paths(X, indptr, roots, records, cuts, general, origin)
        data = np.ones(indices.shape[0], dtype=np.int8)
        indicator = csr_matrix((data, indices, indptr), shape=(lengths.shape[0], self.n_nodes))
        return indicator, self.packed.node_offset.copy()

    def node_depths(self, tree: int = 0) -> np.ndarray:
        """Depth of every node of tree ``tree`` (the root is at depth 0)."""
        return node_depth(self.trees[check_tree_index(tree, self.n_trees)])


def averaged_ensemble(
    trees, *, n_features: int, source: Source, classes=None, feature_names=None, input_dtype: str = "float32"
) -> Ensemble:
    """Trees whose leaves hold class fractions (``classes`` given) or means,
    averaged with equal weights and no intercept: scikit-learn's trees and
    forests (and their MABSplit counterparts), compared as ``x <= threshold``
    on ``input_dtype`` inputs (float32, as scikit-learn's trees cast X)."""
    classification = classes is not None
    return Ensemble(
        trees=tuple(trees),
        task="classification" if classification else "regression",
        n_features_in_=int(n_features),
        n_outputs=len(classes) if classification else 1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="mean",
        base_score=0.0,
        link="identity",
        source=source,
        classes_=classes,
        feature_names_in_=feature_names,
        split_rule="le",
        input_dtype=input_dtype,
    )


def check_ensemble(ensemble: Ensemble) -> Ensemble:
    """Check every invariant of an ensemble and of each of its trees.

    Every :class:`Ensemble` is checked when it is built; call this after
    building one by hand from parts. Returns the ensemble.

    Raises
    ------
    InvalidTreeError
        Naming the first broken invariant (and the tree it is in).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> ensemble = btt.from_model(model)
    >>> btt.check_ensemble(ensemble) is ensemble
    True
    >>> import dataclasses
    >>> dataclasses.replace(ensemble, link="probit")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.InvalidTreeError: link must be one of (...), got 'probit'
    """
    if ensemble.task not in TASKS:
        raise InvalidTreeError(f"task must be one of {TASKS}, got {ensemble.task!r}")
    for name, allowed in (
        ("aggregation", AGGREGATIONS),
        ("split_rule", SPLIT_RULES),
        ("input_dtype", INPUT_DTYPES),
        ("link", tuple(LINKS)),
        ("label_rule", LABEL_RULES),
        ("link_exp", LINK_EXPS),
    ):
        if getattr(ensemble, name) not in allowed:
            raise InvalidTreeError(f"{name} must be one of {allowed}, got {getattr(ensemble, name)!r}")
    if ensemble.n_trees == 0:
        raise InvalidTreeError("an ensemble needs at least one tree")
    width = ensemble.trees[0].value.shape[1]
    for index, tree in enumerate(ensemble.trees):
        validate(tree, n_features=ensemble.n_features_in_, where=f"tree {index}")
        if tree.value.shape[1] != width:
            raise InvalidTreeError(f"tree {index} has values of width {tree.value.shape[1]}, tree 0 of width {width}")
    if np.any(ensemble.tree_output < 0) or np.any(ensemble.tree_output + width > ensemble.n_outputs):
        raise InvalidTreeError(
            f"tree_output must place every tree's {width} values inside {ensemble.n_outputs} outputs"
        )
    if ensemble.task == "classification":
        if ensemble.classes_ is None or len(ensemble.classes_) < 2:
            raise InvalidTreeError("a classification ensemble needs classes_ with at least two labels")
        n_proba = 2 if ensemble.n_outputs == 1 else ensemble.n_outputs
        if n_proba != len(ensemble.classes_):
            raise InvalidTreeError(
                f"{len(ensemble.classes_)} classes, but the raw score has {ensemble.n_outputs} columns"
            )
    if ensemble.feature_names_in_ is not None and len(ensemble.feature_names_in_) != ensemble.n_features_in_:
        raise InvalidTreeError("feature_names_in_ must have one name per feature")
    return ensemble
