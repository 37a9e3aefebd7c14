"""Python state of MedoidPanel and ComparisonPanel."""

import itertools

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("anywidget")

from sklearn.datasets import load_digits, load_iris  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.widgets import ComparisonPanel, MedoidPanel  # noqa: E402
from bandit_tree_tools.widgets._comparison_panel import trace_svg  # noqa: E402
from bandit_tree_tools.widgets._payload import decode_column  # noqa: E402


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    return model, X, y


# ------------------------------------------------------------------ MedoidPanel
def test_medoids_carry_their_class_and_pixels_their_position(digits):
    model, X, y = digits
    panel = MedoidPanel(model, X, y=y, image_shape=(8, 8), n_medoids=3)
    assert panel.gallery.labels == [str(y[row]) for row in panel.gallery.rows]
    names = panel.tree_view.canvas.feature_names
    assert names[0] == "pixel (row 0, col 0)" and names[13] == "pixel (row 1, col 5)"
    without_y = MedoidPanel(model, X, image_shape=(8, 8), n_medoids=3)
    assert without_y.gallery.labels == []
    # y is the third argument, as in TreeView(model, X, y): it was keyword-only, a TypeError
    positional = MedoidPanel(model, X, y, image_shape=(8, 8), n_medoids=3)
    assert positional.gallery.labels == panel.gallery.labels and positional.error == ""
    named = MedoidPanel(model, X, image_shape=(8, 8), feature_names=[f"p{k}" for k in range(64)])
    assert named.tree_view.canvas.feature_names[5] == "p5"  # the user's names win


def test_gallery_shows_the_medoids_of_the_largest_leaf(digits):
    model, X, y = digits
    panel = MedoidPanel(model, X, y=y, image_shape=(8, 8), n_medoids=3)
    leaves = model.apply(X)
    sizes = {leaf: int((leaves == leaf).sum()) for leaf in np.unique(leaves)}
    largest = max(sizes, key=lambda leaf: (sizes[leaf], -leaf))
    assert panel.leaf_picker.value == largest
    assert {leaf: n for leaf, n in panel.rows_per_leaf.items() if n} == sizes
    expected = btt.leaf_medoids(model, X, n_medoids=3, leaves=[largest], random_state=0)
    assert panel.gallery.rows == expected.medoids[largest].tolist()
    assert sum(panel.gallery.sizes) == sizes[largest]
    prototypes = decode_column({"p": panel.gallery.prototypes}, "p", np.float32, width=64)
    np.testing.assert_array_equal(prototypes, X[expected.medoids[largest]].astype(np.float32))
    assert panel.gallery.image_shape == [8, 8] and panel.gallery.value_range == [0.0, 16.0]
    assert "algorithm" in panel.gallery.info and "distance calls" in panel.gallery.info
    assert panel.tree_view.selected_node == largest  # the tree shows the same leaf


def test_clicking_a_leaf_in_the_tree_shows_its_medoids(digits):
    model, X, y = digits
    panel = MedoidPanel(model, X, n_medoids=2)
    leaves = model.apply(X)
    small = next(leaf for leaf, n in sorted(panel.rows_per_leaf.items(), key=lambda item: item[1]) if 3 <= n <= 12)
    panel.tree_view.canvas.selected_node = small  # a click in the browser
    assert panel.leaf_picker.value == small
    expected = btt.leaf_medoids(model, X, n_medoids=2, leaves=[small], random_state=0)
    assert panel.gallery.rows == expected.medoids[small].tolist()
    assert set(panel.gallery.rows) <= set(np.flatnonzero(leaves == small))
    assert panel.gallery.title.startswith(f"Leaf {small} of tree 0: {panel.rows_per_leaf[small]} rows")
    panel.tree_view.canvas.selected_node = 0
    assert "is a split, not a leaf" in panel.gallery.message


