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
  ``missing_go_to_left=0``). LightGBM truncates ``x`` toward zero, so a
  value in ``(-1, 0)`` is category 0; ``Ensemble.check_X`` turns such values
  of categorical features into 0.0 before routing (the kernels treat every
  negative value as an unknown category).
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
- pandas: LightGBM re-maps a frame's categorical columns onto the training
  categories (``pandas_categorical``) before taking codes; the import puts
  them in ``feature_categories``, so our predictions re-map the same way
  (values unseen in training become missing). LightGBM does not record which
  columns they belong to; when that is ambiguous (ordered categoricals,
  numeric columns declared categorical) the import warns and a frame's own
  codes are used. A model trained on a frame without categorical columns
  refuses ``category`` columns, as LightGBM does (a model trained on numpy
  arrays reads their codes, as LightGBM does). The exported model keeps
  ``pandas_categorical``.

Exactness (measured with lightgbm 4.7 on x86-64)
-------------------------------------------------
LightGBM sums tree outputs in double in tree order, as our kernel does: raw
scores are bit-identical (max abs difference 0). Transformed outputs use the
same formulas (``1 / (1 + exp(-sigmoid * raw))``; ``exp``; softmax after
subtracting the row maximum, its denominator summed in class order) with the
same ``exp``, the C library's (``Ensemble.link_exp = "libm"``; numpy's
vectorised ``exp`` differs from it in the last bit of about 3% of values on an
AVX-512 machine): bit for bit at any number of classes. The tests require
identical raw scores, transformed outputs and labels.

