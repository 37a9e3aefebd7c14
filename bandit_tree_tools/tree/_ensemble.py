"""An ensemble of trees in the common format, with everything the source
libraries keep outside their trees, and validated prediction methods."""

import re
import warnings
import weakref
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, NamedTuple

import numpy as np

from ..exceptions import DataError, InvalidTreeError, ParameterError
from . import _kernels
from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, TreeArrays, freeze_tree, node_depth, validate
from ._links import LINKS, apply_link
from ._nodes import check_tree_indices

TASKS = ("classification", "regression")
AGGREGATIONS = ("sum", "mean")
SPLIT_RULES = ("le", "lt")
INPUT_DTYPES = ("float32", "float64")
_WHITESPACE = re.compile(r"\s")


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


class PackedEnsemble(NamedTuple):
    """Every tree's arrays concatenated, for the routing engine (:mod:`._kernels`).

    Original ids: tree ``t`` owns global ids ``node_offset[t] <= i <
    node_offset[t + 1]`` (children local) and ``value`` is in that order.
    The engine renumbers each tree breadth first inside the same id range
    (``new_of_old``, ``origin`` the inverse): ``records`` (int32, 4 per node;
    ``cuts`` its float64 view, 2 per node) holds each node's threshold, feature word and
    left child; ``tree_depth`` the steps a row takes to a leaf; ``leaf_id`` a
    node's original local id; ``leaf_value`` / ``leaf_value32`` its value
    times its tree's scale (float64 / float32); ``flags``, ``threshold`` and
    the category bitsets (by new id) decide the general splits."""

    node_offset: np.ndarray
    value: np.ndarray
    tree_root: np.ndarray
    tree_depth: np.ndarray
    records: np.ndarray
    cuts: np.ndarray
    flags: np.ndarray
    threshold: np.ndarray
    category_left: np.ndarray
    category_right: np.ndarray
    new_of_old: np.ndarray
    origin: np.ndarray
    leaf_id: np.ndarray
    leaf_value: np.ndarray
    leaf_value32: np.ndarray

    def general(self, split_rule: str):
        return (self.flags, self.threshold, self.category_left, self.category_right, split_rule == "lt")


