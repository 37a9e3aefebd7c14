"""The routing engine's layout of an ensemble (``Ensemble.packed``): every
tree's arrays concatenated and renumbered for :mod:`._kernels`."""

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidTreeError
from . import _kernels
from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, node_offsets


class PackedEnsemble(NamedTuple):
    """Every tree's arrays concatenated, for the routing engine (:mod:`._kernels`).

    Original ids: tree ``t`` owns global ids ``node_offset[t] <= i <
    node_offset[t + 1]`` (children local) and ``value`` is in that order.
    The engine renumbers each tree breadth first inside the same id range
    (``new_of_old``, ``origin`` the inverse): ``records`` (int32, 4 per node;
    ``cuts`` its float64 view, 2 per node) holds each node's threshold, feature word and
    left child; ``tree_depth`` the steps a row takes to a leaf,
    ``tree_lockstep`` the steps every row takes before the engine checks for rows at their leaves; ``leaf_id`` a
    node's original local id; ``leaf_value`` / ``leaf_value32`` its value
    times its tree's scale (float64 / float32); ``flags``, ``threshold`` and
    the category bitsets (by new id) decide the general splits."""

    node_offset: np.ndarray
    value: np.ndarray
    tree_root: np.ndarray
    tree_depth: np.ndarray
    tree_lockstep: np.ndarray
    records: np.ndarray
    cuts: np.ndarray
    flags: np.ndarray
    threshold: np.ndarray
    category_left: np.ndarray
    category_right: np.ndarray
    new_of_old: np.ndarray
    origin: np.ndarray
    leaf_id: np.ndarray
    leaf_value: np.ndarray
    leaf_value32: np.ndarray

    def general(self, split_rule: str):
        return (self.flags, self.threshold, self.category_left, self.category_right, split_rule == "lt")


def _pack(ensemble) -> PackedEnsemble:
    trees = ensemble.trees
    offsets = node_offsets(trees)
    if offsets[-1] >= 2**31 - 1 or ensemble.n_features_in_ > _kernels.FEATURE_MASK:
        raise InvalidTreeError(
            f"the ensemble has {offsets[-1]} nodes and {ensemble.n_features_in_} features; routing supports "
            f"fewer than 2**31 nodes and at most {_kernels.FEATURE_MASK} features"
        )
    n_words = max(tree.category_left.shape[1] for tree in trees)

    def joined(name):
        parts = [getattr(tree, name) for tree in trees]
        if name in ("category_left", "category_right"):
            parts = [np.pad(part, ((0, 0), (0, n_words - part.shape[1]))) for part in parts]
        return np.ascontiguousarray(np.concatenate(parts))

    left_local, right_local = joined("children_left"), joined("children_right")
    new_of_old, depth, lockstep = _kernels._breadth_first(offsets, left_local, right_local)
    origin = np.empty_like(new_of_old)
    origin[new_of_old] = np.arange(new_of_old.shape[0])
    shift = np.repeat(offsets[:-1], np.diff(offsets))
    is_leaf = left_local < 0
    threshold, feature = joined("threshold"), joined("feature")
    missing_type, missing_left = joined("missing_type"), joined("missing_go_to_left")
    categorical = joined("is_categorical") != 0
    flags = _kernels.pack_flags(missing_left, missing_type, categorical, joined("unknown_category_go_to_left"))
    # one rule for every numerical split: x <= cut
    cut = threshold if ensemble.split_rule == "le" else _kernels.below(threshold, ensemble.input_dtype)
    # x < -inf has no "x <= cut" form; such a split is decided by the general rule
    no_cut = (threshold == -np.inf) if ensemble.split_rule == "lt" else np.zeros_like(is_leaf)
    general = ~is_leaf & (categorical | (missing_type == MISSING_ZERO_OR_NAN) | no_cut)
    nan_right = np.where(missing_type == MISSING_NAN_AS_ZERO, ~(0.0 <= cut), missing_left == 0)
    records = np.zeros((offsets[-1], 4), dtype=np.int32)
    cuts = records.view(np.float64)
    nodes = new_of_old
    cuts[nodes, 0] = np.where(is_leaf | general, np.nan, cut)
    word = np.where(is_leaf, 0, feature).astype(np.int64)
    word |= np.where(~is_leaf & ~general & nan_right, _kernels.NAN_RIGHT, 0)
    word |= np.where(general, _kernels.GENERAL, 0)
    records[nodes, _kernels.WORD] = word
    records[nodes, _kernels.LEFT] = np.where(is_leaf, nodes, new_of_old[np.where(is_leaf, 0, left_local + shift)])
    local = np.arange(offsets[-1]) - shift
    leaf_id = np.empty(offsets[-1], dtype=np.int64)
    leaf_id[nodes] = local
    value = joined("value")
    scaled = np.empty_like(value)
    scaled[nodes] = value * np.repeat(ensemble.tree_scale, np.diff(offsets))[:, None]
    with np.errstate(over="ignore"):
        scaled32 = scaled.astype(np.float32)
    category_left = np.empty_like(joined("category_left"))
    category_right = np.empty_like(category_left)
    category_left[nodes], category_right[nodes] = joined("category_left"), joined("category_right")
    flags_new, threshold_new = np.empty_like(flags), np.empty_like(threshold)
    flags_new[nodes], threshold_new[nodes] = flags, threshold
    return PackedEnsemble(
        node_offset=offsets,
        value=value,
        tree_root=np.ascontiguousarray(offsets[:-1]),
        tree_depth=depth,
        tree_lockstep=lockstep,
        records=records.reshape(-1),
        cuts=cuts.reshape(-1),
        flags=flags_new,
        threshold=threshold_new,
        category_left=category_left,
        category_right=category_right,
        new_of_old=new_of_old,
        origin=origin,
        leaf_id=leaf_id,
        leaf_value=scaled,
        leaf_value32=scaled32,
    )
