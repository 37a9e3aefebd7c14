"""Jupyter panels: anywidget views wrapped in standard ipywidgets controls.

The panels only display what the library computes (results, ensembles);
their browser side is the ES modules and CSS of ``bandit_tree_tools/_static``
(joined by ``_assets.py``, no build step). Needs the ``widgets`` extra:
``pip install 'bandit-tree-tools[widgets]'``.
"""

from ._comparison_panel import ComparisonPanel
from ._medoid_panel import MedoidGallery, MedoidPanel
from ._pruning_panel import PruningPanel
from ._reward_chart import RewardChart
from ._tree_view import TreeCanvas, TreeView

__all__ = ["ComparisonPanel", "MedoidGallery", "MedoidPanel", "PruningPanel", "RewardChart", "TreeCanvas", "TreeView"]
