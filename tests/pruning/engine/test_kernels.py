"""The search's per-step arithmetic against plain numpy: raw scores of the
pruned model (bit for bit, in tree order), the series of the logarithm that
the costs of class fractions take, the classes without the losses, and the
paired standard error of balanced accuracy."""

import dataclasses
from decimal import Decimal, localcontext

import numpy as np
import pytest

from bandit_tree_tools.pruning._engine import _kernels as kernels
from bandit_tree_tools.pruning._engine._metrics import paired_standard_error
from bandit_tree_tools.pruning._inputs import Target, check_target
from bandit_tree_tools.pruning._kernels import CLEAR_MARGIN
from bandit_tree_tools.pruning._metrics import row_outputs
from bandit_tree_tools.tree._ensemble import LABEL_RULES

from ..models import model_zoo


def reference_raw(leaf, lo, hi, offset, current, value, tree_output, factor, alive, base_score, row_scale):
    """``kernels.raw_scores`` one row and one tree at a time, in the same order."""
    raw = np.empty((hi - lo, base_score.shape[0]))
    for i, row in enumerate(range(lo, hi)):
        total = base_score.astype(np.float64).copy()
        for tree in np.flatnonzero(alive):
            local = leaf[tree, row]
            if local < 0:
                continue
            node = current[offset[tree] + local]
            for j in range(value.shape[1]):
                total[tree_output[tree] + j] += factor[tree] * row_scale[row] * value[node, j]
        raw[i] = total
    return raw


@pytest.mark.parametrize("n_outputs, width", [(1, 1), (3, 1), (3, 3)])
def test_raw_scores_are_the_tree_order_sums_bit_for_bit(n_outputs, width):
    rng = np.random.default_rng(n_outputs + width)
    n_trees, n_rows, nodes = 9, 2_500, 13  # more rows than one block, fewer than two full ones
    leaf = rng.integers(-1, nodes, (n_trees, n_rows)).astype(np.int32)  # -1: a tree that drew the row
    offset = np.arange(0, (n_trees + 1) * nodes, nodes)
    current = np.minimum(np.arange(offset[-1]) + rng.integers(0, 2, offset[-1]), offset[-1] - 1)  # some collapsed
    value = rng.normal(size=(offset[-1], width))
    tree_output = rng.integers(0, n_outputs - width + 1, n_trees)
    factor, row_scale = rng.normal(size=n_trees), rng.random(n_rows) * 3
    alive = rng.random(n_trees) < 0.7
    base_score = rng.normal(size=n_outputs)
    table = np.ascontiguousarray(value[current].T)  # every node's current value, one row per column
    for lo, hi in [(0, n_rows), (1, n_rows - 1), (1_024, 2_049), (7, 7)]:
        args = (tree_output, factor, alive, base_score, row_scale)
        np.testing.assert_array_equal(
            kernels.raw_scores(leaf, lo, hi, offset, table, *args),
            reference_raw(leaf, lo, hi, offset, current, value, *args),
        )


def test_the_series_of_log_ratio_is_exact_to_two_units_in_the_last_place_across_its_reach():
    """``_log_ratio(w, z)`` against ``ln(w / z)`` to 50 digits, from ratios a
    hair from 1 out to the reach, where ``log(w) - log(z)`` loses digits."""
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.uniform(1e-15, 1.0, 2_000), [1e-15, 0.5, 1.0 - 1e-15]])
    reach = kernels.LOG_RATIO_REACH
    ratios = np.concatenate([rng.uniform(-reach, reach, z.shape[0] - 4), [-reach, reach, 1e-12, -1e-12]])
    worst = 0.0
    with localcontext() as context:
        context.prec = 50
        for w, before in zip(z * (1.0 + ratios), z):
            exact = (Decimal(float(w)) / Decimal(float(before))).ln()
            if exact != 0:
                got = Decimal(kernels._log_ratio.py_func(float(w), float(before)))
                worst = max(worst, float(abs((got - exact) / exact)))
    assert worst <= 2 * np.finfo(np.float64).eps


@pytest.mark.parametrize(
    "name", ["tree_binary", "forest_multiclass", "boosted_binary", "boosted_softmax", "boosted_binary float32"]
)
@pytest.mark.parametrize("rule", LABEL_RULES)
def test_classes_without_losses_are_the_predicted_classes(name, rule):
    ensemble, X, y = model_zoo()[name.split()[0]]
    ensemble = dataclasses.replace(ensemble, label_rule=rule, accumulate_float32=name.endswith("float32"))
    raw = ensemble.predict_raw(X)
    raw[::7] = 0.0  # ties of the margin rules
    # margins about CLEAR_MARGIN (past it a binary sigmoid's class is the margin's sign) and so
    # small that the probability rounds to 1/2 (a tie: the first class)
    near = np.array([1e-17, 1e-9, 5e-4, 1e-3, 1e-3 * (1 + 1e-12), 2e-3, 0.1])
    assert near[0] < CLEAR_MARGIN < near[-1]
    near = np.concatenate([near, -near, np.nextafter(near, 0), -np.nextafter(near, 0)])
    raw[3 : 3 + 7 * near.size : 7] = near[:, None]
    target = check_target(ensemble, y, len(y))
    classes, loss = row_outputs(ensemble, raw, target, with_loss=False)
    with_loss, _ = row_outputs(ensemble, raw, target)
    assert loss is None
    np.testing.assert_array_equal(classes, with_loss)
    if rule == "proba":
        expected = np.argmax(
            np.column_stack([1 - p, p]) if (p := ensemble.transform_raw(raw)).shape[1] == 1 else p, axis=1
        )
    elif raw.shape[1] == 1:
        expected = (raw[:, 0] >= 0 if rule == "raw>=0" else raw[:, 0] > 0).astype(int)
    else:
        expected = np.argmax(raw, axis=1)
    np.testing.assert_array_equal(classes, expected)


@pytest.mark.parametrize("n_classes", [2, 5])
def test_paired_standard_error_of_balanced_accuracy_is_the_per_class_formula(n_classes):
    rng = np.random.default_rng(n_classes)
    codes = rng.integers(0, n_classes, 3_000)
    codes[codes == n_classes - 1] = 0  # one class absent from the rows
    target = Target(codes, codes.astype(np.float64), n_classes, 1, 1.0)
    terms, base = (rng.random(3_000) < 0.8).astype(float), (rng.random(3_000) < 0.85).astype(float)
    difference = terms - base
    parts = [difference[codes == c] for c in range(n_classes) if np.any(codes == c)]
    expected = np.sqrt(sum(np.var(part) / part.size for part in parts) / len(parts) ** 2)
    assert paired_standard_error("balanced_accuracy", terms, base, target) == pytest.approx(expected, rel=1e-12)
