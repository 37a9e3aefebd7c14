"""Input rows: ``check_X`` turns arrays, pandas frames and scipy sparse
matrices into the C-contiguous float array the routing engine reads, the way
the source library reads them; ``class_codes`` turns a classifier's labels
into the positions of its classes."""

import re
import warnings
import weakref

import numpy as np

from ..exceptions import DataError

_WHITESPACE = re.compile(r"\s")


def check_X(
    X, n_features: int, feature_names, input_dtype: str = "float64", feature_categories=None, *, library=None, name="X"
) -> np.ndarray:
    """Turn ``X`` into a C-contiguous 2-D array of ``input_dtype``; error messages call it ``name``.

    pandas columns must carry the training names in the training order;
    categorical columns become integer codes (NaN where missing), coded
    against ``feature_categories`` where given. ``library`` (the source
    library) decides what a pandas ``category`` column at a feature the model
    treats as numeric means: its values for scikit-learn (numeric categories,
    as ``np.asarray`` gives them), refused for LightGBM when the model records
    its categorical columns and for XGBoost with float categories (as they
    refuse them), its own codes otherwise (as LightGBM and XGBoost read
    them). scipy sparse matrices are densified (implicit entries are zeros,
    or missing for XGBoost, as each library reads them). Complex, datetime
    and timedelta data and numpy masked arrays are refused.
    """
    # One cast rule for every input path: each value is rounded once, straight to the model's
    # dtype (int64 beyond 2**53, longdouble and nullable integers are not first rounded to
    # float64), as scikit-learn and XGBoost cast.
    target = np.float32 if input_dtype == "float32" else np.float64
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        X = _frame_to_array(X, n_features, feature_names, feature_categories, library, target, name)
    elif _is_sparse(X):
        X = _sparse_to_array(X, library, target, name)
    elif type(X).__module__.split(".")[0] in ("xgboost", "lightgbm"):
        # a DMatrix or Dataset: the library's own training container, whose rows cannot be read back as
        # they were given (a DMatrix returns its missing cells as zeros, a Dataset frees its rows)
        library = {"xgboost": "an XGBoost", "lightgbm": "a LightGBM"}[type(X).__module__.split(".")[0]]
        raise DataError(
            f"{name} is {library} {type(X).__name__}; pass the rows it was made from (a numpy array, a pandas "
            "DataFrame or a scipy sparse matrix)"
        )
    elif isinstance(X, np.ma.MaskedArray):
        raise DataError(
            f"{name} is a numpy masked array; the mask would be ignored. Pass {name}.filled(np.nan) to treat "
            f"masked entries as missing values, or {name}.data to use the values under the mask"
        )
    if type(X) is np.ndarray and X.dtype in (np.float32, np.float64) and X.ndim == 2 and X.shape[1] == n_features:
        # float32 -> float64 is exact, so one step, and none when X already has the model's dtype and layout
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the libraries cast
            return np.ascontiguousarray(X, dtype=target)
    refuse_complex_and_times(X, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", getattr(np, "exceptions", np).ComplexWarning)
            array = X if type(X) is np.ndarray else np.asarray(X)
            if array.dtype.kind not in "biuf":  # objects, strings: through float64, as numpy parses them
                array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError, Warning) as error:
        hint = ""
        if "sequence" in str(error) or "inhomogeneous" in str(error):
            hint = " (rows of different lengths, or objects that are not numbers?)"
        raise DataError(
            f"{name} must be a 2-D array of numbers; converting it to float failed{hint}: {error}"
        ) from None
    if array.ndim == 1:
        raise DataError(
            f"{name} must be 2-D (n_rows, {n_features}), got a 1-D array of {array.shape[0]} values; "
            f"use {name}.reshape(1, -1) for a single row or {name}.reshape(-1, 1) for a single feature"
        )
    if array.ndim != 2:
        raise DataError(f"{name} must be 2-D (n_rows, {n_features}), got {array.ndim} dimensions")
    if array.shape[1] != n_features:
        raise DataError(
            f"{name} has {array.shape[1]} features, but the model was trained on {n_features}; "
            "pass the same columns as at training time"
        )
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the libraries cast
        return np.ascontiguousarray(array, dtype=target)


def refuse_complex_and_times(X, name: str = "X") -> None:
    """DataError for complex, datetime64 and timedelta64 arrays, which numpy
    would cast to floats silently (dropping the imaginary part, counting
    time units). Lists of such values fail the float conversion instead."""
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    if kind in ("c", "M", "m"):
        what = {"c": "complex", "M": "datetime64", "m": "timedelta64"}[kind]
        raise DataError(f"{name} has {what} values, which tree models do not take; convert them to real numbers first")


