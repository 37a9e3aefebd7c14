"""LightGBM import/export: specific library facts, wrappers, and bad input."""

import pickle
from dataclasses import replace

import numpy as np
import pytest

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.exceptions import (  # noqa: E402
    ConversionError,
    DataError,
    NodeError,
    NotFittedError,
    UnsupportedModelError,
)
from bandit_tree_tools.interop._lightgbm_text import parse_model_string  # noqa: E402
from bandit_tree_tools.interop.lightgbm import LIGHTGBM_ZERO, from_lightgbm, to_lightgbm  # noqa: E402
from bandit_tree_tools.tree import Ensemble, Source, make_tree  # noqa: E402
from tests.interop.test_lightgbm import (  # noqa: E402
    assert_same_predictions,
    lightgbm_thresholds,
    native_outputs,
    our_outputs,
    probe_rows,
    train,
)
from tests.optional import lgb  # noqa: E402


def small_data(seed=0, n_rows=400, n_features=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 + 0.2 * rng.normal(size=n_rows)
    return X, y


def regressor(**params):
    X, y = small_data()
    settings = dict(n_estimators=4, num_leaves=6, min_child_samples=5, verbose=-1, n_jobs=1)
    settings.update(params)
    return lgb.LGBMRegressor(**settings).fit(X, y), X


# ------------------------------------------------------------------ the format
def test_node_numbering_values_and_counts_follow_the_model_string():
    model, X = regressor()
    ensemble = from_lightgbm(model)
    parsed = parse_model_string(model.booster_.model_to_string())
    tree = ensemble.trees[0]
    n_leaves = int(parsed.num_leaves[0])
    n_internal = n_leaves - 1
    np.testing.assert_array_equal(tree.feature[:n_internal], parsed.arrays["split_feature"][:n_internal])
    np.testing.assert_array_equal(tree.value[:n_internal, 0], parsed.arrays["internal_value"][:n_internal])
    np.testing.assert_array_equal(tree.value[n_internal:, 0], parsed.arrays["leaf_value"][:n_leaves])
    np.testing.assert_array_equal(tree.n_node_samples[n_internal:], parsed.arrays["leaf_count"][:n_leaves])
    assert np.all(tree.has_leaf_value == 1)
    assert ensemble.base_score.tolist() == [0.0] and ensemble.split_rule == "le" and ensemble.input_dtype == "float64"
    # LightGBM's leaf j is our node num_leaves - 1 + j, in every tree
    offsets = np.array([t.n_nodes - t.n_leaves for t in ensemble.trees])
    np.testing.assert_array_equal(ensemble.apply(X), model.booster_.predict(X, pred_leaf=True) + offsets)


def test_missing_types_map_to_the_format_codes():
    X, y = small_data()
    X[::7, 2] = 0.0
    for options, expected in [
        (dict(use_missing=False), 1),  # None: NaN -> 0.0
        (dict(zero_as_missing=True), 2),  # Zero: zeros and NaN are missing
        (dict(), 0),  # NaN
    ]:
        model = lgb.LGBMRegressor(n_estimators=2, num_leaves=6, verbose=-1, n_jobs=1, **options).fit(X, y)
        ensemble = from_lightgbm(model)
        parsed = parse_model_string(model.booster_.model_to_string())
        decision = parsed.arrays["decision_type"]
        internal = np.concatenate([t.missing_type[t.children_left != -1] for t in ensemble.trees])
        default_left = np.concatenate([t.missing_go_to_left[t.children_left != -1] for t in ensemble.trees])
        lightgbm_missing = (decision >> 2) & 3
        np.testing.assert_array_equal(internal, np.array([1, 2, 0])[lightgbm_missing])
        np.testing.assert_array_equal(default_left, (decision >> 1) & 1)
        assert expected in internal


def test_categorical_bitsets_and_unseen_categories():
    model, X = train("binary", np.random.default_rng(3), wrapper=True, n_categories=40, n_estimators=4, n_rows=600)
    ensemble = from_lightgbm(model)
    categorical = [t for t in ensemble.trees if t.is_categorical.any()]
    assert categorical, "the model should split on the categorical column"
    node = int(np.flatnonzero(categorical[0].is_categorical)[0])
    assert categorical[0].unknown_category_go_to_left[node] == 0 and categorical[0].missing_go_to_left[node] == 0
    assert not categorical[0].category_right.any()
    rows = np.tile(X[:1], (8, 1))
    rows[:, 0] = [np.nan, -1.0, -7.0, 39.0, 40.0, 1000.0, 2.0**31, np.inf]  # missing, negative, unseen
    assert_same_predictions(our_outputs(ensemble, rows, model), native_outputs(model, rows, ensemble))


def test_fractional_negative_category_is_category_zero():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 500).astype(float), rng.normal(size=500)])
    y = (X[:, 0] == 0).astype(int)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, n_jobs=1, min_data_per_group=5)
    model.fit(X, y, categorical_feature=[0])
    ensemble = from_lightgbm(model)
    # LightGBM truncates toward zero: (-1, 0) is category 0, -1 and below are unknown
    values = [-0.5, -0.999, -1e-300, -0.0, 0.0, 0.5, -1.0, -1.5, 1.7, 3.99, np.nan]
    rows = np.column_stack([values, np.zeros(len(values))])
    np.testing.assert_array_equal(ensemble.predict_raw(rows)[:, 0], model.predict(rows, raw_score=True))
    assert ensemble.predict_raw(rows[:1])[0, 0] == ensemble.predict_raw(rows[4:5])[0, 0]
    assert rows[0, 0] == -0.5  # the caller's array is not rewritten


