"""discretize (quantile bins, a model's own thresholds) and compare_trees."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, MissingDependencyError, ParameterError
from bandit_tree_tools.tree import Ensemble, Source, make_tree
from bandit_tree_tools.tsdt import Bins, TSDTClassifier, compare_trees, discretize
from tests.optional import lgb, xgb

from .conftest import or_of_equal


def test_quantile_bins_are_monotone_and_reusable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[5, 1] = np.nan
    codes, bins = discretize(X, n_bins=4, return_bins=True)
    assert isinstance(bins, Bins) and codes.dtype == np.int64
    for j in range(3):
        finite = ~np.isnan(X[:, j])
        order = np.argsort(X[finite, j])
        assert np.all(np.diff(codes[finite, j][order]) >= 0)
        assert set(codes[finite, j]) == set(range(4))
    assert codes[5, 1] == len(bins.thresholds[1]) + 1  # missing: its own last code
    np.testing.assert_array_equal(discretize(X[:50], bins=bins), codes[:50])


def test_frames_get_interval_categories_and_keep_categorical_columns():
    frame = pd.DataFrame({"x": [0.1, 0.5, 0.9, np.nan, 0.3, 0.7], "c": pd.Categorical(list("abcabc"))})
    out = discretize(frame, n_bins=2)
    assert str(out["x"].dtype) == "category"
    assert list(out["x"].cat.categories)[-1] == "missing"
    assert out["x"].iloc[3] == "missing"
    assert out["c"].equals(frame["c"])
    model = TSDTClassifier(max_iter=10, batch_size=3, random_state=0).fit(out, [0, 1, 1, 0, 0, 1])
    assert model.predict(out).shape == (6,)


def test_model_thresholds_separate_exactly_what_the_model_separates():
    X, y = load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    codes, bins = discretize(X, model, return_bins=True)
    assert bins.input_dtype == ensemble.input_dtype and bins.split_rule == ensemble.split_rule
    # probe rows on, just below and just above every threshold
    probe = [X]
    for j, cuts in enumerate(bins.thresholds):
        for cut in cuts:
            for value in (
                cut,
                np.nextafter(np.float32(cut), np.float32(-np.inf)),
                np.nextafter(np.float32(cut), np.float32(np.inf)),
            ):
                rows = X[:20].copy()
                rows[:, j] = value
                probe.append(rows)
    probe = np.vstack(probe)
    probe_codes = discretize(probe, bins=bins)
    leaves = ensemble.apply(probe)[:, 0]
    groups = {}
    for code_row, leaf in zip(map(tuple, probe_codes), leaves):
        groups.setdefault(code_row, set()).add(int(leaf))
    assert all(len(found) == 1 for found in groups.values())
    unused = [j for j in range(4) if len(bins.thresholds[j]) == 0]
    for j in unused:
        assert np.all(codes[:, j] == 0)


def test_strict_less_than_rule_is_respected():
    tree = make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.5, -2, -2], [[0.0], [1.0], [2.0]])
    ensemble = Ensemble(
        trees=(tree,),
        task="regression",
        n_features_in_=1,
        n_outputs=1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="sum",
        base_score=0.0,
        link="identity",
        source=Source("xgboost", "XGBRegressor"),
        split_rule="lt",
    )
    codes = discretize(np.array([[0.4], [0.5], [0.6]]), ensemble)
    np.testing.assert_array_equal(codes[:, 0], [0, 1, 1])


def _edge_rows(X, bins, rng):
    """``X``'s rows, then rows with one value on, just below and just above
    each cut (in float64 and in float32), and missing values."""
    probe = [X]
    for j, cuts in enumerate(bins.thresholds):
        for cut in cuts[np.isfinite(cuts)]:  # scikit-learn cuts at infinity to split missing values off
            for value in (
                cut,
                np.nextafter(cut, -np.inf),
                np.nextafter(cut, np.inf),
                np.nextafter(np.float32(cut), np.float32(-np.inf)),
                np.nextafter(np.float32(cut), np.float32(np.inf)),
            ):
                rows = X[rng.choice(len(X), 5)].copy()
                rows[:, j] = value
                probe.append(rows)
    missing = X[:30].copy()
    missing[rng.random(missing.shape) < 0.3] = np.nan
    return np.vstack(probe + [missing])


@pytest.mark.parametrize("library", ["sklearn", "lightgbm", "lightgbm, zero as missing", "xgboost"])
def test_inverse_rows_route_as_the_rows_their_codes_were_cut_from(library):
    """Each library's comparison (<= on float32, <= on float64, < on float32),
    and LightGBM's zero that goes where NaN goes."""
    X, y = load_iris(return_X_y=True)
    X = X + np.random.default_rng(0).normal(scale=0.013, size=X.shape)  # thresholds that float32 does not hold
    X[::17, 2] = np.nan
    X[::5, 3] = 0.0
    if library == "sklearn":
        model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    elif library.startswith("lightgbm"):
        zero = library.endswith("missing")
        model = lgb.LGBMClassifier(
            n_estimators=6, num_leaves=5, min_child_samples=3, zero_as_missing=zero, verbose=-1
        ).fit(X, y)
    else:
        model = xgb.XGBClassifier(n_estimators=6, max_depth=3).fit(X, y)
    ensemble = btt.from_model(model)
    _, bins = discretize(X, model, return_bins=True)
    assert (bins.split_rule, bins.input_dtype) == (ensemble.split_rule, ensemble.input_dtype)
    probe = _edge_rows(X, bins, np.random.default_rng(1))
    rows = bins.inverse(discretize(probe, bins=bins))
    np.testing.assert_array_equal(ensemble.apply(rows), ensemble.apply(probe))
    np.testing.assert_array_equal(ensemble.predict_proba(rows), model.predict_proba(probe))


