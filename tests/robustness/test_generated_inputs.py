"""Every public entry point, fed the inputs that have gone wrong before.

Each case is an (entry point, input variant) pair, generated from two tables:
the variants of one small data set that must read exactly like the canonical
input (categories listed in another order, a test frame lacking a category or
listing one more, nullable dtypes, int64 beyond 2**53, longdouble, sparse rows
with values below LightGBM's zero threshold, non-ASCII column names) or that
must be refused with a documented error (duplicate column names); and the
entry points, each compared with the native library on the same input (or
with its own answer on the canonical input where it has no native twin).
Small models and few rows: the whole file runs in seconds.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from tests.optional import lgb, xgb

N_ROWS = 160
KINDS = ["a", "b", "c"]
BIG = 2**60


def _data():
    rng = np.random.default_rng(41)
    frame = pd.DataFrame(
        {
            "größe": rng.normal(size=N_ROWS),
            "n°": rng.integers(0, 5, size=N_ROWS).astype(np.float64),
            "kind": pd.Categorical(rng.choice(KINDS, size=N_ROWS), categories=KINDS),
        }
    )
    y = ((frame["größe"] > 0) ^ (frame["kind"] == "b") ^ (frame["n°"] > 2)).astype(int).to_numpy()
    return frame, y


FRAME, Y = _data()


# ------------------------------------------------------------------ variants
# name -> frame -> (variant, rows of the canonical frame it equals)
def _recategorized(frame, categories):
    return frame.assign(kind=pd.Categorical(frame["kind"].astype(str), categories=categories))


FRAME_VARIANTS = {
    "reordered categories": lambda f: (_recategorized(f, ["c", "a", "b"]), slice(None)),
    "missing category": lambda f: (
        _recategorized(f[f["kind"] != "a"], None).reset_index(drop=True),  # pandas infers ["b", "c"]
        (f["kind"] != "a").to_numpy(),
    ),
    "extra category": lambda f: (_recategorized(f, ["a", "b", "c", "zz"]), slice(None)),
    "nullable dtypes": lambda f: (
        f.assign(**{"größe": f["größe"].astype("Float64"), "n°": f["n°"].astype("Int64")}),
        slice(None),
    ),
}
REFUSED_FRAMES = {
    "duplicate column names": (
        lambda f: f.set_axis(["größe", "größe", "kind"], axis=1),
        btt.DataError,
        r"duplicate column names \['größe'\]",
    ),
}


def _numeric():
    rng = np.random.default_rng(43)
    X = rng.normal(size=(N_ROWS, 3))
    X[rng.random(X.shape) < 0.4] = 0.0
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


X_NUM, Y_NUM = _numeric()
TINY = np.float32(1e-35)


def _tiny_sparse(X):
    X = X.copy()
    zeros = np.argwhere(X == 0)[::2]
    X[zeros[:, 0], zeros[:, 1]] = np.resize([TINY / 2, -TINY / 3, TINY, -TINY, 2 * TINY], len(zeros))
    return sp.csr_matrix(X)


ARRAY_VARIANTS = {
    "longdouble": lambda X: X.astype(np.longdouble),
    "int64 beyond 2**53": lambda X: (np.round(X * 4) * 2**58 + BIG).astype(np.int64),
    "sparse with tiny values": _tiny_sparse,
    "nullable Float64 frame": lambda X: pd.DataFrame(X, columns=["x0", "x1", "x2"]).astype("Float64"),
}


# -------------------------------------------------------------- the models
def _frame_models():
    """Models trained on FRAME (categorical 'kind', non-ASCII names)."""
    return {
        "sklearn HistGradientBoosting": HistGradientBoostingClassifier(
            max_iter=5, max_depth=3, categorical_features="from_dtype", random_state=0
        ).fit(FRAME, Y),
        "LightGBM": lgb.LGBMClassifier(
            n_estimators=5, num_leaves=7, min_child_samples=5, verbose=-1, random_state=0
        ).fit(FRAME, Y),
        "XGBoost": xgb.XGBClassifier(
            n_estimators=5, max_depth=3, enable_categorical=True, tree_method="hist", random_state=0
        ).fit(FRAME, Y),
    }


def _array_model(library, X, y):
    columns = ["x0", "x1", "x2"]
    frame = pd.DataFrame(X, columns=columns)
    if library == "sklearn":
        return DecisionTreeClassifier(max_depth=6, random_state=0).fit(frame, y)
    if library == "LightGBM":
        return lgb.LGBMClassifier(n_estimators=5, num_leaves=7, min_child_samples=3, verbose=-1, random_state=0).fit(
            frame, y
        )
    return xgb.XGBClassifier(n_estimators=5, max_depth=3, random_state=0).fit(frame, y)


_MODELS = {}


def frame_model(name):
    if not _MODELS:
        _MODELS.update(_frame_models())
    return _MODELS[name]


def _native_for(library, model, X):
    """The native library's probabilities on X as it reads it."""
    if library == "XGBoost" and sp.issparse(X):
        X = X.toarray()
        X[X == 0] = np.nan  # XGBoost reads entries a CSR matrix leaves out as missing
    if library in ("LightGBM", "XGBoost") and isinstance(X, np.ndarray) and X.dtype == np.longdouble:
        X = X.astype(np.float32 if library == "XGBoost" else np.float64)  # they take no longdouble
    if isinstance(X, pd.DataFrame) and library == "XGBoost":
        X = X.astype(np.float32)
    if isinstance(X, np.ndarray) and library != "XGBoost":
        X = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    with warnings.catch_warnings():
        # a sparse matrix has no column names; the model was fitted on a frame that had them
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        return model.predict_proba(X)


