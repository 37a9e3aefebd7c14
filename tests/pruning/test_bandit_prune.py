"""bandit_prune: full-budget runs equal the exact strategies of the oracle,
determinism, result contents, bad input."""

import warnings

import numpy as np
import pytest

from bandit_tree_tools.bandits import POLICIES
from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.pruning import bandit_prune
from bandit_tree_tools.pruning._inputs import check_target
from bandit_tree_tools.tree import make_tree
from tests.oracles.pruning import exact_rank_prune, exact_sequential_prune, reference_arms, reference_score

from .models import model_zoo

ZOO = model_zoo()
WEIGHTS = (1.0, 2.5, 1.0)


def pruned_pairs(result):
    return sorted((tree, int(node)) for tree, nodes in result.pruned_nodes.items() for node in nodes)


def full_budget(name, candidates, min_depth, **kwargs):
    """Every arm pulled on every validation row: the rewards are exact."""
    ensemble, X, y = ZOO[name]
    n_arms = len(reference_arms(ensemble, candidates, min_depth))
    return bandit_prune(
        ensemble,
        X,
        y,
        eval_size=len(y),
        n_rounds=2 * n_arms,
        candidates=candidates,
        min_depth=min_depth,
        random_state=0,
        progress=False,
        **kwargs,
    )


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("candidates", ["twigs", "internal"])
def test_full_budget_equals_exact_ranking_for_every_policy(policy, candidates):
    ensemble, X, y = ZOO["tree_binary"]
    result = full_budget("tree_binary", candidates, 2, policy=policy)
    expected = exact_rank_prune(ensemble, X, y, candidates, 2, WEIGHTS)
    assert expected, "the test model must have something worth pruning"
    assert pruned_pairs(result) == expected


@pytest.mark.parametrize("name", ["forest_multiclass", "forest_regression", "boosted_binary", "boosted_softmax"])
def test_full_budget_equals_exact_ranking_across_trees(name):
    ensemble, X, y = ZOO[name]
    variance = check_target(ensemble, y, len(y)).variance
    result = full_budget(name, "internal", 2)
    assert pruned_pairs(result) == exact_rank_prune(ensemble, X, y, "internal", 2, WEIGHTS, variance)
    assert result.metrics.loc["after", "score"] >= result.metrics.loc["before", "score"] - 1e-12


@pytest.mark.parametrize(
    ("name", "candidates", "min_depth"),
    [("tree_binary", "twigs", 2), ("tree_binary", "internal", 3), ("forest_regression", "twigs", 4)],
)
def test_full_budget_sequential_equals_exact_greedy(name, candidates, min_depth):
    ensemble, X, y = ZOO[name]
    variance = check_target(ensemble, y, len(y)).variance
    n_arms = len(reference_arms(ensemble, candidates, min_depth))
    result = bandit_prune(
        ensemble,
        X,
        y,
        eval_size=len(y),
        n_rounds=n_arms,
        candidates=candidates,
        min_depth=min_depth,
        strategy="sequential",
        policy="thompson",
        random_state=1,
        progress=False,
    )
    expected = exact_sequential_prune(ensemble, X, y, candidates, min_depth, WEIGHTS, variance)
    assert len(expected) > 1, "the test model must have several things worth pruning"
    assert pruned_pairs(result) == expected
    assert np.all(np.diff(result.path["score"]) >= -1e-12)


def test_same_random_state_same_result_and_fresh_subsets():
    ensemble, X, y = ZOO["tree_binary"]

    def run(seed):
        return bandit_prune(
            ensemble,
            X,
            y,
            n_rounds=300,
            eval_size=40,
            min_depth=2,
            policy="thompson",
            random_state=seed,
            progress=False,
        )

    first, second, other = run(5), run(5), run(6)
    assert first.history.equals(second.history)
    assert pruned_pairs(first) == pruned_pairs(second)
    assert not first.history.equals(other.history)
    # the same arm gets different score changes on different random subsets
    spread = first.history.groupby("arm")["score_delta"].nunique()
    assert spread.max() > 3


def test_result_contents():
    ensemble, X, y = ZOO["tree_binary"]
    before = [array.copy() for array in ensemble.trees[0]]
    X_copy = X.copy()
    result = bandit_prune(
        ensemble, X, y, n_rounds=200, min_depth=2, candidates="internal", random_state=0, progress=False
    )
    for array, saved in zip(ensemble.trees[0], before):
        np.testing.assert_array_equal(array, saved)  # the model is never modified
    np.testing.assert_array_equal(X, X_copy)
    history, arms = result.history, result.arms
    assert len(history) == 200 and list(history["round"]) == list(range(200))
    assert history["reward"].between(0, 1).all()
    assert arms["pulls"].sum() == 200
    for row in arms.itertuples():
        pulls = history[history["arm"] == row.arm]
        assert row.pulls == len(pulls)
        assert row.mean_reward == pytest.approx(pulls["reward"].mean())
        assert row.samples == ensemble.trees[0].n_node_samples[row.node]
    assert set(arms.loc[arms["pruned"], "node"]) == set(result.pruned_nodes.get(0, []))
    assert result.metrics.loc["before", "score"] == pytest.approx(reference_score(ensemble, X, y))
    assert result.metrics.loc["after", "score"] == pytest.approx(reference_score(result.ensemble, X, y))
    assert result.metrics.loc["after", "leaves"] <= result.metrics.loc["before", "leaves"]
    assert result.path["score"].max() == pytest.approx(result.metrics.loc["after", "score"])
    text = repr(result)
    assert text.startswith("PruneResult(method='bandit'") and "before" in text and "log_loss" in text
    page = result._repr_html_()  # Jupyter's view: the first line and the metrics as an HTML table
    assert page.startswith("<pre>PruneResult(method=&#x27;bandit&#x27;") and page.count("<table") == 1
    axes = result.plot().axes
    assert len(axes) == 3 and axes[0].get_title() == "Reward per round"


