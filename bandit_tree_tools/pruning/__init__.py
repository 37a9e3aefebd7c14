"""Pruning of imported tree models, in two halves over shared ground.

- :func:`prune` (``_engine/``, a private subpackage with its own map): the
  smallest model within a tolerance, from collapses, tree removals and
  re-fitted leaves chosen by a bandit; returns a :class:`PrunePathResult`.
- The paper's bandit pruning (``_bandit.py``, on the incremental evaluator of
  ``_evaluator.py``) and the cost-complexity and reduced-error baselines
  (``_ccp.py``, ``_rep.py``), sharing ``_common.py``; they return a
  :class:`PruneResult`.
- Below both: the validated inputs (``_inputs.py``: targets, the imported
  model), the metrics every result reports (``_metrics.py``), their kernels
  (``_kernels.py``) and the base result (``_result.py``).
"""

from ._bandit import BanditRound, bandit_prune
from ._ccp import cost_complexity_path, cost_complexity_prune
from ._engine import PrunePathResult, prune
from ._metrics import model_metrics
from ._rep import reduced_error_prune
from ._result import PruneResult

__all__ = [
    "BanditRound",
    "PrunePathResult",
    "PruneResult",
    "bandit_prune",
    "cost_complexity_path",
    "cost_complexity_prune",
    "model_metrics",
    "prune",
    "reduced_error_prune",
]
