"""MABSplit: node splitting as a multi-armed bandit (Tiwari et al. 2022,
"MABSplit: Faster Forest Training Using Multi-Armed Bandits", NeurIPS;
chapter 3 and its Algorithm 3 in M. Tiwari's thesis "Accelerating Machine
Learning Algorithms with Adaptive Sampling").

- ``MABSplitTreeClassifier``, ``MABSplitTreeRegressor``,
  ``MABSplitForestClassifier``, ``MABSplitForestRegressor``: estimators with
  scikit-learn's API whose ``ensemble_`` is in the common format.
- ``find_split``: the split of one node (bandit or exact), for inspection.
- ``resplit``: re-learn the splits of chosen nodes of an imported tree or
  random forest on new data and regrow the subtrees below them.
"""

from ._estimators import (
    MABSplitForestClassifier,
    MABSplitForestRegressor,
    MABSplitTreeClassifier,
    MABSplitTreeRegressor,
)
from ._resplit import ResplitResult, resplit
from ._splitter import NodeSplit, find_split

__all__ = [
    "MABSplitForestClassifier",
    "MABSplitForestRegressor",
    "MABSplitTreeClassifier",
    "MABSplitTreeRegressor",
    "NodeSplit",
    "ResplitResult",
    "find_split",
    "resplit",
]
