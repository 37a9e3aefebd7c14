"""Minimal cost-complexity pruning (Breiman et al. 1984) for any imported tree.

The impurities are computed from data: the training rows are routed through
each tree, so the path exists for LightGBM or XGBoost trees as well as for
scikit-learn's (for a scikit-learn tree and its own training data, the path
equals ``cost_complexity_pruning_path``). The pruning parameter alpha is then
chosen on validation data. Collapsed nodes output their stored value (the
model's own leaf value for that node), not a value re-estimated from data.
"""

import time

import numpy as np
import pandas as pd

from .._kernels_inline import zeros
from .._numba_config import kernel
from .._validation import Options, validate_params
from ..exceptions import DataError, ParameterError, UnsupportedModelError
from ..tree import Ensemble, node_parent, subtree_sums
from ..tree._impurity import impurity_of_counts
from ._common import finish, prepare
from ._inputs import check_target, to_ensemble
from ._metrics import SCORINGS, check_weights

CRITERIA = ("gini", "entropy", "log_loss", "squared_error")

# what the parameters of cost_complexity_path / cost_complexity_prune accept (_validation.check_params)
PATH_CONSTRAINTS = {"criterion": [Options(CRITERIA), None]}
PRUNE_CONSTRAINTS = {**PATH_CONSTRAINTS, "scoring": [Options(SCORINGS)], "weights": ["array-like"]}


def _node_statistics(tree, leaves, target):
    """Per node: weight (rows) and impurity of the training rows reaching it."""
    n = tree.n_nodes
    if target.n_classes:
        counts = np.zeros((n, target.n_classes))
        np.add.at(counts, (leaves, target.codes), 1.0)
    else:
        counts = np.zeros((n, 3))
        np.add.at(counts, (leaves, 0), 1.0)
        np.add.at(counts, (leaves, 1), target.values)
        np.add.at(counts, (leaves, 2), target.values**2)
    return subtree_sums(tree, counts)  # the rows sit at leaves: a node's are its subtree's


@kernel
def _weakest_link_path(children_left, children_right, parent, r_node):
    """Weakest-link pruning: repeatedly collapse the internal node with the
    smallest ``(R(node) - R(branch)) / (leaves(branch) - 1)`` (the lowest id
    among ties) until the root is a leaf. Returns the collapsed node of
    each step, its effective alpha and the tree's total impurity after it
    (entry 0: the unpruned tree, alpha 0, node -1)."""
    n = children_left.shape[0]
    leaves = zeros(n, np.int64)
    r_branch = zeros(n, np.float64)
    for node in range(n - 1, -1, -1):
        if children_left[node] == -1:
            leaves[node] = 1
            r_branch[node] = r_node[node]
        else:
            leaves[node] = leaves[children_left[node]] + leaves[children_right[node]]
            r_branch[node] = r_branch[children_left[node]] + r_branch[children_right[node]]
    candidate = children_left != -1
    steps_node = [-1]
    steps_alpha = [0.0]
    steps_impurity = [r_branch[0]]
    while candidate[0]:
        best, best_alpha = -1, np.inf
        for node in range(n):
            if candidate[node]:
                alpha = (r_node[node] - r_branch[node]) / (leaves[node] - 1)
                if alpha < best_alpha:
                    best, best_alpha = node, alpha
        # descendants of the collapsed node are no longer candidates
        stack = [best]
        while len(stack):
            node = stack.pop()
            candidate[node] = False
            if children_left[node] != -1:
                stack.append(children_left[node])
                stack.append(children_right[node])
        removed = leaves[best] - 1
        increase = r_node[best] - r_branch[best]
        leaves[best] = 1
        r_branch[best] = r_node[best]
        node = parent[best]
        while node != -1:
            leaves[node] -= removed
            r_branch[node] += increase
            node = parent[node]
        steps_node.append(best)
        steps_alpha.append(best_alpha)
        steps_impurity.append(r_branch[0])
    return np.array(steps_node), np.array(steps_alpha), np.array(steps_impurity)


def _check_criterion(criterion, ensemble: Ensemble):
    if criterion is None:
        return "gini" if ensemble.task == "classification" else "squared_error"
    allowed = CRITERIA[:3] if ensemble.task == "classification" else CRITERIA[3:]
    if criterion not in allowed:
        raise ParameterError(f"criterion for a {ensemble.task} model must be one of {allowed}, got {criterion!r}")
    return criterion


def _refuse_boosted(ensemble: Ensemble):
    if ensemble.aggregation == "sum" and ensemble.n_trees > 1:
        raise UnsupportedModelError(
            f"cost-complexity pruning needs trees whose leaves predict the target (a single tree or an averaged "
            f"forest); this {ensemble.source.library} {ensemble.source.estimator} sums {ensemble.n_trees} boosted "
            "trees fitted to gradients, whose label impurity is no cost of theirs. Use bandit_prune or "
            "reduced_error_prune instead"
        )


