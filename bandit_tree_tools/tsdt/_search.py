"""TSDTClassifier: TSDT and Fast-TSDT, optimal decision trees searched on a
stream by Monte Carlo tree search with Thompson sampling, and the default
optimistic search that does not collapse on deceptive branches.

Change against the paper (Chaouki, Read & Bifet, AISTATS 2024). The paper
scores a new child of the search tree by its terminal tree (Algorithm 1,
line 11) with the spread of that one estimate, which the shared statistics
shrink at once. A split whose value shows only deeper down (MONK-1's a1 or
a2, worth nothing until the split below) then starts far behind a split
that pays at once (a5), and Thompson sampling stops trying it: on shuffled
MONK-1 streams Fast-TSDT ends on the 0.870 tree instead of the 0.900
optimum in every run. ``variant="optimistic"`` (the default) changes three
things and keeps the rest of Fast-TSDT (shared statistics, expansion,
back-propagation of the child with the largest mean; in ``fit`` its
expansion leaves out the attributes with one value on every row, whose
split keeps all the rows in one child):

* a search leaf (a tree whose subtrees are not expanded yet) is drawn with
  the standard deviation ``max(sd, optimism * gain / n_features)``, where
  ``gain`` bounds what deeper splits can still add: ``sum_l max(0, p(l) *
  (1 - majority share of l) - lambda)`` over its splittable leaves (a
  deeper tree is at best right on every row of a leaf and costs at least
  one more split). The widened sd is carried up like the sd (with the
  child of largest mean) and used only to draw; means and the root
  posterior (``trace_``) are the paper's, and the spread vanishes where no
  split can pay for itself. Divided by the number of attributes because
  every expansion tries each attribute left: with one spread for all, many
  attributes would mean a search too broad to go deep (measured: 2 / 6 on
  MONK-1 finds the optimum, where 2 / 27 suits tic-tac-toe's 27 binary
  attributes and 2 / 6 there explores too much);
* the final tree is the best one the search has built, not the end of the
  most visited path (optimism spreads visits). After ``fit``: every row is
  sent once down every path of the shared decision-tree nodes, which gives
  their exact class counts on the rows, and dynamic programming over those
  nodes picks the best tree made of them (a node is a leaf or is split on
  an attribute the search ever split it on), so subtrees tried in different
  branches of the search combine; it is at least as good on the rows as
  every tree the search visited. ``partial_fit`` does the same on the
  distinct (row, label) pairs of the stream, which it keeps with their
  counts (categorical rows repeat; past ``PATTERN_CAP`` = 100,000 pairs
  they are dropped for good): the result is then the one ``fit`` would
  give on every row streamed so far. Without them (past the cap; models
  pickled before): the search node of largest ``mean - 2 sd`` under the
  statistics of the end (the largest of thousands of means is mostly luck:
  trees whose deep leaves saw few rows look better than they are).
* exact completion of that tree (on the rows, or the stream's pairs). The
  search stays shallow: a tree is passed through only after each of its
  leaves is expanded, one leaf per visit, so depth costs about quadratically many iterations (on MONK-2 no
  tree visited in 3,000 iterations has more than 5 of the optimum's 38
  splits). So the nodes of the assembled tree where a split could still pay
  are handed to the exact solver of :func:`optimal_categorical_tree`
  (smallest first, sharing one memo table, so a parent reuses its
  children's subproblems), each replaced by its optimal subtree, and the
  tree is assembled again, in rounds, until all its nodes are solved or the
  solver's budget is spent: ``exact_effort`` times the rows streamed times
  the attributes, in steps of one row scanned for one attribute (a fixed
  multiple of the search's own updates, each of which touches every
  attribute of a row; ``partial_fit`` counts every row streamed so far and
  runs it on each call). Not for attributes whose combinations of tests
  exceed 2**62 (the solver's keys; attributes with one value on every row
  do not count): then the tried splits only.

What is exact and what is search. The posteriors, the Thompson draws and
the paper's convergence argument (Lemma 3, Theorem 1) are those of
Fast-TSDT with widened draws: the search's guarantee is the paper's,
asymptotic in the iterations. The final tree is the exact optimum of
``accuracy - lambda_ * splits`` on the rows (of ``fit``, or streamed)
whenever the completion solves the root (``proven_optimal_``; it does when
the exact solver's work fits the budget: MONK-1, MONK-2, MONK-3, car,
tic-tac-toe, COMPAS with the defaults, not FICO); otherwise every
subtree below a solved node is optimal for its rows and the splits above
come from the search, so the tree is at least as good as the best tree the
search built, with no bound on its distance to the optimum.

``variant="fast"`` (Fast-TSDT) and ``variant="clark"`` (TSDT) are the
paper's searches, unchanged.
"""

