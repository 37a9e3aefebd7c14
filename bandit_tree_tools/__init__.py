"""bandit_tree_tools: import, prune, re-split, compare and summarise trained
tree models with multi-armed bandits.

``import bandit_tree_tools as btt`` is cheap: every public name is imported
from its module on first use (see ``_PUBLIC``), so numba, LightGBM or
XGBoost load only when needed.
"""

from importlib import import_module

__version__ = "0.1.0"

# public name -> module that defines it
_PUBLIC = {
    # the common format
    "TreeArrays": "bandit_tree_tools.tree",
    "Ensemble": "bandit_tree_tools.tree",
    "collapse": "bandit_tree_tools.tree",
    "check_ensemble": "bandit_tree_tools.tree",
    "validate": "bandit_tree_tools.tree",
    "make_tree": "bandit_tree_tools.tree",
    "Source": "bandit_tree_tools.tree",
    # import / export
    "from_model": "bandit_tree_tools.interop",
    "to_model": "bandit_tree_tools.interop",
    "from_sklearn": "bandit_tree_tools.interop.sklearn",
    "to_sklearn": "bandit_tree_tools.interop.sklearn",
    "from_lightgbm": "bandit_tree_tools.interop.lightgbm",
    "to_lightgbm": "bandit_tree_tools.interop.lightgbm",
    "to_xgboost": "bandit_tree_tools.interop.xgboost",
    "from_xgboost": "bandit_tree_tools.interop.xgboost",
    # pruning
    "prune": "bandit_tree_tools.pruning",
    "bandit_prune": "bandit_tree_tools.pruning",
    "cost_complexity_prune": "bandit_tree_tools.pruning",
    "reduced_error_prune": "bandit_tree_tools.pruning",
    "cost_complexity_path": "bandit_tree_tools.pruning",
    "PruneResult": "bandit_tree_tools.pruning",
    # MABSplit
    "MABSplitTreeClassifier": "bandit_tree_tools.mabsplit",
    "MABSplitTreeRegressor": "bandit_tree_tools.mabsplit",
    "MABSplitForestClassifier": "bandit_tree_tools.mabsplit",
    "MABSplitForestRegressor": "bandit_tree_tools.mabsplit",
    "resplit": "bandit_tree_tools.mabsplit",
    "ResplitResult": "bandit_tree_tools.mabsplit",
    # TSDT
    "TSDTClassifier": "bandit_tree_tools.tsdt",
    "optimal_categorical_tree": "bandit_tree_tools.tsdt",
    "discretize": "bandit_tree_tools.tsdt",
    "compare_trees": "bandit_tree_tools.tsdt",
    # medoids
    "KMedoids": "bandit_tree_tools.medoids",
    "leaf_medoids": "bandit_tree_tools.medoids",
    "LeafMedoids": "bandit_tree_tools.medoids",
    # panels
    "TreeView": "bandit_tree_tools.widgets",
    "PruningPanel": "bandit_tree_tools.widgets",
    "MedoidPanel": "bandit_tree_tools.widgets",
    "ComparisonPanel": "bandit_tree_tools.widgets",
    # errors
    "BanditTreeToolsError": "bandit_tree_tools.exceptions",
    "UnsupportedModelError": "bandit_tree_tools.exceptions",
    "NotFittedError": "bandit_tree_tools.exceptions",
    "ConversionError": "bandit_tree_tools.exceptions",
    "InvalidTreeError": "bandit_tree_tools.exceptions",
    "NodeError": "bandit_tree_tools.exceptions",
    "DataError": "bandit_tree_tools.exceptions",
    "MissingDependencyError": "bandit_tree_tools.exceptions",
    "ParameterError": "bandit_tree_tools.exceptions",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    try:
        module = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'bandit_tree_tools' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