Export
------
``to_lightgbm`` returns an object of the imported class: a new ``Booster``, or
a deep copy of the imported estimator whose booster (``_Booster``, seen as
``booster_``) is the new Booster, so ``predict``, ``predict_proba``, pickling
and ``booster_.save_model`` work. The model string's header (objective,
feature names and infos, ``average_output``), each tree's ``shrinkage``, the
training parameters and ``pandas_categorical`` come from the imported model;
trees unchanged since import are written back as LightGBM's own text (checked
by a fingerprint of all their arrays), so an unedited round trip reproduces the
original trees byte for byte; ``tree_sizes`` is recomputed from the blocks
written. The user's model is never modified.
"""

import copy
import re
import warnings

import numpy as np

from .._validation import Interval
from ..exceptions import (
    BanditTreeToolsError,
    ConversionError,
    NotFittedError,
    ParameterError,
    UnsupportedModelError,
    missing_dependency,
)
from ..tree import Ensemble, Source, validate
from . import _lightgbm_text as text
from ._lightgbm_export import check_exportable, split_importances, tree_digest, tree_fields
from ._lightgbm_text import LIGHTGBM_ZERO, objective_link  # noqa: F401 (LIGHTGBM_ZERO: part of this module's names)
from ._lightgbm_trees import build_trees
from ._native_errors import first_line
from ._payload import LightGBMPayload, payload_of, with_payload

__all__ = [
    "from_lightgbm",
    "to_lightgbm",
    "booster_from_string",
    "load_booster",
    "monotone_method",
    "training_objective",
]


def _lightgbm():
    try:
        import lightgbm
    except ImportError:
        raise missing_dependency("lightgbm", "lightgbm", "Importing and exporting LightGBM models") from None
    return lightgbm


def _booster_and_estimator(model, lgb):
    if isinstance(model, lgb.Booster):
        return model, None
    if isinstance(model, lgb.LGBMModel):
        if not model.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(model).__name__} is not fitted yet; call fit(X, y) before importing it")
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


def _feature_categories(pandas_categorical, infos):
    """Per feature, the training categories of pandas categorical columns.

    LightGBM keeps ``pandas_categorical`` (one list per category-dtype column of
    the training frame, in column order) without the columns' positions. The
    positions are those of the categorical features in ``feature_infos`` when
    the counts agree and every code seen in training is a valid code; with
    ordered categoricals (numeric to LightGBM) or numeric columns declared
    categorical the positions are ambiguous: then None, with a warning, and a
    frame's own category codes are used.
    """
    if pandas_categorical is None:
        return None  # trained without a frame: LightGBM codes a frame's categories by their own order
    if len(pandas_categorical) == 0:
        return (None,) * len(infos)  # trained on a frame without categoricals: LightGBM refuses them
    categorical = [i for i, info in enumerate(infos) if info != "none" and not info.startswith("[")]
    result = [None] * len(infos)
    ambiguous = len(categorical) != len(pandas_categorical)
    for position, categories in zip(categorical, pandas_categorical):
        try:
            codes = [int(code) for code in infos[position].split(":")]
        except ValueError:
            ambiguous = True
            break
        ambiguous |= max(codes) >= len(categories)
        result[position] = tuple(categories)
    if ambiguous:
        warnings.warn(
            "the LightGBM model keeps the categories of its training frame's categorical columns, but not which "
            "columns they belong to (ordered categoricals or numeric columns declared categorical make it "
            "ambiguous); pandas categorical columns will be coded by their own categories, so pass frames whose "
            "categorical columns have exactly the training categories",
            UserWarning,
            stacklevel=3,
        )
        return None
    return tuple(result)


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


_TREE_SIZES_LINE = re.compile(r"^tree_sizes=[^\n]*\n", re.MULTILINE)


def checked_model_string(model_text: str) -> str:
    """``model_text`` once our parser has accepted it, ready for LightGBM's loader.

    LightGBM's loader trusts its input: a truncated file, an edited
    ``num_leaves`` or an out-of-range ``left_child`` makes it abort or crash the
    process. So the text is parsed and every tree checked against the common
    format's invariants (children after parents and inside the tree, one parent
    per node, features below ``max_feature_idx + 1``, categorical bitsets that
    exist) first; ``tree_sizes`` is dropped, so the loader reads the blocks in
    order instead of jumping to byte offsets a hand edit has moved.
    Raises :class:`ConversionError` (or :class:`InvalidTreeError`) naming what is wrong.
    """
    if not isinstance(model_text, str):
        raise ParameterError(f"a LightGBM model string must be a str, got {type(model_text).__name__}")
    parsed = text.parse_model_string(model_text)
    _, _, n_features, _ = _check_header(parsed)
    for index, tree in enumerate(build_trees(parsed)):
        validate(tree, n_features=n_features, where=f"tree {index} of the LightGBM model string")
    return _TREE_SIZES_LINE.sub("", model_text, count=1)


def booster_from_string(model_text: str):
    """``lightgbm.Booster(model_str=model_text)``, after :func:`checked_model_string`.
    A text LightGBM still refuses raises ConversionError (not LightGBMError)."""
    lgb = _lightgbm()
    checked = checked_model_string(model_text)
    try:
        return lgb.Booster(model_str=checked)
    except lgb.basic.LightGBMError as error:
        raise ConversionError(f"LightGBM refused the model string: {first_line(error)}") from None


def load_booster(path):
    """A LightGBM text model file as a Booster, checked as :func:`booster_from_string` does."""
    try:
        with open(path, encoding="utf-8") as handle:
            model_text = handle.read()
    except UnicodeDecodeError:
        raise ConversionError(f"{path} is not a LightGBM text model (it is not UTF-8 text)") from None
    try:
        return booster_from_string(model_text)
    except BanditTreeToolsError as error:
        raise type(error)(f"{path}: {error}") from None


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

    Raises
    ------
    UnsupportedModelError
        Not a LightGBM Booster or estimator, or a model the format cannot
        express (linear trees, multiclass random forests, ...).
    NotFittedError
        The estimator has not been fitted.
    MissingDependencyError
        LightGBM is not installed.

    Examples
    --------
    >>> import numpy as np
    >>> import lightgbm
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = lightgbm.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1).fit(X, y)
    >>> ensemble = btt.from_lightgbm(model)
    >>> ensemble.n_trees, ensemble.link
    (10, 'sigmoid')
    >>> bool(np.array_equal(ensemble.predict_raw(X)[:, 0], model.predict(X, raw_score=True)))
    True
    """
    lgb = _lightgbm()
    booster, estimator = _booster_and_estimator(model, lgb)
    if num_iteration is not None and not Interval(int, None, None).accepts(num_iteration):
        raise ParameterError(f"num_iteration must be an int or None, got {type(num_iteration).__name__}")
    parsed = text.parse_model_string(_model_text(booster, num_iteration))
    n_classes, per_iteration, n_features, names = _check_header(parsed)
    infos = parsed.header_values["feature_infos"].split(" ")
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
    trees = build_trees(parsed)
    record = LightGBMPayload(
        header=tuple(parsed.header),
        # the imported trees and their blocks: an unchanged tree is written back verbatim
        digests=tuple(tree_digest(tree) for tree in trees),
        node_counts=tuple((2 * parsed.num_leaves - 1).tolist()),
        blocks=tuple(parsed.blocks),
        parameters=parsed.parameters,
        shrinkage=tuple(parsed.shrinkage.tolist()),
        template=None if estimator is None else _estimator_template(estimator),
        num_tree_per_iteration=per_iteration,
        num_class=n_classes,
        best_iteration=int(booster.best_iteration),
    )
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
        link_exp="libm",
        feature_categories=_feature_categories(booster.pandas_categorical, infos),
        source=Source("lightgbm", type(model).__name__, lgb.__version__, with_payload(record)),
    )