import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .._plotting import axes_for
from .._side_compile import compiling_beside
from .._validation import Interval, Options, check_params
from ..bandits._random import kernel_rng
from ..exceptions import DataError, ParameterError
from ..tree import refuse_single_class
from . import _kernels as K
from ._categorical_tree import (
    CategoricalTree,
    CategoricalTreeModel,
    categorical_codes,
    encode_labels,
    tree_from_counts,
    tree_from_data,
    varying_attributes,
)
from ._kernels_exact import _find, new_table

VARIANTS = ("optimistic", "fast", "clark")
COUNT_BUDGET = 5_000_000  # steps of the exact count behind the final tree of the optimistic search (~0.05 s)
EXACT = -2  # in {DT node: attribute}: the node takes the exact solver's subtree
PATTERN_CAP = 100_000  # distinct (row, label) pairs partial_fit keeps for the exact completion

# field -> (capacity kind, fill value)
_FIELDS = {
    "dt_parent": ("dt", -1),
    "dt_feature": ("dt", -1),
    "dt_category": ("dt", -1),
    "dt_depth": ("dt", 0),
    "dt_slot": ("dt", -1),
    "split_of": ("dt", -1),
    "stack_node": ("dt", 0),
    "stack_weight": ("dt", 0.0),
    "slot_counts": ("slot", 0),
    "slot_correct": ("slot", 0),
    "slot_total": ("slot", 0),
    "slot_child": ("slot", -1),
    "s_parent": ("search", -1),
    "s_split_leaf": ("search", -1),
    "s_split_feature": ("search", -1),
    "s_n_splits": ("search", 0),
    "s_is_stop": ("search", 0),
    "s_state": ("search", 0),
    "s_first_child": ("search", -1),
    "s_last_child": ("search", -1),
    "s_next_sibling": ("search", -1),
    "s_visits": ("search", 0),
    "s_mu": ("search", 0.0),
    "s_sd": ("search", 0.0),
    "s_wide": ("search", 0.0),
    "s_pool_start": ("search", 0),
    "s_pool_len": ("search", 0),
    "pool_leaf": ("pool", -1),
    "pool_done": ("pool", 0),
}
_DTYPES = {
    "stack_weight": np.float64,
    "s_mu": np.float64,
    "s_sd": np.float64,
    "s_wide": np.float64,
    "s_is_stop": np.uint8,
    "s_state": np.uint8,
    "pool_done": np.uint8,
}
_USED = {"dt": K.C_DT, "slot": K.C_SLOTS, "search": K.C_SEARCH, "pool": K.C_POOL}


def _field_shape(name, capacity, n_cells, n_classes, n_features):
    if name == "slot_counts":
        return (capacity, n_cells, n_classes)
    if name == "slot_correct":
        return (capacity, n_cells)
    if name == "slot_child":
        return (capacity, n_features)
    return (capacity,)


def new_state(n_categories, n_classes, rng_words) -> K.SearchState:
    """An empty search: the root DT node and the root search node."""
    n_features = len(n_categories)
    n_cells = int(np.sum(n_categories))
    capacity = {"dt": 64 + 64 * n_cells, "slot": 256, "search": 64 + 64 * (n_features + 1), "pool": 1024}
    arrays = {}
    for name, (kind, fill) in _FIELDS.items():
        shape = _field_shape(name, capacity[kind], n_cells, n_classes, n_features)
        arrays[name] = np.full(shape, fill, dtype=_DTYPES.get(name, np.int64))
    counters = np.zeros(K.N_COUNTERS, dtype=np.int64)
    counters[K.C_DT] = 1
    counters[K.C_SEARCH] = 1
    counters[K.C_PENDING] = -1
    arrays["s_state"][0] = K.UNVISITED
    return K.SearchState(
        counters=counters,
        rng=np.asarray(rng_words, dtype=np.uint64).copy(),
        root_counts=np.zeros(n_classes, dtype=np.int64),
        **arrays,
    )


