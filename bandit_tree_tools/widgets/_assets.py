"""The browser side of the panels (ES modules and CSS), in one place:
``bandit_tree_tools/_static``, inside the package, so a source checkout, an
editable install and a wheel all read the same folder. Nothing is fetched
from the network, at build or at run time.

anywidget loads a widget's ``_esm`` from a string, where one module cannot
``import`` another by a relative path, so each panel's module is joined here
from its parts: ``common.js`` (shared helpers), then the parts in
:data:`MODULES`, the last of which holds ``export default``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_STATIC = Path(__file__).resolve().parent.parent / "_static"
_MARKER = "common.js"

# a panel's module -> its parts in order (the tree view is split by concept:
# reading the tree, the camera, the drawing, then the view's state and events)
MODULES = {
    "tree_view.js": ("tree_model.js", "tree_camera.js", "tree_draw.js", "tree_view.js"),
    "reward_chart.js": ("reward_chart.js",),
    "medoid_gallery.js": ("medoid_gallery.js",),
}


@lru_cache(maxsize=None)
def static_dir() -> Path:
    """The folder holding the panels' JavaScript and CSS."""
    if not (_STATIC / _MARKER).is_file():
        raise FileNotFoundError(
            f"the panels' browser files ({_MARKER} and friends) were not found in {_STATIC}; "
            "reinstall bandit-tree-tools"
        )
    return _STATIC


@lru_cache(maxsize=None)
def read_asset(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


def module_source(*names: str) -> str:
    """One panel's ES module: the shared helpers, then the parts of ``names``
    (a name of :data:`MODULES` stands for its parts), each file once, in
    order."""
    parts = ["common.js"]
    for name in names:
        for part in MODULES.get(name, (name,)):
            if part not in parts:
                parts.append(part)
    return "\n".join(read_asset(part) for part in parts)


def stylesheet() -> str:
    return read_asset("panels.css")
