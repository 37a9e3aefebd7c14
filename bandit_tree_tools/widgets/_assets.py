"""Find the browser side of the panels (ES modules and CSS).

In a source checkout (including an editable install) the files sit in the
repository's top-level ``widgets/`` folder; an installed wheel carries them
as ``bandit_tree_tools/_static`` (see pyproject's force-include). Nothing is
fetched from the network, at build or at run time.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_CANDIDATES = (_PACKAGE / "_static", _PACKAGE.parent / "widgets")
_MARKER = "common.js"


@lru_cache(maxsize=None)
def static_dir() -> Path:
    """The folder holding the panels' JavaScript and CSS."""
    for candidate in _CANDIDATES:
        if (candidate / _MARKER).is_file():
            return candidate
    searched = ", ".join(str(path) for path in _CANDIDATES)
    raise FileNotFoundError(
        f"the panels' browser files ({_MARKER} and friends) were not found in {searched}; "
        "reinstall bandit-tree-tools (the wheel ships them as bandit_tree_tools/_static)"
    )


@lru_cache(maxsize=None)
def read_asset(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


def module_source(*names: str) -> str:
    """One panel's ES module: the shared helpers, then ``names`` in order (the
    last one holds ``export default``). The modules are loaded from a string,
    so they cannot import each other: they are joined here instead."""
    return "\n".join(read_asset(name) for name in ("common.js",) + names)


def stylesheet() -> str:
    return read_asset("panels.css")
