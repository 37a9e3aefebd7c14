"""Import XGBoost models into the common format and export them back.

Supported: ``xgboost.Booster``, ``XGBClassifier``, ``XGBRegressor`` (and
their random-forest subclasses) with ``booster="gbtree"`` or ``"dart"``, any
``tree_method`` (``hist``, ``approx``, ``exact``), binary and multiclass
classification, regression (also several targets with
``multi_strategy="one_output_per_tree"``), Poisson/Gamma/Tweedie/Cox
regression (exp link), ``enable_categorical``, missing values, any depth and
``num_parallel_tree``. Refused with :class:`UnsupportedModelError`:
``gblinear``, vector-leaf trees (``multi_strategy="multi_output_tree"``),
multi-label classification, ``binary:hinge`` and unknown objectives, and
wrappers whose ``missing`` is not NaN.

How XGBoost's facts map into the common format
-----------------------------------------------
* Splits: ``float32(x) < split_condition`` goes left (``split_rule="lt"``,
  ``input_dtype="float32"``); NaN follows ``default_left``. Categorical
  splits send the listed categories RIGHT and every other value (negative,
  beyond the list, unlisted) LEFT: ``category_right`` holds the list,
  ``unknown_category_go_to_left=1``.
* Leaf values are XGBoost's ``split_conditions`` at leaves (the learning rate
  is already inside). An internal node's value is
  ``float32(eta_tree) * float32(base_weight)``, the value XGBoost's updaters
  would have given it as a leaf, with ``eta_tree = eta / num_parallel_tree``.
  ``eta`` lives only in the booster's training configuration
  (``save_config()``), which a model loaded from a file no longer has (it
  reports the default 0.3). So every tree is checked: XGBoost's weights
  satisfy ``w_parent (H_parent + lambda) = w_left (H_left + lambda) + w_right
  (H_right + lambda)`` (``H`` = ``sum_hessian``); where a tree's leaves
  disagree with the configured ``eta`` (a model loaded from a file, a
  learning-rate schedule, or an objective that re-fits leaves such as
  ``reg:absoluteerror``), its internal nodes get ``has_leaf_value=0`` and
  ``source.collapse_hint`` says to pass ``learning_rate=``.
* ``base_score`` is stored after the inverse link; it is turned into a margin
  with XGBoost's own float32 arithmetic (logit for logistic objectives, log
  for Poisson/Gamma/Tweedie/Cox, identity otherwise).
* XGBoost adds tree outputs in float32, starting from the base margin
  (``accumulate_float32=True``): raw scores equal XGBoost's margins exactly
  (max abs difference 0). Probabilities and exp-link predictions are computed
  as XGBoost computes them: in float32 with the C library's ``expf``
  (``Ensemble.link_exp = "libm"``), the softmax's float32 exponentials summed
  in double and divided by that sum in float32, a binary model's other class
  ``1 - p`` in float32: bit for bit. A ``multi:softmax`` booster predicts
  labels; its wrapper's ``predict_proba`` takes scipy's softmax of the float32
  margins, and so does the import (``link_exp = "numpy"``).
* ``cover``: ``sum_hessian`` -> ``weighted_n_node_samples``; ``loss_changes``
  -> ``gain``; ``n_node_samples`` is unknown (-1).
* DART: ``weight_drop`` -> ``tree_scale`` (XGBoost multiplies each float32
  tree output by it in float32, which is what the kernel does): raw scores
  equal ``Booster.predict(DMatrix)`` exactly. ``inplace_predict`` (which the
  wrappers' ``predict`` uses) computes DART differently, ``(float32(base +
  tree) - base) * weight``: each tree's output is rounded at the magnitude of
  ``base + tree``, so the two differ by up to about one float32 step of
  ``|base margin| + sum of the trees' largest |weight * value|`` per tree
  (bound: ``2 * n_trees * 2**-24 * that sum``, absolute). Relative to a
  prediction near zero that is not small: measured 1.2e-4 absolute (1.9e-5
  relative at worst) on predictions up to 2,400 from 50 trees.
* A ``base_score`` changed on the ensemble is written back as the float32
  XGBoost turns into the same float32 margin when one exists (always for
  the identity link); with logistic and log links the nearest stored value
  can be up to a few float32 steps (<= 1e-6) away.
* pandas input: XGBoost >= 3.1 re-codes ``category`` columns by their
  values against the categories seen in training, kept in
  ``source.payload["native"].training_categories`` and
  ``feature_categories``, and
  ``Ensemble.check_X`` does the same (a column that lists a category never
  seen in training is refused, as XGBoost refuses it). Without stored
  categories (older models, numeric features) a ``category`` column's own
  codes are used, as XGBoost uses them; float categories there are refused,
  as XGBoost refuses them.
* Wrappers predict with ``best_iteration + 1`` iterations when early stopping
  set ``best_iteration``; ``from_xgboost`` imports what the object's own
  ``predict`` uses (a Booster: all trees) unless ``iteration_range`` says
  otherwise, so the imported ensemble predicts like the object.

The model is read and written as XGBoost's JSON model document in its binary
encoding (``save_raw("ubj")``, same schema as ``save_raw("json")``), see
:mod:`._xgboost_ubjson`, which keeps every float32 value exact.
Exported trees are renumbered breadth-first with consecutive siblings (see
:mod:`._xgboost_trees`).
"""

