"""One decision tree as parallel arrays: the common format's specification."""

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidTreeError

TREE_LEAF = -1
TREE_UNDEFINED = -2

# Values of ``missing_type``: how a node decides for NaN (and zero).
MISSING_NAN = 0  # NaN follows missing_go_to_left; every other value is compared
MISSING_NAN_AS_ZERO = 1  # NaN is replaced by 0.0, then compared (LightGBM "None")
MISSING_ZERO_OR_NAN = 2  # NaN and |x| <= ZERO_THRESHOLD follow missing_go_to_left (LightGBM "Zero")

# LightGBM's kZeroThreshold is the float literal 1e-35f, i.e. 1.0000000180025095e-35
# as a double, and LightGBM's IsZero includes both ends of [-kZeroThreshold, kZeroThreshold].
ZERO_THRESHOLD = float(np.float32(1e-35))


_READ_ONLY_MESSAGE = (
    "the arrays of an imported tree are read-only: editing them in place would desynchronise the "
    "ensemble's packed copy used by predict from what to_model writes. Edit through the supported path: "
    "btt.collapse(ensemble, {tree: [nodes]}), or build new arrays and pass the trees to "
    "ensemble.replace_trees([tree._replace(value=new_value), ...])"
)


class ReadOnlyArray(np.ndarray):
    """A read-only ndarray whose item assignment explains the supported edit path.

    Numba types it as a plain (read-only) array. Copies and results of
    arithmetic are ordinary writable arrays; pickles come back read-only.
    """

    def __setitem__(self, key, value):
        if not self.flags.writeable:
            raise ValueError(_READ_ONLY_MESSAGE)
        super().__setitem__(key, value)

    def __reduce__(self):
        function, arguments, state = super().__reduce__()
        return function, arguments, (state, True)

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and state[1] is True:
            super().__setstate__(state[0])
            self.flags.writeable = False
        else:
            super().__setstate__(state)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # results of ufuncs are new data: plain arrays, not read-only ones
        if return_scalar:
            return array[()]
        return array if type(array) is np.ndarray else array.view(np.ndarray)


def freeze_array(array: np.ndarray) -> np.ndarray:
    """A read-only copy of ``array`` (``array`` itself when it is already one), so
    no one holding a writable reference can change the tree afterwards."""
    if isinstance(array, ReadOnlyArray) and not array.flags.writeable:
        return array
    frozen = np.array(array, copy=True, order="C").view(ReadOnlyArray)
    frozen.flags.writeable = False
    return frozen


def freeze_tree(tree: "TreeArrays") -> "TreeArrays":
    """The tree with every array read-only (the same object when it already is)."""
    if not isinstance(tree, TreeArrays):
        return tree  # validate() names the problem
    changed = {}
    for name in TreeArrays._fields:
        array = getattr(tree, name)
        if isinstance(array, np.ndarray) and not (isinstance(array, ReadOnlyArray) and not array.flags.writeable):
            changed[name] = freeze_array(array)
    return tree._replace(**changed) if changed else tree


