"""Import models into the common format and export them back.

Everything the project knows about a library lives in its adapter
(:mod:`._adapters`): import, export, native files and native prediction.
``from_model`` and ``to_model`` dispatch through :func:`adapter_for`; the
command line, the panels and the demo save and load native files through
:func:`adapter_for` / :func:`adapter_for_path`. Libraries are imported lazily.
"""

from ..tree import Ensemble
from ._adapters import ADAPTERS, SUPPORTED, Adapter, adapter_for, adapter_for_path

# Kept for code that read these tables: Ensemble.source.library -> "module:function"
IMPORTERS = {name: f"bandit_tree_tools.interop.{adapter._module}:from_{adapter._module}" for name, adapter in ADAPTERS.items()}
EXPORTERS = {name: f"bandit_tree_tools.interop.{adapter._module}:to_{adapter._module}" for name, adapter in ADAPTERS.items()}


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
    return adapter_for(model).from_native(model, **kwargs)


def to_model(ensemble):
    """Export an ensemble back into its source library as a native object
    (same class as the imported one) that predicts like ``ensemble``."""
    if not isinstance(ensemble, Ensemble):
        ensemble = from_model(ensemble)
    return adapter_for(ensemble).to_native(ensemble)


__all__ = ["ADAPTERS", "Adapter", "EXPORTERS", "IMPORTERS", "adapter_for", "adapter_for_path", "from_model", "to_model"]
