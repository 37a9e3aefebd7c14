"""Bandit pruning ("Multi-Armed Bandits-Based Optimization of Decision Trees").

Arms are internal nodes; pulling an arm collapses that node into a leaf on a
fresh random evaluation subset of the validation rows and compares the score
with the current model on the same subset (Algorithm 2, lines 7-18). After
the rounds, the arms are ranked and the best prefix of the ranking is pruned
(lines 20-27).

How the paper's ambiguities are resolved (Algorithms 1 and 2 of the paper):

* Candidates. Algorithm 1 says "no children and depth > 3", which would
  select leaves. Arms are internal nodes at depth >= ``min_depth`` (root
  depth 0, so 4 by default, "beyond level three"): ``candidates="twigs"``
  (both children are leaves, the reduced-error-pruning set; never nested)
  or ``"internal"`` (every internal node; nested arms are handled below).
  Nodes whose collapsed value the model does not store (``has_leaf_value ==
  0``, e.g. GradientBoosting with a non-squared loss) are not arms.
* Evaluation data. "0.02% of the training data" is less than one row on the
  paper's data sets, and training purity always argues against pruning.
  Rewards come from ``eval_size`` rows drawn without replacement from the
  validation set, afresh every round.
* Score. ``S = a*accuracy + g*F1 - b*logloss/-log(1e-15)``: probabilities are
  clipped at 1e-15, so the per-row log-loss is at most ``-log(1e-15)``; dividing
  by it is the "scaled logarithmic loss [0, 1]". F1 is the positive class's
  (``classes_[1]``) for binary tasks and macro-F1 otherwise. Regression (not in
  the paper): ``S = 1 - MSE / Var(y_val)``, so ``dS`` is the decrease of the MSE
  in units of the target's variance; ``weights`` do not apply.
* Rewards (equations 2 and 3). UCB1, KL-UCB, WSLS, Softmax and epsilon-greedy
  get ``clip((reward_threshold + dS) / reward_scale, 0, 1)`` where the default
  ``reward_scale = reward_threshold + sum(|weights|)`` (``+ 1`` for regression)
  is the smallest constant that bounds the reward by 1 for every possible dS.
  Thompson sampling and Bayes-UCB get the Bernoulli reward ``1[dS > 0]``.
  ``|dS| < 1e-12`` counts as 0 (round-off of unchanged predictions).
* Ranking. "Prune c lowest-ranked branches": arms are ranked by estimated
  reward, best first; ties (common with Bernoulli rewards) are broken by the
  mean score change, then by arm order. Arms never pulled come last.
* Final step. For c = 0, 1, ..., prune the c best-ranked non-nested arms
  (an arm inside or above an already chosen arm is skipped), score on the
  whole validation set and keep the best, preferring more pruning on ties
  (Algorithm 2, line 24 uses ``>=``). c = 0, the unpruned model, competes too:
  the paper starts from ``P_B = -100``, which would force at least one prune
  even when every prune hurts.
* ``strategy="sequential"`` (our addition): run the rounds, commit the best
  ranked arm if the validation score does not drop, recompute the arms (new
  twigs appear as their children are pruned) and repeat until the best arm
  would lower the score or no arm is left. ``n_rounds`` is then per phase.
* ``callback`` (our addition): called after every round with a
  :class:`BanditRound`; returning True stops the rounds there (the same rule
  as :func:`bandit_tree_tools.prune`'s callback). The phase under way is then
  finished with the rounds already played (ranked, best prefix or best arm
  committed, as without a stop) and no new phase starts; nothing is replayed.
"""

import time
import warnings

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .._side_compile import compiling_beside
from .._validation import Interval, Options, check_random_state, validate_params
from ..bandits import Policy, WinStayLoseShift, make_policy
from ..exceptions import ParameterError
from ._common import eval_rows as eval_rows_of
from ._common import finish, prepare
from ._evaluator import IncrementalEvaluator
from ._inputs import callback_stops