class TreeArrays(NamedTuple):
    """A binary decision tree as parallel arrays (numba accepts it as is).

    Node ``i`` is described by the ``i``-th entry of every array; node 0 is the
    root. Names and leaf markers follow scikit-learn's ``Tree``. ``n`` is the
    number of nodes, ``n_values`` the width of a node value, ``n_words`` the
    number of 32-bit words of a categorical bitset.

    Attributes
    ----------
    children_left : int64 (n,)
        Id of the left child, ``-1`` at leaves. A child id is always greater
        than its parent's id (nodes are numbered top-down), so the arrays can
        be walked in order from the root.
    children_right : int64 (n,)
        Id of the right child, ``-1`` at leaves. Leaves have both children
        ``-1``; internal nodes have both children set; every node except the
        root has exactly one parent.
    feature : int64 (n,)
        Column of ``X`` tested at the node, ``-2`` at leaves.
    threshold : float64 (n,)
        Numerical split: a row goes left when ``x <= threshold`` (or
        ``x < threshold``: the ensemble's ``split_rule``), after ``x`` is cast
        to the ensemble's ``input_dtype``. ``-2.0`` at leaves and at
        categorical nodes.
    missing_go_to_left : uint8 (n,)
        1 if a missing value goes to the left child. Which values count as
        missing is given by ``missing_type``.
    missing_type : uint8 (n,)
        0: NaN is missing, every other value is compared. 1: NaN is replaced
        by 0.0 and then compared (LightGBM's missing type "None"). 2: NaN and
        values with ``|x| <= ZERO_THRESHOLD`` (``float32(1e-35)``, both ends
        included) are missing (LightGBM's "Zero").
    is_categorical : uint8 (n,)
        1 if the node splits on category sets instead of a threshold.
    category_left : uint32 (n, n_words)
        Categorical nodes: bitset of the categories that go left (bit ``c % 32``
        of word ``c // 32``). A category is ``int(x)`` truncated toward zero.
        All zero at other nodes.
    category_right : uint32 (n, n_words)
        Categorical nodes: bitset of the categories that go right. Disjoint from
        ``category_left``.
    unknown_category_go_to_left : uint8 (n,)
        Categorical nodes: where a category in neither set goes (negative,
        beyond the bitsets, or simply not listed). Missing values follow
        ``missing_go_to_left`` instead.
    value : float64 (n, n_values)
        The node's output. At a leaf it is what the tree contributes to the
        ensemble's raw score (class fractions for scikit-learn classification
        trees, a margin for boosted trees, the mean target for regression
        trees). At an internal node it is the value the node would output if
        it were collapsed into a leaf, valid only where ``has_leaf_value``.
    has_leaf_value : uint8 (n,)
        1 where ``value`` is the correct leaf value of the node; always 1 at
        leaves. 0 for internal nodes of models that do not store it (for
        example GradientBoosting with a non-squared loss).
    n_node_samples : int64 (n,)
        Training rows that reached the node, ``-1`` when the model does not
        record it (XGBoost). Where known, a parent's count is the sum of its
        children's.
    weighted_n_node_samples : float64 (n,)
        Sum of sample weights (scikit-learn) or of hessians ("cover":
        LightGBM, XGBoost) of the training rows at the node, NaN when unknown.
        Where known, a parent's weight is the sum of its children's (up to
        rounding of the source library).
    impurity : float64 (n,)
        Impurity of the node on the training rows, NaN when unknown.
    gain : float64 (n,)
        Split gain (loss reduction) recorded by the source library, NaN at
        leaves and when unknown.

    Examples
    --------
    A stump on feature 0 (build trees with :func:`make_tree`, which fills the
    optional arrays and checks the invariants):

    >>> import bandit_tree_tools as btt
    >>> tree = btt.make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.5, -2.0, -2.0], [0.0, -1.0, 1.0])
    >>> tree
    TreeArrays(n_nodes=3, n_leaves=2, max_depth=1, n_values=1)
    >>> tree.children_left.dtype, tree.value.shape
    (dtype('int64'), (3, 1))
    """

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_go_to_left: np.ndarray
    missing_type: np.ndarray
    is_categorical: np.ndarray
    category_left: np.ndarray
    category_right: np.ndarray
    unknown_category_go_to_left: np.ndarray
    value: np.ndarray
    has_leaf_value: np.ndarray
    n_node_samples: np.ndarray
    weighted_n_node_samples: np.ndarray
    impurity: np.ndarray
    gain: np.ndarray

    @property
    def n_nodes(self) -> int:
        """Nodes of the tree, leaves included."""
        return int(self.children_left.shape[0])

    @property
    def n_leaves(self) -> int:
        """Leaves of the tree."""
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def is_leaf(self) -> np.ndarray:
        """Per node, whether it is a leaf (bool array)."""
        return self.children_left == TREE_LEAF

    @property
    def max_depth(self) -> int:
        """Depth of the deepest leaf (a tree of one leaf has depth 0)."""
        return int(node_depth(self).max())

    def __repr__(self) -> str:
        return (
            f"TreeArrays(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, "
            f"max_depth={self.max_depth}, n_values={self.value.shape[1]})"
        )


