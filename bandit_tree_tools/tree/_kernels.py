"""The routing engine: numba kernels over a packed ensemble, the only place
where the decision rule of a split is written down. Every caller (predict,
apply, decision_path, pruning, medoids, the panels) routes rows through the
functions here, via the validating wrappers of :mod:`._ensemble`.

Layout (built by ``Ensemble.packed``): the nodes of every tree renumbered breadth
first, so that the two children of a node sit side by side (right = left + 1)
and the top levels of a tree share a few cache lines. Each node is one
16-byte record, read as float64 ``[threshold, -]`` and as int32
``[-, -, word, left]`` (two flat views of the same memory, ``cuts[2 * node]``
and ``records[4 * node + WORD | LEFT]``, so a node visit touches one cache line):

- ``left`` is the global id of the left child; a leaf points at itself and has
  a NaN threshold, so a step from a leaf stays there whatever the row holds;
- ``word`` is the feature, plus ``NAN_RIGHT`` (NaN goes right) and
  ``GENERAL`` (a categorical split or LightGBM's zero-as-missing rule, decided
  by :func:`_goes_left_general` from the original flags and bitsets).

Where it is exact, ``_pack`` chooses a compact layout instead (twice the nodes
per cache line): one 8-byte record per node, a float32 cut and a uint32 word
(feature in the low ``shift`` bits, then the NaN-goes-right bit, then the
distance from the node to its left child; 0 at a leaf). It applies where no
split is general and every cut has a float32 stand-in: always for float32
inputs (XGBoost, scikit-learn: the largest float32 at or below the cut
decides alike), for float64 inputs where the cut is a float32 value. The
kernels are the same for both layouts: :func:`_step` and :func:`_at_leaf`
are overloaded on the type of ``cuts``. Where the rows hold no NaN the steps
are compiled without the NaN rule (measured 1.3x faster on an XGBoost model).

Numerical splits are rewritten to one rule, ``x <= threshold``: a split
``x < t`` becomes ``x <= T`` with ``T`` the largest value of the input dtype
below ``t`` (exact: no value of that dtype lies between), and a NaN that a
node reads as 0.0 is folded into ``NAN_RIGHT``. A step is then branch free:
``left + (x > T or (x is NaN and NAN_RIGHT))``.

Rows are routed in blocks (``LANES`` rows walk a tree level by level in
lockstep, so the independent node loads of different rows overlap instead of
waiting on each other), tree by tree inside a block of ``BLOCK`` rows (a
tree's nodes stay in cache across the block). In deep trees (forests, whose
leaves lie at very different depths) the rows that reached their leaves drop
out of the lockstep every few steps, so a row stops near its own leaf's depth
rather than the tree's (:func:`_route_lanes`).
"""

import numba
import numpy as np
from numba.extending import overload

from .._kernels_inline import empty, smaller, zeros
from .._numba_config import helper, kernel
from .._threads import chunk_size, n_threads, run_chunks
from ._arrays import MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, ZERO_THRESHOLD

# bits of the original per-node ``flags`` byte (kept for general splits)
FLAG_MISSING_LEFT = 1
MISSING_TYPE_SHIFT = 1  # two bits: the node's missing_type
FLAG_CATEGORICAL = 8
FLAG_UNKNOWN_LEFT = 16

# int32 columns of a node record (columns 0-1 hold the float64 threshold)
WORD, LEFT = 2, 3
NAN_RIGHT = 1 << 30
GENERAL = 1 << 29
FEATURE_MASK = GENERAL - 1

BLOCK = 2048  # rows per parallel task; every tree is routed over the block before the next
DEEP_BLOCK = 8192  # the same for deep trees (their nodes are many: fewer passes over them pay)
LANES = 64  # rows that walk a tree in lockstep
MIN_CHUNK_ROUTES = 4096  # row-tree routes below which a task is not worth another thread (see chunk_rows)
LOCKSTEP_DEPTH = 12  # trees up to this depth: every row takes the tree's depth in steps
CHECK_EVERY = 4  # steps between two checks for rows that reached their leaves


def pack_flags(missing_go_to_left, missing_type, is_categorical, unknown_category_go_to_left) -> np.ndarray:
    return (
        missing_go_to_left.astype(np.uint8) * FLAG_MISSING_LEFT
        | (missing_type.astype(np.uint8) << MISSING_TYPE_SHIFT)
        | is_categorical.astype(np.uint8) * FLAG_CATEGORICAL
        | unknown_category_go_to_left.astype(np.uint8) * FLAG_UNKNOWN_LEFT
    ).astype(np.uint8)