def _pack(ensemble) -> PackedEnsemble:
    trees = ensemble.trees
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([tree.n_nodes for tree in trees])
    if offsets[-1] >= 2**31 - 1 or ensemble.n_features_in_ > _kernels.FEATURE_MASK:
        raise InvalidTreeError(
            f"the ensemble has {offsets[-1]} nodes and {ensemble.n_features_in_} features; routing supports "
            f"fewer than 2**31 nodes and at most {_kernels.FEATURE_MASK} features"
        )
    n_words = max(tree.category_left.shape[1] for tree in trees)

    def joined(name):
        parts = [getattr(tree, name) for tree in trees]
        if name in ("category_left", "category_right"):
            parts = [np.pad(part, ((0, 0), (0, n_words - part.shape[1]))) for part in parts]
        return np.ascontiguousarray(np.concatenate(parts))

    left_local, right_local = joined("children_left"), joined("children_right")
    new_of_old, depth = _kernels._breadth_first(offsets, left_local, right_local)
    origin = np.empty_like(new_of_old)
    origin[new_of_old] = np.arange(new_of_old.shape[0])
    shift = np.repeat(offsets[:-1], np.diff(offsets))
    is_leaf = left_local < 0
    threshold, feature = joined("threshold"), joined("feature")
    missing_type, missing_left = joined("missing_type"), joined("missing_go_to_left")
    categorical = joined("is_categorical") != 0
    flags = _kernels.pack_flags(missing_left, missing_type, categorical, joined("unknown_category_go_to_left"))
    # one rule for every numerical split: x <= cut
    cut = threshold if ensemble.split_rule == "le" else _kernels.below(threshold, ensemble.input_dtype)
    # x < -inf has no "x <= cut" form; such a split is decided by the general rule
    no_cut = (threshold == -np.inf) if ensemble.split_rule == "lt" else np.zeros_like(is_leaf)
    general = ~is_leaf & (categorical | (missing_type == MISSING_ZERO_OR_NAN) | no_cut)
    nan_right = np.where(missing_type == MISSING_NAN_AS_ZERO, ~(0.0 <= cut), missing_left == 0)
    records = np.zeros((offsets[-1], 4), dtype=np.int32)
    cuts = records.view(np.float64)
    nodes = new_of_old
    cuts[nodes, 0] = np.where(is_leaf | general, np.nan, cut)
    word = np.where(is_leaf, 0, feature).astype(np.int64)
    word |= np.where(~is_leaf & ~general & nan_right, _kernels.NAN_RIGHT, 0)
    word |= np.where(general, _kernels.GENERAL, 0)
    records[nodes, _kernels.WORD] = word
    records[nodes, _kernels.LEFT] = np.where(is_leaf, nodes, new_of_old[np.where(is_leaf, 0, left_local + shift)])
    local = np.arange(offsets[-1]) - shift
    leaf_id = np.empty(offsets[-1], dtype=np.int64)
    leaf_id[nodes] = local
    value = joined("value")
    scaled = np.empty_like(value)
    scaled[nodes] = value * np.repeat(ensemble.tree_scale, np.diff(offsets))[:, None]
    with np.errstate(over="ignore"):
        scaled32 = scaled.astype(np.float32)
    category_left = np.empty_like(joined("category_left"))
    category_right = np.empty_like(category_left)
    category_left[nodes], category_right[nodes] = joined("category_left"), joined("category_right")
    flags_new, threshold_new = np.empty_like(flags), np.empty_like(threshold)
    flags_new[nodes], threshold_new[nodes] = flags, threshold
    return PackedEnsemble(
        node_offset=offsets,
        value=value,
        tree_root=np.ascontiguousarray(offsets[:-1]),
        tree_depth=depth,
        records=records.reshape(-1),
        cuts=cuts.reshape(-1),
        flags=flags_new,
        threshold=threshold_new,
        category_left=category_left,
        category_right=category_right,
        new_of_old=new_of_old,
        origin=origin,
        leaf_id=leaf_id,
        leaf_value=scaled,
        leaf_value32=scaled32,
    )


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
    feature_categories : tuple or None
        Per feature, the category values seen in training (a tuple) or None.
        A pandas categorical column of X is then coded by value against them,
        as LightGBM and XGBoost do, and values not seen in training become
        missing. Without it, a categorical column's own codes are used.
    source : Source
    """

    trees: tuple
    task: str
    n_features_in_: int
    n_outputs: int
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
        return len(self.trees)

    @property
    def n_nodes(self) -> int:
        return sum(tree.n_nodes for tree in self.trees)

    @property
    def n_leaves(self) -> int:
        return sum(tree.n_leaves for tree in self.trees)

    @property
    def max_depth(self) -> int:
        return max(tree.max_depth for tree in self.trees)

    def replace_trees(self, trees) -> "Ensemble":
        """A new ensemble with other trees (as many as before) and everything else unchanged."""
        trees = tuple(trees)
        if len(trees) != self.n_trees:
            raise ValueError(f"replace_trees needs {self.n_trees} trees, got {len(trees)}; use dataclasses.replace "
                             "to change tree_output and tree_scale too")
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

    def _routing_args(self, X, trees=None):
        """(X, roots, depths, records, cuts, general-split arrays) for the engine;
        ``trees`` routes only those trees (in that order)."""
        packed = self.packed
        roots, depths = packed.tree_root, packed.tree_depth
        if trees is not None:
            roots, depths = np.ascontiguousarray(roots[trees]), np.ascontiguousarray(depths[trees])
        return (X, roots, depths, packed.records, packed.cuts, packed.general(self.split_rule))

    def subset(self, trees) -> "Ensemble":
        """A new ensemble of the trees ``trees`` (indices, in that order), with
        the same source, link, base score and everything else.

        It predicts ``base_score`` plus the listed trees' outputs (each with
        its own ``tree_output`` column and ``tree_scale``); an averaged
        ensemble (``aggregation="mean"``) averages over the listed trees only.
        So ``subset([t]).apply(X)`` is column ``t`` of ``apply(X)`` and, for a
        forest, ``subset([t])`` predicts like tree ``t`` alone. To route a few
        trees of this ensemble without building a new one, use
        ``apply(X, trees=...)``.
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
    def check_X(self, X) -> np.ndarray:
        """Validate ``X`` against the training columns and cast it to ``input_dtype``;
        categorical features are read the way the source library reads them.

        The result can be passed to the prediction methods with
        ``check_input=False``, which then neither validate nor copy it. A
        C-contiguous float array of ``input_dtype`` is returned as it is (no
        copy) when no categorical feature needs rewriting."""
        library = self.source.library
        array = check_X(
            X, self.n_features_in_, self.feature_names_in_, self.input_dtype, self.feature_categories, library=library
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

    def apply(self, X, trees=None, *, check_input: bool = True) -> np.ndarray:
        """Leaf id (local node id) reached in every tree: int64 (n_rows, n_trees).

        ``trees`` (tree indices) routes only those trees and returns one column
        per index, in the order given. ``check_input=False`` skips the
        validation of ``X``, which must then come from :meth:`check_X`."""
        if trees is not None:
            trees = check_tree_indices(trees, self.n_trees)
        X = self._input(X, check_input)
        return _kernels._apply(*self._routing_args(X, trees), self.packed.leaf_id, _kernels.block_rows(X.shape[0]))

    def predict_raw(self, X, *, check_input: bool = True) -> np.ndarray:
        """Raw scores (margins), float64 (n_rows, n_outputs). ``check_input=False``:
        see :meth:`apply`."""
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
            _kernels.block_rows(X.shape[0]),
        )

    def _raw_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """``predict_raw`` of the rows whose leaves ``apply`` gave, without routing
        them again (the same sums in the same order, so the same bits)."""
        packed = self.packed
        leaves = np.asarray(leaves, dtype=np.int64)
        if leaves.ndim != 2 or leaves.shape[1] != self.n_trees:
            raise ValueError(f"leaves must have shape (n_rows, {self.n_trees}), got {leaves.shape}")
        if leaves.size and (leaves.min() < 0 or np.any(leaves >= np.diff(packed.node_offset))):
            raise ValueError("leaves must be node ids of their trees, as apply returns them")
        return _kernels._raw_from_leaves(
            np.ascontiguousarray(leaves),
            packed.tree_root,
            packed.new_of_old,
            packed.leaf_value,
            packed.leaf_value32,
            self.tree_output,
            self.base_score,
            self.aggregation == "mean",
            self.accumulate_float32,
        )

    def transform_raw(self, raw: np.ndarray) -> np.ndarray:
        """Probabilities (classification) or predictions (regression) from raw scores."""
        return apply_link(self.link, raw, self.link_scale, self.accumulate_float32)

    def predict_proba(self, X, *, check_input: bool = True) -> np.ndarray:
        """Class probabilities (n_rows, n_classes), in the order of ``classes_``."""
        if self.task != "classification":
            raise AttributeError("predict_proba is only defined for classification ensembles")
        proba = self.transform_raw(self.predict_raw(X, check_input=check_input))
        if proba.shape[1] == 1:  # binary models output P(positive class)
            proba = np.hstack([1.0 - proba, proba])
        return proba

    def predict(self, X, *, check_input: bool = True) -> np.ndarray:
        """Class labels (classification) or predictions (regression)."""
        if self.task == "classification":
            return self.classes_[np.argmax(self.predict_proba(X, check_input=check_input), axis=1)]
        prediction = self.transform_raw(self.predict_raw(X, check_input=check_input))
        return prediction[:, 0] if prediction.shape[1] == 1 else prediction

    def decision_path(self, X, *, check_input: bool = True):
        """Node indicator (scipy CSR, n_rows x n_nodes over all trees) and the
        column offset of each tree, as scikit-learn's forests return."""
        from scipy.sparse import csr_matrix

        X, roots, _, records, cuts, general = self._routing_args(self._input(X, check_input))
        origin = self.packed.origin
        lengths = _kernels._path_lengths(X, roots, records, cuts, general, origin)
        indptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = _kernels._fill_paths(X, indptr, roots, records, cuts, general, origin)
        data = np.ones(indices.shape[0], dtype=np.int8)
        indicator = csr_matrix((data, indices, indptr), shape=(lengths.shape[0], self.n_nodes))
        return indicator, self.packed.node_offset.copy()

    def node_depths(self, tree: int = 0) -> np.ndarray:
        return node_depth(self.trees[tree])


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
    """Check every invariant of an ensemble and of each of its trees."""
    if ensemble.task not in TASKS:
        raise InvalidTreeError(f"task must be one of {TASKS}, got {ensemble.task!r}")
    for name, allowed in (
        ("aggregation", AGGREGATIONS),
        ("split_rule", SPLIT_RULES),
        ("input_dtype", INPUT_DTYPES),
        ("link", tuple(LINKS)),
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
        raise InvalidTreeError(f"tree_output must place every tree's {width} values inside {ensemble.n_outputs} outputs")
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


def check_X(
    X, n_features: int, feature_names, input_dtype: str = "float64", feature_categories=None, *, library=None
) -> np.ndarray:
    """Turn ``X`` into a C-contiguous 2-D array of ``input_dtype``.

    pandas columns must carry the training names in the training order;
    categorical columns become integer codes (NaN where missing), coded
    against ``feature_categories`` where given. ``library`` (the source
    library) decides what a pandas ``category`` column at a feature the model
    treats as numeric means: its values for scikit-learn (numeric categories,
    as ``np.asarray`` gives them), refused for LightGBM when the model records
    its categorical columns and for XGBoost with float categories (as they
    refuse them), its own codes otherwise (as LightGBM and XGBoost read
    them). scipy sparse matrices are densified (implicit entries are zeros,
    or missing for XGBoost, as each library reads them). Complex, datetime
    and timedelta data and numpy masked arrays are refused.
    """
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        X = _frame_to_array(X, n_features, feature_names, feature_categories, library)
    elif _is_sparse(X):
        X = _sparse_to_array(X, library)
    elif isinstance(X, np.ma.MaskedArray):
        raise DataError(
            "X is a numpy masked array; the mask would be ignored. Pass X.filled(np.nan) to treat masked "
            "entries as missing values, or X.data to use the values under the mask"
        )
    target = np.float32 if input_dtype == "float32" else np.float64
    if type(X) is np.ndarray and X.dtype in (np.float32, np.float64) and X.ndim == 2 and X.shape[1] == n_features:
        # floats convert exactly as through float64 (float32 -> float64 is exact), so in one
        # step, and not at all when X already has the model's dtype and layout
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the libraries cast
            return np.ascontiguousarray(X, dtype=target)
    kind = getattr(getattr(X, "dtype", None), "kind", None)  # lists of such values fail the conversion below
    if kind in ("c", "M", "m"):
        what = {"c": "complex", "M": "datetime64", "m": "timedelta64"}[kind]
        raise DataError(f"X has {what} values, which tree models do not take; convert them to real numbers first")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", getattr(np, "exceptions", np).ComplexWarning)
            array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError, Warning) as error:
        hint = ""
        if "sequence" in str(error):
            hint = " (rows of different lengths, or objects that are not numbers?)"
        raise DataError(f"X must be a 2-D array of numbers; converting it to float failed{hint}: {error}") from None
    if array.ndim == 1:
        raise DataError(
            f"X must be 2-D (n_rows, {n_features}), got a 1-D array of {array.shape[0]} values; "
            "use X.reshape(1, -1) for a single row or X.reshape(-1, 1) for a single feature"
        )
    if array.ndim != 2:
        raise DataError(f"X must be 2-D (n_rows, {n_features}), got {array.ndim} dimensions")
    if array.shape[1] != n_features:
        raise DataError(
            f"X has {array.shape[1]} features, but the model was trained on {n_features}; "
            "pass the same columns as at training time"
        )
    if input_dtype == "float32":
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the libraries cast
            return np.ascontiguousarray(array, dtype=np.float32)
    return np.ascontiguousarray(array, dtype=np.float64)