def test_compare_trees_measures_a_model_of_the_numeric_features_through_its_bins():
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], (y[order] == 2).astype(int)
    frame = pd.DataFrame(X, columns=["sepal length", "sepal width", "petal length", "petal width"])
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(frame[:100], y[:100])
    X_cat, bins = discretize(frame, model, return_bins=True)
    options = {"max_iter": 30, "river": False, "dl85": False, "exact": False}
    table = compare_trees(X_cat[:100], y[:100], X_cat[100:], y[100:], models={"mine": model}, bins=bins, **options)
    row = table.set_index("method").loc["mine"]
    assert row["train_accuracy"] == np.mean(model.predict(frame[:100]) == y[:100])
    assert row["test_accuracy"] == np.mean(model.predict(frame[100:]) == y[100:])
    # without the bins the model would read category codes as its numbers: refused, not a wrong row
    codes = discretize(X, bins=bins)
    with pytest.raises(DataError, match="fitted on other columns.*Pass bins="):
        compare_trees(codes[:100], y[:100], codes[100:], y[100:], models=[model], **options)
    # a model that splits where the bins do not cut
    other = DecisionTreeClassifier(max_depth=3, random_state=0).fit(frame[50:], y[50:])
    with pytest.raises(DataError, match="where the bins do not cut"):
        compare_trees(X_cat[:100], y[:100], X_cat[100:], y[100:], models=[other], bins=bins, **options)
    # bins of another comparison
    _, strict = discretize(X, xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y), return_bins=True)
    with pytest.raises(DataError, match="compares float32 values with 'le'.*'lt'"):
        compare_trees(X_cat[:100], y[:100], X_cat[100:], y[100:], models=[model], bins=strict, **options)
    _, fewer = discretize(X[:, :3], n_bins=3, return_bins=True)
    with pytest.raises(DataError, match="bins were made for 3 columns"):
        compare_trees(X_cat[:100], y[:100], X_cat[100:], y[100:], models=[model], bins=fewer, **options)


