"""Corrupt and mismatched inputs to ``bandit-tree-tools prune``: every one ends
with exit status 1 and one line on stderr saying what is wrong, never an
abort, a segfault, a traceback or a silently wrong result."""

import contextlib
import functools
import json
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from bandit_tree_tools.cli import main
from tests.optional import lgb as lightgbm  # noqa: E402
from tests.optional import xgb as xgboost  # noqa: E402

from ._isolated import run_isolated

COLUMNS = ["f0", "f1", "f2", "f3"]
ARGS = ["--method", "bandit", "--rounds", "20", "--min-depth", "1"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli_files")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=COLUMNS)
    y = ((X.f0 + 0.5 * X.f1 - X.f3) > 0).astype(int)
    X.assign(label=y).to_csv(folder / "val.csv", index=False)
    booster = lightgbm.LGBMClassifier(n_estimators=3, num_leaves=8, min_child_samples=5, verbose=-1).fit(X, y).booster_
    booster.save_model(str(folder / "model.txt"))
    xgb = xgboost.XGBClassifier(n_estimators=3, max_depth=3).fit(X, y)
    xgb.save_model(str(folder / "model.json"))
    with open(folder / "tree.pkl", "wb") as handle:
        pickle.dump(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y), handle)
    return folder, X, y


def corrupt_lightgbm_files(folder):
    """name -> text of a damaged LightGBM model file (each of these aborted or
    crashed LightGBM's loader, or was loaded as a wrong model)."""
    text = (folder / "model.txt").read_text()
    tree0 = text.index("Tree=0")
    block = text[tree0 : text.index("Tree=1")]
    left = next(line for line in block.splitlines() if line.startswith("left_child="))
    ids = left.split("=")[1].split(" ")
    return {
        "truncated": text[: tree0 + len(block) // 2],
        "num_leaves": text.replace(block, block.replace("num_leaves=8", "num_leaves=5", 1), 1),
        "left_child_out_of_range": text.replace(left, "left_child=" + " ".join(["999"] + ids[1:]), 1),
        "left_child_self_loop": text.replace(left, "left_child=" + " ".join(["0"] + ids[1:]), 1),
        "empty": "",
        "garbage": "\x00\x01 not a model \xff" * 50,
        "xgboost_json": (folder / "model.json").read_text(),
    }


def test_corrupt_lightgbm_text_is_refused_by_the_cli_and_by_the_loader(files):
    folder, _, _ = files
    names = []
    for name, text in corrupt_lightgbm_files(folder).items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8", errors="surrogateescape")
        names.append(name)
    # one process for every file (they are checked one by one and each reports before the next starts)
    code = """
        import contextlib, io, json, sys
        from bandit_tree_tools.cli import main
        from bandit_tree_tools.interop.lightgbm import booster_from_string
        folder, names = sys.argv[1], sys.argv[2:]
        for name in names:
            print(json.dumps({"started": name}), flush=True)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                status = main(["prune", f"{folder}/{name}.txt", "--data", f"{folder}/val.csv", "--target", "label",
                               "--out", f"{folder}/out_{name}.txt"])
            try:
                booster_from_string(open(f"{folder}/{name}.txt", encoding="utf-8", errors="replace").read())
                loader = "loaded"
            except Exception as error:
                loader = type(error).__name__
            print(json.dumps({"name": name, "status": status, "stderr": err.getvalue(), "loader": loader}), flush=True)
    """
    done = run_isolated(code, str(folder), *names)
    reports = {line["name"]: line for line in map(json.loads, done.stdout.splitlines()) if "name" in line}
    assert sorted(reports) == sorted(names), done.stderr[-3000:]
    for name, report in reports.items():
        assert report["status"] == 1, (name, report)
        lines = report["stderr"].strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bandit-tree-tools prune: error: "), (name, report)
        assert report["loader"] in ("ConversionError", "InvalidTreeError"), (name, report)
        assert not (folder / f"out_{name}.txt").exists()
    assert "malformed" in reports["truncated"]["stderr"]
    assert "left_child" in reports["num_leaves"]["stderr"] or "values for 5 leaves" in reports["num_leaves"]["stderr"]
    assert "children must have larger ids" in reports["left_child_out_of_range"]["stderr"]
    assert "children must have larger ids" in reports["left_child_self_loop"]["stderr"]


def run(folder, model, *extra, out=None, data="val.csv", capsys=None):
    out = out or str(folder / ("out" + model[model.rfind(".") :]))
    status = main(
        ["prune", str(folder / model), "--data", str(folder / data), "--target", "label", "--out", out, *ARGS, *extra]
    )
    err = capsys.readouterr().err.strip().splitlines()
    return status, err


def test_missing_model_file(files, capsys):
    folder, _, _ = files
    status, err = run(folder, "nowhere.txt", capsys=capsys)
    assert status == 1 and len(err) == 1 and "does not exist" in err[0]


def test_garbage_xgboost_file_is_one_line_without_a_stack_trace(files, capsys):
    folder, _, _ = files
    (folder / "garbage.json").write_text('{"learner": 3')
    status, err = run(folder, "garbage.json", capsys=capsys)
    assert status == 1 and len(err) == 1 and "is not a readable XGBoost model" in err[0]


@pytest.mark.parametrize("content", [b"\x80\x04\x95", b"garbage bytes", b""], ids=["truncated", "garbage", "empty"])
@pytest.mark.parametrize("suffix", [".pkl", ".joblib"])
def test_damaged_pickles(files, capsys, content, suffix):
    folder, _, _ = files
    whole = (folder / "tree.pkl").read_bytes()
    (folder / f"bad{suffix}").write_bytes(whole[: len(whole) // 2] if content == b"\x80\x04\x95" else content)
    with pytest.warns(UserWarning, match="unpickles"):
        status, err = run(folder, f"bad{suffix}", capsys=capsys)
    assert status == 1 and len(err) == 1 and "could not be unpickled" in err[0]


def test_out_in_a_missing_folder_is_refused_before_the_work(files, capsys, monkeypatch):
    folder, _, _ = files
    import bandit_tree_tools.pruning._bandit as bandit

    @functools.wraps(bandit.bandit_prune)  # its signature: the command line reads its defaults there
    def no_pruning(*args, **kwargs):
        raise AssertionError("pruning ran before --out was checked")

    monkeypatch.setattr(bandit, "bandit_prune", no_pruning)
    status, err = run(folder, "model.txt", out=str(folder / "missing" / "out.txt"), capsys=capsys)
    assert status == 1 and len(err) == 1 and "does not exist; create it first" in err[0]
    status, err = run(folder, "model.txt", out=str(folder / "out.json"), capsys=capsys)
    assert status == 1 and "names another format" in err[0]


@pytest.mark.parametrize("value", ["1.5", "0", "-2", "half", "nan", "inf"])
def test_eval_size_must_be_a_fraction_or_a_whole_number_of_rows(files, capsys, value):
    folder, _, _ = files
    with pytest.raises(SystemExit) as exited:
        run(folder, "model.txt", "--eval-size", value, capsys=capsys)
    assert exited.value.code == 2
    assert "--eval-size" in capsys.readouterr().err


def test_eval_size_accepts_fractions_and_row_counts(files, capsys):
    folder, _, _ = files
    for value in ("0.25", "40", "40.0"):
        status, err = run(folder, "model.txt", "--eval-size", value, capsys=capsys)
        assert status == 0, err


def test_columns_are_matched_by_name(files, capsys):
    folder, X, y = files
    # the same columns in reverse order: matched by name, so the same result as in order
    X[COLUMNS[::-1]].assign(label=y).to_csv(folder / "reversed.csv", index=False)
    out_in_order, out_reversed = folder / "a.txt", folder / "b.txt"
    assert run(folder, "model.txt", out=str(out_in_order), capsys=capsys)[0] == 0
    assert run(folder, "model.txt", out=str(out_reversed), data="reversed.csv", capsys=capsys)[0] == 0
    assert out_in_order.read_text() == out_reversed.read_text()
    # renamed columns: refused, not read by position
    X.set_axis(["a", "b", "c", "d"], axis=1).assign(label=y).to_csv(folder / "renamed.csv", index=False)
    for model in ("model.txt", "model.json", "tree.pkl"):
        with pytest.warns(UserWarning) if model.endswith(".pkl") else contextlib.nullcontext():
            status, err = run(folder, model, data="renamed.csv", capsys=capsys)
        assert status == 1 and len(err) == 1 and "lacks 4 of the model's feature columns" in err[0], (model, err)
