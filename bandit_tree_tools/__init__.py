"""bandit_tree_tools: import, prune, re-split, compare and summarise trained
tree models with multi-armed bandits.

``import bandit_tree_tools as btt`` is cheap: every public name is imported
from its module on first use (see ``_PUBLIC``), so numba, LightGBM or
XGBoost load only when needed.

The version (``__version__``) and the supported versions of the packages
this one uses are stated once, in ``pyproject.toml``, and read here from the
installed package's metadata. Importing the package checks the required
packages (numpy, numba, scikit-learn, ...); LightGBM and XGBoost are checked
when their models are first read or written (``check_version``). A version
that is too old raises :class:`~bandit_tree_tools.MissingDependencyError`.
"""

import functools
import os
import re
import sys
import tempfile
from importlib import import_module, metadata

_DISTRIBUTION = "bandit-tree-tools"

try:
    __version__ = metadata.version(_DISTRIBUTION)
except metadata.PackageNotFoundError:  # sources on sys.path without an install
    __version__ = "0+unknown"


def _minimums() -> dict:
    """{distribution: minimum version} of every requirement in pyproject.toml
    (``name>=X``), optional ones included, as the installed metadata lists them."""
    try:
        requirements = metadata.requires(_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    minimums = {}
    for requirement in requirements:
        found = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)", requirement)
        if found:
            name = found.group(1).lower().replace("_", "-")
            minimums.setdefault(name, found.group(2))
    return minimums


def _version_tuple(version: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


@functools.cache
def _installed_version(name: str) -> str | None:
    # read from the dist-info files once per process: adapters check on every call
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def check_version(distribution: str, *, required: bool = False) -> str | None:
    """Check that the installed ``distribution`` (a PyPI name such as
    ``"scikit-learn"``) is at least the version ``pyproject.toml`` asks for.

    Returns the installed version, or None when the package is not installed
    and not ``required``. Raises :class:`~bandit_tree_tools.MissingDependencyError`
    ("scikit-learn 1.5.2 found, bandit_tree_tools needs scikit-learn>=1.6")
    when it is too old, or missing and ``required``.
    """
    from .exceptions import MissingDependencyError

    name = distribution.lower().replace("_", "-")
    installed = _installed_version(name)
    if installed is None:
        if not required:
            return None
        raise MissingDependencyError(f"{name} is not installed; bandit_tree_tools needs it (pip install '{name}')")
    minimum = _MINIMUMS.get(name)
    if minimum and _version_tuple(installed) < _version_tuple(minimum):
        raise MissingDependencyError(
            f"{name} {installed} found, bandit_tree_tools needs {name}>={minimum} (pip install -U '{name}>={minimum}')"
        )
    return installed


def _writable(folder: str) -> bool:
    """Whether files can be created in ``folder`` (made if missing), tried the
    way numba tries its cache folders (``os.access`` is not enough: root, or a
    read-only mount)."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def _choose_numba_cache_dir():
    """numba's cache folder when the package folder is read-only (see
    ``_numba_config``); None when numba's own choice, next to the sources, stands."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _writable(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree", "__pycache__")):
        return None
    home_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    candidates = [
        os.path.join(home_cache, "bandit_tree_tools", "numba"),
        os.path.join(tempfile.gettempdir(), f"bandit_tree_tools-numba-{getattr(os, 'getuid', lambda: 'user')()}"),
    ]
    folder = next((candidate for candidate in candidates if _writable(candidate)), None)
    if folder is not None:
        os.environ["NUMBA_CACHE_DIR"] = folder
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = folder
    return folder


# before any module of the package defines a kernel: numba chooses a kernel's
# cache folder when the kernel is defined
_NUMBA_CACHE_DIR = _choose_numba_cache_dir()

_MINIMUMS = _minimums()
# the packages every capability needs, checked once at import (metadata only, nothing is imported)
for _required in ("numpy", "numba", "scikit-learn", "joblib", "pandas"):
    check_version(_required, required=True)