def test_policy_object_and_parameters():
    from bandit_tree_tools.bandits import Softmax

    ensemble, X, y = ZOO["tree_binary"]
    by_name = bandit_prune(
        ensemble,
        X,
        y,
        n_rounds=100,
        min_depth=2,
        policy="softmax",
        policy_params={"temperature": 0.5},
        random_state=3,
        progress=False,
    )
    by_object = bandit_prune(
        ensemble, X, y, n_rounds=100, min_depth=2, policy=Softmax(temperature=0.5), random_state=3, progress=False
    )
    assert by_name.history.equals(by_object.history)


def test_bad_input():
    ensemble, X, y = ZOO["tree_binary"]
    with pytest.raises(DataError, match=r"labels the model never saw: 7"):
        bandit_prune(ensemble, X, np.where(np.arange(len(y)) == 3, 7, y), progress=False)
    with pytest.raises(DataError, match=r"eval_size=500 rows .* only 225 rows"):
        bandit_prune(ensemble, X, y, eval_size=500, progress=False)
    with pytest.raises(ValueError, match=r"valid policies are \['bayes_ucb', 'epsilon_greedy', 'kl_ucb'"):
        bandit_prune(ensemble, X, y, policy="ucb", progress=False)
    with pytest.raises(DataError, match="continuous values"):
        bandit_prune(ensemble, X, y + np.linspace(0.01, 0.5, len(y)), progress=False)
    with pytest.raises(DataError, match="X_val has 3 features, but the model was trained on 6"):
        bandit_prune(ensemble, X[:, :3], y, progress=False)
    with pytest.raises(DataError, match="225 rows, but X_val has 10; pass one target per row of X_val"):
        bandit_prune(ensemble, X[:10], y, progress=False)
    with pytest.raises(ParameterError, match="candidates of bandit_prune must be one of 'internal', 'twigs'"):
        bandit_prune(ensemble, X, y, candidates="leaves", progress=False)
    with pytest.raises(ParameterError, match="strategy of bandit_prune must be one of 'rank', 'sequential'"):
        bandit_prune(ensemble, X, y, strategy="greedy", progress=False)
    with pytest.raises(ParameterError, match=r"n_rounds of bandit_prune must be an int in \[1, inf\], got 0"):
        bandit_prune(ensemble, X, y, n_rounds=0, progress=False)
    with pytest.raises(ParameterError, match="random_state of bandit_prune must be"):
        bandit_prune(ensemble, X, y, random_state=-3, progress=False)
    with pytest.raises(
        ParameterError, match=r"eval_size must be an int in \[1, inf\] or a float in \(0.0, 1.0\], got 1.5"
    ):
        bandit_prune(ensemble, X, y, eval_size=1.5, progress=False)
    with pytest.raises(ParameterError, match="reward_scale of bandit_prune must be > 0"):
        bandit_prune(ensemble, X, y, reward_threshold=-10.0, progress=False)
    with pytest.raises(ParameterError, match="must be finite"):
        bandit_prune(ensemble, X, y, reward_threshold=float("inf"), progress=False)


def test_no_arm_warns_and_returns_the_unpruned_model():
    ensemble, X, y = ZOO["tree_binary"]
    with pytest.warns(UserWarning, match=r"no arm to pull: no twig at depth >= 40 .*returning the unpruned"):
        result = bandit_prune(ensemble, X, y, min_depth=40, progress=False)
    assert result.ensemble is ensemble and result.n_pruned == 0 and len(result.history) == 0


def test_nodes_without_a_stored_value_are_not_arms():
    ensemble, X, y = ZOO["tree_binary"]
    tree = ensemble.trees[0]
    unknown = np.ones(tree.n_nodes, dtype=np.uint8)
    unknown[(tree.children_left != -1) & (np.arange(tree.n_nodes) % 2 == 0)] = 0
    fields = tree._asdict()
    fields["has_leaf_value"] = np.where(tree.children_left == -1, 1, unknown).astype(np.uint8)
    partial = ensemble.replace_trees([make_tree(**{k: v for k, v in fields.items()})])
    with pytest.warns(UserWarning, match="does not store the value"):
        result = bandit_prune(partial, X, y, min_depth=0, candidates="internal", n_rounds=100, progress=False)
    assert np.all(result.arms["node"] % 2 == 1)


