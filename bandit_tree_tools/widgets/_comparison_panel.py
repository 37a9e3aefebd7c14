"""ComparisonPanel: a TSDT tree beside another tree, the comparison table,
and the convergence of the search's root posterior."""

from __future__ import annotations

import numpy as np

from ..exceptions import ParameterError
from ..tsdt._compare import COLUMNS, VARIANT_TITLES
from ._common import USER_ERRORS, ErrorBox, Panel, describe_error, import_model, ipywidgets
from ._static_html import error_html, escape, number, section
from ._tree_view import TreeView


def trace_svg(mean, sd, *, width: int = 560, height: int = 160) -> str:
    """Root posterior mean with a +-2 sd band, as a script-free inline SVG."""
    mean = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    if mean.size == 0:
        return "<div>no iterations recorded</div>"
    low = float(np.nanmin(mean - 2 * sd))
    high = float(np.nanmax(mean + 2 * sd))
    span = (high - low) or 1.0
    left, top, plot_w, plot_h = 46, 6, width - 54, height - 28
    xs = left + plot_w * (np.arange(mean.size) / max(1, mean.size - 1))

    def y_of(values):
        return top + plot_h * (1 - (values - low) / span)

    upper, lower = y_of(mean + 2 * sd), y_of(mean - 2 * sd)
    band = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, upper))
    band += " " + " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs[::-1], lower[::-1]))
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, y_of(mean)))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="btt-trace-svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="10" style="color:var(--jp-ui-font-color1, #222)">'
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#8a8a8a"/>'
        f'<polygon points="{band}" fill="#4e79a7" fill-opacity="0.22" stroke="none"/>'
        f'<polyline points="{line}" fill="none" stroke="#2d5a8c" stroke-width="1.6"/>'
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" fill="currentColor">{escape(number(high, 3))}</text>'
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" fill="currentColor">{escape(number(low, 3))}</text>'
        f'<text x="{left}" y="{height - 6}" fill="currentColor">1</text>'
        f'<text x="{left + plot_w}" y="{height - 6}" text-anchor="end" fill="currentColor">{mean.size} iterations</text>'
        f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" fill="currentColor">'
        "root posterior of accuracy − λ·splits: mean and ±2 sd</text></svg>"
    )


def comparison_table_html(frame) -> str:
    """The compare_trees table, best test accuracy and objective in bold."""
    columns = [name for name in COLUMNS if name in frame.columns]
    columns += [name for name in frame.columns if name not in columns]
    best = {name: frame[name].max() for name in ("test_accuracy", "objective") if name in frame.columns}
    head = "".join(f'<th style="padding:2px 8px;text-align:right">{escape(name)}</th>' for name in columns)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for name in columns:
            value = row[name]
            text = number(value, 4) if isinstance(value, (float, np.floating)) else str(value)
            bold = name in best and isinstance(value, (float, np.floating)) and value == best[name]
            style = "padding:2px 8px;text-align:right" + (";font-weight:700" if bold else "")
            cells.append(f'<td style="{style}">{escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table class="btt-comparison-table" style="border-collapse:collapse"><tr>{head}</tr>'
        + "".join(body)
        + "</table>"
    )


