"""Small models in the common format for the pruning tests, built by hand
from fitted scikit-learn trees (independent of the importers)."""

from pathlib import Path

import numpy as np

from bandit_tree_tools.tree import Ensemble, Source, make_tree

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


def tree_arrays(sklearn_tree, *, classifier: bool):
    t = sklearn_tree.tree_
    value = t.value[:, 0, :] if classifier else t.value[:, 0, :1]
    return make_tree(
        t.children_left,
        t.children_right,
        t.feature,
        t.threshold,
        value,
        n_node_samples=t.n_node_samples,
        weighted_n_node_samples=t.weighted_n_node_samples,
        impurity=t.impurity,
    )


def ensemble_from(estimators, *, classifier: bool, classes=None, n_features: int):
    trees = [tree_arrays(e, classifier=classifier) for e in estimators]
    n_outputs = len(classes) if classifier else 1
    return Ensemble(
        trees=tuple(trees),
        task="classification" if classifier else "regression",
        n_features_in_=n_features,
        n_outputs=n_outputs,
        tree_output=0,
        tree_scale=1.0,
        aggregation="mean",
        base_score=np.zeros(n_outputs),
        link="identity",
        source=Source("bandit_tree_tools", "hand-built"),
        classes_=None if classes is None else np.asarray(classes),
        input_dtype="float32",
    )


def sklearn_tree_ensemble(model):
    """Common-format copy of a fitted DecisionTree or RandomForest."""
    classifier = hasattr(model, "classes_")
    estimators = getattr(model, "estimators_", [model])
    return ensemble_from(
        estimators,
        classifier=classifier,
        classes=model.classes_ if classifier else None,
        n_features=model.n_features_in_,
    )


def boosted_binary(n_trees=3, seed=0):
    """A small boosted binary ensemble (sigmoid link, summed margins) with
    random internal values, built from sklearn regression trees on noise."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 4))
    trees = []
    for t in range(n_trees):
        reg = DecisionTreeRegressor(max_depth=5, random_state=t).fit(X, rng.normal(size=200))
        trees.append(tree_arrays(reg, classifier=False))
    return Ensemble(
        trees=tuple(trees),
        task="classification",
        n_features_in_=4,
        n_outputs=1,
        tree_output=0,
        tree_scale=1.0,
        aggregation="sum",
        base_score=np.array([0.2]),
        link="sigmoid",
        source=Source("bandit_tree_tools", "hand-built"),
        classes_=np.array([0, 1]),
    ), X
