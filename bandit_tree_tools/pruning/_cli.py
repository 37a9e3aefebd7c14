"""``bandit-tree-tools prune MODEL --data CSV --target COLUMN --out PATH``.

MODEL is a LightGBM text model (``.txt``), an XGBoost model (``.json`` or
``.ubj``) or a pickled scikit-learn / LightGBM / XGBoost estimator
(``.pkl``, ``.pickle``, ``.joblib``). The pruned model is written in the same
format, and the before/after metrics on the CSV's rows (with ``btt.prune``,
those that checked the tolerance) are printed. By
default the smallest model within ``--tolerance`` (``btt.prune``; give the
training rows with ``--train-data`` where you have them); ``--method bandit``
runs the paper's bandit pruning (``btt.bandit_prune``) instead.
"""

import argparse
import re
import sys
from pathlib import Path

from ..exceptions import BanditTreeToolsError, DataError
from ..interop import ADAPTERS, adapter_for_path
from ..interop._native_errors import first_line, native_errors

# each method's own options: their destination, and the method and parameter that take them
METHOD_OPTIONS = {
    "tolerance": ("prune", "tolerance"),
    "margin": ("prune", "margin"),
    "metric": ("prune", "metric"),
    "train_data": ("prune", "X_train"),
    "n_jobs": ("prune", "n_jobs"),
    "policy": ("bandit", "policy"),
    "rounds": ("bandit", "n_rounds"),
    "eval_size": ("bandit", "eval_size"),
    "candidates": ("bandit", "candidates"),
    "min_depth": ("bandit", "min_depth"),
    "strategy": ("bandit", "strategy"),
}


def _function(method: str):
    from ._bandit import bandit_prune
    from ._engine import prune

    return prune if method == "prune" else bandit_prune


def method_defaults() -> dict:
    """Each method's own options: ``{destination: (method, default)}``, the
    defaults read from the function that takes the option."""
    import inspect

    return {
        destination: (method, inspect.signature(_function(method)).parameters[parameter].default)
        for destination, (method, parameter) in METHOD_OPTIONS.items()
    }


def register(subparsers) -> None:
    from ..bandits import POLICIES
    from ._bandit import CANDIDATES, STRATEGIES
    from ._engine import METRICS

    defaults = method_defaults()

    parser = subparsers.add_parser(
        "prune",
        help="prune a saved tree model to the smallest one within a tolerance",
        description=__doc__.split("\n\n", 1)[1].strip(),
    )
    parser.add_argument(
        "model",
        help="; ".join(f"{adapter.name} {'/'.join(adapter.extensions)}" for adapter in ADAPTERS.values())
        + " (scikit-learn's files are pickles, which may hold any library's estimator)",
    )
    parser.add_argument("--data", required=True, help="CSV file of validation rows (with a header)")
    parser.add_argument("--target", required=True, help="column of the CSV holding the target")
    parser.add_argument("--out", required=True, help="where to write the pruned model (same format as MODEL)")
    parser.add_argument(
        "--method",
        default="prune",
        type=_method,
        choices=("prune", "bandit"),
        help="prune: btt.prune, the smallest model within --tolerance; bandit: btt.bandit_prune, the paper's "
        "method (default: prune)",
    )
    # each method's own options: given with the other method, they are refused rather than ignored
    groups = {
        "prune": parser.add_argument_group("--method prune (btt.prune) only"),
        "bandit": parser.add_argument_group("--method bandit (btt.bandit_prune) only"),
    }
    for name, help_text, kwargs in (
        (
            "--tolerance",
            "how much worse than the unpruned model the pruned one may be on --data "
            "(absolute for accuracy, balanced accuracy, ROC AUC, R^2; relative for log-loss, MSE)",
            {"type": float},
        ),
        (
            "--margin",
            "standard errors of the validation change the model must stay inside the tolerance by "
            "(0: the change itself within it)",
            {"type": float},
        ),
        ("--metric", "the metric the tolerance is on", {"choices": sorted(METRICS)}),
        (
            "--train-data",
            "CSV of training rows (same columns) to rank removals and re-fit leaves on",
            {},
        ),
        ("--n-jobs", "threads, -1 for every core", {"type": int}),
        ("--policy", "the bandit policy", {"choices": sorted(POLICIES)}),
        ("--rounds", "bandit rounds (per run with --strategy sequential)", {"type": int}),
        (
            "--eval-size",
            "validation rows drawn each round: a fraction (<= 1) or a number of rows (> 1)",
            {"type": _eval_size},
        ),
        (
            "--candidates",
            "the arms: twigs, the nodes whose two children are leaves; internal, every internal node",
            {"choices": CANDIDATES},
        ),
        ("--min-depth", "shallowest depth of an arm (root = 0)", {"type": int}),
        (
            "--strategy",
            "rank: one run of the rounds, then the best prefix of the arms' ranking pruned; sequential: "
            "runs of the rounds, each committing its best arm while the validation score does not drop",
            {"choices": STRATEGIES},
        ),
    ):
        destination = name[2:].replace("-", "_")
        method, default = defaults[destination]
        shown = {
            "metric": "balanced_accuracy for classifiers, r2 for regressors",
            "train_data": "none, the validation rows alone",
        }.get(destination, default)
        groups[method].add_argument(name, default=argparse.SUPPRESS, help=f"{help_text} (default: {shown})", **kwargs)
    parser.add_argument("--random-state", type=int, default=0, help="seed of the random draws (default: 0)")
    parser.set_defaults(func=run)