CANDIDATES = ("twigs", "internal")
STRATEGIES = ("rank", "sequential")
ZERO_DELTA = 1e-12
# Scores are sums of floats accumulated in varying order; differences below this
# are round-off, so comparisons of scores treat them as ties.
TIE = 1e-12


# what each parameter of bandit_prune accepts (policy: make_policy; eval_size:
# the shared eval_rows rule; weights: the evaluator)
CONSTRAINTS = {
    "policy": [str, Policy],
    "eval_size": [Interval(int, 1, None), Interval(float, 0, None, "neither")],
    "weights": ["array-like"],
    "n_rounds": [Interval(int, 1, None)],
    "min_depth": [Interval(int, 0, None)],
    "candidates": [Options(CANDIDATES)],
    "strategy": [Options(STRATEGIES)],
    "reward_threshold": [Interval(float, None, None)],
    "reward_scale": [None, Interval(float, 0, None, "neither")],
    "policy_params": [None, dict],
    "random_state": ["random_state"],
    "progress": ["boolean"],
    "callback": [None, callable],
}


class _Rewards:
    """The paper's reward functions (equations 2 and 3)."""

    def __init__(self, family: str, threshold: float, scale: float):
        self.bernoulli = family == "bernoulli"
        self.threshold, self.scale = threshold, scale

    def __call__(self, delta: float) -> float:
        if abs(delta) < ZERO_DELTA:
            delta = 0.0
        if self.bernoulli:
            return 1.0 if delta > 0.0 else 0.0
        return min(max((self.threshold + delta) / self.scale, 0.0), 1.0)

    @property
    def neutral(self) -> float:
        """Reward of a pull that leaves the score unchanged."""
        return self(0.0)


def _rank(pulls, mean_reward, mean_delta) -> np.ndarray:
    """Arm indices, best first: pulled arms by mean reward, then mean score
    change, then index; arms never pulled last."""
    index = np.arange(len(pulls))
    # rounded so that equal score changes summed in another order still tie
    return np.lexsort((index, -np.round(mean_delta, 10), -mean_reward, pulls == 0))


def _non_nested(order, arm_tree, arm_node, evaluator: IncrementalEvaluator) -> list:
    """Arms of ``order`` (in that order) skipping any arm nested with one kept before."""
    covered = {}
    kept = []
    for arm in order:
        tree, node = int(arm_tree[arm]), int(arm_node[arm])
        position, end = evaluator.preorder[tree][node], evaluator.preorder_end[tree][node]
        mask = covered.setdefault(tree, np.zeros(len(evaluator.preorder[tree]), dtype=bool))
        # covered positions are whole chosen subtrees: any covered position in this
        # node's range means a chosen arm lies below it, or it lies below one
        if mask[position:end].any():
            continue
        mask[position:end] = True
        kept.append(int(arm))
    return kept


class BanditRound:
    """The state of a :func:`bandit_prune` run after one round, passed to its
    ``callback``.

    Attributes
    ----------
    round : int
        Rounds played so far in the whole call, minus one (0 after the first).
    phase : int
        0 for ``strategy="rank"``; the phase (one per committed arm) for
        ``strategy="sequential"``, whose arms are renumbered every phase.
    arm : int
        The arm pulled, numbered within the phase (0 .. ``n_arms`` - 1).
    tree, node : int
        The node the arm collapses.
    reward, score_delta : float
        The reward the policy got and the score change of the pull.
    n_arms : int
        Arms of the phase.
    pulls, mean_rewards : arrays (n_arms,)
        Per-arm pulls and mean rewards of the phase so far (copies, made when
        read).
    pruned_nodes : dict of {tree: int64 array}
        Nodes committed so far (only ``strategy="sequential"`` commits
        before the end), in ``PruneResult.pruned_nodes``' form.
    warnings : tuple of str
        The messages this call has warned so far.
    """

    __slots__ = (
        "round",
        "phase",
        "arm",
        "tree",
        "node",
        "reward",
        "score_delta",
        "n_arms",
        "_policy",
        "_evaluator",
        "warnings",
    )

    def __init__(self, round, phase, arm, tree, node, reward, score_delta, n_arms, policy, evaluator, warnings):
        self.round, self.phase, self.arm, self.tree, self.node = round, phase, arm, tree, node
        self.reward, self.score_delta, self.n_arms = reward, score_delta, n_arms
        self._policy, self._evaluator, self.warnings = policy, evaluator, warnings

    @property
    def pulls(self) -> np.ndarray:
        return self._policy.counts_.copy()

    @property
    def mean_rewards(self) -> np.ndarray:
        return np.array(self._policy.means_, dtype=np.float64)

    @property
    def pruned_nodes(self) -> dict:
        return self._evaluator.collapsed_nodes()

    def __repr__(self) -> str:
        return (
            f"BanditRound(round={self.round}, phase={self.phase}, arm={self.arm}, tree={self.tree}, "
            f"node={self.node}, reward={self.reward:.4g}, score_delta={self.score_delta:+.4g})"
        )


