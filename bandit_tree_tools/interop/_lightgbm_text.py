"""Reading and writing LightGBM's model string (``Booster.model_to_string()``),
and the facts needed to interpret it (decision_type bits, the zero band,
objectives and their prediction transforms).

The model string is LightGBM's own, lossless serialisation (``dump_model()``
JSON rounds thresholds and omits nothing it needs, but loading JSON back is not
supported). It has four parts::

    tree                      <- header: key=value lines, "average_output"
    version=v4
    ...
    tree_sizes=551 562 560    <- byte length of every "Tree=i" block

    Tree=0                    <- one block per tree, at most 22 key=value lines
    num_leaves=4
    ...
    shrinkage=1

    end of trees

    feature_importances:      <- informational; LightGBM never reads it back
    ...
    parameters:               <- training parameters, read back verbatim
    ...
    end of parameters

    pandas_categorical:null   <- appended by the Python package

Inside a tree with ``L`` leaves, internal nodes are numbered ``0 .. L-2`` in the
order they were split (so a parent precedes its children) and a child entry
``c < 0`` names leaf ``~c``. Leaf and internal values already include the
learning rate (and, in the first iteration, the intercept). ``internal_value``,
``internal_weight`` and ``split_gain`` are printed with only six significant
digits; everything else round-trips exactly.

Parsing is vectorised: the lines of every tree are grouped by key, joined, and
converted by one ``numpy.fromstring`` call per key, not one Python step per
node.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import ConversionError, UnsupportedModelError
from ..tree import MISSING_NAN, MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN

# Keys every "Tree=" block of LightGBM >= 3 carries, in the order it writes them.
TREE_KEYS = (
    "num_leaves",
    "num_cat",
    "split_feature",
    "split_gain",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
    "leaf_value",
    "leaf_weight",
    "leaf_count",
    "internal_value",
    "internal_weight",
    "internal_count",
    "is_linear",
    "shrinkage",
)
INT_KEYS = ("split_feature", "decision_type", "left_child", "right_child", "leaf_count", "internal_count")
FLOAT_KEYS = ("split_gain", "threshold", "leaf_value", "leaf_weight", "internal_value", "internal_weight")
SUPPORTED_VERSIONS = ("v2", "v3", "v4")

# LightGBM's kZeroThreshold is the float literal 1e-35f, widened to double.
LIGHTGBM_ZERO = float(np.float32(1e-35))
BELOW_NEGATIVE_ZERO = float(np.nextafter(-LIGHTGBM_ZERO, -np.inf))

# decision_type bits: 1 categorical, 2 default_left, bits 2-3 the missing type.
CATEGORICAL_MASK = 1
DEFAULT_LEFT_MASK = 2
# LightGBM missing type (None=0, Zero=1, NaN=2) -> common format missing_type
MISSING_FROM_LIGHTGBM = np.array([MISSING_NAN_AS_ZERO, MISSING_ZERO_OR_NAN, MISSING_NAN], dtype=np.uint8)
# common format missing_type (0 NaN, 1 None, 2 Zero) -> LightGBM missing type
MISSING_TO_LIGHTGBM = np.array([2, 0, 1], dtype=np.int64)
# categorical nodes: NaN is "missing" and goes right, as LightGBM writes them
CATEGORICAL_DECISION_TYPE = CATEGORICAL_MASK | (2 << 2)

_IDENTITY_OBJECTIVES = (
    "regression",
    "regression_l1",
    "huber",
    "fair",
    "quantile",
    "mape",
    "lambdarank",
    "rank_xendcg",
)
_EXP_OBJECTIVES = ("poisson", "gamma", "tweedie")
_SUPPORTED_OBJECTIVES = (
    ("binary", "multiclass", "multiclassova", "cross_entropy") + _IDENTITY_OBJECTIVES + _EXP_OBJECTIVES
)


@dataclass
class ParsedModel:
    """A model string split into its parts, with every tree key as one flat array.

    ``arrays[key]`` concatenates the key's values over all trees, and
    ``counts[key][t]`` is how many values tree ``t`` contributed.
    """

    header: list  # [(key, value or None)] in file order, without tree_sizes
    header_values: dict
    n_trees: int
    num_leaves: np.ndarray
    num_cat: np.ndarray
    shrinkage: np.ndarray
    arrays: dict
    counts: dict
    cat_boundaries: dict  # tree index -> int64 array
    cat_threshold: dict  # tree index -> uint32 array
    parameters: str  # from "parameters:" to the end, verbatim (may be empty)
    blocks: tuple  # each tree's "Tree=i" block, verbatim


def _fail(what: str) -> ConversionError:
    return ConversionError(
        f"the LightGBM model string is malformed: {what}; pass a Booster or LightGBM estimator saved by "
        "lightgbm >= 3 (its model_to_string() output), unmodified"
    )


def _numbers(values: list, dtype, key: str = "") -> np.ndarray:
    text = " ".join(values)
    if not text.strip():
        return np.zeros(0, dtype=dtype)
    # fromstring's text mode converts in C; float parsing is correctly rounded, so
    # every number LightGBM printed with 17 digits comes back bit for bit.
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns (and truncates) on a bad token
        try:
            return np.fromstring(text, dtype=dtype, sep=" ")
        except (ValueError, DeprecationWarning):
            raise _fail(f"the {key!r} lines hold values that are not numbers") from None


def _token_counts(values: list) -> np.ndarray:
    # LightGBM separates array entries by exactly one space, without a trailing one.
    return np.fromiter((value.count(" ") + 1 if value else 0 for value in values), dtype=np.int64, count=len(values))


def parse_model_string(text: str) -> ParsedModel:
    """Split and parse a model string; raise ConversionError if it is malformed."""
    start = text.find("\nTree=")
    end = text.find("\nend of trees")
    if not text.startswith("tree\n") or start < 0 or end < start:
        raise _fail("expected a 'tree' header, 'Tree=' blocks and an 'end of trees' line")
    header, header_values = [], {}
    for line in text[:start].split("\n")[1:]:
        if not line:
            continue
        key, sep, value = line.partition("=")
        if key == "tree_sizes":
            continue
        header.append((key, value if sep else None))
        header_values[key] = value if sep else None
    version = header_values.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise ConversionError(
            f"LightGBM model string version {version!r} is not supported (supported: {SUPPORTED_VERSIONS}); "
            "load the model in a recent lightgbm and pass the Booster"
        )

    section = text[start + 1 : end + 1]
    values: dict[str, list] = {key: [] for key in TREE_KEYS}
    cat_lines: dict[str, dict] = {"cat_boundaries": {}, "cat_threshold": {}}
    tree = -1
    for line in section.split("\n"):
        if not line:
            continue
        key, sep, value = line.partition("=")
        if key == "Tree":
            tree += 1
            if value != str(tree):
                raise _fail(f"tree blocks are out of order (found Tree={value} where Tree={tree} was expected)")
            continue
        if key in values:
            values[key].append(value)
        elif key in cat_lines:
            cat_lines[key][tree] = value
        elif key in ("leaf_const", "num_features", "leaf_features", "leaf_coeff"):
            continue  # linear-tree coefficients: such models are refused below (is_linear=1)
        else:
            raise _fail(f"unknown key {key!r} in tree {tree}")
    n_trees = tree + 1
    if n_trees == 0:
        raise ConversionError("the LightGBM model has no trees; train it for at least one iteration")
    for key, found in values.items():
        if len(found) != n_trees:
            raise _fail(f"{len(found)} of {n_trees} trees have a {key!r} line")

    is_linear = _numbers(values.pop("is_linear"), np.int64, "is_linear")
    if np.any(is_linear != 0):
        raise UnsupportedModelError(
            "LightGBM models with linear trees (linear_tree=True) are not supported: their leaves hold linear "
            "models, which the common format cannot represent and which cannot be collapsed; retrain with "
            "linear_tree=False"
        )
    num_leaves = _numbers(values.pop("num_leaves"), np.int64, "num_leaves")
    num_cat = _numbers(values.pop("num_cat"), np.int64, "num_cat")
    shrinkage = _numbers(values.pop("shrinkage"), np.float64, "shrinkage")
    if np.any(num_leaves < 1):
        raise _fail("a tree has num_leaves < 1")

    arrays, counts = {}, {}
    n_internal = num_leaves - 1
    for key in INT_KEYS + FLOAT_KEYS:
        arrays[key] = _numbers(values[key], np.int64 if key in INT_KEYS else np.float64, key)
        counts[key] = _token_counts(values[key])
        if arrays[key].shape[0] != counts[key].sum():
            raise _fail(f"the {key!r} lines hold values that are not numbers")
        if key.startswith("leaf_"):
            # single-leaf trees may print an empty leaf_weight
            ok = (counts[key] == num_leaves) | ((num_leaves == 1) & (counts[key] == 0))
        else:
            ok = counts[key] == n_internal
        if not np.all(ok):
            bad = int(np.flatnonzero(~ok)[0])
            raise _fail(f"tree {bad} has {int(counts[key][bad])} {key} values for {int(num_leaves[bad])} leaves")

    cat_boundaries, cat_threshold = {}, {}
    for tree in np.flatnonzero(num_cat > 0).tolist():
        if tree not in cat_lines["cat_boundaries"] or tree not in cat_lines["cat_threshold"]:
            raise _fail(f"tree {tree} has num_cat > 0 but no cat_boundaries/cat_threshold lines")
        boundaries = _numbers([cat_lines["cat_boundaries"][tree]], np.int64)
        words = _numbers([cat_lines["cat_threshold"][tree]], np.int64)
        if (
            boundaries.shape[0] != num_cat[tree] + 1
            or boundaries[0] != 0
            or np.any(np.diff(boundaries) < 0)
            or boundaries[-1] != words.shape[0]
            or np.any((words < 0) | (words > 0xFFFFFFFF))
        ):
            raise _fail(f"tree {tree} has inconsistent categorical bitsets")
        cat_boundaries[tree] = boundaries
        cat_threshold[tree] = words.astype(np.uint32)

    block_starts = [0]
    while True:
        position = section.find("\nTree=", block_starts[-1])
        if position < 0:
            break
        block_starts.append(position + 1)
    block_starts.append(len(section))
    blocks = tuple(section[a:b] for a, b in zip(block_starts[:-1], block_starts[1:]))

    tail_start = text.find("\nparameters:", end)
    parameters = text[tail_start:] if tail_start >= 0 else "\n" + text[text.find("\npandas_categorical:", end) + 1 :]
    if "[linear_tree: 1]" in parameters:
        raise UnsupportedModelError(
            "LightGBM models trained with linear_tree=True are not supported (linear leaves cannot be "
            "represented or collapsed); retrain with linear_tree=False"
        )
    return ParsedModel(
        header=header,
        header_values=header_values,
        n_trees=n_trees,
        num_leaves=num_leaves,
        num_cat=num_cat,
        shrinkage=shrinkage,
        arrays=arrays,
        counts=counts,
        cat_boundaries=cat_boundaries,
        cat_threshold=cat_threshold,
        parameters=parameters,
        blocks=blocks,
    )


def format_ints(array) -> str:
    return " ".join(map(str, np.asarray(array, dtype=np.int64).tolist()))


def format_tree_arrays(fields_list: list) -> list:
    """Each tree's number arrays (INT_KEYS and FLOAT_KEYS) as text, converted
    for all trees at once; other entries are copied as they are."""
    formatted = [dict(fields) for fields in fields_list]
    if not formatted:
        return formatted
    for key in INT_KEYS + FLOAT_KEYS:
        is_float = key in FLOAT_KEYS
        parts = [np.asarray(fields[key], dtype=np.float64 if is_float else np.int64) for fields in fields_list]
        # repr of a Python float is the shortest string that reads back as the same
        # double, so values survive the trip through LightGBM's parser bit for bit.
        tokens = list(map(repr if is_float else str, np.concatenate(parts).tolist()))
        start = 0
        for fields, part in zip(formatted, parts):
            fields[key] = " ".join(tokens[start : start + part.shape[0]])
            start += part.shape[0]
    return formatted


def tree_block(index: int, fields: dict) -> str:
    """One "Tree=i" block, exactly as LightGBM lays it out (``Tree::ToString``
    plus the blank line ``SaveModelToString`` adds)."""
    lines = [f"Tree={index}", f"num_leaves={fields['num_leaves']}", f"num_cat={fields['num_cat']}"]
    for key in TREE_KEYS[2:14]:
        lines.append(f"{key}={fields[key]}")
    if fields["num_cat"] > 0:
        lines.append(f"cat_boundaries={fields['cat_boundaries']}")
        lines.append(f"cat_threshold={fields['cat_threshold']}")
    lines.append("is_linear=0")
    lines.append(f"shrinkage={fields['shrinkage']}")
    return "\n".join(lines) + "\n\n\n"


def model_string(header: list, blocks: list, importances: list, parameters: str) -> str:
    """Assemble a model string; ``tree_sizes`` is computed from the very blocks
    written, so LightGBM's parallel loader finds every block where it looks."""
    sizes = " ".join(str(len(block.encode("utf-8"))) for block in blocks)
    lines = ["tree"]
    for key, value in header:
        lines.append(key if value is None else f"{key}={value}")
    lines.append(f"tree_sizes={sizes}")
    parts = ["\n".join(lines), "\n\n", "".join(blocks), "end of trees\n", "\nfeature_importances:\n"]
    parts.extend(f"{name}={count}\n" for name, count in importances)
    parts.append(parameters if parameters.startswith("\n") else "\n" + parameters)
    return "".join(parts)


