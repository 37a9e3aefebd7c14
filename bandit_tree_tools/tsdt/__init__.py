"""TSDT and Fast-TSDT optimal online trees, an exact solver for small
categorical problems, discretisation of numeric features, and comparisons."""

from ._categorical_tree import CategoricalTree
from ._exact import OptimalCategoricalTree, optimal_categorical_tree
from ._search import SearchTrace, TSDTClassifier

__all__ = ["CategoricalTree", "OptimalCategoricalTree", "SearchTrace", "TSDTClassifier", "optimal_categorical_tree"]
