"""``btt.prune`` keeps a model's monotone constraints: it neither re-fits
the leaves nor re-weights the trees of such a model (either moved
LightGBM's raw score down along its increasing feature). Collapses into a
mean of the node's leaves and tree removals keep the order where every
split bounds its subtrees (XGBoost, scikit-learn, LightGBM's "basic");
under LightGBM's other methods only whole trees go."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import ParameterError
from bandit_tree_tools.interop import adapter_for
from tests.optional import lgb, xgb


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 4))
    y = (X[:, 0] + np.sin(3 * X[:, 1]) + 0.7 * rng.logistic(size=6000) > 0).astype(int)
    return X, y


def largest_fall(ensemble, feature=0, seed=1):
    """The largest fall of the raw score along ``feature`` over lines through random rows."""
    rows = np.random.default_rng(seed).normal(size=(300, 4))
    lines = np.repeat(rows, 50, axis=0)
    lines[:, feature] = np.tile(np.linspace(-3, 3, 50), len(rows))
    raw = ensemble.predict_raw(lines)[:, 0].reshape(len(rows), 50)
    return float(np.max(-np.diff(raw, axis=1)))


def models():
    return {
        "lightgbm": lgb.LGBMClassifier(
            n_estimators=100, num_leaves=31, monotone_constraints=[1, 0, 0, 0], verbose=-1, random_state=0
        ),
        "lightgbm advanced": lgb.LGBMClassifier(
            n_estimators=100,
            num_leaves=31,
            monotone_constraints=[1, 0, 0, 0],
            monotone_constraints_method="advanced",
            verbose=-1,
            random_state=0,
        ),
        "xgboost": xgb.XGBClassifier(n_estimators=100, max_depth=5, monotone_constraints=(1, 0, 0, 0), random_state=0),
        "hist gradient boosting": HistGradientBoostingClassifier(
            max_iter=60, monotonic_cst=[1, 0, 0, 0], random_state=0
        ),
    }


@pytest.mark.parametrize("name", list(models()))
def test_pruned_models_keep_their_monotone_constraints(data, name):
    X, y = data
    model = models()[name].fit(X[:3000], y[:3000])
    ensemble = btt.from_model(model)
    assert adapter_for(ensemble).monotone_method(ensemble) == ("advanced" if "advanced" in name else "basic")
    assert largest_fall(ensemble) == 0.0
    result = btt.prune(
        model,
        X[3000:4500],
        y[3000:4500],
        X_train=X[:3000],
        y_train=y[:3000],
        tolerance=0.01,
        random_state=0,
        progress=False,
    )
    assert result.ensemble.n_leaves < ensemble.n_leaves / 2
    if "advanced" in name:  # only whole trees go: every kept tree is as it was
        kept = [tree.n_nodes for tree in result.ensemble.trees]
        assert set(kept) <= {tree.n_nodes for tree in ensemble.trees} and len(kept) < ensemble.n_trees
    assert (result.params["refit"], result.params["reweighted"]) == (False, False)
    assert largest_fall(result.ensemble) == 0.0
    assert largest_fall(btt.from_model(result.to_model())) == 0.0
    with pytest.raises(ParameterError, match="refit=True would move the leaves of a model trained with monotone"):
        btt.prune(model, X[3000:4500], y[3000:4500], X_train=X[:3000], y_train=y[:3000], refit=True, progress=False)


def test_models_without_constraints_are_not_constrained(data):
    X, y = data
    for model in (
        lgb.LGBMClassifier(n_estimators=5, verbose=-1),
        xgb.XGBClassifier(n_estimators=5),
        HistGradientBoostingClassifier(max_iter=5),
    ):
        ensemble = btt.from_model(model.fit(X[:500], y[:500]))
        assert adapter_for(ensemble).monotone_method(ensemble) is None
