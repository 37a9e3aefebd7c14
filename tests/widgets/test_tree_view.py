"""Python state of TreeView: payload buffers, synced traits, paths, marks,
errors and the static fallback."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("anywidget")

from ipywidgets.widgets.widget import _remove_buffers  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.tree import make_tree, node_depth, subtree_nodes  # noqa: E402
from bandit_tree_tools.widgets import (
    TreeView,  # noqa: E402
    _payload,  # noqa: E402
)
from bandit_tree_tools.widgets._assets import module_source, static_dir  # noqa: E402


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


@pytest.fixture(scope="module")
def iris_tree(iris):
    X, y = iris
    return DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)


def hand_tree():
    #        0
    #      1   2
    #     3 4 5 6
    return make_tree(
        children_left=[1, 3, 5, -1, -1, -1, -1],
        children_right=[2, 4, 6, -1, -1, -1, -1],
        feature=[0, 1, 1, -2, -2, -2, -2],
        threshold=[0.5, 1.5, 2.5, -2, -2, -2, -2],
        value=[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0]],
        n_node_samples=[10, 6, 4, 3, 3, 2, 2],
    )


def test_assets_are_found_and_self_contained():
    assert (static_dir() / "tree_view.js").is_file()
    source = module_source("tree_view.js")
    assert "export default" in source and "function bttColumn" in source
    # nothing fetched at run time (the SVG namespace is a name, not a fetch)
    source = source.replace('"http://www.w3.org/2000/svg"', "")
    assert "http://" not in source and "https://" not in source


def test_payload_columns_are_binary_and_round_trip(iris_tree):
    tree = btt.from_model(iris_tree).trees[0]
    payload = _payload.tree_payload(tree)
    for name, dtype in [("children_left", np.int32), ("feature", np.int32), ("threshold", np.float64)]:
        assert isinstance(payload[name], bytes)
        np.testing.assert_array_equal(_payload.decode_column(payload, name, dtype), getattr(tree, name))
    value = _payload.decode_column(payload, "value", np.float32, width=tree.value.shape[1])
    np.testing.assert_allclose(value, tree.value, rtol=1e-6)
    depth = _payload.decode_column(payload, "depth", np.int32)
    np.testing.assert_array_equal(depth, node_depth(tree))


def test_tree_travels_as_buffers_not_json(iris_tree):
    view = TreeView(iris_tree)
    state, paths, buffers = _remove_buffers(view.canvas.get_state())
    names = {tuple(path) for path in paths}
    assert ("tree", "children_left") in names and ("tree", "threshold") in names
    n = btt.from_model(iris_tree).trees[0].n_nodes
    sizes = {tuple(path): len(memoryview(buffer).cast("B")) for path, buffer in zip(paths, buffers)}
    assert sizes[("tree", "children_left")] == 4 * n
    assert sizes[("tree", "threshold")] == 8 * n
    assert "children_left" not in state["tree"]  # not duplicated as JSON


def test_selected_node_and_tree_are_linked_both_ways(iris):
    X, y = iris
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    view = TreeView(forest)
    view.canvas.selected_node = 3  # a click in the browser
    assert view.selected_node == 3
    view.selected_node = 1
    assert view.canvas.selected_node == 1
    view.canvas.selected_tree = 2  # a click on the overview bar
    assert view.selected_tree == 2
    assert view.selected_node == -1  # a new tree clears the selection
    assert "tree 2 of 5" in view.canvas.title
    expected = btt.from_model(forest).trees[2]
    np.testing.assert_array_equal(
        _payload.decode_column(view.canvas.tree, "children_left", np.int32), expected.children_left
    )
    assert view.canvas.overview["values"] == [t.n_leaves for t in btt.from_model(forest).trees]
    view.overview_dropdown.value = "depth"
    assert view.canvas.overview["values"] == [t.max_depth for t in btt.from_model(forest).trees]


def test_row_path_and_node_counts_match_sklearn(iris, iris_tree):
    X, y = iris
    view = TreeView(iris_tree, X, y, row=120)
    expected = iris_tree.decision_path(X.iloc[[120]]).indices.tolist()
    assert view.canvas.path == expected
    view.row = 7
    assert view.canvas.path == iris_tree.decision_path(X.iloc[[7]]).indices.tolist()
    view.row = -1
    assert view.canvas.path == []
    count = _payload.decode_column(view.canvas.tree, "data_count", np.float32)
    np.testing.assert_array_equal(count, np.asarray(iris_tree.decision_path(X).sum(axis=0)).ravel())
    # class fractions of y at each node: at the root, the class balance
    target = _payload.decode_column(view.canvas.tree, "data_target", np.float32, width=3)
    np.testing.assert_allclose(target[0], np.bincount(y) / len(y), rtol=1e-6)


def test_contributions_add_up_to_the_raw_score(iris):
    X, y = iris
    model = GradientBoostingClassifier(n_estimators=6, max_depth=2, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    row = ensemble.check_X(X)[60]
    contributions, column = _payload.tree_contributions(ensemble, row)
    raw = ensemble.predict_raw(row.reshape(1, -1))[0]
    assert column == int(np.argmax(raw))
    assert contributions.sum() + ensemble.base_score[column] == pytest.approx(raw[column])
    view = TreeView(model, X, row=60)
    view.overview_dropdown.value = "contribution"
    np.testing.assert_allclose(view.canvas.overview["values"], contributions)
    assert view.canvas.output_label.startswith("raw score of class")


def test_diff_marks_after_collapse_matches_the_collapsed_nodes(iris, iris_tree):
    ensemble = btt.from_model(iris_tree)
    tree = ensemble.trees[0]
    internal = np.flatnonzero(tree.children_left != -1)
    chosen = [int(internal[2]), int(internal[-1])]
    pruned = btt.collapse(ensemble, {0: chosen})
    marks = _payload.diff_marks(tree, pruned.trees[0])
    np.testing.assert_array_equal(marks, _payload.marks_from_collapsed(tree, chosen))
    for node in chosen:
        if marks[node] != _payload.MARK_REMOVED:  # a chosen node may lie below another
            assert marks[node] == _payload.MARK_PRUNED
    removed = set(np.flatnonzero(marks == _payload.MARK_REMOVED).tolist())
    below = set()
    for node in chosen:
        below |= set(subtree_nodes(tree, node).tolist()) - {node}
    assert removed == below - set(n for n in chosen if marks[n] == _payload.MARK_PRUNED)
    view = TreeView(ensemble, after=pruned)
    np.testing.assert_array_equal(_payload.decode_column(view.canvas.tree, "marks", np.uint8), marks)
    assert view.node_details(chosen[0])["edit"] in _payload.MARK_NAMES.values()


def test_diff_marks_finds_a_resplit():
    before = hand_tree()
    after = make_tree(
        children_left=[1, 3, 5, -1, -1, -1, -1],
        children_right=[2, 4, 6, -1, -1, -1, -1],
        feature=[0, 1, 0, -2, -2, -2, -2],  # node 2 now splits on feature 0
        threshold=[0.5, 1.5, 0.9, -2, -2, -2, -2],
        value=[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0]],
    )
    marks = _payload.diff_marks(before, after)
    assert marks.tolist() == [0, 0, _payload.MARK_RESPLIT, 0, 0, _payload.MARK_CHANGED, _payload.MARK_CHANGED]
    assert _payload.diff_marks(before, before).tolist() == [0] * 7


def test_regression_tree_value_kind_and_details():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] * 2 + rng.normal(size=200)
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    view = TreeView(model, X, y, feature_names=["a", "b", "c"])
    assert view.canvas.value_kind == "mean"
    assert view.canvas.feature_names == ["a", "b", "c"]
    details = view.node_details(0)
    assert details["label"].startswith("a <= ") and details["n_node_samples"] == 200
    target = _payload.decode_column(view.canvas.tree, "data_target", np.float32)
    assert target[0] == pytest.approx(y.mean(), rel=1e-5)


def test_unsupported_model_shows_a_message_not_a_traceback():
    view = TreeView(object())
    assert view.error.startswith("UnsupportedModelError: cannot import a builtins.object")
    assert view.canvas.error == view.error
    assert view.canvas.tree == {}
    html = view._repr_mimebundle_()["text/html"]
    assert "cannot import" in html and "Traceback" not in html


def test_bad_X_and_y_are_reported_and_ignored(iris, iris_tree):
    X, y = iris
    view = TreeView(iris_tree, X.iloc[:, :3], y)
    assert "DataError" in view.error and "columns" in view.error
    assert view.X is None and view.canvas.path == []
    assert view.canvas.tree["n_nodes"] > 0  # the tree is still shown
    view = TreeView(iris_tree, X, y[:10])
    assert "one value per row" in view.error and view.y is None and view.X is not None
    # a one-column frame is y, as scikit-learn and btt.prune take it (it was reported and ignored)
    view = TreeView(iris_tree, X, y.to_frame())
    assert view.error == "" and np.array_equal(view.y, y.to_numpy())
    assert "y must be 1-D with one value per row of X" in TreeView(iris_tree, X, np.c_[y, y]).error
    view = TreeView(iris_tree, X, np.full(len(y), 9))
    assert "labels the model never saw" in view.error
    # a regressor's targets: strings raised numpy's ValueError, infinity reached the histograms
    regressor = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X.iloc[:, 0])
    view = TreeView(regressor, X, np.full(len(y), "a"))
    assert "y must hold numbers for a regression model" in view.error and view.y is None
    view = TreeView(regressor, X, np.where(np.arange(len(y)) == 3, np.inf, X.iloc[:, 0]))
    assert "y contains NaN or infinite values; y is ignored" in view.error and view.y is None
    view = TreeView(iris_tree, X, row=1000)
    assert "row=1000 cannot be shown: X has rows 0..149" in view.error and view.canvas.path == []
    with pytest.raises(Exception, match="row 150 does not exist"):
        view.row = 150
    view = TreeView(iris_tree, feature_names=["only", "two"])
    assert "feature_names has 2 names" in view.error
    view.selected_tree = 5  # one tree only: refused, the view stays on tree 0
    assert view.selected_tree == 0 and "tree index 5 does not exist; the ensemble has trees 0..0" in view.error


def test_after_with_another_shape_is_reported(iris, iris_tree):
    X, y = iris
    forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    view = TreeView(iris_tree, after=forest)
    assert "after has 3 trees" in view.error and view.after is None


def test_static_fallback_is_script_free_html(iris, iris_tree):
    X, y = iris
    view = TreeView(iris_tree, X, y, row=100)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert "<svg" in html and "petal" in html
    assert "<script" not in html.lower() and "onclick" not in html.lower()
    assert "#1f5fbf" in html  # the decision path is drawn
    assert repr(view).startswith("TreeView(Ensemble(")


def test_assets_live_in_one_place_inside_the_package(tmp_path, monkeypatch):
    import bandit_tree_tools
    from bandit_tree_tools.widgets import _assets

    package = Path(bandit_tree_tools.__file__).resolve().parent
    assert static_dir() == package / "_static"  # the same folder in a checkout and in a wheel
    monkeypatch.setattr(_assets, "_STATIC", tmp_path / "missing")
    _assets.static_dir.cache_clear()
    _assets.read_asset.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="reinstall bandit-tree-tools"):
            _assets.static_dir()
    finally:
        _assets.static_dir.cache_clear()
        _assets.read_asset.cache_clear()


def test_browser_files_stay_short_and_each_part_is_joined_once():
    from bandit_tree_tools.widgets._assets import MODULES

    for path in static_dir().iterdir():
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 600, path.name
    source = module_source("tree_view.js")
    for part in ("common.js", "tree_model.js", "tree_camera.js", "tree_draw.js", "tree_view.js"):
        assert source.count(f"// ---- {part}\n") == 1, part
    assert source.count("export default") == 1 and "\nimport " not in source and "\nexport function" not in source
    # every part the tree view needs is in its module
    for name in ("function layoutTree", "function findNodes", "function treeCamera", "function drawTreeFrame"):
        assert name in source
    assert set(MODULES) == {"tree_view.js", "reward_chart.js", "medoid_gallery.js"}


def test_the_tree_views_parts_are_named_functions_of_at_most_100_lines():
    """tree_view.js is cut into named parts: no function (render included)
    runs past 100 lines."""
    import re

    lines = (static_dir() / "tree_view.js").read_text(encoding="utf-8").splitlines()
    lengths = {}
    for start, line in enumerate(lines):
        found = re.match(r"^(?:export\s+)?function\s+(\w+)|^\s+(render)\(", line)
        if not found:
            continue
        depth = 0
        for end in range(start, len(lines)):
            depth += lines[end].count("{") - lines[end].count("}")
            if depth <= 0 and end > start:
                break
        lengths[found.group(1) or found.group(2)] = end - start + 1
    assert "render" in lengths and len(lengths) >= 10
    assert max(lengths.values()) <= 100, sorted(lengths.items(), key=lambda item: -item[1])[:3]


def test_browser_files_use_no_other_files_names_without_an_import_line():
    """What one file uses of another is imported by name (no globals)."""
    import re

    from bandit_tree_tools.widgets._assets import exports_of, imports_of

    files = sorted(path.name for path in static_dir().glob("*.js"))
    declared = {
        name: set(re.findall(r"^(?:export\s+)?(?:function|const|let)\s+(\w+)", (static_dir() / name).read_text(), re.M))
        for name in files
    }
    for name in files:
        body = re.sub(r"//.*", "", (static_dir() / name).read_text())
        body = re.sub(r"^import .*$", "", body, flags=re.M)
        imported = {word for names in imports_of(name).values() for word in names}
        own = set(re.findall(r"\b(?:const|let|var)\s+(\w+)", body))  # the file's own locals and parameters
        for params in re.findall(r"function\s*\w*\s*\(([^)]*)\)", body):
            own.update(re.findall(r"\w+", params))
        for other in files:
            if other == name:
                continue
            for word in declared[other] - declared[name] - own:
                if re.search(r"(?<![\w.\"'-])" + word + r"\b(?![\"':])", body):
                    assert word in imported, f"{name} uses {word} of {other} without importing it"
                    assert word in exports_of(other) or any(word in exports_of(f) for f in imports_of(name))


def test_an_import_of_a_name_not_exported_is_refused(tmp_path, monkeypatch):
    from bandit_tree_tools.widgets import _assets

    (tmp_path / "common.js").write_text("export function bttElement() {}\n")
    (tmp_path / "a.js").write_text('import { bttElement, nothing } from "./common.js";\nexport default {};\n')
    monkeypatch.setattr(_assets, "_STATIC", tmp_path)
    for cached in (_assets.static_dir, _assets.read_asset, _assets.module_source):
        cached.cache_clear()
    try:
        with pytest.raises(ImportError, match="a.js imports nothing from common.js, which does not export them"):
            _assets.module_source("a.js")
    finally:
        monkeypatch.undo()
        for cached in (_assets.static_dir, _assets.read_asset, _assets.module_source):
            cached.cache_clear()


def test_depths_match_the_reference(iris_tree):
    tree = btt.from_model(iris_tree).trees[0]
    np.testing.assert_array_equal(_payload.depths(tree), node_depth(tree))
    np.testing.assert_array_equal(_payload.depths(hand_tree()), [0, 1, 1, 2, 2, 2, 2])


@pytest.mark.parametrize("parts", [("tree_view.js",), ("reward_chart.js",), ("medoid_gallery.js",)])
def test_browser_modules_parse(parts, tmp_path):
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the browser tests load these modules instead")
    path = tmp_path / "module.mjs"
    path.write_text(module_source(*parts))
    completed = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


def test_class_names_reach_the_canvas_and_a_wrong_count_is_reported(iris, iris_tree):
    X, y = iris
    view = TreeView(iris_tree, X, y, class_names=["setosa", "versicolor", "virginica"])
    assert view.canvas.class_names == ["setosa", "versicolor", "virginica"]
    assert view.node_details(1)["label"] in {"setosa", "versicolor", "virginica"}
    wrong = TreeView(iris_tree, X, y, class_names=["a", "b"])
    assert wrong.canvas.class_names == ["0", "1", "2"]  # the model's own classes_
    assert "class_names has 2 names but the model has 3 classes" in wrong.error


def test_split_rule_follows_the_library(iris):
    xgboost = pytest.importorskip("xgboost")
    X, y = iris
    assert TreeView(DecisionTreeClassifier(max_depth=2).fit(X, y)).canvas.split_rule == "le"
    model = xgboost.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y)
    assert TreeView(model).canvas.split_rule == "lt"  # XGBoost sends x < t left


def test_canvas_height_follows_the_tree_unless_given(iris_tree):
    assert TreeView(iris_tree).canvas.height == 0
    assert TreeView(iris_tree, height=300).canvas.height == 300


def test_node_histogram_stacks_the_rows_at_the_node_by_class(iris, iris_tree):
    X, y = iris
    view = TreeView(iris_tree, X, y, row=100)
    tree = view.ensemble.trees[0]
    node = int(tree.children_right[0])  # a split below the root
    histogram = view.node_histogram(node)
    feature = int(tree.feature[node])
    at_node = view.ensemble.decision_path(view.X)[0][:, node].toarray().ravel().astype(bool)
    values = X.to_numpy()[at_node, feature]
    counts = np.asarray(histogram["counts"])
    assert counts.shape == (3, len(histogram["edges"]) - 1)
    assert counts.sum() == at_node.sum() == histogram["n_rows"]
    # per class, the rows of that class reaching the node
    for k in range(3):
        assert counts[k].sum() == np.sum(y.to_numpy()[at_node] == k)
    assert histogram["edges"][0] <= values.min() and histogram["edges"][-1] >= values.max()
    assert histogram["threshold"] == pytest.approx(tree.threshold[node])
    assert histogram["row_value"] == pytest.approx(X.iloc[100, feature])
    assert histogram["kind"] == "classes"
    # the selected node's histogram is what the browser gets
    view.selected_node = node
    assert view.canvas.histogram["node"] == node
    view.selected_node = int(np.flatnonzero(tree.children_left == -1)[0])
    assert view.canvas.histogram == {}  # leaves have no split feature


def test_node_histogram_counts_the_rows_it_cannot_draw(iris):
    from sklearn.tree import DecisionTreeClassifier

    X, y = iris
    holed = X.to_numpy().copy()
    holed[::4, 2] = np.nan  # scikit-learn's trees send NaN to one side, chosen in training
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(holed, y)
    view = TreeView(model, holed, y)
    tree = view.ensemble.trees[0]
    node = int(np.flatnonzero(tree.feature == 2)[0])
    histogram = view.node_histogram(node)
    at_node = view.ensemble.decision_path(holed)[0].toarray().astype(bool)
    missing = at_node[:, node] & np.isnan(holed[:, 2])
    assert histogram["missing"] == missing.sum() > 0
    assert np.asarray(histogram["counts"]).sum() + histogram["missing"] == histogram["n_rows"]
    assert histogram["missing_left"] == (missing & at_node[:, tree.children_left[node]]).sum()
    assert histogram["missing_left"] in (0, histogram["missing"])  # NaN takes one side at a node


def test_node_histogram_needs_X_and_a_real_node(iris, iris_tree):
    X, y = iris
    assert TreeView(iris_tree).node_histogram(0) == {}
    view = TreeView(iris_tree, X)
    assert view.node_histogram(0)["kind"] == "rows"  # without y: one series
    with pytest.raises(IndexError, match="node 999 does not exist"):
        view.node_histogram(999)
    with pytest.raises(btt.NodeError, match=r"no node is selected: pass node=\.\.\. \(0 is the root\)"):
        view.node_histogram()  # it said "node -1 does not exist"
    with pytest.raises(btt.NodeError, match="no node is selected"):
        view.node_details()
    # "a" raised int()'s ValueError; 2.5 and True were read as nodes 2 and 1; bins=0 and 2.5 reached numpy
    for call in [
        lambda: view.node_histogram("a"),
        lambda: view.node_histogram(2.5),
        lambda: view.node_details(True),
        lambda: view.node_histogram(0, bins=0),
        lambda: view.node_histogram(0, bins=2.5),
        lambda: view.show_after("yes"),
    ]:
        with pytest.raises(btt.ParameterError, match=r"(node|bins|after) of TreeView\.\w+ must be"):
            call()


def test_static_svg_names_every_feature_in_full_and_clips_nothing():
    import re

    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    view = TreeView(model, X, y, class_names=["malignant", "benign"])
    html = view.static_html()
    svg = html[html.index("<svg") : html.index("</svg>")]
    width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
    for x, w in re.findall(r'<rect x="([-\d.]+)" y="[-\d.]+" width="([\d.]+)"', svg):
        assert float(x) >= 0 and float(x) + float(w) <= width  # no box leaves the picture
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "…" not in "".join(texts)
    tree = view.ensemble.trees[0]
    depth = node_depth(tree)
    shown = np.flatnonzero(depth <= 3)
    for node in shown[tree.children_left[shown] != -1]:
        assert X.columns[tree.feature[node]] in texts  # whole names, one line each
    assert any(text.startswith("train ") and " · X " in text for text in texts)
    assert {"yes", "no"} <= set(texts)
    assert any(text.startswith(("malignant", "benign")) and text.endswith("%") for text in texts)
    assert f"depths 0-3 ({shown.size} of {tree.n_nodes} nodes)" in html


def test_static_thresholds_read_as_the_library_compares():
    from bandit_tree_tools.widgets._static_html import threshold_text

    assert threshold_text(float(np.float32(16.82)), "lt") == "16.82"  # XGBoost's float32
    assert threshold_text(810.3000183105469, "le") == "810.3"  # sklearn's float64 midpoint
    assert threshold_text(2.5) == "2.5"


def test_after_view_draws_the_edited_tree_and_what_each_new_split_replaced(iris, iris_tree):
    X, y = iris
    before = btt.from_model(iris_tree)
    tree = before.trees[0]
    # re-split the root's right child on another threshold: a hand-made edit
    node = int(tree.children_right[0])
    threshold = tree.threshold.copy()
    threshold[node] += 0.25
    edited_tree = make_tree(
        tree.children_left, tree.children_right, tree.feature, threshold, tree.value, n_node_samples=tree.n_node_samples
    )
    edited = before.replace_trees([edited_tree])
    view = TreeView(iris_tree, X, y, after=edited)
    assert view.version_toggle.layout.display == ""
    marks = _payload.decode_column(view.canvas.tree, "marks", np.uint8)
    assert marks[node] == _payload.MARK_RESPLIT and view.canvas.notes == {}
    view.version_toggle.value = True  # the after view
    assert view.showing_after and "after the edit" in view.canvas.title
    shown = _payload.decode_column(view.canvas.tree, "threshold", np.float64)
    assert shown[node] == pytest.approx(threshold[node])  # the new model is drawn
    marks = _payload.decode_column(view.canvas.tree, "marks", np.uint8)
    assert marks[node] == _payload.MARK_RESPLIT and marks.sum() == _payload.MARK_RESPLIT
    assert view.canvas.notes == {str(node): f"{X.columns[tree.feature[node]]} <= {tree.threshold[node]:.5g}"}
    assert view.node_histogram(node)["threshold"] == pytest.approx(threshold[node])
    details = view.node_details(node)
    assert details["edit"] == "re-split" and details["before"] == view.canvas.notes[str(node)]
    view.set_after(None)
    assert not view.showing_after and view.version_toggle.layout.display == "none"


def test_tick_labels_are_never_repeated(tmp_path):
    """A narrow range (3.244 .. 3.256) reads 3.244, 3.246, ..., not "3.25" thrice."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "ticks.mjs"
    common = (static_dir() / "common.js").as_uri()
    script.write_text(
        f'import {{ bttTicks, bttTickLabels }} from "{common}";\n'
        "const out = [[3.244, 3.256], [0, 1], [0.00101, 0.00104], [1e6, 1.00001e6]].map(([a, b]) => bttTickLabels(bttTicks(a, b, 4)));\n"
        "console.log(JSON.stringify(out));\n"
    )
    completed = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    for labels in json.loads(completed.stdout):
        assert len(labels) >= 2 and len(set(labels)) == len(labels), labels


