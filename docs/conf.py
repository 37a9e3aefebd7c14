"""Sphinx configuration of the bandit_tree_tools documentation (``make docs``)."""

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
# the notebooks' kernels inherit this: their figures become PNG outputs (a
# non-interactive backend such as Agg, which the tests set, would drop them)
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

import bandit_tree_tools  # noqa: E402

project = "bandit_tree_tools"
author = "bandit_tree_tools developers"
copyright = "bandit_tree_tools developers"
release = bandit_tree_tools.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# --- API reference: one generated page per public name -----------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
add_module_names = False

# numpydoc renders the docstrings; no strict validation, because the
# docstrings are the modules' owners' and change as the code does
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# With -W a broken page reference ({doc}, :ref:) or reStructuredText target
# fails the build. Python cross-references that do not resolve (private
# modules, other projects' names: nothing is fetched from the network) stay
# plain text; `sphinx-build -n` lists them.
nitpicky = False

# --- the tour notebooks -------------------------------------------------------
# The committed notebooks carry no outputs (tests/notebooks checks that), so the
# build executes them; jupyter-cache keeps the outputs in _build/.jupyter_cache and
# re-runs a notebook only when its code changed.
TOUR = HERE / "tour"
TOUR.mkdir(exist_ok=True)
for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = TOUR / notebook.name
    if not target.exists() or target.read_bytes() != notebook.read_bytes():
        shutil.copyfile(notebook, target)

nb_execution_mode = "cache"
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_timeout = 600
# in a temporary folder, so files the notebooks write stay out of the sources
nb_execution_in_temp = True
# a failing cell is a warning, so -W fails the build and --keep-going still builds the rest
nb_execution_raise_on_error = False
nb_execution_show_tb = True
nb_execution_excludepatterns = []
nb_merge_streams = True
# Widgets need a kernel: the page shows each panel's script-free picture (the
# output before the widget); the widget view itself stays an inert placeholder
# (it hides the panel's text repr), and no widget JavaScript is loaded from
# outside the site.
nb_ipywidgets_js = {}
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# --- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bandit_tree_tools {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_static_path = []
html_show_sourcelink = False


def _check_api_listing(app, config):
    """Every name of ``bandit_tree_tools.__all__`` has a page in api.rst."""
    text = (HERE / "api.rst").read_text()
    listed = {line.strip() for line in text.splitlines() if line.startswith("   ") and line.strip().isidentifier()}
    missing = sorted(set(bandit_tree_tools.__all__) - listed)
    if missing:
        raise RuntimeError(f"docs/api.rst does not list these public names: {', '.join(missing)}")


# --- ``module-docstring``: a module's docstring as part of a page -----------------
# The interop modules' docstrings are the per-library part of the format
# specification; numpydoc would drop their free-form sections, so they are parsed
# as plain reStructuredText, their section titles shown as rubrics.
import inspect  # noqa: E402
from importlib import import_module  # noqa: E402

from docutils import nodes  # noqa: E402
from docutils.statemachine import StringList  # noqa: E402
from sphinx.util.docutils import SphinxDirective  # noqa: E402


class ModuleDocstring(SphinxDirective):
    required_arguments = 1

    def run(self):
        name = self.arguments[0]
        lines = (inspect.getdoc(import_module(name)) or "").splitlines()
        # section titles become rubrics under the page's own heading
        out = []
        for k, line in enumerate(lines):
            if (
                k + 1 < len(lines)
                and line.strip()
                and set(lines[k + 1].strip()) == {"-"}
                and len(lines[k + 1].strip()) >= len(line.strip())
            ):
                out += [f".. rubric:: {line.strip()}", ""]
            elif set(line.strip()) == {"-"} and len(out) > 1 and out[-2].startswith(".. rubric::"):
                continue
            else:
                out.append(line)
        lines = out
        container = nodes.container()
        content = StringList(lines, source=f"docstring of {name}")
        self.state.nested_parse(content, 0, container)
        return container.children


def _setup_module_docstring(app):
    app.add_directive("module-docstring", ModuleDocstring)


def setup(app):
    app.connect("config-inited", _check_api_listing)
    _setup_module_docstring(app)
