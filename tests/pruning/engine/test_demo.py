"""The compression section of ``bandit-tree-tools demo`` (``btt.prune``)."""

import re

import pytest

from bandit_tree_tools.pruning._engine._demo import _models, demo


@pytest.mark.slow  # prunes four 100-300-tree models; `make demo` runs the same code
def test_demo_prunes_every_available_model_and_reports_validation_and_test_changes_and_deployment():
    text = demo()
    lines = text.splitlines()
    for name in _models():
        (line,) = [line for line in lines if line.startswith(name)]
        assert line.endswith("OK"), text
        # leaves before -> after, the ratio, the validation change within the tolerance, and the
        # test balanced accuracy before -> after with its change and that change's standard error
        match = re.search(
            r"([\d,]+) -> ([\d,]+)\s+([\d.]+)x\s+([+-][\d.]+) ([\d.]+) -> ([\d.]+) "
            r"\(([+-][\d.]+) \+- ([\d.]+)\)",
            line,
        )
        assert match, line
        before, after = (int(match.group(k).replace(",", "")) for k in (1, 2))
        assert after < before and float(match.group(3)) == pytest.approx(before / after, abs=0.05)
        assert float(match.group(4)) >= -0.005
        assert float(match.group(7)) == pytest.approx(float(match.group(6)) - float(match.group(5)), abs=2e-4)
        assert 0.0 < float(match.group(8)) < 0.01
        # what the deployed model gained: its native file (smaller with fewer leaves) and one-row time
        deployed = re.search(r"s\s+([\d.]+)x\s+([\d.]+)x  OK$", line)
        assert deployed, line
        assert float(deployed.group(1)) > 1.0 and float(deployed.group(2)) > 0.0
    assert "MISMATCH" not in text
