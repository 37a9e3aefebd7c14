"""LightGBM models to and from the common format, through the model string.

``from_lightgbm`` reads ``Booster.model_to_string()`` (never ``dump_model()``,
whose JSON cannot be loaded back); ``to_lightgbm`` writes a model string and
loads it with ``lightgbm.Booster(model_str=...)``. Supported: ``Booster``,
``LGBMClassifier``, ``LGBMRegressor`` (and other ``LGBMModel`` estimators) with
the objectives binary, multiclass, multiclassova, cross_entropy, the
regression family (regression, regression_l1, huber, fair, quantile, mape),
poisson/gamma/tweedie (exp link) and the ranking objectives (raw scores);
categorical splits; missing values with every missing type; boosting gbdt,
dart, goss and rf. Refused with :class:`UnsupportedModelError`: linear trees,
``regression`` with ``reg_sqrt=True``, ``cross_entropy_lambda``, multiclass
``boosting="rf"`` (see below).

How LightGBM's facts map onto the common format
-----------------------------------------------
- Node ids: LightGBM's internal node ``i`` is our node ``i``; its leaf ``j`` is
  our node ``num_leaves - 1 + j``. LightGBM numbers internal nodes in split
  order, so parents precede children, as the format requires; an exported,
  uncollapsed model has the same numbering as the original.
- Values: leaf and internal values already include the learning rate and, in
  the first iteration's trees, the intercept; ``base_score`` is 0. A collapsed
  node takes ``internal_value`` exactly as LightGBM printed it (six significant
  digits), and the export writes that same double, so our copy and the
  exported model agree bit for bit.
- Splits: ``x <= threshold`` on float64 (``split_rule="le"``,
  ``input_dtype="float64"``). Missing types None / Zero / NaN become
  ``missing_type`` 1 / 2 / 0 and ``default_left`` becomes
  ``missing_go_to_left``. LightGBM's predictor turns every ``|x| <= 1e-35f``
  into 0.0 before it compares; thresholds in ``[-1e-35f, 0)`` are therefore
  stored one ulp below ``-1e-35f`` (and thresholds in ``[0, 1e-35f)`` as
  ``1e-35f``), which routes every row the same way; the export writes
  ``-1e-35f`` back.
- Categorical splits: the bitset of a node goes to ``category_left``;
  everything else (other, negative and unseen categories, NaN) goes right
  (``unknown_category_go_to_left=0``, ``missing_type=0``,
  ``missing_go_to_left=0``). Known gap: LightGBM truncates ``x`` in
  ``(-1, 0)`` to category 0, while the common format's kernels treat every
  negative value as an unknown category; rows with such values can differ
  when category 0 goes left.
- Multiclass: tree ``t`` belongs to class ``t % num_tree_per_iteration``
  (``tree_output``). Binary objectives: link ``sigmoid`` with
  ``link_scale`` = LightGBM's ``sigmoid`` parameter.
- ``boosting="rf"`` (``average_output``): aggregation ``"mean"``. LightGBM's
  ``predict(raw_score=True)`` returns the *sum* over trees for such models
  (only the transformed prediction is averaged); our ``predict_raw`` is the
  average, i.e. LightGBM's raw score divided by the number of iterations.
  Multiclass rf divides each class's sum by the number of iterations, which
  the common format's ``mean`` (divide by the number of trees) cannot express
  yet: refused.
- Early stopping: ``num_iteration=None`` imports what LightGBM's ``predict``
  uses by default: the first ``best_iteration`` iterations when the model has
  one, else every tree. Pass ``num_iteration=-1`` (or 0) for all trees, or a
  positive number for the first ``num_iteration`` iterations.
- pandas: categorical columns are read as their category codes. LightGBM
  first re-maps a frame's categories onto the training categories
  (``pandas_categorical``); pass frames whose categorical columns carry the
  training categories (the model string keeps ``pandas_categorical`` and the
  exported model re-maps as the original did).

Exactness (measured with lightgbm 4.7 on x86-64)
-------------------------------------------------
LightGBM sums tree outputs in double in tree order, as our kernel does: raw
scores are bit-identical (max abs difference 0). Transformed outputs use the
same formulas (``1 / (1 + exp(-sigmoid * raw))``; ``exp``; softmax after
subtracting the row maximum): sigmoid (any ``sigmoid`` parameter) and exp
matched bit for bit on 20,000 rows; softmax matches bit for bit below 8
classes and differs by at most 4.4e-16 from 8 classes on, because numpy sums
the denominator pairwise in blocks of 8 where LightGBM sums it in class order.
The tests allow 1e-15 on transformed outputs, 0 on raw scores, and require
identical labels.

Export
------
``to_lightgbm`` returns an object of the imported class: a new ``Booster``, or
a deep copy of the imported estimator whose booster (``_Booster``, seen as
``booster_``) is the new Booster, so ``predict``, ``predict_proba``, pickling
and ``booster_.save_model`` work. The model string's header (objective,
feature names and infos, ``average_output``), each tree's ``shrinkage``, the
training parameters and ``pandas_categorical`` come from the imported model;
``tree_sizes`` is recomputed from the blocks written. The user's model is never
modified.
"""