class _Arms:
    """Per-arm bookkeeping of one phase, kept by (tree, node)."""

    def __init__(self, trees, nodes, depths):
        self.tree, self.node, self.depth = trees, nodes, depths
        self.delta_sum = np.zeros(len(trees))


def _run_rounds(
    evaluator, arms, policy, rewards, n_rounds, eval_rows, rng, history, phase, progress, callback=None, notes=()
):
    """Play the rounds of one phase; True if ``callback`` asked to stop."""
    n_arms = len(arms.tree)
    stopped = False
    policy.start(n_arms, random_state=rng)
    in_subset = evaluator.in_subset
    iterator = range(n_rounds)
    if progress:
        iterator = tqdm(iterator, desc="bandit pruning" if phase == 0 else f"phase {phase}", leave=phase == 0)
    for _ in iterator:
        rows = rng.choice(evaluator.n_rows, eval_rows, replace=False)
        in_subset[:] = False
        in_subset[rows] = True
        base = evaluator.stats(rows)
        current = evaluator.score_stats(base)
        arm = policy.select()
        tree, node = int(arms.tree[arm]), int(arms.node[arm])
        delta = evaluator.score_stats(evaluator.pulled_stats(tree, node, base, in_subset)) - current
        reward = rewards(delta)
        policy.update(arm, reward)
        arms.delta_sum[arm] += delta
        history.append((len(history), phase, arm, tree, node, reward, delta))
        if callback is not None:
            state = BanditRound(
                len(history) - 1,
                phase,
                int(arm),
                tree,
                node,
                float(reward),
                float(delta),
                n_arms,
                policy,
                evaluator,
                tuple(notes),
            )
            if callback_stops(callback(state)):
                stopped = True
                break
    if progress:
        iterator.close()
    in_subset[:] = False
    means = policy.means_
    mean_delta = np.divide(arms.delta_sum, policy.counts_, out=np.zeros(n_arms), where=policy.counts_ > 0)
    return policy.counts_.copy(), means, mean_delta, stopped


