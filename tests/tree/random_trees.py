"""Random trees and ensembles in the common format, for property tests."""

import numpy as np

from bandit_tree_tools.tree import Ensemble, Source, make_tree


def random_tree(rng, n_features=4, max_depth=4, n_values=1, n_words=2, p_split=0.8):
    """A random tree whose nodes are numbered in preorder, with numerical and
    categorical splits, every missing type, and consistent sample counts."""
    nodes = []

    def grow(depth, n_samples):
        node = len(nodes)
        record = {"left": -1, "right": -1, "feature": -2, "threshold": -2.0, "n": n_samples}
        nodes.append(record)
        if depth < max_depth and n_samples >= 2 and rng.random() < p_split:
            record["feature"] = int(rng.integers(n_features))
            record["threshold"] = float(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]))
            record["categorical"] = n_words > 0 and rng.random() < 0.3
            record["missing_type"] = int(rng.integers(3))
            record["missing_left"] = int(rng.integers(2))
            record["unknown_left"] = int(rng.integers(2))
            n_left = int(rng.integers(1, n_samples))
            record["left"] = grow(depth + 1, n_left)
            record["right"] = grow(depth + 1, n_samples - n_left)
        return node

    grow(0, 1000)
    n = len(nodes)
    category_left = np.zeros((n, n_words), dtype=np.uint32)
    category_right = np.zeros((n, n_words), dtype=np.uint32)
    is_categorical = np.zeros(n, dtype=np.uint8)
    for i, record in enumerate(nodes):
        if record.get("categorical"):
            is_categorical[i] = 1
            for category in range(32 * n_words):
                side = rng.integers(3)  # left, right, or unlisted
                if side < 2:
                    target = category_left if side == 0 else category_right
                    target[i, category // 32] |= np.uint32(1 << (category % 32))
    return make_tree(
        [r["left"] for r in nodes],
        [r["right"] for r in nodes],
        [r["feature"] for r in nodes],
        [r["threshold"] if not is_categorical[i] else -2.0 for i, r in enumerate(nodes)],
        rng.normal(size=(n, n_values)),
        missing_go_to_left=[r.get("missing_left", 0) for r in nodes],
        missing_type=[r.get("missing_type", 0) for r in nodes],
        is_categorical=is_categorical,
        category_left=category_left,
        category_right=category_right,
        unknown_category_go_to_left=[r.get("unknown_left", 0) for r in nodes],
        n_node_samples=[r["n"] for r in nodes],
    )


def random_ensemble(rng, n_trees=3, n_features=4, n_outputs=1, **options):
    width = 1 if n_outputs == 1 or rng.random() < 0.5 else n_outputs
    trees = [random_tree(rng, n_features=n_features, n_values=width) for _ in range(n_trees)]
    tree_output = rng.integers(0, n_outputs - width + 1, size=n_trees)
    defaults = dict(
        task="regression",
        n_features_in_=n_features,
        n_outputs=n_outputs,
        tree_output=tree_output,
        tree_scale=rng.choice([1.0, 0.1], size=n_trees),
        aggregation=str(rng.choice(["sum", "mean"])),
        base_score=rng.normal(size=n_outputs),
        link="identity",
        source=Source("bandit_tree_tools", "random"),
        split_rule=str(rng.choice(["le", "lt"])),
        input_dtype=str(rng.choice(["float32", "float64"])),
        accumulate_float32=bool(rng.random() < 0.3),
    )
    defaults.update(options)
    return Ensemble(trees=trees, **defaults)


def probe_rows(rng, ensemble, n_rows=200):
    """Rows full of adversarial values: thresholds, NaN, zeros, tiny values,
    negative, fractional and out-of-range categories, infinities."""
    thresholds = np.concatenate([tree.threshold[tree.children_left != -1] for tree in ensemble.trees] + [[0.0]])
    specials = np.array([np.nan, 0.0, -0.0, 1e-36, -1e-36, np.inf, -np.inf, -1.0, -3.0, 2.7, 40.0, 63.0, 64.0, 1e9])
    pool = np.concatenate([thresholds, np.nextafter(thresholds, np.inf), np.nextafter(thresholds, -np.inf), specials])
    X = rng.choice(pool, size=(n_rows, ensemble.n_features_in_))
    mask = rng.random(X.shape) < 0.3
    X[mask] = rng.integers(0, 70, size=mask.sum())
    return X
