"""The one plotting convention of every result.

``result.plot(ax=None, ...)`` draws on ``ax`` and returns the
:class:`matplotlib.figure.Figure` it drew on. ``ax`` is one Axes, or a
sequence of Axes for results drawn in several panels (the method's docstring
says how many); ``None`` makes a new figure. matplotlib is imported only here,
when a plot is asked for.
"""

from __future__ import annotations

import numpy as np

from .exceptions import ParameterError, missing_dependency


def pyplot():
    """``matplotlib.pyplot``, or a MissingDependencyError naming the extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise missing_dependency("matplotlib", "widgets", "plotting a result") from None
    return plt


def axes_for(ax, n_panels: int = 1, *, panel_size=(4.5, 3.4), ncols=None):
    """``(figure, axes)``: ``n_panels`` Axes as a flat list, taken from ``ax``
    or, when ``ax`` is None, from a new constrained-layout figure of
    ``ncols`` columns (all panels in one row by default)."""
    plt = pyplot()
    if ax is None:
        ncols = n_panels if ncols is None else min(ncols, n_panels)
        nrows = -(-n_panels // ncols)
        figure, grid = plt.subplots(
            nrows,
            ncols,
            figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
            squeeze=False,
            layout="constrained",
        )
        axes = list(grid.ravel())
        for extra in axes[n_panels:]:
            extra.set_visible(False)
        return figure, axes[:n_panels]
    axes = list(np.atleast_1d(np.asarray(ax, dtype=object)).ravel())
    if len(axes) != n_panels or not all(hasattr(a, "plot") and hasattr(a, "figure") for a in axes):
        raise ParameterError(
            f"ax must be None or {'one matplotlib Axes' if n_panels == 1 else f'{n_panels} matplotlib Axes'} "
            f"for this plot, got {ax!r}"
        )
    return axes[0].figure, axes
