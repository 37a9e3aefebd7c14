"""Writing trees of the common format as LightGBM model-string blocks.

Helpers of :func:`bandit_tree_tools.interop.lightgbm.to_lightgbm`: what a
LightGBM model can hold, and each tree's arrays in LightGBM's layout
(internal nodes and leaves numbered separately, children of internal nodes
encoded ``~leaf``).
"""

import hashlib

import numpy as np

from ..exceptions import ConversionError
from ..tree import MISSING_NAN, MISSING_ZERO_OR_NAN, TREE_LEAF, Ensemble
from . import _lightgbm_text as text
from ._lightgbm_text import (
    BELOW_NEGATIVE_ZERO,
    CATEGORICAL_DECISION_TYPE,
    LIGHTGBM_ZERO,
    MISSING_TO_LIGHTGBM,
    objective_link,
)


def check_exportable(ensemble: Ensemble, payload) -> int:
    """Refuse what the LightGBM model the ensemble came from cannot hold;
    return its number of trees per iteration. ``payload``: the ensemble's
    LightGBMPayload, None if it has none."""
    if ensemble.source.library != "lightgbm" or payload is None or not payload.header:
        raise ConversionError(
            f"to_lightgbm exports ensembles imported from LightGBM; this one comes from "
            f"{ensemble.source.library!r} ({ensemble.source.estimator}); use btt.to_model(ensemble) instead"
        )
    per_iteration = payload.num_tree_per_iteration
    header = dict(payload.header)
    expected = {
        "split_rule": ("le", ensemble.split_rule),
        "input_dtype": ("float64", ensemble.input_dtype),
        "accumulate_float32": (False, ensemble.accumulate_float32),
        "label_rule": ("proba", ensemble.label_rule),
        "link_exp": ("libm", ensemble.link_exp),
        "n_outputs": (per_iteration, ensemble.n_outputs),
        "n_features_in_": (int(header["max_feature_idx"]) + 1, ensemble.n_features_in_),
        "value width": (1, ensemble.trees[0].value.shape[1]),
        "link": (objective_link(header.get("objective"))[:2], (ensemble.link, ensemble.link_scale)),
    }
    for name, (want, got) in expected.items():
        if want != got:
            raise ConversionError(
                f"cannot write this ensemble as a LightGBM model: its {name} is {got!r}, but the LightGBM model it "
                f"came from needs {want!r}; export an ensemble whose {name} is unchanged since import"
            )
    if ensemble.n_trees % per_iteration or np.any(ensemble.tree_output != np.arange(ensemble.n_trees) % per_iteration):
        raise ConversionError(
            f"LightGBM needs trees ordered by iteration with tree t predicting class t % {per_iteration}; this "
            "ensemble's tree_output breaks that order"
        )
    if (ensemble.aggregation == "mean") != ("average_output" in header):
        raise ConversionError(
            f"the ensemble's aggregation {ensemble.aggregation!r} does not match the LightGBM model's "
            f"{'average_output (rf)' if 'average_output' in header else 'summed boosting'}"
        )
    if ensemble.aggregation == "mean" and np.any(ensemble.base_score != 0.0):
        raise ConversionError(
            "LightGBM's averaged (rf) models have no intercept, and a nonzero base_score cannot be folded into "
            "averaged trees exactly; set base_score to 0"
        )
    return per_iteration


def _zero_nan(values):
    """LightGBM has no "unknown": write 0 for NaN (unknown weights, gains, values)."""
    missing = np.isnan(values)
    return np.where(missing, 0.0, values) if missing.any() else values


