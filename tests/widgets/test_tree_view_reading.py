"""TreeView: the one-line reading of a row's path, the parameter checks at
construction, the project's error types, and close() releasing every widget."""

import numpy as np
import pytest

pytest.importorskip("anywidget")

from sklearn.datasets import load_breast_cancer, load_wine  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.widgets import PruningPanel, TreeView  # noqa: E402


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y), X, y


def test_explain_reads_the_path_split_by_split(cancer):
    model, X, y = cancer
    view = TreeView(model, X, y, class_names=["malignant", "benign"])
    for row in (0, 20, 400):
        text = view.explain(row)
        path = model.decision_path(X.iloc[[row]]).indices
        splits = text.split(" → ")[0].split(", ")
        assert len(splits) == len(path) - 1
        for node, child, part in zip(path[:-1], path[1:], splits):
            name = X.columns[model.tree_.feature[node]]
            value = X.iloc[row, model.tree_.feature[node]]
            assert part.startswith(f"{name} ")
            side = "<=" if child == model.tree_.children_left[node] else ">"
            assert f" {side} " in part
            assert (value <= model.tree_.threshold[node]) == (side == "<=")
        leaf = path[-1]
        label = ["malignant", "benign"][int(np.argmax(model.tree_.value[leaf]))]
        assert text.split(" → ")[1].startswith(label)


def test_explain_regression_and_errors(cancer):
    _, X, y = cancer
    model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    view = TreeView(model, X, y, row=3)
    assert view.explain().split(" → ")[1].startswith("value ")
    assert view.canvas.path_text.startswith("row 3: ")
    assert [name for name, _ in view.canvas.path_values] == [
        X.columns[f] for f in dict.fromkeys(model.tree_.feature[model.decision_path(X.iloc[[3]]).indices[:-1]])
    ]
    with pytest.raises(btt.DataError, match="row 9999 does not exist"):
        view.explain(9999)
    with pytest.raises(btt.NodeError, match="tree index 1 does not exist; the ensemble has trees 0..0"):
        view.explain(0, tree=1)  # the message and type of every other tree index out of range
    with pytest.raises(btt.DataError, match="pass X"):
        TreeView(model).explain(0)
    with pytest.raises(btt.ParameterError, match=r"^row of TreeView.explain must be None or an int in \[0, inf\]"):
        view.explain(X.iloc[3].to_numpy())  # a row of values, not its index


def test_colour_by_an_unknown_name_is_refused(cancer):
    model, X, y = cancer
    with pytest.raises(btt.ParameterError, match="color_by of TreeView must be one of .*'prediction'.*got 'nope'"):
        TreeView(model, X, y, color_by="nope")


def test_panels_raise_the_projects_error_types(cancer):
    model, X, y = cancer
    view = TreeView(model, X, y)
    with pytest.raises(btt.NodeError, match="node 999 does not exist"):
        view.node_details(999)
    with pytest.raises(btt.NodeError, match="node 999 does not exist"):
        view.node_histogram(999)
    with pytest.raises(btt.ParameterError, match="after has 3 trees"):
        from sklearn.ensemble import RandomForestClassifier

        view.set_after(RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y))
    with pytest.raises(btt.ParameterError, match="no model"):
        TreeView(object()).node_details(0)


def _registered() -> int:
    from ipywidgets.widgets import widget

    return len(widget._instances)


@pytest.mark.parametrize(
    "make",
    [
        lambda m, X, y: TreeView(m, X, y, row=1),
        lambda m, X, y: PruningPanel(m, X, y),
        lambda m, X, y: btt.MedoidPanel(m, X, y=y, n_medoids=2),
    ],
    ids=["TreeView", "PruningPanel", "MedoidPanel"],
)
def test_close_releases_every_widget_the_panel_made(cancer, make):
    model, X, y = cancer
    make(model, X, y).close()  # the first one registers the widgets' classes once
    before = _registered()
    for _ in range(3):
        make(model, X, y).close()
    assert _registered() == before


def test_a_dataframe_with_duplicate_column_names_gives_a_clear_data_error():
    X, y = load_wine(return_X_y=True, as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    doubled = X.set_axis(["alcohol"] * 2 + list(X.columns[2:]), axis=1)
    view = TreeView(model, doubled, y)
    assert "DataError" in view.error and "alcohol" in view.error
    panel = PruningPanel(model, doubled, y)
    assert "DataError" in panel.error and panel.start_button.disabled
    medoids = btt.MedoidPanel(model, doubled, n_medoids=2)
    assert "DataError" in medoids.error


def test_save_writes_the_picture_as_svg_and_png(cancer, tmp_path):
    import xml.etree.ElementTree as ElementTree

    model, X, y = cancer
    view = TreeView(model, X, y, row=0, class_names=["malignant", "benign"])
    view.save(tmp_path / "tree.svg")
    svg = ElementTree.parse(tmp_path / "tree.svg").getroot()
    texts = " ".join(element.text or "" for element in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "worst radius" in texts and "malignant" in texts
    # one box per node (the histograms and class-mix bars are groups of their own)
    node_groups = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("opacity")]
    boxes = [rect for g in node_groups for rect in g.findall("{http://www.w3.org/2000/svg}rect")]
    assert len(boxes) == model.tree_.node_count
    view.save(tmp_path / "tree.png", dpi=72)
    assert (tmp_path / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(btt.ParameterError, match="end the name in .svg or .png"):
        view.save(tmp_path / "tree.jpg")
    # these reached int() or matplotlib (ValueError, TypeError), or drew nothing (max_depth=-1)
    for keywords, message in [
        (dict(max_depth=-1), r"max_depth of TreeView.save must be None or an int in \[0, inf\], got -1"),
        (dict(max_depth="a"), "max_depth of TreeView.save must be"),
        (dict(dpi=0), r"dpi of TreeView.save must be a finite float in \(0, inf\), got 0"),
        (dict(dpi="a"), "dpi of TreeView.save must be"),
    ]:
        with pytest.raises(btt.ParameterError, match=message):
            view.save(tmp_path / "tree.png", **keywords)
    with pytest.raises(btt.ParameterError, match="max_depth of TreeView.picture must be"):
        view.picture(-1)
    # the saved notebook's static picture is the same drawing, to the depth it shows
    assert view.picture(3) in view.static_html()


def test_counts_of_one_read_in_the_singular(cancer):
    model, X, y = cancer
    leaves = model.apply(X)
    one_per_leaf = X.iloc[[int(np.flatnonzero(leaves == leaf)[0]) for leaf in np.unique(leaves)]]
    panel = btt.MedoidPanel(model, one_per_leaf, n_medoids=2)
    labels = [label for label, _ in panel.leaf_picker.options]
    assert labels and all(label.endswith("· 1 row") for label in labels), labels
    assert "1 row, 1 medoid" in panel.gallery.title and "1 rows" not in panel.gallery.title
