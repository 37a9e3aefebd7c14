"""The browser side of the panels (ES modules and CSS), in one place:
``bandit_tree_tools/_static``, inside the package, so a source checkout, an
editable install and a wheel all read the same folder. Nothing is fetched
from the network, at build or at run time, and nothing is built.

Each browser file is an ES module with real ``import { a, b } from
"./file.js";`` lines and ``export``-ed names. anywidget loads a widget's
``_esm`` from one string, where one module cannot import another by a
relative path, so :func:`module_source` resolves the imports here: it checks
that every imported name is exported by its file, then joins the files, each
once, dependencies first, without their import lines and with ``export`` kept
only on the entry's ``export default``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_STATIC = Path(__file__).resolve().parent.parent / "_static"
_MARKER = "common.js"
_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+\.js)";[ \t]*\n?', re.M)
_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?function\b|const\b|let\b|class\b)", re.M)
_EXPORTED = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+(\w+)", re.M)

# the panels' entry modules (each holds an ``export default``)
MODULES = ("tree_view.js", "reward_chart.js", "medoid_gallery.js")


@cache
def static_dir() -> Path:
    """The folder holding the panels' JavaScript and CSS."""
    if not (_STATIC / _MARKER).is_file():
        raise FileNotFoundError(
            f"the panels' browser files ({_MARKER} and friends) were not found in {_STATIC}; "
            "reinstall bandit-tree-tools"
        )
    return _STATIC


@cache
def read_asset(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


def imports_of(name: str) -> dict:
    """``{file: [names]}`` that the browser file ``name`` imports."""
    found = {}
    for names, source in _IMPORT.findall(read_asset(name)):
        found.setdefault(source, []).extend(part.strip() for part in names.split(",") if part.strip())
    return found


def exports_of(name: str) -> set:
    return set(_EXPORTED.findall(read_asset(name)))


def _ordered(entry: str) -> list:
    """The files ``entry`` needs, dependencies first (each once)."""
    order, visiting = [], []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ImportError(f"the browser files import each other in a cycle: {' -> '.join(visiting + [name])}")
        visiting.append(name)
        for source, names in imports_of(name).items():
            missing = sorted(set(names) - exports_of(source))
            if missing:
                raise ImportError(f"{name} imports {', '.join(missing)} from {source}, which does not export them")
            visit(source)
        visiting.pop()
        order.append(name)

    visit(entry)
    return order


@cache
def module_source(entry: str) -> str:
    """One panel's ES module: ``entry`` and the files it imports, joined
    (see the module docstring)."""
    parts = []
    for name in _ordered(entry):
        text = _IMPORT.sub("", read_asset(name))
        parts.append(f"// ---- {name}\n" + _EXPORT.sub("", text))
    return "\n".join(parts)


def stylesheet() -> str:
    return read_asset("panels.css")