# ------------------------------------------------ import and predict: native
@pytest.mark.parametrize("variant", sorted(FRAME_VARIANTS))
@pytest.mark.parametrize("library", ["sklearn HistGradientBoosting", "LightGBM", "XGBoost"])
def test_frames_predict_as_the_native_library(library, variant):
    model = frame_model(library)
    frame, _ = FRAME_VARIANTS[variant](FRAME)
    ensemble = btt.from_model(model)
    if library == "XGBoost" and variant == "extra category":
        with pytest.raises(btt.DataError, match=r"categories the XGBoost model never saw in training \(\['zz'\]\)"):
            ensemble.predict_proba(frame)
        return
    np.testing.assert_allclose(ensemble.predict_proba(frame), model.predict_proba(frame), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(ensemble.predict(frame), model.predict(frame))


@pytest.mark.parametrize("library", ["sklearn HistGradientBoosting", "LightGBM", "XGBoost"])
def test_frames_with_duplicate_columns_are_refused(library):
    make, error, message = REFUSED_FRAMES["duplicate column names"]
    ensemble = btt.from_model(frame_model(library))
    with pytest.raises(error, match=message):
        ensemble.predict(make(FRAME))


@pytest.mark.parametrize("variant", sorted(ARRAY_VARIANTS))
@pytest.mark.parametrize("library", ["sklearn", "LightGBM", "XGBoost"])
def test_arrays_predict_as_the_native_library(library, variant):
    X = ARRAY_VARIANTS[variant](X_NUM)
    if variant == "int64 beyond 2**53":
        model = _array_model(library, np.asarray(X, dtype=np.float64), Y_NUM)
    else:
        model = _array_model(library, X_NUM, Y_NUM)
    ensemble = btt.from_model(model)
    native = _native_for(library, model, X)
    np.testing.assert_allclose(ensemble.predict_proba(X), native, rtol=0, atol=1e-6)


# --------------------------------------- entry points without a native twin
def _same_as_canonical(run, variant):
    """run(frame) on a variant equals run on the canonical rows it stands for."""
    frame, rows = FRAME_VARIANTS[variant](FRAME)
    return run(frame), run(FRAME[rows].reset_index(drop=True) if not isinstance(rows, slice) else FRAME)


@pytest.mark.parametrize("variant", ["reordered categories", "nullable dtypes", "extra category"])
def test_prune_reads_every_variant_like_the_canonical_frame(variant):
    model = frame_model("LightGBM")
    frame, _ = FRAME_VARIANTS[variant](FRAME)
    ours = btt.prune(model, frame, Y, tolerance=0.05, progress=False, random_state=0)
    canonical = btt.prune(model, FRAME, Y, tolerance=0.05, progress=False, random_state=0)
    assert ours.ensemble.n_leaves == canonical.ensemble.n_leaves
    np.testing.assert_array_equal(ours.ensemble.predict_proba(FRAME), canonical.ensemble.predict_proba(FRAME))


@pytest.mark.parametrize("variant", ["reordered categories", "nullable dtypes"])
def test_bandit_prune_reads_every_variant_like_the_canonical_frame(variant):
    model = frame_model("XGBoost")
    frame, _ = FRAME_VARIANTS[variant](FRAME)
    settings = dict(n_rounds=40, min_depth=1, progress=False, random_state=0)
    ours = btt.bandit_prune(model, frame, Y, **settings)
    canonical = btt.bandit_prune(model, FRAME, Y, **settings)
    assert ours.n_pruned == canonical.n_pruned
    np.testing.assert_array_equal(ours.ensemble.predict_proba(FRAME), canonical.ensemble.predict_proba(FRAME))


@pytest.mark.parametrize("entry", ["prune", "bandit_prune", "leaf_medoids"])
def test_entry_points_refuse_duplicate_columns(entry):
    make, error, message = REFUSED_FRAMES["duplicate column names"]
    model = frame_model("LightGBM")
    call = {
        "prune": lambda: btt.prune(model, make(FRAME), Y, progress=False),
        "bandit_prune": lambda: btt.bandit_prune(model, make(FRAME), Y, n_rounds=10, progress=False),
        "leaf_medoids": lambda: btt.leaf_medoids(model, make(FRAME)),
    }[entry]
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("variant", ["nullable dtypes", "reordered categories"])
def test_leaf_medoids_reads_every_variant_like_the_canonical_frame(variant):
    model = frame_model("LightGBM")
    frame, _ = FRAME_VARIANTS[variant](FRAME)
    ours = btt.leaf_medoids(model, frame, n_medoids=2)
    canonical = btt.leaf_medoids(model, FRAME, n_medoids=2)
    assert str(ours) == str(canonical)


@pytest.mark.parametrize("variant", ["reordered categories", "missing category", "extra category"])
def test_tsdt_reads_every_variant_like_the_canonical_frame(variant):
    codes = FRAME.assign(
        **{
            "größe": pd.Categorical(np.where(FRAME["größe"] > 0, "+", "-")),
            "n°": pd.Categorical(FRAME["n°"].astype(int)),
        }
    )
    model = btt.TSDTClassifier(max_iter=300, random_state=0).fit(codes, Y)
    frame, rows = FRAME_VARIANTS[variant](codes)
    canonical = codes if isinstance(rows, slice) else codes[rows].reset_index(drop=True)
    np.testing.assert_array_equal(model.predict(frame), model.predict(canonical))
    make, error, message = REFUSED_FRAMES["duplicate column names"]
    with pytest.raises(error, match=r"duplicate column names"):
        model.predict(make(codes))


@pytest.mark.parametrize("variant", ["nullable Float64 frame", "longdouble", "int64 beyond 2**53"])
def test_discretize_and_mabsplit_read_every_variant_like_its_float_copy(variant):
    X = ARRAY_VARIANTS[variant](X_NUM)
    as_float = np.asarray(pd.DataFrame(X).astype(np.float64)) if isinstance(X, pd.DataFrame) else X.astype(np.float64)

    def codes(binned):
        return binned.apply(lambda column: column.cat.codes).to_numpy() if hasattr(binned, "columns") else binned

    np.testing.assert_array_equal(codes(btt.discretize(X, n_bins=3)), codes(btt.discretize(as_float, n_bins=3)))
    for estimator in (
        btt.MABSplitTreeClassifier(max_depth=3, random_state=0),
        btt.MABSplitForestClassifier(n_estimators=2, max_depth=3, random_state=0),
    ):
        labels = Y_NUM
        ours = estimator.fit(X, labels).predict(X)
        canonical = estimator.fit(as_float.astype(np.float32), labels).predict(as_float.astype(np.float32))
        np.testing.assert_array_equal(ours, canonical)


def test_mabsplit_refuses_duplicate_columns():
    make, error, message = REFUSED_FRAMES["duplicate column names"]
    frame = make(FRAME.drop(columns="kind").assign(kind=FRAME["kind"].cat.codes.astype(float)))
    with pytest.raises(error, match=message):
        btt.MABSplitTreeClassifier(max_depth=2, random_state=0).fit(frame, Y)