def test_zero_band_thresholds_route_like_lightgbm():
    rng = np.random.default_rng(1)
    X = rng.integers(-1, 2, size=(600, 1)).astype(float)  # zeros make LightGBM split at +-1e-35f
    for zero_as_missing in (False, True):
        model = lgb.LGBMRegressor(n_estimators=1, num_leaves=3, min_child_samples=5, verbose=-1, n_jobs=1,
                                  zero_as_missing=zero_as_missing).fit(X, X[:, 0])  # fmt: skip
        thresholds = parse_model_string(model.booster_.model_to_string()).arrays["threshold"]
        assert np.float32(1e-35) in np.abs(thresholds)
        tiny = np.concatenate([thresholds, np.nextafter(thresholds, 2), np.nextafter(thresholds, -2), [0.0, -0.0]])
        rows = tiny.reshape(-1, 1)
        ensemble = from_lightgbm(model)
        np.testing.assert_array_equal(ensemble.predict(rows), model.predict(rows))
        exported = to_lightgbm(btt.collapse(ensemble, {0: [1]}))
        assert "threshold=1.0000000180025095e-35" in exported.booster_.model_to_string()


def test_collapsed_node_takes_the_printed_internal_value_and_root_collapse_gives_a_single_leaf():
    model, X = regressor()
    ensemble = from_lightgbm(model)
    printed = model.booster_.model_to_string().split("internal_value=")[1].split("\n")[0].split(" ")
    collapsed = btt.collapse(ensemble, {0: [0], 1: [1]})
    assert collapsed.trees[0].n_nodes == 1
    assert collapsed.trees[0].value[0, 0] == float(printed[0])
    exported = to_lightgbm(collapsed)
    text = exported.booster_.model_to_string()
    assert "Tree=0\nnum_leaves=1\n" in text
    np.testing.assert_array_equal(exported.predict(X), collapsed.predict(X))
    np.testing.assert_array_equal(from_lightgbm(exported).predict_raw(X), collapsed.predict_raw(X))


def test_single_leaf_trees_import_and_export():
    X, y = small_data()
    model = lgb.LGBMRegressor(n_estimators=3, min_child_samples=1000, verbose=-1, n_jobs=1).fit(X, y)
    ensemble = from_lightgbm(model)
    assert all(tree.n_nodes == 1 for tree in ensemble.trees)
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))
    np.testing.assert_array_equal(to_lightgbm(ensemble).predict(X), model.predict(X))


def test_tree_sizes_header_matches_the_written_blocks():
    model, X = regressor(n_estimators=6)
    collapsed = btt.collapse(from_lightgbm(model), {2: [0], 4: [1, 2]})
    text = to_lightgbm(collapsed).booster_.model_to_string()
    sizes = [int(s) for s in text.split("tree_sizes=")[1].split("\n")[0].split()]
    start = text.index("\nTree=") + 1
    for index, size in enumerate(sizes):
        assert text.startswith(f"Tree={index}\n", start)
        start += size
    assert text[start:].startswith("end of trees")


def test_multiclass_trees_map_to_classes_in_order():
    model, X = train("multiclass", np.random.default_rng(2), wrapper=True, n_estimators=3)
    ensemble = from_lightgbm(model)
    assert ensemble.n_outputs == 3 and ensemble.link == "softmax"
    np.testing.assert_array_equal(ensemble.tree_output, np.arange(9) % 3)
    np.testing.assert_array_equal(ensemble.predict_raw(X), model.predict(X, raw_score=True))
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))