def objective_link(objective: str | None) -> tuple[str, float, bool]:
    """(link, link_scale, is_classification) of a model string's objective line."""
    if objective is None:  # custom objective: LightGBM's predict returns raw scores
        return "identity", 1.0, False
    name, *options = objective.split()
    settings = dict(option.split(":", 1) for option in options if ":" in option)
    if name == "binary":
        return "sigmoid", float(settings.get("sigmoid", 1.0)), True
    if name == "multiclass":
        return "softmax", 1.0, True
    if name == "multiclassova":
        return "sigmoid", float(settings.get("sigmoid", 1.0)), True
    if name == "cross_entropy":
        return "sigmoid", 1.0, False
    if name in _EXP_OBJECTIVES:
        return "exp", 1.0, False
    if name == "regression" and "sqrt" in options:
        raise UnsupportedModelError(
            "LightGBM regression with reg_sqrt=True is not supported: its predictions are sign(raw) * raw**2, "
            "which the common format's links cannot express; retrain without reg_sqrt"
        )
    if name in _IDENTITY_OBJECTIVES:
        return "identity", 1.0, False
    raise UnsupportedModelError(
        f"the LightGBM objective {name!r} is not supported (its prediction transform has no exact link in the "
        f"common format); supported objectives: {', '.join(_SUPPORTED_OBJECTIVES)}, and custom objectives"
    )
