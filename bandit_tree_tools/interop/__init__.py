"""Import models into the common format and export them back.

``from_model`` dispatches on the top-level package of the object's class
through ``IMPORTERS``; ``to_model`` on ``ensemble.source.library`` through
``EXPORTERS``. Each library's module registers nothing at import time, so
the tables name functions as "module:function" strings and load lazily.
"""

from importlib import import_module

from ..exceptions import UnsupportedModelError
from ..tree import Ensemble

# top-level package of the model's class -> importer
IMPORTERS = {
    "sklearn": "bandit_tree_tools.interop.sklearn:from_sklearn",
    "lightgbm": "bandit_tree_tools.interop.lightgbm:from_lightgbm",
    "xgboost": "bandit_tree_tools.interop.xgboost:from_xgboost",
}

# Ensemble.source.library -> exporter
EXPORTERS = {
    "sklearn": "bandit_tree_tools.interop.sklearn:to_sklearn",
    "lightgbm": "bandit_tree_tools.interop.lightgbm:to_lightgbm",
    "xgboost": "bandit_tree_tools.interop.xgboost:to_xgboost",
}

SUPPORTED = (
    "scikit-learn: DecisionTree/ExtraTree Classifier/Regressor, RandomForest*, ExtraTrees*, "
    "GradientBoosting*, HistGradientBoosting*; LightGBM: Booster, LGBMClassifier, LGBMRegressor; "
    "XGBoost: Booster, XGBClassifier, XGBRegressor; bandit_tree_tools estimators (ensemble_)"
)


def _load(spec: str):
    module, function = spec.split(":")
    return getattr(import_module(module), function)


def from_model(model, **kwargs) -> Ensemble:
    """Import a fitted tree model into the common format (losslessly).

    The model is never modified. Passing an :class:`Ensemble` returns it
    unchanged; objects with an ``ensemble_`` attribute (this library's
    estimators) return that.
    """
    if isinstance(model, Ensemble):
        return model
    if hasattr(type(model), "ensemble_") or "ensemble_" in getattr(model, "__dict__", {}):
        return model.ensemble_
    # the first class in the hierarchy from a supported library, so users'
    # subclasses of library estimators import too
    packages = (cls.__module__.split(".")[0] for cls in type(model).__mro__)
    spec = next((IMPORTERS[package] for package in packages if package in IMPORTERS), None)
    if spec is None:
        raise UnsupportedModelError(
            f"cannot import a {type(model).__module__}.{type(model).__name__}; supported models: {SUPPORTED}"
        )
    return _load(spec)(model, **kwargs)


def to_model(ensemble):
    """Export an ensemble back into its source library as a native object
    (same class as the imported one) that predicts like ``ensemble``."""
    if not isinstance(ensemble, Ensemble):
        ensemble = from_model(ensemble)
    spec = EXPORTERS.get(ensemble.source.library)
    if spec is None:
        raise UnsupportedModelError(
            f"ensembles from {ensemble.source.library!r} cannot be exported; "
            f"exportable sources: {sorted(EXPORTERS)}"
        )
    return _load(spec)(ensemble)


__all__ = ["EXPORTERS", "IMPORTERS", "from_model", "to_model"]