def one_per_row(y, n_rows: int, name: str = "y", rows: str = "X", what: str = "value", error=DataError) -> np.ndarray:
    """``y`` as a 1-D array of one ``what`` per row of ``rows`` (``n_rows``); a
    single column (a one-column DataFrame, an (n, 1) array) counts as 1-D, as
    scikit-learn takes it. ``error`` (a DataError by default) otherwise."""
    y = np.asarray(getattr(y, "to_numpy", lambda: y)())
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise error(f"{name} must be 1-D with one {what} per row of {rows}, got shape {y.shape}")
    if y.shape[0] != n_rows:
        raise error(f"{name} has {y.shape[0]} rows, but {rows} has {n_rows}; pass one {what} per row of {rows}")
    return y


def refuse_missing(y: np.ndarray, name: str, what: str) -> None:
    """Raise DataError for NaN or None in the 1-D ``y`` (a missing label must
    not become a class of its own, nor a missing target a number), naming
    ``name``, how many ``what`` are missing and the first row."""
    if y.dtype.kind not in "fcO":
        return
    import pandas as pd  # here: the routing layer loads without pandas

    missing = np.flatnonzero(pd.isna(y))
    if missing.size:
        raise DataError(
            f"{name} has {missing.size:,} missing {what} (NaN or None), the first at row {missing[0]}; drop those rows"
        )


def refuse_single_class(classes: np.ndarray, name: str = "y") -> None:
    """Raise DataError when a classifier's training labels ``classes`` (the
    distinct labels of ``name``) are fewer than two."""
    if len(classes) < 2:
        found = ", ".join(repr(label) for label in classes.tolist()) or "none"
        raise DataError(
            f"{name} has one class only ({found}); a classifier needs at least two classes in the training data"
        )


def class_codes(y: np.ndarray, classes: np.ndarray, name: str = "y") -> np.ndarray:
    """The position of each label of the 1-D ``y`` among a classifier's
    ``classes`` (int64). Labels compare as Python values do (1, 1.0 and True
    are one label). Raises DataError for missing labels, for continuous values
    given to a classifier whose classes are not floats, and for labels not
    among the classes; error messages call ``y`` ``name``."""
    # imported here: the routing layer loads without pandas and scikit-learn (0.7 s), and labels
    # are checked only where those are in use already
    import pandas as pd
    from sklearn.utils.multiclass import type_of_target

    refuse_missing(y, name, "labels")
    try:
        continuous = type_of_target(y) == "continuous"
    except (TypeError, ValueError):  # labels of mixed types (numbers among strings): the lookup reports them
        continuous = False
    if continuous and not np.issubdtype(classes.dtype, np.floating):
        raise DataError(
            f"{name} holds continuous values (e.g. {np.asarray(y)[:1].tolist()[0]!r}), but the model is a classifier "
            f"with classes {classes.tolist()[:10]}; pass class labels, or use a regression model"
        )
    lookup = {label: code for code, label in enumerate(classes.tolist())}
    # one dict lookup per distinct label
    position, distinct = pd.factorize(y)
    codes = np.array([lookup.get(label, -1) for label in distinct.tolist()] + [-1], dtype=np.int64)[position]
    if np.any(codes < 0):
        unknown = sorted({repr(label) for label in np.asarray(y)[codes < 0].tolist()})
        raise DataError(
            f"{name} contains labels the model never saw: {', '.join(unknown[:10])}; the model's classes are "
            f"{classes.tolist()[:20]}. Drop those rows or map them to known labels"
        )
    return codes


def _is_sparse(X) -> bool:
    module = type(X).__module__ or ""
    if not module.startswith("scipy.sparse"):
        return False
    from scipy.sparse import issparse

    return issparse(X)


def _sparse_to_array(X, library, target, name) -> np.ndarray:
    """A dense copy of a scipy sparse matrix: XGBoost reads entries a sparse
    matrix does not store as missing, the other libraries as zeros."""
    if X.ndim != 2:
        raise DataError(f"{name} must be 2-D, got a sparse array with {X.ndim} dimensions")
    if X.dtype.kind == "c":
        raise DataError(f"{name} has complex values, which tree models do not take; convert them to real numbers first")
    coo = X.tocoo(copy=True)
    coo.sum_duplicates()  # as toarray() would add them
    if library == "lightgbm":
        coo.data = _as_lightgbm_reads_sparse(X, coo.data)
    dense = np.full(coo.shape, np.nan if library == "xgboost" else 0.0, dtype=target)
    with np.errstate(over="ignore"):
        dense[coo.row, coo.col] = coo.data
    return dense