import copy
import hashlib
from types import MappingProxyType

import numpy as np

from ..exceptions import ConversionError, NotFittedError, UnsupportedModelError, missing_dependency
from ..tree import (
    MISSING_NAN,
    MISSING_NAN_AS_ZERO,
    MISSING_ZERO_OR_NAN,
    TREE_LEAF,
    TREE_UNDEFINED,
    Ensemble,
    Source,
    TreeArrays,
)
from . import _lightgbm_text as text

__all__ = ["from_lightgbm", "to_lightgbm"]

# LightGBM's kZeroThreshold is the float literal 1e-35f, widened to double.
LIGHTGBM_ZERO = float(np.float32(1e-35))
_BELOW_NEGATIVE_ZERO = float(np.nextafter(-LIGHTGBM_ZERO, -np.inf))

# decision_type bits: 1 categorical, 2 default_left, bits 2-3 the missing type.
_CATEGORICAL_MASK = 1
_DEFAULT_LEFT_MASK = 2
# LightGBM missing type (None=0, Zero=1, NaN=2) -> common format missing_type
_MISSING_FROM_LIGHTGBM = np.array([MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, MISSING_NAN], dtype=np.uint8)
# common format missing_type (0 NaN, 1 None, 2 Zero) -> LightGBM missing type
_MISSING_TO_LIGHTGBM = np.array([2, 0, 1], dtype=np.int64)
# categorical nodes: NaN is "missing" and goes right, as LightGBM writes them
_CATEGORICAL_DECISION_TYPE = _CATEGORICAL_MASK | (2 << 2)

_IDENTITY_OBJECTIVES = (
    "regression",
    "regression_l1",
    "huber",
    "fair",
    "quantile",
    "mape",
    "lambdarank",
    "rank_xendcg",
)
_EXP_OBJECTIVES = ("poisson", "gamma", "tweedie")
_SUPPORTED_OBJECTIVES = ("binary", "multiclass", "multiclassova", "cross_entropy") + _IDENTITY_OBJECTIVES + _EXP_OBJECTIVES


def _lightgbm():
    try:
        import lightgbm
    except ImportError:
        raise missing_dependency("lightgbm", "lightgbm", "Importing and exporting LightGBM models") from None
    return lightgbm


