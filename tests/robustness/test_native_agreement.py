"""The silent wrong answers of the adversarial sweep, each checked against the
native library: our copy predicts what the library predicts, or refuses the
input the library refuses."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

import bandit_tree_tools as btt
from tests.optional import lgb as lightgbm  # noqa: E402
from tests.optional import xgb as xgboost  # noqa: E402


# ---------------------------------------------------------------- HGB categoricals
@pytest.fixture(scope="module")
def hgb_categorical():
    rng = np.random.default_rng(0)
    n = 1000
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(list("abcde"), n)), "x": rng.normal(size=n)})
    y = (X.colour.isin(["a", "c"]) ^ (X.x > 0.3)).astype(int)
    model = HistGradientBoostingClassifier(max_iter=20, categorical_features="from_dtype", random_state=0).fit(X, y)
    return model, X


@pytest.mark.parametrize(
    "categories", [list("edcba"), list("abcde") + ["zz"], list("bdace")], ids=["reversed", "extra", "shuffled"]
)
def test_hist_gradient_boosting_codes_frame_categories_by_value(hgb_categorical, categories):
    model, X = hgb_categorical
    frame = X.assign(colour=pd.Categorical(X.colour.astype(str), categories=categories))
    ensemble = btt.from_model(model)
    np.testing.assert_allclose(ensemble.predict_proba(frame), model.predict_proba(frame), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ensemble.predict(frame), model.predict(frame))


def test_hist_gradient_boosting_missing_category_in_the_frame(hgb_categorical):
    model, X = hgb_categorical
    keep = X.colour != "b"
    frame = X[keep].assign(colour=pd.Categorical(X.colour[keep].astype(str), categories=list("acde")))
    np.testing.assert_array_equal(btt.from_model(model).predict(frame), model.predict(frame))


def test_hist_gradient_boosting_fractional_category_values_are_unknown_categories():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 6, 800).astype(float), rng.normal(size=800)])
    y = (np.isin(X[:, 0], [1, 4]) ^ (X[:, 1] > 0)).astype(int)
    model = HistGradientBoostingClassifier(max_iter=10, categorical_features=[0], random_state=0).fit(X, y)
    rows = np.column_stack([[0.5, 1.5, 3.999, 4.0, 1.0, -0.5, np.nan, 7.0, 1e-300 + 1], np.zeros(9)])
    ensemble = btt.from_model(model)
    np.testing.assert_allclose(ensemble.predict_proba(rows), model.predict_proba(rows), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- XGBoost categoricals
def test_xgboost_frame_categories_are_recoded_by_value_and_unseen_ones_refused_as_xgboost_does():
    rng = np.random.default_rng(4)
    n = 800
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(list("abcde"), n)), "x": rng.normal(size=n)})
    y = (X.colour.isin(["a", "c"]) ^ (X.x > 0.3)).astype(int)
    model = xgboost.XGBClassifier(n_estimators=5, max_depth=3, enable_categorical=True, tree_method="hist").fit(X, y)
    ensemble = btt.from_model(model)
    if ensemble.feature_categories is None:
        pytest.skip("this XGBoost stores no training categories (before 3.1): a frame's own codes are used")
    values = X.colour.astype(str)
    shuffled = X.assign(colour=pd.Categorical(values, categories=list("dbeac")))
    np.testing.assert_array_equal(ensemble.predict_raw(shuffled)[:, 0], model.predict(shuffled, output_margin=True))
    extra = X.assign(colour=pd.Categorical(values, categories=list("abcde") + ["zz"]))  # listed, on no row
    with pytest.raises(xgboost.core.XGBoostError, match="not in the training set"):
        model.predict(extra)
    with pytest.raises(btt.DataError, match=r"never saw in training \(\['zz'\]\).*feature_categories\[0\]"):
        ensemble.predict(extra)


# ---------------------------------------------------------------- XGBoost base_score
@pytest.mark.parametrize("objective", ["binary:logistic", "reg:logistic"])
@pytest.mark.parametrize("base_score", [1e-8, 1e-7, 5e-7, 1 - 1e-7, 0.9999999])
def test_xgboost_logistic_base_score_is_clipped_as_xgboost_does(objective, base_score):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    params = dict(n_estimators=3, max_depth=3, base_score=base_score, objective=objective)
    model = (xgboost.XGBClassifier if objective.startswith("binary") else xgboost.XGBRegressor)(**params).fit(X, y)
    margin = model.get_booster().inplace_predict(X, predict_type="margin")
    np.testing.assert_array_equal(btt.from_model(model).predict_raw(X)[:, 0], margin)


# ---------------------------------------------------------------- numeric features as pandas categories
@pytest.fixture(scope="module")
def numeric_frame():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.integers(0, 5, 600).astype(float) * 1.5, "b": rng.normal(size=600)})
    y = ((X.a + X.b) > 3).astype(int)
    as_category = X.assign(a=pd.Categorical(X.a, categories=sorted(X.a.unique())[::-1]))
    return X, y, as_category


def test_scikit_learn_reads_numeric_categories_by_value(numeric_frame):
    X, y, as_category = numeric_frame
    for model in (RandomForestClassifier(n_estimators=5, random_state=0), HistGradientBoostingClassifier(max_iter=5)):
        model.fit(X, y)
        np.testing.assert_array_equal(
            btt.from_model(model).predict_proba(as_category), model.predict_proba(as_category)
        )


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_libraries_that_refuse_a_category_column_on_a_numeric_feature_are_followed(numeric_frame, library):
    X, y, as_category = numeric_frame
    model = (lightgbm.LGBMClassifier(n_estimators=5, verbose=-1) if library == "lightgbm"
             else xgboost.XGBClassifier(n_estimators=5)).fit(X, y)  # fmt: skip
    with pytest.raises((ValueError, xgboost.core.XGBoostError)):
        model.predict_proba(as_category)
    with pytest.raises(btt.DataError, match=r"column 'a' of X is a pandas 'category' column.*astype\(float\)"):
        btt.from_model(model).predict_proba(as_category)


def test_xgboost_integer_categories_on_a_numeric_feature_use_the_codes_as_xgboost_does(numeric_frame):
    X, y, _ = numeric_frame
    X = X.assign(a=(X.a / 1.5))
    model = xgboost.XGBClassifier(n_estimators=5).fit(X, y)
    frame = X.assign(a=pd.Categorical(X.a.astype(int), categories=[4, 3, 2, 1, 0]))
    margin = model.get_booster().inplace_predict(frame, predict_type="margin")
    np.testing.assert_array_equal(btt.from_model(model).predict_raw(frame)[:, 0], margin)


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda X: X.astype(complex) + 1j, "complex"),
        (lambda X: X.astype("datetime64[s]"), "datetime64"),
        (lambda X: X.astype(np.int64).astype("timedelta64[s]"), "timedelta64"),
        (lambda X: np.ma.masked_array(X, mask=X > 0), "masked array"),
        (lambda X: pd.DataFrame({"a": pd.to_datetime(X[:, 0] * 1e9), "b": X[:, 1]}), "datetime64"),
        # the libraries' training containers: it failed in float(), naming neither the type nor the fix
        (lambda X: xgboost.DMatrix(X), r"X is an XGBoost DMatrix; pass the rows it was made from"),
        (lambda X: lightgbm.Dataset(X), r"X is a LightGBM Dataset; pass the rows it was made from"),
    ],
    ids=["complex", "datetime", "timedelta", "masked", "datetime column", "DMatrix", "Dataset"],
)
def test_inputs_no_library_reads_as_numbers_are_refused(bad, message):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 5, size=(100, 2)).astype(float)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, X[:, 0] > 2)
    with pytest.raises(btt.DataError, match=message):
        btt.from_model(model).predict(bad(X))


def test_sparse_input_is_read_as_each_library_reads_it():
    rng = np.random.default_rng(5)
    dense = rng.normal(size=(300, 4)) * (rng.random((300, 4)) < 0.4)
    y = (dense[:, 0] + dense[:, 1] > 0).astype(int)
    matrix = sp.csr_matrix(dense)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(dense, y)
    booster = lightgbm.LGBMClassifier(n_estimators=5, verbose=-1).fit(dense, y)
    xgb = xgboost.XGBClassifier(n_estimators=5).fit(matrix, y)  # implicit entries are missing to XGBoost
    for model in (forest, booster, xgb):
        np.testing.assert_allclose(
            btt.from_model(model).predict_proba(matrix), model.predict_proba(matrix), rtol=0, atol=1e-6
        )


# ---------------------------------------------------------------- collapse values from hints
@pytest.fixture(scope="module")
def gradient_boosting():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] * 3 + rng.normal(size=300)
    model = GradientBoostingRegressor(loss="absolute_error", n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    return model, X, y


@pytest.mark.parametrize("case", ["other rows", "shuffled y", "NaN in y", "subset"])
def test_gradient_boosting_hints_that_are_not_the_training_data_are_refused(gradient_boosting, case):
    model, X, y = gradient_boosting
    rng = np.random.default_rng(7)
    X_hint, y_hint = {
        "other rows": (rng.normal(size=X.shape), y),
        "shuffled y": (X, rng.permutation(y)),
        "NaN in y": (X, np.where(np.arange(y.size) == 4, np.nan, y)),
        "subset": (X[:200], y[:200]),
    }[case]
    with pytest.raises(btt.ConversionError, match="do not look like the training data|non-finite value at row 4"):
        btt.from_sklearn(model, X=X_hint, y=y_hint)
    assert btt.from_sklearn(model, X=X, y=y).trees[0].has_leaf_value.all()


def test_gradient_boosting_classifier_hint_with_flipped_labels_is_refused():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(btt.ConversionError, match="do not look like the training data"):
        btt.from_sklearn(model, X=X, y=1 - y)


def test_xgboost_learning_rate_hint_is_checked_against_the_trees(tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    xgboost.XGBClassifier(n_estimators=5, learning_rate=0.3, max_depth=4).fit(X, y).save_model(tmp_path / "m.json")
    loaded = xgboost.Booster()
    loaded.load_model(tmp_path / "m.json")  # a loaded model has lost its training configuration
    with pytest.raises(btt.ConversionError, match=r"learning_rate=0.9 does not match the trees"):
        btt.from_xgboost(loaded, learning_rate=0.9)
    ensemble = btt.from_xgboost(loaded, learning_rate=0.3)
    assert ensemble.trees[0].has_leaf_value.all()
    collapsed = btt.collapse(ensemble, {0: [1]})
    np.testing.assert_allclose(
        btt.to_model(collapsed).predict(xgboost.DMatrix(X)), collapsed.predict_proba(X)[:, 1], rtol=0, atol=1e-6
    )


# ---------------------------------------------------------------- XGBoost DART through inplace_predict
def test_xgboost_dart_inplace_predict_is_within_the_stated_bound():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(600, 4))
    target = X[:, 0] * 100 + X[:, 1] * 1e3
    model = xgboost.XGBRegressor(booster="dart", n_estimators=50, rate_drop=0.3, max_depth=5, random_state=0)
    model.fit(X, target)
    rows = rng.normal(size=(5000, 4)) * 3
    ensemble = btt.from_model(model)
    ours, inplace = ensemble.predict(rows), model.predict(rows)
    np.testing.assert_array_equal(ours, model.get_booster().predict(xgboost.DMatrix(rows)))  # exact
    # the module docstring's bound: 2 * n_trees * 2**-24 * (|base margin| + sum of max |weight * leaf value|)
    magnitude = abs(float(ensemble.base_score[0])) + sum(
        float(scale) * float(np.max(np.abs(tree.value[tree.is_leaf])))
        for tree, scale in zip(ensemble.trees, ensemble.tree_scale)
    )
    bound = 2 * ensemble.n_trees * 2.0**-24 * magnitude
    difference = np.max(np.abs(ours - inplace))
    assert 0 < difference <= bound, (difference, bound)
