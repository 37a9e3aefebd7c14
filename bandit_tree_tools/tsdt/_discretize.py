"""Numeric features to categories: quantile bins, or the thresholds a fitted
tree model actually uses ("the optimal tree over my model's own split points")."""

from dataclasses import dataclass

import numpy as np

from .._validation import Interval, validate_params
from ..exceptions import DataError
from ..tree import MISSING_ZERO_OR_NAN, refuse_complex_and_times
from ..tree._arrays import ZERO_THRESHOLD
from ..tree._input import check_column_names


@dataclass(frozen=True)
class Bins:
    """How :func:`discretize` cut each column, to apply the same cuts to new data.

    ``thresholds[j]`` is a sorted float64 array of cut points for column ``j``
    or ``None`` for a column kept as it is (already categorical). With
    ``split_rule="le"`` category ``c`` holds ``t[c-1] < x <= t[c]``; with
    ``"lt"``, ``t[c-1] <= x < t[c]`` (the model's own comparison). Values are
    cast to ``input_dtype`` before comparing. Missing values get the code
    ``len(t) + 1``, one past the last interval.
    """

    thresholds: tuple
    split_rule: str = "le"
    input_dtype: str = "float64"
    feature_names: tuple | None = None

    def n_categories(self) -> np.ndarray:
        return np.array([0 if t is None else len(t) + 2 for t in self.thresholds], dtype=np.int64)

    def inverse(self, codes) -> np.ndarray:
        """Numeric rows in the categories ``codes`` (float or int codes,
        ``(n_rows, n_features)``, NaN or the missing code where missing): for
        each category one value inside its interval, as the comparison sees
        it (``split_rule``, values cast to ``input_dtype``), NaN where
        missing; kept columns as they are. A model whose every threshold on
        a cut column is one of the cuts routes these rows exactly as the
        rows the codes were made from."""
        float_type = np.float32 if self.input_dtype == "float32" else np.float64
        rows = np.array(codes, dtype=np.float64)
        for j, thresholds in enumerate(self.thresholds):
            if thresholds is None:
                continue
            inside = np.append(_inside(thresholds, self.split_rule, float_type), np.nan)  # the missing code: NaN
            column = rows[:, j]
            present = ~np.isnan(column)
            code = column[present]
            if np.any((code < 0) | (code >= inside.size) | (code != np.round(code))):
                raise DataError(
                    f"column {j} holds codes outside 0..{inside.size - 1}, the categories its bins cut "
                    "(intervals, then missing); pass the codes discretize made with these bins"
                )
            column[present] = inside[code.astype(np.int64)]
        return rows

    def __repr__(self) -> str:
        cuts = [None if t is None else len(t) for t in self.thresholds]
        return f"Bins(n_features={len(self.thresholds)}, cuts per feature={cuts}, split_rule={self.split_rule!r})"


def _inside(thresholds, rule, float_type) -> np.ndarray:
    """One value of ``float_type`` inside each interval the cuts make, in code
    order: with ``"le"`` the largest at most each cut, then one above the last;
    with ``"lt"`` one below the first, then the smallest at least each cut."""
    down, up = float_type(-np.inf), float_type(np.inf)
    # a cut at infinity (scikit-learn's "missing or not") has the finite values below it
    largest = float(np.finfo(float_type).max)

    def at_most(value):
        rounded = float_type(min(value, largest))
        return rounded if rounded <= value else np.nextafter(rounded, down)

    def at_least(value):
        rounded = float_type(max(value, -largest))
        return rounded if rounded >= value else np.nextafter(rounded, up)

    if len(thresholds) == 0:
        return np.zeros(1)
    if rule == "le":
        last = at_least(thresholds[-1])
        values = [at_most(t) for t in thresholds] + [last if last > thresholds[-1] else np.nextafter(last, up)]
    else:
        first = at_most(thresholds[0])
        values = [first if first < thresholds[0] else np.nextafter(first, down)] + [at_least(t) for t in thresholds]
    return np.array(values, dtype=np.float64)