import copy
import dataclasses
import json
import math
import re

import numpy as np

from .._validation import Interval
from ..exceptions import ConversionError, NotFittedError, ParameterError, UnsupportedModelError, missing_dependency
from ..tree import Ensemble, Source
from . import _xgboost_ubjson as ubjson
from ._native_errors import first_line
from ._payload import XGBoostPayload, payload_of, with_payload
from ._xgboost_base_score import parse_base_score, to_margin
from ._xgboost_document import check_exportable, label_rule, link_exp, model_document, set_num_trees
from ._xgboost_trees import read_trees

# objective -> (task, link, how the stored base_score becomes a margin)
OBJECTIVES = {
    "binary:logistic": ("classification", "sigmoid", "logit"),
    "multi:softprob": ("classification", "softmax", "identity"),
    "multi:softmax": ("classification", "softmax", "identity"),
    "reg:logistic": ("regression", "sigmoid", "logit"),
    "binary:logitraw": ("regression", "identity", "identity"),
    "reg:squarederror": ("regression", "identity", "identity"),
    "reg:linear": ("regression", "identity", "identity"),
    "reg:squaredlogerror": ("regression", "identity", "identity"),
    "reg:pseudohubererror": ("regression", "identity", "identity"),
    "reg:absoluteerror": ("regression", "identity", "identity"),
    "reg:quantileerror": ("regression", "identity", "identity"),
    "rank:pairwise": ("regression", "identity", "identity"),
    "rank:ndcg": ("regression", "identity", "identity"),
    "rank:map": ("regression", "identity", "identity"),
    "count:poisson": ("regression", "exp", "log"),
    "reg:gamma": ("regression", "exp", "log"),
    "reg:tweedie": ("regression", "exp", "log"),
    "survival:cox": ("regression", "exp", "log"),
}
# Objectives whose leaves are re-fitted after the tree is grown (quantiles of
# the residuals): an internal node's Newton weight is not its leaf value.
ADAPTIVE_OBJECTIVES = ("reg:absoluteerror", "reg:quantileerror")

SUPPORTED = "xgboost.Booster, XGBClassifier, XGBRegressor, XGBRFClassifier, XGBRFRegressor (booster gbtree or dart)"


def _xgboost():
    try:
        import xgboost
    except ImportError:  # pragma: no cover - exercised only without xgboost
        raise missing_dependency("xgboost", "xgboost", "Importing XGBoost models") from None
    return xgboost