def test_leaf_with_fewer_rows_than_k(digits):
    model, X, y = digits
    panel = MedoidPanel(model, X, n_medoids=5)
    tiny = next(leaf for leaf, n in panel.rows_per_leaf.items() if 0 < n < 5)
    panel.leaf_picker.value = tiny
    assert "fewer than k = 5" in panel.gallery.message
    assert sorted(panel.gallery.rows) == np.flatnonzero(model.apply(X) == tiny).tolist()
    panel.k.value = 1
    assert panel.gallery.n_medoids == 1 and panel.gallery.message == ""


def test_table_mode_uses_feature_names():
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    panel = MedoidPanel(model, X, n_medoids=2)
    assert panel.gallery.image_shape == []
    assert panel.gallery.feature_names == list(X.columns)
    html = panel._repr_mimebundle_()["text/html"]
    assert "sepal length (cm)" in html and "<table" in html and "<script" not in html.lower()


def test_table_shows_the_values_as_x_holds_them_category_labels_not_codes():
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], 400)),
            "size": rng.normal(size=400),
            "year": rng.integers(1990, 2020, 400),
        }
    )
    X.loc[::9, "size"] = np.nan
    y = ((X.colour == "red") ^ (X["size"] > 0)).astype(int)
    model = lightgbm.LGBMClassifier(n_estimators=3, min_child_samples=5, verbose=-1).fit(X, y)
    embedding = np.column_stack([X.colour.cat.codes, X["size"].fillna(0.0), X.year])
    panel = MedoidPanel(model, X, y=y, n_medoids=3, embedding=embedding)
    rows = panel.gallery.rows
    expected = [
        [X.colour.iloc[row], "n/a" if np.isnan(X["size"].iloc[row]) else f"{X['size'].iloc[row]:.4g}"]
        + [str(X.year.iloc[row])]
        for row in rows
    ]
    assert panel.gallery.cells == sum(expected, []) and set(panel.gallery.cells[::3]) <= {"red", "green", "blue"}
    missing = int(np.flatnonzero(X["size"].isna())[0])
    assert panel.row_cells([missing])[0][1] == "n/a"
    html = panel.static_html()
    assert all(f">{text}<" in html for text in panel.gallery.cells)


def test_medoid_panel_bad_input(digits):
    model, X, y = digits
    assert MedoidPanel(object(), X).error.startswith("UnsupportedModelError")
    for shape in [(4, 4), (-8, -8), ("a", "b")]:  # the same check as LeafMedoids.plot's
        assert "image_shape must be (height, width), two positive ints with height * width == 64" in (
            MedoidPanel(model, X, image_shape=shape).error
        )
    assert "X has 10 features" in MedoidPanel(model, X[:, :10]).error
    assert "tree index 3 does not exist" in MedoidPanel(model, X, tree=3).error
    panel = MedoidPanel(model, X, leaf=0)  # the root is not a leaf
    assert "is not a leaf" in panel.error and panel.leaf_picker.value in panel.rows_per_leaf
    # a y the tree view ignores is not shown under the medoids either, and the panel says why
    panel = MedoidPanel(model, X, y=y + 20)
    assert "y contains labels the model never saw: 20" in panel.error and panel.y is None
    assert panel.gallery.labels == []
    assert "one value per row of X" in MedoidPanel(model, X, y=y[:10]).error
    with pytest.raises(btt.ParameterError, match="leaf of MedoidPanel.show_leaf must be an int"):
        panel.show_leaf("a")  # int()'s ValueError before
    with pytest.raises(btt.ParameterError, match="leaf of MedoidPanel.medoids_of must be an int"):
        panel.medoids_of(2.5)
    assert "MedoidPanel(error=" in repr(MedoidPanel(object(), X))


