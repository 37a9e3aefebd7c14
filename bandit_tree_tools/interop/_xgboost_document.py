"""The XGBoost model document an edited ensemble is written back as: the
imported document's header with the ensemble's trees, base score, iteration
layout and DART weights."""

import numpy as np

from ..exceptions import ConversionError
from ..tree import Ensemble
from ._xgboost_base_score import format_base_score, from_margin
from ._xgboost_trees import check_exportable as check_exportable_tree
from ._xgboost_trees import write_trees


def label_rule(objective: str) -> str:
    """How XGBoost labels rows: ``multi:softmax`` takes the argmax of the margins, the wrappers' ``predict``
    otherwise thresholds or argmaxes the probabilities."""
    return "raw>0" if objective == "multi:softmax" else "proba"


def link_exp(objective: str) -> str:
    """Whose ``exp`` the probabilities take (``Ensemble.link_exp``): XGBoost's own
    (the C library's) for every objective but ``multi:softmax``, whose booster
    predicts labels and whose wrapper's ``predict_proba`` takes scipy's softmax of
    the float32 margins (numpy's)."""
    return "numpy" if objective == "multi:softmax" else "libm"


def check_exportable(ensemble: Ensemble, payload) -> None:
    if ensemble.source.library != "xgboost" or payload is None or payload.header is None:
        raise ConversionError(
            f"to_xgboost needs an ensemble imported from XGBoost (btt.from_xgboost), got one from "
            f"{ensemble.source.library!r}"
        )
    for name, expected in (
        ("split_rule", "lt"),
        ("input_dtype", "float32"),
        ("aggregation", "sum"),
        ("label_rule", label_rule(payload.objective)),
        ("link_exp", link_exp(payload.objective)),
    ):
        if getattr(ensemble, name) != expected:
            raise ConversionError(
                f"XGBoost models need {name}={expected!r}, but the ensemble has {getattr(ensemble, name)!r}"
            )
    if payload.booster == "gbtree" and np.any(ensemble.tree_scale != 1.0):
        raise ConversionError("gbtree models add every tree with weight 1; this ensemble has other tree_scale values")
    for index, tree in enumerate(ensemble.trees):
        check_exportable_tree(tree, index)


def model_document(ensemble: Ensemble, payload) -> dict:
    n_trees = ensemble.n_trees
    per_iteration = payload.trees_per_iteration
    indptr = payload.iteration_indptr
    if indptr[-1] != n_trees:
        if n_trees % per_iteration:
            raise ConversionError(
                f"the ensemble has {n_trees} trees, which is not a whole number of XGBoost iterations of "
                f"{per_iteration} trees"
            )
        indptr = np.arange(0, n_trees + 1, per_iteration)
    scale = np.asarray(payload.internal_scale, dtype=np.float32)
    if scale.shape[0] != n_trees:
        scale = np.full(n_trees, scale[0] if scale.size else np.float32(1.0), dtype=np.float32)
    model = dict(payload.model_header)
    model["gbtree_model_param"] = dict(model["gbtree_model_param"], num_trees=str(n_trees))
    model["iteration_indptr"] = [int(v) for v in indptr]
    model["tree_info"] = [int(v) for v in ensemble.tree_output]
    model["trees"] = write_trees(ensemble.trees, ensemble.n_features_in_, scale)

    header = payload.header
    learner = dict(header["learner"])
    model_param = dict(learner["learner_model_param"])
    if not np.array_equal(ensemble.base_score, payload.imported_base_score):
        model_param["base_score"] = format_base_score(from_margin(ensemble.base_score, payload.margin_kind))
    learner["learner_model_param"] = model_param
    attributes = dict(learner.get("attributes", {}))
    n_iterations = len(indptr) - 1
    if "best_iteration" in attributes and int(attributes["best_iteration"]) >= n_iterations:
        attributes["best_iteration"] = str(n_iterations - 1)
    learner["attributes"] = attributes
    gradient_booster = dict(learner["gradient_booster"])
    if payload.booster == "dart":
        gradient_booster["gbtree"] = {"model": model, "name": "gbtree"}
        gradient_booster["weight_drop"] = [float(np.float32(v)) for v in ensemble.tree_scale]
    else:
        gradient_booster["model"] = model
    learner["gradient_booster"] = gradient_booster
    return dict(header, learner=learner)


def set_num_trees(config: dict, n_trees: int) -> None:
    booster = config["learner"]["gradient_booster"]
    if booster.get("name") == "dart":
        booster = booster["gbtree"]
    if "gbtree_model_param" in booster:
        booster["gbtree_model_param"]["num_trees"] = str(n_trees)