def grow_state(state: K.SearchState, n_categories) -> K.SearchState:
    """Double every array kind that lacks room for one more iteration."""
    n_features = len(n_categories)
    n_cells = state.slot_counts.shape[1]
    n_classes = state.slot_counts.shape[2]
    pending = int(state.counters[K.C_PENDING])
    tree_size = 1
    node = pending
    while node >= 0:
        if state.s_split_leaf[node] >= 0:
            tree_size += int(n_categories[state.s_split_feature[node]])
        node = int(state.s_parent[node])
    needs = {"dt": n_cells, "slot": tree_size, "search": n_features + 1, "pool": tree_size}
    current = {
        "dt": state.dt_parent.shape[0],
        "slot": state.slot_total.shape[0],
        "search": state.s_parent.shape[0],
        "pool": state.pool_leaf.shape[0],
    }
    wanted = {}
    for kind, capacity in current.items():
        used = int(state.counters[_USED[kind]])
        while capacity - used < needs[kind]:
            capacity *= 2
        wanted[kind] = capacity
    updates = {}
    for name, (kind, fill) in _FIELDS.items():
        if wanted[kind] == current[kind]:
            continue
        old = getattr(state, name)
        new = np.full(_field_shape(name, wanted[kind], n_cells, n_classes, n_features), fill, dtype=old.dtype)
        new[: old.shape[0]] = old
        updates[name] = new
    return state._replace(**updates)


@dataclass(frozen=True)
class SearchTrace:
    """Posterior of the best tree's objective at the search root after each
    iteration: ``mean`` and ``sd`` (float64 arrays, one entry per iteration)."""

    mean: np.ndarray
    sd: np.ndarray

    def plot(self, ax=None):
        """Mean with a +-2 sd band against the iteration number.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None makes a new figure.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on (the library's plotting convention).
        """
        figure, (ax,) = axes_for(ax, 1, panel_size=(6, 3.5))
        steps = np.arange(1, len(self.mean) + 1)
        ax.plot(steps, self.mean, label="root posterior mean")
        ax.fill_between(steps, self.mean - 2 * self.sd, self.mean + 2 * self.sd, alpha=0.25, label="+-2 sd")
        ax.set_xlabel("iteration")
        ax.set_ylabel("accuracy - lambda * splits")
        ax.legend(loc="lower right")
        return figure

    def __repr__(self) -> str:
        if len(self.mean) == 0:
            return "SearchTrace(n_iterations=0)"
        return f"SearchTrace(n_iterations={len(self.mean)}, final mean={self.mean[-1]:.4f}, final sd={self.sd[-1]:.4f})"