def test_an_embedding_serves_rows_with_missing_pixels(digits):
    _, X, y = digits
    holed = X.copy()
    holed[::7, 10] = np.nan  # scikit-learn's trees route NaN; the distances need finite rows
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(holed, y)
    filled = np.nan_to_num(holed)
    panel = MedoidPanel(model, holed, y, image_shape=(8, 8), n_medoids=2, embedding=filled)
    leaf = panel.leaf_picker.value
    expected = btt.leaf_medoids(model, holed, n_medoids=2, leaves=[leaf], random_state=0, embedding=filled)
    assert panel.error == "" and panel.gallery.rows == expected.medoids[leaf].tolist()
    assert "rgb(255,205,205)" in panel._image_svg(np.where(np.arange(64) == 10, np.nan, 1.0))  # a missing pixel
    # without it, the panel says what to pass
    assert "pass finite rows for the distances as embedding=" in MedoidPanel(model, holed, y).error
    # a result measured on an embedding goes with that embedding only
    result = btt.leaf_medoids(model, holed, n_medoids=2, embedding=filled, progress=False)
    assert MedoidPanel(model, holed, medoids=result, embedding=filled).medoids_of(leaf) is result
    assert MedoidPanel(model, holed, medoids=result).error == (
        "DataError: these medoids were computed with distances on an embedding, not on X"
    )
    assert MedoidPanel(model, holed, medoids=result, embedding=filled + 1).error == (
        "DataError: these medoids were computed with distances on another embedding, not on this embedding"
    )
    assert MedoidPanel(model, holed, embedding=filled[1:]).error == (
        "DataError: embedding has 599 rows and X 600; pass one row of embedding per row of X"
    )


def test_precomputed_medoids_are_used(digits):
    model, X, y = digits
    result = btt.leaf_medoids(model, X, n_medoids=2, random_state=3)
    panel = MedoidPanel(model, X, n_medoids=2, medoids=result)
    leaf = panel.leaf_picker.value
    assert panel.gallery.rows == result.medoids[leaf].tolist()
    assert panel.medoids_of(leaf) is result


def test_a_result_of_another_k_is_refused_or_adopted(digits):
    model, X, y = digits
    k5 = btt.leaf_medoids(model, X, n_medoids=5, random_state=0)
    refused = MedoidPanel(model, X, n_medoids=3, medoids=k5)  # showed five medoids labelled k=3
    assert refused.error == "ParameterError: these medoids were computed with n_medoids=5, not 3"
    assert refused.tree_view is None
    adopted = MedoidPanel(model, X, medoids=k5)
    leaf = adopted.leaf_picker.value
    assert adopted.k.value == 5 and adopted.gallery.n_medoids == len(k5.medoids[leaf]) == 5
    assert adopted.medoids_of(leaf) is k5 and not adopted.error


def test_a_result_of_another_tree_is_shown_on_its_tree(digits):
    from sklearn.ensemble import RandomForestClassifier

    model, X, y = digits
    forest = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    tree2 = btt.leaf_medoids(forest, X, n_medoids=2, tree=2, random_state=0)
    panel = MedoidPanel(forest, X, medoids=tree2)  # was drawn on tree 0
    leaf = panel.leaf_picker.value
    assert panel.tree_index == 2 and panel.tree_view.selected_tree == 2
    assert set(panel.rows_per_leaf) == set(np.flatnonzero(forest.estimators_[2].tree_.children_left == -1))
    assert panel.gallery.rows == tree2.medoids[leaf].tolist()
    assert panel.gallery.title.startswith(f"Leaf {leaf} of tree 2")
    assert MedoidPanel(forest, X, tree=0, medoids=tree2).error == (
        "ParameterError: these medoids are of tree 2, not of tree 0"
    )


