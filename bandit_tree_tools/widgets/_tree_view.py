"""TreeView: an interactive view of one tree of a model or ensemble."""

from __future__ import annotations

import numpy as np

from .._validation import Interval, Options, check_params
from ..exceptions import DataError, NodeError, ParameterError
from ..tree import Ensemble, check_tree_index, class_codes, one_per_row
from . import _payload
from ._assets import module_source, stylesheet
from ._common import (
    USER_ERRORS,
    ErrorBox,
    Panel,
    anywidget,
    describe_error,
    import_model,
    ipywidgets,
    traitlets,
)
from ._static_html import error_html, escape, section, tree_svg

COLOR_BY = ("prediction", "impurity", "samples", "data", "none")
# what each parameter of TreeView accepts (the model and the rows are the data; row and tree are
# checked against them where they are known)
TREE_VIEW_CONSTRAINTS = {
    "row": [Interval(int, -1, None)],
    "initial_depth": [Interval(int, 0, None)],
    "color_by": [Options(COLOR_BY)],
    "height": [None, Interval(int, 1, None)],
    "title": [None, str],
    "class_names": [None, "array-like"],
}
EXPLAIN_CONSTRAINTS = {"row": [None, Interval(int, 0, None)], "tree": [None, Interval(int, 0, None)]}
PICTURE_CONSTRAINTS = {"max_depth": [None, Interval(int, 0, None)]}
NODE_CONSTRAINTS = {"node": [None, Interval(int, 0, None)]}  # None: the selected node
HISTOGRAM_CONSTRAINTS = {**NODE_CONSTRAINTS, "bins": [None, Interval(int, 1, None)]}
SHOW_AFTER_CONSTRAINTS = {"after": ["boolean"]}
SAVE_CONSTRAINTS = {**PICTURE_CONSTRAINTS, "dpi": [Interval(float, 0, None, closed="neither", finite=True)]}
OVERVIEW_METRICS = ("leaves", "depth", "nodes", "contribution")


class TreeCanvas(anywidget.AnyWidget):
    """The browser part of :class:`TreeView`: draws one tree on a canvas.

    Tree columns travel in ``tree`` as binary buffers (see ``_payload``);
    everything else is small JSON.
    """

    _esm = module_source("tree_view.js")
    _css = stylesheet()

    tree = traitlets.Dict().tag(sync=True)
    feature_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    class_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    value_kind = traitlets.Unicode("mean").tag(sync=True)
    output_label = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    initial_depth = traitlets.Int(4).tag(sync=True)
    color_by = traitlets.Enum(COLOR_BY, default_value="prediction").tag(sync=True)
    path = traitlets.List(traitlets.Int()).tag(sync=True)
    selected_node = traitlets.Int(-1).tag(sync=True)
    selected_tree = traitlets.Int(0).tag(sync=True)
    n_trees = traitlets.Int(1).tag(sync=True)
    overview = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(0).tag(sync=True)  # 0: the canvas height follows the tree
    error = traitlets.Unicode("").tag(sync=True)
    split_rule = traitlets.Enum(("le", "lt"), default_value="le").tag(sync=True)
    histogram = traitlets.Dict().tag(sync=True)
    notes = traitlets.Dict().tag(sync=True)  # {node: what it was before the edit}, in the after view
    multiway = traitlets.Bool(False).tag(sync=True)  # chains of category splits drawn as one multiway node
    path_text = traitlets.Unicode("").tag(sync=True)  # the row's path read in one line (TreeView.explain)
    path_values = traitlets.List().tag(sync=True)  # [feature name, the row's value] along the path, root first


