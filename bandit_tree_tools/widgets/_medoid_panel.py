"""MedoidPanel: the real rows a leaf stands for (BanditPAM / PAM medoids)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import Interval, check_params
from ..exceptions import DataError
from ..medoids import LeafMedoids
from ..medoids._core import as_rows
from ..medoids._leaves import LEAF_MEDOIDS_CONSTRAINTS, check_embedding, check_image_shape, rows_fingerprint
from ..tree import check_tree_index, check_X
from ._assets import module_source, stylesheet
from ._common import (
    USER_ERRORS,
    ErrorBox,
    Panel,
    anywidget,
    describe_error,
    import_model,
    ipywidgets,
    plural,
    traitlets,
)
from ._payload import column
from ._static_html import error_html, escape, number, section, table
from ._tree_view import TreeView

# what each parameter of MedoidPanel accepts: leaf_medoids' rules, None where the panel has a default (the
# model, X, y, feature_names and medoids are the data; tree and leaf are checked against the model)
MEDOID_PANEL_CONSTRAINTS = {
    "n_medoids": [None, *LEAF_MEDOIDS_CONSTRAINTS["n_medoids"]],
    "tree": [None, Interval(int, 0, None)],
    "image_shape": [None, "array-like"],
    "metric": [None, *LEAF_MEDOIDS_CONSTRAINTS["metric"]],
    "algorithm": LEAF_MEDOIDS_CONSTRAINTS["algorithm"],
    "random_state": LEAF_MEDOIDS_CONSTRAINTS["random_state"],
    "leaf": [None, Interval(int, 0, None)],
    "embedding": LEAF_MEDOIDS_CONSTRAINTS["embedding"],
}
LEAF_CONSTRAINTS = {"leaf": [Interval(int, 0, None)]}  # show_leaf, medoids_of


class MedoidGallery(anywidget.AnyWidget):
    """The browser part: a leaf's medoids as images or as a table."""

    _esm = module_source("medoid_gallery.js")
    _css = stylesheet()

    prototypes = traitlets.Bytes(b"").tag(sync=True)
    n_medoids = traitlets.Int(0).tag(sync=True)
    n_features = traitlets.Int(0).tag(sync=True)
    rows = traitlets.List(traitlets.Int()).tag(sync=True)
    sizes = traitlets.List(traitlets.Int()).tag(sync=True)
    image_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    value_range = traitlets.List(traitlets.Float(), default_value=[0.0, 1.0]).tag(sync=True)
    feature_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    info = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)  # the class (y) of each medoid row
    cells = traitlets.List(traitlets.Unicode()).tag(sync=True)  # the table's text, medoid after medoid (row_cells)


