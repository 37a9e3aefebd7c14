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