def objective_link(objective: str | None) -> tuple[str, float, bool]:
    """(link, link_scale, is_classification) of a model string's objective line."""
    if objective is None:  # custom objective: LightGBM's predict returns raw scores
        return "identity", 1.0, False
    name, *options = objective.split()
    settings = dict(option.split(":", 1) for option in options if ":" in option)
    if name == "binary":
        return "sigmoid", float(settings.get("sigmoid", 1.0)), True
    if name == "multiclass":
        return "softmax", 1.0, True
    if name == "multiclassova":
        return "sigmoid", float(settings.get("sigmoid", 1.0)), True
    if name == "cross_entropy":
        return "sigmoid", 1.0, False
    if name in _EXP_OBJECTIVES:
        return "exp", 1.0, False
    if name == "regression" and "sqrt" in options:
        raise UnsupportedModelError(
            "LightGBM regression with reg_sqrt=True is not supported: its predictions are sign(raw) * raw**2, "
            "which the common format's links cannot express; retrain without reg_sqrt"
        )
    if name in _IDENTITY_OBJECTIVES:
        return "identity", 1.0, False
    raise UnsupportedModelError(
        f"the LightGBM objective {name!r} is not supported (its prediction transform has no exact link in the "
        f"common format); supported objectives: {', '.join(_SUPPORTED_OBJECTIVES)}, and custom objectives"
    )


def _booster_and_estimator(model, lgb):
    if isinstance(model, lgb.Booster):
        return model, None
    if isinstance(model, lgb.LGBMModel):
        if not model.__sklearn_is_fitted__():
            raise NotFittedError(
                f"this {type(model).__name__} is not fitted yet; call fit(X, y) before importing it"
            )
        return model.booster_, model
    raise UnsupportedModelError(
        f"cannot import a {type(model).__module__}.{type(model).__name__}: supported LightGBM objects are "
        "lightgbm.Booster, LGBMClassifier and LGBMRegressor (and other fitted LGBMModel estimators)"
    )


def _model_text(booster, num_iteration) -> str:
    """``booster.model_to_string(num_iteration)``, formatted by LightGBM once.

    The public method asks LightGBM for the string into a 1 MB buffer and, for
    any larger model, formats the whole model a second time; a buffer sized
    from the number of leaves avoids that. Falls back to the public method if
    lightgbm's internals ever change.
    """
    try:
        import ctypes

        from lightgbm.basic import _LIB, _dump_pandas_categorical, _safe_call

        if num_iteration is None:
            num_iteration = booster.best_iteration
        n_leaves = int(booster.params.get("num_leaves", 31)) if isinstance(booster.params, dict) else 31
        size = ctypes.c_int64((1 << 20) + 160 * max(n_leaves, 31) * booster.num_trees())
        needed = ctypes.c_int64(0)
        buffer = ctypes.create_string_buffer(size.value)
        _safe_call(
            _LIB.LGBM_BoosterSaveModelToString(
                booster._handle, ctypes.c_int(0), ctypes.c_int(num_iteration), ctypes.c_int(0), size,
                ctypes.byref(needed), ctypes.c_char_p(ctypes.addressof(buffer)),
            )
        )  # fmt: skip
        if needed.value > size.value:
            return booster.model_to_string(num_iteration=num_iteration)
        return buffer.value.decode("utf-8") + _dump_pandas_categorical(booster.pandas_categorical)
    except (ImportError, AttributeError, TypeError, ValueError):
        return booster.model_to_string(num_iteration=num_iteration)


def _estimator_template(estimator):
    """A private deep copy of a fitted estimator without its Booster (the
    export supplies a new one); the user's object is only read."""
    state = {key: value for key, value in vars(estimator).items() if key != "_Booster"}
    template = object.__new__(type(estimator))
    template.__dict__.update(copy.deepcopy(state))
    template._Booster = None
    return template


