"""Pieces shared by the panels: optional imports, error boxes, the static
fallback hook, and turning exceptions into one readable line."""

from __future__ import annotations

import warnings

from ..exceptions import BanditTreeToolsError, missing_dependency

try:
    import anywidget
    import ipywidgets
    import traitlets
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_dependency(error.name or "ipywidgets", "widgets", "The Jupyter panels") from None

from ._static_html import error_html, escape

__all__ = ["anywidget", "ipywidgets", "traitlets", "describe_error", "ErrorBox", "StaticFallback", "import_model"]

# Errors a panel shows as a message instead of raising: the ones a user can
# cause with their input. Anything else is a bug and keeps its traceback.
USER_ERRORS = (BanditTreeToolsError, TypeError, ValueError, KeyError, IndexError)


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

    def show(self, message: str) -> None:
        self.message = message
        self.value = error_html(message) if message else ""
        self.layout.display = "" if message else "none"

    def clear(self) -> None:
        self.show("")


def warn_user_error(message: str) -> None:
    """Also tell scripts (where no one sees the panel) what went wrong."""
    warnings.warn(message, UserWarning, stacklevel=3)


class StaticFallback:
    """Mixin: add a script-free ``text/html`` view to the widget's MIME bundle.

    Front ends that run widgets pick the widget view; nbconvert (without saved
    widget state), GitHub and other viewers pick the HTML.
    """

    def static_html(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        metadata = None
        if isinstance(bundle, tuple):
            bundle, metadata = bundle
        bundle = dict(bundle or {})
        try:
            bundle["text/html"] = self.static_html()
        except Exception as error:  # the fallback must never break display
            bundle["text/html"] = f"<pre>{escape(describe_error(error))}</pre>"
        bundle["text/plain"] = repr(self)
        return (bundle, metadata) if metadata is not None else bundle
