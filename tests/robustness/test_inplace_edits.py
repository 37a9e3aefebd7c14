"""The arrays of an imported model cannot be edited in place (that crashed
the kernels with an out-of-range child, looped forever on a self-loop, or
made ``predict`` and ``to_model`` disagree once the packed arrays were
cached); edits go through ``collapse`` and ``Ensemble.replace_trees``."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

import bandit_tree_tools as btt
from bandit_tree_tools.tree import TreeArrays, make_tree

from ._isolated import run_isolated

X, y = make_classification(n_samples=400, n_features=5, random_state=0)


def imported_models():
    lightgbm = pytest.importorskip("lightgbm")
    xgboost = pytest.importorskip("xgboost")
    return {
        "sklearn forest": RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y),
        "hist gradient boosting": HistGradientBoostingClassifier(max_iter=3, max_depth=3).fit(X, y),
        "lightgbm": lightgbm.LGBMClassifier(n_estimators=3, num_leaves=8, verbose=-1).fit(X, y),
        "xgboost": xgboost.XGBClassifier(n_estimators=3, max_depth=3).fit(X, y),
    }


def assert_read_only(ensemble):
    for tree in ensemble.trees:
        for name in TreeArrays._fields:
            assert not getattr(tree, name).flags.writeable, name


@pytest.mark.parametrize("name", ["sklearn forest", "hist gradient boosting", "lightgbm", "xgboost"])
def test_imported_arrays_are_read_only_and_the_error_names_the_supported_path(name):
    ensemble = btt.from_model(imported_models()[name])
    assert_read_only(ensemble)
    tree = ensemble.trees[0]
    for edit in (
        lambda: tree.children_left.__setitem__(0, 10**6),  # out-of-range child: crashed the kernels
        lambda: tree.children_left.__setitem__(0, 0),  # self-loop: routed forever
        lambda: tree.value.__setitem__((slice(None), 0), 7.0),  # ignored by predict after the first call
        lambda: tree.threshold[:2].__setitem__(0, 1.0),  # a view of a tree array is read-only too
    ):
        with pytest.raises(ValueError, match=r"read-only.*btt\.collapse.*replace_trees"):
            edit()
    with pytest.raises(ValueError, match="read-only"):
        np.add(tree.value, 1.0, out=tree.value)


def test_in_place_edit_in_a_subprocess_cannot_crash_or_hang():
    # before the arrays were read-only this probe died from SIGSEGV or never returned
    code = """
        import numpy as np
        from sklearn.datasets import make_classification
        from sklearn.tree import DecisionTreeClassifier
        import bandit_tree_tools as btt
        X, y = make_classification(n_samples=300, n_features=4, random_state=0)
        ensemble = btt.from_model(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y))
        for node, child in ((0, 10**7), (1, 1)):
            try:
                ensemble.trees[0].children_left[node] = child
            except ValueError:
                pass
        print(ensemble.predict(X).sum())
    """
    done = run_isolated(code, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("name", ["sklearn forest", "lightgbm", "xgboost"])
def test_replace_trees_is_the_edit_path_and_predict_agrees_with_to_model(name):
    model = imported_models()[name]
    ensemble = btt.from_model(model)
    ensemble.predict_raw(X)  # caches the packed arrays
    tree = ensemble.trees[0]
    value = np.array(tree.value)
    value[tree.is_leaf] *= 0.5
    edited = ensemble.replace_trees([tree._replace(value=value), *ensemble.trees[1:]])
    assert_read_only(edited)
    assert not np.array_equal(edited.predict_raw(X), ensemble.predict_raw(X))
    exported = btt.to_model(edited)
    if name == "sklearn forest":
        np.testing.assert_allclose(exported.predict_proba(X), edited.predict_proba(X), rtol=0, atol=1e-12)
    else:
        np.testing.assert_allclose(exported.predict_proba(X), edited.predict_proba(X), rtol=0, atol=1e-6)
    assert value is not edited.trees[0].value  # the caller's array is copied, not frozen under them
    value[:] = 0.0
    assert np.any(edited.trees[0].value != 0.0)


def test_every_internal_edit_path_returns_read_only_trees():
    model = RandomForestClassifier(n_estimators=2, max_depth=6, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    internal = int(np.flatnonzero(~ensemble.trees[0].is_leaf)[1])
    assert_read_only(btt.collapse(ensemble, {0: [internal]}))
    assert_read_only(btt.bandit_prune(model, X, y, n_rounds=20, min_depth=1, progress=False).ensemble)
    assert_read_only(btt.cost_complexity_prune(model.estimators_[0], X, y, X, y).ensemble)
    assert_read_only(btt.resplit(model.estimators_[0], X, y, nodes=[0], random_state=0).ensemble)
    assert_read_only(btt.MABSplitTreeClassifier(max_depth=3, random_state=0).fit(X, y).ensemble_)
    tree = make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.0, -2.0, -2.0], [0.5, 0.0, 1.0])
    assert not tree.value.flags.writeable


def test_pickled_ensembles_stay_read_only():
    ensemble = btt.from_model(RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y))
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        copy = pickle.loads(pickle.dumps(ensemble, protocol=protocol))
        assert_read_only(copy)
        np.testing.assert_array_equal(copy.predict_proba(X), ensemble.predict_proba(X))
        with pytest.raises(ValueError, match="replace_trees"):
            copy.trees[0].value[0, 0] = 1.0


def test_results_of_arithmetic_are_ordinary_arrays():
    tree = btt.from_model(RandomForestClassifier(n_estimators=1, max_depth=3, random_state=0).fit(X, y)).trees[0]
    doubled = tree.value * 2
    doubled[0, 0] = 1.0  # new data is writable
    assert type(doubled) is np.ndarray and type(tree.value.sum()) is np.float64
