"""The split nodes' pictures of categorical splits: what the tree view sends
(one count per category of the rows reaching the node, stacked by class) and
the static picture drawn from it."""

import itertools

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("anywidget")

from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.widgets import TreeView, _payload  # noqa: E402


@pytest.fixture(scope="module")
def monk_like():
    rows = list(itertools.product(range(3), range(3), range(2), range(3), range(4), range(2)))
    X = pd.DataFrame(rows, columns=["a1", "a2", "a3", "a4", "a5", "a6"])
    y = ((X.a1 == X.a2) | (X.a5 == 0)).astype(int).to_numpy()
    return X, y


def category_columns(payload):
    series = payload["hist_series"]
    return (
        _payload.decode_column(payload, "hist_index", np.int32),
        _payload.decode_column(payload, "hist_cat_start", np.int32),
        _payload.decode_column(payload, "hist_cat_value", np.float64),
        _payload.decode_column(payload, "hist_cat_counts", np.uint32).reshape(-1, series),
        _payload.decode_column(payload, "hist_cat_other", np.uint32),
    )


def check_category_counts(view, labels=None, classes=None):
    """Every categorical split node's counts are the rows of X reaching it,
    per category (int(x)) and class of y; its numeric bins are empty."""
    payload = view.canvas.tree
    tree = view.ensemble.trees[view.selected_tree]
    index, start, values, counts, other = category_columns(payload)
    numeric = _payload.decode_column(payload, "hist_counts", np.uint32).reshape(-1, payload["hist_bins"])
    missing = _payload.decode_column(payload, "hist_missing", np.uint32)
    reaching = view.ensemble.subset([view.selected_tree]).decision_path(view.X)[0].toarray().astype(bool)
    checked = 0
    for node in np.flatnonzero(tree.children_left != -1):
        k = index[node]
        rows = reaching[:, node]
        x = np.asarray(view.X, dtype=np.float64)[rows, tree.feature[node]]
        if not tree.is_categorical[node]:
            assert start[k] == start[k + 1], f"numeric node {node} has categories"
            continue
        checked += 1
        assert numeric[k].sum() == 0, f"categorical node {node} counted in numeric bins"
        shown = values[start[k] : start[k + 1]]
        finite = x[np.isfinite(x)]
        np.testing.assert_array_equal(shown, np.unique(np.trunc(finite)))  # one bar per category, ascending
        here = counts[start[k] : start[k + 1]]
        assert here.sum() + other[k] + missing[k] == rows.sum()
        for b, category in enumerate(shown):
            in_category = np.isfinite(x) & (np.trunc(x) == category)
            if classes is None:
                assert here[b, 0] == in_category.sum()
            else:
                for c, label in enumerate(classes):
                    assert here[b, c] == np.sum(in_category & (labels[rows] == label)), (node, category, label)
    return checked


def test_a_multiway_node_sends_one_count_per_category_by_class(monk_like):
    X, y = monk_like
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=80, random_state=0).fit(X, y)
    view = TreeView(tsdt, X, y)
    assert check_category_counts(view, y, view.ensemble.classes_) >= 3
    # the multiway root: its three categories of a1, each with its rows by class
    index, start, values, counts, _ = category_columns(view.canvas.tree)
    k = index[0]
    np.testing.assert_array_equal(values[start[k] : start[k + 1]], [0, 1, 2])
    np.testing.assert_array_equal(counts[start[k] : start[k + 1]], [[72, 72], [72, 72], [72, 72]])


def test_histogram_gradient_boosting_categorical_splits_count_per_category():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 6, 600), rng.normal(size=600)]).astype(np.float64)
    X[::17, 0] = np.nan
    y = (np.isin(X[:, 0], [1, 4]) ^ (X[:, 1] > 0.8)).astype(int)
    model = HistGradientBoostingClassifier(max_iter=3, categorical_features=[0], random_state=0).fit(X, y)
    view = TreeView(model, X, y)
    assert check_category_counts(view, y, view.ensemble.classes_) >= 1


def test_lightgbm_categorical_splits_count_per_category():
    from ..optional import lgb

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"colour": pd.Categorical(rng.integers(0, 7, 800)), "size": rng.normal(size=800)})
    y = (X["colour"].isin([2, 5]) ^ (X["size"] > 1)).astype(int).to_numpy()
    model = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, min_data_per_group=5, cat_smooth=1, verbose=-1)
    model.fit(X, y)
    view = TreeView(model, X, y)
    assert check_category_counts(view, y, view.ensemble.classes_) >= 1