def _routing_arrays(parsed):
    """Per-internal-node arrays of all trees at once: missing handling,
    thresholds (zero band folded in), categorical flags."""
    decision = parsed.arrays["decision_type"]
    categorical = (decision & _CATEGORICAL_MASK) != 0
    lightgbm_missing = (decision >> 2) & 3
    if np.any(lightgbm_missing == 3):
        raise ConversionError("the LightGBM model string has a decision_type with an unknown missing type (3)")
    missing_type = _MISSING_FROM_LIGHTGBM[np.minimum(lightgbm_missing, 2)]
    missing_left = ((decision & _DEFAULT_LEFT_MASK) != 0).astype(np.uint8)
    missing_type[categorical] = MISSING_NAN
    missing_left[categorical] = 0
    threshold = parsed.arrays["threshold"].copy()
    numeric = ~categorical
    # LightGBM reads |x| <= 1e-35f as 0.0 before comparing (kZeroThreshold), so a
    # threshold t in [-1e-35f, 0) sends left exactly the x < -1e-35f, and one in
    # [0, 1e-35f) exactly the x <= 1e-35f.
    threshold[numeric & (threshold >= -LIGHTGBM_ZERO) & (threshold < 0.0)] = _BELOW_NEGATIVE_ZERO
    threshold[numeric & (threshold >= 0.0) & (threshold < LIGHTGBM_ZERO)] = LIGHTGBM_ZERO
    category_index = np.where(categorical, threshold, 0.0).astype(np.int64)
    threshold[categorical] = -2.0
    return categorical.astype(np.uint8), missing_type, missing_left, threshold, category_index


def _offsets(counts) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _build_trees(parsed):
    """All trees at once: every per-node array is built for the whole model in
    a few numpy operations, then split into per-tree views (internal nodes
    first, in LightGBM's order, then the leaves)."""
    arrays = parsed.arrays
    num_leaves = parsed.num_leaves
    n_internal = num_leaves - 1
    n_trees = parsed.n_trees
    categorical, missing_type, missing_left, threshold, category_index = _routing_arrays(parsed)

    node_at = _offsets(2 * num_leaves - 1)
    internal_at, leaf_at = _offsets(n_internal), _offsets(num_leaves)
    internal_tree = np.repeat(np.arange(n_trees), n_internal)
    leaf_tree = np.repeat(np.arange(n_trees), num_leaves)
    internal_position = node_at[internal_tree] + np.arange(internal_at[-1]) - internal_at[internal_tree]
    leaf_position = node_at[leaf_tree] + n_internal[leaf_tree] + np.arange(leaf_at[-1]) - leaf_at[leaf_tree]
    n_nodes = int(node_at[-1])

    def nodes(internal_values, leaf_values, dtype):
        out = np.empty(n_nodes, dtype=dtype)
        out[internal_position] = internal_values
        out[leaf_position] = leaf_values
        return out

    def child(key):
        ids = arrays[key]
        return np.where(ids >= 0, ids, n_internal[internal_tree] + ~ids)

    # single-leaf trees may print an empty leaf_weight line
    leaf_weight = np.full(leaf_at[-1], np.nan)
    has_weights = np.repeat(parsed.counts["leaf_weight"] == num_leaves, num_leaves)
    leaf_weight[has_weights] = arrays["leaf_weight"]
    columns = {
        "children_left": nodes(child("left_child"), TREE_LEAF, np.int64),
        "children_right": nodes(child("right_child"), TREE_LEAF, np.int64),
        "feature": nodes(arrays["split_feature"], TREE_UNDEFINED, np.int64),
        "threshold": nodes(threshold, float(TREE_UNDEFINED), np.float64),
        "missing_go_to_left": nodes(missing_left, 0, np.uint8),
        "missing_type": nodes(missing_type, 0, np.uint8),
        "is_categorical": nodes(categorical, 0, np.uint8),
        "unknown_category_go_to_left": np.zeros(n_nodes, dtype=np.uint8),
        "value": nodes(arrays["internal_value"], arrays["leaf_value"], np.float64).reshape(-1, 1),
        "has_leaf_value": np.ones(n_nodes, dtype=np.uint8),
        "n_node_samples": nodes(arrays["internal_count"], arrays["leaf_count"], np.int64),
        "weighted_n_node_samples": nodes(arrays["internal_weight"], leaf_weight, np.float64),
        "impurity": np.full(n_nodes, np.nan),
        "gain": nodes(arrays["split_gain"], np.nan, np.float64),
    }
    bounds = node_at[1:-1]
    split = {name: np.split(column, bounds) for name, column in columns.items()}
    trees = []
    for t in range(n_trees):
        fields = {name: parts[t] for name, parts in split.items()}
        category_left = _category_bitsets(parsed, t, fields["is_categorical"], category_index, internal_at[t])
        if category_left is None:
            category_left = np.zeros((fields["feature"].shape[0], 0), dtype=np.uint32)
        trees.append(TreeArrays(category_left=category_left, category_right=np.zeros_like(category_left), **fields))
    return trees


