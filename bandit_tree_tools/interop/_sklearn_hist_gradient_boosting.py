"""scikit-learn HistGradientBoosting <-> the common format.

Trees are ``TreePredictor`` node records; leaf values include the learning
rate, internal values do not. With categorical features the estimator encodes
X with an ``OrdinalEncoder`` inside a ``ColumnTransformer`` that moves
categorical columns first; the ensemble maps features back to the user's
column order and writes category bitsets in the space the ensemble sees at
predict time:

* "codes" (a pandas ``category`` column, or non-numeric categories): the
  category's code, i.e. its position among the categories seen in training in
  sorted order. Predict with the same pandas categories
  (``source.payload["native"].categories`` lists them per column).
* "values" (numeric categories given in a numpy array or numeric column): the
  category value itself, which must be a non-negative integer
  < ``MAX_CATEGORY_VALUE``.

Categories unseen in training, negative values and NaN go to the missing side,
as in scikit-learn.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ..exceptions import ConversionError, UnsupportedModelError
from ..tree import MISSING_NAN, TREE_LEAF, Ensemble, Source, make_tree, one_per_row, stacked_node_depths, subtree_sums
from ._payload import SklearnPayload, with_payload
from ._sklearn_common import (
    check_boosting_ensemble,
    check_classes,
    check_finite_hint,
    feature_names,
    hint_mismatch,
    link_of,
    skeleton,
    sklearn_payload,
    version,
)

LABEL_RULE = "raw>0"  # HistGradientBoostingClassifier.predict: raw > 0 is the positive class
MAX_CATEGORY_VALUE = 4096  # bitsets of 128 words per node; larger codes are refused


def _feature_layout(model):
    """Original column of each column the predictors see, and for categorical
    ones (original column -> encoder categories)."""
    n_features = int(model.n_features_in_)
    preprocessor = getattr(model, "_preprocessor", None)
    if preprocessor is None:
        return np.arange(n_features), {}
    original = np.empty(n_features, dtype=np.int64)
    categories = {}
    for name, transformer, columns in preprocessor.transformers_:
        if name not in preprocessor.output_indices_ or transformer == "drop":
            continue
        columns = np.arange(n_features)[_column_selector(columns, n_features, preprocessor)]
        where = preprocessor.output_indices_[name]
        original[where] = columns
        if name == "encoder":
            for column, values in zip(columns, transformer.categories_):
                values = np.asarray(values)
                if len(values) and _is_nan(values[-1]):
                    values = values[:-1]
                categories[int(column)] = values
    return original, categories


def _column_selector(columns, n_features, preprocessor):
    columns = np.asarray(columns)
    if columns.dtype == bool:
        return columns
    if columns.dtype.kind in "US O":
        names = list(preprocessor.feature_names_in_)
        return np.array([names.index(column) for column in columns], dtype=np.int64)
    return columns.astype(np.int64)


def _is_nan(value):
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


def _category_space(model, categories):
    """For each categorical original column: the category value the ensemble
    sees for each encoded category, and the space's name."""
    from_dtype = isinstance(model.categorical_features, str) and model.categorical_features == "from_dtype"
    fitted_on_frame = getattr(model, "feature_names_in_", None) is not None
    spaces = {}
    for column, values in categories.items():
        numeric = values.dtype.kind in "iuf" or (
            values.dtype.kind == "O" and all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)
        )
        if not numeric or (from_dtype and fitted_on_frame):
            spaces[column] = ("codes", np.arange(len(values), dtype=np.int64))
            continue
        as_float = values.astype(np.float64)
        if np.any(as_float < 0) or np.any(as_float != np.floor(as_float)) or np.any(as_float >= MAX_CATEGORY_VALUE):
            raise UnsupportedModelError(
                f"categorical column {column} has categories {as_float[:8].tolist()}...; bandit_tree_tools needs "
                f"non-negative integer categories below {MAX_CATEGORY_VALUE} (encode them as 0..n-1 or as a pandas "
                "'category' column)"
            )
        spaces[column] = ("values", as_float.astype(np.int64))
    return spaces


def _feature_categories(model, spaces, categories):
    """Per original column, the training categories of the "codes" columns:
    scikit-learn's encoder codes a pandas categorical column by value against
    them (whatever the order or subset of the frame's own categories), so
    ``Ensemble.check_X`` codes it the same way. None where there are none."""
    codes_columns = [column for column, (space, _) in spaces.items() if space == "codes"]
    if not codes_columns:
        return None
    out = [None] * int(model.n_features_in_)
    for column in codes_columns:
        out[column] = tuple(np.asarray(categories[column]).tolist())
    return tuple(out)


def _bits(words):
    """Set bit positions of a row of uint32 words."""
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<u4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits)


