"""The search of :func:`bandit_tree_tools.prune`: the rows it works on,
the candidates of a step, their costs (exact or sampled by the bandit), the
step and the walk along the path (the method: this package's map, ``_engine/__init__.py``)."""

import copy
import time
from typing import NamedTuple

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ...exceptions import UnsupportedModelError
from ...tree import Ensemble, node_offsets, node_parent
from .._inputs import Target, callback_stops
from .._kernels import _preorder
from . import _kernels as kernels
from . import _weights as weights
from ._metrics import _row_terms, metric_value, paired_standard_error, within
from ._state import _State, _trees_per_iteration

STEP_FRACTION = 0.10  # share of the current leaves one step removes
PATIENCE = 3  # the walk ends after this many models in a row far outside the tolerance:
FAR = 4.0  # worse than the unpruned model by FAR times the tolerance
REG_LAMBDA = 1.0  # L2 penalty of collapsed and re-fitted leaf values (XGBoost's default)
REFIT_STEP = 0.1  # damping of the backfitting pass after every step (a boosting learning rate)
PESSIMISM = 1.0  # candidates rank by cost + PESSIMISM * sqrt(sum of squared changes), per leaf
FIRST_BATCH = 2_000  # ranking rows of the bandit's first batch (at least; then doubling)
# fewer ranking rows than this are scored exactly: at 40,000 the bandit's samples often ran out of
# rows before its choice was clear, and a fully grown forest's deep nodes, which few sampled rows
# reach, looked free (docs/expect/notes/pruning.md)
SAMPLED_FROM = 100_000
# each of the bandit's batches reads every candidate and sorts them, as an exact step does once: sampling
# pays only where an exact step's work on the rows (rows x live trees) outnumbers the candidates this many
# times over: 100,000 rows beside a boosted model's tens of candidates per tree, not a forest's thousands
# (docs/expect/notes/pruning.md)
ROWS_PER_CANDIDATE = 1_000
DECISION_ACCURACY = 0.002  # the bandit stops sampling when its choice's cost is known to 0.2% of the model's loss
MAX_STEPS = 1_000
# a step's greedy pass sorts first its budget of candidates (plus 1,000), then four times that, then all
SORTED_PREFIXES = (1, 4)
PERTURBED_SHARE = 0.2  # share of a perturbed training row's features taken from another training row


class _RowSet:
    """Rows of one role (ranking or checking), the same for every walk: the
    rows ``order`` of ``X``, their target (``soft``: the unpruned model's
    outputs, see :func:`model_target`) and their original leaf per tree
    (the narrowest of int8, int16 and int32 that holds every node id, see
    :func:`leaf_dtype`: (n_trees, n_rows), tree-major for the kernels; -1
    where a forest's tree drew the row, when the rows rank out of bag).

    The leaves are routed on first use, the first rows first (:meth:`leaves`):
    the bandit reads only the first of the ranking rows, so on a large set
    most of them are never routed. Narrow ids cut the memory the kernels
    read per row, which bounds the checks after every step. Arithmetic on
    them in numpy keeps their type: widen them before adding offsets."""

    def __init__(self, ensemble, X, order, target, *, soft=False, out_of_bag_leaves=None):
        # out_of_bag_leaves: the rows' leaves, already routed, with -1 where a tree drew the row
        self.ensemble, self.X, self.order, self.soft = ensemble, X, order, soft
        self.n = order.shape[0]
        self.target = _target_rows(target, order)
        self.out_of_bag = out_of_bag_leaves is not None
        if self.out_of_bag:
            if not out_of_bag_leaves.flags.c_contiguous:
                raise ValueError("out_of_bag_leaves must be C-contiguous: the kernels walk them row by row")
            self._leaf, self.routed = out_of_bag_leaves, self.n
        else:
            self._leaf, self.routed = np.empty((ensemble.n_trees, self.n), dtype=leaf_dtype(ensemble)), 0

    def leaves(self, upto=None) -> np.ndarray:
        """The leaf matrix, routed for (at least) its first ``upto`` rows (all by default)."""
        upto = self.n if upto is None else upto
        if self.routed < upto:
            self.ensemble._apply_columns(self.X, self.order, self._leaf, self.routed, upto)
            self.routed = upto
        return self._leaf

    def subset(self, positions) -> "_RowSet":
        """The rows at ``positions`` of this set, in that order, as a set of
        their own, with their leaves copied from this set's (routed now where
        not yet): a row is routed once, however many sets hold it."""
        part = copy.copy(self)
        part.order, part.n = self.order[positions], positions.shape[0]
        part.target = _target_rows(self.target, positions)
        part._leaf, part.routed = np.ascontiguousarray(self.leaves()[:, positions]), part.n
        return part

    def predict_raw(self) -> np.ndarray:
        """The unpruned model's ``predict_raw`` of the rows, in their order, bit
        for bit, from their leaves (the rows not yet routed are routed now)."""
        return self.ensemble._raw_from_leaves(self.leaves().T)


def _target_rows(target: Target, rows) -> Target:
    """``target`` of the rows ``rows``; a regression target's variance (R^2's
    scale) is theirs."""
    values = target.values[rows]
    variance = (float(np.var(values)) or 1.0) if target.n_classes == 0 else 1.0
    return Target(target.codes[rows], values, target.n_classes, target.positive, variance)


