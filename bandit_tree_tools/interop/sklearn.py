"""scikit-learn trees, forests and gradient boosting <-> the common format.

Supported estimators
--------------------
``DecisionTreeClassifier``/``Regressor``, ``ExtraTreeClassifier``/``Regressor``,
``RandomForestClassifier``/``Regressor``, ``ExtraTreesClassifier``/``Regressor``,
``GradientBoostingClassifier``/``Regressor`` and
``HistGradientBoostingClassifier``/``Regressor``, single output only
(multi-output trees raise :class:`~bandit_tree_tools.exceptions.UnsupportedModelError`).

How the library's facts map into the format
-------------------------------------------
* Trees and forests compare ``float32(x) <= threshold`` (``input_dtype="float32"``,
  ``split_rule="le"``); NaN follows the node's ``missing_go_to_left``. Classifier
  trees store class fractions (scikit-learn >= 1.4.1), which ``predict_proba``
  returns as they are; forests average the trees' outputs in tree order
  (``aggregation="mean"``), as the estimators do with ``n_jobs=None``.
  Every node stores its value, so any internal node can be collapsed.
* GradientBoosting stores unscaled leaf values: ``tree_scale`` is the learning
  rate and ``base_score`` the raw prediction of ``init_`` (``"zero"`` or a
  ``Dummy*`` estimator; other ``init`` estimators are refused). With the
  squared-error loss an internal node's stored value is its leaf value. With
  any other loss the leaves were re-fitted by a line search that internal
  nodes never saw: pass the training data, ``from_sklearn(model, X=X, y=y,
  sample_weight=w)``, to recompute each internal node's line-search value on
  the rows that reach it (replaying the boosting stages; not possible with
  ``subsample < 1`` or ``n_iter_no_change``); otherwise those nodes get
  ``has_leaf_value=0`` and collapsing them raises ``ConversionError``.
* HistGradientBoosting compares float64 ``x <= threshold``; leaf values include
  the learning rate, internal values do not (collapse value = learning rate x
  stored value; the root stores 0, the library's own output for a tree that
  cannot split). With a non-differentiable loss (``absolute_error``,
  ``quantile``) the leaves were re-fitted to a median or quantile of the
  residuals and internal values are not leaf values: as for GradientBoosting,
  pass ``X, y, sample_weight`` to recompute them (not possible after a
  validation split for early stopping), or they are marked unknown.
  Categorical splits become category bitsets; categories the tree has not
  seen go to the missing-value side. ``base_score`` is the baseline
  prediction. See :mod:`._sklearn_hist_gradient_boosting` for how
  categories are encoded (pandas codes or category values).

Exactness
---------
Imported ensembles reproduce ``predict``, ``predict_proba``,
``decision_function`` and regression predictions bit for bit (max abs
difference 0): every library here works in float64 after the input cast.
Forests are exact when predicting with ``n_jobs=None`` (threads add the trees
in a nondeterministic order). Exported estimators predict exactly like the
ensemble. Boosting labels follow scikit-learn's rule (``label_rule``): the
argmax of the raw score, and with one raw column the positive class at
``raw >= 0`` (GradientBoosting) or ``raw > 0`` (HistGradientBoosting), so
rows whose raw score is exactly 0 get scikit-learn's label too. Known
departures: HistGradientBoosting casts categorical values to ``uint8``
without a range check, so categories >= 256 are undefined there (the
ensemble sends them to the unknown side) and a fractional category such as
2.5 is unknown there but category 2 here.
GradientBoosting's own ``predict`` refuses NaN (its input check), while
its trees route a missing value to the child that held more training rows
(scikit-learn's rule for features without missing values in training): the
ensemble answers as those trees do, where the estimator raises.

Export
------
``to_sklearn(ensemble)`` returns an estimator of the imported class: a deep
copy of the imported estimator with the trees replaced (forests: new
``DecisionTree*``/``ExtraTree*`` objects in ``estimators_``), whose trees are
built from the installed version's node dtype through ``Tree.__setstate__``
(node fields this module does not know are refused). Unknown counts are
written as 0; unknown impurities (so that ``feature_importances_`` works) as
the Gini index or entropy of the class fractions for classifiers, and as the
weighted variance of the leaf means below each node for regressors.

Ensembles built without a scikit-learn object (``Source(library="sklearn",
estimator=<class name>, payload=...)``, for example by this library's
MABSplit estimators) can be exported as ``DecisionTreeClassifier``/``Regressor``,
``ExtraTreeClassifier``/``Regressor``, ``RandomForestClassifier``/``Regressor``
or ``ExtraTreesClassifier``/``Regressor``: a fresh fitted estimator is built.
The exporter then reads two fields of the payload's
:class:`~bandit_tree_tools.interop._payload.SklearnPayload` (given as
``payload={"native": SklearnPayload(...)}``, or as the plain keys
``{"params": ..., "random_states": ...}``), both optional:

``params``
    Constructor parameters of the estimator class (keys that are not
    parameters of the class are ignored).
``random_states``
    Forests: one ``random_state`` per tree, stored on the tree estimators.

Such forests have no ``estimators_samples_`` or out-of-bag attributes (the
bootstrap samples are unknown).

The ensemble must hold class fractions (classifiers, ``link="identity"``) or
mean targets (regressors), ``tree_scale`` 1, ``base_score`` 0, aggregation
``"mean"`` for forests, no categorical splits and NaN-only missing handling.
scikit-learn casts X to float32 before comparing; an ensemble with
``input_dtype="float64"`` is exported with a warning, since rows within float32
rounding of a threshold can then go the other way.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator

import numpy as np

from .._validation import resolve_max_features
from ..exceptions import ConversionError, NotFittedError, UnsupportedModelError
from ..tree import Ensemble, Source, averaged_ensemble
from ._payload import SklearnPayload, with_payload
from ._sklearn_common import check_classes, feature_names, skeleton, sklearn_payload, version
from ._sklearn_trees import max_depths, tree_from_sklearn, tree_to_sklearn

__all__ = ["from_sklearn", "to_sklearn", "monotone_method", "training_objective"]

_TREES = ("DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreeClassifier", "ExtraTreeRegressor")
_FORESTS = ("RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor")
_GRADIENT_BOOSTING = ("GradientBoostingClassifier", "GradientBoostingRegressor")
_HIST_GRADIENT_BOOSTING = ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor")
SUPPORTED_ESTIMATORS = _TREES + _FORESTS + _GRADIENT_BOOSTING + _HIST_GRADIENT_BOOSTING


def _sklearn_classes():
    """Estimator class name -> (class, kind). Imported lazily."""
    from sklearn import ensemble, tree

    table = {}
    for name in _TREES:
        table[name] = (getattr(tree, name), "tree")
    for name in _FORESTS:
        table[name] = (getattr(ensemble, name), "forest")
    for name in _GRADIENT_BOOSTING:
        table[name] = (getattr(ensemble, name), "gradient_boosting")
    for name in _HIST_GRADIENT_BOOSTING:
        table[name] = (getattr(ensemble, name), "hist_gradient_boosting")
    return table


def _kind_of(model):
    """(scikit-learn class name, kind) of ``model``, following subclasses."""
    table = _sklearn_classes()
    for cls in type(model).__mro__:
        entry = table.get(cls.__name__)
        if entry is not None and entry[0] is cls:
            return cls.__name__, entry[1]
    raise UnsupportedModelError(
        f"cannot import a {type(model).__module__}.{type(model).__name__}; the scikit-learn estimators "
        f"supported are {', '.join(SUPPORTED_ESTIMATORS)}{_wrapper_hint(model)}"
    )


def _wrapper_hint(model) -> str:
    """How to reach the tree model inside a wrapper the user passed instead."""
    if hasattr(model, "steps"):
        return (
            ". For a Pipeline, pass its last step (pipeline[-1]) with X transformed by the steps before it "
            "(pipeline[:-1].transform(X))"
        )
    if hasattr(model, "best_estimator_"):
        return ". For a fitted search, pass its best_estimator_"
    return ""


def _check_fitted(model, name):
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except SklearnNotFittedError:
        raise NotFittedError(
            f"this {name} is not fitted yet; call fit(X, y) before importing it with from_sklearn"
        ) from None


def _check_single_output(model, name):
    n_outputs = getattr(model, "n_outputs_", 1)
    if n_outputs != 1:
        raise UnsupportedModelError(
            f"this {name} predicts {n_outputs} outputs; only single-output models can be imported. "
            f"Fit one model per output column instead"
        )


def _import_tree(model, name):
    classifier = hasattr(model, "classes_")
    classes = check_classes(model, name) if classifier else None
    width = len(classes) if classifier else 1
    tree = tree_from_sklearn(model.tree_, width)
    record = SklearnPayload(kind="tree", template=skeleton(model, tree_=None))
    return _averaged_ensemble(model, name, (tree,), classes, record)


def _import_forest(model, name):
    classifier = hasattr(model, "classes_")
    classes = check_classes(model, name) if classifier else None
    width = len(classes) if classifier else 1
    trees = tuple(tree_from_sklearn(estimator.tree_, width) for estimator in model.estimators_)
    if not trees:
        raise UnsupportedModelError(f"this {name} has no trees (estimators_ is empty)")
    record = SklearnPayload(
        kind="forest",
        template=skeleton(model, estimators_=[]),
        tree_template=skeleton(model.estimators_[0], tree_=None),
        random_states=tuple(copy.deepcopy(estimator.random_state) for estimator in model.estimators_),
    )
    return _averaged_ensemble(model, name, trees, classes, record)


def _averaged_ensemble(model, name, trees, classes, record) -> Ensemble:
    """Trees and forests: class fractions (or means) averaged over the trees,
    compared as float32 ``<=`` as scikit-learn's trees do."""
    return averaged_ensemble(
        trees,
        n_features=model.n_features_in_,
        source=Source("sklearn", name, version(), with_payload(record)),
        classes=classes,
        feature_names=feature_names(model),
    )