def test_a_result_of_other_rows_or_another_model_is_refused(digits):
    model, X, y = digits
    result = btt.leaf_medoids(model, X, n_medoids=2)
    assert (
        "DataError: these medoids were computed on 600 rows of X, not on these 599 rows"
        == MedoidPanel(model, X[1:], medoids=result).error
    )
    shuffled = X[::-1].copy()
    assert "other rows of X (the same number, 600" in MedoidPanel(model, shuffled, medoids=result).error
    other = DecisionTreeClassifier(max_depth=5, random_state=1).fit(X[::2], y[::2])
    assert MedoidPanel(other, X, medoids=result).error == (
        "DataError: tree 0 had 47 nodes when these medoids were computed, this model's has 37"
    )
    # the same shape, one threshold moved: an edited tree
    from bandit_tree_tools.tree import make_tree

    ensemble = btt.from_model(model)
    fields = ensemble.trees[0]._asdict()
    fields["threshold"] = fields["threshold"].copy()
    fields["threshold"][0] += 0.25
    edited = ensemble.replace_trees([make_tree(**fields)])
    assert "tree 0 of this model splits differently" in MedoidPanel(edited, X, medoids=result).error
    assert "medoids must be a LeafMedoids" in MedoidPanel(model, X, medoids={0: [1]}).error


def test_distance_calls_are_the_shown_leafs(digits):
    model, X, y = digits
    result = btt.leaf_medoids(model, X, n_medoids=3, random_state=0)
    panel = MedoidPanel(model, X, medoids=result)
    leaf = panel.leaf_picker.value
    assert sum(result.distance_calls.values()) == result.n_distance_calls
    assert result.distance_calls[leaf] < result.n_distance_calls  # the tree has several leaves with rows
    assert f"distance calls for this leaf: {result.distance_calls[leaf]}" in panel.gallery.info


def test_image_fallback_is_svg(digits):
    model, X, y = digits
    html = MedoidPanel(model, X, image_shape=(8, 8))._repr_mimebundle_()["text/html"]
    assert html.count("<svg") >= 4  # the tree and three medoid images
    assert "<script" not in html.lower()
    # each image with the live gallery's caption
    panel = MedoidPanel(model, X, y=y, image_shape=(8, 8), n_medoids=3)
    html = panel.static_html()
    for row, label, size in zip(panel.gallery.rows, panel.gallery.labels, panel.gallery.sizes):
        assert f"row {row} · class {label}" in html and f"{size} {'row' if size == 1 else 'rows'} nearest" in html


# -------------------------------------------------------------- ComparisonPanel
@pytest.fixture(scope="module")
def monk1():
    rows = np.array(list(itertools.product(range(3), range(3), range(2), range(3), range(4), range(2))))
    y = ((rows[:, 0] == rows[:, 1]) | (rows[:, 4] == 0)).astype(int)
    X = pd.DataFrame(rows, columns=[f"a{i}" for i in range(1, 7)])
    return X, y


def test_comparison_panel_shows_both_trees_table_and_trace(monk1):
    X, y = monk1
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=60, random_state=0).fit(X, y)
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    table = btt.compare_trees(X, y, X, y, max_iter=30, exact=False, river=False, dl85=False)
    panel = ComparisonPanel(tsdt, cart, table=table, X=X, y=y)
    assert panel.error == ""
    tsdt_view, cart_view = panel.views
    assert tsdt_view.ensemble is tsdt.ensemble_
    assert tsdt_view.ensemble.trees[0].is_categorical[0] == 1
    assert " in {" in tsdt_view.node_details(0)["label"]  # category sets, not thresholds
    assert cart_view.ensemble.trees[0].n_leaves == cart.get_n_leaves()
    assert "btt-comparison-table" in panel.table_html.value
    for method in table["method"]:
        assert method in panel.table_html.value
    # the TSDT tree is titled by its own row of the table (the default variant is the optimistic search)
    assert tsdt_view.canvas.title.startswith("optimistic TSDT · ") and "optimistic TSDT" in set(table["method"])
    assert (
        ComparisonPanel(btt.TSDTClassifier(lambda_=0.01, max_iter=20, variant="fast", random_state=0).fit(X, y))
        .views[0]
        .canvas.title.startswith("Fast-TSDT · ")
    )
    # another tree first was titled "TSDT": it goes by its class name
    assert ComparisonPanel(cart, X=X, y=y).views[0].canvas.title.startswith("DecisionTreeClassifier · ")
    assert "<polyline" in panel.trace_html.value
    html = panel._repr_mimebundle_()["text/html"]
    assert html.count("<svg") >= 3 and "<script" not in html.lower()