def test_a_node_with_many_categories_draws_those_with_the_most_rows(monkeypatch, monk_like):
    X, y = monk_like
    X = X.copy()
    X["a5"] = X["a5"] + 10 * X["a4"]  # 12 categories
    tsdt = btt.TSDTClassifier(lambda_=0.001, max_iter=40, random_state=0).fit(X, y)
    monkeypatch.setattr(_payload, "HISTOGRAM_MAX_CATEGORIES", 2)
    view = TreeView(tsdt, X, y)
    tree = view.ensemble.trees[0]
    index, start, values, counts, other = category_columns(view.canvas.tree)
    reaching = view.ensemble.decision_path(view.X)[0].toarray().astype(bool)
    cut = 0
    for node in np.flatnonzero((tree.children_left != -1) & (tree.is_categorical == 1)):
        k = index[node]
        x = np.trunc(np.asarray(view.X, dtype=np.float64)[reaching[:, node], tree.feature[node]])
        seen, rows = np.unique(x, return_counts=True)
        assert start[k + 1] - start[k] == min(2, seen.size)
        kept = counts[start[k] : start[k + 1]].sum(axis=1)
        assert kept.sum() + other[k] == x.size
        if seen.size > 2:
            cut += 1
            assert kept.min() >= np.sort(rows)[-2]  # the two categories with the most rows
    assert cut


def test_regression_sends_the_mean_of_y_per_category():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 5, 500), rng.normal(size=500)]).astype(np.float64)
    target = np.array([0.0, 3.0, 1.0, 5.0, 2.0])[X[:, 0].astype(int)] + 0.1 * X[:, 1]
    model = HistGradientBoostingRegressor(max_iter=2, max_depth=2, categorical_features=[0], random_state=0)
    view = TreeView(model.fit(X, target), X, target)
    tree = view.ensemble.trees[0]
    index, start, values, _, _ = category_columns(view.canvas.tree)
    means = _payload.decode_column(view.canvas.tree, "hist_cat_target", np.float32)
    reaching = view.ensemble.subset([0]).decision_path(view.X)[0].toarray().astype(bool)
    checked = 0
    for node in np.flatnonzero((tree.children_left != -1) & (tree.is_categorical == 1)):
        k = index[node]
        for e in range(start[k], start[k + 1]):
            rows = reaching[:, node] & (X[:, 0] == values[e])
            np.testing.assert_allclose(means[e], target[rows].mean(), rtol=1e-5)
            checked += 1
    assert checked >= 2


def test_the_saved_picture_draws_one_bar_per_category(monk_like):
    X, y = monk_like
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=80, random_state=0).fit(X, y)
    view = TreeView(tsdt, X)  # one series: one rectangle per category
    svg = view.picture(max_depth=2)
    import xml.etree.ElementTree as ElementTree

    namespace = "{http://www.w3.org/2000/svg}"
    root = ElementTree.fromstring(svg)
    groups = {group.get("data-node"): group for group in root.iter(f"{namespace}g") if group.get("data-node")}
    bars = [rect for rect in groups["0"].iter(f"{namespace}rect") if rect.get("class") == "btt-category-bar"]
    assert len(bars) == 3  # a1 has three categories
    heights = {round(float(rect.get("height")), 6) for rect in bars}
    assert len(heights) == 1  # 144 rows each


def test_the_details_pane_histogram_of_a_categorical_node_counts_per_category(monk_like):
    X, y = monk_like
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=80, random_state=0).fit(X, y)
    view = TreeView(tsdt, X, y, row=5)
    histogram = view.node_histogram(0)
    assert histogram["edges"] is None and histogram["kind"] == "classes"
    assert histogram["categories"] == [0.0, 1.0, 2.0]
    assert histogram["counts"] == [[72, 72, 72], [72, 72, 72]]  # [class][category]
    assert histogram["row_value"] == float(X.iloc[5, 0]) and histogram["threshold"] is None
    assert TreeView(tsdt, X).node_histogram(0)["counts"] == [[144, 144, 144]]  # without y: rows
