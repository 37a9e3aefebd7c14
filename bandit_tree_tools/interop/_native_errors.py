"""The source libraries' own errors, as the project reports them."""

import sys


def first_line(error: BaseException) -> str:
    """The first non-empty line of an error message (XGBoost appends a C++
    stack trace to its messages; the first line says what is wrong)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def native_errors() -> tuple:
    """The libraries' own error types, for the libraries already imported
    (they do not all subclass ValueError)."""
    errors = []
    for module, name in (("lightgbm.basic", "LightGBMError"), ("xgboost.core", "XGBoostError")):
        loaded = sys.modules.get(module)
        if loaded is not None and hasattr(loaded, name):
            errors.append(getattr(loaded, name))
    return tuple(errors)