def _category_bitsets(parsed, t, is_categorical, category_index, first_internal):
    """category_left of tree ``t`` (None when it has no categorical split)."""
    if parsed.num_cat[t] == 0:
        return None
    node_ids = np.flatnonzero(is_categorical)
    index = category_index[first_internal + node_ids]
    boundaries, words = parsed.cat_boundaries[t], parsed.cat_threshold[t]
    if np.any((index < 0) | (index >= boundaries.shape[0] - 1)):
        raise ConversionError(f"tree {t} of the LightGBM model refers to a categorical bitset it lacks")
    n_words = int(np.max(boundaries[index + 1] - boundaries[index], initial=0))
    category_left = np.zeros((is_categorical.shape[0], n_words), dtype=np.uint32)
    for node, cat in zip(node_ids.tolist(), index.tolist()):
        bits = words[boundaries[cat] : boundaries[cat + 1]]
        category_left[node, : bits.shape[0]] = bits
    return category_left


def _header_int(parsed, key, default=None):
    value = parsed.header_values.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConversionError(f"the LightGBM model string has no valid {key!r} header line (got {value!r})") from None


def _check_header(parsed):
    n_classes = _header_int(parsed, "num_class")
    per_iteration = _header_int(parsed, "num_tree_per_iteration", n_classes)
    n_features = _header_int(parsed, "max_feature_idx") + 1
    names = (parsed.header_values.get("feature_names") or "").split(" ")
    infos = (parsed.header_values.get("feature_infos") or "").split(" ")
    if len(names) != n_features or len(infos) != n_features:
        raise ConversionError(
            f"the LightGBM model string declares {n_features} features but lists {len(names)} feature names and "
            f"{len(infos)} feature infos"
        )
    if per_iteration < 1 or parsed.n_trees % per_iteration:
        raise ConversionError(
            f"the LightGBM model has {parsed.n_trees} trees, not a multiple of num_tree_per_iteration={per_iteration}"
        )
    return n_classes, per_iteration, n_features, names


def from_lightgbm(model, *, num_iteration=None) -> Ensemble:
    """Import a LightGBM ``Booster``, ``LGBMClassifier`` or ``LGBMRegressor``.

    Parameters
    ----------
    model : lightgbm.Booster or fitted lightgbm.LGBMModel
        Read only (through ``model_to_string``); never modified.
    num_iteration : int or None
        Iterations to import. None: what LightGBM's ``predict`` uses by default
        (``best_iteration`` after early stopping, else all); ``<= 0``: all.

    Returns
    -------
    Ensemble
        Predicts exactly like ``model`` (see the module docstring for the
        exactness contract and the known gaps).
    """
    lgb = _lightgbm()
    booster, estimator = _booster_and_estimator(model, lgb)
    if num_iteration is not None and not isinstance(num_iteration, (int, np.integer)):
        raise TypeError(f"num_iteration must be an int or None, got {type(num_iteration).__name__}")
    parsed = text.parse_model_string(_model_text(booster, num_iteration))
    n_classes, per_iteration, n_features, names = _check_header(parsed)
    objective = parsed.header_values.get("objective")
    link, link_scale, classifier_objective = objective_link(objective)
    average = "average_output" in parsed.header_values
    if average and per_iteration > 1:
        raise UnsupportedModelError(
            "multiclass LightGBM models with boosting='rf' average each class's trees over the iterations, "
            "which the common format's aggregation='mean' (divide by the number of all trees) cannot express "
            "exactly; binary and regression rf models are supported"
        )
    if estimator is not None:
        is_classifier = classifier_objective and hasattr(estimator, "classes_")
        classes = np.array(estimator.classes_, copy=True) if is_classifier else None
    else:
        is_classifier = classifier_objective
        classes = np.arange(2 if per_iteration == 1 else per_iteration) if is_classifier else None
    default_names = all(name == f"Column_{i}" for i, name in enumerate(names))
    trees = _build_trees(parsed)
    payload = {
        "header": tuple(parsed.header),
        # the imported trees and their blocks: an unchanged tree is written back verbatim
        "digests": tuple(tree_digest(tree) for tree in trees),
        "blocks": parsed.blocks,
        "parameters": parsed.parameters,
        "shrinkage": tuple(parsed.shrinkage.tolist()),
        "estimator": None if estimator is None else _estimator_template(estimator),
        "num_tree_per_iteration": per_iteration,
        "num_class": n_classes,
        "best_iteration": int(booster.best_iteration),
    }
    return Ensemble(
        trees=trees,
        task="classification" if is_classifier else "regression",
        n_features_in_=n_features,
        n_outputs=per_iteration,
        tree_output=np.arange(parsed.n_trees) % per_iteration,
        tree_scale=1.0,
        aggregation="mean" if average else "sum",
        base_score=0.0,
        link=link,
        link_scale=link_scale,
        classes_=classes,
        feature_names_in_=None if default_names else np.array(names, dtype=object),
        split_rule="le",
        input_dtype="float64",
        accumulate_float32=False,
        source=Source("lightgbm", type(model).__name__, lgb.__version__, MappingProxyType(payload)),
    )


