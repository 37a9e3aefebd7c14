"""The adapter table: one adapter per library, found by name, model,
ensemble or file suffix; native files round trip and predict like the ensemble."""

import contextlib

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.interop import ADAPTERS, adapter_for, adapter_for_path
from tests.optional import lgb as lightgbm  # noqa: E402
from tests.optional import xgb as xgboost  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=300, n_features=6, random_state=0)


def fitted(library, X, y):
    if library == "sklearn":
        return RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    if library == "lightgbm":
        return lightgbm.LGBMClassifier(n_estimators=8, num_leaves=7, verbose=-1, random_state=0).fit(X, y)
    return xgboost.XGBClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, y)


def test_one_adapter_per_library_with_its_default_extension_first():
    assert sorted(ADAPTERS) == ["lightgbm", "sklearn", "xgboost"]
    assert adapter_for("lightgbm").extensions == (".txt",)
    assert adapter_for("xgboost").extensions[:2] == (".json", ".ubj")
    assert adapter_for("scikit-learn").extensions[:2] == (".joblib", ".pkl")
    for name, adapter in ADAPTERS.items():
        assert adapter.library == name
        for suffix in adapter.extensions:
            assert adapter_for_path(f"model{suffix.upper()}") is adapter


@pytest.mark.parametrize("library", ["sklearn", "lightgbm", "xgboost"])
def test_adapter_found_from_model_ensemble_and_export(data, library):
    X, y = data
    model = fitted(library, X, y)
    adapter = adapter_for(model)
    assert adapter.library == library
    ensemble = adapter.from_native(model)
    assert adapter_for(ensemble) is adapter
    assert adapter_for(adapter.to_native(ensemble)) is adapter
    assert adapter_for(model.get_booster() if library == "xgboost" else getattr(model, "booster_", model)) is adapter


@pytest.mark.parametrize("library", ["sklearn", "lightgbm", "xgboost"])
def test_saved_files_load_back_and_predict_like_the_ensemble(data, library, tmp_path):
    X, y = data
    model = fitted(library, X, y)
    adapter = adapter_for(library)
    ensemble = btt.collapse(btt.from_model(model), {0: [0]})  # an edited model survives the file
    native = adapter.to_native(ensemble)
    for suffix in adapter.extensions:
        path = adapter.save(native, tmp_path / f"model{suffix}")
        with pytest.warns(UserWarning, match="unpickles") if library == "sklearn" else contextlib.nullcontext():
            loaded = adapter.load(path)
        raw = adapter.predict_native(loaded, X, raw=True)
        assert raw.shape == (len(X), ensemble.n_outputs if library != "sklearn" else 2)
        if library == "sklearn":
            np.testing.assert_array_equal(adapter.predict_native(loaded, X), ensemble.predict_proba(X))
        else:
            np.testing.assert_array_equal(raw, ensemble.predict_raw(X))


def test_raw_scores_of_boosting_are_the_decision_function(data):
    X, y = data
    model = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        adapter_for(model).predict_native(model, X, raw=True), btt.from_model(model).predict_raw(X)
    )


def test_unknown_library_suffix_and_object_are_refused():
    with pytest.raises(btt.UnsupportedModelError, match="no adapter for the library 'catboost'"):
        adapter_for("catboost")
    with pytest.raises(btt.UnsupportedModelError, match=r"cannot tell the format of 'model.cbm'.*\.txt \(LightGBM\)"):
        adapter_for_path("model.cbm")
    with pytest.raises(btt.UnsupportedModelError, match="builtins.list.*supported models"):
        adapter_for([1, 2])


