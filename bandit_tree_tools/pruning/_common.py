"""What the paper's bandit pruning and the two baselines share: their
inputs (the model imported, validation rows routed once by the evaluator)
and how their result is built."""

import numbers
import time

import numpy as np

from .._validation import resolve_n_rows
from ..exceptions import DataError
from ..tree import collapse
from ._evaluator import IncrementalEvaluator
from ._inputs import check_target, to_ensemble
from ._metrics import before_after, check_weights, metrics_of_raw
from ._result import PruneResult


def prepare(model, X, y, weights, *, name: str = "X_val"):
    """Ensemble, validated X, target and evaluator: X is validated here once
    and routed once (by the evaluator); pass the returned X on with
    ``check_input=False``."""
    ensemble = to_ensemble(model)
    X = ensemble.check_X(X, name=name)
    if X.shape[0] == 0:
        raise DataError(f"{name} has no rows; pruning needs validation data")
    target = check_target(ensemble, y, X.shape[0], name="y" + name[1:])
    evaluator = IncrementalEvaluator(ensemble, X, target, check_weights(weights), check_input=False)
    return ensemble, X, target, evaluator


def eval_rows(eval_size, n_rows: int, name: str = "eval_size") -> int:
    """Rows drawn each round out of ``n_rows``: the library's rule for a
    number of rows (``_validation.resolve_n_rows``: an int count, or a
    fraction in (0, 1] rounded to the nearest row, at least 1), also taking a
    whole float > 1 as a count (a form field or the CLI gives one). More rows
    than the validation set has is a DataError that says what to pass."""
    if isinstance(eval_size, float) and eval_size > 1 and eval_size.is_integer():
        eval_size = int(eval_size)
    if isinstance(eval_size, numbers.Integral) and not isinstance(eval_size, (bool, np.bool_)) and eval_size > n_rows:
        raise DataError(
            f"{name}={eval_size} rows are drawn each round, but the validation set has only {n_rows} rows; "
            f"pass more validation rows or a smaller {name} (e.g. a fraction such as 0.5)"
        )
    return resolve_n_rows(eval_size, n_rows, name)


def finish(method, ensemble, X, target, evaluator, weights, started, **parts) -> PruneResult:
    """Build the pruned ensemble from the evaluator's collapsed nodes and the result.

    The before/after metrics come from the rows the evaluator routed (``X``
    is not routed again): the unpruned model's raw scores it kept, and the
    pruned model's from each row's leaf in the rebuilt trees (the same sums
    as ``predict_raw``, so the same bits)."""
    pruned_nodes = evaluator.collapsed_nodes()
    pruned = collapse(ensemble, pruned_nodes) if pruned_nodes else ensemble
    after_raw = pruned._raw_from_leaves(evaluator.pruned_leaves(pruned_nodes))
    metrics = before_after(
        metrics_of_raw(ensemble, evaluator.initial_raw, target, weights),
        metrics_of_raw(pruned, after_raw, target, weights),
    )
    return PruneResult(
        method=method,
        ensemble=pruned,
        original=ensemble,
        pruned_nodes=pruned_nodes,
        metrics=metrics,
        elapsed=time.perf_counter() - started,
        **parts,
    )