def _stable_order_prefixes(key, lengths):
    """``np.argsort(key, kind="stable")``, first cut to its first ``k + 1``
    positions for each ``k`` of ``lengths`` (increasing), then whole. A
    prefix is the full order's start bit for bit: the keys below the
    ``k``-th smallest in their stable order, then the keys equal to it in
    the order of their positions, as many as make ``k + 1`` (NaN keys sort
    last, as in the full order). A step needs only the best candidates, and
    a forest can start with a million of them, many of them tied (every
    node no ranking row reaches costs 0); a longer prefix comes only if the
    shorter ones ran out."""
    done = 0  # positions the prefixes so far held
    for k in lengths:
        if k < done:
            continue
        if k >= key.shape[0]:
            break
        threshold = _kth_smallest(key, k)
        if np.isnan(threshold):
            break
        below = np.flatnonzero(key < threshold)
        tied = np.flatnonzero(key == threshold)[: k + 1 - below.shape[0]]
        done = k + 1
        yield np.concatenate([below[np.argsort(key[below], kind="stable")], tied])
    yield np.argsort(key, kind="stable")


def _kth_smallest(key, k, stride=64):
    """``np.partition(key, k)[k]``. Tried first: the key at the same share
    of the way through every ``stride``-th key, sorted. It is the answer
    when a large class of tied keys holds rank ``k`` (the 0 of every node no
    ranking row reaches), where ``np.partition`` runs five times slower,
    and whether it is takes two counts."""
    sample = key[::stride]
    rank = k * sample.shape[0] // key.shape[0]
    guess = np.partition(sample, rank)[rank]
    if np.count_nonzero(key < guess) <= k < np.count_nonzero(key <= guess):
        return guess
    return np.partition(key, k)[k]


def leaf_dtype(ensemble: Ensemble):
    """The narrowest type :class:`_RowSet` stores the model's leaf ids in: one
    that holds every node id, the bound ``Ensemble._apply_columns`` checks."""
    largest_id = max(tree.n_nodes for tree in ensemble.trees) - 1
    return next(dtype for dtype in (np.int8, np.int16, np.int32) if largest_id <= np.iinfo(dtype).max)


def raw_through_leaves(ensemble: Ensemble, X, order=None, leaf_type=None) -> np.ndarray:
    """``ensemble.predict_raw(X[order])`` (``X`` as ``check_X`` returns it; every
    row by default), bit for bit, through the kernels the search routes its rows
    with (``Ensemble._apply_columns``, then ``_raw_from_leaves``) into leaf ids of
    ``leaf_type`` (:func:`leaf_dtype` of the model by default): ``predict_raw``'s
    own kernel would be one more to compile on the first call of ``prune``."""
    order = np.arange(X.shape[0], dtype=np.int64) if order is None else order
    leaves = np.empty((ensemble.n_trees, order.shape[0]), dtype=leaf_type or leaf_dtype(ensemble))
    ensemble._apply_columns(X, order, leaves)
    return ensemble._raw_from_leaves(leaves.T)


def ranking_rows(ensemble, X_fit, fit_target, rng, soft=False) -> _RowSet:
    """Training rows (or rows made from them) that rank, in one fixed random
    order, so that the bandit's samples are contiguous batches (random access
    to the leaf matrix cost 4x the time per row)."""
    return _RowSet(ensemble, X_fit, rng.permutation(X_fit.shape[0]), fit_target, soft=soft)


def out_of_bag_rows(ensemble, training: _RowSet, fit_target, rng) -> _RowSet | None:
    """The training rows of ``training`` (all of them, as ``ranking_rows``
    stores them), in a new random order, with -1 where a tree drew the row
    into its bootstrap sample, for a bootstrapped scikit-learn forest whose
    training rows these are; None otherwise.

    A forest's trees fit the rows they drew to their last row, so those rows
    cannot tell which of its nodes generalise; each tree is ranked on the
    rows it did not draw. The draws are redrawn from the forest's seeds and
    trusted only when they reproduce every leaf's recorded cover (a
    ``class_weight`` weighs them as scikit-learn does): other rows, another
    order or sample weights give None."""
    from ...interop.sklearn import forest_in_bag

    labels = np.asarray(ensemble.classes_)[fit_target.codes] if fit_target.n_classes else None
    readings = forest_in_bag(ensemble, training.n, labels)  # none for other models: their rows stay unrouted
    counts = next(
        (
            drawn
            for drawn, carried in readings
            if _reproduces_covers(ensemble, training.leaves(), carried[:, training.order])
        ),
        None,
    )
    if counts is None:
        return None
    order = rng.permutation(training.n)
    position = np.empty(training.n, dtype=np.int64)
    position[training.order] = np.arange(training.n)
    # C order (leaf[:, ...] is Fortran order: slow kernels)
    out_of_bag = np.take(training.leaves(), position[order], axis=1)
    out_of_bag[counts[:, order] > 0] = -1
    return _RowSet(ensemble, training.X, order, fit_target, out_of_bag_leaves=out_of_bag)


def _reproduces_covers(ensemble, leaf, weights) -> bool:
    """Whether rows with the leaves ``leaf`` and per-tree ``weights`` (both
    (n_trees, n_rows)) sum to every leaf's recorded cover."""
    for index, tree in enumerate(ensemble.trees):
        leaves = tree.children_left == -1
        cover = np.bincount(leaf[index], weights=weights[index], minlength=tree.n_nodes)
        if not np.allclose(cover[leaves], np.asarray(tree.weighted_n_node_samples)[leaves], rtol=0.0, atol=1e-6):
            return False
    return True


def perturbed_rows(X, rng) -> np.ndarray:
    """A copy of the training rows ``X`` in which every value is, with
    probability ``PERTURBED_SHARE``, that feature's value in another random
    training row (each feature keeps its values; ``X`` is not modified).

    A boosted model fits its training rows to the last row, so its outputs
    there are as sure as the labels; off them, on rows of the same kind, it
    outputs what it has learned. (Rows made this way label a model's
    behaviour for compression in Bucila, Caruana and Niculescu-Mizil,
    "Model compression", KDD 2006.)"""
    out = X.copy()
    swap = rng.random(X.shape) < PERTURBED_SHARE
    donor = X[rng.integers(0, X.shape[0], X.shape[0])]
    out[swap] = donor[swap]
    return out