del _required

# public names that read or write one optional library's models -> its distribution
_NEEDS = {
    "from_lightgbm": "lightgbm",
    "to_lightgbm": "lightgbm",
    "from_xgboost": "xgboost",
    "to_xgboost": "xgboost",
}

# public name -> module that defines it
_PUBLIC = {
    # the common format
    "TreeArrays": "bandit_tree_tools.tree",
    "Ensemble": "bandit_tree_tools.tree",
    "collapse": "bandit_tree_tools.tree",
    "check_ensemble": "bandit_tree_tools.tree",
    "validate": "bandit_tree_tools.tree",
    "make_tree": "bandit_tree_tools.tree",
    "Source": "bandit_tree_tools.tree",
    # import / export
    "from_model": "bandit_tree_tools.interop",
    "to_model": "bandit_tree_tools.interop",
    "from_sklearn": "bandit_tree_tools.interop.sklearn",
    "to_sklearn": "bandit_tree_tools.interop.sklearn",
    "from_lightgbm": "bandit_tree_tools.interop.lightgbm",
    "to_lightgbm": "bandit_tree_tools.interop.lightgbm",
    "to_xgboost": "bandit_tree_tools.interop.xgboost",
    "from_xgboost": "bandit_tree_tools.interop.xgboost",
    # pruning
    "prune": "bandit_tree_tools.pruning",
    "bandit_prune": "bandit_tree_tools.pruning",
    "cost_complexity_prune": "bandit_tree_tools.pruning",
    "reduced_error_prune": "bandit_tree_tools.pruning",
    "cost_complexity_path": "bandit_tree_tools.pruning",
    "PruneResult": "bandit_tree_tools.pruning",
    "PrunePathResult": "bandit_tree_tools.pruning",
    # MABSplit
    "MABSplitTreeClassifier": "bandit_tree_tools.mabsplit",
    "MABSplitTreeRegressor": "bandit_tree_tools.mabsplit",
    "MABSplitForestClassifier": "bandit_tree_tools.mabsplit",
    "MABSplitForestRegressor": "bandit_tree_tools.mabsplit",
    "resplit": "bandit_tree_tools.mabsplit",
    "ResplitResult": "bandit_tree_tools.mabsplit",
    # TSDT
    "TSDTClassifier": "bandit_tree_tools.tsdt",
    "optimal_categorical_tree": "bandit_tree_tools.tsdt",
    "discretize": "bandit_tree_tools.tsdt",
    "compare_trees": "bandit_tree_tools.tsdt",
    # medoids
    "KMedoids": "bandit_tree_tools.medoids",
    "leaf_medoids": "bandit_tree_tools.medoids",
    "LeafMedoids": "bandit_tree_tools.medoids",
    # panels
    "TreeView": "bandit_tree_tools.widgets",
    "PruningPanel": "bandit_tree_tools.widgets",
    "MedoidPanel": "bandit_tree_tools.widgets",
    "ComparisonPanel": "bandit_tree_tools.widgets",
    # numba's cache, filled ahead of the first call
    "compile_kernels": "bandit_tree_tools._compile",
    # errors
    "BanditTreeToolsError": "bandit_tree_tools.exceptions",
    "UnsupportedModelError": "bandit_tree_tools.exceptions",
    "NotFittedError": "bandit_tree_tools.exceptions",
    "ConversionError": "bandit_tree_tools.exceptions",
    "InvalidTreeError": "bandit_tree_tools.exceptions",
    "NodeError": "bandit_tree_tools.exceptions",
    "DataError": "bandit_tree_tools.exceptions",
    "MissingDependencyError": "bandit_tree_tools.exceptions",
    "ParameterError": "bandit_tree_tools.exceptions",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    try:
        module = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'bandit_tree_tools' has no attribute {name!r}") from None
    if name in _NEEDS:
        check_version(_NEEDS[name])
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