# LightGBM's kZeroThreshold (the float literal 1e-35f, widened to double) and the double below -kZeroThreshold
_LIGHTGBM_ZERO = float(np.float32(1e-35))
_BELOW_NEGATIVE_ZERO = float(np.nextafter(-_LIGHTGBM_ZERO, -np.inf))


def _as_lightgbm_reads_sparse(X, data: np.ndarray) -> np.ndarray:
    """Stored values of a sparse matrix as LightGBM's CSR path compares them.

    LightGBM's dense and CSC paths drop every ``|x| <= 1e-35f`` (as 0.0)
    before routing; its CSR path (also taken by COO and other formats, which
    it converts to CSR) keeps them and compares them as stored. The imported
    thresholds follow the dense rule (a threshold of ``-1e-35f`` is stored one
    double below it, see ``interop.lightgbm``), under which a stored
    ``-1e-35f`` goes right as a zero would; through CSR it goes left
    (``-1e-35f <= -1e-35f``). So that value is moved below the stored
    threshold; every other value already routes the same way."""
    from scipy.sparse import csc_matrix

    if isinstance(X, csc_matrix):  # the Python package sends CSC through the dense rule
        return data
    data = np.asarray(data, dtype=np.float64).copy()
    data[data == -_LIGHTGBM_ZERO] = _BELOW_NEGATIVE_ZERO
    return data


# ensemble -> int64 array of the features used by categorical splits (computed once per ensemble)
_CATEGORICAL_FEATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _categorical_features(ensemble) -> np.ndarray:
    found = _CATEGORICAL_FEATURES.get(ensemble)
    if found is None:
        parts = [tree.feature[tree.is_categorical == 1] for tree in ensemble.trees]
        found = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        _CATEGORICAL_FEATURES[ensemble] = found
    return found


def _categories_as_the_library_reads_them(ensemble, array: np.ndarray) -> np.ndarray:
    """The common format reads a category as ``int(x)`` and every negative
    value as an unknown category; the libraries differ at the edges:

    - LightGBM truncates toward zero first, so ``x`` in (-1, 0) is category 0;
    - scikit-learn's HistGradientBoosting encodes known category values only,
      so a fractional value (1.5) is an unknown category, i.e. missing.

    Such entries are rewritten (in a copy) so the kernels route them as the
    library does. Other libraries' values pass unchanged.
    """
    library = ensemble.source.library
    if library not in ("lightgbm", "sklearn"):
        return array
    features = _categorical_features(ensemble)
    if features.size == 0:
        return array
    block = array[:, features]
    if library == "lightgbm":
        fix = (block > -1) & (block < 0)
        replacement = 0.0
    else:
        fix = np.isfinite(block) & (block != np.floor(block))
        replacement = np.nan
    if not fix.any():
        return array
    array = array.copy()
    block[fix] = replacement
    array[:, features] = block
    return array


def non_numeric_columns(X) -> list:
    """Names of the pandas columns that are not numbers or booleans."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return []
    bad = []
    for column, dtype in zip(X.columns, X.dtypes):
        kind = getattr(dtype, "kind", "O")
        if str(dtype) == "category" or kind not in "biuf":
            bad.append(column)
    return bad


def check_unique_columns(X, name="X") -> None:
    """Refuse a DataFrame whose column names repeat (pandas returns a frame,
    not a column, for a repeated name); anything else passes."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return
    columns = [str(column) for column in X.columns]
    if len(set(columns)) == len(columns):
        return
    seen, repeated = set(), []
    for column in columns:
        if column in seen and column not in repeated:
            repeated.append(column)
        seen.add(column)
    raise DataError(
        f"{name} has duplicate column names {repeated[:5]}; every column of a DataFrame must have its own name "
        "(pandas returns a frame, not a column, for a repeated name): rename or drop the repeated columns"
    )


