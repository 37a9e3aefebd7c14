"""The second process of a first call: its list of functions and types, and when it starts."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from numba.core import types

from bandit_tree_tools import _side_compile, _side_compile_probes
from bandit_tree_tools.tsdt._kernels_state import SearchState

ROOT = Path(__file__).resolve().parents[1]

# runs one probe in a new process; prints the package's kernels it compiled, whether a
# second process would start now, and the probe's outputs
RUN_PROBE = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from bandit_tree_tools import _side_compile, _side_compile_probes
from bandit_tree_tools._numba_config import add_compile_listener
compiled = []
add_compile_listener(lambda message, kernel: compiled.append(kernel))  # the package's kernels, outermost
probe = sys.argv[1]
starts = _side_compile._start(probe) is not None
_side_compile._started.clear()
fitted, X = _side_compile_probes.PROBES[probe]()
in_probe = list(compiled)
outputs = _side_compile_probes.outputs(fitted, X)  # a prediction's kernels are not the probe's
print(json.dumps(dict(compiled=in_probe, starts=starts, outputs=outputs.tolist())))
"""


def _run(argv, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop(_side_compile.SWITCH, None)
    done = subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_every_listed_function_is_a_kernel_of_the_package_and_its_types_decode():
    for probe in _side_compile_probes.PROBES:
        entries = _side_compile._entries(probe)
        assert len(entries) >= 10, probe
        for module, name, encoded in entries:
            assert _side_compile._dispatcher(module, name) is not None, (module, name)
            assert all(isinstance(_side_compile._decode(item), types.Type) for item in encoded)


@pytest.mark.parametrize(
    "numba_type",
    [
        types.int64,
        types.boolean,
        types.none,
        types.Array(types.float32, 2, "C"),
        types.Array(types.int8, 1, "A", readonly=True),
        types.UniTuple(types.uint32, 3),
        types.Tuple((types.Array(types.uint8, 1, "C"), types.float64, types.boolean)),
        types.BaseTuple.from_types([types.Array(types.int64, 1, "C")] * 32, SearchState),
        types.FunctionType(types.float64(types.float64[::1], types.float64[::1])),
        types.literal(True),
        types.Omitted(0.0),
    ],
    ids=str,
)
def test_argument_types_round_trip_through_json(numba_type):
    encoded = _side_compile._encode(numba_type)
    assert encoded is not None
    assert _side_compile._decode(json.loads(json.dumps(encoded))) == numba_type


def test_a_type_without_an_encoding_leaves_its_function_out():
    assert _side_compile._encode(types.DictType(types.int64, types.float64)) is None
    assert _side_compile._encode(types.UniTuple(types.DictType(types.int64, types.int64), 2)) is None


def test_a_first_call_starts_one_process_unless_switched_off_or_inside_compile_kernels(monkeypatch):
    monkeypatch.setattr(_side_compile, "_started", set())
    monkeypatch.setattr(_side_compile, "_cached", lambda dispatcher: False)  # as in a fresh environment
    monkeypatch.setattr(_side_compile, "_cores", lambda: 2)
    monkeypatch.setenv(_side_compile.SWITCH, "0")
    assert _side_compile._start("tsdt") is None
    monkeypatch.delenv(_side_compile.SWITCH)
    with _side_compile.no_side_compile():
        assert _side_compile._start("mabsplit_classification") is None
    started = _side_compile._start("prune_forest")
    assert started is not None
    assert _side_compile._start("prune_forest") is None  # once per process
    process, marks = started
    assert process.wait(timeout=300) == 0  # it finds this copy of the package and compiles (or loads) its list
    assert os.listdir(marks) == []  # each mark removed once its function is saved
    shutil.rmtree(marks)
    assert _side_compile._start("no such probe") is None


@pytest.mark.slow
@pytest.mark.parametrize("probe", list(_side_compile_probes.PROBES))
def test_the_list_covers_its_probe_and_the_outputs_stay_the_same(probe, tmp_path):
    """After the second process's work alone, the probe compiles nothing: the list is current
    (when this fails, run `python -m bandit_tree_tools._side_compile_probes`)."""
    _run(["-m", "bandit_tree_tools._side_compile", probe], tmp_path)  # the whole list, from its end
    ran = json.loads(_run(["-c", RUN_PROBE, probe], tmp_path).splitlines()[-1])
    assert ran["compiled"] == [], "the list misses functions: " + ", ".join(ran["compiled"])
    assert not ran["starts"]  # the cache holds the list's last function: no second process
    fitted, X = _side_compile_probes.PROBES[probe]()  # this process's kernels, compiled or loaded here
    np.testing.assert_array_equal(np.asarray(ran["outputs"]), _side_compile_probes.outputs(fitted, X))


# imports a probe's kernel modules as the second process does; prints what that imported
IMPORT_KERNELS = r"""
import json, sys
from bandit_tree_tools import _side_compile
_side_compile.import_kernel_modules(sys.argv[1])
found = [_side_compile._dispatcher(module, name) is not None for module, name, _ in _side_compile._entries(sys.argv[1])]
print(json.dumps(dict(all_found=all(found), sklearn="sklearn" in sys.modules)))
"""


@pytest.mark.parametrize("probe", list(_side_compile_probes.PROBES))
def test_the_second_process_imports_its_kernels_without_scikit_learn(probe, tmp_path):
    """The subpackages' __init__ (the public API) import scikit-learn, a second of the second
    process's start; its kernel modules do not need them."""
    imported = json.loads(_run(["-c", IMPORT_KERNELS, probe], tmp_path).splitlines()[-1])
    assert imported == dict(all_found=True, sklearn=False)


def test_a_kernel_module_that_needs_its_package_gets_the_package_in_full(tmp_path):
    package = tmp_path / "outer" / "inner"
    package.mkdir(parents=True)
    (tmp_path / "outer" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("PUBLIC = 'public'\n")
    (package / "_plain.py").write_text("VALUE = 1\n")
    (package / "_needs_package.py").write_text("from . import PUBLIC\n")
    code = (
        "import sys\n"
        "from bandit_tree_tools._side_compile import _import_past_package_inits as imp\n"
        "imp('outer.inner._plain')\n"
        "print(hasattr(sys.modules['outer.inner'], 'PUBLIC'))\n"
        "imp('outer.inner._needs_package')\n"
        "print(sys.modules['outer.inner._needs_package'].PUBLIC, sys.modules['outer.inner'].PUBLIC)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "public", "public"]


def test_a_call_that_fails_leaves_the_next_call_its_second_process(monkeypatch):
    monkeypatch.setattr(_side_compile, "_started", set())
    monkeypatch.setattr(_side_compile, "_cached", lambda dispatcher: False)  # as in a fresh environment
    monkeypatch.setattr(_side_compile, "_cores", lambda: 2)
    with pytest.raises(ValueError, match="bad input"):
        with _side_compile.compiling_beside("prune_forest"):
            process, marks = _side_compile._running["prune_forest"]
            raise ValueError("bad input")
    assert process.poll() is not None and not os.path.exists(marks)  # stopped, its marks removed
    assert _side_compile._running == {} and "prune_forest" not in _side_compile._started
    with _side_compile.compiling_beside("prune_forest"):
        assert "prune_forest" in _side_compile._running  # the next call starts one again
    assert "prune_forest" in _side_compile._started


def test_a_call_goes_on_where_no_second_process_can_start(monkeypatch):
    def full_folder(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_side_compile, "_started", set())
    monkeypatch.setattr(_side_compile, "_cached", lambda dispatcher: False)
    monkeypatch.setattr(_side_compile, "_cores", lambda: 2)
    monkeypatch.setattr(_side_compile.tempfile, "mkdtemp", full_folder)
    ran = []
    with _side_compile.compiling_beside("tsdt"):
        ran.append(True)
    assert ran == [True] and _side_compile._running == {}


def test_a_lookup_waits_while_the_other_process_marks_the_function_and_no_longer(tmp_path, monkeypatch):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    mark = tmp_path / "_kernels.refit_leaves-1.py311.nbi"
    mark.touch()
    monkeypatch.setitem(_side_compile._running, "probe", (other, str(tmp_path)))
    try:
        start = time.monotonic()
        threading.Timer(0.3, mark.unlink).start()  # the other process saved the function
        _side_compile._wait_while_compiled_beside(mark.name)
        assert 0.25 <= time.monotonic() - start < 10  # not returned at once
        mark.touch()
        start = time.monotonic()
        _side_compile._wait_while_compiled_beside("_kernels.other-1.py311.nbi")  # not marked: no wait
        other.kill()
        other.wait()
        _side_compile._wait_while_compiled_beside(mark.name)  # marked, but the process has ended
        assert time.monotonic() - start < 5  # far below the 30 s a wait could last
    finally:
        other.kill()
        other.wait()
