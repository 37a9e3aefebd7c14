"""The ``prune`` subcommand: each file format in, the same format out,
predicting like the Python API's pruned model."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from bandit_tree_tools.cli import main
from bandit_tree_tools.pruning import bandit_prune, prune

from .models import classification_data

ARGS = ["--method", "bandit", "--rounds", "150", "--min-depth", "2", "--random-state", "3"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    X, y, Xv, yv = classification_data(seed=7)
    columns = [f"f{i}" for i in range(X.shape[1])]
    folder = tmp_path_factory.mktemp("prune_cli")
    frame = pd.DataFrame(Xv, columns=columns).assign(label=yv)
    frame.to_csv(folder / "val.csv", index=False)
    return pd.DataFrame(X, columns=columns), y, frame[columns], yv, folder


def expected_model(model, Xv, yv):
    return bandit_prune(model, Xv, yv, n_rounds=150, min_depth=2, random_state=3, progress=False).to_model()


def run(folder, model_name, out_name, capsys):
    status = main(
        [
            "prune",
            str(folder / model_name),
            "--data",
            str(folder / "val.csv"),
            "--target",
            "label",
            "--out",
            str(folder / out_name),
            *ARGS,
        ]
    )
    return status, capsys.readouterr()


def test_lightgbm_text_model(data, capsys):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, Xv, yv, folder = data
    model = lightgbm.LGBMClassifier(n_estimators=15, num_leaves=31, min_child_samples=3, verbose=-1).fit(X, y)
    model.booster_.save_model(str(folder / "model.txt"))
    status, output = run(folder, "model.txt", "pruned.txt", capsys)
    assert status == 0, output.err
    assert "before" in output.out and "after" in output.out
    pruned = lightgbm.Booster(model_file=str(folder / "pruned.txt"))
    booster = lightgbm.Booster(model_file=str(folder / "model.txt"))
    expected = expected_model(booster, Xv, yv)
    np.testing.assert_array_equal(pruned.predict(Xv), expected.predict(Xv))


@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_xgboost_model(data, capsys, suffix):
    xgboost = pytest.importorskip("xgboost")
    X, y, Xv, yv, folder = data
    model = xgboost.XGBClassifier(n_estimators=10, max_depth=5).fit(X, y)
    model.save_model(str(folder / f"model.{suffix}"))
    status, output = run(folder, f"model.{suffix}", f"pruned.{suffix}", capsys)
    assert status == 0, output.err
    pruned = xgboost.Booster()
    pruned.load_model(str(folder / f"pruned.{suffix}"))
    original = xgboost.Booster()
    original.load_model(str(folder / f"model.{suffix}"))
    expected = expected_model(original, Xv, yv)
    matrix = xgboost.DMatrix(Xv)
    np.testing.assert_array_equal(pruned.predict(matrix), expected.predict(matrix))


def test_default_method_is_prune_with_tolerance_metric_and_training_rows(data, capsys):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, Xv, yv, folder = data
    model = lightgbm.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1).fit(X, y)
    model.booster_.save_model(str(folder / "compress.txt"))
    X.assign(label=y).to_csv(folder / "train.csv", index=False)
    status = main(
        [
            "prune",
            str(folder / "compress.txt"),
            "--data",
            str(folder / "val.csv"),
            "--target",
            "label",
            "--out",
            str(folder / "compressed.txt"),
            "--tolerance",
            "0.05",
            "--metric",
            "accuracy",
            "--train-data",
            str(folder / "train.csv"),
            "--random-state",
            "3",
        ]
    )
    output = capsys.readouterr()
    assert status == 0, output.err
    assert "within 0.05 of accuracy" in output.out
    assert "worst_plausible" in output.out and "held" in output.out  # how sure the choice is
    booster = lightgbm.Booster(model_file=str(folder / "compress.txt"))
    expected = prune(
        booster, Xv, yv, tolerance=0.05, metric="accuracy", X_train=X, y_train=y, random_state=3, progress=False
    ).to_model()
    written = lightgbm.Booster(model_file=str(folder / "compressed.txt"))
    assert written.num_trees() == expected.num_trees()
    np.testing.assert_array_equal(written.predict(Xv), expected.predict(Xv))
    status = main(
        [
            "prune",
            str(folder / "compress.txt"),
            "--data",
            str(folder / "val.csv"),
            "--target",
            "label",
            "--out",
            str(folder / "bad.txt"),
            "--tolerance",
            "-1",
            "--method",
            "compress",  # the former name of prune, still taken
        ]
    )
    assert status == 1
    error = capsys.readouterr().err  # the parameter check's one line: names the parameter and the value
    assert error.startswith("bandit-tree-tools prune: error: tolerance") and "-1.0" in error and "\n" == error[-1:]
    assert error.count("\n") == 1


def test_pickled_estimator_warns_and_round_trips(data, capsys):
    X, y, Xv, yv, folder = data
    model = DecisionTreeClassifier(max_depth=7, random_state=0).fit(X, y)
    with open(folder / "tree.pkl", "wb") as handle:
        pickle.dump(model, handle)
    with pytest.warns(UserWarning, match="unpickles it, which runs code"):
        status, output = run(folder, "tree.pkl", "pruned.pkl", capsys)
    assert status == 0, output.err
    with open(folder / "pruned.pkl", "rb") as handle:
        pruned = pickle.load(handle)
    assert type(pruned) is DecisionTreeClassifier
    np.testing.assert_array_equal(pruned.predict_proba(Xv), expected_model(model, Xv, yv).predict_proba(Xv))
    assert model.tree_.node_count >= pruned.tree_.node_count


def test_errors_are_reported_not_raised(data, capsys):
    _, _, _, _, folder = data
    (folder / "model.bin").write_bytes(b"\0")
    status, output = run(folder, "model.bin", "out.bin", capsys)
    assert status == 1 and "cannot tell the format of 'model.bin'" in output.err
    with open(folder / "tree2.pkl", "wb") as handle:
        pickle.dump(DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1]), handle)
    with pytest.warns(UserWarning):
        status = main(
            [
                "prune",
                str(folder / "tree2.pkl"),
                "--data",
                str(folder / "val.csv"),
                "--target",
                "nope",
                "--out",
                str(folder / "x.pkl"),
            ]
        )
    assert status == 1 and "no column 'nope'" in capsys.readouterr().err


def test_out_may_not_be_the_model_file(data, capsys):
    # the pruned model replaced the unpruned one in the user's file
    lightgbm = pytest.importorskip("lightgbm")
    X, y, _, _, folder = data
    model = lightgbm.LGBMClassifier(n_estimators=5, num_leaves=7, verbose=-1).fit(X, y)
    model.booster_.save_model(str(folder / "keep.txt"))
    before = (folder / "keep.txt").read_bytes()
    status, output = run(folder, "keep.txt", "./keep.txt", capsys)
    assert status == 1 and "--out" in output.err and "is the model file itself" in output.err
    assert "keep_pruned.txt" in output.err
    assert (folder / "keep.txt").read_bytes() == before


@pytest.mark.parametrize(
    ("method", "option", "value"),
    [("bandit", "--train-data", "train.csv"), ("paper", "--tolerance", "0.05"), ("prune", "--rounds", "50")],
)
def test_an_option_of_the_other_method_is_refused_not_ignored(data, capsys, method, option, value):
    # --method paper --train-data t.csv ran the paper's method on the validation rows alone, without a word
    lightgbm = pytest.importorskip("lightgbm")
    X, y, _, _, folder = data
    lightgbm.LGBMClassifier(n_estimators=5, num_leaves=7, verbose=-1).fit(X, y).booster_.save_model(
        str(folder / "options.txt")
    )
    arguments = ["prune", str(folder / "options.txt"), "--data", str(folder / "val.csv"), "--target", "label"]
    status = main([*arguments, "--out", str(folder / "options_out.txt"), "--method", method, option, value])
    error = capsys.readouterr().err
    named = {"paper": "bandit"}.get(method, method)  # "paper": the former name of "bandit"
    assert status == 1 and f"{option} applies to --method" in error and f"this run is --method {named}" in error
    assert not (folder / "options_out.txt").exists()
