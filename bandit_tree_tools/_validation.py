"""Parameter checks shared by every folder: one exception, one random-state rule.

Modelled on scikit-learn's ``sklearn/utils/_param_validation.py``: a public
function or estimator declares what each parameter accepts in one table, its
``_parameter_constraints`` (an estimator's class attribute; a function's is
given to :func:`validate_params`, which checks at definition time that the
table names every parameter but the data), and :func:`check_params` raises
:class:`~bandit_tree_tools.ParameterError` naming the parameter, the value it
got and what it accepts. A parameter whose rule needs the data (a tree index
below the number of trees, a metric name or a numba function) is declared by
type here and checked further where the data is known.

Constraints:

- a type (``int``, ``float``, ``str``, a class): ``isinstance``; ``int`` rejects
  ``bool``, ``float`` accepts any real number;
- ``None``: the value may be ``None``;
- ``"boolean"``: ``bool`` or ``numpy.bool_``;
- ``"random_state"``: what :func:`check_random_state` accepts;
- ``"array-like"``: anything but a scalar or a string;
- ``callable``: any callable;
- :class:`Interval` and :class:`Options` (below).

``n_jobs`` means one thing everywhere: the number of worker processes or
threads a call may use for work it splits (joblib's rule: ``None`` is 1,
``-1`` is every core, ``-2`` all but one), whether the workers are joblib's
(``leaf_medoids``, MABSplit forests) or numba's threads (``KMedoids``, whose
default is ``-1``). Kernels without an ``n_jobs`` parameter (routing) use the
threads numba has.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from dataclasses import dataclass

import numpy as np

from .exceptions import ParameterError

__all__ = [
    "MAX_FEATURES",
    "N_ROWS",
    "Interval",
    "Options",
    "check_params",
    "check_random_state",
    "resolve_max_features",
    "resolve_n_jobs",
    "resolve_n_rows",
    "seed_from",
    "validate_params",
]

_MAX_SEED = 2**31 - 1
_MAX_INT_SEED = 2**32 - 1  # scikit-learn's and RandomState's largest int seed


@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` (``int`` or ``float``) between ``low`` and ``high``
    (``None``: unbounded); ``closed`` is ``"both"``, ``"left"``, ``"right"`` or
    ``"neither"``."""

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    finite: bool = False  # refuse inf even where a side is unbounded

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is int and not isinstance(value, numbers.Integral):
            return False
        if not isinstance(value, numbers.Real):
            return False
        # an int can be beyond float64 and numpy's reach (10**30): it is neither NaN nor infinite
        if not isinstance(value, numbers.Integral) and (math.isnan(value) or (self.finite and math.isinf(value))):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (not left and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (not right and value == self.high)):
            return False
        return True

    def __str__(self) -> str:
        name = "an int" if self.kind is int else ("a finite float" if self.finite else "a float")
        if self.low is None and self.high is None:
            return name if self.kind is int or self.finite else "a float (not NaN)"
        lo = "-inf" if self.low is None else repr(self.low)
        hi = "inf" if self.high is None else repr(self.high)
        brackets = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}[self.closed]
        return f"{name} in {brackets[0]}{lo}, {hi}{brackets[1]}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (strings usually)."""

    values: frozenset

    def __init__(self, values):
        object.__setattr__(self, "values", frozenset(values))

    def accepts(self, value) -> bool:
        try:
            return value in self.values
        except TypeError:  # unhashable
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in sorted(self.values, key=str))


def _accepts(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, (Interval, Options)):
        return constraint.accepts(value)
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "random_state":
        return _random_state_ok(value)
    if constraint == "array-like":
        return hasattr(value, "__len__") and not isinstance(value, (str, bytes))
    if constraint is callable:
        return callable(value)
    if constraint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if constraint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    raise TypeError(f"unknown constraint {constraint!r}")


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, type):
        return {int: "an int", float: "a float", str: "a str"}.get(constraint, f"a {constraint.__name__}")
    if constraint == "random_state":
        return "a random state (None, an int in [0, 2**32 - 1], a numpy Generator or RandomState)"
    return str(constraint)


def check_params(params: dict, constraints: dict, *, owner: str = "") -> None:
    """Raise :class:`ParameterError` for the first value of ``params`` that
    meets none of its constraints (a list in ``constraints``). A parameter
    without an entry is a mistake of the table, a TypeError: every parameter
    is declared."""
    for name, value in params.items():
        if name not in constraints:
            raise TypeError(f"the constraint table of {owner or 'this call'} does not declare the parameter {name!r}")
        allowed = constraints[name]
        if not any(_accepts(c, value) for c in allowed):
            where = f" of {owner}" if owner else ""
            options = " or ".join(_describe(c) for c in allowed)
            raise ParameterError(f"{name}{where} must be {options}, got {value!r}")


