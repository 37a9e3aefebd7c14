"""The incremental evaluation kernel against full re-prediction of collapsed
models (tests/oracles/pruning.py), for every link, aggregation and task."""

import numpy as np
import pytest

from bandit_tree_tools.pruning._evaluator import IncrementalEvaluator
from bandit_tree_tools.pruning._inputs import check_target
from tests.oracles.pruning import collapsed, in_subtree, reference_arms, reference_delta, reference_score

from .models import model_zoo

ZOO = model_zoo()
WEIGHTS = (1.0, 2.5, 1.0)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_pulls_and_commits_match_full_reprediction(name):
    ensemble, X, y = ZOO[name]
    target = check_target(ensemble, y, len(y))
    evaluator = IncrementalEvaluator(ensemble, X, target, WEIGHTS)
    variance = target.variance
    rng = np.random.default_rng(0)
    committed = []
    assert evaluator.score() == pytest.approx(reference_score(ensemble, X, y, WEIGHTS, variance), abs=1e-10)
    for _ in range(5):
        trees, nodes, depths, _ = evaluator.arms("internal", 0)
        if len(trees) == 0:
            break
        assert list(zip(trees.tolist(), nodes.tolist())) == reference_arms(ensemble, "internal", 0, committed)
        for _ in range(4):
            arm = int(rng.integers(len(trees)))
            rows = np.sort(rng.choice(len(y), size=int(rng.integers(5, len(y))), replace=False))
            mask = np.zeros(len(y), dtype=bool)
            mask[rows] = True
            base = evaluator.stats(rows)
            delta = evaluator.score_stats(evaluator.pulled_stats(trees[arm], nodes[arm], base, mask)) - (
                evaluator.score_stats(base)
            )
            expected = reference_delta(
                ensemble, X[rows], y[rows], committed, (trees[arm], nodes[arm]), WEIGHTS, variance
            )
            assert delta == pytest.approx(expected, abs=1e-9)
        deep = np.flatnonzero(depths >= 2)  # keep arms for the next steps
        arm = int(deep[rng.integers(len(deep))]) if len(deep) else int(rng.integers(len(trees)))
        evaluator.commit(int(trees[arm]), int(nodes[arm]))
        committed.append((int(trees[arm]), int(nodes[arm])))
        expected = reference_score(collapsed(ensemble, committed), X, y, WEIGHTS, variance)
        assert evaluator.score() == pytest.approx(expected, abs=1e-10)


def test_twig_arms_and_depth_filter_match_the_reference():
    ensemble, X, y = ZOO["forest_multiclass"]
    evaluator = IncrementalEvaluator(ensemble, X, check_target(ensemble, y, len(y)))
    for min_depth in (0, 2, 4):
        trees, nodes, depths, _ = evaluator.arms("twigs", min_depth)
        assert list(zip(trees.tolist(), nodes.tolist())) == reference_arms(ensemble, "twigs", min_depth)
        assert np.all(depths >= min_depth)


def test_snapshot_restore_and_rows_under():
    ensemble, X, y = ZOO["tree_binary"]
    evaluator = IncrementalEvaluator(ensemble, X, check_target(ensemble, y, len(y)))
    leaves = ensemble.apply(X)[:, 0]
    tree = ensemble.trees[0]
    for node in range(tree.n_nodes):
        expected = {row for row in range(len(y)) if in_subtree(tree, node, leaves[row])}
        assert set(evaluator.rows_under(0, node).tolist()) == expected
    before = evaluator.score()
    snapshot = evaluator.snapshot()
    evaluator.commit(0, 1)
    assert evaluator.score() != before
    evaluator.restore(snapshot)
    assert evaluator.score() == before
    assert not evaluator.collapsed[0].any()
