"""compare_trees: how far is a tree from the best tree of its size?"""

import numbers
import time
import warnings

import numpy as np

from .._validation import Interval, check_random_state, seed_from, validate_params
from ..exceptions import DataError, ParameterError, missing_dependency
from ..tree import MISSING_ZERO_OR_NAN
from ._categorical_tree import categorical_codes, encode_labels
from ._discretize import Bins, zero_interval_cuts
from ._exact import optimal_categorical_tree
from ._search import TSDTClassifier

# TSDTClassifier's variant -> the method's name in the table (and in the comparison panel)
VARIANT_TITLES = {"optimistic": "optimistic TSDT", "fast": "Fast-TSDT", "clark": "TSDT"}

COLUMNS = [
    "method",
    "lambda_",
    "train_accuracy",
    "test_accuracy",
    "n_leaves",
    "n_splits",
    "objective",
    "seconds",
    "note",
]


def _optional(package, extra, purpose, wanted):
    """Import ``package`` when ``wanted`` is True (required) or None (if installed)."""
    if wanted is False:
        return None
    try:
        return __import__(package)
    except ImportError:
        if wanted:
            raise missing_dependency(package, extra, purpose) from None
        return None


def _row(method, lambda_, train, test, n_leaves, n_splits, seconds, note=""):
    return {
        "method": method,
        "lambda_": lambda_,
        "train_accuracy": train,
        "test_accuracy": test,
        "n_leaves": n_leaves,
        "n_splits": n_splits,
        "objective": train - lambda_ * n_splits if np.isfinite(train) else np.nan,
        "seconds": seconds,
        "note": note,
    }


def _cart_rows(X_train, y_train, X_test, y_test, lambdas, random_state):
    from sklearn.tree import DecisionTreeClassifier

    rows = []
    started = time.perf_counter()
    full = DecisionTreeClassifier(random_state=random_state).fit(X_train, y_train)
    seconds = time.perf_counter() - started
    for lambda_ in lambdas:
        rows.append(
            _row(
                "CART",
                lambda_,
                full.score(X_train, y_train),
                full.score(X_test, y_test),
                full.get_n_leaves(),
                full.get_n_leaves() - 1,
                seconds,
            )
        )
    # Cost-complexity pruning, alpha chosen on the training objective (a binary split counts once).
    started = time.perf_counter()
    path = full.cost_complexity_pruning_path(X_train, y_train)
    pruned = [
        DecisionTreeClassifier(random_state=random_state, ccp_alpha=alpha).fit(X_train, y_train)
        for alpha in np.unique(np.maximum(path.ccp_alphas, 0.0))
    ]  # the path can hold -1e-19
    seconds = time.perf_counter() - started
    for lambda_ in lambdas:
        objective = [tree.score(X_train, y_train) - lambda_ * (tree.get_n_leaves() - 1) for tree in pruned]
        best = pruned[int(np.argmax(objective))]
        rows.append(
            _row(
                "CART+CCP",
                lambda_,
                best.score(X_train, y_train),
                best.score(X_test, y_test),
                best.get_n_leaves(),
                best.get_n_leaves() - 1,
                seconds,
                f"ccp_alpha={best.ccp_alpha:.4g}",
            )
        )
    return rows


