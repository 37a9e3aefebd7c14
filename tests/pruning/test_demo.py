"""The bandit-pruning section of ``bandit-tree-tools demo``."""

import pytest

from bandit_tree_tools.pruning._demo import demo


@pytest.mark.slow  # fits LightGBM and XGBoost models; `make demo` runs the same code
def test_demo_prunes_and_verifies_every_available_library():
    text = demo()
    lines = text.splitlines()
    assert any(line.startswith("scikit-learn DecisionTreeClassifier") and " OK " in line for line in lines)
    for library, name in (("lightgbm", "LightGBM"), ("xgboost", "XGBoost")):
        try:
            __import__(library)
        except ImportError:
            continue
        assert any(line.startswith(name) and " OK " in line for line in lines), text
    assert "MISMATCH" not in text