# --------------------------------------------------------------------------- public
def from_sklearn(model, *, X=None, y=None, sample_weight=None) -> Ensemble:
    """Import a fitted scikit-learn tree model into the common format.

    Parameters
    ----------
    model : fitted scikit-learn estimator
        One of the classes listed in this module's docstring. Never modified.
    X, y, sample_weight : optional
        Training data of a ``GradientBoosting*`` model with a loss other than
        squared error, or of a ``HistGradientBoostingRegressor`` with a
        non-differentiable loss: used to recompute the values of internal
        nodes (see the module docstring). Ignored by other models.

    Returns
    -------
    Ensemble
        Predicts exactly like ``model``; ``btt.to_model`` exports it back.

    Raises
    ------
    UnsupportedModelError
        Another class or a multi-output model.
    NotFittedError
        The estimator has not been fitted.
    ConversionError
        ``X, y`` given to recompute internal values are not the training data.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    >>> ensemble = btt.from_sklearn(model, X=X, y=y)  # X, y: internal nodes can then be collapsed
    >>> ensemble.n_trees, ensemble.link, float(ensemble.tree_scale[0])
    (5, 'sigmoid', 0.1)
    >>> bool(np.array_equal(ensemble.predict_proba(X), model.predict_proba(X)))
    True
    """
    name, kind = _kind_of(model)
    _check_fitted(model, name)
    _check_single_output(model, name)
    if kind == "tree":
        return _import_tree(model, name)
    if kind == "forest":
        return _import_forest(model, name)
    if kind == "gradient_boosting":
        from ._sklearn_gradient_boosting import import_gradient_boosting

        return import_gradient_boosting(model, name, X=X, y=y, sample_weight=sample_weight)
    from ._sklearn_hist_gradient_boosting import import_hist_gradient_boosting

    return import_hist_gradient_boosting(model, name, X=X, y=y, sample_weight=sample_weight)