class ComparisonPanel(Panel, ipywidgets.VBox):
    """A TSDT (or Fast-TSDT) tree next to another tree, with the
    :func:`bandit_tree_tools.compare_trees` table and the convergence trace
    of the search's root posterior.

    Parameters
    ----------
    tsdt : fitted TSDTClassifier
        Anything with ``ensemble_`` (drawn) and, optionally, ``trace_``.
    model : fitted model or Ensemble, optional
        The tree to compare with (for example your scikit-learn tree).
    table : DataFrame, optional
        The result of :func:`compare_trees`.
    X, y : optional
        Rows routed through both trees (counts per node, decision paths).
    titles : (str, str), optional
        Titles of the two trees; by default the TSDT tree's row name in
        :func:`compare_trees`' table ("optimistic TSDT", "Fast-TSDT" or
        "TSDT", from its ``variant``; another first tree goes by its class
        name) and "your tree".

    Raises
    ------
    ParameterError
        ``titles`` that are not two strings. A model or table the panel
        cannot use is shown in the panel instead (``error``).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X = np.random.default_rng(0).integers(0, 2, size=(200, 4))
    >>> y = X[:, 0] ^ X[:, 1]
    >>> tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=20, random_state=0).fit(X, y)
    >>> cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> panel = btt.ComparisonPanel(tsdt, cart, X=X, y=y)
    >>> type(panel).__name__, len(panel.views), panel.error
    ('ComparisonPanel', 2, '')
    """

    def __init__(self, tsdt, model=None, *, table=None, X=None, y=None, titles=None):
        if titles is not None and not (
            isinstance(titles, (tuple, list)) and len(titles) == 2 and all(isinstance(title, str) for title in titles)
        ):
            raise ParameterError(
                f"titles of ComparisonPanel must be None or two str (the TSDT tree's, then the other's), got {titles!r}"
            )
        super().__init__()
        self.add_class("btt-comparison-panel")
        self.error_box = ErrorBox()
        messages = []
        self.tsdt_ensemble, error = import_model(tsdt)
        if error:
            messages.append(f"TSDT model: {error}")
        self.trace = getattr(tsdt, "trace_", None)
        if self.trace is not None and not (hasattr(self.trace, "mean") and hasattr(self.trace, "sd")):
            messages.append(
                f"TSDT model: trace_ must be a SearchTrace (mean and sd per iteration), got {type(self.trace).__name__}"
            )
            self.trace = None
        self.model_ensemble = None
        if model is not None:
            self.model_ensemble, error = import_model(model)
            if error:
                messages.append(f"model: {error}")
        self.table = table
        if table is not None and not hasattr(table, "iterrows"):
            messages.append(f"table must be the DataFrame returned by compare_trees, got {type(table).__name__}")
            self.table = None
        if titles is None:  # the TSDT tree goes by its row's name in compare_trees' table; another by its class
            variant = getattr(tsdt, "variant", None)
            titles = (VARIANT_TITLES[variant] if variant in VARIANT_TITLES else type(tsdt).__name__, "your tree")
        self.views = []
        for ensemble, title in ((self.tsdt_ensemble, titles[0]), (self.model_ensemble, titles[1])):
            if ensemble is None:
                continue
            summary = f"{title} · {ensemble.n_leaves} leaves · depth {ensemble.max_depth}"
            multiway = ensemble is self.tsdt_ensemble and hasattr(tsdt, "n_leaves_") and hasattr(tsdt, "n_splits_")
            if multiway:
                summary = f"{title} · {tsdt.n_leaves_} leaves · {tsdt.n_splits_} multiway splits"
            # one height for both trees, so that they line up side by side
            view = TreeView(ensemble, X, y, height=420, title=summary)
            # the common format holds a multiway split as a chain of binary
            # category splits: the view draws each chain as one node again
            view.canvas.multiway = bool(multiway)
            view.layout.flex = "1 1 0"
            view.layout.min_width = "380px"
            if view.error:
                messages.append(f"{title}: {view.error}")
            self.views.append(view)
        self.error_box.show("\n".join(dict.fromkeys(messages)))
        self.table_html = ipywidgets.HTML(self._table_html())
        self.table_html.add_class("btt-comparison")
        self.trace_html = ipywidgets.HTML(self._trace_html())
        self.trace_html.add_class("btt-trace")
        trees = ipywidgets.HBox(self.views, layout=ipywidgets.Layout(flex_flow="row wrap", width="100%"))
        trees.add_class("btt-comparison-trees")
        self.children = [self.error_box, self.table_html, trees, self.trace_html]

    def _table_html(self) -> str:
        if self.table is None:
            return ""
        return section("Comparison on the same data (compare_trees)", comparison_table_html(self.table))

    def _trace_html(self) -> str:
        if self.trace is None:
            return ""
        try:
            return section("Convergence of the search", trace_svg(self.trace.mean, self.trace.sd))
        except USER_ERRORS as error:
            return error_html(f"the trace could not be drawn: {describe_error(error)}")

    def static_html(self) -> str:
        parts = [error_html(self.error)] if self.error else []
        parts.append(self._table_html())
        parts.append(
            '<div style="display:flex;flex-wrap:wrap;gap:12px">'
            + "".join(f"<div>{view.static_html()}</div>" for view in self.views)
            + "</div>"
        )
        parts.append(self._trace_html())
        return '<div class="btt-static btt-comparison-panel-static">' + "".join(parts) + "</div>"

    def __repr__(self) -> str:
        shown = ", ".join(repr(view.ensemble) for view in self.views if view.ensemble is not None)
        return f"ComparisonPanel({shown or 'error=' + repr(self.error)})"


__all__ = ["ComparisonPanel", "comparison_table_html", "trace_svg"]