@validate_params(CONSTRAINTS, data=("model", "X_val", "y_val"))
@compiling_beside("bandit_prune")  # a fresh environment's first call: a second core compiles too
def bandit_prune(
    model,
    X_val,
    y_val,
    *,
    policy="ucb1",
    n_rounds: int = 1100,
    eval_size=0.5,
    candidates: str = "twigs",
    min_depth: int = 4,
    weights=(1.0, 2.5, 1.0),
    reward_threshold: float = 0.05,
    reward_scale: float | None = None,
    strategy: str = "rank",
    policy_params: dict | None = None,
    random_state=None,
    progress: bool = True,
    callback=None,
):
    """Prune a tree model with a multi-armed bandit.

    Parameters
    ----------
    model : Ensemble or fitted scikit-learn / LightGBM / XGBoost model
        Never modified.
    X_val, y_val : validation data (never the training data)
    policy : str or bandit_tree_tools.bandits.Policy
        "ucb1", "kl_ucb", "thompson", "bayes_ucb", "softmax", "wsls",
        "epsilon_greedy", or a policy object.
    n_rounds : int
        Bandit rounds (per phase with ``strategy="sequential"``).
    eval_size : float in (0, 1] or int
        Validation rows drawn (without replacement) each round.
    candidates : {"twigs", "internal"}
    min_depth : int
        Nodes shallower than this are not arms (root depth 0).
    weights : (accuracy, F1, log-loss) weights of the score.
    reward_threshold, reward_scale : equation 2 of the paper.
    strategy : {"rank", "sequential"}
    policy_params : dict
        Extra constructor arguments of the named policy.
    random_state : int, RandomState, Generator or None
        The library's one rule (``bandit_tree_tools._validation.check_random_state``).
    progress : bool
        Show a tqdm progress bar.
    callback : callable, optional
        Called after every round with a :class:`BanditRound` (round, phase,
        arm, tree, node, reward, score_delta, per-arm pulls and mean rewards,
        the nodes committed so far, the messages warned so far). A return
        value of True stops the rounds there: the phase under way is
        finished with the rounds played (nothing is replayed) and the result
        is returned, with ``params["stopped"]`` True. Any other return value
        goes on. It runs in the caller's thread, between rounds.

    Returns
    -------
    PruneResult
        ``params`` holds the arguments, ``eval_rows`` (rows drawn per round),
        ``stopped`` (the callback stopped the run) and ``warnings`` (the
        messages this call warned, also issued with :func:`warnings.warn`:
        a caller running it in a thread reads them here instead of catching
        warnings process-wide).

    Raises
    ------
    ParameterError
        A parameter has the wrong type or value.
    DataError
        The validation data do not fit the model (or hold fewer rows than
        ``eval_size``).

    See the module docstring for how the paper's ambiguities are resolved.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(random_state=0).fit(X[:200], y[:200])
    >>> result = btt.bandit_prune(model, X[200:], y[200:], n_rounds=200, min_depth=2,
    ...                           random_state=0, progress=False)
    >>> result.ensemble.n_leaves <= result.original.n_leaves
    True

    Stop after 50 rounds (the result keeps what those rounds found):

    >>> stopped = btt.bandit_prune(model, X[200:], y[200:], n_rounds=10_000, min_depth=2, random_state=0,
    ...                            progress=False, callback=lambda state: state.round + 1 >= 50)
    >>> len(stopped.history), stopped.params["stopped"]
    (50, True)
    """
    started = time.perf_counter()
    if not np.isfinite(reward_threshold) or (reward_scale is not None and not np.isfinite(reward_scale)):
        raise ParameterError(
            f"reward_threshold and reward_scale of bandit_prune must be finite, got "
            f"{reward_threshold!r} and {reward_scale!r}"
        )
    bandit = make_policy(policy, **(policy_params or {}))
    ensemble, X, target, evaluator = prepare(model, X_val, y_val, weights)
    eval_rows = eval_rows_of(eval_size, evaluator.n_rows)
    weights = evaluator.weights
    rewards, reward_scale = _rewards(bandit, policy, reward_threshold, reward_scale, weights, target)
    params = dict(
        policy=bandit.name,
        n_rounds=n_rounds,
        eval_size=eval_size,
        eval_rows=eval_rows,
        candidates=candidates,
        min_depth=min_depth,
        weights=weights,
        reward_threshold=reward_threshold,
        reward_scale=reward_scale,
        strategy=strategy,
        random_state=random_state,
        stopped=False,
    )
    notes = []
    params["warnings"] = notes  # the list the run appends to (a tuple in the result)

    def warn(message):
        notes.append(message)
        warnings.warn(message, UserWarning, stacklevel=5)  # past bandit_prune, compiling_beside and validate_params

    rng = check_random_state(random_state)
    history = []
    trees, nodes, depths, excluded = evaluator.arms(candidates, min_depth)
    if excluded:
        warn(
            f"{excluded} candidate nodes are not arms: the {ensemble.source.library} model does not store the "
            "value they would have as leaves"
        )
    if len(trees) == 0:
        warn(
            f"no arm to pull: no {'twig' if candidates == 'twigs' else 'internal node'} at depth >= {min_depth} "
            f"(the model's max depth is {ensemble.max_depth}); returning the unpruned model. Lower min_depth"
            + (" or use candidates='internal'" if candidates == "twigs" else "")
        )
        params["warnings"] = tuple(notes)
        return finish(
            "bandit",
            ensemble,
            X,
            target,
            evaluator,
            weights,
            started,
            params=params,
            history=_history_frame(history, {}),
            arms=_arms_frame({}, evaluator, ensemble),
            path=pd.DataFrame({"n_pruned": [0], "score": [evaluator.score()]}),
        )

    totals = {}  # (tree, node) -> [depth, pulls, reward sum, delta sum, rank, pruned]

    def play(arms, phase):  # the rounds of one phase over ``arms``
        return _run_rounds(
            evaluator, arms, bandit, rewards, n_rounds, eval_rows, rng, history, phase, progress, callback, notes
        )

    if strategy == "rank":
        path, stopped = _rank_and_prune(evaluator, _Arms(trees, nodes, depths), play, totals)
    else:
        path, stopped = _prune_one_by_one(evaluator, (trees, nodes, depths), play, totals, candidates, min_depth)
    params["stopped"] = bool(stopped)
    params["warnings"] = tuple(notes)
    return finish(
        "bandit",
        ensemble,
        X,
        target,
        evaluator,
        weights,
        started,
        params=params,
        history=_history_frame(history, totals),
        arms=_arms_frame(totals, evaluator, ensemble),
        path=path,
    )