def to_sklearn(ensemble: Ensemble):
    """Export an ensemble whose source library is scikit-learn as a fitted
    estimator of the source class that predicts exactly like ``ensemble``.

    The ensemble is left unchanged; so is the estimator it was imported from.

    Parameters
    ----------
    ensemble : Ensemble
        Imported with :func:`from_sklearn` (possibly edited since), or built
        for a tree or forest class (see the module docstring).

    Returns
    -------
    estimator
        A fitted estimator of ``ensemble.source.estimator``'s class.

    Raises
    ------
    UnsupportedModelError
        ``ensemble`` is not an Ensemble, or names a class this module cannot build.
    ConversionError
        The ensemble comes from another library or holds something the
        estimator cannot express (categorical splits in a tree, ...).

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> ensemble = btt.from_sklearn(model)
    >>> smaller = btt.collapse(ensemble, {0: [1]})  # node 1 (the root's left child) becomes a leaf
    >>> exported = btt.to_sklearn(smaller)
    >>> model.tree_.node_count > exported.tree_.node_count
    True
    >>> bool(np.array_equal(exported.predict_proba(X), smaller.predict_proba(X)))
    True
    """
    if not isinstance(ensemble, Ensemble):
        raise UnsupportedModelError(
            f"to_sklearn expects an Ensemble (see btt.from_sklearn), got {type(ensemble).__name__}"
        )
    source = ensemble.source
    if source.library != "sklearn":
        raise ConversionError(
            f"this ensemble comes from {source.library!r}, not scikit-learn; export it with btt.to_model(ensemble)"
        )
    table = _sklearn_classes()
    if source.estimator not in table:
        raise UnsupportedModelError(
            f"cannot export a scikit-learn {source.estimator!r}; "
            f"supported estimators: {', '.join(SUPPORTED_ESTIMATORS)}"
        )
    cls, kind = table[source.estimator]
    payload = sklearn_payload(ensemble)
    if kind in ("gradient_boosting", "hist_gradient_boosting"):
        if payload.template is None:
            raise ConversionError(
                f"a {source.estimator} can only be exported from an ensemble imported with from_sklearn "
                "(its payload lacks the fitted estimator's settings)"
            )
        if kind == "gradient_boosting":
            from ._sklearn_gradient_boosting import export_gradient_boosting

            return export_gradient_boosting(ensemble)
        from ._sklearn_hist_gradient_boosting import export_hist_gradient_boosting

        return export_hist_gradient_boosting(ensemble)
    classifier = cls.__name__.endswith("Classifier")
    _check_tree_ensemble(ensemble, source.estimator, classifier, forest=kind == "forest")
    if kind == "tree":
        return _export_tree(ensemble, cls, classifier, payload)
    return _export_forest(ensemble, cls, classifier, payload)