def model_target(ensemble: Ensemble, X) -> Target:
    """The unpruned model's outputs on ``X`` as the target of a walk that
    ranks and re-fits towards the model itself: the probability of the
    positive class (binary classifiers), every class's probability (n_rows,
    n_classes: the softmax, or one sigmoid per class), or the predicted value
    (regressors). Class code -1 marks these soft labels for the kernels."""
    prediction = ensemble.transform_raw(raw_through_leaves(ensemble, X))
    n = X.shape[0]
    codes = np.full(n, -1, dtype=np.int64)
    if ensemble.task == "regression":
        values = prediction[:, 0].astype(np.float64)
        return Target(codes, values, 0, -1, float(np.var(values)) or 1.0)
    if ensemble.n_outputs == 1:
        return Target(codes, prediction[:, -1].astype(np.float64), 2, 1, 1.0)
    return Target(codes, np.ascontiguousarray(prediction, dtype=np.float64), ensemble.n_outputs, -1, 1.0)


class _Rows:
    """A walk's view of a row set: its leaves and target, and the raw scores
    of the walk's current model."""

    def __init__(self, rows: _RowSet):
        self.rows, self.n = rows, rows.n
        self.target, self.out_of_bag, self.soft = rows.target, rows.out_of_bag, rows.soft
        self.ones = np.ones(self.n)
        self.raw = None  # raw scores of the current model, valid for the first ``ready`` rows
        self.changed()

    def changed(self) -> None:
        """The model changed: its raw scores and live trees are out of date."""
        self.ready = 0
        self._holding = self._scale = None

    def leaves(self, upto=None) -> np.ndarray:
        """The rows' leaf matrix, routed for its first ``upto`` rows (all by default)."""
        return self.rows.leaves(upto)

    def holding(self, alive) -> np.ndarray:
        """Per row: how many live trees hold it (every live tree, unless the
        rows rank out of bag)."""
        if self._holding is None:
            if self.out_of_bag:
                self._holding = kernels.live_trees_per_row(self.leaves(), alive)
            else:
                self._holding = np.full(self.n, float(np.count_nonzero(alive)))
        return self._holding

    def row_scale(self, alive) -> np.ndarray:
        """Per row, what turns a forest's mean over its live trees into the
        mean over the live trees that hold the row (see ``kernels.raw_scores``)."""
        if not self.out_of_bag:
            return self.ones
        if self._scale is None:
            holding = self.holding(alive)
            with np.errstate(divide="ignore"):
                self._scale = np.where(holding > 0, np.count_nonzero(alive) / holding, 0.0)
        return self._scale

    def head(self, n) -> Target:
        """The target of the first ``n`` rows."""
        t = self.target
        return Target(t.codes[:n], t.values[:n], t.n_classes, t.positive, t.variance)


class NodeLayout(NamedTuple):
    """A model's nodes as the search reads them, global ids tree after tree
    (:func:`node_layout`). Every walk of one ``prune`` shares one layout
    and only reads it: on a forest of 2.4 million nodes, building it took
    half a second a walk."""

    offset: np.ndarray  # first node of every tree, then the number of nodes
    tree_of: np.ndarray  # tree of every node
    children_left: np.ndarray  # local ids, as in the trees
    children_right: np.ndarray
    is_root: np.ndarray
    parent: np.ndarray  # local id of every node's parent, -1 at the root
    preorder_nodes: np.ndarray  # global ids in pre-order, tree after tree
    subtree_span: np.ndarray  # [start, stop) of every node's subtree in preorder_nodes
    leaf_count: np.ndarray  # leaves below every node
    stored_value: np.ndarray  # float64 (n_nodes, width): the values the model stores
    has_value: np.ndarray  # the node stores a value a collapse can take
    cover: np.ndarray | None  # the covers the library recorded, None where some are missing


def node_layout(ensemble: Ensemble) -> NodeLayout:
    """The :class:`NodeLayout` of ``ensemble``'s trees."""
    trees = ensemble.trees
    offset = node_offsets(trees)
    is_root = np.zeros(offset[-1], dtype=bool)
    is_root[offset[:-1]] = True
    parents, order, end = [], [], []
    for root, tree in zip(offset, trees):
        parents.append(node_parent(tree))
        position, stop = _preorder(tree.children_left, tree.children_right)
        by_position = np.empty(tree.n_nodes, dtype=np.int64)
        by_position[position] = np.arange(tree.n_nodes)
        order.append(root + by_position)
        end.append(np.stack([root + position, root + stop], axis=1))
    children_left = np.concatenate([tree.children_left for tree in trees])
    preorder_nodes, subtree_span = np.concatenate(order), np.concatenate(end)
    leaves_before = np.concatenate([[0], np.cumsum(children_left[preorder_nodes] == -1)])  # in pre-order
    cover = np.concatenate([tree.weighted_n_node_samples for tree in trees]).astype(np.float64)
    # collapsed values weight the leaves by the model's own covers where it recorded them,
    # else by hessians summed over the fitting rows; a one-leaf tree needs none (it can only
    # go whole), and LightGBM records none for the one-leaf trees of a class it stopped growing
    needs_cover = np.repeat([tree.n_nodes > 1 for tree in trees], np.diff(offset))
    known = np.isfinite(cover) & (cover >= 0)
    return NodeLayout(
        offset=offset,
        tree_of=np.repeat(np.arange(len(trees)), np.diff(offset)),
        children_left=children_left,
        children_right=np.concatenate([tree.children_right for tree in trees]),
        is_root=is_root,
        parent=np.concatenate(parents),
        preorder_nodes=preorder_nodes,
        subtree_span=subtree_span,
        leaf_count=leaves_before[subtree_span[:, 1]] - leaves_before[subtree_span[:, 0]],
        stored_value=np.concatenate([tree.value for tree in trees]).astype(np.float64),
        has_value=np.concatenate([tree.has_leaf_value for tree in trees]).astype(bool),
        cover=cover if np.all(known | ~needs_cover) else None,
    )