def test_sigmoid_parameter_becomes_link_scale():
    model, X = train("binary", np.random.default_rng(4), wrapper=True, sigmoid=0.5)
    ensemble = from_lightgbm(model)
    assert ensemble.link == "sigmoid" and ensemble.link_scale == 0.5
    np.testing.assert_array_equal(ensemble.predict_proba(X), model.predict_proba(X))


def test_rf_averages_and_exp_link():
    rf, X = train("rf_regression", np.random.default_rng(5), wrapper=False, n_estimators=4)
    ensemble = from_lightgbm(rf)
    assert ensemble.aggregation == "mean"
    np.testing.assert_array_equal(ensemble.predict(X), rf.predict(X))
    poisson, X = train("poisson", np.random.default_rng(6), wrapper=True)
    ensemble = from_lightgbm(poisson)
    assert ensemble.link == "exp"
    np.testing.assert_array_equal(ensemble.predict(X), poisson.predict(X))


def test_early_stopping_imports_best_iteration_by_default():
    X, y = small_data(n_rows=600)
    model = lgb.LGBMRegressor(n_estimators=200, learning_rate=0.5, num_leaves=8, verbose=-1, n_jobs=1)
    model.fit(X[:400], y[:400], eval_X=X[400:], eval_y=y[400:], callbacks=[lgb.early_stopping(3, verbose=False)])
    assert 0 < model.best_iteration_ < 200
    ensemble = from_lightgbm(model)
    assert ensemble.n_trees == model.best_iteration_
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))
    everything = from_lightgbm(model, num_iteration=-1)
    assert everything.n_trees == model.booster_.current_iteration()
    np.testing.assert_array_equal(everything.predict(X), model.predict(X, num_iteration=-1))
    with pytest.raises(TypeError, match="num_iteration must be an int"):
        from_lightgbm(model, num_iteration="best")


def test_pandas_categorical_columns_and_column_checks():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "colour": pd.Categorical(rng.choice(["red", "green", "blue", "grey"], 500)),
            "size": rng.normal(size=500),
            "weight": rng.normal(size=500),
        }
    )
    frame.loc[::11, "colour"] = np.nan
    y = ((frame["colour"] == "red") | (frame["size"] > 1)).astype(int)
    model = lgb.LGBMClassifier(n_estimators=4, num_leaves=6, verbose=-1, n_jobs=1, min_data_per_group=5).fit(frame, y)
    ensemble = btt.from_model(model)
    assert list(ensemble.feature_names_in_) == ["colour", "size", "weight"]
    assert any(tree.is_categorical.any() for tree in ensemble.trees)
    np.testing.assert_array_equal(ensemble.predict_proba(frame), model.predict_proba(frame))
    np.testing.assert_array_equal(ensemble.predict(frame), model.predict(frame))
    exported = btt.to_model(btt.collapse(ensemble, {0: [1]}))
    assert exported.booster_.pandas_categorical == model.booster_.pandas_categorical
    np.testing.assert_array_equal(
        exported.predict_proba(frame)[:, 1], btt.collapse(ensemble, {0: [1]}).predict_proba(frame)[:, 1]
    )
    with pytest.raises(DataError, match="another order"):
        ensemble.predict(frame[["size", "colour", "weight"]])
    with pytest.raises(DataError, match="missing"):
        ensemble.predict(frame[["colour", "size"]])
    with pytest.raises(DataError, match="3 features|trained on 3"):
        ensemble.predict(np.zeros((2, 5)))


def test_exported_wrapper_predicts_pickles_and_saves(tmp_path):
    model, X = train("binary", np.random.default_rng(8), wrapper=True, n_estimators=5)
    before = pickle.dumps(model)
    collapsed = btt.collapse(from_lightgbm(model), {1: [0], 3: [1]})
    exported = to_lightgbm(collapsed)
    assert type(exported) is lgb.LGBMClassifier and exported is not model
    assert exported.booster_ is not model.booster_
    np.testing.assert_array_equal(exported.classes_, model.classes_)
    np.testing.assert_array_equal(exported.predict_proba(X), collapsed.predict_proba(X))
    reloaded = pickle.loads(pickle.dumps(exported))
    np.testing.assert_array_equal(reloaded.predict_proba(X), exported.predict_proba(X))
    exported.booster_.save_model(tmp_path / "model.txt")
    booster = lgb.Booster(model_file=tmp_path / "model.txt")
    np.testing.assert_array_equal(booster.predict(X, raw_score=True), collapsed.predict_raw(X)[:, 0])
    assert pickle.dumps(model) == before