def test_trace_svg_scales_the_band():
    svg = trace_svg([0.5, 0.6, 0.7], [0.1, 0.05, 0.0])
    assert "<polygon" in svg and "3 iterations" in svg
    assert ">0.7<" in svg and ">0.3<" in svg  # the band's ends: max(mean + 2 sd), min(mean - 2 sd)
    assert trace_svg([], []) == "<div>no iterations recorded</div>"


def test_comparison_panel_bad_input(monk1):
    X, y = monk1
    panel = ComparisonPanel("not a model", table=[1, 2])
    assert "TSDT model: UnsupportedModelError" in panel.error
    assert "table must be the DataFrame" in panel.error
    assert panel.views == []
    assert "UnsupportedModelError" in panel._repr_mimebundle_()["text/html"]
    for titles in (5, ("one",), ("one", 2)):
        with pytest.raises(btt.ParameterError, match="^titles of ComparisonPanel must be None or two str"):
            ComparisonPanel("not a model", titles=titles)


def test_tsdt_tree_is_drawn_multiway():
    rows = list(itertools.product(range(3), range(3), range(2), range(3)))
    X = pd.DataFrame(rows, columns=["a1", "a2", "a3", "a4"])
    y = ((X.a1 == X.a2) | (X.a4 == 0)).astype(int).to_numpy()
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=40, random_state=0).fit(X, y)
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    panel = ComparisonPanel(tsdt, cart, X=X, y=y)
    tsdt_view, cart_view = panel.views
    assert tsdt_view.canvas.multiway and not cart_view.canvas.multiway
    assert f"{tsdt.n_splits_} multiway splits" in tsdt_view.canvas.title
    assert "binary" not in tsdt_view.canvas.title
    assert tsdt_view.canvas.height == cart_view.canvas.height  # side by side, lined up
    # the static twin (saved notebooks, save()) draws the multiway splits too
    import xml.etree.ElementTree as ElementTree

    svg = ElementTree.fromstring(tsdt_view.picture())
    texts = [element.text or "" for element in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert any(text.endswith(" branches") for text in texts)
    assert any(text.startswith("= ") for text in texts)  # an edge per category
    assert not any("train 0 · X 0" in text for text in texts)  # no empty "other" leaf
    boxes = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("opacity")]
    assert len(boxes) < tsdt_view.ensemble.trees[0].n_nodes  # chain links are not boxes of their own


def test_a_trace_without_mean_and_sd_is_reported_not_hidden(monk1):
    X, y = monk1
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=10, random_state=0).fit(X, y)
    tsdt.trace_ = [0.5, 0.6]  # not a SearchTrace
    panel = ComparisonPanel(tsdt, X=X, y=y)
    assert "trace_ must be a SearchTrace" in panel.error and panel.trace is None
    assert panel.trace_html.value == ""


def test_leaves_an_adopted_result_lacks_use_its_metric_and_power(digits):
    model, X, y = digits
    panel_first = MedoidPanel(model, X)
    big = panel_first.leaf_picker.value
    part = btt.leaf_medoids(model, X, n_medoids=2, metric="minkowski", p=3.0, leaves=[big], random_state=0)
    panel = MedoidPanel(model, X, medoids=part)
    other = next(leaf for leaf, n in panel.rows_per_leaf.items() if n > 2 and leaf != big)
    panel.leaf_picker.value = other
    expected = btt.leaf_medoids(model, X, n_medoids=2, metric="minkowski", p=3.0, leaves=[other], random_state=0)
    assert panel.gallery.rows == expected.medoids[other].tolist()
    assert panel.current.p == 3.0 and panel.current.metric == "minkowski"
