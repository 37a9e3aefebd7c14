"""A wide sparse X is routed a block of rows at a time, never made dense at
once (scikit-learn predicts sparse input in place)."""

import tracemalloc

import numpy as np
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.tree import _ensemble


def test_wide_sparse_rows_predict_in_blocks_like_scikit_learn(monkeypatch):
    rng = np.random.default_rng(8)
    n_rows, n_columns = 300, 60_000
    X = sp.random(n_rows, n_columns, density=2e-4, format="csr", random_state=8, dtype=np.float64)
    X = X + sp.csr_matrix((rng.normal(size=n_rows), (np.arange(n_rows), rng.integers(0, 50, n_rows))), shape=X.shape)
    y = (np.asarray(X[:, :50].sum(axis=1)).ravel() > 0).astype(int)
    model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    monkeypatch.setattr(_ensemble, "SPARSE_BLOCK_BYTES", 2**20)  # 1 MB: the dense copy is 72 MB
    for method in (ensemble.predict_proba, ensemble.apply, ensemble.decision_path):
        method(X[:3])  # compile the kernels before measuring (numba's compiler allocates too)
    tracemalloc.start()
    try:
        proba = ensemble.predict_proba(X)
        leaves = ensemble.apply(X)
        indicator, _ = ensemble.decision_path(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MB"
    np.testing.assert_array_equal(proba, model.predict_proba(X))
    np.testing.assert_array_equal(leaves[:, 0], model.apply(X))
    np.testing.assert_array_equal(indicator.toarray(), model.decision_path(X).toarray())