def test_base_score_and_tree_scale_are_written_exactly():
    model, X = regressor(n_estimators=5)
    ensemble = from_lightgbm(model)
    edited = replace(ensemble, base_score=np.array([0.37]), tree_scale=np.array([1.0, 0.5, 0.3, 1.0, 0.7]))
    np.testing.assert_array_equal(to_lightgbm(edited).predict(X), edited.predict(X))


@pytest.mark.filterwarnings("ignore:Cannot compute class probabilities")
def test_custom_objective_is_imported_as_raw_scores():
    X, y = small_data()
    labels = (y > 0).astype(int)

    def logistic(y_true, y_pred):
        p = 1 / (1 + np.exp(-y_pred))
        return p - y_true, p * (1 - p)

    model = lgb.LGBMClassifier(objective=logistic, n_estimators=3, verbose=-1, n_jobs=1).fit(X, labels)
    ensemble = from_lightgbm(model)
    assert ensemble.task == "regression" and ensemble.link == "identity"
    np.testing.assert_array_equal(ensemble.predict(X), model.predict(X))


# ----------------------------------------------------------------- bad input
def test_unfitted_and_unsupported_objects():
    with pytest.raises(NotFittedError, match="LGBMRegressor is not fitted"):
        btt.from_model(lgb.LGBMRegressor())
    with pytest.raises(UnsupportedModelError, match="lightgbm.basic.Dataset.*Booster, LGBMClassifier"):
        btt.from_model(lgb.Dataset(np.zeros((3, 2))))


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(linear_tree=True), "linear_tree"),
        (dict(reg_sqrt=True), "reg_sqrt"),
        (dict(objective="cross_entropy_lambda"), "cross_entropy_lambda"),
    ],
)
def test_refused_models(params, message):
    X, y = small_data()
    X = np.nan_to_num(X)
    if params.get("objective") == "cross_entropy_lambda":
        y = 1 / (1 + np.exp(-y))
    model = lgb.LGBMRegressor(n_estimators=2, verbose=-1, n_jobs=1, **params).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=message):
        from_lightgbm(model)


def test_multiclass_random_forest_is_refused():
    model, _ = train("multiclass", np.random.default_rng(9), wrapper=True, boosting_type="rf", subsample=0.7,
                     subsample_freq=1)  # fmt: skip
    with pytest.raises(UnsupportedModelError, match="multiclass LightGBM models with boosting='rf'"):
        from_lightgbm(model)


def test_collapse_errors():
    model, _ = regressor()
    ensemble = from_lightgbm(model)
    leaf = int(np.flatnonzero(ensemble.trees[0].children_left == -1)[0])
    with pytest.raises(NodeError, match="already a leaf"):
        btt.collapse(ensemble, {0: [leaf]})
    with pytest.raises(NodeError, match="does not exist in tree 0"):
        btt.collapse(ensemble, {0: [ensemble.trees[0].n_nodes]})
    with pytest.raises(NodeError, match="tree index 99"):
        btt.collapse(ensemble, {99: [0]})


def test_export_refuses_what_lightgbm_cannot_hold():
    model, _ = regressor()
    ensemble = from_lightgbm(model)
    with pytest.raises(ConversionError, match="its link is"):
        to_lightgbm(replace(ensemble, link="exp"))
    with pytest.raises(ConversionError, match="split_rule"):
        to_lightgbm(replace(ensemble, split_rule="lt"))
    foreign = Ensemble(
        trees=[make_tree([-1], [-1], [-2], [-2.0], [[1.0]])], task="regression", n_features_in_=1, n_outputs=1,
        tree_output=0, tree_scale=1.0, aggregation="sum", base_score=0.0, link="identity",
        source=Source("sklearn", "DecisionTreeRegressor"),
    )  # fmt: skip
    with pytest.raises(ConversionError, match="imported from LightGBM"):
        to_lightgbm(foreign)


def test_malformed_model_strings():
    model, _ = regressor()
    text = model.booster_.model_to_string()
    with pytest.raises(ConversionError, match="version 'v9'"):
        parse_model_string(text.replace("version=v4", "version=v9"))
    with pytest.raises(ConversionError, match="malformed.*leaf_value"):
        parse_model_string(text.replace("leaf_value=", "leaf_value=1 ", 1))
    with pytest.raises(ConversionError, match="malformed.*not numbers"):
        parse_model_string(text.replace("threshold=", "threshold=abc ", 1))
    with pytest.raises(ConversionError, match="malformed"):
        parse_model_string("not a model")