def to_lightgbm(ensemble: Ensemble):
    """Write ``ensemble`` as a LightGBM model of the class it was imported from.

    Parameters
    ----------
    ensemble : Ensemble
        Imported with :func:`from_lightgbm` (possibly edited since). Trees
        unchanged since the import are written back verbatim.

    Returns
    -------
    lightgbm.Booster or LGBMModel
        A Booster, or a deep copy of the imported estimator holding the new
        Booster; it predicts exactly like ``ensemble`` (also after
        :func:`~bandit_tree_tools.collapse`).

    Raises
    ------
    UnsupportedModelError
        ``ensemble`` is not an Ensemble.
    ConversionError
        The ensemble was not imported from LightGBM, or holds something a
        LightGBM model cannot (another split rule, thresholds LightGBM would
        read as zero, ...).

    Examples
    --------
    >>> import numpy as np
    >>> import lightgbm
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = lightgbm.LGBMClassifier(n_estimators=10, num_leaves=7, verbose=-1).fit(X, y)
    >>> smaller = btt.collapse(btt.from_lightgbm(model), {0: [0]})  # tree 0 becomes one leaf
    >>> exported = btt.to_lightgbm(smaller)
    >>> type(exported).__name__, exported.booster_.num_trees()
    ('LGBMClassifier', 10)
    >>> bool(np.array_equal(exported.predict_proba(X), smaller.predict_proba(X)))
    True
    """
    _lightgbm()  # a clear error first when LightGBM is missing
    if not isinstance(ensemble, Ensemble):
        raise UnsupportedModelError(
            f"to_lightgbm expects an Ensemble (see btt.from_lightgbm), got {type(ensemble).__name__}"
        )
    payload = payload_of(ensemble.source, LightGBMPayload)
    per_iteration = check_exportable(ensemble, payload)
    header = list(payload.header)
    names = dict(header)["feature_names"].split(" ")
    shrinkage = payload.shrinkage
    if len(shrinkage) != ensemble.n_trees:
        shrinkage = (1.0,) * ensemble.n_trees
    digests, node_counts, imported_blocks = payload.digests, payload.node_counts, payload.blocks
    blocks, changed, changed_fields = [], [], []
    for index, tree in enumerate(ensemble.trees):
        bias = float(ensemble.base_score[ensemble.tree_output[index]]) if index < per_iteration else 0.0
        scale = float(ensemble.tree_scale[index])
        unchanged = index < len(digests) and scale == 1.0 and bias == 0.0 and tree.n_nodes == node_counts[index]
        if unchanged and tree_digest(tree) == digests[index]:
            blocks.append(imported_blocks[index])  # unchanged since import: LightGBM's own text
            continue
        blocks.append(None)
        changed.append(index)
        changed_fields.append(tree_fields(tree, shrinkage[index], scale, bias))
    for index, fields in zip(changed, text.format_tree_arrays(changed_fields)):
        blocks[index] = text.tree_block(index, fields)
    model_text = text.model_string(header, blocks, split_importances(ensemble, names), payload.parameters)
    booster = booster_from_string(model_text)  # never hand LightGBM an unchecked string
    if booster.num_trees() != ensemble.n_trees or booster.num_feature() != ensemble.n_features_in_:
        raise ConversionError(
            f"LightGBM loaded {booster.num_trees()} trees and {booster.num_feature()} features from the written "
            f"model, expected {ensemble.n_trees} and {ensemble.n_features_in_}"
        )
    template = payload.template
    if template is None:
        return booster
    estimator = copy.deepcopy(template)
    estimator._Booster = booster
    return estimator


def training_objective(ensemble: Ensemble) -> tuple:
    """``(name, family)`` of the model string's objective (``Adapter.objective``;
    "custom" for a custom objective, whose family follows the task, or is
    "margin" for an ``LGBMClassifier``: its raw scores are what it predicts)."""
    from sklearn.base import is_classifier

    payload = payload_of(ensemble.source, LightGBMPayload)
    if payload is None:  # built by hand: nothing recorded
        return "", ensemble.task
    line = dict(payload.header).get("objective")
    name = line.split()[0] if line else "custom"
    if name == "custom" and payload.template is not None and is_classifier(payload.template):
        return name, "margin"  # its predict_proba gives raw scores, as the booster does
    family = {"quantile": "quantile", "lambdarank": "ranking", "rank_xendcg": "ranking"}.get(name, ensemble.task)
    return name, family


def monotone_method(ensemble: Ensemble) -> str | None:
    """The model string's ``monotone_constraints_method`` when a monotone
    constraint is non-zero, else None (``Adapter.monotone_method``)."""
    payload = payload_of(ensemble.source, LightGBMPayload)
    parameters = payload.parameters if payload is not None else ""
    found = re.search(r"\[monotone_constraints: ([^\]]*)\]", parameters)
    if not found or all(value.strip() in ("", "0") for value in found.group(1).split(",")):
        return None
    method = re.search(r"\[monotone_constraints_method: ([^\]]*)\]", parameters)
    return method.group(1).strip() if method else "basic"