def test_wrappers_around_a_tree_model_are_refused_with_the_way_in(data):
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data
    pipeline = make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=3)).fit(X, y)
    with pytest.raises(btt.UnsupportedModelError, match=r"Pipeline.*pass its last step \(pipeline\[-1\]\)"):
        btt.from_model(pipeline)
    search = GridSearchCV(RandomForestClassifier(3, random_state=0), {"max_depth": [2, 3]}, cv=2).fit(X, y)
    with pytest.raises(btt.UnsupportedModelError, match="GridSearchCV.*pass its best_estimator_"):
        btt.prune(search, X, y, progress=False)
    # the way in works: the last step on the transformed rows predicts like the pipeline
    ensemble = btt.from_model(pipeline[-1])
    np.testing.assert_array_equal(ensemble.predict_proba(pipeline[:-1].transform(X)), pipeline.predict_proba(X))


def test_bad_files_raise_the_documented_types(tmp_path):
    with pytest.raises(btt.DataError, match="does not exist"):
        adapter_for("xgboost").load(tmp_path / "absent.json")
    with pytest.raises(btt.DataError, match="does not end in a LightGBM suffix"):
        adapter_for("lightgbm").load(tmp_path / "model.json")
    (tmp_path / "garbage.json").write_text("{not json")
    with pytest.raises(btt.ConversionError, match="is not a readable XGBoost model"):
        adapter_for("xgboost").load(tmp_path / "garbage.json")
    (tmp_path / "garbage.txt").write_text("tree\nversion=v4\n")
    with pytest.raises(btt.ConversionError):
        adapter_for("lightgbm").load(tmp_path / "garbage.txt")
    (tmp_path / "garbage.pkl").write_bytes(b"\x80\x04not a pickle")
    with (
        pytest.warns(UserWarning, match="unpickles"),
        pytest.raises(btt.ConversionError, match="could not be unpickled"),
    ):
        adapter_for("sklearn").load(tmp_path / "garbage.pkl")


@pytest.mark.parametrize("library", ["sklearn", "lightgbm", "xgboost"])
def test_payload_is_one_typed_record_and_old_plain_payloads_still_export(data, library):
    from dataclasses import fields, replace

    from bandit_tree_tools.interop._payload import NATIVE
    from bandit_tree_tools.tree import Source

    X, y = data
    model = fitted(library, X, y)
    ensemble = btt.from_model(model)
    record = ensemble.source.payload[NATIVE]
    assert (
        type(record).__name__
        == {"sklearn": "Sklearn", "lightgbm": "LightGBM", "xgboost": "XGBoost"}[library] + "Payload"
    )
    assert record.template is not None and record.template is not model
    # an ensemble pickled before the records: plain keys, the private copy under the library's old name
    old_name = {"sklearn": "template", "lightgbm": "estimator", "xgboost": "shell"}[library]
    plain = {field.name: getattr(record, field.name) for field in fields(record)}
    plain[old_name] = plain.pop("template")
    if library == "sklearn":
        plain["estimator_template"] = plain.pop("tree_template")
    source = ensemble.source
    old = replace(ensemble, source=Source(source.library, source.estimator, source.version, plain))
    np.testing.assert_array_equal(
        adapter_for(library).predict_native(btt.to_model(old), X, raw=True),
        adapter_for(library).predict_native(btt.to_model(ensemble), X, raw=True),
    )
    assert type(btt.to_model(old)) is type(model)


def test_collapse_hint_is_on_the_source_only(data):
    X, y = data
    model = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
    unknown = btt.from_model(model)
    assert "X=X_train, y=y_train" in unknown.source.collapse_hint
    assert set(unknown.source.payload) == {"native"}
    with pytest.raises(btt.ConversionError, match="X=X_train, y=y_train"):
        btt.collapse(unknown, {0: [0]})
    recomputed = btt.from_model(model, X=X, y=y)
    assert recomputed.source.collapse_hint == "" and "collapse_hint" not in recomputed.source.payload
    assert recomputed.source.payload["native"].recomputed_from_data


def test_from_model_of_a_string_or_path_says_it_wants_a_model_object(tmp_path):
    for not_a_model in ("lightgbm", tmp_path / "model.txt"):
        with pytest.raises(btt.UnsupportedModelError, match="from_model takes a fitted model object.*adapter_for_path"):
            btt.from_model(not_a_model)