def _check_tree_ensemble(ensemble, name, classifier, *, forest):
    task = "classification" if classifier else "regression"
    problems = []
    if ensemble.task != task:
        problems.append(f"task is {ensemble.task!r}, a {name} needs {task!r}")
    if ensemble.link != "identity":
        problems.append(f"link is {ensemble.link!r}, expected 'identity' (trees output fractions or means)")
    if np.any(ensemble.tree_scale != 1.0) or np.any(ensemble.base_score != 0.0) or np.any(ensemble.tree_output != 0):
        problems.append("tree_scale must be 1, base_score 0 and tree_output 0")
    if ensemble.split_rule != "le":
        problems.append("split_rule must be 'le' (scikit-learn sends x <= threshold left)")
    if forest and ensemble.aggregation != "mean":
        problems.append("a forest averages its trees: aggregation must be 'mean'")
    if not forest and ensemble.n_trees != 1:
        problems.append(f"a {name} holds one tree, the ensemble has {ensemble.n_trees}")
    if ensemble.accumulate_float32:
        problems.append("accumulate_float32 must be False")
    if ensemble.label_rule != "proba":
        problems.append("label_rule must be 'proba' (scikit-learn's trees and forests argmax predict_proba)")
    if classifier and ensemble.n_outputs != len(ensemble.classes_):
        problems.append(
            f"a classifier needs one value column per class ({len(ensemble.classes_)}), got {ensemble.n_outputs}"
        )
    if problems:
        raise ConversionError(f"cannot export this ensemble as a scikit-learn {name}: " + "; ".join(problems))
    if ensemble.input_dtype != "float32":
        warnings.warn(
            f"this ensemble compares float64 inputs, but a scikit-learn {name} casts X to float32 before comparing; "
            "rows within float32 rounding of a threshold may be routed differently by the exported model",
            UserWarning,
            stacklevel=3,
        )


