"""Helpers every scikit-learn importer and exporter shares (trees, forests,
GradientBoosting, HistGradientBoosting). This module imports no other
interop module, so the scikit-learn modules depend on it one way only."""

from __future__ import annotations

import copy

import numpy as np

from ..exceptions import ConversionError, UnsupportedModelError
from ._payload import SklearnPayload, payload_of

# class name of scikit-learn's link -> (link, link_scale) of the common format
LINKS = {
    "IdentityLink": ("identity", 1.0),
    "LogLink": ("exp", 1.0),
    "LogitLink": ("sigmoid", 1.0),
    "HalfLogitLink": ("sigmoid", 2.0),  # ExponentialLoss: P(y=1) = expit(2 * raw)
    "MultinomialLogit": ("softmax", 1.0),
}


def version() -> str:
    import sklearn

    return sklearn.__version__


def check_classes(model, name):
    classes = np.asarray(model.classes_)
    if classes.shape[0] < 2:
        raise UnsupportedModelError(f"this {name} was fitted on a single class; it needs at least two classes")
    return classes.copy()


def feature_names(model):
    names = getattr(model, "feature_names_in_", None)
    return None if names is None else np.array(names, dtype=object)


def skeleton(model, **drop):
    """A deep copy of ``model`` with the (large) attributes in ``drop``
    replaced by the given placeholders; the model itself is left untouched."""
    shallow = copy.copy(model)
    for name, placeholder in drop.items():
        setattr(shallow, name, placeholder)
    return copy.deepcopy(shallow)


def sklearn_payload(ensemble) -> SklearnPayload:
    """The ensemble's :class:`SklearnPayload` (an empty one if it has none)."""
    return payload_of(ensemble.source, SklearnPayload) or SklearnPayload()


def link_of(model, name):
    """(link, link_scale) of a boosting model's loss."""
    link = type(model._loss.link).__name__
    if link not in LINKS:
        raise UnsupportedModelError(
            f"this {name} uses the link {link}, which bandit_tree_tools does not know; supported: {sorted(LINKS)}"
        )
    return LINKS[link]


def check_finite_hint(values: np.ndarray, name: str) -> None:
    """Refuse NaN or infinite training targets or weights given to recompute internal values."""
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        bad = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ConversionError(
            f"{name} has a non-finite value at row {bad} ({float(values[bad])}); pass the {name} the model was trained "
            "on, which scikit-learn requires to be finite"
        )


def hint_mismatch(what: str) -> ConversionError:
    """The X, y (and sample_weight) given to recompute internal values are not the training data."""
    return ConversionError(
        f"X, y do not look like the training data: {what}. Internal node values fitted on them would not be "
        "what training produced; pass exactly the rows, targets and sample_weight the model was fitted on"
    )


def check_boosting_ensemble(ensemble, name, payload: SklearnPayload, label_rule: str) -> int:
    """Trees per iteration of a boosting ensemble that can be exported as ``name``."""
    problems = []
    n_per_stage = int(payload.template.n_trees_per_iteration_)
    if ensemble.n_trees % n_per_stage:
        problems.append(f"{ensemble.n_trees} trees is not a multiple of the {n_per_stage} trees per iteration")
    elif np.any(ensemble.tree_output != np.tile(np.arange(n_per_stage), ensemble.n_trees // n_per_stage)):
        problems.append("tree_output must cycle through the classes in iteration order")
    if not np.array_equal(ensemble.base_score, payload.base_score):
        problems.append(
            f"base_score must stay {np.asarray(payload.base_score).tolist()} (the estimator keeps it in its init)"
        )
    if ensemble.aggregation != "sum" or ensemble.accumulate_float32:
        problems.append("aggregation must be 'sum' without float32 accumulation")
    if ensemble.link_exp != "numpy":
        problems.append("link_exp must be 'numpy' (scikit-learn's links take numpy's exp)")
    if ensemble.label_rule != label_rule:
        problems.append(f"label_rule must be {label_rule!r}, as a {name} labels rows")
    if problems:
        raise ConversionError(f"cannot export this ensemble as a scikit-learn {name}: " + "; ".join(problems))
    return n_per_stage