def method_options(args) -> dict:
    """The options of ``args.method``, defaults filled in; an option of the
    other method given on the command line is an error, not ignored."""
    defaults = method_defaults()
    given = {name: value for name, value in vars(args).items() if name in defaults}
    for name in given:
        method = defaults[name][0]
        if method != args.method:
            flag = "--" + name.replace("_", "-")
            raise DataError(f"{flag} applies to --method {method} only, and this run is --method {args.method}")
    return {name: given.get(name, default) for name, (method, default) in defaults.items() if method == args.method}


def _method(text: str) -> str:
    """``--method``: the names of ``PruningPanel`` and of the results' ``method``; "compress" and
    "paper" are the former names of "prune" and "bandit"."""
    return {"compress": "prune", "paper": "bandit"}.get(text, text)


def _eval_size(text: str):
    """``--eval-size``: a fraction in (0, 1] or a whole number of rows (> 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1] or a number of rows, got {text!r}") from None
    if 0.0 < value <= 1.0:
        return value
    if 1.0 < value < 2**53 and value == int(value):
        return int(value)
    raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1] or a whole number of rows (> 1), got {text!r}")


def _check_out(model_path: Path, out_path: Path) -> None:
    """Refuse an output path that cannot be written, before any work starts."""
    model_adapter = adapter_for_path(model_path)
    if adapter_for_path(out_path) is not model_adapter:
        raise DataError(
            f"--out {out_path.name!r} names another format than the model {model_path.name!r}; the pruned model "
            f"is written in the model's format, so give --out the suffix {model_path.suffix!r}"
        )
    folder = out_path.parent if str(out_path.parent) else Path(".")
    if not folder.is_dir():
        raise DataError(f"--out {out_path}: the folder {str(folder)!r} does not exist; create it first")
    if out_path.is_dir():
        raise DataError(
            f"--out {out_path} is a folder; give a file name such as {out_path / ('pruned' + model_path.suffix)}"
        )
    if out_path.exists() and model_path.exists() and out_path.samefile(model_path):
        raise DataError(
            f"--out {out_path} is the model file itself: writing there would replace the unpruned model; give "
            f"another name, such as {model_path.with_name(model_path.stem + '_pruned' + model_path.suffix)}"
        )


def _columns(frame, ensemble):
    """The CSV's feature columns in the model's order, matched by name when the
    model knows its feature names (as ``Ensemble.check_X`` does); by position,
    with a count check, only when it does not."""
    names = ensemble.feature_names_in_
    if names is not None:
        expected = [str(name) for name in names]
        columns = [str(column) for column in frame.columns]
        # LightGBM stores "x y" as "x_y" and predicts from either, as Ensemble.check_X accepts
        known = set(expected)
        columns = [column if column in known else re.sub(r"\s", "_", column) for column in columns]
        missing = [name for name in expected if name not in columns]
        if missing:
            unexpected = [column for column in columns if column not in expected]
            raise DataError(
                f"the CSV lacks {len(missing)} of the model's feature columns: {missing[:5]}"
                f"{' (it has ' + str(unexpected[:5]) + ' instead)' if unexpected else ''}; its header must name "
                "the training columns (in any order)"
            )
        frame.columns = columns
        return _categories_by_value(frame[expected], ensemble)
    if frame.shape[1] != ensemble.n_features_in_:
        raise DataError(
            f"the CSV has {frame.shape[1]} feature columns besides the target, but the model was trained on "
            f"{ensemble.n_features_in_}; pass the same columns as at training time"
        )
    return frame.to_numpy()


def _categories_by_value(frame, ensemble):
    """A CSV carries no pandas 'category' dtype: a column at a feature the model
    read as pandas categories (its training categories are recorded) becomes
    one, coded by value against them, as the library coded it in training.
    Values the model never saw become missing. A column of numbers at a
    feature with text categories holds the codes themselves and stays as is."""
    import pandas as pd

    categories = ensemble.feature_categories
    if categories is None:
        return frame
    frame = frame.copy()
    for position, known in enumerate(categories):
        if known is None:
            continue
        column = frame.columns[position]
        values = frame[column]
        text_categories = any(isinstance(value, str) for value in known)
        numeric_column = pd.api.types.is_numeric_dtype(values)
        if text_categories and numeric_column:
            continue
        if text_categories:
            values = values.astype("string").astype(object).where(values.notna(), None)
        frame[column] = pd.Categorical(values, categories=list(known))
    return frame


def run(args) -> int:
    import pandas as pd

    from ..interop import from_model

    def read(path):
        frame = pd.read_csv(path)
        if args.target not in frame.columns:
            raise DataError(f"the CSV {path} has no column {args.target!r}; its columns are {list(frame.columns)[:20]}")
        y = frame.pop(args.target).to_numpy()
        return _columns(frame, ensemble), y

    try:
        options = method_options(args)
        _check_out(Path(args.model), Path(args.out))
        # the file's format decides how it is read and written: a pickle holds any library's estimator
        adapter = adapter_for_path(args.model)
        model = adapter.load(args.model)
        ensemble = from_model(model)
        X, y = read(args.data)
        kwargs = {METHOD_OPTIONS[name][1]: value for name, value in options.items() if name != "train_data"}
        if args.method == "prune":
            X_train, y_train = read(options["train_data"]) if options["train_data"] else (None, None)
            kwargs.update(X_train=X_train, y_train=y_train)
        result = _function(args.method)(ensemble, X, y, random_state=args.random_state, progress=False, **kwargs)
        adapter.save(result.to_model(), args.out)
    except (BanditTreeToolsError, ValueError, OSError, *native_errors()) as error:
        print(f"bandit-tree-tools prune: error: {first_line(error)}", file=sys.stderr)
        return 1
    if args.method == "prune":
        print(
            f"pruned {result.original.n_leaves:,} -> {result.ensemble.n_leaves:,} leaves "
            f"({result.original.n_leaves / result.ensemble.n_leaves:.1f}x) within {options['tolerance']} of "
            f"{result.params['metric']}, {len(result.path)} models visited ({result.elapsed:.2f} s); metrics on "
            f"the {int(result.metrics.loc['after', 'rows']):,} rows of {args.data} that checked the tolerance:"
        )
    else:
        print(
            f"pruned {result.n_pruned} nodes with {options['policy']} in {len(result.history)} rounds "
            f"({result.elapsed:.2f} s); metrics on {len(y)} rows of {args.data}:"
        )
    print(result.metrics.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.method == "prune":  # how sure the choice is
        print(result.validation_change.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"wrote {args.out}")
    return 0
