"""The sdist and the wheel build, and the wheel works where it is installed:
outside the checkout, from a read-only site-packages, with the panels' browser
files found inside the installed package and numba's kernel cache working.

The wheel goes into a fresh virtual environment with ``--no-deps``; the
dependencies come from the project's ``.venv`` through a ``.pth`` line naming
its site-packages folder. A path line only adds that folder to ``sys.path``:
the ``.pth`` files inside it (the editable install's finder among them) are not
run, so ``bandit_tree_tools`` can only be the installed wheel's (the test checks
``__file__``). ``--system-site-packages`` would not do: it reaches the base
interpreter's packages, not ``.venv``'s, and installing every dependency afresh
would take minutes and the network.

The installed package is made read-only for the runs, and the runs happen in a
user namespace (``unshare --user``), where the file mode bits hold even for
root. The home folder is read-only too, so numba's own fallback
(``~/.cache/numba``) is not available: the kernels must land in the folder
``bandit_tree_tools._numba_config`` chooses, and the second run must load them.
"""

import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("distribution")]

PANEL_SCRIPT = """
import sys
from pathlib import Path

import bandit_tree_tools as btt
from bandit_tree_tools.widgets import TreeCanvas
from bandit_tree_tools.widgets._assets import module_source, static_dir
from sklearn.datasets import load_breast_cancer
from sklearn.tree import DecisionTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
view = btt.TreeView(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y), X, y)
Path("tree_view.html").write_text(view.static_html(), encoding="utf-8")
print("package", Path(btt.__file__).resolve().parent)
print("static", static_dir())
print("css_from_static", TreeCanvas._css == (static_dir() / "panels.css").read_text(encoding="utf-8"))
print("js_from_static", "// ---- common.js" in TreeCanvas._esm and TreeCanvas._esm == module_source("tree_view.js"))
"""


def _run(command, **kwargs):
    run = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert run.returncode == 0, f"{command} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


def _read_only(path: Path):
    for folder, dirs, files in os.walk(path):
        for name in files + dirs:
            target = Path(folder) / name
            target.chmod(target.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable_again(path: Path):
    for folder, dirs, files in os.walk(path):
        for name in files + dirs:
            (Path(folder) / name).chmod((Path(folder) / name).stat().st_mode | stat.S_IWUSR)
    path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _cache_files(folder: Path) -> dict:
    return {path: path.stat().st_mtime_ns for path in folder.rglob("*") if path.suffix in (".nbi", ".nbc")}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # the sdist first, then the wheel built from the unpacked sdist (build's default)
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)])
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(path.name for path in out.iterdir())
    return sdists[0], wheels[0]


def test_the_wheel_carries_the_package_and_the_browser_files(built):
    _, wheel = built
    names = set(zipfile.ZipFile(wheel).namelist())
    source = ROOT / "bandit_tree_tools" / "_static"  # the panels' browser files
    browser_files = sorted(path.name for path in source.iterdir() if path.suffix in (".js", ".css"))
    assert {"common.js", "panels.css"} <= set(browser_files)
    for browser_file in browser_files:
        assert f"bandit_tree_tools/_static/{browser_file}" in names
    assert "bandit_tree_tools/__init__.py" in names and "bandit_tree_tools/tree/_kernels.py" in names
    assert not any(name.startswith(("tests/", "notebooks/", "docs/", "benchmarks/")) for name in names)


def test_the_installed_wheel_runs_the_demo_and_a_panel_outside_the_checkout(built, tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--user", "true"]).returncode != 0:
        pytest.skip("needs unshare --user (util-linux) to make the installed package really read-only")
    _, wheel = built
    venv = tmp_path / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ]
    )
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    project_site = Path(sysconfig.get_paths()["purelib"])
    assert project_site in map(Path, site.getsitepackages() + [sysconfig.get_paths()["purelib"]])
    (purelib / "_project_dependencies.pth").write_text(f"{project_site}\n")

    work, home, temp = tmp_path / "work", tmp_path / "home", tmp_path / "temp"
    for folder in (work, home, temp):
        folder.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "NUMBA_", "VIRTUAL_ENV", "XDG_CACHE"))
    }
    env.update(HOME=str(home), TMPDIR=str(temp), MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    _read_only(purelib / "bandit_tree_tools")
    home.chmod(0o555)
    try:

        def run(*args):
            return _run(["unshare", "--user", str(python), *args], cwd=work, env=env)

        first = run("-m", "bandit_tree_tools", "demo", "--quick")
        assert "First call of each capability" in first and "MABSplit" in first and "TSDT" in first, first
        caches = sorted(temp.glob("bandit_tree_tools-numba-*"))
        assert len(caches) == 1, f"no kernel cache in {temp}: {sorted(temp.iterdir())}"
        written = _cache_files(caches[0])
        assert len(written) > 20, f"only {len(written)} cache files in {caches[0]}"
        assert not list((purelib / "bandit_tree_tools").rglob("*.nbi"))

        run("-m", "bandit_tree_tools", "demo", "--quick")
        # the second process loaded every kernel from the cache: nothing compiled or rewritten
        assert _cache_files(caches[0]) == written

        out = run("-c", PANEL_SCRIPT)
        facts = dict(line.split(" ", 1) for line in out.strip().splitlines())
        assert Path(facts["package"]) == purelib / "bandit_tree_tools"
        assert Path(facts["static"]) == purelib / "bandit_tree_tools" / "_static"
        assert facts["css_from_static"] == "True" and facts["js_from_static"] == "True"
        html = (work / "tree_view.html").read_text(encoding="utf-8")
        assert "<svg" in html and "<script" not in html.lower()
    finally:
        home.chmod(0o755)
        _writable_again(purelib / "bandit_tree_tools")