def test_probe_helper_covers_adversarial_values():
    model, X = regressor()
    ensemble = from_lightgbm(model)
    P = probe_rows(np.random.default_rng(0), model, ensemble, X, n_rows=400)
    assert np.isnan(P).any() and np.isinf(P).any() and (P == 0).any()
    assert np.isin(lightgbm_thresholds(model), P).any()
    assert np.isin([LIGHTGBM_ZERO, -LIGHTGBM_ZERO, 40.0, -3.0], P).all()


def test_imported_ensemble_pickles_and_still_exports():
    model, X = train("binary", np.random.default_rng(10), wrapper=True, n_categories=5, n_features=3)
    ensemble = btt.collapse(from_lightgbm(model), {0: [1]})
    restored = pickle.loads(pickle.dumps(ensemble))
    np.testing.assert_array_equal(restored.predict_raw(X), ensemble.predict_raw(X))
    assert restored.source.library == "lightgbm"
    with pytest.raises(TypeError):
        restored.source.payload["native"] = None  # still read-only after the round trip
    with pytest.raises(AttributeError):
        restored.source.payload["native"].header = ()
    np.testing.assert_array_equal(to_lightgbm(restored).predict_proba(X), to_lightgbm(ensemble).predict_proba(X))


def test_export_refuses_thresholds_inside_the_zero_band():
    model, _ = regressor()
    ensemble = from_lightgbm(model)
    tree = ensemble.trees[0]
    threshold = tree.threshold.copy()
    threshold[0] = 0.0
    edited = ensemble.replace_trees([tree._replace(threshold=threshold)] + list(ensemble.trees[1:]))
    with pytest.raises(ConversionError, match="reads every \\|x\\| <= 1e-35f as 0.0"):
        to_lightgbm(edited)


def test_pandas_categories_are_remapped_to_the_training_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    colour = rng.choice(["red", "green", "blue"], 400)
    frame = pd.DataFrame({"colour": pd.Categorical(colour), "size": rng.normal(size=400)})
    y = (colour == "red").astype(int)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, n_jobs=1, min_data_per_group=5).fit(frame, y)
    ensemble = from_lightgbm(model)
    assert ensemble.feature_categories == (("blue", "green", "red"), None)
    reordered = frame.assign(colour=pd.Categorical(colour, categories=["red", "green", "blue"]))
    np.testing.assert_array_equal(ensemble.predict_proba(reordered), model.predict_proba(reordered))
    unseen = frame.assign(colour=pd.Categorical(np.where(colour == "red", "purple", colour)))
    np.testing.assert_array_equal(ensemble.predict_proba(unseen), model.predict_proba(unseen))
    exported = to_lightgbm(btt.collapse(ensemble, {0: [0]}))
    np.testing.assert_array_equal(
        exported.predict_proba(reordered)[:, 1], btt.collapse(ensemble, {0: [0]}).predict_proba(reordered)[:, 1]
    )


def test_ambiguous_pandas_categories_warn_and_fall_back_to_codes():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    size = pd.Categorical(rng.choice(["S", "M", "L"], 300), categories=["S", "M", "L"], ordered=True)
    frame = pd.DataFrame({"size": size, "colour": pd.Categorical(rng.choice(["red", "blue"], 300))})
    y = (frame["size"] == "L").to_numpy().astype(int)
    model = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1, n_jobs=1, min_data_per_group=5).fit(frame, y)
    with pytest.warns(UserWarning, match="not which columns they belong to"):
        ensemble = from_lightgbm(model)
    assert ensemble.feature_categories is None
    np.testing.assert_array_equal(ensemble.predict_proba(frame), model.predict_proba(frame))


def test_infinite_thresholds_survive_collapse_and_export():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    missing = rng.random(400) < 0.4
    X[missing, 0] = np.nan  # LightGBM separates NaN from every number with threshold=inf
    model = lgb.LGBMRegressor(n_estimators=2, num_leaves=3, verbose=-1, n_jobs=1).fit(
        X, missing + 0.1 * rng.normal(size=400)
    )
    ensemble = from_lightgbm(model)
    assert np.isinf(ensemble.trees[0].threshold[0])
    collapsed = btt.collapse(ensemble, {1: [1]})
    rows = np.vstack([X, [[np.inf, 0.0], [-np.inf, 0.0], [np.nan, np.nan], [1e308, 1.0]]])
    np.testing.assert_array_equal(to_lightgbm(collapsed).predict(rows), collapsed.predict(rows))
