"""The routing engine's layout of an ensemble (``Ensemble.packed``): every
tree's arrays concatenated and renumbered for :mod:`._kernels`."""

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidTreeError
from . import _kernels
from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, breadth_first_positions, node_offsets


class PackedEnsemble(NamedTuple):
    """Every tree's arrays concatenated, for the routing engine (:mod:`._kernels`).

    Original ids: tree ``t`` owns global ids ``node_offset[t] <= i <
    node_offset[t + 1]`` (children local) and ``value`` is in that order.
    The engine renumbers each tree breadth first inside the same id range
    (``new_of_old``, ``origin`` the inverse): ``records`` holds each node's
    threshold, feature word and left child, in one of two layouts (see
    :mod:`._kernels`): wide (int32, 4 per node; ``cuts`` its float64 view, 2
    per node) or, where ``compact``, 8 bytes (uint32, 2 per node; ``cuts`` its
    float32 view; a word's low ``shift`` bits are the feature, masked by
    ``feature_mask``); ``tree_depth`` the steps a row takes to a leaf,
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
    # the compact layout, where it applies (defaults: ensembles pickled with the wide layout only)
    compact: bool = False
    feature_mask: int = 0
    shift: int = 0

    def general(self, split_rule: str, finite: bool = False) -> tuple:
        """What the engine reads beside ``records`` and ``cuts``: the word's
        feature mask and shift (compact) or the arrays of the general splits
        (wide); one more item where the rows hold no NaN (``finite``), which
        compiles the engine's steps without the NaN rule."""
        fields: tuple
        if self.compact:
            fields = (np.uint32(self.feature_mask), np.uint32(self.shift))
            return fields + (np.uint32(0),) if finite else fields
        fields = (self.flags, self.threshold, self.category_left, self.category_right, split_rule == "lt")
        return fields + (True,) if finite else fields


def breadth_first(node_offset, children_left, children_right):
    """New global id of every node (each tree renumbered breadth first, a
    node's children side by side, within the tree's id range), each tree's
    depth (the steps that take any row to a leaf) and its lockstep steps (see
    :func:`._kernels._route_lanes`): its depth if at most ``LOCKSTEP_DEPTH``,
    else half its depth, or its shallowest leaf's depth if deeper.

    numpy (:func:`breadth_first_positions`): a kernel ran it faster (8 ms
    against 43 ms for a 100-tree forest of 900,000 nodes) but compiled for
    0.2 s in every fresh process, where most models are far smaller."""
    new_of_old, level = breadth_first_positions(node_offset, children_left, children_right)
    starts = node_offset[:-1]
    depth = np.maximum.reduceat(level, starts)
    shallowest = np.minimum.reduceat(np.where(children_left >= 0, level.shape[0], level), starts)
    # shallow trees (boosting) walk in plain lockstep: checking for finished rows costs more than it saves
    deep = depth > _kernels.LOCKSTEP_DEPTH
    lockstep = np.where(deep, np.minimum(depth, np.maximum(shallowest, depth // 2)), depth)
    return new_of_old, depth, lockstep


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
            parts = [
                part if part.shape[1] == n_words else np.pad(part, ((0, 0), (0, n_words - part.shape[1])))
                for part in parts
            ]
        return np.ascontiguousarray(np.concatenate(parts))

    # Every node's fields are computed in the original order and written once at its new id
    # (``nodes``): a forest has millions of nodes, and each full-size temporary is memory the
    # first use of an imported model touches for the first time.
    left_local, right_local = joined("children_left"), joined("children_right")
    nodes, depth, lockstep = breadth_first(offsets, left_local, right_local)

    def renumbered(array):
        """``array`` (a row per node, in the original order) with each row at the node's new id."""
        out = np.empty_like(array)
        out[nodes] = array
        return out

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
    nan_right = ~is_leaf & ~general & np.where(missing_type == MISSING_NAN_AS_ZERO, ~(0.0 <= cut), missing_left == 0)
    cut = np.where(is_leaf | general, np.nan, cut)
    word = np.where(is_leaf, 0, feature).astype(np.int64, copy=False)
    word[nan_right] |= _kernels.NAN_RIGHT
    word[general] |= _kernels.GENERAL
    left = nodes[np.where(is_leaf, 0, left_local + shift)]
    left[is_leaf] = nodes[is_leaf]  # a leaf points at itself
    compact = _compact(cut, word, left - nodes, nodes, ensemble.input_dtype, ensemble.n_features_in_)
    if compact is None:  # the 16-byte layout
        wide = np.zeros((offsets[-1], 4), dtype=np.int32)
        wide.view(np.float64)[nodes, 0] = cut
        wide[nodes, _kernels.WORD] = word
        wide[nodes, _kernels.LEFT] = left
        records, cuts, shift_bits = wide.reshape(-1), wide.view(np.float64).reshape(-1), None
    else:
        records, cuts, shift_bits = compact
    value = joined("value")
    if np.all(ensemble.tree_scale == 1.0):  # x * 1.0 is x, bit for bit
        scaled = renumbered(value)
    else:
        scaled = renumbered(value * np.repeat(ensemble.tree_scale, np.diff(offsets))[:, None])
    with np.errstate(over="ignore"):
        scaled32 = scaled.astype(np.float32)
    return PackedEnsemble(
        node_offset=offsets,
        value=value,
        tree_root=np.ascontiguousarray(offsets[:-1]),
        tree_depth=depth,
        tree_lockstep=lockstep,
        records=records,
        cuts=cuts,
        flags=renumbered(flags),
        threshold=renumbered(threshold),
        category_left=renumbered(joined("category_left")),
        category_right=renumbered(joined("category_right")),
        new_of_old=nodes,
        origin=renumbered(np.arange(offsets[-1])),
        leaf_id=renumbered(np.arange(offsets[-1]) - shift),
        leaf_value=scaled,
        leaf_value32=scaled32,
        compact=compact is not None,
        feature_mask=0 if shift_bits is None else (1 << shift_bits) - 1,
        shift=0 if shift_bits is None else shift_bits,
    )


def _compact(cut, word, distance, nodes, input_dtype, n_features):
    """(records, cuts, shift) of the 8-byte layout, or None where it does not
    apply: a general split, a cut float32 cannot stand for exactly (float64
    inputs), or a left child too far from its parent for the word's bits.
    Per node in the original order (written at its new id, ``nodes``): its
    cut (NaN at a leaf), its wide word and the distance from its new id to
    its left child's (0 at a leaf, which so points at itself).

    A word holds the feature (low ``shift`` bits), NaN-goes-right (bit
    ``shift``) and that distance (the bits above)."""
    if np.any(word & _kernels.GENERAL):
        return None
    cut32 = _kernels.at_or_below32(cut, input_dtype)
    if cut32 is None:
        return None
    shift = max(n_features - 1, 1).bit_length()
    if distance.size and distance.max() >= 1 << (31 - shift):
        return None
    packed = np.empty((cut.shape[0], 2), dtype=np.uint32)
    packed.view(np.float32)[nodes, 0] = cut32
    nan_right = (word & _kernels.NAN_RIGHT) != 0
    packed[nodes, 1] = (
        (distance << (shift + 1)) | (nan_right.astype(np.int64) << shift) | (word & _kernels.FEATURE_MASK)
    )
    return packed.reshape(-1), packed.view(np.float32).reshape(-1), shift