def test_compare_trees_takes_the_declared_categories_and_zero_with_the_missing_values():
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], (y[order] == 2).astype(int)
    options = {"max_iter": 20, "river": False, "dl85": False, "exact": False}
    # a tree fitted on codes 0-5 measured on rows whose codes stop at 2: the declared categories count
    codes = pd.DataFrame({"a": pd.Categorical(np.minimum(np.arange(150) % 6, 2), categories=range(6))})
    fitted = pd.DataFrame({"a": np.arange(150) % 6})
    tree = DecisionTreeClassifier(random_state=0).fit(fitted, np.arange(150) % 6 >= 5)
    assert tree.tree_.threshold[0] == 4.5
    table = compare_trees(codes, y, codes, y, models={"codes": tree}, **options)
    assert "codes" in set(table["method"])
    # LightGBM sending zero with the missing values, and bins without the cuts around zero
    X[::4, 3] = 0.0
    model = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, zero_as_missing=True, verbose=-1).fit(X, y)
    X_cat, bins = discretize(X, model, return_bins=True)
    table = compare_trees(X_cat, y, X_cat, y, models={"zero": model}, bins=bins, **options)
    assert table.set_index("method").loc["zero", "train_accuracy"] == np.mean(model.predict(X) == y)
    no_zero = Bins(
        tuple(t if t is None else t[np.abs(t) > 1e-30] for t in bins.thresholds), bins.split_rule, bins.input_dtype
    )
    assert any(len(a) != len(b) for a, b in zip(no_zero.thresholds, bins.thresholds))
    coarser = discretize(X, bins=no_zero)
    with pytest.raises(DataError, match=r"\(zero with the missing values\), where the bins do not cut"):
        compare_trees(coarser, y, coarser, y, models=[model], bins=no_zero, **options)


def test_inverse_refuses_codes_its_bins_do_not_make():
    _, bins = discretize(np.arange(12.0).reshape(6, 2), n_bins=3, return_bins=True)
    with pytest.raises(DataError, match="column 1 holds codes outside 0..3"):
        bins.inverse(np.array([[0, 4]]))
    with pytest.raises(DataError, match="column 0 holds codes outside"):
        bins.inverse(np.array([[0.5, 0]]))
    np.testing.assert_array_equal(np.isnan(bins.inverse(np.array([[3, np.nan]]))), [[True, True]])


def test_discretize_errors():
    with pytest.raises(DataError, match="empty"):
        discretize(np.empty((0, 2)))
    with pytest.raises(DataError, match="not numeric"):
        discretize(pd.DataFrame({"s": ["a", "b"]}))
    _, bins = discretize(np.arange(10.0).reshape(5, 2), return_bins=True)
    with pytest.raises(DataError, match="columns"):
        discretize(np.zeros((3, 3)), bins=bins)
    # a frame's columns by name: in another order each would take another column's cuts, silently
    frame = pd.DataFrame({"a": np.arange(8.0), "b": np.arange(8.0) * 100})
    _, named = discretize(frame, n_bins=2, return_bins=True)
    with pytest.raises(
        DataError, match=r"another order than when the bins were cut; reorder them with X\[\['a', 'b'\]"
    ):
        discretize(frame[["b", "a"]], bins=named)
    with pytest.raises(DataError, match=r"missing \['a'\], unexpected \['z'\]"):
        discretize(frame.rename(columns={"a": "z"}), bins=named)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(frame, [0, 0, 1, 1, 0, 0, 1, 1])
    with pytest.raises(DataError, match="another order than at training time"):
        discretize(frame[["b", "a"]], model)
    # numpy would cast these silently (the imaginary part dropped, dates counted in days)
    rows = np.arange(10.0).reshape(5, 2)
    with pytest.raises(DataError, match="X has complex values"):
        discretize(rows + 1j)
    with pytest.raises(DataError, match="X has datetime64 values"):
        discretize(rows.astype("datetime64[D]"))
    with pytest.raises(DataError, match="column 'd' has timedelta64 values"):
        discretize(pd.DataFrame({"d": pd.to_timedelta(rows[:, 0], unit="s")}))
    scipy_sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(DataError, match=r"sparse matrix.*X.toarray\(\)"):
        discretize(scipy_sparse.csr_matrix(rows))