@validate_params(PATH_CONSTRAINTS, data=("model", "X_train", "y_train"))
def cost_complexity_path(model, X_train, y_train, *, criterion=None) -> list:
    """The minimal cost-complexity pruning path of every tree, from data.

    Returns one dict per tree with ``ccp_alphas`` and ``impurities`` (as
    scikit-learn's ``cost_complexity_pruning_path``) and ``nodes``: the node
    collapsed at each step (-1 for the unpruned tree).

    Parameters
    ----------
    model : Ensemble or fitted model (never modified)
    X_train, y_train : the training rows
    criterion : {"gini", "entropy", "log_loss", "squared_error"}, optional
        Default: "gini" for classifiers, "squared_error" for regressors.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> (path,) = btt.cost_complexity_path(model, X[:200], y[:200])
    >>> sorted(path)
    ['ccp_alphas', 'impurities', 'nodes']
    >>> sklearn_path = model.cost_complexity_pruning_path(X[:200], y[:200])
    >>> import numpy as np
    >>> bool(np.allclose(path["ccp_alphas"], sklearn_path.ccp_alphas))
    True
    """
    ensemble = to_ensemble(model)
    criterion = _check_criterion(criterion, ensemble)
    X = ensemble.check_X(X_train, name="X_train")
    if X.shape[0] == 0:
        raise DataError("X_train has no rows; the cost-complexity path is computed from training data")
    target = check_target(ensemble, y_train, X.shape[0], name="y_train")
    leaves = ensemble.apply(X, check_input=False)
    paths = []
    for index, tree in enumerate(ensemble.trees):
        weight, impurity = impurity_of_counts(_node_statistics(tree, leaves[:, index], target), criterion)
        r_node = weight * impurity / weight[0]
        nodes, alphas, impurities = _weakest_link_path(
            tree.children_left, tree.children_right, node_parent(tree), r_node
        )
        paths.append({"ccp_alphas": alphas, "impurities": impurities, "nodes": nodes})
    return paths


@validate_params(PRUNE_CONSTRAINTS, data=("model", "X_train", "y_train", "X_val", "y_val"))
def cost_complexity_prune(
    model,
    X_train,
    y_train,
    X_val,
    y_val,
    *,
    criterion=None,
    scoring: str = "score",
    weights=(1.0, 2.5, 1.0),
):
    """Cost-complexity pruning with alpha chosen on validation data.

    Every tree is pruned at the same alpha, as scikit-learn's ``ccp_alpha``
    does (for a forest, each tree follows its own path). Candidate alphas are
    the path's effective alphas; the one with the best validation score wins,
    the largest on ties (the simpler tree). ``scoring="score"`` uses the
    paper's performance (accuracy + 2.5 F1 - scaled log-loss with the default
    weights), ``"accuracy"`` plain accuracy; regression always uses R^2.

    Boosted ensembles are refused (UnsupportedModelError): their trees fit
    gradients, not the target.

    Parameters
    ----------
    model : Ensemble or fitted model (never modified)
    X_train, y_train : the rows the impurities (and so the path) come from
    X_val, y_val : the rows that choose alpha
    criterion : see :func:`cost_complexity_path`
    scoring : {"score", "accuracy"}
    weights : (accuracy, F1, log-loss) weights of the score

    Returns
    -------
    PruneResult
        ``method="cost_complexity"``; ``params["alpha"]`` is the chosen alpha,
        ``path`` the score of every candidate alpha.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    >>> result = btt.cost_complexity_prune(model, X[:200], y[:200], X[200:], y[200:])
    >>> result.method, result.ensemble.n_leaves
    ('cost_complexity', 3)
    >>> round(result.params["alpha"], 4)
    0.0285
    """
    started = time.perf_counter()
    weights = check_weights(weights)
    ensemble = to_ensemble(model)
    _refuse_boosted(ensemble)
    paths = cost_complexity_path(ensemble, X_train, y_train, criterion=criterion)
    select_weights = weights if scoring == "score" else (1.0, 0.0, 0.0)
    ensemble, X, target, evaluator = prepare(ensemble, X_val, y_val, select_weights)
    # (alpha, tree, step) of every pruning step, in the order the steps are applied
    steps = sorted(
        (float(alpha), tree, step)
        for tree, path in enumerate(paths)
        for step, alpha in enumerate(path["ccp_alphas"])
        if step > 0
    )
    unpruned = evaluator.snapshot()
    alphas = [0.0]
    scores = [evaluator.score()]
    n_pruned = [0]
    position = np.ones(len(paths), dtype=np.int64)  # next step of each tree's path
    done = 0
    index = 0
    while index < len(steps):
        alpha = steps[index][0]
        # scikit-learn prunes a tree while its next effective alpha is <= ccp_alpha
        for tree, path in enumerate(paths):
            while position[tree] < len(path["ccp_alphas"]) and path["ccp_alphas"][position[tree]] <= alpha:
                evaluator.commit(tree, int(path["nodes"][position[tree]]))
                position[tree] += 1
                done += 1
        while index < len(steps) and steps[index][0] <= alpha:
            index += 1
        alphas.append(alpha)
        scores.append(evaluator.score())
        n_pruned.append(done)
    scores = np.array(scores)
    best = int(np.flatnonzero(scores >= scores.max() - 1e-12)[-1])  # ties (up to round-off): the largest alpha
    chosen_alpha = alphas[best]
    evaluator.restore(unpruned)
    for tree, path in enumerate(paths):
        step = 1
        while step < len(path["ccp_alphas"]) and path["ccp_alphas"][step] <= chosen_alpha:
            evaluator.commit(tree, int(path["nodes"][step]))
            step += 1
    frame = pd.DataFrame({"alpha": alphas, "n_pruned": n_pruned, "score": scores})
    params = dict(criterion=_check_criterion(criterion, ensemble), scoring=scoring, weights=weights, alpha=chosen_alpha)
    return finish("cost_complexity", ensemble, X, target, evaluator, weights, started, params=params, path=frame)
