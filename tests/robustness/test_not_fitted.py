"""One NotFittedError: this library's, which is also scikit-learn's."""

import pickle

import numpy as np
import pytest
import sklearn.exceptions

import bandit_tree_tools as btt
from bandit_tree_tools.mabsplit import (
    MABSplitForestClassifier,
    MABSplitForestRegressor,
    MABSplitTreeClassifier,
    MABSplitTreeRegressor,
)
from bandit_tree_tools.tsdt import TSDTClassifier

UNFITTED = [
    MABSplitTreeClassifier(),
    MABSplitTreeRegressor(),
    MABSplitForestClassifier(),
    MABSplitForestRegressor(),
    TSDTClassifier(),
]


@pytest.mark.parametrize("model", UNFITTED, ids=lambda model: type(model).__name__)
def test_an_unfitted_model_raises_the_one_not_fitted_error(model):
    X = np.zeros((3, 2))
    with pytest.raises(btt.NotFittedError, match=f"this {type(model).__name__} is not fitted yet"):
        model.predict(X)
    try:
        model.predict(X)
    except sklearn.exceptions.NotFittedError as error:
        assert type(error) is btt.NotFittedError
    else:  # pragma: no cover - predict raised above
        raise AssertionError("predict did not raise")


def test_not_fitted_error_is_scikit_learns_and_the_librarys():
    assert issubclass(btt.NotFittedError, sklearn.exceptions.NotFittedError)
    assert issubclass(btt.NotFittedError, btt.BanditTreeToolsError)
    assert issubclass(btt.NotFittedError, ValueError) and issubclass(btt.NotFittedError, AttributeError)
    from bandit_tree_tools.exceptions import NotFittedError

    assert NotFittedError is btt.NotFittedError
    error = pickle.loads(pickle.dumps(btt.NotFittedError("not fitted")))
    assert type(error) is btt.NotFittedError and str(error) == "not fitted"


def test_importing_the_package_does_not_import_scikit_learn():
    import subprocess
    import sys

    code = "import sys, bandit_tree_tools, bandit_tree_tools.exceptions; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
