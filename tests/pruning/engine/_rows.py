"""The rows of one walk of the search, for tests that drive ``_Search`` directly."""

import numpy as np

from bandit_tree_tools.pruning._engine import _search as engine_search


def walk_rows(ensemble, X_val, target, X_fit, fit_target, rng, soft=False) -> tuple:
    """(ranking rows, checking rows, may re-fit) of a walk ranked on ``X_fit``
    (``soft``: ``fit_target`` holds the model's own outputs) that every
    validation row checks, as ``prune`` makes them."""
    return (
        engine_search.ranking_rows(ensemble, X_fit, fit_target, rng, soft),
        engine_search._RowSet(ensemble, X_val, np.arange(X_val.shape[0]), target),
        True,
    )
