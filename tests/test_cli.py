import re

import pytest

from bandit_tree_tools import _demo, cli


def test_demo_exports_models_that_predict_like_our_copy(monkeypatch, capsys):
    monkeypatch.setattr(_demo, "SECTIONS", {})  # each capability's demo section has its own test
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"(sklearn|LightGBM|XGBoost) ", line)]
    assert len(rows) == 3
    for row in rows:
        leaves_before, leaves_after = map(int, re.search(r"(\d+) -> (\d+)", row).groups())
        assert leaves_after < leaves_before
        assert float(row.split()[-2]) == 0.0  # max |ours - native| after export and reload


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_unknown_command_is_refused():
    with pytest.raises(SystemExit):
        cli.main(["frobnicate"])


def _categorical_lightgbm(tmp_path):
    import numpy as np
    import pandas as pd

    from tests.optional import lgb

    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"width cm": rng.normal(size=n), "kind": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    y = ((X["width cm"] > 0) ^ (X["kind"] == "v")).astype(int).to_numpy()
    model = lgb.LGBMClassifier(n_estimators=20, min_child_samples=5, verbose=-1, random_state=0).fit(X, y)
    path = tmp_path / "model.txt"
    model.booster_.save_model(path)
    return model, X, y, path


def test_prune_reads_a_csv_with_text_categories_and_a_header_with_spaces(tmp_path, capsys):
    model, X, y, path = _categorical_lightgbm(tmp_path)
    X.assign(label=y).to_csv(tmp_path / "rows.csv", index=False)  # header "width cm", values "u", "v", "w"
    out = tmp_path / "pruned.txt"
    status = cli.main(
        ["prune", str(path), "--data", str(tmp_path / "rows.csv"), "--target", "label", "--out", str(out)]
    )
    assert status == 0, capsys.readouterr().err
    assert out.exists()


def test_the_csv_categories_are_coded_by_value_as_in_training(tmp_path):
    import numpy as np
    import pandas as pd

    import bandit_tree_tools as btt
    from bandit_tree_tools.pruning._cli import _columns

    model, X, y, path = _categorical_lightgbm(tmp_path)
    X.assign(label=y).to_csv(tmp_path / "rows.csv", index=False)
    frame = pd.read_csv(tmp_path / "rows.csv").drop(columns="label")
    ensemble = btt.from_model(model)
    np.testing.assert_array_equal(ensemble.predict_proba(_columns(frame, ensemble)), model.predict_proba(X))