class _Search:
    def __init__(
        self,
        ensemble,
        ranking,
        checking,
        may_refit,
        metric,
        search,
        confidence,
        refit,
        whole_trees=False,
        fraction_squares=False,
        layout=None,
    ):
        """``ranking``, ``checking``, ``may_refit``: a walk's rows, as
        ``_prune._rankings`` makes them (whether the ranking rows may re-fit
        the leaves: not labelled validation rows);
        ``whole_trees``: the candidates are whole trees only (no node collapses);
        ``fraction_squares``: trees of class fractions rank by the squared
        error of the true class's fraction instead of the log-loss;
        ``layout``: the model's :func:`node_layout`, built here if not given."""
        self.ensemble, self.metric, self.search, self.confidence = ensemble, metric, search, confidence
        self.whole_trees = whole_trees
        layout = node_layout(ensemble) if layout is None else layout
        self.n_trees = layout.offset.shape[0] - 1
        self.offset, self.tree_of, self.is_root = layout.offset, layout.tree_of, layout.is_root
        self.children_left, self.children_right, self.parent = (
            layout.children_left,
            layout.children_right,
            layout.parent,
        )
        self.preorder_nodes, self.subtree_span = layout.preorder_nodes, layout.subtree_span
        self.leaf_count = layout.leaf_count
        self.stored_value, self.has_value, self.cover = layout.stored_value, layout.has_value, layout.cover

        self.loss_kind = _loss_kind(ensemble)
        if fraction_squares and self.loss_kind == kernels.FRACTIONS:
            self.loss_kind = kernels.FRACTION_SQUARES
        self.averaged = ensemble.aggregation == "mean"
        self.newton = refittable(ensemble)
        self.refit = refit and self.newton and may_refit
        if self.averaged and np.any(ensemble.tree_scale != 1.0):
            raise UnsupportedModelError("prune supports averaged ensembles (forests) whose trees all have weight 1")
        self.rank = self.fit = _Rows(ranking)
        self.check = _Rows(checking)
        self.n_rank = self.rank.n
        self.row_evaluations = 0
        self.scoring_seconds = 0.0  # choosing the steps: what the bandit saves over the exact search
        # the working state
        self.collapsed = np.zeros(self.offset[-1], dtype=bool)
        self.current = np.arange(self.offset[-1], dtype=np.int64)
        self.alive = np.ones(self.n_trees, dtype=bool)
        # a collapse takes Newton values; other trees keep their stored ones, which every walk shares
        self.value = self.stored_value.copy() if self.newton else self.stored_value
        self.base_score = ensemble.base_score.astype(np.float64).copy()
        self.tree_output = ensemble.tree_output
        # a writable copy: numba compiles a kernel once more for each read-only argument
        self.tree_scale = np.array(ensemble.tree_scale, dtype=np.float64)
        self.n_outputs = ensemble.n_outputs
        self.per_iteration = _trees_per_iteration(ensemble)
        self._shape = None  # of _leaf_counts_and_internal, for this state and the steps from it
        # buffers kept for the walk, filled or updated in place: fresh ones per step cost a page fault per 4 KB
        self._table = np.empty((self.value.shape[1], self.offset[-1]))  # of _value_table
        self._table_ready = False
        # collapse_costs' sums per current leaf, and per class for the fractions' squared error
        scratch = self.offset[-1]
        if self.loss_kind == kernels.FRACTION_SQUARES:
            scratch *= self.value.shape[1]
        elif self.loss_kind == kernels.FRACTIONS:
            scratch = 0  # their log-loss walks row by row
        self._moment, self._held = np.zeros((scratch, 5)), np.zeros(scratch, dtype=np.int64)
        n_nodes = self.offset[-1]
        self._costs = kernels.Costs(np.zeros(n_nodes), np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64))

    # --------------------------------------------------------------- scores
    def factor(self) -> np.ndarray:
        if self.averaged:
            return self.tree_scale / max(int(np.count_nonzero(self.alive)), 1)
        return self.tree_scale

    def _value_table(self) -> np.ndarray:
        """Every node's current value, one row per output column
        (``table[j, node] = value[current[node], j]``), as ``kernels.raw_scores``
        and ``kernels.removal_costs`` read it. Filled for the state a walk
        starts from and after every re-fit; a step updates it in place
        (``kernels.collapse_into``)."""
        if not self._table_ready:
            for j in range(self._table.shape[0]):
                # "clip" (no id is out of range) writes into the buffer; "raise" fills a temporary first
                np.take(self.value[:, j], self.current, out=self._table[j], mode="clip")
            self._table_ready = True
        return self._table

    def _raw(self, rows, lo, hi):
        return kernels.raw_scores(
            rows.leaves(hi),
            lo,
            hi,
            self.offset,
            self._value_table(),
            self.tree_output,
            self.factor(),
            self.alive,
            self.base_score,
            rows.row_scale(self.alive),
        )

    def _changed(self, table_kept=False):
        """The model changed: every raw score is out of date, and so is the
        value table unless ``table_kept`` (a step updated it in place)."""
        for rows in (self.check, self.rank, self.fit):
            rows.changed()
        if not table_kept:
            self._table_ready = False

    def _leaf_counts_and_internal(self):
        """(leaves below every node, the live trees' internal nodes) of the
        model as pruned so far: the step's candidates and the path's sizes
        both read them. A walk starts from a state with nothing collapsed,
        whose counts are the trees' own; every step updates them in place
        (:meth:`apply`, the one writer). Nodes below a collapsed node and the
        nodes of removed trees keep meaningless counts and are not internal."""
        if self._shape is None:
            internal = (self.children_left >= 0) & self.alive[self.tree_of]
            self._shape = self.leaf_count.copy(), internal
        return self._shape

    def _scored(self, rows, upto=None) -> np.ndarray:
        """``rows.raw``, brought up to date for its first ``upto`` rows (all by
        default). Computed on first use after a change: the bandit reads only
        the ranking rows it samples, which come first in their stored order."""
        n = rows.n
        upto = n if upto is None else upto
        if rows.raw is None:
            rows.raw = np.empty((n, self.n_outputs))
        if rows.ready < upto:
            rows.raw[rows.ready : upto] = self._raw(rows, rows.ready, upto)
            rows.ready = upto
        return rows.raw

    def metric_value(self) -> float:
        return metric_value(self.metric, self.ensemble, self._scored(self.check), self.check.target)

    # ----------------------------------------------------------------- size
    def size(self) -> dict:
        counts, internal = self._leaf_counts_and_internal()
        roots = self.offset[:-1]
        alive = self.alive
        stumps = 0
        if not self.averaged and self.per_iteration > 1:
            # dead trees of a partly live iteration stay as one-leaf trees
            groups = alive.reshape(-1, self.per_iteration)
            partly = groups.any(axis=1)
            stumps = int(np.count_nonzero(~groups[partly]))
        n_trees = int(np.count_nonzero(alive)) + stumps
        leaves = int(counts[roots[alive]].sum()) + stumps
        return {"leaves": leaves, "trees": n_trees, "nodes": leaves + int(np.count_nonzero(internal))}

    # ----------------------------------------------------------- candidates
    def candidate_values(self) -> np.ndarray:
        """The value each node would take if collapsed now."""
        if not self.newton:
            return self.stored_value
        if self.cover is not None:
            values = kernels.cover_weighted_values(
                self.children_left, self.children_right, self.offset, self.collapsed, self.cover, self.value
            )
            return np.where(np.isnan(values), self.value, values)
        fit = self.fit.target
        grad, hess = kernels.gradients(
            self._scored(self.fit), fit.codes, _columns(fit.values), self.loss_kind, float(self.ensemble.link_scale)
        )
        factor = self.factor()
        numerator, hessian = kernels.newton_sums(
            self.fit.leaves(),
            self.offset,
            self.parent,
            self.current,
            self.value,
            self.tree_output,
            factor,
            self.alive,
            grad,
            hess,
        )
        values = self.value.copy()
        internal = self._leaf_counts_and_internal()[1]
        values[internal, 0] = numerator[internal] / (hessian[internal] + REG_LAMBDA) / factor[self.tree_of[internal]]
        return values

    def costs(self, rows, candidate_value, count=True):
        """Loss change on ``rows`` (of the ranking rows) per candidate: sum,
        sum of squares, rows reached (None unless ``count``); in arrays the
        next call overwrites (at the candidates: read nothing else from them)."""
        on = self.rank
        t = on.target
        self.row_evaluations += rows.shape[0] * int(np.count_nonzero(self.alive))
        upto = int(rows.max()) + 1 if rows.size else 0
        leaf = on.leaves(upto)
        raw = self._scored(on, upto)
        if self.loss_kind in (kernels.LOGISTIC, kernels.SOFTMAX, kernels.POISSON):
            grad, hess = kernels.gradients(
                raw[rows], t.codes[rows], _columns(t.values[rows]), self.loss_kind, float(self.ensemble.link_scale)
            )
        else:
            grad = hess = np.zeros((0, self.n_outputs))
        model = kernels.PrunedModel(
            self.offset,
            self.parent,
            self.current,
            self.value,
            self.tree_output,
            self.factor(),
            self.alive,
            self._leaf_counts_and_internal()[1],
        )
        ranked = kernels.RankRows(
            leaf, on.row_scale(self.alive), raw, t.codes, _columns(t.values), self.loss_kind, grad, hess
        )
        change, square, reached = kernels.collapse_costs(
            rows, model, candidate_value, ranked, self._moment, self._held, self._costs, count
        )
        roots = self.offset[:-1]
        if self.averaged:  # a root stands for dropping its tree from the mean
            # the sum of the live trees' values per row, from the scores already computed: a
            # forest's score is the base score plus that sum over the live trees holding the row
            holding = on.holding(self.alive)
            tree_sum = (raw[:upto] - self.base_score) * holding[:upto, None]
            change[roots], square[roots] = kernels.removal_costs(
                rows,
                leaf,
                self.offset,
                self._value_table(),
                self.tree_output,
                self.alive,
                holding,
                tree_sum,
                self.ensemble.base_score,
                t.codes,
                _columns(t.values),
                self.loss_kind,
            )
        # a live root has reached every row its tree holds
        return change, square, reached if count else None

    def candidates(self):
        """Ids of the current candidates and the leaves each would remove.

        Internal nodes collapse into leaves. A root stands for the whole tree:
        summed trees fold their constant into the intercept (at export, into
        a kept tree's leaves), averaged trees leave the mean; the last live
        tree stays (its root can still collapse into a single leaf when the
        trees are summed)."""
        counts, internal = self._leaf_counts_and_internal()
        mask = np.zeros_like(internal) if self.whole_trees else internal.copy()
        if not self.newton:
            mask &= self.has_value
        n_alive = int(np.count_nonzero(self.alive))
        roots = self.offset[:-1]
        if self.averaged:
            mask[roots] = self.alive & (n_alive > 1)
        elif n_alive > 1:
            mask[roots] = self.alive  # one-leaf trees too: their value moves into the intercept
        ids = np.flatnonzero(mask)
        benefit = counts[ids] - 1
        if n_alive > 1:
            benefit[self.is_root[ids]] += 1  # the whole tree goes
        return ids, benefit.astype(np.float64)

    def select(self, ids, benefit, cost, budget) -> np.ndarray:
        """Greedy: the best cost per leaf first, skipping overlaps, until ``budget`` leaves are gone."""
        key = cost / np.maximum(benefit, 1.0)
        n_alive = int(np.count_nonzero(self.alive))
        # the greedy pass rarely reads past the first few times ``budget`` candidates: sort those
        # first (prefixes of the full stable order), and all of them only if the prefixes run out
        lengths = [factor * int(np.ceil(budget)) + 1_000 for factor in SORTED_PREFIXES]
        for order in _stable_order_prefixes(key, lengths):
            chosen, reached = kernels.select_disjoint(
                order,
                ids,
                benefit,
                self.is_root,
                self.subtree_span,
                self.preorder_nodes,
                self.parent,
                self.offset,
                self.tree_of,
                n_alive,
                float(budget),
            )
            if reached or order.shape[0] == key.shape[0]:
                return chosen

    def choose_step(self, budget):
        """The step's removals, from the costs of the candidates summed over
        the ranking rows in batches (:func:`_batches`): where sampling pays
        (:meth:`_samples_pay`), the bandit's growing samples and then the
        rows left, else all rows at once. The bandit stops at the first
        sample that makes its choice clear (:meth:`_sampled_choice`); the
        exact search, and a bandit whose rows ran out first, take the sums
        over every batch, so with a full budget the two walk the same path
        bit for bit, each reading every row once."""
        ids, benefit = self.candidates()
        if ids.size == 0:
            return [], None
        candidate_value = self.candidate_values()
        n = self.n_rank
        batches = _batches(n) if self._samples_pay(ids) else [(0, n)]
        sampling = self.search == "bandit" and len(batches) > 1
        total = square = reached = allowed = None
        for start, stop in batches:
            counting = sampling and stop < n
            change, change_square, hits = self.costs(np.arange(start, stop), candidate_value, count=counting)
            if total is None:  # the costs' arrays are overwritten by their next call: copied unless there is none
                total, square = (change, change_square) if stop == n else (change.copy(), change_square.copy())
                reached = hits.copy() if counting else None
                if counting:  # the stopping rule's scale, from the first sample
                    allowed = DECISION_ACCURACY * n * self.rank_loss(stop)
            else:
                total += change
                square += change_square
                if counting:
                    reached += hits
            if counting:
                chosen = self._sampled_choice(ids, benefit, budget, stop, total, square, reached, allowed)
                if chosen is not None:
                    return chosen, candidate_value
        return self.select(ids, benefit, _pessimistic(total[ids], square[ids]), budget), candidate_value

    def _samples_pay(self, ids) -> bool:
        """Whether a step with candidates ``ids`` may choose from samples: from
        ``SAMPLED_FROM`` ranking rows up, where the rows times the live trees
        are at least ``ROWS_PER_CANDIDATE`` times the candidates."""
        n = self.n_rank
        return n >= SAMPLED_FROM and n * int(np.count_nonzero(self.alive)) >= ROWS_PER_CANDIDATE * ids.size

    def _sampled_choice(self, ids, benefit, budget, sampled, total, square, reached, allowed):
        """The step's removals from the costs' sums over the first ``sampled``
        ranking rows (stored in random order: a sample of them); None while
        the choice is not clear.

        Each candidate's cost over all ``n`` rows is estimated from those
        rows with a confidence interval (``confidence`` standard errors,
        finite-population correction). The choice is clear when the chosen
        candidates' intervals, added in quadrature, are at most ``allowed``
        (``DECISION_ACCURACY`` of the model's loss on the ranking rows): then
        the chosen set costs what its estimate says, up to that."""
        n = self.n_rank
        # one pseudo-row of typical size, so that candidates few sampled rows reached stay uncertain
        seen = reached[ids] > 0
        typical = float(np.median(square[ids][seen] / reached[ids][seen])) if seen.any() else 0.0
        mean = total[ids] / sampled
        second = (square[ids] + typical) / sampled
        variance = np.maximum(second - mean * mean, 0.0)
        with np.errstate(invalid="ignore"):
            radius = n * self.confidence * np.sqrt(variance / sampled * (n - sampled) / (n - 1))
        estimate = _pessimistic(n * mean, n * square[ids] / sampled)
        # a candidate no sampled row reached has shown no cost yet, which is not a cost of 0: it
        # goes last (most deep nodes of a fully grown forest hold a few rows, which samples miss)
        estimate[~seen] = np.inf
        chosen = self.select(ids, benefit, estimate, budget)
        if chosen.size and np.sqrt(np.nansum(radius[np.searchsorted(ids, chosen)] ** 2)) <= allowed:
            return chosen
        return None

    # ------------------------------------------------------ re-weighted start
    def route_start_rows(self) -> None:
        """Route the rows :meth:`reweighted_start` reads, from this thread: a
        :class:`_RowSet` routes its rows on first use, and ``prune`` fits the
        start on a thread of its own while another walk reads the same sets."""
        self.fit.leaves(min(self.fit.n, weights.MAX_FIT_ROWS))
        self.check.leaves()

    def reweighted_start(self, bound, progress=False, label="the trees' weights", stop=None):
        """The sparsest tree weights of the L1 path whose checking metric is
        within ``bound``, as a state to start a walk from; None when no point
        of the path leaves a tree out within it (``progress``: a bar over
        the path's points, with ``label``), or when the event ``stop`` is set
        (read between the path's points). The start is a point of the walk
        like any other: the final choice holds its margin, so the start is
        not held to it twice."""
        link = float(self.ensemble.link_scale)  # the fit works on the sigmoid's own scale
        trees = np.flatnonzero(self.alive)
        fit = self.fit
        n = min(fit.n, weights.MAX_FIT_ROWS)  # stored in random order: the first n are a sample
        outputs = weights.tree_outputs(
            fit.leaves(n), self.offset, self.current, self.value, self.factor() * link, trees, n
        )
        y = (fit.target.values if fit.soft else fit.target.codes)[:n].astype(np.float64)
        self.row_evaluations += n * trees.size  # the outputs the fit reads (checks count nowhere, as in run)
        tried = 0
        with tqdm(desc=label, total=weights.PATH_LENGTH, unit="fit", disable=not progress, leave=False) as bar:
            for weight, intercept in weights.l1_path(outputs, y, logistic=True):
                if stop is not None and stop.is_set():
                    return None
                bar.update(1)
                kept = int(np.count_nonzero(weight))
                if kept == trees.size:
                    return None  # every tree back: nothing left out within the bound
                if kept in (0, tried):
                    continue
                tried = kept
                alive = self.alive.copy()
                alive[trees] = weight != 0.0
                factor = self.factor().copy()
                factor[trees] *= weight
                base_score = np.array([intercept / link])
                raw = kernels.raw_scores(
                    self.check.leaves(),
                    0,
                    self.check.n,
                    self.offset,
                    self._value_table(),
                    self.tree_output,
                    factor,
                    alive,
                    base_score,
                    self.check.ones,
                )
                if within(self.metric, metric_value(self.metric, self.ensemble, raw, self.check.target), bound):
                    value = self.value.copy()
                    for tree, scale in zip(trees, weight):
                        value[self.offset[tree] : self.offset[tree + 1]] *= scale
                    return _State.of(self.collapsed, alive, value, base_score)
        return None

    def start_from(self, state: _State) -> None:
        """Take the trees, values and intercept of ``state`` (nothing collapsed)."""
        if state.collapsed_bits.any() or self.collapsed.any():
            raise ValueError("a walk starts from a state with nothing collapsed, before its first step")
        self.alive = state.alive.copy()
        self.value, self.base_score = state.value.copy(), state.base_score.copy()
        self._shape = None
        self._changed()

    # ----------------------------------------------------------------- step
    def apply(self, chosen, candidate_value) -> None:
        factor = self.factor()
        count, internal = self._leaf_counts_and_internal()  # updated in place, as is the value table
        table = self._value_table()
        collapsing = []
        for node in chosen:
            tree = self.tree_of[node]
            if self.is_root[node] and (self.averaged or np.count_nonzero(self.alive) > 1):
                if not self.averaged:  # the tree's constant moves into the intercept
                    self.base_score[self.tree_output[tree]] += factor[tree] * candidate_value[node, 0]
                self.alive[tree] = False
                internal[self.offset[tree] : self.offset[tree + 1]] = False
            else:
                collapsing.append(node)
        collapsing = np.array(collapsing, dtype=np.int64)
        candidate_value = np.asarray(candidate_value, dtype=np.float64)
        kernels.collapse_into(
            collapsing,
            self.subtree_span,
            self.preorder_nodes,
            self.parent,
            self.offset,
            self.tree_of,
            self.current,
            self.collapsed,
            candidate_value,
            count,
            internal,
            table,
        )
        if self.newton:
            self.value[collapsing] = candidate_value[collapsing]
        self._changed(table_kept=True)
        if self.refit:
            self._refit(factor)

    def _refit(self, factor) -> None:
        """Re-fit every leaf by one damped Newton pass on the training rows."""
        fit = self.fit
        kernels.refit_leaves(
            fit.leaves(),
            self.offset,
            self.current,
            self.value,
            self.tree_output,
            factor,
            self.alive,
            self._scored(fit),
            fit.target.codes,
            _columns(fit.target.values),
            self.loss_kind,
            float(self.ensemble.link_scale),
            REG_LAMBDA,
            REFIT_STEP,
        )
        self._changed()  # the pass updated the training rows' scores only

    def rank_loss(self, n_rows) -> float:
        """Mean loss of the model (the loss the walk ranks by) on the first
        ``n_rows`` ranking rows, a random sample of them: the scale of the
        bandit's stopping rule."""
        name = "log_loss" if self.ensemble.task == "classification" else "mse"
        raw, target = self._scored(self.rank, n_rows)[:n_rows], self.rank.head(n_rows)
        if self.loss_kind == kernels.FRACTION_SQUARES:
            return float(np.mean((1.0 - raw[np.arange(raw.shape[0]), target.codes]) ** 2))
        if self.rank.soft and name == "log_loss":  # against the unpruned model's probabilities
            p = np.clip(self.ensemble.transform_raw(raw), kernels.EPS, 1.0 - kernels.EPS)
            q = _columns(target.values)
            if q.shape[1] == 1:  # the positive class's probability
                p = p[:, -1:]
                return float(-np.mean(q * np.log(p) + (1.0 - q) * np.log1p(-p)))
            return float(-np.mean(np.sum(q * np.log(p), axis=1)))
        return metric_value(name, self.ensemble, raw, target)

    def state(self) -> _State:
        # averaged models never change their values: every state shares them
        value = self.value.copy() if self.newton else self.value
        return _State.of(self.collapsed, self.alive.copy(), value, self.base_score.copy())

    def run(self, far_bound, progress, callback, started, start=None, label="pruning", estimate=None, keep_states=True):
        """Walk the path; return it (a DataFrame) and the state of every point
        (none unless ``keep_states``: a walk that only measures another needs
        its path alone).

        ``far_bound``: the metric ``FAR`` times the tolerance worse than the
        unpruned model's (where the walk ends, below); ``start``: a state (of
        ``reweighted_start``) that is the path's first step from the unpruned
        model; ``label``: the progress bar's, which says which walk this is;
        ``estimate``: a function of a model's leaves that gives its metric and
        standard error in place of the checking rows' (``_metrics.CrossFitted``),
        or None where it cannot tell, which ends the walk.

        Every step is taken, also those that leave the tolerance: the metric
        of the checking rows is noisy, and a later, re-fitted model can be
        back within it. The walk ends after ``PATIENCE`` models in a row
        that are ``FAR`` times the tolerance worse than the unpruned one."""
        rows, states = [], []

        if estimate is None:
            base_terms = _row_terms(self.metric, self.ensemble, self._scored(self.check), self.check.target)

        def measure(size):
            if estimate is not None:
                return estimate(size["leaves"])
            raw = self._scored(self.check)
            terms = _row_terms(self.metric, self.ensemble, raw, self.check.target)
            metric = metric_value(self.metric, self.ensemble, raw, self.check.target, terms)
            return metric, paired_standard_error(self.metric, terms, base_terms, self.check.target)

        def record():
            """Measure the current model and add it to the path; True when the
            walk ends here: the callback stopped it, or nothing measures it."""
            size = self.size()
            measured = measure(size)
            if measured is None:
                return True
            row = {
                "step": len(rows),
                **size,
                "metric": measured[0],
                "metric_se": measured[1],
                "elapsed": time.perf_counter() - started,
            }
            rows.append(row)
            if keep_states:
                states.append(self.state())
            return callback is not None and callback_stops(callback(dict(row)))

        stop = record()
        if start is not None and not stop:
            self.start_from(start)
            stop = record()
        outside = 0
        with tqdm(desc=label, unit="step", disable=not progress, leave=False) as bar:
            while not stop and outside < PATIENCE and len(rows) < MAX_STEPS:
                choosing = time.perf_counter()
                chosen, candidate_value = self.choose_step(max(1.0, STEP_FRACTION * rows[-1]["leaves"]))
                self.scoring_seconds += time.perf_counter() - choosing
                if len(chosen) == 0:
                    break
                self.apply(chosen, candidate_value)
                stop = record()
                outside = 0 if within(self.metric, rows[-1]["metric"], far_bound) else outside + 1
                bar.update(1)
                bar.set_postfix(leaves=rows[-1]["leaves"], metric=f"{rows[-1]['metric']:.4f}")
        return pd.DataFrame(rows), states

    # --------------------------------------------------------------- models