def _labels(thresholds, rule) -> list:
    edges = [f"{t:.10g}" for t in thresholds]
    if rule == "le":
        bounds = ["-inf"] + edges + ["inf"]
        labels = [f"({bounds[i]}, {bounds[i + 1]}]" for i in range(len(edges))] + [f"({bounds[-2]}, inf)"]
    else:
        bounds = ["-inf"] + edges + ["inf"]
        labels = [f"[{bounds[i]}, {bounds[i + 1]})" for i in range(len(edges) + 1)]
        labels[0] = labels[0].replace("[-inf", "(-inf")
    labels.append("missing")
    if len(set(labels)) != len(labels):  # cut points closer than 10 digits
        labels = [f"bin {i}" for i in range(len(labels) - 1)] + ["missing"]
    return labels


def _codes(values, thresholds, rule, input_dtype) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if input_dtype == "float32":
        values = values.astype(np.float32).astype(np.float64)
    codes = np.searchsorted(thresholds, values, side="left" if rule == "le" else "right").astype(np.int64)
    codes[np.isnan(values)] = len(thresholds) + 1
    return codes


def zero_interval_cuts(rule) -> tuple:
    """The cuts that make zero (``|x| <= ZERO_THRESHOLD``) an interval of its
    own under ``rule``: a split that sends zero where missing values go
    (LightGBM's ``zero_as_missing``) tells it apart from its neighbours."""
    if rule == "le":
        return float(np.nextafter(-ZERO_THRESHOLD, -np.inf)), ZERO_THRESHOLD
    return -ZERO_THRESHOLD, float(np.nextafter(ZERO_THRESHOLD, np.inf))


def _model_bins(model, n_features, feature_names) -> Bins:
    from ..interop import from_model

    ensemble = from_model(model)
    if ensemble.n_features_in_ != n_features:
        raise DataError(
            f"X has {n_features} features, but the model was trained on {ensemble.n_features_in_}; "
            "pass the columns the model was trained on"
        )
    if feature_names is not None and ensemble.feature_names_in_ is not None:  # each column takes its own cuts
        check_column_names(feature_names, ensemble.feature_names_in_)
    cuts = [set() for _ in range(n_features)]
    categorical = np.zeros(n_features, dtype=bool)
    zero_cuts = set(zero_interval_cuts(ensemble.split_rule))
    for tree in ensemble.trees:
        internal = tree.children_left >= 0
        for node in np.flatnonzero(internal):
            feature = int(tree.feature[node])
            if tree.is_categorical[node]:
                categorical[feature] = True
            else:
                cuts[feature].add(float(tree.threshold[node]))
                if tree.missing_type[node] == MISSING_ZERO_OR_NAN:
                    cuts[feature] |= zero_cuts
    thresholds = tuple(
        None if categorical[j] else np.array(sorted(cuts[j]), dtype=np.float64) for j in range(n_features)
    )
    return Bins(thresholds, ensemble.split_rule, ensemble.input_dtype, feature_names)


def _quantile_bins(columns, n_bins, feature_names) -> Bins:
    levels = np.arange(1, n_bins) / n_bins
    thresholds = []
    for values in columns:
        if values is None:
            thresholds.append(None)
            continue
        finite = values[~np.isnan(values)]
        cuts = np.unique(np.quantile(finite, levels)) if finite.size else np.empty(0)
        if finite.size and cuts.size and cuts[-1] >= finite.max():
            cuts = cuts[:-1]  # a cut at the maximum leaves its upper bin empty
        thresholds.append(cuts.astype(np.float64))
    return Bins(tuple(thresholds), "le", "float64", feature_names)


DISCRETIZE_CONSTRAINTS = {"n_bins": [Interval(int, 2, None)], "bins": [Bins, None], "return_bins": ["boolean"]}