# field name -> (dtype, number of dimensions)
FIELDS = {
    "children_left": (np.int64, 1),
    "children_right": (np.int64, 1),
    "feature": (np.int64, 1),
    "threshold": (np.float64, 1),
    "missing_go_to_left": (np.uint8, 1),
    "missing_type": (np.uint8, 1),
    "is_categorical": (np.uint8, 1),
    "category_left": (np.uint32, 2),
    "category_right": (np.uint32, 2),
    "unknown_category_go_to_left": (np.uint8, 1),
    "value": (np.float64, 2),
    "has_leaf_value": (np.uint8, 1),
    "n_node_samples": (np.int64, 1),
    "weighted_n_node_samples": (np.float64, 1),
    "impurity": (np.float64, 1),
    "gain": (np.float64, 1),
}


def make_tree(
    children_left,
    children_right,
    feature,
    threshold,
    value,
    *,
    missing_go_to_left=None,
    missing_type=None,
    is_categorical=None,
    category_left=None,
    category_right=None,
    unknown_category_go_to_left=None,
    has_leaf_value=None,
    n_node_samples=None,
    weighted_n_node_samples=None,
    impurity=None,
    gain=None,
    check=True,
) -> TreeArrays:
    """Build a :class:`TreeArrays` with the right dtypes, filling optional
    arrays with their "unknown" defaults, and check its invariants.

    Parameters
    ----------
    children_left, children_right, feature, threshold : array-like (n,)
        As in :class:`TreeArrays` (``-1`` children and ``-2`` features at leaves).
    value : array-like (n,) or (n, n_values)
        Every node's output (also internal nodes': the value it would have
        as a leaf).
    missing_go_to_left, missing_type, ..., gain : array-like, optional
        The other arrays of :class:`TreeArrays`; left out, each takes its
        "unknown" default (NaN counts, no categorical splits, NaN-is-missing
        going right, every leaf value known).
    check : bool, default True
        Run :func:`validate` on the result.

    Returns
    -------
    TreeArrays
        With read-only arrays.

    Raises
    ------
    InvalidTreeError
        When ``check`` and an invariant is broken.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> tree = btt.make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.5, -2.0, -2.0], [[0.5], [0.2], [0.9]],
    ...                      n_node_samples=[10, 6, 4])
    >>> tree.n_leaves, tree.n_node_samples.tolist()
    (2, [10, 6, 4])
    >>> btt.make_tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.5, -2.0, -2.0], [0.5, 0.2, 0.9],
    ...               n_node_samples=[10, 6, 3])
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.InvalidTreeError: tree: node 0 has n_node_samples=10, but its children have 9
    """
    children_left = np.asarray(children_left, dtype=np.int64)
    n = children_left.shape[0]
    value = np.asarray(value, dtype=np.float64)
    if value.ndim == 1:
        value = value.reshape(n, 1)
    leaf = children_left == TREE_LEAF

    def filled(array, default, dtype):
        if array is None:
            return np.full(n, default, dtype=dtype)
        return np.ascontiguousarray(array, dtype=dtype)

    if category_left is None:
        category_left = np.zeros((n, 0), dtype=np.uint32)
    if category_right is None:
        category_right = np.zeros_like(np.asarray(category_left, dtype=np.uint32))
    if has_leaf_value is None:
        has_leaf_value = np.ones(n, dtype=np.uint8)
    tree = TreeArrays(
        children_left=np.ascontiguousarray(children_left),
        children_right=filled(children_right, TREE_LEAF, np.int64),
        feature=np.where(leaf, TREE_UNDEFINED, np.asarray(feature, dtype=np.int64)),
        threshold=np.where(leaf, float(TREE_UNDEFINED), np.asarray(threshold, dtype=np.float64)),
        missing_go_to_left=filled(missing_go_to_left, 0, np.uint8),
        missing_type=filled(missing_type, MISSING_NAN, np.uint8),
        is_categorical=filled(is_categorical, 0, np.uint8),
        category_left=np.ascontiguousarray(category_left, dtype=np.uint32),
        category_right=np.ascontiguousarray(category_right, dtype=np.uint32),
        unknown_category_go_to_left=filled(unknown_category_go_to_left, 0, np.uint8),
        value=np.ascontiguousarray(value),
        has_leaf_value=np.where(leaf, 1, np.asarray(has_leaf_value, dtype=np.uint8)).astype(np.uint8),
        n_node_samples=filled(n_node_samples, -1, np.int64),
        weighted_n_node_samples=filled(weighted_n_node_samples, np.nan, np.float64),
        impurity=filled(impurity, np.nan, np.float64),
        gain=np.where(leaf, np.nan, filled(gain, np.nan, np.float64)),
    )
    tree = freeze_tree(tree)
    if check:
        validate(tree)
    return tree