def _rewards(bandit, policy, reward_threshold, reward_scale, weights, target) -> tuple:
    """Equation 2's rewards for ``bandit``: the scale defaults to the threshold
    plus the largest score change (the weights' sum for classifiers); a named
    win-stay-lose-shift policy counts a pull that improved the score as a win.
    Returns the rewards and the scale."""
    if reward_scale is None:
        reward_scale = reward_threshold + (sum(abs(w) for w in weights) if target.n_classes else 1.0)
    if not reward_scale > 0:
        raise ParameterError(
            f"reward_scale of bandit_prune must be > 0, got {reward_scale} (from reward_threshold "
            f"{reward_threshold} and the weights {weights})"
        )
    rewards = _Rewards(bandit.reward_family, float(reward_threshold), float(reward_scale))
    if isinstance(bandit, WinStayLoseShift) and not isinstance(policy, Policy):
        bandit.win_threshold = rewards.neutral  # a win = the pull improved the score
    return rewards, reward_scale


def _rank_and_prune(evaluator, arms, play, totals) -> tuple:
    """``strategy="rank"``: one phase of rounds ranks every arm; the ranked
    arms that do not nest are pruned in order, up to the best-scoring prefix.
    Returns the path of scores by arms pruned and whether the callback
    stopped the rounds."""
    pulls, means, mean_delta, stopped = play(arms, 0)
    order = _rank(pulls, means, mean_delta)
    _accumulate(totals, arms, pulls, means, order)
    chosen = _non_nested(order, arms.tree, arms.node, evaluator)
    path = _best_prefix(evaluator, arms, chosen)
    for arm in chosen[: path.attrs["chosen"]]:
        totals[(int(arms.tree[arm]), int(arms.node[arm]))][5] = True
    return path, stopped