class MedoidPanel(Panel, ipywidgets.VBox):
    """Pick a leaf (in the tree or in a list) and see its ``k`` medoid rows.

    The medoids come from :func:`bandit_tree_tools.leaf_medoids` (computed
    for a leaf the first time it is shown, then kept), or from a
    :class:`LeafMedoids` result passed as ``medoids``.

    Parameters
    ----------
    model : fitted model or Ensemble
    X : array-like or DataFrame
        The rows to summarise (usually the training rows).
    y : array-like, optional
        Labels of ``X`` (the third argument, as in :class:`TreeView`): each
        medoid shows its class, and the tree's node details the class
        distribution.
    n_medoids : int, default 3 (or the ``medoids`` result's)
        Prototypes per leaf. A leaf with fewer rows shows all of them.
    tree : int, default 0 (or the ``medoids`` result's)
        Tree of an ensemble whose leaves are shown.
    image_shape : (height, width), optional
        Draw each medoid as a grey-level image (e.g. (8, 8) for scikit-learn's
        digits) instead of a table of feature values.
    feature_names : list of str, optional
        Defaults to the model's names; with ``image_shape`` and no names,
        pixels are named by position, ``"pixel (row 3, col 5)"``.
    metric, algorithm, random_state
        Passed to :func:`leaf_medoids`.
    medoids : LeafMedoids, optional
        Precomputed medoids. They must have been computed on this model and
        these rows (else a DataError is shown and nothing is drawn); the
        panel adopts their ``n_medoids``, ``tree`` and ``metric`` where these
        arguments are left out, and shows a ParameterError saying what
        differs where they are given with other values. Leaves the result
        lacks are computed with its settings.
    leaf : int, optional
        Leaf shown first (default: the leaf with the most rows).
    embedding : array-like (n_rows, n_dims), optional
        Where the distances are measured, one finite row per row of ``X``
        (see :func:`leaf_medoids`): for example ``X`` imputed where it holds
        NaN or standardised. A ``medoids`` result must have been computed
        on the same one.

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
    >>> model = DecisionTreeClassifier(max_leaf_nodes=4, random_state=0).fit(X, y)
    >>> panel = btt.MedoidPanel(model, X, n_medoids=2)
    >>> type(panel).__name__, panel.k.value, len(panel.current.medoids[panel.leaf_picker.value])
    ('MedoidPanel', 2, 2)
    >>> k5 = btt.leaf_medoids(model, X, n_medoids=5)
    >>> btt.MedoidPanel(model, X, medoids=k5).k.value  # the result's settings are adopted
    5
    >>> btt.MedoidPanel(model, X, n_medoids=3, medoids=k5).error
    'ParameterError: these medoids were computed with n_medoids=5, not 3'
    """

    _parameter_constraints = MEDOID_PANEL_CONSTRAINTS

    def __init__(
        self,
        model,
        X,
        y=None,
        *,
        n_medoids: int | None = None,
        tree: int | None = None,
        image_shape=None,
        feature_names=None,
        metric: str | None = None,
        algorithm: str = "auto",
        random_state=0,
        medoids=None,
        leaf: int | None = None,
        embedding=None,
    ):
        check_params(
            dict(
                n_medoids=n_medoids,
                tree=tree,
                image_shape=image_shape,
                metric=metric,
                algorithm=algorithm,
                random_state=random_state,
                leaf=leaf,
                embedding=embedding,
            ),
            MEDOID_PANEL_CONSTRAINTS,
            owner="MedoidPanel",
        )
        super().__init__()
        self.add_class("btt-medoid-panel")
        self.gallery = MedoidGallery()
        self.error_box = ErrorBox()
        self.ensemble, error = import_model(model)
        self.X = None
        self.tree_view = None
        self.y = None
        messages = [error] if error else []
        medoids, tree, n_medoids, metric = self._adopt(medoids, tree, n_medoids, metric, messages)
        self.tree_index = int(tree)
        self.metric, self.algorithm, self.random_state = metric, algorithm, random_state
        self.p = medoids.p if medoids is not None else 2.0  # the Minkowski power of an adopted result
        self.embedding = None  # checked in _check_input
        self._cache = {}  # (leaf, k) -> LeafMedoids of that leaf
        self.image_shape = None
        if self.ensemble is not None and not messages:
            self._check_input(X, medoids, n_medoids, image_shape, embedding, messages)
        self._build_controls(n_medoids)
        self.error_box.show("\n".join(messages))
        children = [self.error_box]
        if self.ensemble is not None and self.X is not None:
            self._build_views(X, y, feature_names, leaf)
            children = [self.controls, self.error_box, self.tree_view, self.gallery]
        self.children = children

    # ------------------------------------------------------------ construction
    @staticmethod
    def _adopt(medoids, tree, n_medoids, metric, messages):
        """A precomputed result's settings where none is given (a given one
        that differs is reported), then the defaults."""
        if medoids is not None and not isinstance(medoids, LeafMedoids):
            messages.append(
                f"ParameterError: medoids must be a LeafMedoids result of leaf_medoids, got {type(medoids).__name__}"
            )
            medoids = None
        if medoids is not None:
            settings = medoids.differences(tree=tree, n_medoids=n_medoids, metric=metric)
            if settings:
                messages.append("ParameterError: " + "; ".join(settings))
            tree, n_medoids, metric = medoids.tree, medoids.n_medoids, medoids.metric
        n_medoids = 3 if n_medoids is None else n_medoids
        tree = 0 if tree is None else tree
        metric = "euclidean" if metric is None else metric
        return medoids, tree, n_medoids, metric

    def _check_input(self, X, medoids, n_medoids, image_shape, embedding, messages) -> None:
        """The tree index, X, the embedding, a precomputed result's model,
        rows and embedding, and the image shape; a problem becomes a message
        and leaves ``X`` unset."""
        try:
            check_tree_index(self.tree_index, self.ensemble.n_trees)
            self.X = self.ensemble.check_X(X)
            self.X_input = X
            if embedding is not None:
                self.embedding = check_embedding(embedding, self.X.shape[0])
            if medoids is not None:
                data = medoids.differences(
                    ensemble=self.ensemble,
                    X=as_rows(check_X(X, self.ensemble.n_features_in_, self.ensemble.feature_names_in_, "float64")),
                    embedding_fingerprint="" if self.embedding is None else rows_fingerprint(self.embedding),
                )
                if data:
                    raise DataError("; ".join(data))
                for known in medoids.leaves.tolist():
                    self._cache[(int(known), int(n_medoids))] = medoids
            if image_shape is not None:
                self.image_shape = check_image_shape(image_shape, self.X.shape[1])
        except USER_ERRORS as failure:
            messages.append(describe_error(failure))
            self.X = None

    def _build_controls(self, n_medoids) -> None:
        self.k = ipywidgets.BoundedIntText(
            value=int(n_medoids), min=1, max=100, description="medoids (k)", layout=ipywidgets.Layout(width="170px")
        )
        self.leaf_picker = ipywidgets.Dropdown(options=[], description="leaf", layout=ipywidgets.Layout(width="280px"))
        self.controls = ipywidgets.HBox([self.leaf_picker, self.k])
        self.controls.add_class("btt-medoid-controls")

    def _build_views(self, X, y, feature_names, leaf) -> None:
        """The tree (coloured by the rows of X), the gallery, the leaf
        picker (leaves by rows, most first), then the first leaf shown."""
        if feature_names is None and self.image_shape is not None and self.ensemble.feature_names_in_ is None:
            width = self.image_shape[1]
            feature_names = [f"pixel (row {p // width}, col {p % width})" for p in range(self.X.shape[1])]
        self.tree_view = TreeView(self.ensemble, X, y, feature_names=feature_names, color_by="data")
        self.y = self.tree_view.y  # checked there: one value per row, labels the model knows
        self.tree_view.selected_tree = self.tree_index
        self.gallery.feature_names = list(self.tree_view.canvas.feature_names)
        if self.image_shape is not None:
            self.gallery.image_shape = list(self.image_shape)
            self.gallery.value_range = [float(np.nanmin(self.X)), float(np.nanmax(self.X))]
        # the shown tree only (X came from check_X)
        leaf_of_row = self.ensemble.apply(self.X, trees=[self.tree_index], check_input=False)[:, 0]
        leaves = np.flatnonzero(self.ensemble.trees[self.tree_index].children_left == -1)
        self.rows_per_leaf = {int(node): int(np.count_nonzero(leaf_of_row == node)) for node in leaves}
        ordered = sorted(self.rows_per_leaf, key=lambda node: (-self.rows_per_leaf[node], node))
        self.leaf_picker.options = [
            (f"leaf {node} · {plural(self.rows_per_leaf[node], 'row')}", node) for node in ordered
        ]
        first = leaf if leaf is not None else ordered[0]
        notices = [self.tree_view.error] if self.tree_view.error else []  # a y it ignored, and why
        if first not in self.rows_per_leaf:
            notices.append(f"node {first} is not a leaf of tree {self.tree_index}; showing leaf {ordered[0]} instead")
            first = ordered[0]
        self.leaf_picker.value = first
        self.leaf_picker.observe(self._on_leaf, names="value")
        self.k.observe(lambda change: self.show_leaf(self.leaf_picker.value), names="value")
        self.tree_view.observe(self._on_node, names="selected_node")
        self.show_leaf(first)
        if notices:
            self.error_box.show("\n".join(notices))

    # ---------------------------------------------------------------- events
    def _on_leaf(self, change) -> None:
        if change["new"] is not None:
            self.show_leaf(change["new"])

    def _on_node(self, change) -> None:
        node = change["new"]
        if node < 0:
            return
        if node in self.rows_per_leaf:
            self.leaf_picker.value = node  # triggers show_leaf
        else:
            self.gallery.message = f"Node {node} is a split, not a leaf: click a leaf to see its medoids."

    # --------------------------------------------------------------- display
    def medoids_of(self, leaf: int):
        """The LeafMedoids holding ``leaf`` at the current k (computed once)."""
        check_params(dict(leaf=leaf), LEAF_CONSTRAINTS, owner="MedoidPanel.medoids_of")
        key = (int(leaf), int(self.k.value))
        if key not in self._cache:
            from ..medoids import leaf_medoids

            self._cache[key] = leaf_medoids(
                self.ensemble,
                self.X_input,
                n_medoids=int(self.k.value),
                tree=self.tree_index,
                leaves=[int(leaf)],
                metric=self.metric,
                p=self.p,
                algorithm=self.algorithm,
                random_state=self.random_state,
                progress=False,  # one leaf
                embedding=self.embedding,
            )
        return self._cache[key]

    def show_leaf(self, leaf: int) -> None:
        """Show the medoids of ``leaf`` in the gallery (a leaf that is not
        one of the tree's, or without rows, shows why in the panel)."""
        check_params(dict(leaf=leaf), LEAF_CONSTRAINTS, owner="MedoidPanel.show_leaf")
        leaf = int(leaf)
        k = int(self.k.value)
        try:
            result = self.medoids_of(leaf)
        except USER_ERRORS as failure:
            self.error_box.show(describe_error(failure))
            return
        self.error_box.clear()
        rows = result.medoids[leaf]
        n_rows = result.n_samples[leaf]
        if n_rows == 0:
            message = f"No row of X reaches leaf {leaf}: it has no prototype."
        elif n_rows < k:
            message = f"Leaf {leaf} has {plural(n_rows, 'row')}, fewer than k = {k}: all of them are shown."
        else:
            message = ""
        prototypes = result.prototypes[leaf] if n_rows else np.zeros((0, self.X.shape[1]))
        with self.gallery.hold_sync():
            self.gallery.prototypes = column(prototypes, np.float32)
            self.gallery.n_features = int(self.X.shape[1])
            self.gallery.n_medoids = int(len(rows))
            self.gallery.rows = [int(row) for row in rows]
            self.gallery.sizes = [int(size) for size in result.cluster_sizes[leaf]]
            self.gallery.title = (
                f"Leaf {leaf} of tree {self.tree_index}: {plural(n_rows, 'row')}, {plural(len(rows), 'medoid')}"
            )
            self.gallery.info = (
                f"algorithm: {result.algorithms.get(leaf, result.algorithm)} · metric: {result.metric} · "
                f"loss {result.loss[leaf]:.4g} · distance calls for this leaf: {result.distance_calls.get(leaf, 0)}"
            )
            self.gallery.message = message
            self.gallery.labels = [str(self.y[row]) for row in rows] if self.y is not None else []
            self.gallery.cells = [] if self.image_shape is not None else sum(self.row_cells(rows), [])
        self.current = result
        if self.tree_view is not None and self.tree_view.selected_node != leaf:
            self.tree_view.selected_node = leaf

    def row_cells(self, rows) -> list:
        """The text of rows ``rows`` of X, one list per row, as the gallery's
        table shows them: the values as X holds them (a categorical column's
        labels, not the codes the model reads), whole numbers in full and
        others to 4 significant digits, "n/a" where missing."""
        rows = [int(row) for row in rows]
        if hasattr(self.X_input, "iloc"):
            return [[_cell(value) for value in self.X_input.iloc[row].tolist()] for row in rows]
        return [[_cell(value) for value in self.X[row].tolist()] for row in rows]

    def static_html(self) -> str:
        if self.tree_view is None:
            return error_html(self.error)
        leaf = self.leaf_picker.value
        result = self.medoids_of(leaf)
        rows = result.medoids[leaf]
        names = self.gallery.feature_names
        body = f"<div>{escape(self.gallery.title)}</div><div style='color:#666'>{escape(self.gallery.info)}</div>"
        if self.gallery.message:
            body += f"<div>{escape(self.gallery.message)}</div>"
        if self.image_shape is not None:
            # each picture with the live gallery's caption: its row, class and cluster size
            labels, sizes = list(self.gallery.labels), list(self.gallery.sizes)
            cards = []
            for m, values in enumerate(result.prototypes[leaf]):
                caption = f"row {rows[m]}" + (f" · class {labels[m]}" if m < len(labels) else "")
                size = f"{plural(sizes[m], 'row')} nearest" if m < len(sizes) else ""
                cards.append(
                    f'<div style="display:inline-block;text-align:center;margin:2px">{self._image_svg(values)}'
                    f"<div>{escape(caption)}</div><div>{escape(size)}</div></div>"
                )
            body += "".join(cards)
        else:
            header = ["feature"] + [f"row {row}" for row in rows]
            cells = self.row_cells(rows)
            body += table([[names[f]] + [texts[f] for texts in cells] for f in range(self.X.shape[1])], header)
        return (
            '<div class="btt-static btt-medoid-panel-static">'
            + self.tree_view.static_html()
            + section("Leaf medoids", body)
            + "</div>"
        )

    def _image_svg(self, values) -> str:
        height, width = self.image_shape
        low, high = self.gallery.value_range
        span = (high - low) or 1.0
        size = max(2, 96 // max(height, width))
        cells = []
        for index, value in enumerate(values):
            if np.isnan(value):
                fill = "rgb(255,205,205)"  # missing: pale red, as the live gallery draws it
            else:
                grey = int(round(255 * (1 - np.clip((value - low) / span, 0, 1))))
                fill = f"rgb({grey},{grey},{grey})"
            y, x = divmod(index, width)
            cells.append(f'<rect x="{x * size}" y="{y * size}" width="{size}" height="{size}" fill="{fill}"/>')
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * size}" height="{height * size}" '
            f'style="margin:4px;border:1px solid #ddd">{"".join(cells)}</svg>'
        )

    def __repr__(self) -> str:
        if self.tree_view is None:
            return f"MedoidPanel(error={self.error!r})"
        return (
            f"MedoidPanel({self.ensemble!r}, tree={self.tree_index}, leaf={self.leaf_picker.value}, k={self.k.value})"
        )


def _cell(value) -> str:
    """One value of a row of X as the gallery's table shows it."""
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return "n/a"
    if isinstance(value, (float, np.floating)):
        return number(value)
    return str(value)