def node_offsets(trees) -> np.ndarray:
    """int64 (n_trees + 1,): where each tree's nodes start when the nodes of
    all trees are numbered end to end (tree ``t`` owns ids ``offsets[t] <= i <
    offsets[t + 1]``), and the total number of nodes."""
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum([tree.n_nodes for tree in trees], out=offsets[1:])
    return offsets


def breadth_first_positions(node_offset: np.ndarray, children_left: np.ndarray, children_right: np.ndarray):
    """Where every node goes when each tree of the stacked trees (tree ``t``
    owns ids ``node_offset[t] <= i < node_offset[t + 1]``; children local,
    negative at leaves) is renumbered breadth first inside its own id range,
    every left child directly before its sibling, and its depth: ``(position,
    level)``, -1 for a node its tree's root does not reach. numpy, one level
    of every tree at a time. Raises :class:`InvalidTreeError` where a node is
    reached twice (children shared, or a cycle)."""
    n_nodes, n_trees = children_left.shape[0], node_offset.shape[0] - 1
    shift = np.repeat(node_offset[:-1], np.diff(node_offset))
    position = np.full(n_nodes, -1, dtype=np.int64)
    level = np.full(n_nodes, -1, dtype=np.int64)
    placed = node_offset[:-1].astype(np.int64)  # each tree's next position
    # a level's nodes: the trees in order, each tree's in the order of their parents
    frontier, tree, depth, visits = node_offset[:-1].astype(np.int64), np.arange(n_trees), 0, 0
    while frontier.shape[0]:
        if np.any(position[frontier] >= 0):
            raise InvalidTreeError("a tree's children form a cycle; its arrays are corrupt")
        count = np.bincount(tree, minlength=n_trees)
        run_start = np.cumsum(count) - count  # where each tree's nodes start in the frontier
        position[frontier] = placed[tree] + np.arange(frontier.shape[0]) - run_start[tree]
        level[frontier] = depth
        placed += count
        visits += frontier.shape[0]
        if visits > n_nodes:  # a node twice in one level: stop before the level after doubles
            break
        internal = children_left[frontier] >= 0
        parents = frontier[internal]
        frontier = np.empty(2 * parents.shape[0], dtype=np.int64)
        frontier[0::2] = children_left[parents] + shift[parents]
        frontier[1::2] = children_right[parents] + shift[parents]
        tree = np.repeat(tree[internal], 2)
        depth += 1
    if visits != np.count_nonzero(position >= 0):
        raise InvalidTreeError("a node is the child of two parents; the trees' arrays are corrupt")
    return position, level


def sums_to_root(parent: np.ndarray, edge: np.ndarray) -> np.ndarray:
    """Per node, the sum of ``edge`` over the edges from it up to its root
    (``edge[v]``: the edge from ``v`` to ``parent[v]``; ``parent`` is -1 at a
    root, whose own entry is not read). By pointer jumping: each round, every
    node adds the sum of the node it has reached and jumps to where that one
    had reached, so a tree of depth ``d`` takes about ``log2(d)`` numpy passes
    rather than a Python step per node or per level."""
    ancestor = np.array(parent, dtype=np.int64)
    total = np.where(ancestor >= 0, edge, 0)  # the edges between a node and the ancestor it has reached
    pending = np.flatnonzero(ancestor >= 0)
    while pending.size:
        above = ancestor[pending]
        total[pending] += total[above]  # reads values of the previous round: above's own
        ancestor[pending] = ancestor[above]  # entries change only after this line
        pending = pending[ancestor[pending] >= 0]
    return total