def _training_categories(tree_model: dict, n_features: int):
    """Per feature, the category values seen in training (XGBoost >= 3.1
    stores them to re-code pandas categories by value at prediction time),
    or None for numerical features and older models."""
    encoder = tree_model.get("cats", {}).get("enc", [])
    if not encoder:
        return None
    out = []
    for entry in encoder:
        if "offsets" in entry:  # strings: UTF-8 bytes cut at offsets
            raw = np.asarray(entry["values"]).astype(np.uint8).tobytes()
            offsets = [int(v) for v in entry["offsets"]]
            values = [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])] if offsets else []
        else:
            values = np.asarray(entry.get("values", ())).tolist()
        out.append(tuple(values) if values else None)
    return tuple(out) if len(out) == n_features else None


# -------------------------------------------------------------- the objects
def _booster_and_template(model):
    """The model's Booster (never modified) and, for wrappers, the template: a
    deep copy of the wrapper without its Booster (to rebuild the same class on export)."""
    xgboost = _xgboost()
    if isinstance(model, xgboost.Booster):
        return model, None
    if isinstance(model, xgboost.XGBModel):
        if not type(model).__module__.startswith("xgboost.sklearn"):
            raise UnsupportedModelError(
                f"cannot import a {type(model).__module__}.{type(model).__name__}; supported: {SUPPORTED}. "
                "For a distributed model, import model.get_booster()"
            )
        if not isinstance(model, (xgboost.XGBClassifier, xgboost.XGBRegressor)):
            raise UnsupportedModelError(
                f"cannot import a {type(model).__name__}; supported: {SUPPORTED}. Import model.get_booster() to "
                "treat it as a regression on its raw scores"
            )
        if not model.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(model).__name__} is not fitted yet; call fit(X, y) before importing it")
        missing = model.missing
        if missing is not None and not (isinstance(missing, (float, np.floating)) and math.isnan(missing)):
            raise UnsupportedModelError(
                f"this {type(model).__name__} treats {missing!r} as missing; only missing=np.nan is supported "
                "(the common format treats NaN as XGBoost's missing value)"
            )
        booster = model.get_booster()
        template = copy.deepcopy(model, memo={id(booster): None})
        return booster, template
    raise UnsupportedModelError(
        f"cannot import a {type(model).__module__}.{type(model).__name__}; supported: {SUPPORTED}"
    )


def _tree_config(config: dict) -> dict:
    booster = config["learner"]["gradient_booster"]
    if booster.get("name") == "dart":
        booster = booster["gbtree"]
    return booster.get("tree_train_param", {})


def _relation_checkable(tree_param: dict) -> bool:
    """The Newton relation is exact only without L1 penalty, delta clipping and monotone constraints."""
    return (
        float(tree_param.get("alpha", "0")) == 0.0
        and float(tree_param.get("max_delta_step", "0")) == 0.0
        and tree_param.get("monotone_constraints", "()") in ("()", "")
    )


