"""Pruning of imported tree models: ``prune`` (the smallest model within a
tolerance: collapses, tree removals and re-fitted leaves, chosen by a bandit),
bandit pruning (the paper's method, for trees, forests and boosted
ensembles), and the cost-complexity and reduced-error baselines, all
returning a :class:`PruneResult`."""

from ._bandit import BanditRound, bandit_prune
from ._compress import prune
from ._ccp import cost_complexity_path, cost_complexity_prune
from ._rep import reduced_error_prune
from ._result import PruneResult, model_metrics

__all__ = [
    "BanditRound",
    "PruneResult",
    "bandit_prune",
    "cost_complexity_path",
    "cost_complexity_prune",
    "model_metrics",
    "prune",
    "reduced_error_prune",
]