class TSDTClassifier(CategoricalTreeModel, ClassifierMixin, BaseEstimator):
    """Optimal decision tree on categorical attributes by Thompson-sampling
    Monte Carlo tree search: TSDT and Fast-TSDT (Chaouki, Read & Bifet, 2024).

    The search maximises ``accuracy - lambda_ * (number of splits)`` over trees
    with multiway splits (one child per category, an attribute at most once per
    path). Every iteration draws ``batch_size`` rows from the stream, sends them
    through a tree chosen by Thompson sampling, expands that tree by one leaf
    and back-propagates Normal posteriors to the root. The final tree follows
    the most visited child from the root.

    Parameters
    ----------
    lambda_ : float, default=0.01
        Penalty per split (a multiway split counts once); >= 0.
    max_iter : int, default=3000
        Iterations run by ``fit``, fewer when ``time_limit`` stops it first
        (``partial_fit`` runs one per ``batch_size`` rows it receives). The
        iterations run are counted in ``n_iter_``.
    n_iter : int, deprecated
        The former name of ``max_iter``; still accepted, with a FutureWarning.
    batch_size : int, default=100
        Rows streamed through the selected tree per iteration (the paper's m).
    variant : {"optimistic", "fast", "clark"}, default="optimistic"
        "fast": Fast-TSDT, a node takes the posterior of its child with the
        largest mean. "clark": TSDT, Clark's Normal approximation of the
        maximum of the children (computed with standard deviations).
        "optimistic": Fast-TSDT whose search leaves are drawn with a spread
        as wide as what their subtrees could still gain (see the module
        docstring), so splits that pay only deeper down keep being tried;
        returns the best tree made of the splits it tried, whose nodes the
        exact solver then completes within ``exact_effort``.
    exact_effort : float, default=40.0
        "optimistic" only: budget of the exact completion of
        the final tree (see the module docstring), as a multiple of the
        search's work: ``exact_effort * rows streamed * attributes`` steps
        (a row scanned for one attribute). 0 keeps the assembled tree of
        the tried splits. >= 0.
    optimism : float, default=2.0
        "optimistic" only: a search leaf's sd is at least
        ``optimism * gain / n_features``, where ``gain`` bounds what deeper
        splits can still add (larger explores more; per attribute, as every
        expansion tries each attribute left). > 0.
    gamma : float, default=0.75
        Exponent applied to a tree's posterior standard deviation (appendix B
        of the paper) to slow its collapse; 1 disables it.
    time_limit : float or None, default=None
        Seconds after which ``fit`` stops early (checked every few iterations;
        the exact completion comes after, with a budget in proportion to the
        iterations run).
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    tree_ : CategoricalTree
        The final tree (multiway splits). With ``fit``, its class fractions are
        those of the training rows; with ``partial_fit`` only, those of every
        row streamed (of the rows seen at each node by the search when the
        stream's rows are not kept: the paper's variants, past the cap).
    ensemble_ : Ensemble
        The same tree in the common format (binary category-set splits).
    n_leaves_, n_splits_ : int
    feature_importances_ : ndarray of float64, one per feature
        Mean decrease in Gini impurity of the training rows over the splits
        on each attribute, summing to 1 (0 everywhere for a single leaf).
    objective_ : float
        ``accuracy - lambda_ * n_splits_`` of ``tree_`` on the rows given to
        ``fit``, or on every row streamed by ``partial_fit``; estimated from
        the stream statistics of the leaves when those are not kept.
    trace_ : SearchTrace
        Root posterior (mean, sd) after every iteration.
    n_iter_ : int
        Iterations run in total.
    proven_optimal_ : bool
        True when the exact completion solved the root: ``tree_`` is then
        the exact optimum of the objective on the rows given to ``fit`` or
        streamed (ties aside). False otherwise (and for the paper's
        variants), which does not mean it is not optimal.
    n_categories_ : ndarray of int64
    classes_, n_features_in_, feature_names_in_

    Notes
    -----
    Unseen categories and missing values at prediction time stop at the split
    that meets them and get that node's majority class; they never raise.

    On a stream, the first ``partial_fit`` call fixes the categories of every
    feature (those of its chunk, or ``n_categories``). A later chunk with a
    category beyond them raises a :class:`DataError` before any of its rows
    is used, so the model stays exactly as it was and the stream can go on
    with the next chunk; declare ``n_categories`` on the first call to let
    categories appear later (a declared category not seen yet has no rows,
    so the search never gains by splitting on it until it shows up).

    Bad parameters raise :class:`~bandit_tree_tools.exceptions.ParameterError`
    from ``fit``/``partial_fit``; data that are not categorical codes or
    labels raise :class:`~bandit_tree_tools.exceptions.DataError`.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(300, 4))
    >>> y = (X[:, 0] == X[:, 1]).astype(int)
    >>> model = btt.TSDTClassifier(lambda_=0.01, max_iter=200, random_state=0).fit(X, y)
    >>> model.n_iter_, float(model.score(X, y))
    (200, 1.0)
    >>> model.n_splits_, model.ensemble_.n_trees  # the tree in the common format too
    (4, 1)
    """

    _parameter_constraints = {
        "lambda_": [Interval(float, 0.0, None, finite=True)],
        "max_iter": [Interval(int, 1, None)],
        "n_iter": [Interval(int, 1, None), Options({"deprecated"})],
        "batch_size": [Interval(int, 1, None)],
        "variant": [Options(VARIANTS)],
        "optimism": [Interval(float, 0.0, None, "neither", finite=True)],
        "exact_effort": [Interval(float, 0.0, None, finite=True)],
        "gamma": [Interval(float, 0.0, 1.0, "right")],
        "time_limit": [Interval(float, 0.0, None, "neither", finite=True), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        lambda_=0.01,
        max_iter=3000,
        batch_size=100,
        variant="optimistic",
        optimism=2.0,
        exact_effort=40.0,
        gamma=0.75,
        time_limit=None,
        random_state=None,
        n_iter="deprecated",
    ):
        self.lambda_ = lambda_
        self.max_iter = max_iter
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.variant = variant
        self.optimism = optimism
        self.exact_effort = exact_effort
        self.gamma = gamma
        self.time_limit = time_limit
        self.random_state = random_state

    # ------------------------------------------------------------ parameters
    def _check_params(self):
        check_params(self.get_params(deep=False), self._parameter_constraints, owner=type(self).__name__)

    def _max_iter(self) -> int:
        if isinstance(self.n_iter, str):
            return int(self.max_iter)
        warnings.warn(
            f"{type(self).__name__}(n_iter=...) is now max_iter (iterations fit may run; n_iter_ counts those "
            "it ran); n_iter will be removed in a future release",
            FutureWarning,
            stacklevel=3,
        )
        return int(self.n_iter)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Search for the best tree, replaying the rows of ``X`` as a stream
        (shuffled, reshuffled after every pass) for ``max_iter`` iterations."""
        self._check_params()
        codes, n_categories, feature_names, feature_categories = categorical_codes(X, fitting=True)
        classes, y_codes = encode_labels(y, codes.shape[0])
        refuse_single_class(classes)
        self._start(n_categories, classes, feature_names, feature_categories)
        X_codes = codes.astype(np.int64)
        if self.variant == "optimistic":  # the paper's variants split on every attribute, as its expansion does
            self._blocked = (~varying_attributes(X_codes)).astype(np.uint8)
        self._state.counters[K.C_POSITION] = X_codes.shape[0]  # reshuffle before the first row
        with compiling_beside("tsdt"):
            self._run(X_codes, y_codes, np.arange(X_codes.shape[0], dtype=np.int64), self._max_iter(), cycle=True)
            self._finish(X_codes, y_codes)
        self._patterns = ()  # fit's rows are not kept: a partial_fit after it ends on the stream statistics
        return self

    def partial_fit(self, X, y, classes=None, n_categories=None):
        """Consume one chunk of a stream: each row is used once, ``batch_size``
        rows per iteration (the last iteration takes what is left). The first
        call fixes the classes and the number of categories of each feature:
        pass ``classes`` and ``n_categories`` then if the first chunk does not
        show them all. The default variant also keeps the distinct (row,
        label) pairs seen, with their counts, to complete its final tree
        exactly (module docstring; at most ``PATTERN_CAP`` pairs; not after
        ``fit``, whose rows are not kept)."""
        self._check_params()
        first = not hasattr(self, "_state")
        codes, seen_categories, feature_names, feature_categories = categorical_codes(
            X, fitting=True, categories=None if first else getattr(self, "feature_categories_", None)
        )
        if first:
            labels, _ = encode_labels(y, codes.shape[0], None)
            known = labels
            if classes is not None:  # the declared classes are the stream's: the chunk's labels must be among them
                known = np.unique(np.asarray(classes))
                declared = set(known.tolist())
                outside = [label for label in labels.tolist() if label not in declared]
                if outside:
                    raise DataError(
                        f"y contains labels {outside[:5]} that are not in classes {known.tolist()}; pass every "
                        "label of the stream (with its type: 1 and '1' differ) in classes= on the first partial_fit call"
                    )
            if len(known) < 2:
                raise DataError(
                    f"the first chunk has a single class ({known.tolist()[0]!r}); pass classes=[...] with every label "
                    "of the stream on the first partial_fit call"
                )
            declared = seen_categories
            if n_categories is not None:
                declared = _declared_categories(n_categories, seen_categories.shape[0])
                if declared.shape != seen_categories.shape or np.any(declared < seen_categories):
                    raise DataError(
                        f"n_categories={declared.tolist()} does not cover the categories of the first chunk "
                        f"(at least {seen_categories.tolist()} are needed)"
                    )
            self._start(declared, known, feature_names, feature_categories)
        else:
            if codes.shape[1] != self.n_features_in_:
                raise DataError(
                    f"X has {codes.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (the stream started with them); pass the same "
                    "columns in every chunk"
                )
            too_big = codes >= self.n_categories_
            if np.any(too_big):
                row, column = np.argwhere(too_big)[0]
                raise DataError(
                    f"feature {column} has category {int(codes[row, column])} in this chunk, but the stream was "
                    f"declared with {int(self.n_categories_[column])} categories; pass n_categories= on the "
                    "first partial_fit call"
                )
        _, y_codes = encode_labels(y, codes.shape[0], self.classes_)
        X_codes = codes.astype(np.int64)
        self._state.counters[K.C_POSITION] = 0
        n_iter = -(-X_codes.shape[0] // int(self.batch_size))
        self._run(X_codes, y_codes, np.arange(X_codes.shape[0], dtype=np.int64), n_iter, cycle=False)
        self._remember(X_codes, y_codes)
        if getattr(self, "_patterns", None):
            self._finish(*self._patterns)
        else:
            self._finish(None, None)
        return self

    def _remember(self, X_codes, y_codes):
        """Add a chunk to the distinct (row, label) pairs of the stream and
        their counts: the rows the exact completion of ``partial_fit`` works
        on. Categorical rows repeat, so this stays small; past
        ``PATTERN_CAP`` pairs they are dropped for good (the stream goes on
        with the search's own choice)."""
        if not getattr(self, "_patterns", None):
            return
        old_X, old_y, old_weight = self._patterns
        rows = np.column_stack([np.concatenate([old_X, X_codes]), np.concatenate([old_y, y_codes])])
        weight = np.concatenate([old_weight, np.ones(len(y_codes), dtype=np.int64)])
        pairs, inverse = np.unique(rows, axis=0, return_inverse=True)
        if len(pairs) > PATTERN_CAP:
            self._patterns = ()
            return
        weight = np.bincount(inverse.ravel(), weights=weight, minlength=len(pairs)).astype(np.int64)
        self._patterns = (np.ascontiguousarray(pairs[:, :-1]), np.ascontiguousarray(pairs[:, -1]), weight)

    # ------------------------------------------------------------- internals
    def _start(self, n_categories, classes, feature_names, feature_categories=None):
        self.classes_ = np.asarray(classes)
        if feature_categories is not None and any(values is not None for values in feature_categories):
            self.feature_categories_ = feature_categories
        elif hasattr(self, "feature_categories_"):
            del self.feature_categories_
        self.n_categories_ = np.asarray(n_categories, dtype=np.int64)
        self.n_features_in_ = int(len(n_categories))
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._cat_offset = np.concatenate([[0], np.cumsum(self.n_categories_)[:-1]]).astype(np.int64)
        self._blocked = np.zeros(len(n_categories), dtype=np.uint8)  # attributes the search never splits
        self._state = new_state(self.n_categories_, len(self.classes_), kernel_rng(self.random_state))
        self._trace = []
        self.n_iter_ = 0
        self._rows_streamed = 0
        # partial_fit's distinct (row, label) pairs and counts; () when not kept (the paper's variants).
        self._patterns = ()
        if self.variant == "optimistic":
            self._patterns = (
                np.empty((0, len(n_categories)), dtype=np.int64),
                np.empty(0, dtype=np.int64),
                np.empty(0, dtype=np.int64),
            )

    def _spread_divisor(self) -> float:
        """The kernels widen a search leaf's sd to gain / divisor; 0: the paper's sd."""
        if self.variant != "optimistic":
            return 0.0
        return self.n_features_in_ / float(self.optimism)

    def _run(self, X_codes, y_codes, order, n_iter, cycle):
        started = time.perf_counter()
        done = 0
        # With a time limit, run short chunks so the clock is checked often.
        chunk = n_iter if self.time_limit is None else 16
        while done < n_iter:
            step = min(chunk, n_iter - done)
            trace_mu = np.empty(step, dtype=np.float64)
            trace_sd = np.empty(step, dtype=np.float64)
            count, status = K.run_search(
                self._state,
                X_codes,
                y_codes,
                order,
                step,
                int(self.batch_size),
                cycle,
                self.n_categories_,
                self._cat_offset,
                float(self.lambda_),
                float(self.gamma),
                self.variant == "clark",
                self._spread_divisor(),
                self._blocked,
                trace_mu,
                trace_sd,
            )
            self._trace.append((trace_mu[:count], trace_sd[:count]))
            done += count
            self.n_iter_ += count
            self._rows_streamed = getattr(self, "_rows_streamed", 0) + count * int(self.batch_size)
            if status == K.NEEDS_SPACE:
                self._state = grow_state(self._state, self.n_categories_)
                continue
            if count < step:  # the stream ran out
                break
            if self.time_limit is not None and time.perf_counter() - started > self.time_limit:
                break

    def _most_visited_node(self) -> int:
        state = self._state
        node = 0
        while state.s_first_child[node] >= 0:
            best = child = int(state.s_first_child[node])
            while child >= 0:
                if state.s_visits[child] > state.s_visits[best]:
                    best = child
                child = int(state.s_next_sibling[child])
            node = best
        return node

    def _final_splits(self, X_codes, y_codes, weight) -> dict:
        """{DT node: attribute or ``EXACT``} of the returned tree. The
        paper's variants follow the most visited child from the root. The
        optimistic search spreads its visits more, so it returns the best
        tree it has built: with rows at hand (``fit``'s, or the pairs a
        stream brought), the best tree on them made of the splits it
        created (exact counts, dynamic programming), completed by the exact
        solver (see :func:`K.exact_completion`); without rows, the search
        node of largest ``mean - 2 sd`` under the statistics of the end (the
        largest of thousands of means is mostly luck)."""
        self.proven_optimal_ = False
        state = self._state
        if self.variant != "optimistic":
            return self._splits_of(self._most_visited_node())
        if X_codes is None:
            n_search = int(state.counters[K.C_SEARCH])
            scores = K.current_lower_bounds(state, self.n_categories_, self._cat_offset, float(self.lambda_), 1.0, 2.0)
            tied = np.flatnonzero(scores >= scores.max() - 1e-12)
            return self._splits_of(int(tied[np.argmin(state.s_n_splits[:n_search][tied])]))
        counts, tried = K.tried_split_counts(
            state, X_codes, y_codes, weight, self.n_categories_, self._cat_offset, COUNT_BUDGET
        )
        n_features, n_rows = len(self.n_categories_), int(weight.sum())
        # Keys index the tests of the attributes that vary over the rows. The solver never tests one
        # that does not, and a split of the search's tree on one leaves a child with the node's own
        # rows (the same key: the same subproblem) and empty ones (never solved). Columns with one
        # value (every column a model does not split, after discretize) filled the 62 bits of wide data.
        radix = _exact_radix(self.n_categories_, varying_attributes(X_codes))
        if radix is None or self.exact_effort == 0:  # too many combinations to index: the tried splits only
            choice, _ = K.best_assembled_tree(state, counts, n_rows, self.n_categories_, float(self.lambda_), tried)
            return {int(dt): int(choice[dt]) for dt in np.flatnonzero(choice >= 0)}
        keys, values, choices, stored = new_table()
        # Steps (a row scanned for one attribute) in proportion to the search's own work.
        steps = float(self.exact_effort) * self._rows_streamed * n_features
        budget = np.array([np.iinfo(np.int64).max, int(min(steps, 2.0**62))], dtype=np.int64)
        choice, _, keys, values, choices, dt_keys = K.exact_completion(
            state,
            X_codes,
            y_codes,
            weight,
            counts,
            self.n_categories_,
            self._cat_offset,
            tried,
            radix,
            len(self.classes_),
            float(self.lambda_) * n_rows,
            budget,
            keys,
            values,
            choices,
            stored,
        )
        self._exact_table = (keys, choices, radix, dt_keys)
        self.proven_optimal_ = bool(choice[0] == EXACT)
        splits = {int(dt): int(choice[dt]) for dt in np.flatnonzero(choice >= 0)}
        splits.update({int(dt): EXACT for dt in np.flatnonzero(choice == EXACT)})
        return splits

    def _splits_of(self, node) -> dict:
        state = self._state
        splits = {}
        while node >= 0:
            if state.s_split_leaf[node] >= 0:
                splits[int(state.s_split_leaf[node])] = int(state.s_split_feature[node])
            node = int(state.s_parent[node])
        return splits

    def _final_structure(self, splits):
        """Multiway arrays of the tree given as {DT node: attribute}, plus the
        DT node of every node (-1 inside a subtree of the exact solver: a DT
        node mapped to ``EXACT`` is replaced by the optimal subtree of its
        tests, read back from the solver's memo table)."""
        state = self._state
        feature, first_child, dt_of, key_of = [], [], [0], [-1]
        position = 0
        while position < len(dt_of):
            dt, key = dt_of[position], key_of[position]
            split = splits.get(dt) if key < 0 else None
            if split == EXACT:
                key = int(self._exact_table[3][dt])
                dt_of[position] = -1
            if key >= 0:
                table_keys, table_choice, radix, _ = self._exact_table
                slot = _find(table_keys, key)
                split = int(table_choice[slot]) if table_keys[slot] == key else -1
                if split < 0:
                    feature.append(-2)
                    first_child.append(-1)
                else:
                    feature.append(split)
                    first_child.append(len(dt_of))
                    for category in range(int(self.n_categories_[split])):
                        dt_of.append(-1)
                        key_of.append(key + (category + 1) * int(radix[split]))
                position += 1
                continue
            if split is None:
                feature.append(-2)
                first_child.append(-1)
            else:
                feature.append(split)
                first_child.append(len(dt_of))
                base = int(state.slot_child[state.dt_slot[dt], split])
                dt_of.extend(range(base, base + int(self.n_categories_[split])))
                key_of.extend([-1] * int(self.n_categories_[split]))
            position += 1
        return np.array(feature, dtype=np.int64), np.array(first_child, dtype=np.int64), dt_of

    def _finish(self, X_codes, y_codes, weight=None):
        """The final tree and its attributes, from the rows ``X_codes,
        y_codes`` (row ``r`` standing for ``weight[r]`` rows, 1 if None), or
        from the stream statistics alone when ``X_codes`` is None."""
        if X_codes is not None and weight is None:
            weight = np.ones(len(y_codes), dtype=np.int64)
        feature, first_child, dt_of = self._final_structure(self._final_splits(X_codes, y_codes, weight))
        self.__dict__.pop("_exact_table", None)  # the solver's memo: only to build the tree
        n_classes = len(self.classes_)
        if X_codes is not None:
            self.tree_ = tree_from_data(feature, first_child, self.n_categories_, X_codes, y_codes, n_classes, weight)
            correct = np.argmax(self.tree_.value[self.tree_.apply(X_codes)], axis=1) == y_codes
            accuracy = float(np.sum(weight[correct]) / np.sum(weight))
        else:
            state = self._state
            counts = np.zeros((len(dt_of), n_classes), dtype=np.float64)
            for index, dt in enumerate(dt_of):
                if dt == 0:
                    counts[index] = state.root_counts
                else:
                    parent_slot = state.dt_slot[state.dt_parent[dt]]
                    cell = self._cat_offset[state.dt_feature[dt]] + state.dt_category[dt]
                    counts[index] = state.slot_counts[parent_slot, cell]
            self.tree_ = tree_from_counts(feature, first_child, self.n_categories_, counts)
            accuracy = _chain_rule_accuracy(self.tree_, counts)
        self.objective_ = accuracy - float(self.lambda_) * self.tree_.n_splits
        self.trace_ = SearchTrace(
            mean=np.concatenate([mu for mu, _ in self._trace]), sd=np.concatenate([sd for _, sd in self._trace])
        )
        self.n_search_nodes_ = int(self._state.counters[K.C_SEARCH])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Category codes only: 0, 1, 2, ...; fit refuses negative, missing, infinite and sparse input
        # with a DataError (prediction lets a missing value stop at the split that meets it).
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags


def _exact_radix(n_categories, needed=None):
    """The exact solver's key radix of every attribute of ``needed`` (all by
    default; 0 for the others, which no key may then hold), or None when
    their combinations of tests are too many to index in 62 bits."""
    radix = np.zeros(len(n_categories), dtype=np.int64)
    place = 1
    for feature in range(len(n_categories)) if needed is None else np.flatnonzero(needed):
        radix[feature] = place
        place *= int(n_categories[feature]) + 1
        if place >= 2**62:
            return None
    return radix


def _chain_rule_accuracy(tree: CategoricalTree, counts) -> float:
    """Majority-class accuracy of the leaves weighted by the chain-rule
    estimate of their probability (section 4.4), from stream counts."""
    weight = np.zeros(tree.n_nodes)
    weight[0] = 1.0
    accuracy = 0.0
    for node in range(tree.n_nodes):
        total = counts[node].sum()
        if tree.feature[node] < 0:
            if total > 0:
                accuracy += weight[node] * counts[node].max() / total
            continue
        first = tree.first_child[node]
        children = np.arange(first, first + tree.n_categories[tree.feature[node]])
        sizes = counts[children].sum(axis=1)
        if sizes.sum() > 0:
            weight[children] = weight[node] * sizes / sizes.sum()
    return float(accuracy)


def _declared_categories(n_categories, n_features: int) -> np.ndarray:
    """``partial_fit``'s ``n_categories`` as int64, refusing what a cast would
    silently change (3.5 -> 3, True -> 1, a wrong length)."""
    values = np.asarray(n_categories, dtype=object).reshape(-1) if np.ndim(n_categories) else None
    bad = values is None or any(
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (numbers.Integral, numbers.Real))
        or not float(value).is_integer()
        or value < 1
        for value in values
    )
    if bad or len(values) != n_features:
        raise ParameterError(
            f"n_categories of partial_fit must be a list of {n_features} integers >= 1 (the number of categories "
            f"of each feature), got {n_categories!r}"
        )
    return np.asarray([int(value) for value in values], dtype=np.int64)