def test_sequential_history_numbers_arms_like_the_arms_table():
    ensemble, X, y = ZOO["tree_binary"]
    result = bandit_prune(
        ensemble, X, y, n_rounds=60, min_depth=2, strategy="sequential", random_state=0, progress=False
    )
    assert result.history["phase"].max() >= 1
    table = result.arms.set_index("arm")
    np.testing.assert_array_equal(table.loc[result.history["arm"], "node"].to_numpy(), result.history["node"])
    assert table["pulls"].sum() == len(result.history)


def test_progress_bar_and_pandas_input(capsys):
    import pandas as pd

    ensemble, X, y = ZOO["forest_multiclass"]
    frame = pd.DataFrame(X)
    quiet = bandit_prune(ensemble, frame, pd.Series(y), n_rounds=30, min_depth=2, random_state=0, progress=False)
    loud = bandit_prune(ensemble, X, y, n_rounds=30, min_depth=2, random_state=0, progress=True)
    assert "bandit pruning" in capsys.readouterr().err
    assert quiet.history.equals(loud.history)


# ------------------------------------------------------------------ callback
def test_callback_sees_every_round_and_stopping_equals_a_shorter_run():
    ensemble, X, y = ZOO["tree_binary"]
    seen = []

    def stop_at_40(state):
        seen.append((state.round, state.phase, state.arm, state.tree, state.node, state.reward, state.score_delta))
        assert state.pulls.sum() == state.round + 1 and state.pulls.shape == (state.n_arms,)
        assert state.pruned_nodes == {}  # "rank" commits only at the end
        return state.round + 1 == 40

    stopped = bandit_prune(
        ensemble, X, y, n_rounds=10**6, min_depth=2, random_state=3, progress=False, callback=stop_at_40
    )
    short = bandit_prune(ensemble, X, y, n_rounds=40, min_depth=2, random_state=3, progress=False)
    assert len(seen) == 40 and stopped.params["stopped"] and not short.params["stopped"]
    history = stopped.history
    # the history renumbers arms over the arms table; rounds, phases and nodes are the callback's
    assert [(r, p, t, n) for r, p, _, t, n, _, _ in seen] == list(
        history[["round", "phase", "tree", "node"]].itertuples(index=False, name=None)
    )
    np.testing.assert_allclose([row[5] for row in seen], history["reward"])
    # the phase is finished with the rounds played: the same ranking and pruning as a 40-round run
    assert history.equals(short.history)
    assert pruned_pairs(stopped) == pruned_pairs(short)
    assert stopped.arms.equals(short.arms)


def test_callback_values_other_than_true_go_on():
    ensemble, X, y = ZOO["tree_binary"]
    answers = iter([None, False, 1, "stop", np.False_] * 20)  # True and np.True_ stop
    result = bandit_prune(
        ensemble, X, y, n_rounds=50, min_depth=2, random_state=0, progress=False, callback=lambda state: next(answers)
    )
    assert len(result.history) == 50 and not result.params["stopped"]


def test_sequential_stop_finishes_the_phase_under_way_and_starts_no_other():
    ensemble, X, y = ZOO["tree_binary"]
    phases = []

    def stop_in_phase_1(state):
        phases.append(state.phase)
        if state.phase == 1:
            # the arm committed in phase 0 is already pruned
            assert sum(len(nodes) for nodes in state.pruned_nodes.values()) == 1
        return state.phase == 1 and len([p for p in phases if p == 1]) == 10

    full = bandit_prune(ensemble, X, y, n_rounds=60, min_depth=2, strategy="sequential", random_state=0, progress=False)
    assert full.history["phase"].max() >= 2  # the stop below cuts a longer run
    stopped = bandit_prune(
        ensemble,
        X,
        y,
        n_rounds=60,
        min_depth=2,
        strategy="sequential",
        random_state=0,
        progress=False,
        callback=stop_in_phase_1,
    )
    assert stopped.params["stopped"]
    assert len(stopped.history) == 70 and stopped.history["phase"].max() == 1
    columns = ["round", "phase", "tree", "node", "reward", "score_delta"]
    assert stopped.history[columns].iloc[:60].equals(full.history[columns].iloc[:60])
    assert stopped.n_pruned in (1, 2) and stopped.n_pruned <= full.n_pruned


def test_warnings_are_recorded_per_call():
    ensemble, X, y = ZOO["tree_binary"]
    with pytest.warns(UserWarning, match="no arm to pull"):
        result = bandit_prune(ensemble, X, y, min_depth=40, progress=False)
    assert len(result.params["warnings"]) == 1 and result.params["warnings"][0].startswith("no arm to pull")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean run warns nothing
        clean = bandit_prune(ensemble, X, y, n_rounds=20, min_depth=2, random_state=0, progress=False)
    assert clean.params["warnings"] == ()


def test_callback_must_be_callable():
    ensemble, X, y = ZOO["tree_binary"]
    with pytest.raises(ParameterError, match="callback of bandit_prune must be None or a callable"):
        bandit_prune(ensemble, X, y, callback=3, progress=False)