def test_split_histograms_count_the_rows_reaching_each_split_node():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    X_missing = X.to_numpy(copy=True)
    X_missing[::7, :] = np.nan  # rows with a missing value are counted apart
    view = TreeView(model, X_missing, y)
    payload = view.canvas.tree
    tree = view.ensemble.trees[0]
    bins, series = payload["hist_bins"], payload["hist_series"]
    assert (bins, series) == (_payload.HISTOGRAM_BINS, 3)
    index = _payload.decode_column(payload, "hist_index", np.int32)
    splits = np.flatnonzero(tree.children_left != -1)
    np.testing.assert_array_equal(index[splits], np.arange(splits.size))
    assert np.all(index[tree.children_left == -1] == -1)
    counts = _payload.decode_column(payload, "hist_counts", np.uint32).reshape(splits.size, bins, series)
    missing = _payload.decode_column(payload, "hist_missing", np.uint32)
    low = _payload.decode_column(payload, "hist_low", np.float64)
    high = _payload.decode_column(payload, "hist_high", np.float64)
    reaching = view.ensemble.decision_path(view.X)[0].toarray().astype(bool)
    labels = y.to_numpy()
    for k, node in enumerate(splits):
        rows = reaching[:, node]
        assert counts[k].sum() + missing[k] == rows.sum()
        values = np.asarray(view.X, dtype=np.float64)[rows, tree.feature[node]]  # as the model reads X
        assert missing[k] == np.isnan(values).sum()
        for c in range(3):  # per class, the rows of that class reaching the node with a value
            assert counts[k, :, c].sum() == np.sum(~np.isnan(values) & (labels[rows] == c))
        assert low[k] <= tree.threshold[node] <= high[k]
        finite = values[~np.isnan(values)]
        assert low[k] <= finite.min() and finite.max() <= high[k]
        # each value in the bin its position gives
        position = np.clip(((finite - low[k]) / (high[k] - low[k]) * bins).astype(int), 0, bins - 1)
        np.testing.assert_array_equal(counts[k].sum(axis=1), np.bincount(position, minlength=bins))


