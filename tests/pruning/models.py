"""Small models in the common format for the pruning tests, built by hand
from fitted scikit-learn trees (independent of the importers)."""

import numpy as np

from bandit_tree_tools.tree import Ensemble, Source, make_tree


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


def boosted_softmax(n_classes=3, rounds=2, seed=1):
    """A small boosted multiclass ensemble (softmax link, one tree per class
    and round), built from sklearn regression trees on noise."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 4))
    trees = []
    for t in range(n_classes * rounds):
        reg = DecisionTreeRegressor(max_depth=4, random_state=t).fit(X, rng.normal(size=200))
        trees.append(tree_arrays(reg, classifier=False))
    return Ensemble(
        trees=tuple(trees),
        task="classification",
        n_features_in_=4,
        n_outputs=n_classes,
        tree_output=np.arange(n_classes * rounds) % n_classes,
        tree_scale=0.5,
        aggregation="sum",
        base_score=np.linspace(-0.1, 0.1, n_classes),
        link="softmax",
        source=Source("bandit_tree_tools", "hand-built"),
        classes_=np.arange(n_classes),
    ), X


def classification_data(n_rows=450, n_classes=2, seed=0, labels=None):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n_rows,
        n_features=6,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        flip_y=0.15,
        random_state=seed,
    )
    if labels is not None:
        y = np.asarray(labels)[y]
    return X[: n_rows // 2], y[: n_rows // 2], X[n_rows // 2 :], y[n_rows // 2 :]


def model_zoo():
    """name -> (ensemble, X_val, y_val) covering every link, aggregation and task."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.tree import DecisionTreeClassifier

    zoo = {}
    X, y, Xv, yv = classification_data()
    tree = DecisionTreeClassifier(max_depth=6, min_samples_leaf=3, random_state=0).fit(X, y)
    zoo["tree_binary"] = (sklearn_tree_ensemble(tree), Xv, yv)
    X, y, Xv, yv = classification_data(n_classes=3, labels=["a", "b", "c"], seed=1)
    forest = RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
    zoo["forest_multiclass"] = (sklearn_tree_ensemble(forest), Xv, yv)
    rng = np.random.default_rng(2)
    Xr = rng.normal(size=(300, 4))
    yr = Xr[:, 0] + np.sin(2 * Xr[:, 1]) + 0.5 * rng.normal(size=300)
    reg = RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0).fit(Xr[:150], yr[:150])
    zoo["forest_regression"] = (sklearn_tree_ensemble(reg), Xr[150:], yr[150:])
    boosted, Xb = boosted_binary()
    zoo["boosted_binary"] = (boosted, Xb, (Xb[:, 0] + 0.3 * Xb[:, 1] > 0).astype(int))
    softmax, Xs = boosted_softmax()
    zoo["boosted_softmax"] = (softmax, Xs, np.digitize(Xs[:, 0], [-0.5, 0.5]))
    return zoo