def _new_estimator(cls, payload):
    params = dict(payload.params or {})
    accepted = cls().get_params(deep=False)
    return cls(**{key: value for key, value in params.items() if key in accepted})


def _set_fitted(estimator, ensemble, classifier, *, classes, is_tree):
    """The fitted attributes scikit-learn's fit would set (besides the trees)."""
    estimator.n_features_in_ = ensemble.n_features_in_
    estimator.n_outputs_ = 1
    if classifier:
        estimator.classes_ = classes
        estimator.n_classes_ = len(classes)
    if is_tree:
        estimator.max_features_ = resolve_max_features(estimator.max_features, ensemble.n_features_in_)


def _export_tree(ensemble, cls, classifier, payload):
    classes = None if not classifier else np.array(ensemble.classes_, copy=True)
    template = payload.template
    criterion = getattr(template, "criterion", None) or dict(payload.params or {}).get("criterion")
    sk_tree = tree_to_sklearn(
        ensemble.trees[0], ensemble.n_features_in_, len(classes) if classifier else None, criterion=criterion
    )
    if template is not None:
        estimator = copy.deepcopy(template)
    else:
        estimator = _new_estimator(cls, payload)
        _set_fitted(estimator, ensemble, classifier, classes=classes, is_tree=True)
        if ensemble.feature_names_in_ is not None:
            estimator.feature_names_in_ = np.array(ensemble.feature_names_in_, dtype=object)
    estimator.tree_ = sk_tree
    return estimator


def _export_forest(ensemble, cls, classifier, payload):
    n_classes = len(ensemble.classes_) if classifier else None
    template = payload.template
    random_states = payload.random_states
    if random_states is not None and len(random_states) != ensemble.n_trees:
        random_states = None  # trees were added or removed: the stored seeds no longer match
    if template is not None:
        forest = copy.deepcopy(template)
        tree_template = copy.deepcopy(payload.tree_template)

        def new_tree():
            # shallow copies of one private deep copy: the trees share only
            # read-only fitted attributes (classes_), which they hold equal anyway
            return copy.copy(tree_template)
    else:
        forest = _new_estimator(cls, payload)
        forest._validate_estimator()  # sets estimator_, the prototype of every tree
        encoded = np.arange(n_classes, dtype=np.float64) if classifier else None  # trees see encoded labels

        def new_tree():
            estimator = forest._make_estimator(append=False)
            _set_fitted(estimator, ensemble, classifier, classes=encoded, is_tree=True)
            return estimator

        _set_fitted(
            forest,
            ensemble,
            classifier,
            classes=np.array(ensemble.classes_, copy=True) if classifier else None,
            is_tree=False,
        )
        if ensemble.feature_names_in_ is not None:
            forest.feature_names_in_ = np.array(ensemble.feature_names_in_, dtype=object)
    estimators = []
    tree_depths = max_depths(ensemble.trees)
    for index, tree in enumerate(ensemble.trees):
        estimator = new_tree()
        if random_states is not None:
            estimator.random_state = copy.deepcopy(random_states[index])
        estimator.tree_ = tree_to_sklearn(
            tree,
            ensemble.n_features_in_,
            n_classes,
            index=index,
            criterion=getattr(estimator, "criterion", None),
            max_depth=tree_depths[index],
        )
        estimators.append(estimator)
    forest.estimators_ = estimators
    if hasattr(forest, "n_estimators") and template is None:
        forest.n_estimators = len(estimators)
    return forest