def test_split_histograms_without_y_and_for_regression_and_past_the_budget(monkeypatch):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    payload = TreeView(model, X).canvas.tree
    assert payload["hist_series"] == 1 and "hist_target" not in payload
    counts = _payload.decode_column(payload, "hist_counts", np.uint32)
    assert counts[: payload["hist_bins"]].sum() == X.shape[0]  # the root: every row
    target = y.astype(float) * 2.5
    regressor = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, target)
    payload = TreeView(regressor, X, target).canvas.tree
    means = _payload.decode_column(payload, "hist_target", np.float32)
    n_splits = int(np.sum(regressor.tree_.children_left != -1))
    assert payload["hist_series"] == 1 and means.shape == (n_splits * payload["hist_bins"],)
    assert (payload["hist_target_low"], payload["hist_target_high"]) == (0.0, 5.0)
    assert np.nanmin(means) >= 0.0 and np.nanmax(means) <= 5.0
    # a tree past the budget sends no pictures (its payload stays small)
    monkeypatch.setattr(_payload, "HISTOGRAM_MAX_SPLITS", 3)
    assert "hist_counts" not in TreeView(model, X, y).canvas.tree
    assert "hist_counts" not in TreeView(model).canvas.tree  # no X: nothing to count


def test_saved_picture_draws_each_split_nodes_histogram_and_each_leafs_mix(tmp_path):
    import xml.etree.ElementTree as ElementTree

    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    view = TreeView(model, X, y, row=0)
    view.save(tmp_path / "wine.svg")
    view.save(tmp_path / "wine.png")
    assert (tmp_path / "wine.png").read_bytes()[:4] == b"\x89PNG"
    root = ElementTree.fromstring((tmp_path / "wine.svg").read_text())
    ns = "{http://www.w3.org/2000/svg}"
    groups = {int(g.get("data-node")): g for g in root.iter(f"{ns}g") if g.get("class") == "btt-histogram"}
    tree = model.tree_
    splits = set(np.flatnonzero(tree.children_left != -1).tolist())
    assert set(groups) == splits
    path = set(view.canvas.path)
    palette = {"#4e79a7", "#f28e2b", "#59a14f"}
    for node, group in groups.items():
        lines = {line.get("class"): line for line in group.iter(f"{ns}line")}
        bars = [rect for rect in group.iter(f"{ns}rect") if rect.get("fill") in palette]
        assert bars and "btt-threshold" in lines
        assert ("btt-row-value" in lines) == (node in path)
    mixes = {int(g.get("data-node")) for g in root.iter(f"{ns}g") if g.get("class") == "btt-leaf-mix"}
    assert mixes == set(np.flatnonzero(tree.children_left == -1).tolist())
    # without X: the picture of text boxes alone
    assert "btt-histogram" not in TreeView(model).picture()