def validate_params(constraints: dict, *, data: tuple = ()):
    """Decorate a public function so that every call checks its parameters
    against ``constraints`` (:func:`check_params`) before any work. The table
    must name every parameter of the function but those in ``data`` (models,
    rows, targets: validated by the function itself); a table that does not
    is a TypeError when the module is imported. The table stays readable as
    the function's ``_parameter_constraints``."""

    def decorate(function):
        signature = inspect.signature(function)
        names = [name for name in signature.parameters if name not in data]
        missing, unknown = set(names) - set(constraints), set(constraints) - set(names)
        if missing or unknown or not set(data) <= set(signature.parameters):
            raise TypeError(
                f"the constraint table of {function.__qualname__} must name every parameter but the data "
                f"{data}: missing {sorted(missing)}, unknown {sorted(unknown)}"
            )

        @functools.wraps(function)
        def checked(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs)
            arguments.apply_defaults()
            check_params({name: arguments.arguments[name] for name in names}, constraints, owner=function.__name__)
            return function(*args, **kwargs)

        checked._parameter_constraints = constraints
        checked._data_parameters = tuple(data)
        return checked

    return decorate


def _random_state_ok(value) -> bool:
    if value is None or isinstance(
        value, (np.random.Generator, np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence)
    ):
        return True
    return (
        isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and 0 <= value <= _MAX_INT_SEED
    )


def check_random_state(random_state, name: str = "random_state") -> np.random.Generator:
    """The one rule for ``random_state`` across the library: ``None`` (fresh
    entropy), an int >= 0 (reproducible), a numpy ``Generator`` (used as is,
    so draws advance it), a legacy ``RandomState`` (one draw seeds a new
    generator, as scikit-learn's own estimators use it), a ``BitGenerator`` or
    a ``SeedSequence``."""
    if not _random_state_ok(random_state):
        raise ParameterError(
            f"{name} must be None, an int in [0, 2**32 - 1], a numpy Generator or a RandomState, got {random_state!r}"
        )
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(_MAX_SEED)))
    return np.random.default_rng(random_state)


def seed_from(random_state, name: str = "random_state") -> int:
    """An int seed in ``[0, 2**31 - 1)`` for a numba kernel, drawn by the rule
    of :func:`check_random_state` (an int seed maps to a fixed seed)."""
    return int(check_random_state(random_state, name).integers(_MAX_SEED))


def resolve_n_jobs(n_jobs, name: str = "n_jobs") -> int:
    """``n_jobs`` as a positive number of workers, by joblib's rule."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ParameterError(f"{name} must be None, a positive int or a negative int (-1: every core), got {n_jobs!r}")
    cores = os.cpu_count() or 1
    return int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))


# scikit-learn's max_features: all features, sqrt, log2, a count or a fraction.
MAX_FEATURES = [Options({"sqrt", "log2"}), Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"), None]

# A number of rows: a count, or a fraction of the rows there are.
N_ROWS = [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right")]


def resolve_max_features(max_features, n_features: int, name: str = "max_features") -> int:
    """Features drawn at each node, by scikit-learn's rule: None is every
    feature, ``"sqrt"``/``"log2"`` that function of ``n_features`` (at least
    1), an int that many (at most ``n_features``), a float in (0, 1] that
    fraction (at least 1)."""
    check_params({name: max_features}, {name: MAX_FEATURES})
    if max_features is None:
        return int(n_features)
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, numbers.Integral):
        if max_features > n_features:
            raise ParameterError(f"{name} must be at most the number of features ({n_features}), got {max_features}")
        return int(max_features)
    return max(1, int(max_features * n_features))


def resolve_n_rows(value, n_rows: int, name: str) -> int:
    """A number of rows given as a count in ``[1, n_rows]`` or a fraction in
    (0, 1] of ``n_rows`` (rounded to the nearest count, at least 1: the rule of
    scikit-learn's ``max_samples``)."""
    check_params({name: value}, {name: N_ROWS})
    if isinstance(value, numbers.Integral):
        if value > n_rows:
            raise ParameterError(f"{name}={value} must be between 1 and the number of rows ({n_rows})")
        return int(value)
    return max(1, int(round(value * n_rows)))
