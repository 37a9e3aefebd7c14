"""TSDT and Fast-TSDT optimal online trees, an exact solver for small
categorical problems, discretisation of numeric features, and comparisons."""

from ._categorical_tree import CategoricalTree
from ._compare import compare_trees
from ._discretize import Bins, discretize
from ._exact import OptimalCategoricalTree, optimal_categorical_tree
from ._search import SearchTrace, TSDTClassifier

__all__ = [
    "Bins",
    "CategoricalTree",
    "OptimalCategoricalTree",
    "SearchTrace",
    "TSDTClassifier",
    "compare_trees",
    "discretize",
    "optimal_categorical_tree",
]