def forest_in_bag(ensemble: Ensemble, n_rows: int, labels=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The ways an imported, bootstrapped scikit-learn forest may have drawn
    and weighted its ``n_rows`` training rows (``labels``: their classes, in
    their order; None for a regressor): ``(counts, weights)`` pairs
    (n_trees, n_rows), how many times each tree drew each row (uint16) and
    the weight the row carried into that tree (float64, or the counts
    themselves where the draw alone weighs the rows), redrawn from the seeds
    the forest kept. Nothing when the ensemble is not such a forest.

    One pair without ``class_weight``; with it, one per way scikit-learn has
    read it: "balanced_subsample" weighs each tree's draw by the class counts
    of that draw; "balanced" and a dict weigh the rows, which scikit-learn
    1.9 draws with probabilities proportional to those weights, and earlier
    versions draw uniformly and multiply. The draws are only right for the
    rows the forest was fitted on, in their order, without sample weights:
    callers keep the pair that reproduces the trees' recorded covers
    (``weighted_n_node_samples``). A generator: later pairs are made only
    when asked for."""
    payload = sklearn_payload(ensemble)
    template, seeds = payload.template, payload.random_states
    if (
        payload.kind != "forest"
        or template is None
        or seeds is None
        or len(seeds) != ensemble.n_trees
        or not getattr(template, "bootstrap", False)
    ):
        return
    max_samples = getattr(template, "max_samples", None)
    if max_samples is None:
        n_draws = n_rows
    elif isinstance(max_samples, (int, np.integer)):
        n_draws = int(max_samples)
    else:
        n_draws = max(int(max_samples * n_rows), 1)
    from sklearn.utils import check_random_state
    from sklearn.utils.class_weight import compute_sample_weight

    def draws(probability=None):
        """Each tree's drawn rows, as scikit-learn draws them."""
        for seed in seeds:
            generator = check_random_state(copy.deepcopy(seed))
            if probability is None:
                yield generator.randint(0, n_rows, n_draws)
            else:
                yield generator.choice(n_rows, n_draws, replace=True, p=probability)

    def counts_of(drawn):
        counts = np.empty((len(seeds), n_rows), dtype=np.uint16)  # a row is drawn a few times at most
        for tree, rows in enumerate(drawn):
            counts[tree] = np.bincount(rows, minlength=n_rows)
        return counts

    class_weight = getattr(template, "class_weight", None)
    if class_weight is None or labels is None:
        counts = counts_of(draws())
        yield counts, counts
    elif class_weight == "balanced_subsample":
        uniform = list(draws())
        counts = counts_of(uniform)
        yield counts, counts * np.stack([compute_sample_weight("balanced", labels, indices=rows) for rows in uniform])
    else:
        row_weight = compute_sample_weight(class_weight, labels)
        counts = counts_of(draws(row_weight / np.sum(row_weight)))
        yield counts, counts  # scikit-learn >= 1.9: the weights drew the rows
        counts = counts_of(draws())
        yield counts, counts * row_weight  # before: drawn uniformly, then weighted


def training_objective(ensemble: Ensemble) -> tuple:
    """``(name, family)``: a boosting model's ``loss`` or a tree's or forest's
    ``criterion`` (``Adapter.objective``)."""
    payload = sklearn_payload(ensemble)
    settings = dict(payload.params or {})  # ensembles built without a scikit-learn object
    for key in ("loss", "criterion"):
        name = getattr(payload.template, key, settings.get(key))
        if isinstance(name, str):
            return name, "quantile" if name == "quantile" else ensemble.task
    return "", ensemble.task


def monotone_method(ensemble: Ensemble) -> str | None:
    """ "basic" when the estimator's ``monotonic_cst`` holds a non-zero
    constraint (scikit-learn bounds each side's subtree by the middle of a
    split's outputs), else None (``Adapter.monotone_method``)."""
    payload = sklearn_payload(ensemble)
    constraints = getattr(payload.template, "monotonic_cst", (payload.params or {}).get("monotonic_cst"))
    if isinstance(constraints, dict):
        constraints = list(constraints.values())
    return "basic" if constraints is not None and np.any(np.asarray(constraints) != 0) else None
