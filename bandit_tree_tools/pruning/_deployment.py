"""What a pruned model costs where it is deployed: the size of its native
file and the native library's prediction time, beside the unpruned model's
(``PruneResult.deployment``).

Both models are exported by the same exporter (``to_model``), so the ratios
measure what pruning removed and nothing else; the unpruned export predicts
exactly like the user's model and writes a file of its size (within a few
bytes of metadata). Each library's file and predictor are its adapter's
(``Adapter.deployed``): scikit-learn's ``joblib.dump`` and ``predict_proba``
(``predict`` for regressors), LightGBM's model text and ``Booster.predict``,
XGBoost's UBJSON and ``Booster.inplace_predict``. The two models are timed
in turns, repeat by repeat, so that a machine busier in one moment than the
next slows both alike.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import pandas as pd

from .._validation import check_random_state
from ..exceptions import DataError

__all__ = ["COLUMNS", "ROWS_PER_REPEAT", "deployment_table"]

COLUMNS = ("leaves", "trees", "file_bytes", "batch_seconds", "row_seconds")
# one-row calls timed together in each repeat: one call of a fast predictor (some microseconds)
# is too short to time alone, and a timed run of several calls averages the rows' paths
ROWS_PER_REPEAT = 20


def _native_rows(X, checked: np.ndarray):
    """``X`` in the form the native predictors read: a pandas frame stays one
    (names and categories), a sparse matrix becomes CSR (row slicing), a numpy
    array stays as it is; anything else (lists) becomes the checked array."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        return X
    if hasattr(X, "tocsr"):
        return X.tocsr()
    if isinstance(X, np.ndarray):
        return X
    return checked


def _take(X, rows: np.ndarray):
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def _file_bytes(adapter, model, folder: str, name: str) -> int:
    path = adapter.save(model, os.path.join(folder, name + adapter.deployed_suffix))
    return os.path.getsize(path)


def _median_times(predicts, batch, rows, n_repeats: int) -> tuple:
    """Per predictor: the median over ``n_repeats`` of the seconds one call on
    ``batch`` takes, and of the seconds per call of one-row calls on ``rows``.
    The predictors take turns within each repeat; one untimed call of each
    first (a first call allocates and loads what later calls reuse)."""
    for predict in predicts:
        predict(batch)
        predict(rows[0])
    batch_times = [[] for _ in predicts]
    row_times = [[] for _ in predicts]
    for _ in range(n_repeats):
        for k, predict in enumerate(predicts):
            started = time.perf_counter()
            predict(batch)
            batch_times[k].append(time.perf_counter() - started)
            started = time.perf_counter()
            for row in rows:
                predict(row)
            row_times[k].append((time.perf_counter() - started) / len(rows))
    return [float(np.median(times)) for times in batch_times], [float(np.median(times)) for times in row_times]


def deployment_table(original, pruned, X, *, batch_rows: int, n_repeats: int, random_state) -> pd.DataFrame:
    """The table of ``PruneResult.deployment`` for the ensembles ``original``
    and ``pruned`` (parameters validated by the caller; ``X`` is not)."""
    from ..interop import adapter_for, to_model

    adapter = adapter_for(original)  # an ensemble of a library without an exporter: UnsupportedModelError
    checked = original.check_X(X)  # the model's columns, or DataError saying which
    if checked.shape[0] == 0:
        raise DataError("X has no rows; deployment needs at least one row to time the predictions")
    native_X = _native_rows(X, checked)
    random = check_random_state(random_state)
    # a batch of batch_rows rows: a random sample of X, or X repeated (in a random order) when shorter
    batch_index = np.resize(random.permutation(checked.shape[0]), batch_rows)
    batch = _take(native_X, batch_index)
    rows = [_take(native_X, batch_index[k : k + 1]) for k in range(min(ROWS_PER_REPEAT, batch_rows))]
    deployed = [adapter.deployed(to_model(ensemble)) for ensemble in (original, pruned)]
    with tempfile.TemporaryDirectory(prefix="btt-deployment-") as folder:
        sizes = [
            _file_bytes(adapter, model, folder, name) for (model, _, _), name in zip(deployed, ("before", "after"))
        ]
    batch_seconds, row_seconds = _median_times([predict for _, _, predict in deployed], batch, rows, n_repeats)
    table = pd.DataFrame(
        {
            "leaves": [original.n_leaves, pruned.n_leaves],
            "trees": [original.n_trees, pruned.n_trees],
            "file_bytes": sizes,
            "batch_seconds": batch_seconds,
            "row_seconds": row_seconds,
        },
        index=["before", "after"],
        dtype=np.float64,
    )
    table.loc["ratio"] = table.loc["before"] / table.loc["after"]
    table.attrs.update(
        file=f"{adapter.deployed_file}, {adapter.deployed_suffix}",
        predictor=deployed[0][1],
        batch_rows=int(batch_rows),
        rows_per_repeat=len(rows),
        n_repeats=int(n_repeats),
    )
    return table