def _prune_one_by_one(evaluator, candidate_arms, play, totals, candidates, min_depth) -> tuple:
    """``strategy="sequential"``: a phase of rounds per pruned node; each
    phase prunes its best arm unless that lowers the score, and the next
    phase plays the arms of the tree as pruned so far. Returns the path of
    scores and whether the callback stopped the rounds."""
    trees, nodes, depths = candidate_arms
    scores, phase, stopped = [evaluator.score()], 0, False
    while len(trees):
        arms = _Arms(trees, nodes, depths)
        pulls, means, mean_delta, stopped = play(arms, phase)
        order = _rank(pulls, means, mean_delta)
        _accumulate(totals, arms, pulls, means, order)
        best = int(order[0])
        snapshot = evaluator.snapshot()
        evaluator.commit(int(arms.tree[best]), int(arms.node[best]))
        score = evaluator.score()
        if score < scores[-1] - TIE:
            evaluator.restore(snapshot)
            break
        scores.append(score)
        totals[(int(arms.tree[best]), int(arms.node[best]))][5] = True
        if stopped:
            break
        phase += 1
        trees, nodes, depths, _ = evaluator.arms(candidates, min_depth)
    return pd.DataFrame({"n_pruned": np.arange(len(scores)), "score": scores}), stopped


def _accumulate(totals, arms, pulls, means, order):
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    for arm in range(len(arms.tree)):
        key = (int(arms.tree[arm]), int(arms.node[arm]))
        entry = totals.setdefault(key, [int(arms.depth[arm]), 0, 0.0, 0.0, 0, False])
        entry[1] += int(pulls[arm])
        entry[2] += float(means[arm]) * int(pulls[arm])
        entry[3] += float(arms.delta_sum[arm])
        entry[4] = int(rank[arm])  # rank in the latest phase that offered the arm


def _best_prefix(evaluator: IncrementalEvaluator, arms: _Arms, chosen: list) -> pd.DataFrame:
    """Algorithm 2, lines 20-27, with c = 0 included; commits the best prefix."""
    snapshot = evaluator.snapshot()
    scores = [evaluator.score()]
    best_score, best_c = scores[0], 0
    for c, arm in enumerate(chosen, start=1):
        evaluator.commit(int(arms.tree[arm]), int(arms.node[arm]))
        score = evaluator.score()
        scores.append(score)
        if score >= best_score - TIE:  # ties go to more pruning (Algorithm 2, line 24)
            best_score, best_c = max(score, best_score), c
    evaluator.restore(snapshot)
    for arm in chosen[:best_c]:
        evaluator.commit(int(arms.tree[arm]), int(arms.node[arm]))
    path = pd.DataFrame({"n_pruned": np.arange(len(scores)), "score": scores})
    path.attrs["chosen"] = best_c
    return path


def _history_frame(history, totals) -> pd.DataFrame:
    """One row per round; ``arm`` is the row of the arms table (arms are
    numbered by (tree, node) over all phases)."""
    columns = ["round", "phase", "arm", "tree", "node", "reward", "score_delta"]
    frame = pd.DataFrame.from_records(history, columns=columns)
    number = {key: arm for arm, key in enumerate(sorted(totals))}
    frame["arm"] = [number[(tree, node)] for tree, node in zip(frame["tree"], frame["node"])]
    for name in columns[:5]:
        frame[name] = frame[name].astype(np.int64)
    return frame


def _arms_frame(totals, evaluator, ensemble) -> pd.DataFrame:
    records = []
    for arm, ((tree, node), (depth, pulls, reward_sum, delta_sum, rank, pruned)) in enumerate(sorted(totals.items())):
        records.append(
            dict(
                arm=arm,
                tree=tree,
                node=node,
                depth=depth,
                samples=int(ensemble.trees[tree].n_node_samples[node]),
                val_rows=int(evaluator.row_stop[tree][node] - evaluator.row_start[tree][node]),
                pulls=pulls,
                mean_reward=reward_sum / pulls if pulls else 0.0,
                mean_score_delta=delta_sum / pulls if pulls else 0.0,
                rank=rank,
                pruned=bool(pruned),
            )
        )
    columns = [
        "arm",
        "tree",
        "node",
        "depth",
        "samples",
        "val_rows",
        "pulls",
        "mean_reward",
        "mean_score_delta",
        "rank",
        "pruned",
    ]
    return pd.DataFrame.from_records(records, columns=columns)
