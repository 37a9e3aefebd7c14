"""Labels at exact ties follow each library's own rule (``Ensemble.label_rule``):
a balanced target gives boosted models a raw score of exactly 0 on every row,
where scikit-learn's GradientBoosting says "positive class" and the others
"first class"."""

import dataclasses

import lightgbm
import numpy as np
import pytest
import xgboost
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import ConversionError

# each value of the one feature holds both labels equally: no split separates
# them, so every tree adds 0 and the raw score stays the balanced prior, 0
X = np.array([[0.0], [0.0], [1.0], [1.0]] * 10)
y = np.array([0, 1, 0, 1] * 10)

MODELS = {
    "GradientBoosting": (lambda: GradientBoostingClassifier(n_estimators=3, random_state=0), "raw>=0", 1),
    "HistGradientBoosting": (lambda: HistGradientBoostingClassifier(max_iter=3, random_state=0), "raw>0", 0),
    "RandomForest": (lambda: RandomForestClassifier(n_estimators=3, bootstrap=False, random_state=0), "proba", 0),
    "LightGBM": (lambda: lightgbm.LGBMClassifier(n_estimators=3, verbose=-1, min_child_samples=1), "proba", 0),
    "XGBoost": (lambda: xgboost.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1), "proba", 0),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ties_get_the_library_label(name):
    make, rule, tie_label = MODELS[name]
    model = make().fit(X, y)
    ensemble = btt.from_model(model)
    assert ensemble.label_rule == rule
    if name != "RandomForest":
        assert np.all(ensemble.predict_raw(X) == 0.0)  # the tie this test is about
    np.testing.assert_array_equal(model.predict(X), np.full(len(X), tie_label))
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))
    np.testing.assert_array_equal(btt.to_model(ensemble).predict(X), model.predict(X))


def test_xgboost_softmax_labels_are_the_margins_argmax():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(300, 3))
    labels = rng.integers(0, 3, size=300)
    params = {"objective": "multi:softmax", "num_class": 3, "max_depth": 2}
    booster = xgboost.train(params, xgboost.DMatrix(features, labels), 4)
    ensemble = btt.from_model(booster)
    assert ensemble.label_rule == "raw>0"
    np.testing.assert_array_equal(ensemble.predict(features), booster.predict(xgboost.DMatrix(features)).astype(int))


@pytest.mark.parametrize("name", ["GradientBoosting", "HistGradientBoosting", "LightGBM", "XGBoost", "RandomForest"])
def test_export_refuses_another_label_rule(name):
    make, rule, _ = MODELS[name]
    ensemble = btt.from_model(make().fit(X, y))
    other = "raw>0" if rule != "raw>0" else "raw>=0"
    with pytest.raises(ConversionError, match="label_rule"):
        btt.to_model(dataclasses.replace(ensemble, label_rule=other))


def test_unknown_label_rule_is_refused():
    ensemble = btt.from_model(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    with pytest.raises(btt.exceptions.InvalidTreeError, match="label_rule must be one of"):
        dataclasses.replace(ensemble, label_rule="argmax")


def test_pruning_metrics_label_ties_as_the_model_does():
    # weights balance the prior, so the raw score is 0 on every row while two thirds are class 0
    X_tie, y_tie = np.zeros((30, 2)), np.array([0, 0, 1] * 10)
    model = GradientBoostingClassifier(n_estimators=3).fit(X_tie, y_tie, sample_weight=np.where(y_tie == 1, 2.0, 1.0))
    assert np.all(model.decision_function(X_tie) == 0.0) and np.all(model.predict(X_tie) == 1)
    result = btt.reduced_error_prune(model, X_tie, y_tie)
    assert result.metrics.loc["before", "accuracy"] == pytest.approx(1 / 3)
    assert result.evaluate(X_tie, y_tie).loc["after", "accuracy"] == pytest.approx(1 / 3)