# ---------------------------------------------------------------------- export
def _check_exportable(ensemble: Ensemble, payload) -> int:
    if ensemble.source.library != "lightgbm" or "header" not in payload:
        raise ConversionError(
            f"to_lightgbm exports ensembles imported from LightGBM; this one comes from "
            f"{ensemble.source.library!r} ({ensemble.source.estimator}); use btt.to_model(ensemble) instead"
        )
    per_iteration = payload["num_tree_per_iteration"]
    header = dict(payload["header"])
    expected = {
        "split_rule": ("le", ensemble.split_rule),
        "input_dtype": ("float64", ensemble.input_dtype),
        "accumulate_float32": (False, ensemble.accumulate_float32),
        "n_outputs": (per_iteration, ensemble.n_outputs),
        "n_features_in_": (int(header["max_feature_idx"]) + 1, ensemble.n_features_in_),
        "value width": (1, ensemble.trees[0].value.shape[1]),
        "link": (objective_link(header.get("objective"))[:2], (ensemble.link, ensemble.link_scale)),
    }
    for name, (want, got) in expected.items():
        if want != got:
            raise ConversionError(
                f"cannot write this ensemble as a LightGBM model: its {name} is {got!r}, but the LightGBM model it "
                f"came from needs {want!r}; export an ensemble whose {name} is unchanged since import"
            )
    if ensemble.n_trees % per_iteration or np.any(ensemble.tree_output != np.arange(ensemble.n_trees) % per_iteration):
        raise ConversionError(
            f"LightGBM needs trees ordered by iteration with tree t predicting class t % {per_iteration}; this "
            "ensemble's tree_output breaks that order"
        )
    if (ensemble.aggregation == "mean") != ("average_output" in header):
        raise ConversionError(
            f"the ensemble's aggregation {ensemble.aggregation!r} does not match the LightGBM model's "
            f"{'average_output (rf)' if 'average_output' in header else 'summed boosting'}"
        )
    if ensemble.aggregation == "mean" and np.any(ensemble.base_score != 0.0):
        raise ConversionError(
            "LightGBM's averaged (rf) models have no intercept, and a nonzero base_score cannot be folded into "
            "averaged trees exactly; set base_score to 0"
        )
    return per_iteration


def _zero_nan(values):
    """LightGBM has no "unknown": write 0 for NaN (unknown weights, gains, values)."""
    missing = np.isnan(values)
    return np.where(missing, 0.0, values) if missing.any() else values


