import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import bandit_tree_tools as btt


class MyForest(RandomForestClassifier):
    """A user's subclass of a supported estimator."""


def test_subclasses_of_supported_estimators_import():
    X, y = load_iris(return_X_y=True)
    model = MyForest(n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(btt.from_model(model).predict_proba(X), model.predict_proba(X))


def test_unsupported_objects_name_their_class_and_what_is_supported():
    with pytest.raises(btt.UnsupportedModelError, match="builtins.dict.*supported models: scikit-learn"):
        btt.from_model({})
    # the class rather than a fitted instance: "cannot import a builtins.type" said nothing useful
    with pytest.raises(
        btt.UnsupportedModelError, match=r"got the class .*MyForest, not a fitted model.*MyForest\(\)\.fit"
    ):
        btt.from_model(MyForest)


def test_an_ensemble_imports_as_itself():
    X, y = load_iris(return_X_y=True)
    ensemble = btt.from_model(RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y))
    assert btt.from_model(ensemble) is ensemble