def _river_rows(river, X_train, y_train, X_test, y_test, lambdas, n_samples, random_state):
    from river import tree as river_tree

    rng = check_random_state(random_state)
    rows = []
    names = [f"x{j}" for j in range(X_train.shape[1])]

    def as_dict(row):  # strings: river splits nominal attributes multiway
        return {name: str(int(value)) for name, value in zip(names, row)}

    train_dicts = [as_dict(row) for row in X_train]
    test_dicts = [as_dict(row) for row in X_test]
    for label, factory in (
        ("VFDT (river)", river_tree.HoeffdingTreeClassifier),
        ("EFDT (river)", river_tree.ExtremelyFastDecisionTreeClassifier),
    ):
        model = factory()
        started = time.perf_counter()
        order = np.concatenate([rng.permutation(len(train_dicts)) for _ in range(-(-n_samples // len(train_dicts)))])
        for index in order[:n_samples]:
            model.learn_one(train_dicts[index], y_train[index])
        seconds = time.perf_counter() - started

        def accuracy(dicts, labels):
            predictions = [model.predict_one(x) for x in dicts]
            return float(np.mean([p == t for p, t in zip(predictions, labels)]))

        train, test = accuracy(train_dicts, y_train), accuracy(test_dicts, y_test)
        for lambda_ in lambdas:
            rows.append(
                _row(label, lambda_, train, test, model.n_leaves, model.n_branches, seconds, f"{n_samples} stream rows")
            )
    return rows


def _dl85_rows(dl85, X_train, y_train, X_test, y_test, lambdas, depths):
    rows = []
    if not np.all(np.isin(X_train, (0, 1))) or not np.all(np.isin(X_test, (0, 1))):
        warnings.warn(
            "DL8.5 needs binary (0/1) features; its rows are left out", stacklevel=4
        )  # the caller of compare_trees
        return rows
    for depth in depths:
        model = dl85.DL85Classifier(max_depth=depth)
        started = time.perf_counter()
        model.fit(X_train.astype(np.int64), y_train)
        seconds = time.perf_counter() - started
        train = float(np.mean(model.predict(X_train.astype(np.int64)) == y_train))
        test = float(np.mean(model.predict(X_test.astype(np.int64)) == y_test))
        n_leaves = _count_dl85_leaves(model.tree_)
        for lambda_ in lambdas:
            rows.append(_row(f"DL8.5 depth {depth}", lambda_, train, test, n_leaves, n_leaves - 1, seconds))
    return rows


def _count_dl85_leaves(tree) -> int:
    if not isinstance(tree, dict) or "left" not in tree:
        return 1
    return sum(_count_dl85_leaves(tree[side]) for side in ("left", "right") if side in tree)


COMPARE_CONSTRAINTS = {
    "lambdas": ["array-like"],
    "models": [None, "array-like"],
    "dl85_depths": ["array-like"],
    "max_iter": [Interval(int, 1, None)],
    "n_iter": [Interval(int, 1, None), None],
    "batch_size": [Interval(int, 1, None)],
    "gamma": [Interval(float, 0.0, 1.0, "right")],
    "random_state": ["random_state"],
    "exact": [None, "boolean"],
    "max_subproblems": [Interval(int, 1, None)],
    "river": [None, "boolean"],
    "dl85": [None, "boolean"],
    "stream_passes": [Interval(int, 1, None)],
    "bins": [Bins, None],
}


@validate_params(COMPARE_CONSTRAINTS, data=("X_train", "y_train", "X_test", "y_test"))
def compare_trees(
    X_train,
    y_train,
    X_test,
    y_test,
    *,
    lambdas=(0.01,),
    models=None,
    max_iter=1000,
    batch_size=100,
    gamma=0.75,
    random_state=0,
    exact=None,
    max_subproblems=200_000,
    river=None,
    dl85=None,
    dl85_depths=(2, 3, 4),
    stream_passes=10,
    n_iter=None,
    bins=None,
):
    """One table comparing trees on the same categorical data.

    Rows, for every ``lambda_`` in ``lambdas``: the optimistic search
    (:class:`TSDTClassifier`'s default), Fast-TSDT and TSDT (the paper's,
    ``variant="fast"`` and ``"clark"``), the
    exact optimum (:func:`optimal_categorical_tree`, when it fits in
    ``max_subproblems``), scikit-learn's CART grown fully and CART with the
    cost-complexity pruning that maximises the same training objective, every
    model in ``models`` (anything :func:`bandit_tree_tools.from_model`
    imports, evaluated on the same columns, leaves and splits counted over
    all its trees), river's VFDT and EFDT (``stream_passes`` passes over the
    training rows, attributes as nominal values) and DL8.5 at each depth of
    ``dl85_depths`` (binary features only). Models that do not depend on
    ``lambda_`` appear once per ``lambda_`` with the same fit.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array-like
        Categorical attributes (non-negative integer codes or pandas
        categoricals, as :func:`discretize` makes them) and labels.
    lambdas : float or sequence of float, default (0.01,)
        Penalties per split, each finite and >= 0.
    models : sequence or dict {name: model}, optional
        Fitted models to add as rows. Each reads the columns as given
        (a model fitted on these codes), or with ``bins`` the numeric
        features they were cut from.
    max_iter, batch_size, gamma
        Passed to every :class:`TSDTClassifier`.
    random_state : None, int, numpy Generator or RandomState, default 0
        One seed for the whole table: an int is passed to every model; a
        Generator or RandomState gives one draw, used like an int.
    exact, river, dl85 : None or bool
        None includes the row when possible (installed, feasible), True
        requires it (raises if impossible), False leaves it out.
    max_subproblems : int, default 200_000
        Budget of the exact solver.
    dl85_depths : sequence of int, default (2, 3, 4)
    stream_passes : int, default 10
    n_iter : int, deprecated
        The former name of ``max_iter`` (a FutureWarning).
    bins : Bins, optional
        The cuts of ``discretize(X, model=model, return_bins=True)``: then
        the ``models`` read numeric features, as ``model`` does, and each
        is evaluated on one value inside each category's interval
        (``Bins.inverse``). For a model whose thresholds are all cuts (the
        model the cuts came from) that is its prediction on the original
        rows, exactly; a model splitting elsewhere is refused.

    Returns
    -------
    pandas.DataFrame
        Columns: method, ``lambda_``, train_accuracy, test_accuracy, n_leaves,
        n_splits (a multiway split counts once), objective (train accuracy -
        ``lambda_ * n_splits``), seconds (fit time), note.

    Raises
    ------
    ParameterError
        For bad parameters.
    DataError
        For data that are not categorical codes, or test columns that differ;
        for a model in ``models`` that splits a column far outside its codes
        (fitted on other columns: pass ``bins``), or, with ``bins``, at a
        threshold that is not one of the cuts.
    MissingDependencyError
        When ``river=True`` or ``dl85=True`` and the package is missing.

    Examples
    --------
    >>> import numpy as np
    >>> import bandit_tree_tools as btt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(300, 4))
    >>> y = (X[:, 0] == X[:, 1]).astype(int)
    >>> table = btt.compare_trees(X[:200], y[:200], X[200:], y[200:], max_iter=100, river=False, dl85=False)
    >>> sorted(table["method"])
    ['CART', 'CART+CCP', 'Fast-TSDT', 'TSDT', 'exact', 'optimistic TSDT']
    >>> float(table.set_index("method").loc["exact", "test_accuracy"])
    1.0
    """
    import pandas as pd

    if n_iter is not None:
        warnings.warn(
            "compare_trees(n_iter=...) is now max_iter; n_iter will be removed in a future release",
            FutureWarning,
            stacklevel=3,
        )  # past validate_params: at the caller
        max_iter = n_iter
    lambdas = list(np.atleast_1d(lambdas).tolist())
    if not lambdas or not all(Interval(float, 0.0, None, finite=True).accepts(value) for value in lambdas):
        raise ParameterError(
            f"lambdas of compare_trees must hold one or more finite numbers >= 0 (each a lambda_), got {lambdas}"
        )
    lambdas = [float(value) for value in lambdas]
    depths = list(np.atleast_1d(dl85_depths).tolist())
    if not depths or not all(Interval(int, 1, None).accepts(depth) for depth in depths):
        raise ParameterError(f"dl85_depths of compare_trees must hold one or more ints >= 1, got {depths}")
    # one seed for every model of the table (a Generator or RandomState gives one draw), so each
    # method sees the same randomness as with an int
    if not isinstance(random_state, numbers.Integral):
        random_state = seed_from(random_state)
    codes_train, n_categories, _, train_categories = categorical_codes(X_train, fitting=True)
    codes_test, _, _, _ = categorical_codes(X_test, fitting=False, categories=train_categories)
    if codes_test.shape[1] != codes_train.shape[1]:
        raise DataError(
            f"X_test has {codes_test.shape[1]} features but X_train has {codes_train.shape[1]}; pass the same columns"
        )
    classes, y_train_codes = encode_labels(y_train, codes_train.shape[0])
    y_train_labels = classes[y_train_codes]
    y_test_labels = np.asarray(y_test)
    test_codes = np.nan_to_num(codes_test, nan=-1.0)  # CART, river and DL8.5 read a missing code as -1
    rows = []
    for lambda_ in lambdas:
        rows += _tsdt_rows(X_train, y_train, X_test, y_test, lambda_, max_iter, batch_size, gamma, random_state)
        if exact is not False:
            rows.append(_exact_row(X_train, y_train, X_test, y_test, lambda_, max_subproblems, required=bool(exact)))
    rows.extend(_cart_rows(codes_train, y_train_labels, test_codes, y_test_labels, lambdas, random_state))
    if models:
        rows += _passed_in_rows(
            models, X_train, y_train, X_test, y_test_labels, lambdas, (codes_train, codes_test, n_categories), bins
        )
    river_module = _optional("river", "river", "compare_trees' VFDT and EFDT rows", river)
    if river_module is not None:
        n_samples = int(stream_passes) * codes_train.shape[0]
        rows.extend(
            _river_rows(
                river_module,
                codes_train,
                y_train_labels,
                test_codes,
                y_test_labels,
                lambdas,
                n_samples,
                random_state,
            )
        )
    dl85_module = _optional("dl85", "dl85", "compare_trees' DL8.5 rows", dl85)
    if dl85_module is not None:
        rows.extend(
            _dl85_rows(
                dl85_module,
                codes_train,
                y_train_labels,
                test_codes,
                y_test_labels,
                lambdas,
                dl85_depths,
            )
        )
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.sort_values("lambda_", kind="stable").reset_index(drop=True)


def _tsdt_rows(X_train, y_train, X_test, y_test, lambda_, max_iter, batch_size, gamma, random_state) -> list:
    """The table's rows of the three TSDT variants at ``lambda_``."""
    rows = []
    for variant, label in VARIANT_TITLES.items():
        model = TSDTClassifier(
            lambda_=lambda_,
            max_iter=max_iter,
            batch_size=batch_size,
            variant=variant,
            gamma=gamma,
            random_state=random_state,
        )
        started = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - started
        rows.append(
            _row(
                label,
                lambda_,
                model.score(X_train, y_train),
                model.score(X_test, y_test),
                model.n_leaves_,
                model.n_splits_,
                seconds,
            )
        )
    return rows


def _exact_row(X_train, y_train, X_test, y_test, lambda_, max_subproblems, *, required: bool) -> dict:
    """The exact optimum's row at ``lambda_``; when it does not fit in
    ``max_subproblems``, a row saying so (or the DataError if ``required``)."""
    started = time.perf_counter()
    try:
        optimum = optimal_categorical_tree(X_train, y_train, lambda_, max_subproblems=max_subproblems)
    except DataError as error:
        if required:
            raise
        note = f"infeasible: {str(error)[:80]}"
        return _row("exact", lambda_, np.nan, np.nan, np.nan, np.nan, time.perf_counter() - started, note)
    return _row(
        "exact",
        lambda_,
        optimum.score(X_train, y_train),
        optimum.score(X_test, y_test),
        optimum.n_leaves_,
        optimum.n_splits_,
        time.perf_counter() - started,
    )


def _passed_in_rows(models, X_train, y_train, X_test, y_test_labels, lambdas, codes, bins) -> list:
    """One row per model the user passed in and ``lambda_`` (the same fit
    each time), its leaves and splits counted over all its trees. ``codes``:
    the train and test codes, and the categories of each column; with
    ``bins`` the models read the numeric rows the categories stand for
    (``Bins.inverse``)."""
    from ..interop import from_model

    if bins is not None:
        if len(bins.thresholds) != codes[0].shape[1]:
            raise DataError(
                f"bins were made for {len(bins.thresholds)} columns, but X_train has {codes[0].shape[1]}; pass "
                "the bins discretize cut these columns with"
            )
        X_train, X_test = (_numeric_rows(bins, part, X) for part, X in zip(codes[:2], (X_train, X_test)))
    rows = []
    items = models.items() if isinstance(models, dict) else ((type(m).__name__, m) for m in models)
    for name, model in items:
        ensemble = from_model(model)
        _refuse_other_columns(name, ensemble, codes, bins)
        train = float(np.mean(ensemble.predict(X_train) == np.asarray(y_train)))
        test = float(np.mean(ensemble.predict(X_test) == y_test_labels))
        n_leaves = ensemble.n_leaves
        for lambda_ in lambdas:
            rows.append(_row(name, lambda_, train, test, n_leaves, ensemble.n_nodes - n_leaves, np.nan, "passed in"))
    return rows


def _numeric_rows(bins, codes, X):
    """``bins.inverse(codes)``, a DataFrame of ``X``'s columns where ``X`` is
    one (the columns kept as categories stay categorical)."""
    rows = bins.inverse(codes)
    if not hasattr(X, "columns"):
        return rows
    import pandas as pd

    columns = {}
    for j, column in enumerate(X.columns):
        kept = bins.thresholds[j] is None and str(X.iloc[:, j].dtype) == "category"
        columns[column] = X.iloc[:, j] if kept else pd.Series(rows[:, j], index=X.index)
    return pd.DataFrame(columns)


def _split_thresholds(ensemble):
    """(feature, threshold, whether zero goes with the missing values) of
    every split of ``ensemble`` on a number."""
    splits = []
    for tree in ensemble.trees:
        split = (tree.children_left >= 0) & ~np.asarray(tree.is_categorical, dtype=bool)
        zero = tree.missing_type[split] == MISSING_ZERO_OR_NAN
        splits += zip(tree.feature[split].tolist(), tree.threshold[split].tolist(), zero.tolist())
    return splits


def _refuse_other_columns(name, ensemble, codes, bins):
    """A model in ``models`` must read the columns it is given: the codes
    themselves, or with ``bins`` the numbers they were cut from, at cuts
    that include each of its thresholds (else its rows would be a silent
    wrong answer)."""
    if bins is not None:
        if (ensemble.split_rule, ensemble.input_dtype) != (bins.split_rule, bins.input_dtype):
            raise DataError(
                f"model {name!r} compares {ensemble.input_dtype} values with {ensemble.split_rule!r}, but the bins "
                f"were cut for {bins.split_rule!r} on {bins.input_dtype}: pass the bins of "
                "discretize(X, model=this model, return_bins=True)"
            )
        cuts = [None if t is None else set(t.tolist()) for t in bins.thresholds]
        zero = set(zero_interval_cuts(bins.split_rule))
        for feature, threshold, zero_missing in _split_thresholds(ensemble):
            needed = {threshold} | (zero if zero_missing else set())
            if cuts[feature] is not None and not needed <= cuts[feature]:
                raise DataError(
                    f"model {name!r} splits column {feature} at {threshold:.10g}"
                    f"{' (zero with the missing values)' if zero_missing else ''}, where the bins do not cut, "
                    "so its rows in a category can fall on both sides; pass the bins of discretize(X, model=this "
                    "model, return_bins=True)"
                )
        return
    both = np.vstack(codes[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
        low, high = np.nanmin(both, axis=0), np.nanmax(both, axis=0)
    high = np.fmax(high, codes[2] - 1.0)  # the categories declared (pandas), not only those present here
    for feature, threshold, _ in _split_thresholds(ensemble):
        # a model fitted on these codes splits between codes it saw: not far outside them
        if not low[feature] - 1.0 <= threshold <= high[feature] + 1.0:
            raise DataError(
                f"model {name!r} splits column {feature} at {threshold:.10g}, but its codes here run from "
                f"{low[feature]:.0f} to {high[feature]:.0f}: the model was fitted on other columns (the numeric "
                "features these categories were cut from?). Pass bins=, the cuts of discretize(X, model=model, "
                "return_bins=True), to evaluate it on the rows the categories stand for, or fit it on these codes"
            )
