"""``bandit-tree-tools prune MODEL --data CSV --target COLUMN --out PATH``.

MODEL is a LightGBM text model (``.txt``), an XGBoost model (``.json`` or
``.ubj``) or a pickled scikit-learn / LightGBM / XGBoost estimator
(``.pkl``, ``.pickle``, ``.joblib``). The pruned model is written in the same
format, and the before/after metrics on the CSV's rows are printed.
"""

import argparse
import pickle
import sys
import warnings
from pathlib import Path

from ..exceptions import BanditTreeToolsError, DataError, UnsupportedModelError

PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
XGBOOST_SUFFIXES = (".json", ".ubj")


def register(subparsers) -> None:
    from ..bandits import POLICIES
    from ._bandit import CANDIDATES, STRATEGIES

    parser = subparsers.add_parser(
        "prune",
        help="prune a saved tree model with a multi-armed bandit",
        description=__doc__.split("\n\n", 1)[1].strip(),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("model", help="LightGBM .txt, XGBoost .json/.ubj, or a pickled estimator (.pkl/.joblib)")
    parser.add_argument("--data", required=True, help="CSV file of validation rows (with a header)")
    parser.add_argument("--target", required=True, help="column of the CSV holding the target")
    parser.add_argument("--out", required=True, help="where to write the pruned model (same format as MODEL)")
    parser.add_argument("--policy", default="ucb1", choices=sorted(POLICIES))
    parser.add_argument("--rounds", type=int, default=1100, help="bandit rounds")
    parser.add_argument("--eval-size", type=float, default=0.5,
                        help="rows drawn each round: a fraction (<= 1) or a number of rows (> 1)")
    parser.add_argument("--candidates", default="twigs", choices=CANDIDATES)
    parser.add_argument("--min-depth", type=int, default=4, help="shallowest depth of an arm (root = 0)")
    parser.add_argument("--strategy", default="rank", choices=STRATEGIES)
    parser.add_argument("--random-state", type=int, default=0)
    parser.set_defaults(func=run)


def _load(path: Path):
    suffix = path.suffix.lower()
    if suffix in PICKLE_SUFFIXES:
        warnings.warn(
            f"loading {path} unpickles it, which runs code stored in the file; only load files you trust",
            UserWarning,
            stacklevel=2,
        )
        if suffix == ".joblib":
            import joblib

            return joblib.load(path), "pickle"
        with open(path, "rb") as handle:
            return pickle.load(handle), "pickle"
    if suffix in XGBOOST_SUFFIXES:
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(str(path))
        return booster, "xgboost"
    if suffix == ".txt":
        import lightgbm

        return lightgbm.Booster(model_file=str(path)), "lightgbm"
    raise UnsupportedModelError(
        f"cannot tell the format of {path.name!r} from its suffix; expected .txt (LightGBM), .json/.ubj "
        f"(XGBoost) or {'/'.join(PICKLE_SUFFIXES)} (pickled estimator)"
    )


def _save(native, kind: str, path: Path) -> None:
    if kind == "pickle":
        if path.suffix.lower() == ".joblib":
            import joblib

            joblib.dump(native, path)
        else:
            with open(path, "wb") as handle:
                pickle.dump(native, handle)
    elif kind == "xgboost":
        native.save_model(str(path))
    else:
        booster = native if hasattr(native, "save_model") else native.booster_
        booster.save_model(str(path))


def _columns(frame, ensemble):
    """The CSV's feature columns in the model's order when the model knows
    its feature names; otherwise the columns as they are."""
    names = ensemble.feature_names_in_
    if names is not None and set(map(str, names)) <= set(map(str, frame.columns)):
        return frame[[str(name) for name in names]]
    if frame.shape[1] != ensemble.n_features_in_:
        raise DataError(
            f"the CSV has {frame.shape[1]} feature columns besides the target, but the model was trained on "
            f"{ensemble.n_features_in_}; pass the same columns as at training time"
        )
    return frame.to_numpy()


def run(args) -> int:
    import pandas as pd

    from ..interop import from_model
    from ._bandit import bandit_prune

    try:
        model, kind = _load(Path(args.model))
        ensemble = from_model(model)
        frame = pd.read_csv(args.data)
        if args.target not in frame.columns:
            raise DataError(f"the CSV has no column {args.target!r}; its columns are {list(frame.columns)[:20]}")
        y = frame.pop(args.target).to_numpy()
        eval_size = int(args.eval_size) if args.eval_size > 1 else args.eval_size
        result = bandit_prune(
            ensemble, _columns(frame, ensemble), y, policy=args.policy, n_rounds=args.rounds, eval_size=eval_size,
            candidates=args.candidates, min_depth=args.min_depth, strategy=args.strategy,
            random_state=args.random_state, progress=False,
        )
        _save(result.to_model(), kind, Path(args.out))
    except (BanditTreeToolsError, ValueError, OSError) as error:
        print(f"bandit-tree-tools prune: error: {error}", file=sys.stderr)
        return 1
    print(f"pruned {result.n_pruned} nodes with {args.policy} in {len(result.history)} rounds "
          f"({result.elapsed:.2f} s); metrics on {len(y)} rows of {args.data}:")
    print(result.metrics.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"wrote {args.out}")
    return 0