@validate_params(DISCRETIZE_CONSTRAINTS, data=("X", "model"))
def discretize(X, model=None, *, n_bins=4, bins=None, return_bins=False):
    """Turn numeric features into categories for TSDT and the exact solver.

    Parameters
    ----------
    X : array-like or pandas DataFrame (n_rows, n_features)
        Numeric columns are cut; pandas categorical columns are kept as they are.
    model : fitted tree model or Ensemble, optional
        Cut every column at the thresholds the model's numeric splits use
        (with the model's own comparison, ``<=`` or ``<``, and float32
        casting where the library does it), so the categories are exactly
        the intervals the model can tell apart (zero, ``|x| <= 1e-35``, is
        one of them where a split sends it with the missing values, as
        LightGBM's ``zero_as_missing`` does). Columns the model never
        splits become a single category. Columns the model splits by
        category sets are kept.
    n_bins : int, default=4
        Without a model: quantile bins per column (fewer when values repeat).
    bins : Bins, optional
        Cuts returned earlier with ``return_bins=True``: apply them to new
        rows (for example the test set) so the codes match.
    return_bins : bool, default=False
        Also return the :class:`Bins` used.

    Returns
    -------
    X_binned : int64 ndarray, or a DataFrame of pandas categoricals (interval
        labels, plus a "missing" category for NaN) when ``X`` is a DataFrame.
        In the array, NaN takes a code of its own, one above the column's
        intervals (a cut column of ``k`` intervals: codes 0..k-1, NaN k).
    bins : Bins, only with ``return_bins=True``.

    Raises
    ------
    ParameterError
        For a bad ``n_bins``, ``bins`` or ``return_bins``.
    DataError
        For an empty or non-numeric ``X``, or one whose columns do not match
        the ``bins`` or the model.

    Examples
    --------
    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> codes, bins = btt.discretize(X[:150, :3], n_bins=4, return_bins=True)
    >>> codes.shape, int(codes.max())
    ((150, 3), 3)
    >>> btt.discretize(X[150:, :3], bins=bins).shape  # the same cuts on new rows
    (50, 3)
    """
    is_frame = hasattr(X, "columns") and hasattr(X, "dtypes")
    if is_frame:
        feature_names = tuple(str(column) for column in X.columns)
        columns = []
        for column in X.columns:
            series = X[column]
            refuse_complex_and_times(series, f"column {column!r}")
            if str(series.dtype) == "category":
                columns.append(None)
                continue
            try:
                columns.append(series.to_numpy(dtype=np.float64, na_value=np.nan))
            except (TypeError, ValueError):
                raise DataError(
                    f"column {column!r} has dtype {series.dtype}, which is not numeric; make it a pandas "
                    f"categorical (X[{column!r}].astype('category')) to keep it as categories"
                ) from None
    else:
        feature_names = None
        if hasattr(X, "tocsr"):  # scipy.sparse
            raise DataError("X is a sparse matrix; discretize needs dense rows: pass X.toarray()")
        refuse_complex_and_times(X)
        try:
            array = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise DataError(f"X must be numeric to be discretised: {error}") from None
        if array.ndim != 2:
            raise DataError(f"X must be 2-D (n_rows, n_features), got {array.ndim} dimensions")
        columns = [array[:, j] for j in range(array.shape[1])]
    if len(columns) == 0 or len(columns[0] if columns[0] is not None else X) == 0:
        raise DataError("X is empty; discretize needs at least one row and one column")
    if bins is None:
        if model is not None:
            bins = _model_bins(model, len(columns), feature_names)
        else:
            bins = _quantile_bins(columns, int(n_bins), feature_names)
    if len(bins.thresholds) != len(columns):
        raise DataError(f"X has {len(columns)} columns, but the bins were made for {len(bins.thresholds)}")
    if feature_names is not None and bins.feature_names is not None:
        check_column_names(feature_names, bins.feature_names, when="when the bins were cut")
    if is_frame:
        import pandas as pd

        out = {}
        for position, column in enumerate(X.columns):
            thresholds = bins.thresholds[position]
            if thresholds is None or columns[position] is None:
                out[column] = X[column]
                continue
            codes = _codes(columns[position], thresholds, bins.split_rule, bins.input_dtype)
            out[column] = pd.Categorical.from_codes(codes, categories=_labels(thresholds, bins.split_rule))
        result = pd.DataFrame(out, index=X.index)
    else:
        result = np.empty((len(columns[0]), len(columns)), dtype=np.int64)
        for position, values in enumerate(columns):
            thresholds = bins.thresholds[position]
            if thresholds is None:
                if np.any(np.isnan(values)) or np.any(values != np.floor(values)) or np.any(values < 0):
                    raise DataError(
                        f"column {position} is split by category sets in the model, so it is kept as category "
                        "codes, but it holds negative, missing or non-integer values"
                    )
                result[:, position] = values.astype(np.int64)
            else:
                result[:, position] = _codes(values, thresholds, bins.split_rule, bins.input_dtype)
    return (result, bins) if return_bins else result