def check_column_names(columns, feature_names, name="X", when="at training time") -> None:
    """Refuse a frame's ``columns`` (their names) unless they are
    ``feature_names`` in order, saying which are missing or unexpected, or
    how to reorder them."""
    columns = [str(column) for column in columns]
    expected = [str(feature) for feature in feature_names]
    # LightGBM stores "mean radius" as "mean_radius" and accepts either
    underscored = [_WHITESPACE.sub("_", column) for column in columns]
    if columns == expected or underscored == expected:
        return
    # a column counts as present under either spelling, so a frame with "mean radius" whose
    # columns are only out of order is told to reorder them, not that "mean_radius" is missing
    missing = [feature for feature in expected if feature not in columns and feature not in underscored]
    extra = [column for column, plain in zip(columns, underscored) if column not in expected and plain not in expected]
    if missing or extra:
        raise DataError(
            f"{name}'s columns do not match the columns {when}: missing {missing[:5]}, unexpected "
            f"{extra[:5]}; pass the same columns as {when}"
        )
    # the order to ask for, in the frame's own spelling of each name
    spelling = {**dict(zip(underscored, columns)), **{column: column for column in columns}}
    order = [spelling[feature] for feature in expected]
    raise DataError(
        f"{name}'s columns are in another order than {when}; reorder them with "
        f"{name}[{order[:3]}...] (expected order starts {order[:5]}, got {columns[:5]})"
    )


def _frame_to_array(frame, n_features: int, feature_names, feature_categories, library, target, name) -> np.ndarray:
    columns = [str(column) for column in frame.columns]
    check_unique_columns(frame, name)
    if feature_names is not None:
        check_column_names(columns, feature_names, name)
    out = np.empty((len(frame), len(columns)), dtype=target)
    for position in range(len(columns)):
        series = frame.iloc[:, position]
        column = frame.columns[position]
        if str(series.dtype) == "category":
            out[:, position] = _category_column(series, column, position, feature_categories, library, name)
        else:
            if series.dtype.kind in ("c", "M", "m") or "datetime" in str(series.dtype):
                raise DataError(
                    f"column {column!r} of {name} has dtype {series.dtype}, which tree models do not take; convert it "
                    "to real numbers first"
                )
            try:
                out[:, position] = _column_values(series, target)
            except (TypeError, ValueError):
                raise DataError(
                    f"column {column!r} of {name} has dtype {series.dtype}, which is not numeric; encode it as numbers "
                    "or as a pandas 'category' column"
                ) from None
    return out


def _column_values(series, target) -> np.ndarray:
    """A numeric column rounded once to ``target``: numpy and nullable
    integers and longdouble cast straight to it (not through float64)."""
    dtype = series.dtype
    if (getattr(dtype, "kind", None) or "") in "iub" and hasattr(dtype, "numpy_dtype"):  # nullable Int64, boolean
        values = series.to_numpy(dtype=dtype.numpy_dtype, na_value=0)
        mask = series.isna().to_numpy()
        out = values.astype(target)
        out[mask] = np.nan
        return out
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        with np.errstate(over="ignore"):
            return series.to_numpy().astype(target)
    with np.errstate(over="ignore"):
        return series.to_numpy(dtype=np.float64, na_value=np.nan).astype(target)


def _category_column(series, column, position, feature_categories, library, name) -> np.ndarray:
    """A pandas ``category`` column as the source library reads it (see :func:`check_X`)."""
    training = None if feature_categories is None else feature_categories[position]
    if training is None and library == "sklearn":
        # scikit-learn reads the column through np.asarray: the category values
        categories = series.cat.categories
        if categories.dtype.kind not in "iufb":
            raise DataError(
                f"column {column!r} of {name} is a pandas 'category' column with non-numeric categories, but the "
                "scikit-learn model reads it as numbers; encode it as numbers"
            )
        return series.astype(np.float64).to_numpy(dtype=np.float64, na_value=np.nan)
    refused = (library == "lightgbm" and feature_categories is not None) or (
        library == "xgboost" and series.cat.categories.dtype.kind == "f"
    )
    if training is None and refused:
        raise DataError(
            f"column {column!r} of {name} is a pandas 'category' column, but the {library} model was trained on a "
            f"numeric column there and refuses one; pass its values as numbers ({name}[{str(column)!r}].astype(float))"
        )
    if training is not None:
        if library == "xgboost":  # XGBoost (>= 3.1, which stores them) refuses a category it never saw
            known = set(training)
            unseen = [value for value in series.cat.categories if value not in known]
            if unseen:
                raise DataError(
                    f"column {column!r} of {name} lists categories the XGBoost model never saw in training "
                    f"({unseen[:5]}), which XGBoost refuses; remove them from the column's categories first, so "
                    f"that their rows are missing values: {name}[{str(column)!r}].cat.set_categories(known), with the "
                    f"known categories from btt.from_model(model).feature_categories[{position}]"
                )
        series = series.cat.set_categories(list(training))
    codes = series.cat.codes.to_numpy().astype(np.float64)
    codes[codes < 0] = np.nan
    return codes
