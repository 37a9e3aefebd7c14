"""Forest fitting under joblib's dask backend gives the trees of the default backend."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from bandit_tree_tools.mabsplit import MABSplitForestClassifier

distributed = pytest.importorskip("distributed")


def test_dask_backend_grows_the_same_trees_as_the_default_backend():
    import joblib

    X, y = make_classification(600, 6, n_informative=3, random_state=0)
    params = dict(n_estimators=4, max_depth=5, batch_size=100, random_state=11, n_jobs=2)
    local = MABSplitForestClassifier(**params).fit(X, y)
    # An in-process worker reached over TCP: tasks and results are serialised
    # as for a remote worker, without paying for a new process importing numba.
    with (
        distributed.LocalCluster(
            host="127.0.0.1", n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with distributed.get_task_stream(client) as stream, joblib.parallel_config(backend="dask"):
            remote = MABSplitForestClassifier(**params).fit(X, y)
    assert len(stream.data) > 0  # the trees really were grown on the cluster
    assert remote.n_insertions_ == local.n_insertions_
    for a, b in zip(local.ensemble_.trees, remote.ensemble_.trees):
        for name in ("children_left", "feature", "threshold", "value"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(remote.predict_proba(X), local.predict_proba(X))
