"""Exceptions raised by bandit_tree_tools.

Every exception subclasses a built-in one, so ``except ValueError`` keeps
working for code that does not know this library.

:class:`NotFittedError` is also scikit-learn's ``sklearn.exceptions.NotFittedError``
(so both ``except`` clauses catch it). It is built on first access (the module's
``__getattr__``), so that ``import bandit_tree_tools`` does not import scikit-learn.
"""

import threading

__all__ = [
    "BanditTreeToolsError",
    "UnsupportedModelError",
    "NotFittedError",  # noqa: F822 (built on first access by __getattr__)
    "ConversionError",
    "InvalidTreeError",
    "NodeError",
    "DataError",
    "MissingDependencyError",
    "ParameterError",
]


class BanditTreeToolsError(Exception):
    """Base class of every error raised on purpose by this library.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> try:
    ...     btt.from_model({})
    ... except btt.BanditTreeToolsError as error:
    ...     print(type(error).__name__)
    UnsupportedModelError
    """


class UnsupportedModelError(BanditTreeToolsError, TypeError):
    """The object is not a model this library can import or handle
    (wrong class, linear trees, gblinear, multi-output trees, ...).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> btt.from_model({"not": "a model"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.UnsupportedModelError: cannot import a builtins.dict; supported models: ...
    """


class ConversionError(BanditTreeToolsError, ValueError):
    """A model could not be converted to or from the common format, or lacks
    information an operation needs (for example the values of internal nodes).

    Examples
    --------
    A GradientBoosting classifier's internal nodes have no leaf values unless
    it is imported with its training data:

    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> model = GradientBoostingClassifier(n_estimators=2, random_state=0).fit(X, y)
    >>> btt.collapse(btt.from_model(model), {0: [0]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.ConversionError: node 0 of tree 0 cannot be collapsed: ...
    """


class InvalidTreeError(BanditTreeToolsError, ValueError):
    """Tree arrays break an invariant of the common format.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> btt.make_tree(np.array([0]), np.array([0]), np.array([0]), np.array([0.0]), np.zeros((1, 1)))
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.InvalidTreeError: tree: node 0 has children_left=0; children must have larger ids than their parent and be < 1
    """


class NodeError(BanditTreeToolsError, IndexError):
    """A tree index or node id does not exist, or names the wrong kind of node
    (a leaf where an internal node is needed).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> ensemble = btt.from_model(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    >>> btt.collapse(ensemble, {5: [0]})
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.NodeError: tree index 5 does not exist; the ensemble has trees 0..0
    """


class DataError(BanditTreeToolsError, ValueError):
    """Input data have the wrong shape, columns, dtype or values.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> ensemble = btt.from_model(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    >>> ensemble.predict(X[:, :3])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.DataError: X has 3 features, but the model was trained on 20; ...
    """


class ParameterError(BanditTreeToolsError, ValueError, TypeError):
    """A function or estimator parameter has the wrong type or value; the
    message names the parameter, what it got and what it accepts (both bases,
    as scikit-learn's ``InvalidParameterError``, so either ``except`` works).

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> ensemble = btt.from_model(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    >>> btt.bandit_prune(ensemble, X, y, n_rounds=-1)
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.ParameterError: n_rounds of bandit_prune must be an int in [1, inf], got -1
    """


class MissingDependencyError(BanditTreeToolsError, ImportError):
    """An optional package is needed; the message names the extra to install.

    Raised, for example, by :func:`~bandit_tree_tools.from_lightgbm` when
    LightGBM is not installed; :func:`missing_dependency` builds it.

    Examples
    --------
    >>> from bandit_tree_tools.exceptions import missing_dependency
    >>> print(missing_dependency("lightgbm", "lightgbm", "Importing LightGBM models"))
    Importing LightGBM models needs the optional package 'lightgbm', which is not installed; install it with: pip install 'bandit-tree-tools[lightgbm]'
    """


def missing_dependency(package: str, extra: str, purpose: str) -> MissingDependencyError:
    """Build the error for an optional package that is not installed."""
    return MissingDependencyError(
        f"{purpose} needs the optional package {package!r}, which is not installed; "
        f"install it with: pip install 'bandit-tree-tools[{extra}]'"
    )


_NOT_FITTED_DOC = """The estimator or model has not been fitted yet.

    One class for every "not fitted" of this library (importers, MABSplit,
    TSDT, ...). It subclasses both :class:`BanditTreeToolsError` and
    scikit-learn's ``sklearn.exceptions.NotFittedError`` (itself a
    ``ValueError`` and an ``AttributeError``), so ``except btt.NotFittedError``
    and ``except sklearn.exceptions.NotFittedError`` both catch it.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> btt.from_model(RandomForestClassifier())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.NotFittedError: this RandomForestClassifier is not fitted yet; ...
    >>> import sklearn.exceptions
    >>> issubclass(btt.NotFittedError, sklearn.exceptions.NotFittedError)
    True
    """

__test__ = {"NotFittedError": _NOT_FITTED_DOC}

_lazy_lock = threading.Lock()


def _make_not_fitted_error() -> type:
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    return type(
        "NotFittedError",
        (BanditTreeToolsError, SklearnNotFittedError),
        {"__doc__": _NOT_FITTED_DOC, "__module__": __name__, "__qualname__": "NotFittedError"},
    )


def __getattr__(name: str):
    if name == "NotFittedError":
        with _lazy_lock:
            if "NotFittedError" not in globals():
                globals()["NotFittedError"] = _make_not_fitted_error()
        return globals()["NotFittedError"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"NotFittedError"})