def _tree_fields(tree, shrinkage: float, scale: float, bias: float) -> dict:
    leaf = tree.children_left == TREE_LEAF
    values = tree.value[:, 0]
    if scale != 1.0:  # the kernel adds fl(scale * value): write that double
        values = scale * values
    if bias != 0.0:  # the intercept, folded into the first tree as LightGBM keeps it
        values = values + bias
    internal_ids = np.flatnonzero(~leaf)
    leaf_ids = np.flatnonzero(leaf)
    counts = np.maximum(tree.n_node_samples, 0)
    weights = _zero_nan(tree.weighted_n_node_samples)
    fields = {
        "num_leaves": leaf_ids.shape[0],
        "leaf_value": values[leaf_ids],
        "leaf_weight": weights[leaf_ids],
        "leaf_count": counts[leaf_ids],
        "shrinkage": repr(float(shrinkage)).removesuffix(".0"),
        "num_cat": 0,
    }
    if internal_ids.shape[0] == 0:
        empty = {key: np.zeros(0) for key in text.TREE_KEYS[2:8] + text.TREE_KEYS[11:14]}
        fields.update(empty)
        return fields
    rank = np.empty(tree.n_nodes, dtype=np.int64)
    rank[internal_ids] = np.arange(internal_ids.shape[0])
    rank[leaf_ids] = np.arange(leaf_ids.shape[0])

    def child(children):
        ids = children[internal_ids]
        return np.where(leaf[ids], ~rank[ids], rank[ids])

    categorical = tree.is_categorical[internal_ids] == 1
    missing_type = tree.missing_type[internal_ids]
    missing_left = tree.missing_go_to_left[internal_ids].astype(np.int64)
    decision = (missing_left << 1) | (_MISSING_TO_LIGHTGBM[missing_type] << 2)
    threshold = tree.threshold[internal_ids].copy()
    numeric = ~categorical
    if not np.all(np.isfinite(threshold[numeric])):
        raise ConversionError("LightGBM cannot load non-finite thresholds; the ensemble has a numeric split at +-inf")
    # LightGBM reads |x| <= 1e-35f as 0.0 before comparing: a threshold inside that
    # band would route rows in it differently from ours (Zero-type nodes excepted,
    # where the band is missing anyway).
    in_band = numeric & (missing_type != MISSING_ZERO_OR_NAN) & (threshold >= -LIGHTGBM_ZERO)
    in_band &= threshold < LIGHTGBM_ZERO
    if in_band.any():
        raise ConversionError(
            f"LightGBM cannot express the threshold {threshold[in_band][0]!r}: it reads every |x| <= 1e-35f as 0.0, "
            "so thresholds in [-1e-35f, 1e-35f) route such rows differently; use a threshold outside that band"
        )
    threshold[numeric & (threshold == _BELOW_NEGATIVE_ZERO)] = -LIGHTGBM_ZERO  # as LightGBM wrote it
    if categorical.any():
        cat_nodes = internal_ids[categorical]
        if np.any(
            (tree.missing_type[cat_nodes] != MISSING_NAN)
            | (tree.missing_go_to_left[cat_nodes] != 0)
            | (tree.unknown_category_go_to_left[cat_nodes] != 0)
        ):
            raise ConversionError(
                "LightGBM's categorical splits send NaN and every category outside the node's set to the right "
                "child; this ensemble has a categorical node that sends missing or unknown categories left"
            )
        bitsets = []
        for node in cat_nodes.tolist():
            words = tree.category_left[node]
            used = np.flatnonzero(words)
            bitsets.append(words[: max(int(used[-1]) + 1 if used.size else 1, 1)])
        boundaries = np.zeros(len(bitsets) + 1, dtype=np.int64)
        np.cumsum([bits.shape[0] for bits in bitsets], out=boundaries[1:])
        decision[categorical] = _CATEGORICAL_DECISION_TYPE
        threshold[categorical] = np.arange(len(bitsets), dtype=np.float64)
        fields["num_cat"] = len(bitsets)
        fields["cat_boundaries"] = text.format_ints(boundaries)
        fields["cat_threshold"] = text.format_ints(np.concatenate(bitsets).astype(np.int64))
    gains = _zero_nan(tree.gain[internal_ids])
    fields.update(
        {
            "split_feature": tree.feature[internal_ids],
            "split_gain": gains,
            "threshold": threshold,
            "decision_type": decision,
            "left_child": child(tree.children_left),
            "right_child": child(tree.children_right),
            "internal_value": _zero_nan(values[internal_ids]),
            "internal_weight": weights[internal_ids],
            "internal_count": counts[internal_ids],
        }
    )
    return fields


