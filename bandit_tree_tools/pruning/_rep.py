"""Reduced-error pruning (Quinlan 1987) on validation data, for any imported
tree model.

Nodes are visited bottom-up (children before parents, tree after tree); a
node becomes a leaf when that does not lower the validation score of the
whole model as pruned so far. For a single classification tree scored by
accuracy this is the classic rule "prune when the leaf makes no more errors
on the validation rows reaching it than the subtree". The collapsed value
is the node's stored value (the model's own, as ``collapse`` uses).
"""

import time

import numpy as np
import pandas as pd

from .._validation import Options, validate_params
from ._common import finish, prepare
from ._metrics import SCORINGS, check_weights

# what the parameters of reduced_error_prune accept (_validation.check_params)
CONSTRAINTS = {"scoring": [Options(SCORINGS)], "weights": ["array-like"]}


@validate_params(CONSTRAINTS, data=("model", "X_val", "y_val"))
def reduced_error_prune(model, X_val, y_val, *, scoring: str = "accuracy", weights=(1.0, 2.5, 1.0)):
    """Classic reduced-error pruning.

    Parameters
    ----------
    model : Ensemble or fitted model (never modified)
    X_val, y_val : validation data
    scoring : {"accuracy", "score"}
        What must not get worse: accuracy (the classic "error"), or the
        paper's score with ``weights``. Regression always uses the MSE.
    weights : (accuracy, F1, log-loss) weights of the reported score.

    Nodes whose collapsed value the model does not store are skipped.

    Returns
    -------
    PruneResult
        ``method="reduced_error"``; ``path`` has the score after each prune.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> result = btt.reduced_error_prune(model, X[200:], y[200:])
    >>> result.original.n_leaves, result.ensemble.n_leaves
    (10, 5)
    >>> bool(result.metrics.loc["after", "accuracy"] >= result.metrics.loc["before", "accuracy"])
    True
    """
    started = time.perf_counter()
    weights = check_weights(weights)
    select_weights = (1.0, 0.0, 0.0) if scoring == "accuracy" else weights
    ensemble, X, target, evaluator = prepare(model, X_val, y_val, select_weights)
    everything = evaluator.full_mask()
    base = evaluator.stats(evaluator.all_rows)
    current = evaluator.score_stats(base)
    scores, n_pruned = [current], [0]
    for tree_index, tree in enumerate(ensemble.trees):
        internal = np.flatnonzero((tree.children_left != -1) & (tree.has_leaf_value == 1))
        for node in internal[::-1]:  # larger ids first: children before parents
            pulled = evaluator.pulled_stats(tree_index, int(node), base, everything)
            score = evaluator.score_stats(pulled)
            if score >= current - 1e-12:  # no worse, up to round-off
                evaluator.commit(tree_index, int(node))
                base = evaluator.stats(evaluator.all_rows)
                current = evaluator.score_stats(base)
                scores.append(current)
                n_pruned.append(n_pruned[-1] + 1)
    path = pd.DataFrame({"n_pruned": n_pruned, "score": scores})
    return finish(
        "reduced_error",
        ensemble,
        X,
        target,
        evaluator,
        weights,
        started,
        params=dict(scoring=scoring, weights=weights),
        path=path,
    )
