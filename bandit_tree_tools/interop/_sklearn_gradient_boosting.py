"""scikit-learn GradientBoosting <-> the common format.

Trees are ``DecisionTreeRegressor`` objects holding unscaled values; the
ensemble scales them by the learning rate (``tree_scale``) and starts from the
raw prediction of ``init_`` (``base_score``). Internal values are leaf values
only for the squared-error loss; for other losses they are recomputed from the
training data with scikit-learn's own line-search step
(:func:`recompute_internal_values`) or marked unknown.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import replace

import numpy as np

from ..exceptions import ConversionError, UnsupportedModelError
from ..tree import TREE_LEAF, Ensemble, Source, node_depth, one_per_row
from ._payload import SklearnPayload, with_payload
from ._sklearn_common import (
    check_boosting_ensemble,
    check_classes,
    check_finite_hint,
    feature_names,
    hint_mismatch,
    link_of,
    skeleton,
    sklearn_payload,
    version,
)
from ._sklearn_trees import max_depths, tree_from_sklearn, tree_to_sklearn

LABEL_RULE = "raw>=0"  # GradientBoostingClassifier.predict: raw >= 0 is the positive class

_GB_HINT = (
    "This GradientBoosting model's loss ({loss!r}) re-fits leaf values by a line search that internal nodes "
    "never received. Import it again with the training data, btt.from_sklearn(model, X=X_train, y=y_train, "
    "sample_weight=w), to recompute them."
)


# ------------------------------------------------------------------ GradientBoosting
def _base_score_gb(model, name):
    from sklearn.dummy import DummyClassifier, DummyRegressor

    init = model.init_
    if not (isinstance(init, str) and init == "zero") and not isinstance(init, (DummyClassifier, DummyRegressor)):
        raise UnsupportedModelError(
            f"this {name} starts from init={type(init).__name__}, whose predictions depend on X; only init=None, "
            "'zero' or a Dummy estimator (a constant start) can be expressed as a base score"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = model._raw_predict_init(np.zeros((1, model.n_features_in_), dtype=np.float32))
    return np.array(raw[0], dtype=np.float64)


def import_gradient_boosting(model, name, *, X=None, y=None, sample_weight=None) -> Ensemble:
    from sklearn._loss.loss import HalfSquaredError

    classifier = name.endswith("Classifier")
    classes = check_classes(model, name) if classifier else None
    estimators = model.estimators_
    n_stages, n_per_stage = estimators.shape
    squared = isinstance(model._loss, HalfSquaredError)
    trees = []
    for stage in range(n_stages):
        for k in range(n_per_stage):
            tree = estimators[stage, k].tree_
            known = None if squared else np.zeros(tree.node_count, dtype=np.uint8)
            trees.append(tree_from_sklearn(tree, 1, has_leaf_value=known))
    link, link_scale = link_of(model, name)
    base_score = _base_score_gb(model, name)
    record = SklearnPayload(
        kind="gradient_boosting",
        template=skeleton(model, estimators_=None),
        tree_template=skeleton(estimators[0, 0], tree_=None),
        base_score=base_score.copy(),
    )
    hint = "" if squared else _GB_HINT.format(loss=model.loss)
    payload = with_payload(record)
    ensemble = Ensemble(
        trees=tuple(trees),
        task="classification" if classifier else "regression",
        n_features_in_=int(model.n_features_in_),
        n_outputs=n_per_stage,
        tree_output=np.tile(np.arange(n_per_stage), n_stages),
        tree_scale=float(model.learning_rate),
        aggregation="sum",
        base_score=base_score,
        link=link,
        link_scale=link_scale,
        source=Source("sklearn", name, version(), payload, collapse_hint=hint),
        classes_=classes,
        feature_names_in_=feature_names(model),
        split_rule="le",
        input_dtype="float32",
        label_rule=LABEL_RULE,
    )
    if squared or X is None:
        if not squared and (y is not None or sample_weight is not None):
            raise ConversionError("pass both X and y (and optionally sample_weight) to recompute internal values")
        return ensemble
    if y is None:
        raise ConversionError("X was given without y; pass both to recompute the internal node values")
    trees = recompute_internal_values(model, ensemble, X, y, sample_weight)
    payload = with_payload(replace(record, recomputed_from_data=True))
    return replace(ensemble, trees=tuple(trees), source=Source("sklearn", name, version(), payload))


class _LevelTree:
    """What scikit-learn's ``_update_terminal_regions`` reads from a tree, with
    the nodes of one depth posing as its leaves, so the library's own
    line-search step computes the value each of those nodes would have had
    as a leaf."""

    def __init__(self, region, is_target, n_nodes):
        self._region = region
        self.children_left = np.where(is_target, TREE_LEAF, 0).astype(np.intp)
        self.value = np.zeros((n_nodes, 1, 1), dtype=np.float64)

    def apply(self, X):
        return self._region


def recompute_internal_values(model, ensemble, X, y, sample_weight):
    """Replay the boosting stages on ``(X, y)`` and give every internal node
    the line-search value scikit-learn would have stored had it been a leaf.

    Requires the rows that built each tree to be recoverable: no subsampling,
    no early stopping. Warns when the leaves' recomputed values differ from the
    stored ones (X, y are then not the training data)."""
    from sklearn.ensemble import _gb

    if model.subsample < 1.0 or model.n_iter_no_change is not None:
        raise ConversionError(
            "cannot recompute internal values of a GradientBoosting model trained with subsample < 1 or "
            "n_iter_no_change (the rows each tree was fitted on are not recoverable); collapse only nodes of a "
            "model trained with subsample=1.0 and n_iter_no_change=None, or use HistGradientBoosting"
        )
    X32 = ensemble.check_X(X)
    n_rows = X32.shape[0]
    y = one_per_row(y, n_rows, error=ConversionError)
    check_finite_hint(y, "y")
    if ensemble.task == "classification":
        classes = ensemble.classes_
        encoded = np.searchsorted(classes, y)
        encoded = np.clip(encoded, 0, len(classes) - 1)
        if np.any(classes[encoded] != y):
            raise ConversionError(f"y holds labels that are not among the model's classes {classes.tolist()}")
        y_true = encoded.astype(np.float64)
    else:
        y_true = y.astype(np.float64)
    if sample_weight is None:
        weight = np.ones(n_rows, dtype=np.float64)
    else:
        try:
            weight = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConversionError(f"sample_weight must be numbers, one per row of X ({n_rows})") from None
        if weight.shape != (n_rows,):
            raise ConversionError(f"sample_weight must have shape ({n_rows},), got {weight.shape}")
        check_finite_hint(weight, "sample_weight")
    loss = copy.deepcopy(model._loss)  # HuberLoss keeps a delta that set_huber_delta changes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = np.array(model._raw_predict_init(X32), dtype=np.float64)
    every_row = np.ones(n_rows, dtype=bool)
    estimators = model.estimators_
    n_stages, n_per_stage = estimators.shape
    trees = list(ensemble.trees)
    worst_leaf_difference = 0.0
    for stage in range(n_stages):
        if isinstance(loss, _gb.HuberLoss):
            _gb.set_huber_delta(loss=loss, y_true=y_true, raw_prediction=raw, sample_weight=weight)
        neg_gradient = -loss.gradient(y_true=y_true, raw_prediction=raw, sample_weight=None)
        neg_gradient = neg_gradient.reshape(n_rows, -1)
        for k in range(n_per_stage):
            index = stage * n_per_stage + k
            tree = trees[index]
            sk_tree = estimators[stage, k].tree_
            target = (y_true == k).astype(np.float64) if loss.is_multiclass else y_true
            indicator = sk_tree.decision_path(X32).tocsr()
            # the training rows reproduce every leaf's stored weight (subsample=1: each tree saw every row)
            leaf_weight = np.bincount(sk_tree.apply(X32), weights=weight, minlength=tree.n_nodes)
            stored_weight = tree.weighted_n_node_samples
            gap = np.abs(leaf_weight - stored_weight)[~(tree.children_left != TREE_LEAF)]
            if gap.size and gap.max() > 1e-9 * max(1.0, float(np.nanmax(np.abs(stored_weight)))):
                raise hint_mismatch(
                    f"the rows reaching the leaves of tree {index} weigh {float(gap.max()):.6g} "
                    "more or less than in training"
                )
            depth = node_depth(tree)
            value = tree.value.copy()
            known = tree.has_leaf_value.copy()
            internal = tree.children_left != TREE_LEAF
            for level in range(int(depth.max()) + 1):
                at_level = depth == level
                # the node of this depth on each row's path (its leaf if the path is shorter)
                region = _node_at_depth(indicator, depth, level)
                weight_at = np.bincount(region, weights=weight, minlength=tree.n_nodes)
                targets = at_level & (weight_at > 0)
                if not np.any(targets):
                    continue
                fake = _LevelTree(region, targets, tree.n_nodes)
                _gb._update_terminal_regions(
                    loss,
                    fake,
                    X32,
                    target,
                    neg_gradient[:, k],
                    raw.copy(),
                    weight,
                    every_row,
                    learning_rate=model.learning_rate,
                    k=k,
                )
                found = fake.value[:, 0, 0]
                fill = targets & internal
                value[fill, 0] = found[fill]
                known[fill] = 1
                leaves = targets & ~internal
                if np.any(leaves):
                    stored = tree.value[leaves, 0]
                    gap = np.abs(found[leaves] - stored) / np.maximum(1.0, np.abs(stored))
                    worst_leaf_difference = max(worst_leaf_difference, float(gap.max()))
            trees[index] = tree._replace(value=value, has_leaf_value=known)
            # advance the raw predictions exactly as fit did, with the stored leaf values
            raw[:, k] += model.learning_rate * sk_tree.value[:, 0, 0].take(sk_tree.apply(X32), axis=0)
    if worst_leaf_difference > 1e-9:
        raise hint_mismatch(
            f"the leaf values recomputed from them are up to {worst_leaf_difference:.3g} (relative) "
            "away from the stored ones"
        )
    return trees


def _node_at_depth(indicator, depth, level):
    """For each row of a node-indicator CSR matrix, the deepest node on its path
    whose depth is <= ``level``."""
    rows = np.repeat(np.arange(indicator.shape[0]), np.diff(indicator.indptr))
    nodes = indicator.indices
    keep = depth[nodes] <= level
    region = np.zeros(indicator.shape[0], dtype=np.intp)
    best = np.full(indicator.shape[0], -1, dtype=np.int64)
    np.maximum.at(best, rows[keep], depth[nodes[keep]] * (1 << 32) + nodes[keep])
    region[:] = best & ((1 << 32) - 1)
    return region


def export_gradient_boosting(ensemble):
    name = ensemble.source.estimator
    payload = sklearn_payload(ensemble)
    n_per_stage = check_boosting_ensemble(ensemble, name, payload, LABEL_RULE)
    template = payload.template
    if np.any(ensemble.tree_scale != template.learning_rate):
        raise ConversionError(f"every tree_scale must equal the learning rate {template.learning_rate}")
    if ensemble.split_rule != "le" or ensemble.input_dtype != "float32":
        raise ConversionError(
            "a GradientBoosting model compares float32(x) <= threshold: split_rule must be 'le' and input_dtype "
            "'float32'"
        )
    model = copy.deepcopy(template)
    n_stages = ensemble.n_trees // n_per_stage
    estimators = np.empty((n_stages, n_per_stage), dtype=object)
    tree_template = copy.deepcopy(payload.tree_template)
    tree_depths = max_depths(ensemble.trees)
    for index, tree in enumerate(ensemble.trees):
        # shallow copies of one private deep copy: like the trees fit() makes, they
        # share one RandomState and otherwise hold only scalars
        estimator = copy.copy(tree_template)
        estimator.tree_ = tree_to_sklearn(
            tree, ensemble.n_features_in_, None, index=index, max_depth=tree_depths[index]
        )
        estimators[index // n_per_stage, index % n_per_stage] = estimator
    model.estimators_ = estimators
    model.n_estimators_ = n_stages
    return model