class TreeView(Panel, ipywidgets.VBox):
    """An interactive tree: zoom, pan, collapse/expand, node details, colours,
    the decision path of a row, and pruned or re-split nodes marked.

    Parameters
    ----------
    model_or_ensemble : fitted model or Ensemble
        Anything :func:`bandit_tree_tools.from_model` imports.
    X : array-like or DataFrame, optional
        Rows to route: the view counts the rows at each node, and can show
        the decision path of one row (``row``).
    y : array-like, optional
        Targets of ``X``: node details then show their class distribution
        (or mean) next to the training one.
    feature_names : list of str, optional
        Defaults to the model's feature names, then ``X``'s columns.
    class_names : list of str, optional
        Names of the classes, in the order of the model's ``classes_``
        (defaults to ``classes_`` themselves).
    after : fitted model or Ensemble, optional
        An edited version of the model (pruned or re-split, same number of
        trees): the nodes it changed are marked in this view.
    row : int, optional
        Row of ``X`` whose decision path is highlighted (-1: none).
    initial_depth : int, default 4
        Nodes deeper than this start collapsed.
    color_by : {"prediction", "impurity", "samples", "data", "none"}
    height : int, optional
        Canvas height in pixels; by default it follows the tree (240-720).

    Attributes
    ----------
    selected_node, selected_tree : int
        The clicked node (-1: none) and the tree shown; synced with the
        browser, so they can be read, set or observed.
    error : str
        The message shown when the input could not be used ("" otherwise).

    Raises
    ------
    ParameterError
        At construction, for a parameter outside what its table
        (``_parameter_constraints``) allows. A model or rows the panel
        cannot use are shown in the panel instead (``error``).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> view = btt.TreeView(model, X, y, row=0)
    >>> type(view).__name__, view.error, view.canvas.path[0]
    ('TreeView', '', 0)
    >>> btt.TreeView(object()).error  # doctest: +ELLIPSIS
    'UnsupportedModelError: cannot import a builtins.object; ...'
    """

    _parameter_constraints = TREE_VIEW_CONSTRAINTS

    selected_node = traitlets.Int(-1)
    selected_tree = traitlets.Int(0)
    row = traitlets.Int(-1)

    def __init__(
        self,
        model_or_ensemble,
        X=None,
        y=None,
        feature_names=None,
        *,
        after=None,
        row: int = -1,
        initial_depth: int = 4,
        color_by: str = "prediction",
        height: int | None = None,
        title: str | None = None,
        class_names=None,
    ):
        check_params(
            dict(
                row=row,
                initial_depth=initial_depth,
                color_by=color_by,
                height=height,
                title=title,
                class_names=class_names,
            ),
            TREE_VIEW_CONSTRAINTS,
            owner="TreeView",
        )
        super().__init__()
        self.add_class("btt-tree-view")
        self.canvas = TreeCanvas(initial_depth=int(initial_depth), height=0 if height is None else int(height))
        self._at_node = None  # ((tree, after?), rows x nodes indicator) for the histograms
        self.showing_after = False
        self.error_box = ErrorBox()
        self.ensemble, error = import_model(model_or_ensemble)
        self.after = None
        self.X = None
        self.y = None
        self._messages = []
        if error:
            self._messages.append(error)
        if self.ensemble is not None:
            self._set_data(X, y)
            self._set_after(after)
        self._title = title
        names = self._feature_names(feature_names, X)
        self.canvas.feature_names = names
        self._names = names
        if self.ensemble is not None and self.ensemble.classes_ is not None:
            self.canvas.class_names = self._class_names(class_names)
        if self.ensemble is not None:
            self.canvas.value_kind = _payload.value_kind(self.ensemble)
            self.canvas.split_rule = self.ensemble.split_rule
            self.canvas.n_trees = self.ensemble.n_trees
        self.controls = self._make_controls(color_by)
        self.version_toggle.layout.display = "" if self.after is not None else "none"
        traitlets.link((self, "selected_node"), (self.canvas, "selected_node"))
        traitlets.link((self, "selected_tree"), (self.canvas, "selected_tree"))
        self.observe(self._on_tree, names="selected_tree")
        self.observe(self._on_row, names="row")
        self.observe(self._send_histogram, names="selected_node")
        self.error_box.show("\n".join(self._messages))
        self.canvas.error = "" if self.ensemble is not None else "\n".join(self._messages)
        self._send_tree()
        self._send_overview()
        if row != -1:
            n_rows = 0 if self.X is None else self.X.shape[0]
            if 0 <= row < n_rows:
                self.row = int(row)
            else:
                where = "no X was given" if self.X is None else f"X has rows 0..{n_rows - 1}"
                self._messages.append(f"row={row} cannot be shown: {where}")
                self.error_box.show("\n".join(self._messages))
        # a model that could not be imported: only the message, no empty canvas
        self.children = [self.controls, self.error_box, self.canvas] if self.ensemble is not None else [self.error_box]

    # ------------------------------------------------------------------ input
    def _set_data(self, X, y) -> None:
        if X is None:
            if y is not None:
                self._messages.append("y was given without X; pass X too to see your data in the tree")
            return
        try:
            self.X = self.ensemble.check_X(X)
        except USER_ERRORS as error:
            self._messages.append(describe_error(error))
            return
        if y is None:
            return
        try:
            y = one_per_row(y, self.X.shape[0])
        except DataError as error:
            self._messages.append(f"{error}; y is ignored")
            return
        if self.ensemble.task == "classification":
            try:
                class_codes(y, self.ensemble.classes_)
                self.y = y
            except DataError as error:
                self._messages.append(f"{error}; y is ignored")
        elif y.dtype.kind not in "biuf":
            self._messages.append(f"y must hold numbers for a regression model, got dtype {y.dtype}; y is ignored")
        elif not np.all(np.isfinite(y)):
            self._messages.append("y contains NaN or infinite values; y is ignored (drop those rows to see it)")
        else:
            self.y = y

    def _set_after(self, after) -> None:
        if after is None:
            return
        edited, error = import_model(after)
        if error:
            self._messages.append(f"after: {error}")
            return
        if edited.n_trees != self.ensemble.n_trees:
            self._messages.append(
                f"after has {edited.n_trees} trees but the model has {self.ensemble.n_trees}; "
                "pass an edited version of the same model"
            )
            return
        self.after = edited

    def _feature_names(self, feature_names, X) -> list:
        if self.ensemble is None:
            return []
        n = self.ensemble.n_features_in_
        if feature_names is not None:
            names = [str(name) for name in feature_names]
            if len(names) == n:
                return names
            self._messages.append(f"feature_names has {len(names)} names but the model has {n} features; ignored")
        if self.ensemble.feature_names_in_ is not None:
            return [str(name) for name in self.ensemble.feature_names_in_]
        if X is not None and hasattr(X, "columns") and len(X.columns) == n:
            return [str(name) for name in X.columns]
        return [f"x[{index}]" for index in range(n)]

    def _class_names(self, class_names) -> list:
        classes = self.ensemble.classes_
        if class_names is not None:
            names = [str(name) for name in class_names]
            if len(names) == len(classes):
                return names
            self._messages.append(
                f"class_names has {len(names)} names but the model has {len(classes)} classes; ignored"
            )
        return [str(label) for label in classes]

    # --------------------------------------------------------------- controls
    def _make_controls(self, color_by: str):
        colours = [option for option in COLOR_BY if option != "data" or self.X is not None]
        if color_by not in colours:
            self._messages.append(f"color_by={color_by!r} needs X (the rows to count); coloured by prediction")
            color_by = "prediction"
        self.color_dropdown = ipywidgets.Dropdown(
            options=colours,
            value=color_by,
            description="colour by",
            layout=ipywidgets.Layout(width="210px"),
        )
        traitlets.link((self.color_dropdown, "value"), (self.canvas, "color_by"))
        items = [self.color_dropdown]
        n_trees = self.ensemble.n_trees if self.ensemble is not None else 1
        self.tree_picker = ipywidgets.BoundedIntText(
            value=0, min=0, max=max(0, n_trees - 1), description="tree", layout=ipywidgets.Layout(width="150px")
        )
        traitlets.link((self.tree_picker, "value"), (self, "selected_tree"))
        metrics = [metric for metric in OVERVIEW_METRICS if metric != "contribution" or self.X is not None]
        self.overview_dropdown = ipywidgets.Dropdown(
            options=metrics, value="leaves", description="bars", layout=ipywidgets.Layout(width="200px")
        )
        self.overview_dropdown.observe(lambda change: self._send_overview(), names="value")
        if n_trees > 1:
            items += [self.tree_picker, self.overview_dropdown]
        n_rows = self.X.shape[0] if self.X is not None else 0
        self.row_picker = ipywidgets.BoundedIntText(
            value=-1,
            min=-1,
            max=max(-1, n_rows - 1),
            description="path of row",
            layout=ipywidgets.Layout(width="190px"),
        )
        traitlets.link((self.row_picker, "value"), (self, "row"))
        if self.X is not None:
            items.append(self.row_picker)
        # with an edited model: draw the model before or after the edit
        self.version_toggle = ipywidgets.ToggleButtons(
            options=[("before", False), ("after", True)],
            value=False,
            description="model",
            tooltips=["the model as given, edited nodes marked", "the edited model, its new splits marked"],
            style={"button_width": "64px", "description_width": "48px"},
            layout=ipywidgets.Layout(width="auto"),
        )
        self.version_toggle.add_class("btt-version-toggle")
        self.version_toggle.layout.display = "none"
        self.version_toggle.observe(lambda change: self.show_after(change["new"]), names="value")
        items.append(self.version_toggle)
        box = ipywidgets.HBox(items)
        box.add_class("btt-tree-controls")
        return box

    # ---------------------------------------------------------------- syncing
    def _send_tree(self) -> None:
        if self.ensemble is None:
            return
        index = self.selected_tree
        shown = self._shown()
        tree = shown.trees[index]
        marks = None
        notes = {}
        if self.after is not None and self.showing_after:
            # the edited tree: its new splits and new leaves marked, and
            # what each re-split node replaced
            before = self.ensemble.trees[index]
            marks, previous = _payload.after_marks(before, tree)
            notes = {str(new): self._split_text(before, old) for new, old in previous.items()}
        elif self.after is not None:
            marks = _payload.diff_marks(tree, self.after.trees[index])
        count = target = histograms = None
        if self.X is not None:
            at_node = _payload.node_rows(shown.subset([index]), 0, self.X)
            self._at_node = ((index, self.showing_after), at_node)
            count, target = _payload.node_data_summary(shown.subset([index]), 0, self.X, self.y, at_node=at_node)
            histograms = self._split_histograms(tree, at_node)
        with self.canvas.hold_sync():
            self.canvas.tree = _payload.tree_payload(
                tree, marks=marks, data_count=count, data_target=target, histograms=histograms
            )
            self.canvas.notes = notes
            self.canvas.title = self._tree_title(index)
            self.canvas.output_label = self._output_label(index)
            self.canvas.path = self._path(index)
            self._send_path_reading()

    def _split_histograms(self, tree, at_node, shown: Ensemble | None = None) -> dict | None:
        """The split nodes' pictures (histograms of the split feature over
        the rows of X reaching each one), for trees of at most
        ``_payload.HISTOGRAM_MAX_SPLITS`` split nodes."""
        if tree.n_nodes - tree.n_leaves > _payload.HISTOGRAM_MAX_SPLITS:
            return None
        shown = self._shown() if shown is None else shown
        classes = shown.classes_ if shown.task == "classification" and self.y is not None else None
        return _payload.split_histograms(tree, at_node, self.X, y=self.y, classes=classes)

    def _shown(self) -> Ensemble:
        """The model drawn: the edited one in the after view."""
        return self.after if self.after is not None and self.showing_after else self.ensemble

    def _split_text(self, tree, node: int) -> str:
        from ._static_html import node_label

        if tree.children_left[node] == -1:
            return "a leaf"
        return node_label(tree, node, self._names, None, self.canvas.value_kind)

    def _tree_title(self, index: int) -> str:
        if self._title is not None:
            return self._title + (" · after the edit" if self.showing_after else "")
        source = self.ensemble.source
        tree = self._shown().trees[index]
        where = f"tree {index} of {self.ensemble.n_trees} · " if self.ensemble.n_trees > 1 else ""
        edit = " · after the edit" if self.showing_after else (" · before the edit" if self.after is not None else "")
        return f"{source.library} {source.estimator} · {where}{tree.n_leaves} leaves · depth {tree.max_depth}{edit}"

    def _output_label(self, index: int) -> str:
        ensemble = self.ensemble
        if ensemble.n_outputs <= 1 or ensemble.trees[index].value.shape[1] > 1:
            return ""
        column = int(ensemble.tree_output[index])
        if ensemble.classes_ is not None and column < len(ensemble.classes_):
            return f"raw score of class {ensemble.classes_[column]}"
        return f"output {column}"

    def _path(self, index: int) -> list:
        if self.X is None or self.row < 0:
            return []
        return _payload.row_path(self._shown().subset([index]), 0, self.X[self.row])

    def _send_path_reading(self) -> None:
        """The chosen row's path, read in one line, and its values of the
        features split on along the path (the box at the path's end)."""
        path = list(self.canvas.path)
        if not path:
            self.canvas.path_text, self.canvas.path_values = "", []
            return
        tree = self._shown().trees[self.selected_tree]
        values = self.X[self.row]
        self.canvas.path_text = f"row {self.row}: " + self.explain()
        seen, pairs = set(), []
        for node in path[:-1]:
            feature = int(tree.feature[node])
            if feature not in seen:
                seen.add(feature)
                pairs.append([self._names[feature], float(values[feature]) if np.isfinite(values[feature]) else None])
        self.canvas.path_values = pairs

    def _send_overview(self) -> None:
        if self.ensemble is None or self.ensemble.n_trees < 2:
            self.canvas.overview = {}
            return
        metric = self.overview_dropdown.value
        if metric == "contribution":
            if self.X is None or self.row < 0:
                self.canvas.overview = {
                    "metric": "contribution (choose a row)",
                    "values": [0.0] * self.ensemble.n_trees,
                }
                return
            values, column = _payload.tree_contributions(self.ensemble, self.X[self.row])
            label = f"contribution to raw score column {column} for row {self.row}"
            self.canvas.overview = {"metric": label, "values": [float(v) for v in values]}
            return
        if self.after is not None:
            # after an edit (pruning), the bars show the edited model
            self.canvas.overview = {
                "metric": f"{metric} after the edit",
                "values": _payload.tree_overview(self.after)[metric],
            }
            return
        self.canvas.overview = {"metric": metric, "values": _payload.tree_overview(self.ensemble)[metric]}

    def _on_tree(self, change) -> None:
        if self.ensemble is None:
            return
        try:
            check_tree_index(change["new"], self.ensemble.n_trees)
        except NodeError as error:
            self.error_box.show(str(error))
            self.selected_tree = change["old"]
            return
        self.selected_node = -1
        self._at_node = None
        self.canvas.histogram = {}
        self._send_tree()
        self.canvas.selected_tree = change["new"]

    @traitlets.validate("row")
    def _check_row(self, proposal):
        row = proposal["value"]
        n_rows = 0 if self.X is None else self.X.shape[0]
        if row != -1 and not 0 <= row < n_rows:
            where = "no X was given" if self.X is None else f"X has rows 0..{n_rows - 1}"
            raise traitlets.TraitError(f"row {row} does not exist: {where} (-1 shows no path)")
        return row

    def _on_row(self, change) -> None:
        if self.X is None:
            return
        with self.canvas.hold_sync():
            self.canvas.path = self._path(self.selected_tree)
            self._send_path_reading()
        if self.overview_dropdown.value == "contribution":
            self._send_overview()
        self._send_histogram()

    def _send_histogram(self, change=None) -> None:
        """The split feature's histogram at the selected node, for the
        rows of X that reach it (nothing without X or at a leaf)."""
        histogram = {}
        try:
            histogram = self.node_histogram()
        except USER_ERRORS:
            pass  # no node selected (-1) or none of X's rows: nothing to plot
        self.canvas.histogram = histogram

    def node_histogram(self, node: int | None = None, *, bins: int | None = None) -> dict:
        """What the details pane plots for a split: the split feature of the
        rows of ``X`` at ``node``, binned, stacked by class of ``y`` (one
        series without ``y``; a density for regression), with the threshold
        and the chosen row's value. The rows whose value is NaN or infinite
        are counted apart: ``missing``, of which ``missing_left`` go to the
        left child. Empty at leaves and without ``X``."""
        check_params(dict(node=node, bins=bins), HISTOGRAM_CONSTRAINTS, owner="TreeView.node_histogram")
        if self.ensemble is None or self.X is None:
            return {}
        node = self._node_or_selected(node)
        index = self.selected_tree
        shown = self._shown()
        tree = shown.trees[index]
        if not 0 <= node < tree.n_nodes:
            raise NodeError(f"node {node} does not exist; tree {index} has nodes 0..{tree.n_nodes - 1}")
        if tree.children_left[node] == -1:
            return {}
        key = (index, self.showing_after)
        if self._at_node is None or self._at_node[0] != key:
            indicator, offsets = shown.subset([index]).decision_path(self.X)
            self._at_node = (key, indicator.tocsc())
        rows = self._at_node[1][:, node].indices
        classes = shown.classes_ if shown.task == "classification" else None
        left = self._at_node[1][:, tree.children_left[node]].indices
        return _payload.split_histogram(
            tree, node, self.X, rows, y=self.y, classes=classes, row=self.row, bins=bins, left=left
        )

    def _node_or_selected(self, node: int | None) -> int:
        if node is not None:
            return int(node)
        if self.selected_node < 0:
            raise NodeError("no node is selected: pass node=... (0 is the root), or click a node of the tree")
        return int(self.selected_node)

    def set_after(self, after) -> None:
        """Mark the nodes that an edited version of the model changed
        (``None`` removes the marks and the before/after toggle)."""
        self.after = None
        if after is not None:
            edited, error = import_model(after)
            if error:
                raise ParameterError(f"after: {error}")
            if edited.n_trees != self.ensemble.n_trees:
                raise ParameterError(
                    f"after has {edited.n_trees} trees but the model has {self.ensemble.n_trees}; "
                    "pass an edited version of the same model"
                )
            self.after = edited
        self._after_changed()

    def _after_changed(self) -> None:
        self.version_toggle.layout.display = "" if self.after is not None else "none"
        if self.after is None and self.showing_after:
            self.showing_after = False
            self.version_toggle.value = False
        self._at_node = None
        self._send_tree()
        self._send_overview()

    def show_after(self, after: bool = True) -> None:
        """Draw the edited model (``True``) or the model as given."""
        check_params(dict(after=after), SHOW_AFTER_CONSTRAINTS, owner="TreeView.show_after")
        after = bool(after) and self.after is not None
        if after == self.showing_after:
            return
        self.showing_after = after
        self.version_toggle.value = after
        self.selected_node = -1
        self._at_node = None
        self._send_tree()

    def explain(self, row: int | None = None, tree: int | None = None) -> str:
        """One line reading the decision path of ``row`` of ``X`` in tree
        ``tree`` (default: the chosen row and the tree shown): each split
        with the row's value, then the leaf it reaches.

        >>> import bandit_tree_tools as btt
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        >>> model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        >>> btt.TreeView(model, X, y, class_names=["malignant", "benign"]).explain(0)
        'worst radius 25.38 > 16.795, worst texture 17.33 <= 19.91 → benign (0.53 of 17 training rows)'
        """
        check_params(dict(row=row, tree=tree), EXPLAIN_CONSTRAINTS, owner="TreeView.explain")
        if self.ensemble is None:
            raise ParameterError(f"this view has no model to explain: {self.error}")
        if self.X is None:
            raise DataError("explain needs the rows: pass X to TreeView(model, X)")
        row = self.row if row is None else int(row)
        if not 0 <= row < self.X.shape[0]:
            raise DataError(f"row {row} does not exist: X has rows 0..{self.X.shape[0] - 1}")
        index = self.selected_tree if tree is None else check_tree_index(int(tree), self.ensemble.n_trees)
        shown = self._shown()
        return path_reading(
            shown.trees[index],
            _payload.row_path(shown.subset([index]), 0, self.X[row]),
            self.X[row],
            self._names,
            self.canvas.class_names or None,
            self.canvas.value_kind,
            shown.split_rule,
        )

    # ---------------------------------------------------------------- display

    def node_details(self, node: int | None = None) -> dict:
        """What the details pane shows for a node, as a dict (for scripts)."""
        if self.ensemble is None:
            raise ParameterError(f"this view has no model to describe: {self.error}")
        check_params(dict(node=node), NODE_CONSTRAINTS, owner="TreeView.node_details")
        node = self._node_or_selected(node)
        tree = self._shown().trees[self.selected_tree]  # the edited tree in the after view
        if not 0 <= node < tree.n_nodes:
            raise NodeError(f"node {node} does not exist; tree {self.selected_tree} has nodes 0..{tree.n_nodes - 1}")
        from ._static_html import node_label

        details = {
            "node": node,
            "leaf": bool(tree.children_left[node] == -1),
            "label": node_label(tree, node, self._names, self.canvas.class_names or None, self.canvas.value_kind),
            "n_node_samples": int(tree.n_node_samples[node]),
            "impurity": float(tree.impurity[node]),
            "value": tree.value[node].tolist(),
        }
        if self.after is not None and self.showing_after:
            marks, previous = _payload.after_marks(self.ensemble.trees[self.selected_tree], tree)
            details["edit"] = _payload.MARK_NAMES[int(marks[node])]
            if node in previous:
                details["before"] = self._split_text(self.ensemble.trees[self.selected_tree], previous[node])
        elif self.after is not None:
            marks = _payload.diff_marks(tree, self.after.trees[self.selected_tree])
            details["edit"] = _payload.MARK_NAMES[int(marks[node])]
        return details

    def picture(self, max_depth: int | None = None) -> str:
        """The tree shown, as an SVG document: depths 0..``max_depth``
        (default: the whole tree up to depth 6), the chosen row's path and
        the edited nodes marked. The static view and :meth:`save` draw it."""
        check_params(dict(max_depth=max_depth), PICTURE_CONSTRAINTS, owner="TreeView.picture")
        if self.ensemble is None:
            raise ParameterError(f"this view has no model to draw: {self.error}")
        index = self.selected_tree
        tree = self.ensemble.trees[index]
        marks = _payload.diff_marks(tree, self.after.trees[index]) if self.after is not None else None
        count = histograms = row_values = None
        if self.X is not None:
            at_node = _payload.node_rows(self.ensemble.subset([index]), 0, self.X)
            count, _ = _payload.node_data_summary(self.ensemble.subset([index]), 0, self.X, at_node=at_node)
            histograms = self._split_histograms(tree, at_node, self.ensemble)  # the model as given
            if self.row >= 0:
                used = np.unique(tree.feature[tree.children_left != -1])
                row_values = {int(feature): float(self.X[self.row, feature]) for feature in used}
        return tree_svg(
            tree,
            feature_names=self._names,
            class_names=list(self.canvas.class_names) or None,
            value_kind=self.canvas.value_kind,
            marks=marks,
            max_depth=min(6, tree.max_depth) if max_depth is None else int(max_depth),
            path=self.canvas.path,
            split_rule=self.canvas.split_rule,
            data_count=count,
            histograms=histograms,
            row_values=row_values,
            multiway=bool(self.canvas.multiway),
        )

    def save(self, path, *, max_depth: int | None = None, dpi: int = 150) -> None:
        """Write the picture of :meth:`picture` to ``path``: ``.svg`` as
        it is, ``.png`` rasterised by matplotlib (``dpi``)."""
        from pathlib import Path

        check_params(dict(max_depth=max_depth, dpi=dpi), SAVE_CONSTRAINTS, owner="TreeView.save")
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".svg", ".png"):
            raise ParameterError(f"save writes .svg or .png files, got {path.name!r}; end the name in .svg or .png")
        svg = self.picture(max_depth)
        if suffix == ".svg":
            path.write_text(svg, encoding="utf-8")
        else:
            from ._picture import svg_to_png

            svg_to_png(svg, path, dpi=dpi)

    def static_html(self) -> str:
        if self.ensemble is None:
            return error_html(self.error)
        tree = self.ensemble.trees[self.selected_tree]
        levels = min(3, self.canvas.initial_depth, tree.max_depth)
        svg = self.picture(levels)
        shown = int(np.sum(_payload.depths(tree) <= levels))
        note = (
            f"Static view: depths 0-{min(levels, tree.max_depth)} ({shown} of {tree.n_nodes} nodes). "
            "Run the notebook with a live kernel to explore the whole tree."
        )
        body = f'<div style="overflow:auto;max-width:100%">{svg}</div><div>{escape(note)}</div>'
        if self.error:
            body = error_html(self.error) + body
        return f'<div class="btt-static btt-tree-view-static">{section(self.canvas.title, body)}</div>'

    def __repr__(self) -> str:
        if self.ensemble is None:
            return f"TreeView(error={self.error!r})"
        return f"TreeView({self.ensemble!r}, selected_tree={self.selected_tree}, selected_node={self.selected_node})"