def stacked_node_depths(trees) -> tuple[np.ndarray, np.ndarray]:
    """Node offsets of the trees stacked end to end (:func:`node_offsets`),
    and the depth of every stacked node (:func:`sums_to_root` of ones)."""
    offsets = node_offsets(trees)
    sizes = np.diff(offsets)
    left = np.concatenate([tree.children_left for tree in trees])
    right = np.concatenate([tree.children_right for tree in trees])
    shift = np.repeat(offsets[:-1], sizes)
    internal = np.flatnonzero(left != TREE_LEAF)
    ancestor = np.full(offsets[-1], -1, dtype=np.int64)
    ancestor[left[internal] + shift[internal]] = internal
    ancestor[right[internal] + shift[internal]] = internal
    return offsets, sums_to_root(ancestor, np.ones(offsets[-1], dtype=np.int64))


def node_depth(tree: TreeArrays) -> np.ndarray:
    """Depth of every node (root 0)."""
    return stacked_node_depths([tree])[1]


def node_parent(tree: TreeArrays) -> np.ndarray:
    """Parent of every node, ``-1`` at the root."""
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    parent[tree.children_left[internal]] = internal
    parent[tree.children_right[internal]] = internal
    return parent


def subtree_sums(tree: TreeArrays, values) -> np.ndarray:
    """Per node, the sum of ``values`` (one row per node, any trailing shape)
    over the node and all its descendants: subtree sizes from ones, class
    counts of the rows reaching each node from the counts at the leaves.
    Summed level by level from the deepest (``parent + (left + right)``), in
    the dtype of ``values``."""
    totals = np.array(values, copy=True)
    if totals.shape[0] != tree.n_nodes:
        raise ValueError(f"values must have one row per node ({tree.n_nodes}), got {totals.shape[0]}")
    left, right = tree.children_left, tree.children_right
    internal = left != TREE_LEAF
    depth = node_depth(tree)
    for level in range(int(depth.max()) - 1, -1, -1):
        parents = np.flatnonzero((depth == level) & internal)
        totals[parents] += totals[left[parents]] + totals[right[parents]]
    return totals


def subtree_nodes(tree: TreeArrays, node: int) -> np.ndarray:
    """Ids of ``node`` and all its descendants, in increasing order."""
    stack, found = [int(node)], []
    while stack:
        current = stack.pop()
        found.append(current)
        if tree.children_left[current] != TREE_LEAF:
            stack.append(int(tree.children_left[current]))
            stack.append(int(tree.children_right[current]))
    return np.array(sorted(found), dtype=np.int64)