def refittable(ensemble: Ensemble) -> bool:
    """Whether collapsed and re-fitted leaves take Newton values: they need a
    loss of the raw score and trees that add up; class fractions and averaged
    trees keep their stored values."""
    return ensemble.aggregation != "mean" and not class_fractions(ensemble)


def class_fractions(ensemble: Ensemble) -> bool:
    """Whether the trees output class fractions (a classifier forest), which
    a walk may rank by their squared error instead of the log-loss."""
    return _loss_kind(ensemble) == kernels.FRACTIONS


def distillable(ensemble: Ensemble) -> bool:
    """Whether ``prune`` also walks towards the model's own outputs on
    perturbed training rows: Newton leaves (:func:`refittable`), whose every
    loss takes soft targets (:func:`model_target`)."""
    return refittable(ensemble)


def reweightable(ensemble: Ensemble) -> bool:
    """Whether ``prune`` walks from re-weighted trees: a binary classifier's
    summed trees of one raw output with log-loss (``_weights``; why
    not regression: there)."""
    return (
        ensemble.task == "classification"
        and ensemble.aggregation == "sum"
        and ensemble.n_outputs == 1
        and ensemble.n_trees > 1
        and _loss_kind(ensemble) == kernels.LOGISTIC
    )


def _columns(values):
    """Targets as the kernels take them: one column, or one per class for
    soft labels of several classes (a view, no copy)."""
    return values.reshape(values.shape[0], -1)