def _check_learning_rate(learning_rate):
    if learning_rate is None:
        return None
    if isinstance(learning_rate, (bool, np.bool_)) or not isinstance(
        learning_rate, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(
            f"learning_rate must be a number (the eta used in training) or None, got {learning_rate!r}"
        )
    # XGBoost keeps eta in float32: larger values became inf, and the trees' internal values NaN
    if not (np.isfinite(learning_rate) and 0 < learning_rate <= float(np.finfo(np.float32).max)):
        raise ParameterError(
            f"learning_rate must be a number > 0 that float32 holds (the eta used in training), got {learning_rate!r}"
        )
    return float(learning_rate)


def _relation_holds(trees, lambda_: float) -> np.ndarray:
    """Per tree: do the stored weights satisfy XGBoost's Newton relation
    ``v_parent (H_parent + lambda) = v_left (H_left + lambda) + v_right (H_right
    + lambda)`` with the node values we computed (leaves: the stored leaf
    values; internal nodes: eta * base_weight)? Tolerance 1e-3 relative:
    float32 rounding is ~1e-6, a wrong learning rate is off by far more."""
    sizes = np.array([tree.n_nodes for tree in trees], dtype=np.int64)
    offsets = np.repeat(np.cumsum(sizes) - sizes, sizes)
    owner = np.repeat(np.arange(len(trees)), sizes)
    left = np.concatenate([tree.children_left for tree in trees])
    right = np.concatenate([tree.children_right for tree in trees])
    value = np.concatenate([tree.value[:, 0] for tree in trees])
    weight = np.concatenate([tree.weighted_n_node_samples for tree in trees]) + lambda_
    internal = np.flatnonzero(left >= 0)
    left, right = left[internal] + offsets[internal], right[internal] + offsets[internal]
    parent_term = value[internal] * weight[internal]
    left_term, right_term = value[left] * weight[left], value[right] * weight[right]
    scale = np.abs(parent_term) + np.abs(left_term) + np.abs(right_term)
    broken = np.abs(parent_term - (left_term + right_term)) > 1e-3 * scale + 1e-9
    return np.bincount(owner[internal][broken], minlength=len(trees)) == 0


def from_xgboost(model, *, iteration_range=None, learning_rate=None) -> Ensemble:
    """Import a fitted XGBoost model into the common format.

    Parameters
    ----------
    model : xgboost.Booster, XGBClassifier or XGBRegressor
        Never modified.
    iteration_range : (begin, end) or None
        Boosting iterations to import, as in XGBoost's ``predict``
        (``end=0``: up to the last). None imports what the object's own
        ``predict`` uses: a wrapper trained with early stopping uses
        ``best_iteration + 1`` iterations, a Booster all of them.
    learning_rate : float or None
        The ``eta`` the trees were trained with, needed only to collapse
        internal nodes. None reads it from the booster's training
        configuration and checks it against the trees; a model loaded from a
        file has lost it, and then its internal nodes get
        ``has_leaf_value=0`` until you pass it here.

    Returns
    -------
    Ensemble
        Raw scores equal XGBoost's margins exactly; see the module docstring.

    Raises
    ------
    UnsupportedModelError
        Not an XGBoost Booster or wrapper, or a model the format cannot
        express (gblinear, vector-leaf trees, ...).
    NotFittedError
        The model has no trees yet.
    ParameterError
        ``iteration_range`` is not a pair of ints, or ``learning_rate`` not a
        number > 0 that float32 holds.
    ConversionError
        ``learning_rate`` does not match the trees, or ``iteration_range`` is
        outside the model.
    MissingDependencyError
        XGBoost is not installed.

    Examples
    --------
    >>> import numpy as np
    >>> import xgboost
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = xgboost.XGBClassifier(n_estimators=10, max_depth=3).fit(X, y)
    >>> ensemble = btt.from_xgboost(model)
    >>> ensemble.n_trees, ensemble.split_rule
    (10, 'lt')
    >>> margin = model.get_booster().predict(xgboost.DMatrix(X), output_margin=True)
    >>> bool(np.array_equal(ensemble.predict_raw(X)[:, 0], margin))
    True
    """
    booster, template = _booster_and_template(model)
    learning_rate = _check_learning_rate(learning_rate)
    document, config = _read_booster(booster)
    learner = document["learner"]
    gradient_booster = learner["gradient_booster"]
    kind, tree_model = _tree_booster(gradient_booster, config)
    outputs = _outputs(learner, template)
    selected = _selected_iterations(tree_model, learner, template, outputs, iteration_range)
    tree_documents = tree_model["trees"][selected.first_tree : selected.last_tree]
    tree_info = np.asarray(tree_model["tree_info"], dtype=np.int64)[selected.first_tree : selected.last_tree]
    if kind == "dart":
        weight_drop = np.asarray(gradient_booster["weight_drop"], dtype=np.float32)
        tree_scale = weight_drop[selected.first_tree : selected.last_tree].astype(np.float64)
    else:
        tree_scale = np.ones(len(tree_documents))
    if np.any(tree_info >= outputs.n_outputs) or np.any(tree_info < 0):
        raise ConversionError(f"XGBoost tree_info names outputs outside 0..{outputs.n_outputs - 1}")
    trees, scales, hint = _trees_and_internal_values(
        tree_documents, outputs, config, selected.n_parallel, learning_rate
    )
    record = XGBoostPayload(
        header=_document_header(document),
        model_header={
            key: value for key, value in tree_model.items() if key not in ("trees", "tree_info", "iteration_indptr")
        },
        booster=kind,
        config=json.dumps(config),
        template=template,
        objective=outputs.objective,
        margin_kind=outputs.margin_kind,
        stored_base_score=learner["learner_model_param"]["base_score"],
        imported_base_score=outputs.base_score.copy(),
        iteration_indptr=selected.indptr,
        trees_per_iteration=int(selected.indptr[1] - selected.indptr[0]) if selected.indptr.shape[0] > 1 else 1,
        internal_scale=scales,
        training_categories=_training_categories(tree_model, outputs.n_features),
    )
    return Ensemble(
        trees=tuple(trees),
        task=outputs.task,
        n_features_in_=outputs.n_features,
        n_outputs=outputs.n_outputs,
        tree_output=tree_info,
        tree_scale=tree_scale,
        aggregation="sum",
        base_score=outputs.base_score,
        link=outputs.link,
        source=Source(
            library="xgboost",
            estimator=type(model).__name__,
            version=_xgboost().__version__,
            payload=with_payload(record),
            collapse_hint=hint,
        ),
        classes_=outputs.classes,
        feature_names_in_=_feature_names(template, learner),
        split_rule="lt",
        input_dtype="float32",
        accumulate_float32=True,
        link_exp=link_exp(outputs.objective),
        feature_categories=record.training_categories,
        label_rule=label_rule(outputs.objective),
    )


# ------------------------------------------------------ from_xgboost's steps
def _read_booster(booster) -> tuple:
    """The booster's model document (UBJSON, exact floats) and its training configuration."""
    xgboost = _xgboost()
    try:
        raw = booster.save_raw("ubj")
    except xgboost.core.XGBoostError as error:
        if "0 feature" in str(error):
            raise NotFittedError(
                "this XGBoost Booster has no model yet; train it (xgboost.train) or load one before importing it"
            ) from None
        raise ConversionError(f"XGBoost could not write this model: {first_line(error)}") from None
    return ubjson.loads(raw), json.loads(booster.save_config())


def _tree_booster(gradient_booster: dict, config: dict) -> tuple:
    """``(kind, tree_model)``: gbtree or dart with one output per tree, else refused."""
    kind = gradient_booster.get("name")
    if kind == "gblinear":
        raise UnsupportedModelError(
            "XGBoost gblinear models have no trees; train with booster='gbtree' (or 'dart') to use bandit_tree_tools"
        )
    if kind not in ("gbtree", "dart"):
        raise UnsupportedModelError(f"XGBoost booster {kind!r} is not supported; supported: gbtree, dart")
    train_param = config["learner"].get("learner_train_param", {})
    if train_param.get("multi_strategy", "one_output_per_tree") != "one_output_per_tree":
        raise UnsupportedModelError(
            "XGBoost multi_strategy='multi_output_tree' (vector-leaf trees) is not supported; "
            "train with multi_strategy='one_output_per_tree'"
        )
    return kind, (gradient_booster["gbtree"]["model"] if kind == "dart" else gradient_booster["model"])


@dataclasses.dataclass(frozen=True)
class _Outputs:
    """What the objective makes of the trees' sums."""

    objective: str
    task: str
    link: str
    margin_kind: str
    n_features: int
    n_classes: int
    n_targets: int
    n_outputs: int
    classes: np.ndarray | None
    base_score: np.ndarray


def _outputs(learner: dict, template) -> _Outputs:
    objective = learner["objective"]["name"]
    if objective not in OBJECTIVES:
        raise UnsupportedModelError(
            f"XGBoost objective {objective!r} is not supported; supported objectives: {sorted(OBJECTIVES)}"
        )
    task, link, margin_kind = OBJECTIVES[objective]
    model_param = learner["learner_model_param"]
    n_features = int(model_param["num_feature"])
    n_classes = int(model_param.get("num_class", "0") or 0)
    n_targets = int(model_param.get("num_target", "1") or 1)
    if objective == "binary:logitraw" and template is not None and hasattr(template, "classes_"):
        # XGBClassifier.predict thresholds the raw margin at 0.5 (not a probability): neither a
        # regression on the margin nor a classifier of this format predicts what it predicts
        raise UnsupportedModelError(
            f"this {type(template).__name__} has objective 'binary:logitraw': its predict returns labels from the "
            "raw margin (margin > 0.5) and its predict_proba is not a probability, which the common format does not "
            "express; import model.get_booster() to work with the margins (a regression on them), or train with "
            "objective='binary:logistic'"
        )
    if task == "classification":
        if n_targets > 1:
            raise UnsupportedModelError(
                f"multi-label XGBoost classifiers ({n_targets} targets) are not supported; train one model per label"
            )
        n_outputs = n_classes if link == "softmax" else 1
        classes = np.arange(max(n_classes, 2)) if template is None else np.asarray(template.classes_).copy()
    else:
        n_outputs = max(n_targets, n_classes, 1)
        classes = None
    margin = to_margin(parse_base_score(model_param["base_score"]), margin_kind)
    if margin.size not in (1, n_outputs):
        raise ConversionError(f"base_score has {margin.size} values, but the model has {n_outputs} outputs")
    base_score = np.broadcast_to(margin, (n_outputs,)).copy()
    return _Outputs(
        objective, task, link, margin_kind, n_features, n_classes, n_targets, n_outputs, classes, base_score
    )


@dataclasses.dataclass(frozen=True)
class _Selection:
    first_tree: int
    last_tree: int
    indptr: np.ndarray  # iteration boundaries of the selected trees, from 0
    n_parallel: int


def _selected_iterations(tree_model: dict, learner: dict, template, outputs: _Outputs, iteration_range) -> _Selection:
    """The trees of ``iteration_range``; None: what the object's own predict uses."""
    n_parallel = int(tree_model["gbtree_model_param"].get("num_parallel_tree", "1"))
    if "iteration_indptr" in tree_model:
        indptr = np.asarray(tree_model["iteration_indptr"], dtype=np.int64)
    else:  # written by XGBoost < 2.0: every iteration has the same trees
        per_iteration = n_parallel * (outputs.n_classes if outputs.link == "softmax" else max(outputs.n_targets, 1))
        indptr = np.arange(0, len(tree_model["trees"]) + 1, per_iteration, dtype=np.int64)
    n_iterations = indptr.shape[0] - 1
    if iteration_range is None:
        best = learner.get("attributes", {}).get("best_iteration")
        end = int(best) + 1 if (template is not None and best is not None) else n_iterations
        iteration_range = (0, end)
    if (
        isinstance(iteration_range, (str, bytes))
        or not hasattr(iteration_range, "__len__")
        or len(iteration_range) != 2
        or not all(Interval(int, None, None).accepts(value) for value in iteration_range)
    ):
        raise ParameterError(f"iteration_range must be a pair of ints (begin, end) or None, got {iteration_range!r}")
    begin, end = (int(v) for v in iteration_range)
    end = n_iterations if end == 0 else end
    if n_iterations and not 0 <= begin < end <= n_iterations:
        raise ConversionError(
            f"iteration_range {tuple(iteration_range)} is outside the model's {n_iterations} iterations"
        )
    if n_iterations == 0 or not tree_model["trees"]:
        raise NotFittedError("this XGBoost model has no trees yet; train it (xgboost.train or fit) before importing it")
    first_tree, last_tree = int(indptr[begin]), int(indptr[end])
    return _Selection(first_tree, last_tree, indptr[begin : end + 1] - first_tree, n_parallel)


def _trees_and_internal_values(tree_documents, outputs: _Outputs, config: dict, n_parallel: int, learning_rate):
    """The trees, the per-tree scale of internal values (``eta / num_parallel_tree``)
    and a hint for trees whose internal nodes cannot be collapsed: the learning
    rate is checked against XGBoost's Newton relation wherever it is exact."""
    tree_param = _tree_config(config)
    eta = np.float32(learning_rate if learning_rate is not None else float(tree_param.get("eta", "0.3")))
    eta_tree = np.float32(eta / np.float32(n_parallel))
    scales = np.full(len(tree_documents), eta_tree, dtype=np.float32)
    trusted = np.ones(len(tree_documents), dtype=bool)
    trees = read_trees(tree_documents, outputs.n_features, scales, trusted)
    hint = ""
    if outputs.objective in ADAPTIVE_OBJECTIVES:
        trusted[:] = False
        hint = (
            f"The {outputs.objective} objective re-fits leaf values after each tree is grown, so the value an "
            "internal node would have as a leaf is not stored; collapse is not possible for this model."
        )
    elif learning_rate is not None:
        # a given eta is a hint: verify it against the trees wherever the relation is exact
        if _relation_checkable(tree_param):
            holds = _relation_holds(trees, float(tree_param.get("lambda", "1")))
            if not np.all(holds):
                raise ConversionError(
                    f"learning_rate={float(learning_rate):g} does not match the trees: in {np.count_nonzero(~holds)} "
                    f"of {len(trees)} trees (first: tree {int(np.flatnonzero(~holds)[0])}) learning_rate times the "
                    "stored base_weights breaks XGBoost's Newton relation between parents and children; pass the "
                    "eta the model was trained with, or learning_rate=None (internal nodes then cannot be collapsed)"
                )
    else:
        if _relation_checkable(tree_param):
            trusted = _relation_holds(trees, float(tree_param.get("lambda", "1")))
        if not np.all(trusted):
            hint = (
                f"In {np.count_nonzero(~trusted)} of {len(trees)} trees the leaves do not match the configured "
                f"eta={float(eta):g} times the stored base_weights (a model loaded from a file keeps no training "
                "configuration; a learning-rate schedule changes eta between trees). Pass "
                "from_xgboost(model, learning_rate=<eta used in training>), or import the trained object itself "
                "(or its pickle), which keeps its configuration."
            )
    if not np.all(trusted):
        trees = [
            tree if ok else tree._replace(has_leaf_value=(tree.children_left < 0).astype(np.uint8))
            for tree, ok in zip(trees, trusted)
        ]
    return trees, scales, hint


def _feature_names(template, learner: dict):
    if template is not None and hasattr(template, "feature_names_in_"):
        return np.asarray(template.feature_names_in_, dtype=object)
    if learner.get("feature_names"):
        return np.asarray(learner["feature_names"], dtype=object)
    return None


def _document_header(document: dict) -> dict:
    """The model document without its trees (the export writes them back)."""
    learner = document["learner"]
    header = copy.deepcopy({key: value for key, value in document.items() if key != "learner"})
    header["learner"] = {key: value for key, value in learner.items() if key != "gradient_booster"}
    header["learner"]["gradient_booster"] = {
        key: value
        for key, value in learner["gradient_booster"].items()
        if key not in ("model", "gbtree", "weight_drop")
    }
    return header


def to_xgboost(ensemble: Ensemble):
    """Export an ensemble imported from XGBoost (possibly edited) back into
    an object of the imported class.

    Parameters
    ----------
    ensemble : Ensemble
        Imported with :func:`from_xgboost`.

    Returns
    -------
    xgboost.Booster or XGBModel
        A Booster, or a deep copy of the imported wrapper with its Booster
        replaced (``predict``, ``predict_proba``, pickling and ``save_model``
        work). It predicts exactly like ``ensemble`` (raw margins bit for bit).

    Raises
    ------
    UnsupportedModelError
        ``ensemble`` is not an Ensemble.
    ConversionError
        The ensemble was not imported from XGBoost, or holds something an
        XGBoost model cannot (another split rule or aggregation, ...).

    Examples
    --------
    >>> import numpy as np
    >>> import xgboost
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = xgboost.XGBClassifier(n_estimators=10, max_depth=3).fit(X, y)
    >>> smaller = btt.collapse(btt.from_xgboost(model), {0: [0]})  # tree 0 becomes one leaf
    >>> exported = btt.to_xgboost(smaller)
    >>> type(exported).__name__
    'XGBClassifier'
    >>> margin = exported.get_booster().predict(xgboost.DMatrix(X), output_margin=True)
    >>> bool(np.array_equal(margin, smaller.predict_raw(X)[:, 0]))
    True
    """
    if not isinstance(ensemble, Ensemble):
        raise UnsupportedModelError(
            f"to_xgboost expects an Ensemble (see btt.from_xgboost), got {type(ensemble).__name__}"
        )
    payload = payload_of(ensemble.source, XGBoostPayload)
    check_exportable(ensemble, payload)
    xgboost = _xgboost()
    document = model_document(ensemble, payload)
    booster = xgboost.Booster()
    try:
        booster.load_model(ubjson.dumps(document))
    except xgboost.core.XGBoostError as error:
        raise ConversionError(f"XGBoost refused the exported model: {first_line(error)}") from None
    config = json.loads(payload.config)
    set_num_trees(config, ensemble.n_trees)
    # the configuration repeats the model's parameters; keep them in step
    config["learner"]["learner_model_param"] = dict(document["learner"]["learner_model_param"])
    booster.load_config(json.dumps(config))
    if payload.template is None:
        return booster
    wrapper = copy.deepcopy(payload.template)
    wrapper._Booster = booster
    return wrapper


def training_objective(ensemble: Ensemble) -> tuple:
    """``(name, family)`` of the booster's objective (``Adapter.objective``)."""
    payload = payload_of(ensemble.source, XGBoostPayload)
    name = "" if payload is None else payload.objective  # "": built by hand, nothing recorded
    if name == "binary:logitraw":
        return name, "margin"
    if name == "reg:quantileerror":
        return name, "quantile"
    family = name.split(":")[0]
    return name, {"rank": "ranking", "survival": "survival"}.get(family, ensemble.task)


def recorded_trees_per_iteration(ensemble: Ensemble) -> int | None:
    """Trees per iteration as imported (``Adapter.recorded_trees_per_iteration``)."""
    payload = payload_of(ensemble.source, XGBoostPayload)
    return None if payload is None else payload.trees_per_iteration


def monotone_method(ensemble: Ensemble) -> str | None:
    """ "basic" when the training configuration holds a non-zero monotone
    constraint (XGBoost bounds each side's subtree by the middle of a split's
    outputs), else None (``Adapter.monotone_method``; a model read from a
    file keeps no configuration)."""
    payload = payload_of(ensemble.source, XGBoostPayload)

    def constraints(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from ([value] if key == "monotone_constraints" else constraints(value))

    config = json.loads(payload.config) if payload is not None else {}
    return "basic" if any(re.search(r"-?[1-9]", str(value)) for value in constraints(config)) else None


__all__ = ["from_xgboost", "to_xgboost", "monotone_method", "recorded_trees_per_iteration", "training_objective"]