def tree_fields(tree, shrinkage: float, scale: float, bias: float) -> dict:
    """One tree in LightGBM's layout: our internal nodes in id order become
    LightGBM's internal nodes 0.., our leaves in id order its leaves 0.. (the
    root, node 0, stays first); number arrays are formatted later, in bulk."""
    leaf = tree.children_left == TREE_LEAF
    values = tree.value[:, 0]
    if scale != 1.0:  # the kernel adds fl(scale * value): write that double
        values = scale * values
    if bias != 0.0:  # the intercept, folded into the first tree as LightGBM keeps it
        values = values + bias
    internal_ids = np.flatnonzero(~leaf)
    leaf_ids = np.flatnonzero(leaf)
    counts = np.maximum(tree.n_node_samples, 0)
    weights = _zero_nan(tree.weighted_n_node_samples)
    fields = {
        "num_leaves": leaf_ids.shape[0],
        "leaf_value": values[leaf_ids],
        "leaf_weight": weights[leaf_ids],
        "leaf_count": counts[leaf_ids],
        "shrinkage": repr(float(shrinkage)).removesuffix(".0"),
        "num_cat": 0,
    }
    if internal_ids.shape[0] == 0:
        empty = {key: np.zeros(0) for key in text.TREE_KEYS[2:8] + text.TREE_KEYS[11:14]}
        fields.update(empty)
        return fields
    rank = np.empty(tree.n_nodes, dtype=np.int64)
    rank[internal_ids] = np.arange(internal_ids.shape[0])
    rank[leaf_ids] = np.arange(leaf_ids.shape[0])

    def child(children):
        ids = children[internal_ids]
        return np.where(leaf[ids], ~rank[ids], rank[ids])

    categorical = tree.is_categorical[internal_ids] == 1
    missing_type = tree.missing_type[internal_ids]
    missing_left = tree.missing_go_to_left[internal_ids].astype(np.int64)
    decision = (missing_left << 1) | (MISSING_TO_LIGHTGBM[missing_type] << 2)
    threshold = tree.threshold[internal_ids].copy()
    numeric = ~categorical
    if np.any(np.isnan(threshold[numeric])):  # +-inf is fine: LightGBM itself writes "inf" thresholds
        raise ConversionError("LightGBM cannot load a NaN threshold; the ensemble has a numeric split at NaN")
    # LightGBM reads |x| <= 1e-35f as 0.0 before comparing: a threshold inside that
    # band would route rows in it differently from ours (Zero-type nodes excepted,
    # where the band is missing anyway).
    in_band = numeric & (missing_type != MISSING_ZERO_OR_NAN) & (threshold >= -LIGHTGBM_ZERO)
    in_band &= threshold < LIGHTGBM_ZERO
    if in_band.any():
        raise ConversionError(
            f"LightGBM cannot express the threshold {threshold[in_band][0]!r}: it reads every |x| <= 1e-35f as 0.0, "
            "so thresholds in [-1e-35f, 1e-35f) route such rows differently; use a threshold outside that band"
        )
    threshold[numeric & (threshold == BELOW_NEGATIVE_ZERO)] = -LIGHTGBM_ZERO  # as LightGBM wrote it
    if categorical.any():
        cat_nodes = internal_ids[categorical]
        if np.any(
            (tree.missing_type[cat_nodes] != MISSING_NAN)
            | (tree.missing_go_to_left[cat_nodes] != 0)
            | (tree.unknown_category_go_to_left[cat_nodes] != 0)
        ):
            raise ConversionError(
                "LightGBM's categorical splits send NaN and every category outside the node's set to the right "
                "child; this ensemble has a categorical node that sends missing or unknown categories left"
            )
        bitsets = []
        for node in cat_nodes.tolist():
            words = tree.category_left[node]
            used = np.flatnonzero(words)
            bitsets.append(words[: max(int(used[-1]) + 1 if used.size else 1, 1)])
        boundaries = np.zeros(len(bitsets) + 1, dtype=np.int64)
        np.cumsum([bits.shape[0] for bits in bitsets], out=boundaries[1:])
        decision[categorical] = CATEGORICAL_DECISION_TYPE
        threshold[categorical] = np.arange(len(bitsets), dtype=np.float64)
        fields["num_cat"] = len(bitsets)
        fields["cat_boundaries"] = text.format_ints(boundaries)
        fields["cat_threshold"] = text.format_ints(np.concatenate(bitsets).astype(np.int64))
    gains = _zero_nan(tree.gain[internal_ids])
    fields.update(
        {
            "split_feature": tree.feature[internal_ids],
            "split_gain": gains,
            "threshold": threshold,
            "decision_type": decision,
            "left_child": child(tree.children_left),
            "right_child": child(tree.children_right),
            "internal_value": _zero_nan(values[internal_ids]),
            "internal_weight": weights[internal_ids],
            "internal_count": counts[internal_ids],
        }
    )
    return fields


def tree_digest(tree) -> bytes:
    """Fingerprint of every array of a tree (shapes, dtypes and bytes), so the
    export can tell an unchanged tree even if someone edited arrays in place."""
    layout = "".join(f"{array.dtype.str}{array.shape}" for array in tree).encode()
    content = b"".join(np.ascontiguousarray(array).tobytes() for array in tree)
    return hashlib.blake2b(layout + content, digest_size=16).digest()


def split_importances(ensemble: Ensemble, names: list) -> list:
    """LightGBM's "split" importance: splits with positive gain per feature."""
    totals = np.zeros(len(names), dtype=np.int64)
    for tree in ensemble.trees:
        used = (tree.children_left != TREE_LEAF) & (tree.gain > 0)  # NaN (unknown) counts as 0
        totals += np.bincount(tree.feature[used], minlength=len(names))
    order = sorted(np.flatnonzero(totals).tolist(), key=lambda i: -totals[i])  # stable, as LightGBM sorts
    return [(names[i], int(totals[i])) for i in order]