def _batches(n: int) -> list:
    """(start, stop) of the batches of ``n`` ranking rows that a step where
    sampling pays sums its costs over, in order: the bandit's growing samples
    (a first of ``max(FIRST_BATCH, n // 100)`` rows, then twice as many each
    time), the last batch the rows left."""
    bounds, start, batch = [], 0, max(FIRST_BATCH, n // 100)
    while start < n:
        stop = min(start + batch, n)
        bounds.append((start, stop))
        start, batch = stop, 2 * batch
    return bounds


def _pessimistic(cost, square):
    """A candidate's cost plus one spread of its rows' changes: with thousands
    of candidates, ranking by the plain sum favours those whose few rows
    happen to agree (the winner's curse); this discounts them."""
    return cost + PESSIMISM * np.sqrt(square)


def _loss_kind(ensemble: Ensemble) -> int:
    """The loss the search ranks and re-fits with: the model's own through its
    link (regression through the sigmoid, XGBoost's ``reg:logistic`` and
    LightGBM's ``cross_entropy``: log-loss against targets in [0, 1]); other
    regression objectives of the identity link (absolute error, Huber, ...)
    by squared error, and those of the log link by Poisson deviance."""
    if ensemble.task == "regression":
        return {"exp": kernels.POISSON, "sigmoid": kernels.LOGISTIC}.get(ensemble.link, kernels.SQUARED)
    return {"sigmoid": kernels.LOGISTIC, "softmax": kernels.SOFTMAX, "identity": kernels.FRACTIONS}[ensemble.link]