def _is_sparse(X) -> bool:
    module = type(X).__module__ or ""
    if not module.startswith("scipy.sparse"):
        return False
    from scipy.sparse import issparse

    return issparse(X)


def _sparse_to_array(X, library) -> np.ndarray:
    """A dense copy of a scipy sparse matrix: XGBoost reads entries a sparse
    matrix does not store as missing, the other libraries as zeros."""
    if X.ndim != 2:
        raise DataError(f"X must be 2-D, got a sparse array with {X.ndim} dimensions")
    if X.dtype.kind == "c":
        raise DataError("X has complex values, which tree models do not take; convert them to real numbers first")
    coo = X.tocoo(copy=True)
    coo.sum_duplicates()  # as toarray() would add them
    dense = np.full(coo.shape, np.nan if library == "xgboost" else 0.0, dtype=np.float64)
    dense[coo.row, coo.col] = coo.data
    return dense


# ensemble -> int64 array of the features used by categorical splits (computed once per ensemble)
_CATEGORICAL_FEATURES = weakref.WeakKeyDictionary()


def _categorical_features(ensemble) -> np.ndarray:
    found = _CATEGORICAL_FEATURES.get(ensemble)
    if found is None:
        parts = [tree.feature[tree.is_categorical == 1] for tree in ensemble.trees]
        found = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        _CATEGORICAL_FEATURES[ensemble] = found
    return found


