"""One version, and the supported versions of the dependencies, stated once in
pyproject.toml and enforced with clear errors."""

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import MissingDependencyError

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_version_comes_from_the_package_metadata():
    assert btt.__version__ == PYPROJECT["project"]["version"] == metadata.version("bandit-tree-tools")


def test_changelog_names_the_current_version():
    assert re.search(rf"^## {re.escape(btt.__version__)}\b", (ROOT / "CHANGELOG.md").read_text(), re.M)


def test_minimums_are_the_ones_pyproject_states():
    stated = (
        PYPROJECT["project"]["dependencies"]
        + PYPROJECT["project"]["optional-dependencies"]["lightgbm"]
        + PYPROJECT["project"]["optional-dependencies"]["xgboost"]
    )
    for name in ("scikit-learn", "numpy", "numba", "lightgbm", "xgboost"):
        line = next(requirement for requirement in stated if requirement.startswith(name + ">="))
        assert btt._MINIMUMS[name] == line.split(">=")[1]
    assert btt._MINIMUMS["scikit-learn"] == "1.6"


def test_too_old_a_version_names_what_was_found_and_what_is_needed(monkeypatch):
    monkeypatch.setitem(btt._MINIMUMS, "scikit-learn", "99.0")
    found = metadata.version("scikit-learn")
    with pytest.raises(
        MissingDependencyError,
        match=rf"scikit-learn {re.escape(found)} found, "
        r"bandit_tree_tools needs scikit-learn>=99\.0",
    ):
        btt.check_version("scikit-learn")


def test_a_recent_enough_version_is_returned():
    assert btt.check_version("scikit-learn") == metadata.version("scikit-learn")
    assert btt.check_version("not-a-package-of-this-project") is None
    with pytest.raises(MissingDependencyError, match="not-a-package-of-this-project is not installed"):
        btt.check_version("not-a-package-of-this-project", required=True)


def test_optional_library_checked_when_its_functions_are_first_used(monkeypatch):
    pytest.importorskip("lightgbm")
    monkeypatch.setitem(btt._MINIMUMS, "lightgbm", "99.0")
    monkeypatch.delitem(vars(btt), "from_lightgbm", raising=False)
    with pytest.raises(MissingDependencyError, match=r"lightgbm .* found, bandit_tree_tools needs lightgbm>=99\.0"):
        btt.from_lightgbm


def test_import_refuses_a_too_old_required_package(tmp_path):
    # a fake scikit-learn distribution of version 1.5.0 first on the path
    dist = tmp_path / "scikit_learn-1.5.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: scikit-learn\nVersion: 1.5.0\n")
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import bandit_tree_tools"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode != 0
    assert "MissingDependencyError: scikit-learn 1.5.0 found, bandit_tree_tools needs scikit-learn>=1.6" in run.stderr


def test_from_model_checks_the_model_library_version(monkeypatch):
    lightgbm = pytest.importorskip("lightgbm")
    import numpy as np

    X = np.random.default_rng(0).normal(size=(60, 3))
    model = lightgbm.LGBMRegressor(n_estimators=2, verbose=-1).fit(X, X[:, 0])
    monkeypatch.setitem(btt._MINIMUMS, "lightgbm", "99.0")
    with pytest.raises(MissingDependencyError, match=r"lightgbm .* found, bandit_tree_tools needs lightgbm>=99\.0"):
        btt.from_model(model)