def below(threshold: np.ndarray, input_dtype: str) -> np.ndarray:
    """The largest value of ``input_dtype`` strictly below each threshold, as
    float64: ``x < t`` and ``x <= below(t)`` agree for every ``x`` of that dtype."""
    threshold = np.asarray(threshold, dtype=np.float64)
    if input_dtype == "float64":
        return np.nextafter(threshold, -np.inf)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as the cast of X gives
        rounded = threshold.astype(np.float32)
        lower = np.nextafter(rounded, np.float32(-np.inf))
    return np.where(rounded.astype(np.float64) < threshold, rounded, lower).astype(np.float64)


def at_or_below32(cut: np.ndarray, input_dtype: str):
    """Float32 cuts ``C`` with ``x <= cut`` and ``x <= C`` equal for every ``x``
    of ``input_dtype``, or None where some cut has no such value.

    float32 inputs: ``C`` is the largest float32 at or below ``cut`` (no
    float32 lies between them); float64 inputs: ``cut`` itself when float32
    holds it exactly. NaN cuts (leaves) stay NaN."""
    cut = np.asarray(cut, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, then stepped down below +inf
        rounded = cut.astype(np.float32)
        if input_dtype == "float32":
            return np.where(rounded.astype(np.float64) > cut, np.nextafter(rounded, np.float32(-np.inf)), rounded)
    exact = (rounded.astype(np.float64) == cut) | np.isnan(cut)
    return rounded if exact.all() else None


@helper(inline="always")
def _in_bitset(bits, node, category):
    word = category >> 5
    if word >= bits.shape[1]:
        return False
    return (bits[node, word] >> np.uint32(category & 31)) & np.uint32(1) == np.uint32(1)


@kernel
def _goes_left_general(x, node, flag, threshold, category_left, category_right, rule_lt):
    """A split with zero-as-missing, NaN-as-zero or categories, on the
    original threshold and rule."""
    kind = (flag >> MISSING_TYPE_SHIFT) & 3
    missing_left = (flag & FLAG_MISSING_LEFT) != 0
    if np.isnan(x):
        if kind == MISSING_NAN_AS_ZERO:
            x = 0.0  # LightGBM's missing type "None": NaN is compared as 0.0
        else:
            return missing_left
    if kind == MISSING_ZERO_OR_NAN and -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD:
        return missing_left
    if flag & FLAG_CATEGORICAL:
        unknown_left = (flag & FLAG_UNKNOWN_LEFT) != 0
        # Negative and huge values are no category of any library we import.
        if x < 0.0 or x >= 2147483647.0:
            return unknown_left
        category = np.int64(x)
        if _in_bitset(category_left, node, category):
            return True
        if _in_bitset(category_right, node, category):
            return False
        return unknown_left
    if rule_lt:
        return x < threshold[node]
    return x <= threshold[node]


def _step(X, row, node, records, cuts, general):
    """The node a row moves to from ``node`` (itself at a leaf); compiled for
    the layout that the type of ``cuts`` names (float32: compact) by the overload below."""
    raise NotImplementedError("only callable from the numba kernels")


def _at_leaf(node, records, cuts, general):
    """Whether ``node`` is a leaf (a node whose step leads back to itself)."""
    raise NotImplementedError("only callable from the numba kernels")


def _is_compact(cuts):
    return cuts.dtype == numba.types.float32


@overload(_step, inline="always", jit_options={"cache": True})
def _step_overload(X, row, node, records, cuts, general):
    if _is_compact(cuts):
        if len(general) == 3:  # X holds no NaN: the steps skip the NaN bit

            def step_compact_finite(X, row, node, records, cuts, general):
                u = np.uint64(node) * np.uint64(2)
                word = records[u + np.uint64(1)]
                x = X[np.uint64(row), np.uint64(word & general[0])]
                return node + np.int32((word >> (general[1] + np.uint32(1))) + np.uint32(x > cuts[u]))

            return step_compact_finite

        def step_compact(X, row, node, records, cuts, general):
            feature_mask, shift = general[0], general[1]
            u = np.uint64(node) * np.uint64(2)
            word = records[u + np.uint64(1)]
            x = X[np.uint64(row), np.uint64(word & feature_mask)]
            right = np.uint32(x > cuts[u]) | (np.uint32(x != x) & ((word >> shift) & np.uint32(1)))
            return node + np.int32((word >> (shift + np.uint32(1))) + right)

        return step_compact

    finite = len(general) == 6  # X holds no NaN

    def step_wide(X, row, node, records, cuts, general):
        u = np.uint64(node)  # unsigned indices: no negative-index wraparound in the hot loop
        word = records[u * np.uint64(4) + np.uint64(WORD)]
        x = X[np.uint64(row), np.uint64(word & FEATURE_MASK)]
        if word & GENERAL:
            flags, threshold, category_left, category_right, rule_lt = general[:5]
            if _goes_left_general(x, node, flags[node], threshold, category_left, category_right, rule_lt):
                return records[u * np.uint64(4) + np.uint64(LEFT)]
            return records[u * np.uint64(4) + np.uint64(LEFT)] + np.int32(1)
        c = cuts[u * np.uint64(2)]
        if finite:
            return records[u * np.uint64(4) + np.uint64(LEFT)] + np.int32(x > c)
        right = np.int32(x > c) | (np.int32(x != x) & np.int32(word >> 30))
        return records[u * np.uint64(4) + np.uint64(LEFT)] + right

    return step_wide


@overload(_at_leaf, inline="always", jit_options={"cache": True})
def _at_leaf_overload(node, records, cuts, general):
    if _is_compact(cuts):

        def at_leaf_compact(node, records, cuts, general):
            return (records[np.uint64(node) * np.uint64(2) + np.uint64(1)] >> (general[1] + np.uint32(1))) == 0

        return at_leaf_compact

    def at_leaf_wide(node, records, cuts, general):
        return records[np.uint64(node) * np.uint64(4) + np.uint64(LEFT)] == node

    return at_leaf_wide


@helper(inline="always")
def _route_lanes(X, start, count, root, depth, lockstep, records, cuts, general, at, lanes):
    """Global ids of the leaves reached by rows ``start .. start + count - 1``
    in one tree, into ``at[:count]``: the rows step together, one level at a
    time (``lanes`` is scratch, two rows of ``LANES``).

    All rows take the tree's first ``lockstep`` steps; then, in deep
    unbalanced trees (forests), the rows still inside the tree are packed to
    the front every ``CHECK_EVERY`` steps, so that a row stops soon after it
    reaches its leaf instead of stepping on the spot down to the tree's depth
    (the leaf's self-loop makes the extra steps harmless)."""
    if lockstep >= depth:  # plain lockstep (shallow trees)
        for lane in range(count):
            at[lane] = root
        for _ in range(depth):
            for lane in range(count):
                at[lane] = _step(X, start + lane, at[lane], records, cuts, general)
        return
    node_, row_ = lanes[0], lanes[1]
    for lane in range(count):
        node_[lane] = root
        row_[lane] = start + lane
    n = count
    steps = lockstep
    while n > 0:
        for _ in range(steps):
            for i in range(n):
                node_[i] = _step(X, row_[i], node_[i], records, cuts, general)
        steps = CHECK_EVERY
        inside = 0
        for i in range(n):
            node = node_[i]
            row = row_[i]
            at[row - start] = node
            node_[inside] = node
            row_[inside] = row
            inside += not _at_leaf(node, records, cuts, general)
        n = inside


@kernel
def _has_nan(X):
    """Whether ``X`` holds a NaN (the engine's steps skip the NaN rule where it does not)."""
    for row in range(X.shape[0]):  # no reshape: it compiles numba's shape-error formatting
        for value in X[row]:
            if value != value:
                return True
    return False


@kernel
def _has_nan_in(X, order, lo, hi):
    """Whether the rows ``X[order[lo:hi]]`` hold a NaN."""
    for i in range(lo, hi):
        for value in X[order[i]]:
            if value != value:
                return True
    return False


def block_rows(n_rows: int, depth: int = 0) -> int:
    """Rows per task (a chunk of :func:`~bandit_tree_tools._threads.run_chunks`):
    ``BLOCK`` (``DEEP_BLOCK`` when the deepest tree is deeper than
    ``LOCKSTEP_DEPTH``), or fewer so that a small batch still keeps every
    thread busy (a whole number of lane groups)."""
    threads = n_threads()
    share = (n_rows + threads - 1) // threads
    share = (share + LANES - 1) // LANES * LANES
    return max(LANES, min(DEEP_BLOCK if depth > LOCKSTEP_DEPTH else BLOCK, share))


def chunk_rows(n_trees: int, block: int) -> int:
    """Rows per thread's task for routing through ``n_trees`` in blocks of
    ``block`` rows (:func:`block_rows`, which already shares a small batch
    out over the threads): one block, or as many whole blocks as hold
    ``MIN_CHUNK_ROUTES`` row-tree routes, so that a batch too small for that
    runs in the calling thread (handing a task to another thread costs tens
    of microseconds)."""
    least = -(-MIN_CHUNK_ROUTES // max(1, n_trees))
    return max(block, -(-least // block) * block)


# The routing kernels below work on a range of rows ``[lo, hi)`` in blocks of ``rows``, release the
# GIL, and are run over chunks of the rows on threads by the plain functions after them
# (``_threads.run_chunks``: serial kernels compile two to three times faster than ``prange`` ones).


@kernel(nogil=True)
def _apply_rows(lo, hi, X, tree_root, tree_depth, tree_lockstep, records, cuts, general, leaf_id, rows, leaves):
    n_trees = tree_root.shape[0]
    for first in range(lo, hi, rows):
        stop = smaller(first + rows, hi)
        at = empty(LANES, np.int32)
        lanes = empty((2, LANES), np.int32)
        for tree in range(n_trees):
            for start in range(first, stop, LANES):
                count = smaller(LANES, stop - start)
                _route_lanes(
                    X,
                    start,
                    count,
                    tree_root[tree],
                    tree_depth[tree],
                    tree_lockstep[tree],
                    records,
                    cuts,
                    general,
                    at,
                    lanes,
                )
                for lane in range(count):
                    leaves[start + lane, tree] = leaf_id[at[lane]]


def _apply(X, tree_root, tree_depth, tree_lockstep, records, cuts, general, leaf_id, rows):
    """Leaf reached in every tree, as ``leaf_id[global id]`` (original local ids)."""
    leaves = np.empty((X.shape[0], tree_root.shape[0]), dtype=np.int64)
    run_chunks(
        _apply_rows,
        0,
        X.shape[0],
        chunk_rows(tree_root.shape[0], rows),
        X,
        tree_root,
        tree_depth,
        tree_lockstep,
        records,
        cuts,
        general,
        leaf_id,
        rows,
        leaves,
    )
    return leaves


@kernel(nogil=True)
def _apply_columns_rows(
    lo, hi, X, order, tree_root, tree_depth, tree_lockstep, records, cuts, general, leaf_id, out, rows
):
    n_trees = tree_root.shape[0]
    n_features = X.shape[1]
    for first in range(lo, hi, rows):
        in_block = smaller(rows, hi - first)
        X_block = empty((in_block, n_features), X.dtype)  # per block, as in _predict_raw_rows
        at = empty(LANES, np.int32)
        lanes = empty((2, LANES), np.int32)
        for i in range(in_block):
            source = order[first + i]
            for feature in range(n_features):  # element by element: no array-to-array copy, whose shape check
                X_block[i, feature] = X[source, feature]  # compiles numba's shape-error formatting
        for tree in range(n_trees):
            for start in range(0, in_block, LANES):
                count = smaller(LANES, in_block - start)
                _route_lanes(
                    X_block,
                    start,
                    count,
                    tree_root[tree],
                    tree_depth[tree],
                    tree_lockstep[tree],
                    records,
                    cuts,
                    general,
                    at,
                    lanes,
                )
                for lane in range(count):
                    out[tree, first + start + lane] = leaf_id[at[lane]]


def _apply_columns(X, order, lo, hi, tree_root, tree_depth, tree_lockstep, records, cuts, general, leaf_id, out, rows):
    """:func:`_apply` of the rows ``X[order[lo:hi]]``, written tree-major into
    ``out[:, lo:hi]`` (``out``'s integer type). Each block's rows are gathered
    from ``X`` first, so rows in a random order route as fast as rows in a row,
    and no row-major copy of the leaves is made."""
    run_chunks(
        _apply_columns_rows,
        lo,
        hi,
        chunk_rows(tree_root.shape[0], rows),
        X,
        order,
        tree_root,
        tree_depth,
        tree_lockstep,
        records,
        cuts,
        general,
        leaf_id,
        out,
        rows,
    )


@kernel(nogil=True)
def _predict_raw_rows(
    lo,
    hi,
    X,
    tree_root,
    tree_depth,
    tree_lockstep,
    records,
    cuts,
    general,
    leaf_value,
    leaf_value32,
    tree_output,
    base_score,
    average,
    accumulate_float32,
    rows,
    raw,
):
    n_trees = tree_root.shape[0]
    n_outputs = base_score.shape[0]
    width = leaf_value.shape[1]
    for first_row in range(lo, hi, rows):
        stop = smaller(first_row + rows, hi)
        # fresh buffers per block, as in a prange body: hoisted out of the loop, the float32
        # sums (XGBoost) ran a tenth slower
        at = empty(LANES, np.int32)
        lanes = empty((2, LANES), np.int32)
        acc = zeros((stop - first_row, n_outputs), np.float64)
        acc32 = zeros((stop - first_row, n_outputs), np.float32)
        if not average:
            for i in range(stop - first_row):
                for k in range(n_outputs):
                    acc[i, k] = base_score[k]
                    acc32[i, k] = np.float32(base_score[k])
        for tree in range(n_trees):
            first = tree_output[tree]
            for start in range(first_row, stop, LANES):
                count = smaller(LANES, stop - start)
                _route_lanes(
                    X,
                    start,
                    count,
                    tree_root[tree],
                    tree_depth[tree],
                    tree_lockstep[tree],
                    records,
                    cuts,
                    general,
                    at,
                    lanes,
                )
                offset = start - first_row
                if accumulate_float32:
                    for lane in range(count):
                        for j in range(width):
                            acc32[offset + lane, first + j] += leaf_value32[at[lane], j]
                else:
                    for lane in range(count):
                        for j in range(width):
                            acc[offset + lane, first + j] += leaf_value[at[lane], j]
        for row in range(first_row, stop):
            for k in range(n_outputs):
                total = np.float64(acc32[row - first_row, k]) if accumulate_float32 else acc[row - first_row, k]
                if average:
                    total = total / n_trees + base_score[k]
                raw[row, k] = total


def _predict_raw(
    X,
    tree_root,
    tree_depth,
    tree_lockstep,
    records,
    cuts,
    general,
    leaf_value,
    leaf_value32,
    tree_output,
    base_score,
    average,
    accumulate_float32,
    rows,
):
    """Raw scores: ``base_score`` plus each tree's ``leaf_value`` (``tree_scale
    * value``, computed once) added in tree order, the order the libraries use,
    so sums match bit for bit; ``average`` divides the tree sum by the number
    of trees before the base score is added. ``accumulate_float32`` sums
    ``leaf_value32`` with every partial sum rounded to float32, as XGBoost does."""
    raw = np.empty((X.shape[0], base_score.shape[0]), dtype=np.float64)
    run_chunks(
        _predict_raw_rows,
        0,
        X.shape[0],
        chunk_rows(tree_root.shape[0], rows),
        X,
        tree_root,
        tree_depth,
        tree_lockstep,
        records,
        cuts,
        general,
        leaf_value,
        leaf_value32,
        tree_output,
        base_score,
        bool(average),
        bool(accumulate_float32),
        rows,
        raw,
    )
    return raw


RAW_BLOCK = 1024  # rows of one block of _raw_from_leaves


@kernel(nogil=True)
def _raw_from_leaves_rows(
    lo,
    hi,
    leaves,
    tree_root,
    n_nodes,
    new_of_old,
    leaf_value,
    leaf_value32,
    tree_output,
    base_score,
    average,
    accumulate_float32,
    raw,
):
    n_trees = leaves.shape[1]
    n_outputs = base_score.shape[0]
    width = leaf_value.shape[1]
    outside = 0
    for first_row in range(lo, hi, RAW_BLOCK):
        count = smaller(RAW_BLOCK, hi - first_row)
        acc = zeros((n_outputs, count), np.float64)  # per block, as in _predict_raw_rows
        acc32 = zeros((n_outputs, count), np.float32)
        if not average:
            for k in range(n_outputs):
                acc[k, :] = base_score[k]
                acc32[k, :] = np.float32(base_score[k])
        for tree in range(n_trees):
            root, first, tree_nodes = tree_root[tree], tree_output[tree], n_nodes[tree]
            for i in range(count):
                leaf = leaves[first_row + i, tree]
                if leaf < 0 or leaf >= tree_nodes:
                    outside += 1
                    continue
                node = new_of_old[root + leaf]
                for j in range(width):
                    if accumulate_float32:
                        acc32[first + j, i] += leaf_value32[node, j]
                    else:
                        acc[first + j, i] += leaf_value[node, j]
        for i in range(count):
            for k in range(n_outputs):
                total = np.float64(acc32[k, i]) if accumulate_float32 else acc[k, i]
                if average:
                    total = total / n_trees + base_score[k]
                raw[first_row + i, k] = total
    return outside


def _raw_from_leaves(
    leaves,
    tree_root,
    n_nodes,
    new_of_old,
    leaf_value,
    leaf_value32,
    tree_output,
    base_score,
    average,
    accumulate_float32,
):
    """:func:`_predict_raw` from the leaves :func:`_apply` found (original local
    ids), with the same additions in the same order. Blocks of rows, tree
    after tree within a block, as there: a tree-major matrix seen through its
    transpose (:meth:`Ensemble._apply_columns`) is then read along its rows
    (row by row, every tree, it took 0.105 s against 0.080 s at 500,000 rows x
    100 trees). Returns ``(raw, outside)``: ``outside`` counts the entries of
    ``leaves`` that are not node ids of their tree (``[0, n_nodes[tree])``),
    left out of the sums; ``raw`` holds the scores only when ``outside`` is 0."""
    raw = np.empty((leaves.shape[0], base_score.shape[0]), dtype=np.float64)
    outside = run_chunks(
        _raw_from_leaves_rows,
        0,
        leaves.shape[0],
        chunk_size(leaves.shape[0], RAW_BLOCK),
        leaves,
        tree_root,
        n_nodes,
        new_of_old,
        leaf_value,
        leaf_value32,
        tree_output,
        base_score,
        bool(average),
        bool(accumulate_float32),
        raw,
    )
    return raw, sum(outside)


@kernel
def _walk(X, row, root, records, cuts, general, origin, out, position):
    """Write the original global ids on a row's path through one tree into
    ``out`` from ``position`` (when ``out`` is large enough); return the next position."""
    node = root
    while True:
        if position < out.shape[0]:
            out[position] = origin[node]
        position += 1
        if _at_leaf(node, records, cuts, general):
            return position
        node = _step(X, row, node, records, cuts, general)


@kernel(nogil=True)
def _path_lengths_rows(lo, hi, X, tree_root, records, cuts, general, origin, lengths):
    nowhere = empty(0, np.int64)
    for row in range(lo, hi):
        total = np.int64(0)  # not a literal 0: numba would compile _walk for it too
        for tree in range(tree_root.shape[0]):
            total = _walk(X, row, tree_root[tree], records, cuts, general, origin, nowhere, total)
        lengths[row] = total


def _path_lengths(X, tree_root, records, cuts, general, origin):
    lengths = np.zeros(X.shape[0], dtype=np.int64)
    run_chunks(
        _path_lengths_rows,
        0,
        X.shape[0],
        chunk_size(X.shape[0], LANES),
        X,
        tree_root,
        records,
        cuts,
        general,
        origin,
        lengths,
    )
    return lengths


@kernel(nogil=True)
def _fill_paths_rows(lo, hi, X, indptr, tree_root, records, cuts, general, origin, indices):
    for row in range(lo, hi):
        segment = indices[indptr[row] : indptr[row + 1]]
        position = np.int64(0)
        for tree in range(tree_root.shape[0]):
            position = _walk(X, row, tree_root[tree], records, cuts, general, origin, segment, position)


def _fill_paths(X, indptr, tree_root, records, cuts, general, origin):
    """Original global node ids on every row's paths (CSR column indices)."""
    n_rows = X.shape[0]
    indices = np.empty(indptr[n_rows], dtype=np.int64)
    run_chunks(
        _fill_paths_rows,
        0,
        n_rows,
        chunk_size(n_rows, LANES),
        X,
        indptr,
        tree_root,
        records,
        cuts,
        general,
        origin,
        indices,
    )
    return indices