def _categories_as_the_library_reads_them(ensemble, array: np.ndarray) -> np.ndarray:
    """The common format reads a category as ``int(x)`` and every negative
    value as an unknown category; the libraries differ at the edges:

    - LightGBM truncates toward zero first, so ``x`` in (-1, 0) is category 0;
    - scikit-learn's HistGradientBoosting encodes known category values only,
      so a fractional value (1.5) is an unknown category, i.e. missing.

    Such entries are rewritten (in a copy) so the kernels route them as the
    library does. Other libraries' values pass unchanged.
    """
    library = ensemble.source.library
    if library not in ("lightgbm", "sklearn"):
        return array
    features = _categorical_features(ensemble)
    if features.size == 0:
        return array
    block = array[:, features]
    if library == "lightgbm":
        fix = (block > -1) & (block < 0)
        replacement = 0.0
    else:
        fix = np.isfinite(block) & (block != np.floor(block))
        replacement = np.nan
    if not fix.any():
        return array
    array = array.copy()
    block[fix] = replacement
    array[:, features] = block
    return array


def _frame_to_array(frame, n_features: int, feature_names, feature_categories=None, library=None) -> np.ndarray:
    columns = [str(column) for column in frame.columns]
    if feature_names is not None:
        expected = [str(name) for name in feature_names]
        # LightGBM stores "mean radius" as "mean_radius" and accepts either
        if columns != expected and [_WHITESPACE.sub("_", name) for name in columns] != expected:
            missing = [name for name in expected if name not in columns]
            extra = [name for name in columns if name not in expected]
            if missing or extra:
                raise DataError(
                    f"X's columns do not match the training columns: missing {missing[:5]}, unexpected "
                    f"{extra[:5]}; pass the same columns as at training time"
                )
            raise DataError(
                "X's columns are in another order than at training time; reorder them with "
                f"X[{expected[:3]}...] (expected order starts {expected[:5]}, got {columns[:5]})"
            )
    out = np.empty((len(frame), len(columns)), dtype=np.float64)
    for position, column in enumerate(frame.columns):
        series = frame[column]
        if str(series.dtype) == "category":
            out[:, position] = _category_column(series, column, position, feature_categories, library)
        else:
            if series.dtype.kind in ("c", "M", "m") or "datetime" in str(series.dtype):
                raise DataError(
                    f"column {column!r} of X has dtype {series.dtype}, which tree models do not take; convert it "
                    "to real numbers first"
                )
            try:
                out[:, position] = series.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                raise DataError(
                    f"column {column!r} of X has dtype {series.dtype}, which is not numeric; encode it as numbers "
                    "or as a pandas 'category' column"
                ) from None
    return out


def _category_column(series, column, position, feature_categories, library) -> np.ndarray:
    """A pandas ``category`` column as the source library reads it (see :func:`check_X`)."""
    training = None if feature_categories is None else feature_categories[position]
    if training is None and library == "sklearn":
        # scikit-learn reads the column through np.asarray: the category values
        categories = series.cat.categories
        if categories.dtype.kind not in "iufb":
            raise DataError(
                f"column {column!r} of X is a pandas 'category' column with non-numeric categories, but the "
                "scikit-learn model reads it as numbers; encode it as numbers"
            )
        return series.astype(np.float64).to_numpy(dtype=np.float64, na_value=np.nan)
    refused = (library == "lightgbm" and feature_categories is not None) or (
        library == "xgboost" and series.cat.categories.dtype.kind == "f"
    )
    if training is None and refused:
        raise DataError(
            f"column {column!r} of X is a pandas 'category' column, but the {library} model was trained on a "
            f"numeric column there and refuses one; pass its values as numbers (X[{str(column)!r}].astype(float))"
        )
    if training is not None:
        series = series.cat.set_categories(list(training))
    codes = series.cat.codes.to_numpy().astype(np.float64)
    codes[codes < 0] = np.nan
    return codes
