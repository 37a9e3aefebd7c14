"""Pieces shared by the panels: optional imports, error boxes, the static
fallback hook, and turning exceptions into one readable line."""

from __future__ import annotations

import traceback

from ..exceptions import BanditTreeToolsError, missing_dependency

try:
    import anywidget
    import ipywidgets
    import traitlets
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_dependency(error.name or "ipywidgets", "widgets", "The Jupyter panels") from None

from ._static_html import error_html, escape

__all__ = [
    "anywidget",
    "ipywidgets",
    "traitlets",
    "describe_error",
    "ErrorBox",
    "Panel",
    "StaticFallback",
    "import_model",
]

# Errors a panel shows as a message instead of raising: the project's own,
# raised on purpose for input a user can fix. Anything else (a TypeError,
# KeyError, ... from a bug) raises, or, in a panel's background thread, is
# shown with its traceback (ErrorBox.show_failure).
USER_ERRORS = (BanditTreeToolsError,)


def plural(count, word: str, many: str | None = None) -> str:
    """``"1 row"``, ``"2 rows"``: a count and its noun, agreeing."""
    count = int(count)
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def describe_error(error: BaseException) -> str:
    """``ErrorType: message`` on one line, without the traceback."""
    message = str(error).strip() or "(no message)"
    return f"{type(error).__name__}: {message}"


def import_model(model):
    """``(ensemble, None)`` or ``(None, message)`` for a model a panel is given."""
    from ..interop import from_model

    try:
        return from_model(model), None
    except USER_ERRORS as error:
        return None, describe_error(error)


class ErrorBox(ipywidgets.HTML):
    """A red box with a message; hidden while the message is empty."""

    def __init__(self, message: str = "", **kwargs):
        super().__init__(**kwargs)
        self.add_class("btt-panel-error-box")
        self.show(message)

    traceback = ""

    def show(self, message: str) -> None:
        self.message = message
        self.traceback = ""
        self.value = error_html(message) if message else ""
        self.layout.display = "" if message else "none"

    def clear(self) -> None:
        self.show("")

    def show_failure(self, failure) -> None:
        """A message (str), or an unexpected exception: then its one-line
        description and, below it, the traceback, to report the bug."""
        if isinstance(failure, str):
            self.show(failure)
            return
        self.show(f"unexpected error, please report it: {describe_error(failure)}")
        trace = "".join(traceback.format_exception(type(failure), failure, failure.__traceback__))
        self.traceback = trace
        self.value += f'<details class="btt-traceback"><summary>traceback</summary><pre>{escape(trace)}</pre></details>'


# Kept with the saved picture: where the widget cannot be shown (a saved
# notebook reopened without a kernel), JupyterLab's "Error displaying widget:
# model not found" line below the picture is hidden.
_TWIN_STYLE = (
    "<style>.jp-OutputArea-child:has(.btt-static-twin) + .jp-OutputArea-child "
    ".jupyter-widgets:not(:has(*)){display:none}</style>"
)


class StaticFallback:
    """Mixin: a script-free picture of the panel next to the live widget.

    ``_repr_mimebundle_`` adds a ``text/html`` view to the widget's bundle
    (nbconvert without widget state, GitHub and other viewers pick it).
    Displayed in a notebook, the panel also writes that picture as an output
    of its own just before the widget (the "static twin"): JupyterLab shows
    the widget view whenever a bundle has one, even when its model is gone,
    so a saved notebook reopened without a kernel would otherwise show only
    "model not found". While the widget is live, the panels' style sheet
    hides the twin; ``refresh_static()`` rewrites it (after a run), so the
    saved picture matches the last state.
    """

    _static_handle = None

    def static_html(self) -> str:  # pragma: no cover - overridden
        """The panel as script-free HTML: what a saved notebook shows where no
        kernel runs it."""
        raise NotImplementedError

    def _safe_static_html(self) -> str:
        try:
            return self.static_html()
        except Exception as error:  # the fallback must never break display
            return f"<pre>{escape(describe_error(error))}</pre>"

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        metadata = None
        if isinstance(bundle, tuple):
            bundle, metadata = bundle
        bundle = dict(bundle or {})
        bundle["text/html"] = self._safe_static_html()
        bundle["text/plain"] = self._plain_text()
        return (bundle, metadata) if metadata is not None else bundle

    def _plain_text(self) -> str:
        """The text/plain of the display: saved with the notebook and never
        updated, so it names the panel and no state that a run would change
        (the static picture, rewritten by refresh_static, shows the state)."""
        text = repr(self)
        if "(error=" in text:  # a panel that could not use its input stays so
            return text
        return f"{type(self).__name__}(a live panel: run the notebook to use it)"

    def _twin_html(self) -> str:
        return f'<div class="btt-static-twin">{_TWIN_STYLE}{self._safe_static_html()}</div>'

    def _ipython_display_(self, **kwargs):
        from IPython.display import display

        self.add_class("btt-panel")
        if self._static_handle is None:
            self._static_handle = display({"text/html": self._twin_html()}, raw=True, display_id=True)
        else:
            display({"text/html": self._twin_html()}, raw=True, display_id=self._static_handle.display_id)
        bundle = super()._repr_mimebundle_(**kwargs)
        metadata = None
        if isinstance(bundle, tuple):
            bundle, metadata = bundle
        bundle = {key: value for key, value in dict(bundle or {}).items() if key != "text/html"}
        bundle["text/plain"] = self._plain_text()
        display(bundle, raw=True, metadata=metadata)

    def close(self) -> None:
        """Close the panel and every widget it made (controls, canvases,
        their layouts and styles, nested panels), so none stays registered
        in the kernel."""
        for widget in _owned_widgets(self):
            widget.close()
        super().close()

    def refresh_static(self) -> None:
        """Rewrite the saved picture(s) of this panel with its current state."""
        if self._static_handle is not None:
            self._static_handle.update({"text/html": self._twin_html()}, raw=True)


class Panel(StaticFallback):
    """What the four panels share: the static fallback and the message of
    their ``error_box``."""

    @property
    def error(self) -> str:
        """The message the panel shows: why it could not use its input, or
        why its last run failed; "" when there is none."""
        return self.error_box.message


def _owned_widgets(panel) -> list:
    """The widgets a panel holds, directly or through other widgets
    (attributes, children, layouts, styles), the panel itself excluded."""
    found, seen, stack = [], {id(panel)}, [panel]
    while stack:
        holder = stack.pop()
        values = list(vars(holder).values()) + list(getattr(holder, "_trait_values", {}).values())
        for value in values:
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, ipywidgets.Widget) and id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
                    stack.append(item)
    return found