def test_compare_trees_table():
    X, y = or_of_equal(n_rows=240, seed=0)
    X_test, y_test = or_of_equal(n_rows=100, seed=1)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    table = compare_trees(
        X, y, X_test, y_test, lambdas=(0.01, 0.05), models={"depth-2 CART": cart}, max_iter=200, river=False, dl85=False
    )
    assert list(table.columns) == [
        "method",
        "lambda_",
        "train_accuracy",
        "test_accuracy",
        "n_leaves",
        "n_splits",
        "objective",
        "seconds",
        "note",
    ]
    methods = set(table["method"])
    assert {"optimistic TSDT", "Fast-TSDT", "TSDT", "exact", "CART", "CART+CCP", "depth-2 CART"} <= methods
    for lambda_, group in table.groupby("lambda_"):
        by_method = group.set_index("method")
        np.testing.assert_allclose(group["objective"], group["train_accuracy"] - lambda_ * group["n_splits"])
        # the exact optimum of the multiway objective beats every search variant
        for search in ("optimistic TSDT", "Fast-TSDT", "TSDT"):
            assert by_method.loc["exact", "objective"] >= by_method.loc[search, "objective"] - 1e-12
        assert by_method.loc["depth-2 CART", "n_leaves"] == cart.get_n_leaves()


def test_compare_trees_with_river():
    pytest.importorskip("river")
    X, y = or_of_equal(n_rows=120, seed=0)
    table = compare_trees(X, y, X, y, max_iter=50, exact=False, stream_passes=2)
    assert {"VFDT (river)", "EFDT (river)"} <= set(table["method"])


def test_compare_trees_names_the_extra_of_a_missing_package():
    try:
        import dl85  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("dl85 is installed")
    X, y = or_of_equal(n_rows=60)
    with pytest.raises(MissingDependencyError, match=r"bandit-tree-tools\[dl85\]"):
        compare_trees(X, y, X, y, max_iter=10, exact=False, river=False, dl85=True)


def test_compare_trees_takes_a_legacy_random_state_like_an_int():
    X, y = or_of_equal(n_rows=80, seed=0)
    legacy = np.random.RandomState(0)
    table = compare_trees(X, y, X, y, max_iter=30, exact=False, river=False, dl85=False, random_state=legacy)
    # the RandomState gives one draw, which seeds every method of the table like an int would
    seed = int(np.random.default_rng(np.random.RandomState(0).randint(2**31 - 1)).integers(2**31 - 1))
    again = compare_trees(X, y, X, y, max_iter=30, exact=False, river=False, dl85=False, random_state=seed)
    columns = ["method", "train_accuracy", "n_leaves", "n_splits"]
    assert table[columns].equals(again[columns])
    with pytest.raises(ParameterError, match="random_state of compare_trees must be a random state"):
        compare_trees(X, y, X, y, max_iter=30, exact=False, river=False, dl85=False, random_state="seed")


@pytest.mark.parametrize(
    "keywords, message",
    [
        # () returned an empty table, ("a",) raised float()'s ValueError, bad depths waited for DL8.5
        (dict(lambdas=()), r"lambdas of compare_trees must hold one or more finite numbers >= 0 .*got \[\]$"),
        (dict(lambdas=("a",)), r"lambdas of compare_trees must hold one or more finite numbers >= 0"),
        (dict(lambdas=(0.01, float("nan"))), r"lambdas of compare_trees must hold .*got \[0.01, nan\]"),
        (dict(lambdas=(-1,)), r"lambdas of compare_trees must hold one or more finite numbers >= 0"),
        (dict(dl85_depths=(0,)), r"dl85_depths of compare_trees must hold one or more ints >= 1, got \[0\]"),
        (dict(dl85_depths=("a",)), r"dl85_depths of compare_trees must hold one or more ints >= 1"),
    ],
)
def test_compare_trees_refuses_bad_lambdas_and_depths(keywords, message):
    X, y = or_of_equal(n_rows=60, seed=0)
    with pytest.raises(ParameterError, match=message):
        compare_trees(X, y, X, y, max_iter=10, exact=False, river=False, dl85=False, **keywords)


def test_compare_trees_former_n_iter_warns_and_matches_max_iter():
    X, y = or_of_equal(n_rows=60, seed=0)
    options = {"exact": False, "river": False, "dl85": False, "random_state": 3}
    with pytest.warns(FutureWarning, match="now max_iter"):
        old = compare_trees(X, y, X, y, n_iter=20, **options)
    new = compare_trees(X, y, X, y, max_iter=20, **options)
    assert old[["method", "train_accuracy", "n_splits"]].equals(new[["method", "train_accuracy", "n_splits"]])
