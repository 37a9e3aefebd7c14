"""The engine behind :func:`bandit_tree_tools.prune`: the smallest model the
user's tolerance allows.

Map
---
``_prune.py``
    The public function: validates the parameters and rows, builds the row
    sets, takes the walks and returns the chosen model.
``_search.py``
    One walk: the rows it works on (``_RowSet``), the candidates of a step,
    their costs (exact, or sampled by the bandit), the step and the path.
``_state.py``
    A point of a walk (which nodes are collapsed, which trees are gone, the
    leaf values and tree weights) and the ensemble it stands for.
``_kernels.py``
    The numba kernels of the search: per-row losses, candidate costs,
    collapses, re-fitted leaves.
``_weights.py``
    The L1-penalised fit of the trees' weights (the re-weighted start).
``_metrics.py``
    The metrics ``prune`` measures, what "within the tolerance" means, paired
    standard errors and the smoothing of the path.
``_result.py``
    :class:`PrunePathResult` and :class:`Walk`: every walk kept, so that
    ``choose`` picks another point without rerunning anything.
``_demo.py``
    The demo's compression section.

What is shared with the paper's method and the baselines (targets, the
metrics every result reports, the base result) lives one level up, in
``pruning/_inputs.py``, ``pruning/_metrics.py`` and ``pruning/_result.py``.

The method
----------
The search walks a path of ever smaller models, from the imported one down,
and returns the smallest whose metric on the checking rows stays within
``tolerance`` of the unpruned model's. One step:

1. **Candidates.** Every internal node of every tree can become a leaf; the
   root of a tree of a summed (boosted) ensemble stands for removing the
   whole tree, its constant folded into the other trees' leaves; a tree of an
   averaged ensemble (random forest) can be dropped from the mean.
2. **Values.** A collapsed node of a boosted model takes the mean of the
   current leaf values below it, weighted by the covers the library recorded
   (hessian sums; hessians of the fitting rows where none are recorded): the
   constant closest to what the subtree outputs now. Averaged models keep
   their stored values (class fractions, means), so exported scikit-learn
   trees stay plain trees.
3. **Costs.** Each candidate's cost is the change of the model's own loss on
   the ranking rows if it alone were applied (smooth losses to second
   order), plus one spread of its per-row changes, per leaf removed. The
   spread discounts candidates whose few rows happen to agree: with thousands
   of candidates the plain sum picks exactly those.
4. **Bandit.** ``search="exact"`` reads every ranking row for every cost;
   ``search="bandit"`` estimates the costs from a growing sample of the rows
   with confidence intervals, and stops sampling as soon as the chosen set's
   cost is known well enough (best-arm identification over removals, the way
   MABSplit identifies splits). When the rows run out first, the sums over
   its samples and the rows left are the exact costs: both searches sum the
   same batches of rows, so with a full budget (``confidence=inf``) they
   walk the same path, bit for bit, and read every row once. It samples
   only where the rows are many beside the candidates (each batch passes
   over all of them): a boosted model's, not a fully grown forest's.
5. **Step.** The best-ranked candidates that do not overlap are applied until
   a tenth of the current leaves is gone; then, with training rows, every
   leaf of a boosted model is re-fitted by one damped backfitting pass of
   Newton steps, so what remains takes over the removed parts' work.
   Re-fitting wins where the model has not memorised its training rows and
   loses where it has, so ``refit="auto"`` walks both ways.
6. **Re-weighted start.** Removing trees one at a time never raises the
   weight of the trees that stay. For boosted binary classifiers further
   walks start from an L1-penalised fit of every tree's weight (``_weights``,
   the first level of LOP) and prune on from there. The fit runs on one
   core, so where a second is free it runs on a thread of its own while
   the walks before those walks run (``_prune._Starts``).
7. **Out of bag.** A bootstrapped scikit-learn forest's trees fit the rows
   they drew to the last row, so on those rows every node looks useful. When
   ``X_train`` are the forest's own training rows, the walk ranks each tree's
   removals on the rows it did not draw instead. A forest without such rows
   (grown on every training row, or given other rows) takes, in that walk's
   place, the walk on the validation rows' labels of step 9.
8. **Towards the model's own outputs.** On its training rows a boosted
   model's outputs are as sure as the labels it memorised. A further walk
   ranks and re-fits on perturbed copies of the training rows, towards the
   unpruned model's own outputs there: a step costs what it changes of the
   model's behaviour near its training rows, and the validation rows stay
   unseen until the check.
9. **Check.** The metric is measured on labels the choice has not seen: with
   ``X_train`` every validation row checks. Without it, a boosted model
   ranks (and re-fits) on its own outputs on perturbed copies of the
   validation rows, as step 8 does with the training rows: no label is
   spent on ranking, so every labelled validation row checks. A forest,
   whose leaves take no soft targets, ranks on the validation rows' labels,
   so they cannot check that walk; two walks, each ranked on one half of
   them and checked on the other, measure it instead: at each size, the
   mean of their changes from the unpruned model (cross-validation). The
   three walks run side by side on threads, one's kernels using the cores
   while another runs Python between its own; the walk waits for the
   halves' measurements of each of its sizes. Ranked
   on every row, the walk ranks better than on a half; measured by both
   halves, its standard error is that of every row, not of one half. A walk
   goes on past models outside the tolerance (a re-fitted model further down
   can be back within it) and ends after a few models far outside it (or,
   measured by the halves, where either of them ended). The chosen model
   is the smallest whose metric, averaged with its neighbours on the path and
   held ``margin`` standard errors of its paired difference inside, is within
   the tolerance: otherwise one lucky point at the edge would be chosen.
10. **Monotone constraints.** A model trained with them walks without
    re-fitted leaves or re-weighted trees, which could break its order; under
    LightGBM's "intermediate" and "advanced" methods only whole trees go.

The walks
---------
Steps 5-8 are walks, each from the unpruned model (or a re-weighted start) to
ever smaller models; every walk the model qualifies for is taken, and the
smallest model within the tolerance wins. Which walk reaches furthest
depends on the model and data in ways that cannot be told beforehand, so a
walk stays when some kind of model needs it; ``_prune._plan`` drops those
that do not apply to a model.

With training rows (``WALKS_WITH_TRAINING_ROWS``):

- ranked on their labels, leaves re-fitted and leaves kept: re-fitting lets
  what remains take over the removed parts' work where the model has not
  memorised those rows, and fits their noise where it has;
- the same from re-weighted trees (binary boosted models): many trees carry
  the same signal, and removal alone never raises the weight of those left;
- out of bag (a bootstrapped forest on its own rows), in place of the walk
  on every training row: its trees memorised the rows they drew; once by
  the log-loss of the class fractions and once by their squared error,
  which is bounded: under the log-loss the rows that every tree gets wrong
  (noisy labels) can outweigh all others and hold nodes that the squared
  error lets go;
- towards the model's outputs on perturbed training rows (boosted models):
  its behaviour near the rows it memorised, without their labels;
- towards its outputs on perturbed validation rows (boosted models): the
  rows it will meet, and no label spent;
- on the validation rows' labels, measured by walks on their halves (a
  forest without out-of-bag rows, or a single tree): every training row looks
  useful to trees that memorised it.

Without training rows (``WALKS_WITHOUT_TRAINING_ROWS``), a boosted model walks
towards its outputs on perturbed validation rows: from the model with its
leaves re-fitted (keeping the values pays where a re-fit would fit the labels'
noise, and the model's own outputs have none: the walk from the model that kept
them never reached a smaller model), and from re-weighted trees with its leaves
re-fitted and kept (kept, they reach the smallest model on some models). A
forest (or a single tree), whose leaves take no soft targets, walks once on the
validation rows' labels, measured by the walks on their halves. What each walk
and each constant bought on real data, and the walks and alternatives measured
and dropped: ``docs/expect/pruning.md`` and its notes page.
"""

from ._metrics import MARGIN, METRICS
from ._prune import prune
from ._result import PrunePathResult, Walk

__all__ = ["MARGIN", "METRICS", "PrunePathResult", "Walk", "prune"]
