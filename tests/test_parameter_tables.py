"""Every constraint of every public function, estimator and panel is
enforced: for each parameter, values that none of its constraints accepts
raise ParameterError naming the parameter, before any work is done. The cases are
generated from the tables themselves, so a new parameter is covered the day
it is declared."""

import inspect

import numpy as np
import pytest

import bandit_tree_tools as btt
from bandit_tree_tools._validation import _accepts
from bandit_tree_tools.exceptions import ParameterError

# values of every kind; a case takes those that none of a parameter's constraints accepts
CANDIDATES = (object(), "not-a-valid-value", -3, 2.5, -0.5, True, 10**30, float("nan"))

ESTIMATORS = (
    "MABSplitTreeClassifier",
    "MABSplitTreeRegressor",
    "MABSplitForestClassifier",
    "MABSplitForestRegressor",
    "TSDTClassifier",
    "KMedoids",
)
# the public functions whose keyword parameters are checked against a table
FUNCTIONS = (
    "prune",
    "bandit_prune",
    "cost_complexity_path",
    "cost_complexity_prune",
    "reduced_error_prune",
    "resplit",
    "leaf_medoids",
    "discretize",
    "compare_trees",
    "optimal_categorical_tree",
)

# the panels' named parameters; their data (models, rows, names, results) are checked where they are read
PANELS = {
    "TreeView": {"model_or_ensemble", "X", "y", "feature_names", "after"},
    "MedoidPanel": {"model", "X", "feature_names", "y", "medoids"},
    "PruningPanel": {"model", "X_val", "y_val", "prune_params"},
}


def _invalid_values(constraints) -> list:
    return [value for value in CANDIDATES if not any(_accepts(constraint, value) for constraint in constraints)][:3]


def _cases(tables):
    for owner, table in tables:
        for name, constraints in table.items():
            for value in _invalid_values(constraints):
                yield pytest.param(owner, name, value, id=f"{owner}-{name}-{type(value).__name__}")


FUNCTION_CASES = list(_cases((name, getattr(btt, name)._parameter_constraints) for name in FUNCTIONS))
ESTIMATOR_CASES = list(_cases((name, getattr(btt, name)._parameter_constraints) for name in ESTIMATORS))
PANEL_CASES = list(_cases((name, getattr(btt, name)._parameter_constraints) for name in PANELS))


def test_every_listed_function_declares_every_parameter_but_its_data():
    for name in FUNCTIONS:
        function = getattr(btt, name)
        parameters = set(inspect.signature(function).parameters)
        assert set(function._parameter_constraints) | set(function._data_parameters) == parameters, name


def test_every_estimator_declares_every_parameter():
    for name in ESTIMATORS:
        estimator = getattr(btt, name)()
        assert set(estimator._parameter_constraints) == set(estimator.get_params(deep=False)), name


def test_every_panel_declares_every_parameter_but_its_data():
    for name, data in PANELS.items():
        parameters = set(inspect.signature(getattr(btt, name)).parameters)
        assert set(getattr(btt, name)._parameter_constraints) | data == parameters, name


def test_a_table_that_misses_a_parameter_is_refused_at_definition():
    from bandit_tree_tools._validation import validate_params

    with pytest.raises(TypeError, match="missing \\['depth'\\]"):

        @validate_params({"width": [int]}, data=("X",))
        def draw(X, *, width=1, depth=2):
            return X


def test_the_cases_cover_every_table():
    assert len({case.values[0] for case in FUNCTION_CASES}) == len(FUNCTIONS)
    assert len({case.values[0] for case in ESTIMATOR_CASES}) == len(ESTIMATORS)
    assert len({case.values[0] for case in PANEL_CASES}) == len(PANELS)


@pytest.mark.parametrize(("function", "name", "value"), FUNCTION_CASES)
def test_an_invalid_value_of_a_function_parameter_is_refused_before_any_work(function, name, value):
    # the data stay None: the table is checked before the data are read
    data = dict.fromkeys(getattr(btt, function)._data_parameters)
    with pytest.raises(ParameterError, match=f"^{name} of {function} must be"):
        getattr(btt, function)(**data, **{name: value})


@pytest.mark.parametrize(("estimator", "name", "value"), ESTIMATOR_CASES)
def test_an_invalid_value_of_an_estimator_parameter_is_refused_at_fit(estimator, name, value):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 5)
    y = np.array([0, 1, 1, 0] * 5)
    with pytest.raises(ParameterError, match=f"^{name} of {estimator} must be"):
        getattr(btt, estimator)(**{name: value}).fit(X, y)


@pytest.mark.parametrize(("panel", "name", "value"), PANEL_CASES)
def test_an_invalid_value_of_a_panel_parameter_is_refused_at_construction(panel, name, value):
    from sklearn.tree import DecisionTreeClassifier

    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, dtype=float)
    y = np.array([0, 1, 1, 0] * 5)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    data = (model, X) if panel == "MedoidPanel" else (model, X, y)
    with pytest.raises(ParameterError, match=f"^{name} of {panel} must be"):
        getattr(btt, panel)(*data, **{name: value})
