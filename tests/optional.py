"""Optional libraries, imported where a test uses them: ``lgb.LGBMClassifier``
skips the test that reads it when LightGBM is missing, and only that test
(a module-level ``importorskip`` would skip every test of the file)."""

import pytest


class OptionalModule:
    """A module imported on first attribute access, or the reading test skipped."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute):
        return getattr(pytest.importorskip(self._name), attribute)


lgb = OptionalModule("lightgbm")
xgb = OptionalModule("xgboost")
