"""What each importer keeps for its exporter: one typed, frozen record per library.

An imported ensemble's ``source.payload`` holds the record under
``"native"`` (``ensemble.source.payload["native"]``); the sentence
:func:`~bandit_tree_tools.collapse` appends when a node's leaf value is
unknown is the format's own field, ``Source.collapse_hint``. Every record names the private copy of the
user's object the same way: ``template``, a deep copy without its trees or
Booster (None when a Booster, or no object at all, was imported); the
user's object itself is never stored.

Ensembles pickled before the records existed held the same facts as plain
payload keys (the private copy under "template", "estimator" or "shell");
:func:`payload_of` reads those too, so such pickles still export.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

NATIVE = "native"


@dataclass(frozen=True, eq=False)
class SklearnPayload:
    """What ``from_sklearn`` keeps.

    kind
        "tree", "forest", "gradient_boosting" or "hist_gradient_boosting";
        None for an ensemble built without a scikit-learn object.
    template
        Private copy of the estimator without its trees (``tree_``,
        ``estimators_`` or ``_predictors`` emptied).
    tree_template
        Forests and GradientBoosting: private copy of the first tree
        estimator without its ``tree_``; every exported tree is a shallow copy.
    random_states
        Forests: each tree estimator's ``random_state``.
    params
        Constructor parameters, for ensembles built without a scikit-learn
        object (this project's MABSplit estimators); keys the class does not
        accept are ignored.
    base_score
        Boosting: the raw start the estimator keeps in its init.
    recomputed_from_data
        True when internal values were recomputed from the training data.
    transformed_column, category_spaces, categories
        HistGradientBoosting: each column's place after the categorical
        reordering, how each categorical column's values are coded, and the
        categories seen in training per column.
    """

    kind: str | None = None
    template: Any = None
    tree_template: Any = None
    random_states: tuple | None = None
    params: Mapping | None = None
    base_score: Any = None
    recomputed_from_data: bool = False
    transformed_column: Any = None
    category_spaces: Mapping | None = None
    categories: Mapping | None = None


@dataclass(frozen=True, eq=False)
class LightGBMPayload:
    """What ``from_lightgbm`` keeps.

    template
        Private copy of the estimator without its Booster (None for a Booster).
    header
        The model text's header as (key, value) pairs, in order.
    digests, node_counts, blocks
        Per imported tree: a digest of its arrays, its node count and its text
        block, so an unchanged tree is written back verbatim.
    parameters
        The model text's parameters section.
    shrinkage
        Per tree: its shrinkage.
    num_tree_per_iteration, num_class, best_iteration
        As LightGBM reports them.
    """

    header: tuple = ()
    digests: tuple = ()
    node_counts: tuple = ()
    blocks: tuple = ()
    parameters: str = ""
    shrinkage: tuple = ()
    template: Any = None
    num_tree_per_iteration: int = 1
    num_class: int = 1
    best_iteration: int = 0


@dataclass(frozen=True, eq=False)
class XGBoostPayload:
    """What ``from_xgboost`` keeps.

    template
        Private copy of the wrapper without its Booster (None for a Booster).
    header, model_header
        The JSON model document without its trees, and the tree model's own
        header.
    booster
        "gbtree" or "dart".
    config
        The booster's training configuration (``save_config()``, JSON).
    objective, margin_kind
        The objective and how its stored base_score becomes a margin.
    stored_base_score, imported_base_score
        base_score as stored, and as the margin the ensemble started from.
    iteration_indptr, trees_per_iteration
        First tree of each imported iteration, and trees per iteration.
    internal_scale
        Per tree: the float32 factor from stored base weights to internal values.
    training_categories
        Per feature: the categories seen in training (or None).
    """

    header: Mapping | None = None
    model_header: Mapping | None = None
    booster: str = "gbtree"
    config: str = "{}"
    template: Any = None
    objective: str = ""
    margin_kind: str = "identity"
    stored_base_score: Any = None
    imported_base_score: Any = None
    iteration_indptr: Any = None
    trees_per_iteration: int = 1
    internal_scale: Any = None
    training_categories: Any = None


# keys of payloads written before the records, by their record's field name
_OLD_NAMES = {"estimator": "template", "shell": "template", "estimator_template": "tree_template"}


def payload_of(source, record: type):
    """The ``record`` of ``source.payload``, or None when it holds none.

    Old payloads (plain keys) and hand-written ones (``{"params": ...}``) are
    read into a record; keys the record does not know are ignored.
    """
    payload = source.payload
    found = payload.get(NATIVE)
    if isinstance(found, record):
        return found
    if found is not None:
        return None
    known = {field.name for field in fields(record)}
    values = {}
    for key, value in payload.items():
        name = _OLD_NAMES.get(key, key)
        if name in known:
            values[name] = value
    if not values:
        return None
    if "random_states" in values and values["random_states"] is not None:
        values["random_states"] = tuple(values["random_states"])
    return record(**values)


def with_payload(record) -> dict:
    """A ``Source.payload`` holding ``record``."""
    return {NATIVE: record}
