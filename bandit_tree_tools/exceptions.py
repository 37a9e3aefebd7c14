"""Exceptions raised by bandit_tree_tools.

Every exception subclasses a built-in one, so ``except ValueError`` keeps
working for code that does not know this library.
"""

__all__ = [
    "BanditTreeToolsError",
    "UnsupportedModelError",
    "NotFittedError",
    "ConversionError",
    "InvalidTreeError",
    "NodeError",
    "DataError",
    "MissingDependencyError",
    "ParameterError",
]


class BanditTreeToolsError(Exception):
    """Base class of every error raised on purpose by this library."""


class UnsupportedModelError(BanditTreeToolsError, TypeError):
    """The object is not a model this library can import or handle
    (wrong class, linear trees, gblinear, multi-output trees, ...)."""


class NotFittedError(BanditTreeToolsError, ValueError, AttributeError):
    """The estimator has not been fitted yet (same bases as scikit-learn's)."""


class ConversionError(BanditTreeToolsError, ValueError):
    """A model could not be converted to or from the common format, or lacks
    information an operation needs (for example the values of internal nodes)."""


class InvalidTreeError(BanditTreeToolsError, ValueError):
    """Tree arrays break an invariant of the common format."""


class NodeError(BanditTreeToolsError, IndexError):
    """A tree index or node id does not exist, or names the wrong kind of node
    (a leaf where an internal node is needed)."""


class DataError(BanditTreeToolsError, ValueError):
    """Input data have the wrong shape, columns, dtype or values."""


class ParameterError(BanditTreeToolsError, ValueError, TypeError):
    """A function or estimator parameter has the wrong type or value; the
    message names the parameter, what it got and what it accepts (both bases,
    as scikit-learn's ``InvalidParameterError``, so either ``except`` works)."""


class MissingDependencyError(BanditTreeToolsError, ImportError):
    """An optional package is needed; the message names the extra to install."""


def missing_dependency(package: str, extra: str, purpose: str) -> MissingDependencyError:
    """Build the error for an optional package that is not installed."""
    return MissingDependencyError(
        f"{purpose} needs the optional package {package!r}, which is not installed; "
        f"install it with: pip install 'bandit-tree-tools[{extra}]'"
    )