def tree_digest(tree) -> bytes:
    """Fingerprint of every array of a tree (shapes, dtypes and bytes), so the
    export can tell an unchanged tree even if someone edited arrays in place."""
    layout = "".join(f"{array.dtype.str}{array.shape}" for array in tree).encode()
    content = b"".join(np.ascontiguousarray(array).tobytes() for array in tree)
    return hashlib.blake2b(layout + content, digest_size=16).digest()


def _split_importances(ensemble: Ensemble, names: list) -> list:
    """LightGBM's "split" importance: splits with positive gain per feature."""
    totals = np.zeros(len(names), dtype=np.int64)
    for tree in ensemble.trees:
        used = (tree.children_left != TREE_LEAF) & (tree.gain > 0)  # NaN (unknown) counts as 0
        totals += np.bincount(tree.feature[used], minlength=len(names))
    order = sorted(np.flatnonzero(totals).tolist(), key=lambda i: -totals[i])  # stable, as LightGBM sorts
    return [(names[i], int(totals[i])) for i in order]


def to_lightgbm(ensemble: Ensemble):
    """Write ``ensemble`` as a LightGBM model of the class it was imported from.

    Returns a ``lightgbm.Booster`` or a deep copy of the imported estimator
    holding the new Booster; it predicts exactly like ``ensemble`` (also after
    :func:`~bandit_tree_tools.collapse`).
    """
    lgb = _lightgbm()
    if not isinstance(ensemble, Ensemble):
        raise TypeError(f"to_lightgbm expects an Ensemble (see btt.from_lightgbm), got {type(ensemble).__name__}")
    payload = ensemble.source.payload
    per_iteration = _check_exportable(ensemble, payload)
    header = list(payload["header"])
    names = dict(header)["feature_names"].split(" ")
    shrinkage = payload["shrinkage"]
    if len(shrinkage) != ensemble.n_trees:
        shrinkage = (1.0,) * ensemble.n_trees
    digests, imported_blocks = payload["digests"], payload["blocks"]
    blocks, changed, changed_fields = [], [], []
    for index, tree in enumerate(ensemble.trees):
        bias = float(ensemble.base_score[ensemble.tree_output[index]]) if index < per_iteration else 0.0
        scale = float(ensemble.tree_scale[index])
        if index < len(digests) and scale == 1.0 and bias == 0.0 and tree_digest(tree) == digests[index]:
            blocks.append(imported_blocks[index])  # unchanged since import: LightGBM's own text
            continue
        blocks.append(None)
        changed.append(index)
        changed_fields.append(_tree_fields(tree, shrinkage[index], scale, bias))
    for index, fields in zip(changed, text.format_tree_arrays(changed_fields)):
        blocks[index] = text.tree_block(index, fields)
    model_text = text.model_string(header, blocks, _split_importances(ensemble, names), payload["parameters"])
    booster = lgb.Booster(model_str=model_text)
    if booster.num_trees() != ensemble.n_trees or booster.num_feature() != ensemble.n_features_in_:
        raise ConversionError(
            f"LightGBM loaded {booster.num_trees()} trees and {booster.num_feature()} features from the written "
            f"model, expected {ensemble.n_trees} and {ensemble.n_features_in_}"
        )
    template = payload["estimator"]
    if template is None:
        return booster
    estimator = copy.deepcopy(template)
    estimator._Booster = booster
    return estimator