def _bitset(positions, n_words):
    out = np.zeros(n_words, dtype=np.uint32)
    np.bitwise_or.at(out, positions >> 5, (np.uint32(1) << (positions & 31).astype(np.uint32)).astype(np.uint32))
    return out


_HGB_HINT = (
    "This HistGradientBoosting model's loss ({loss!r}) is not differentiable, so scikit-learn re-fitted the leaf "
    "values (a median or quantile of the residuals) but not the internal ones. Import it again with the training "
    "data, btt.from_sklearn(model, X=X_train, y=y_train, sample_weight=w), to recompute them."
)


def import_hist_gradient_boosting(model, name, *, X=None, y=None, sample_weight=None) -> Ensemble:
    classifier = name.endswith("Classifier")
    refitted_leaves = not model._loss.differentiable  # leaves hold line-search values, internal nodes do not
    classes = check_classes(model, name) if classifier else None
    original, categories = _feature_layout(model)
    spaces = _category_space(model, categories)
    n_words = max([1] + [int(space[1].max()) // 32 + 1 for space in spaces.values() if len(space[1])])
    known = model._bin_mapper.make_known_categories_bitsets()
    known_bitsets, f_idx_map = known
    learning_rate = float(model.learning_rate)
    n_per_stage = int(model.n_trees_per_iteration_)
    trees = []
    for iteration in model._predictors:
        for predictor in iteration:
            tree = _hgb_tree(predictor, original, spaces, known_bitsets, f_idx_map, n_words, learning_rate)
            if refitted_leaves:
                tree = tree._replace(has_leaf_value=(tree.children_left == TREE_LEAF).astype(np.uint8))
            trees.append(tree)
    link, link_scale = link_of(model, name)
    base_score = np.array(model._baseline_prediction, dtype=np.float64).ravel()
    record = SklearnPayload(
        kind="hist_gradient_boosting",
        template=skeleton(model, _predictors=[]),
        base_score=base_score.copy(),
        transformed_column=np.argsort(original),
        category_spaces={column: (space, codes.copy()) for column, (space, codes) in spaces.items()},
        categories={column: values.copy() for column, values in categories.items()},
    )
    hint = _HGB_HINT.format(loss=model.loss) if refitted_leaves else ""
    payload = with_payload(record)
    ensemble = Ensemble(
        trees=tuple(trees),
        task="classification" if classifier else "regression",
        n_features_in_=int(model.n_features_in_),
        n_outputs=n_per_stage,
        tree_output=np.tile(np.arange(n_per_stage), len(model._predictors)),
        tree_scale=1.0,
        aggregation="sum",
        base_score=base_score,
        link=link,
        link_scale=link_scale,
        source=Source("sklearn", name, version(), payload, collapse_hint=hint),
        classes_=classes,
        feature_names_in_=feature_names(model),
        split_rule="le",
        input_dtype="float64",
        feature_categories=_feature_categories(model, spaces, categories),
        label_rule=LABEL_RULE,
    )
    if X is None and y is None:
        return ensemble
    if X is None or y is None:
        raise ConversionError("pass both X and y (and optionally sample_weight) to recompute internal values")
    if not refitted_leaves:
        return ensemble  # internal values times the learning rate are already the leaf values
    payload = with_payload(replace(record, recomputed_from_data=True))
    return replace(
        ensemble,
        trees=tuple(_recompute_internal_values(model, ensemble, X, y, sample_weight)),
        source=Source("sklearn", name, version(), payload),
    )


def _recompute_internal_values(model, ensemble, X, y, sample_weight):
    """Give every internal node the value scikit-learn's leaf update
    (``loss.fit_intercept_only`` of the residuals, times the learning rate)
    would have given it as a leaf, replaying the iterations on ``(X, y)``."""
    if getattr(model, "do_early_stopping_", False) and getattr(model, "_use_validation_data", False):
        raise ConversionError(
            "cannot recompute internal values of a HistGradientBoosting model that held out a validation split for "
            "early stopping (the rows each tree was fitted on are not recoverable); refit it with "
            "early_stopping=False or validation_fraction=None"
        )
    X = ensemble.check_X(X)
    y_true = one_per_row(y, X.shape[0], error=ConversionError).astype(np.float64)
    check_finite_hint(y_true, "y")
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if weight is not None and weight.shape != y_true.shape:
        raise ConversionError(f"sample_weight must have shape {y_true.shape}, got {weight.shape}")
    if weight is not None:
        check_finite_hint(weight, "sample_weight")
    learning_rate = float(model.learning_rate)
    raw = np.full(X.shape[0], ensemble.base_score[0])
    leaves = ensemble.apply(X)
    trees, worst_leaf_difference = [], 0.0
    for index, tree in enumerate(ensemble.trees):
        leaf_of_row = leaves[:, index]
        order = np.argsort(leaf_of_row, kind="stable")
        sorted_leaves = leaf_of_row[order]
        # nodes are numbered in preorder, so a subtree's ids form the range [node, node + size)
        size = subtree_sums(tree, np.ones(tree.n_nodes, dtype=np.int64))
        start = np.searchsorted(sorted_leaves, np.arange(tree.n_nodes))
        stop = np.searchsorted(sorted_leaves, np.arange(tree.n_nodes) + size)
        value, known = tree.value.copy(), tree.has_leaf_value.copy()
        for node in np.flatnonzero(stop > start):
            rows = order[start[node] : stop[node]]
            found = learning_rate * model._loss.fit_intercept_only(
                y_true=y_true[rows] - raw[rows], sample_weight=None if weight is None else weight[rows]
            )
            if tree.children_left[node] == TREE_LEAF:
                stored = tree.value[node, 0]
                worst_leaf_difference = max(worst_leaf_difference, abs(found - stored) / max(1.0, abs(stored)))
            else:
                value[node, 0], known[node] = found, 1
        trees.append(tree._replace(value=value, has_leaf_value=known))
        raw += tree.value[leaf_of_row, 0]  # advance with the stored leaf values, as fit did
    if worst_leaf_difference > 1e-9:
        raise hint_mismatch(
            f"the leaf values recomputed from them are up to {worst_leaf_difference:.3g} (relative) "
            "away from the stored ones"
        )
    return trees


def _hgb_tree(predictor, original, spaces, known_bitsets, f_idx_map, n_words, learning_rate):
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    n = nodes.shape[0]
    categorical = nodes["is_categorical"].astype(bool) & ~leaf
    transformed = nodes["feature_idx"].astype(np.int64)
    value = nodes["value"].astype(np.float64)
    value = np.where(leaf, value, learning_rate * value)  # leaves already carry the shrinkage
    category_left = np.zeros((n, n_words if np.any(categorical) else 0), dtype=np.uint32)
    category_right = np.zeros_like(category_left)
    for node in np.flatnonzero(categorical):
        column = int(original[transformed[node]])
        _, category_of_code = spaces[column]
        left_codes = _bits(predictor.raw_left_cat_bitsets[nodes["bitset_idx"][node]])
        known_codes = _bits(known_bitsets[f_idx_map[transformed[node]]])
        left_codes = left_codes[left_codes < len(category_of_code)]
        right_codes = np.setdiff1d(known_codes[known_codes < len(category_of_code)], left_codes)
        category_left[node] = _bitset(category_of_code[left_codes], n_words)
        category_right[node] = _bitset(category_of_code[right_codes], n_words)
    missing_left = nodes["missing_go_to_left"].astype(np.uint8)
    return make_tree(
        np.where(leaf, TREE_LEAF, nodes["left"].astype(np.int64)),
        np.where(leaf, TREE_LEAF, nodes["right"].astype(np.int64)),
        original[transformed],
        np.where(categorical, -2.0, nodes["num_threshold"]),
        value,
        missing_go_to_left=np.where(leaf, 0, missing_left),
        is_categorical=categorical.astype(np.uint8),
        category_left=category_left,
        category_right=category_right,
        unknown_category_go_to_left=np.where(categorical, missing_left, 0),  # unknown categories count as missing
        n_node_samples=nodes["count"].astype(np.int64),
        gain=np.where(leaf, np.nan, nodes["gain"]),
        check=False,
    )


def export_hist_gradient_boosting(ensemble):
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    name = ensemble.source.estimator
    payload = sklearn_payload(ensemble)
    n_per_stage = check_boosting_ensemble(ensemble, name, payload, LABEL_RULE)
    if np.any(ensemble.tree_scale != 1.0) or ensemble.split_rule != "le" or ensemble.input_dtype != "float64":
        raise ConversionError(
            "a HistGradientBoosting model compares float64 x <= threshold and scales nothing: tree_scale must be 1, "
            "split_rule 'le', input_dtype 'float64'"
        )
    known_fields = {
        "value",
        "count",
        "feature_idx",
        "num_threshold",
        "missing_go_to_left",
        "left",
        "right",
        "gain",
        "depth",
        "is_leaf",
        "bin_threshold",
        "is_categorical",
        "bitset_idx",
    }
    unknown = set(PREDICTOR_RECORD_DTYPE.names) - known_fields
    if unknown:
        raise ConversionError(
            f"this scikit-learn version ({version()}) has predictor node fields {sorted(unknown)} that "
            "bandit_tree_tools does not know how to fill"
        )
    model = copy.deepcopy(payload.template)
    model._predictors = _hgb_predictors(ensemble, model, payload, n_per_stage, PREDICTOR_RECORD_DTYPE, TreePredictor)
    return model


def _hgb_predictors(ensemble, model, payload, n_per_stage, record_dtype, predictor_class):
    """Every tree's predictor, with the node records of all trees filled in
    one vectorised pass."""
    trees = ensemble.trees
    offsets, depth = stacked_node_depths(trees)

    def stacked(name):
        return np.concatenate([getattr(tree, name) for tree in trees])

    leaf = stacked("children_left") == TREE_LEAF
    internal = ~leaf
    if np.any(stacked("missing_type")[internal] != MISSING_NAN):
        raise ConversionError("HistGradientBoosting only treats NaN as missing: every missing_type must be 0")
    transformed_column = payload.transformed_column
    feature = np.where(internal, transformed_column[np.maximum(stacked("feature"), 0)], 0)
    threshold = stacked("threshold")
    categorical = (stacked("is_categorical") == 1) & internal
    value = stacked("value")[:, 0]
    nodes = np.zeros(offsets[-1], dtype=record_dtype)
    nodes["value"] = np.where(leaf, value, value / float(model.learning_rate))  # internal values exclude it
    nodes["count"] = np.maximum(stacked("n_node_samples"), 0)
    nodes["feature_idx"] = feature
    nodes["num_threshold"] = np.where(internal & ~categorical, threshold, 0.0)
    nodes["missing_go_to_left"] = stacked("missing_go_to_left")
    nodes["left"] = np.where(internal, stacked("children_left"), 0)
    nodes["right"] = np.where(internal, stacked("children_right"), 0)
    nodes["gain"] = np.where(internal, np.nan_to_num(stacked("gain"), nan=0.0), -1.0)
    nodes["depth"] = depth
    nodes["is_leaf"] = leaf
    nodes["is_categorical"] = categorical
    bin_thresholds = model._bin_mapper.bin_thresholds_
    numeric = np.flatnonzero(internal & ~categorical)
    for column in np.unique(feature[numeric]):  # bin of each threshold (used by predict on binned data)
        at = numeric[feature[numeric] == column]
        nodes["bin_threshold"][at] = np.minimum(np.searchsorted(bin_thresholds[column], threshold[at]), 254)

    known_bitsets, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    tree_of_node = np.repeat(np.arange(len(trees)), np.diff(offsets))
    bitsets = {}  # tree index -> list of raw left bitsets, in node order
    for node in np.flatnonzero(categorical):
        index = int(tree_of_node[node])
        local = int(node - offsets[index])
        tree = trees[index]
        row = _left_bitset(tree, index, local, feature[node], payload.category_spaces, known_bitsets, f_idx_map)
        found = bitsets.setdefault(index, [])
        nodes["bitset_idx"][node] = len(found)
        found.append(row)

    predictors, iteration = [], []
    for index in range(len(trees)):
        raw = np.array(bitsets.get(index, np.zeros((0, 8))), dtype=np.uint32).reshape(-1, 8)
        # bins of a categorical feature are its encoded categories in order, so binned == raw bitsets
        iteration.append(predictor_class(nodes[offsets[index] : offsets[index + 1]].copy(), raw.copy(), raw))
        if len(iteration) == n_per_stage:
            predictors.append(iteration)
            iteration = []
    return predictors


def _left_bitset(tree, index, node, transformed, spaces, known_bitsets, f_idx_map):
    """HistGradientBoosting's raw left bitset (encoded categories) of one
    categorical node, after checking that its sets are writable."""
    column = int(tree.feature[node])
    if column not in spaces:
        raise ConversionError(
            f"tree {index} node {node} splits categorically on column {column}, which the HistGradientBoosting "
            "model treats as numerical"
        )
    _, category_of_code = spaces[column]
    in_left = _has_bits(tree.category_left[node], category_of_code)
    in_right = _has_bits(tree.category_right[node], category_of_code)
    known_codes = _bits(known_bitsets[f_idx_map[transformed]])
    expected_right = np.zeros(len(category_of_code), dtype=bool)
    expected_right[known_codes[known_codes < len(category_of_code)]] = True
    expected_right &= ~in_left
    if np.any(in_right != expected_right) or tree.unknown_category_go_to_left[node] != tree.missing_go_to_left[node]:
        raise ConversionError(
            f"tree {index} node {node}: HistGradientBoosting sends every known category that is not left to the "
            "right and unknown categories to the missing side; these category sets cannot be written"
        )
    return _bitset(np.flatnonzero(in_left), 8)


def _has_bits(words, positions):
    """Whether each of ``positions`` is set in the bitset ``words``."""
    word = positions >> 5
    inside = word < words.shape[0]
    out = np.zeros(positions.shape[0], dtype=bool)
    out[inside] = (words[word[inside]] >> (positions[inside] & 31).astype(np.uint32)) & np.uint32(1) == 1
    return out
