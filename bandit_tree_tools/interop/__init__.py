"""Import models into the common format and export them back.

Everything the project knows about a library lives in its adapter
(:mod:`._adapters`): import, export, native files and native prediction.
``from_model`` and ``to_model`` dispatch through :func:`adapter_for`; the
command line, the panels and the demo save and load native files through
:func:`adapter_for` / :func:`adapter_for_path`. Libraries are imported lazily.
"""

from ..exceptions import UnsupportedModelError
from ..tree import Ensemble
from ._adapters import ADAPTERS, SUPPORTED, Adapter, adapter_for, adapter_for_path, trees_per_iteration  # noqa: F401 (SUPPORTED: kept)

# Kept for code that read these tables: Ensemble.source.library -> "module:function"
IMPORTERS = {
    name: f"bandit_tree_tools.interop.{adapter._module}:from_{adapter._module}" for name, adapter in ADAPTERS.items()
}
EXPORTERS = {
    name: f"bandit_tree_tools.interop.{adapter._module}:to_{adapter._module}" for name, adapter in ADAPTERS.items()
}


def from_model(model, **kwargs) -> Ensemble:
    """Import a fitted tree model into the common format (losslessly).

    The library is found from the model's class (subclasses of supported
    classes work too) and its importer (:func:`from_sklearn`,
    :func:`from_lightgbm` or :func:`from_xgboost`) does the work. The model
    is never modified.

    Parameters
    ----------
    model : fitted estimator, Booster, Ensemble or bandit_tree_tools estimator
        A scikit-learn, LightGBM or XGBoost tree model. An :class:`Ensemble`
        is returned unchanged; an object with an ``ensemble_`` attribute
        (this library's estimators) returns that.
    **kwargs
        Passed to the library's importer (for example ``X=, y=`` for
        GradientBoosting, ``learning_rate=`` for XGBoost).

    Returns
    -------
    Ensemble
        Predicts exactly like ``model`` (see each importer's exactness notes).

    Raises
    ------
    UnsupportedModelError
        The object is not a model any adapter imports.
    NotFittedError
        The model has not been fitted.
    MissingDependencyError
        The model's library is not installed.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> ensemble = btt.from_model(model)
    >>> ensemble.n_trees, ensemble.source.library
    (5, 'sklearn')
    >>> bool(np.array_equal(ensemble.predict_proba(X), model.predict_proba(X)))
    True
    """
    if isinstance(model, Ensemble):
        return model
    if hasattr(type(model), "ensemble_") or "ensemble_" in getattr(model, "__dict__", {}):
        return model.ensemble_
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        # adapter_for reads a string as a library name; a model's file is another call
        raise UnsupportedModelError(
            f"from_model takes a fitted model object, got {model!r}; to read a model file use "
            "bandit_tree_tools.interop.adapter_for_path(path).load(path) first"
        )
    return adapter_for(model).from_native(model, **kwargs)


def to_model(ensemble):
    """Export an ensemble back into its source library.

    Parameters
    ----------
    ensemble : Ensemble
        Imported with :func:`from_model` (possibly edited since, for example
        by :func:`~bandit_tree_tools.collapse` or pruning). A native model is
        imported first.

    Returns
    -------
    object
        A native object of the imported class (estimator or Booster) that
        predicts like ``ensemble``; the ensemble is left unchanged.

    Raises
    ------
    UnsupportedModelError
        The ensemble's source library has no exporter.
    ConversionError
        The ensemble holds something the library cannot express.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> smaller = btt.collapse(btt.from_model(model), {0: [0]})  # tree 0 becomes one leaf
    >>> exported = btt.to_model(smaller)
    >>> type(exported).__name__, exported.estimators_[0].tree_.node_count
    ('RandomForestClassifier', 1)
    >>> bool(np.array_equal(exported.predict_proba(X), smaller.predict_proba(X)))
    True
    """
    if not isinstance(ensemble, Ensemble):
        ensemble = from_model(ensemble)
    return adapter_for(ensemble).to_native(ensemble)


__all__ = [
    "ADAPTERS",
    "Adapter",
    "EXPORTERS",
    "IMPORTERS",
    "adapter_for",
    "adapter_for_path",
    "from_model",
    "to_model",
    "trees_per_iteration",
]