def validate(tree: TreeArrays, *, n_features: int | None = None, where: str = "tree") -> TreeArrays:
    """Check every invariant stated in the :class:`TreeArrays` docstring.

    Raises :class:`~bandit_tree_tools.exceptions.InvalidTreeError` naming the
    first broken invariant. Returns the tree, so calls can be chained.

    Parameters
    ----------
    tree : TreeArrays
    n_features : int, optional
        Features must be below it.
    where : str
        How the message names the tree ("tree 3 of the ensemble").

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> tree = btt.make_tree([1, -1, -1], [2, -1, -1], [3, -2, -2], [0.5, -2.0, -2.0], [0.0, -1.0, 1.0])
    >>> btt.validate(tree) is tree
    True
    >>> btt.validate(tree, n_features=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bandit_tree_tools.exceptions.InvalidTreeError: tree: node 0 splits on feature 3...
    """
    if not isinstance(tree, TreeArrays):
        raise InvalidTreeError(f"{where}: expected TreeArrays, got {type(tree).__name__}")
    n = tree.children_left.shape[0]
    if n == 0:
        raise InvalidTreeError(f"{where}: a tree needs at least one node (the root)")
    for name, (dtype, ndim) in FIELDS.items():
        array = getattr(tree, name)
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != ndim:
            got = f"{getattr(array, 'dtype', type(array).__name__)} with ndim {getattr(array, 'ndim', '?')}"
            raise InvalidTreeError(
                f"{where}: {name} must be a {np.dtype(dtype).name} array with ndim {ndim}, got {got}"
            )
        if array.shape[0] != n:
            raise InvalidTreeError(f"{where}: {name} has {array.shape[0]} entries, expected {n} (one per node)")
    if tree.category_left.shape != tree.category_right.shape:
        raise InvalidTreeError(f"{where}: category_left and category_right must have the same shape")
    left, right = tree.children_left, tree.children_right
    leaf = left == TREE_LEAF
    if np.any(leaf != (right == TREE_LEAF)):
        bad = int(np.flatnonzero(leaf != (right == TREE_LEAF))[0])
        raise InvalidTreeError(f"{where}: node {bad} has exactly one child; a node has two children or none")
    ids = np.arange(n)
    internal = ~leaf
    for name, child in (("children_left", left), ("children_right", right)):
        bad = internal & ((child <= ids) | (child >= n))
        if np.any(bad):
            node = int(np.flatnonzero(bad)[0])
            raise InvalidTreeError(
                f"{where}: node {node} has {name}={int(child[node])}; children must have larger ids than "
                f"their parent and be < {n}"
            )
    parents = np.bincount(np.concatenate([left[internal], right[internal]]), minlength=n)
    expected = np.ones(n, dtype=np.int64)
    expected[0] = 0
    if np.any(parents != expected):
        node = int(np.flatnonzero(parents != expected)[0])
        raise InvalidTreeError(f"{where}: node {node} has {int(parents[node])} parents, expected {int(expected[node])}")
    if np.any(tree.feature[internal] < 0):
        node = int(np.flatnonzero(internal & (tree.feature < 0))[0])
        raise InvalidTreeError(f"{where}: internal node {node} has feature {int(tree.feature[node])}")
    if n_features is not None and np.any(tree.feature[internal] >= n_features):
        node = int(np.flatnonzero(internal & (tree.feature >= n_features))[0])
        raise InvalidTreeError(
            f"{where}: node {node} splits on feature {int(tree.feature[node])}, but there are {n_features} features"
        )
    numeric = internal & (tree.is_categorical == 0)
    if np.any(np.isnan(tree.threshold[numeric])):
        node = int(np.flatnonzero(numeric & np.isnan(tree.threshold))[0])
        raise InvalidTreeError(f"{where}: node {node} has a NaN threshold")
    if np.any(tree.missing_type > MISSING_ZERO_OR_NAN):
        raise InvalidTreeError(f"{where}: missing_type must be 0, 1 or 2")
    if np.any(tree.category_left & tree.category_right):
        node = int(np.flatnonzero(np.any(tree.category_left & tree.category_right, axis=1))[0])
        raise InvalidTreeError(f"{where}: node {node} sends a category both left and right")
    if tree.value.shape[1] < 1:
        raise InvalidTreeError(f"{where}: value needs at least one column")
    if not np.all(np.isfinite(tree.value[leaf])):
        node = int(np.flatnonzero(leaf & ~np.all(np.isfinite(tree.value), axis=1))[0])
        raise InvalidTreeError(f"{where}: leaf {node} has a non-finite value")
    if np.any(tree.has_leaf_value[leaf] != 1):
        raise InvalidTreeError(f"{where}: has_leaf_value must be 1 at every leaf")
    counts = tree.n_node_samples
    known = (
        internal
        & (counts >= 0)
        & (counts[np.where(internal, left, 0)] >= 0)
        & (counts[np.where(internal, right, 0)] >= 0)
    )
    sums = counts[np.where(internal, left, 0)] + counts[np.where(internal, right, 0)]
    if np.any(known & (sums != counts)):
        node = int(np.flatnonzero(known & (sums != counts))[0])
        raise InvalidTreeError(
            f"{where}: node {node} has n_node_samples={int(counts[node])}, but its children have {int(sums[node])}"
        )
    return tree