def path_reading(tree, path, values, feature_names, class_names, value_kind: str, split_rule: str) -> str:
    """``"worst radius 25.38 > 16.8, ... → malignant (0.95 of 117 training rows)"``:
    each split of ``path`` with the row's value and the side it took, then the leaf."""
    from ._static_html import feature_label, node_label, number

    parts = []
    for node, child in zip(path[:-1], path[1:]):
        feature = int(tree.feature[node])
        name = feature_label(feature_names, feature)
        value = float(values[feature])
        went_left = child == int(tree.children_left[node])
        if np.isnan(value):
            parts.append(f"{name} missing (goes {'left' if went_left else 'right'})")
        elif tree.is_categorical[node]:
            parts.append(f"{name} {number(value)} {'in' if went_left else 'not in'} the left categories")
        else:
            low, high = ("<", ">=") if split_rule == "lt" else ("<=", ">")
            parts.append(f"{name} {number(value)} {low if went_left else high} {number(tree.threshold[node], 5)}")
    leaf = path[-1]
    reading = node_label(tree, leaf, feature_names, class_names, value_kind)
    if value_kind == "fractions" and tree.value.shape[1] > 1:
        reading += f" ({float(np.max(tree.value[leaf])):.2f} of {int(tree.n_node_samples[leaf])} training rows)"
    else:
        reading += f" ({int(tree.n_node_samples[leaf])} training rows)"
    return ", ".join(parts) + (" → " if parts else "→ ") + reading
