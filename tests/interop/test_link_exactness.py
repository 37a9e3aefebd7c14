"""Probabilities and exp-link predictions bit for bit on many rows: LightGBM and
XGBoost take the C library's ``exp`` (numpy's vectorised one differs in the last
bit of a few percent of values), scikit-learn numpy's (``Ensemble.link_exp``)."""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

import bandit_tree_tools as btt
from tests.optional import lgb, xgb

N_ROWS = 20_000  # about 3% of numpy's exponentials differed from the C library's: hundreds of rows here


def data(n_classes):
    X, y = make_classification(N_ROWS, 10, n_informative=8, n_classes=n_classes, random_state=0)
    X[::17, 2] = np.nan
    return X, y


def counts():
    X, _ = data(2)
    rng = np.random.default_rng(0)
    return X, rng.poisson(np.exp(np.nan_to_num(X[:, 0]) * 0.4))


def models():
    """(name, make the fitted model, predictions are probabilities)"""
    return [
        ("lightgbm 3 classes", lambda: lgb.LGBMClassifier(n_estimators=15, verbose=-1).fit(*data(3)), True),
        ("lightgbm 9 classes", lambda: lgb.LGBMClassifier(n_estimators=5, verbose=-1).fit(*data(9)), True),
        (
            "lightgbm poisson",
            lambda: lgb.LGBMRegressor(objective="poisson", n_estimators=15, verbose=-1).fit(*counts()),
            False,
        ),
        ("xgboost binary", lambda: xgb.XGBClassifier(n_estimators=15, max_depth=4).fit(*data(2)), True),
        ("xgboost 3 classes", lambda: xgb.XGBClassifier(n_estimators=15, max_depth=4).fit(*data(3)), True),
        (
            "xgboost multi:softmax",  # its wrapper's predict_proba: scipy's softmax of the float32 margins
            lambda: xgb.XGBClassifier(objective="multi:softmax", n_estimators=15, max_depth=4).fit(*data(3)),
            True,
        ),
        (
            "xgboost poisson",
            lambda: xgb.XGBRegressor(objective="count:poisson", n_estimators=15, max_depth=4).fit(*counts()),
            False,
        ),
        ("histgb 3 classes", lambda: HistGradientBoostingClassifier(max_iter=15).fit(*data(3)), True),
        ("histgb poisson", lambda: HistGradientBoostingRegressor(loss="poisson", max_iter=15).fit(*counts()), False),
    ]


@pytest.mark.parametrize("name, make, probabilities", models(), ids=[name for name, _, _ in models()])
def test_links_are_bit_for_bit_on_many_rows(name, make, probabilities):
    model = make()
    X, _ = data(2)
    ensemble = btt.from_model(model)
    assert ensemble.link_exp == ("numpy" if name.startswith("histgb") or name.endswith("softmax") else "libm")
    if probabilities:
        np.testing.assert_array_equal(ensemble.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))
    exported = btt.to_model(ensemble)  # the export takes its library's exp again
    prediction = exported.predict_proba(X) if probabilities else exported.predict(X)
    np.testing.assert_array_equal(prediction, ensemble.predict_proba(X) if probabilities else ensemble.predict(X))


def test_a_link_exp_outside_the_table_is_refused():
    model = HistGradientBoostingClassifier(max_iter=3).fit(*data(2))
    with pytest.raises(btt.InvalidTreeError, match=r"^link_exp must be one of \('numpy', 'libm'\), got 'glibc'"):
        dataclasses.replace(btt.from_model(model), link_exp="glibc")
