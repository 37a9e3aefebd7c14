"""One adapter per source library: everything the project knows about it.

An :class:`Adapter` imports a native model into the common format
(``from_native``), exports an ensemble back (``to_native``), writes and reads
the library's own files (``save``/``load``, by the ``extensions`` it owns),
and predicts with the native object (``predict_native``). ``ADAPTERS`` is the
one table of them; :func:`adapter_for` and :func:`adapter_for_path` look an
adapter up. Each library is imported only when an adapter first needs it.
"""

from __future__ import annotations

import pickle
import warnings
from importlib import import_module
from pathlib import Path

import numpy as np

from ..exceptions import ConversionError, DataError, UnsupportedModelError, missing_dependency
from ._native_errors import first_line

SUPPORTED = (
    "scikit-learn: DecisionTree/ExtraTree Classifier/Regressor, RandomForest*, ExtraTrees*, "
    "GradientBoosting*, HistGradientBoosting*; LightGBM: Booster, LGBMClassifier, LGBMRegressor; "
    "XGBoost: Booster, XGBClassifier, XGBRegressor; bandit_tree_tools estimators (ensemble_)"
)


def _check_readable(path: Path) -> None:
    if not path.is_file():
        raise DataError(
            f"the model file {str(path)!r} does not exist"
            if not path.exists()
            else f"the model path {str(path)!r} is not a file"
        )


# what a model's predictions estimate, by its training objective (Adapter.objective): class
# probabilities; a mean or another central value of y; a quantile of y; scores that order the rows
# of a query; a hazard (survival); a binary classifier's raw margin (XGBoost's binary:logitraw)
OBJECTIVE_FAMILIES = ("classification", "regression", "quantile", "ranking", "survival", "margin")


class Adapter:
    """What the project knows about one library (subclasses fill it in).

    Attributes
    ----------
    library : str
        ``Ensemble.source.library`` of the ensembles it imports.
    package : str
        The top-level package of the library's classes.
    extensions : tuple of str
        File suffixes :meth:`save` and :meth:`load` handle, the default for
        saving first.
    deployed_suffix, deployed_file : str
        The file a deployed model is measured by (``PruneResult.deployment``):
        its suffix among ``extensions`` and what writes it.
    """

    library: str
    package: str
    extra: str
    name: str
    extensions: tuple
    deployed_suffix: str
    deployed_file: str
    _module: str  # bandit_tree_tools.interop.<module> with from_<x> / to_<x>

    def __repr__(self) -> str:
        return f"<{self.name} adapter: {', '.join(self.extensions)}>"

    def native_module(self):
        """The library itself, or MissingDependencyError naming the extra to install."""
        try:
            module = import_module(self.package)
        except ImportError:
            raise missing_dependency(self.package, self.extra, f"Reading and writing {self.name} models") from None
        from .. import check_version  # the minimums stated in pyproject, one rule for every library

        check_version("scikit-learn" if self.package == "sklearn" else self.package)
        return module

    def _interop(self):
        return import_module(f"bandit_tree_tools.interop.{self._module}")

    def from_native(self, model, **kwargs):
        """The native ``model`` as an :class:`~bandit_tree_tools.Ensemble` (``from_<library>``)."""
        self.native_module()
        return getattr(self._interop(), f"from_{self._module}")(model, **kwargs)

    def to_native(self, ensemble):
        """``ensemble`` as an object of the class it was imported from (``to_<library>``)."""
        self.native_module()
        return getattr(self._interop(), f"to_{self._module}")(ensemble)

    def objective(self, ensemble) -> tuple:
        """``(name, family)`` of the loss ``ensemble``'s model was trained
        with: the library's own name ("" where it keeps none) and what the
        predictions estimate, one of :data:`OBJECTIVE_FAMILIES`."""
        return self._interop().training_objective(ensemble)

    def monotone_method(self, ensemble) -> str | None:
        """How the model enforced its monotone constraints, None without any
        (as far as the imported object records them: an XGBoost model read
        from a file keeps no training parameters). "basic": every split on a
        constrained feature bounds the whole subtree on each side by the
        middle of its two outputs, as XGBoost and scikit-learn do, so a
        subtree collapsed into a mean of its leaves keeps the order;
        LightGBM's "intermediate" and "advanced" bound less."""
        return self._interop().monotone_method(ensemble)

    def recorded_trees_per_iteration(self, ensemble) -> int | None:
        """Trees per boosting iteration as the model recorded them, where the
        library keeps a count that the trees' outputs do not show (see
        :func:`trees_per_iteration`); None otherwise."""
        return None

    def check_path(self, path) -> Path:
        path = Path(path)
        if path.suffix.lower() not in self.extensions:
            raise DataError(f"{path.name!r} does not end in a {self.name} suffix ({'/'.join(self.extensions)})")
        return path

    def save(self, native, path) -> Path:
        """Write ``native`` to ``path`` the way :meth:`load` reads it back."""
        raise NotImplementedError

    def load(self, path):
        """The native model stored in ``path``."""
        raise NotImplementedError

    def predict_native(self, native, X, raw: bool = False) -> np.ndarray:
        """What the native object predicts for ``X``: class probabilities
        (``predict_proba``) for classifiers, predictions otherwise (a Booster:
        its ``predict``); ``raw=True``: raw scores (margins), shape
        ``(n_rows, n_outputs)`` as :meth:`Ensemble.predict_raw` returns them."""
        raise NotImplementedError

    def deployed(self, native) -> tuple:
        """``(model, predictor, predict)``: what a service that loads
        ``native``'s file holds (``model``, which :meth:`save` writes to a
        ``deployed_suffix`` file), the name of the library's own predictor
        and that predictor, a function of the rows (a pandas frame, a numpy
        or scipy sparse array, as the library reads them). It predicts what
        :meth:`predict_native` does: class probabilities for classifiers."""
        raise NotImplementedError


class SklearnAdapter(Adapter):
    """scikit-learn estimators; files are pickles (joblib or pickle), which
    hold any library's estimator."""

    library = package = _module = "sklearn"
    extra = "sklearn"
    name = "scikit-learn"
    extensions = (".joblib", ".pkl", ".pickle")
    deployed_suffix = ".joblib"
    deployed_file = "joblib.dump (uncompressed)"

    def native_module(self):
        try:
            return import_module("sklearn")
        except ImportError:  # pragma: no cover - scikit-learn is a dependency
            raise missing_dependency("scikit-learn", "sklearn", "Reading scikit-learn models") from None

    def save(self, native, path) -> Path:
        path = self.check_path(path)
        if path.suffix.lower() == ".joblib":
            import joblib

            joblib.dump(native, path)
        else:
            with open(path, "wb") as handle:
                pickle.dump(native, handle)
        return path

    def load(self, path):
        """Unpickle ``path`` (with a warning: unpickling runs code stored in
        the file); a damaged file raises ConversionError."""
        path = self.check_path(path)
        _check_readable(path)
        warnings.warn(
            f"loading {path} unpickles it, which runs code stored in the file; only load files you trust",
            UserWarning,
            stacklevel=2,
        )
        try:
            if path.suffix.lower() == ".joblib":
                import joblib

                return joblib.load(path)
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except Exception as error:  # noqa: BLE001 (a damaged pickle can raise almost anything)
            raise ConversionError(
                f"{path} could not be unpickled ({type(error).__name__}: {first_line(error)}); is it a complete "
                "pickle or joblib file of a fitted estimator?"
            ) from None

    def predict_native(self, native, X, raw: bool = False) -> np.ndarray:
        if raw:
            if hasattr(native, "decision_function"):
                scores = np.asarray(native.decision_function(X), dtype=np.float64)
            elif hasattr(native, "predict_proba"):  # trees and forests output class fractions
                scores = np.asarray(native.predict_proba(X), dtype=np.float64)
            else:
                scores = np.asarray(native.predict(X), dtype=np.float64)
            return scores.reshape(len(scores), -1)
        if hasattr(native, "predict_proba"):
            return native.predict_proba(X)
        return native.predict(X)

    def deployed(self, native) -> tuple:
        method = "predict_proba" if hasattr(native, "predict_proba") else "predict"
        return native, f"{type(native).__name__}.{method}", getattr(native, method)


class LightGBMAdapter(Adapter):
    """LightGBM Boosters and estimators; files are LightGBM's model text,
    checked by the project's parser before LightGBM's loader reads it."""

    library = package = _module = extra = "lightgbm"
    name = "LightGBM"
    extensions = (".txt",)
    deployed_suffix = ".txt"
    deployed_file = "Booster.save_model (the model text)"

    def save(self, native, path) -> Path:
        path = self.check_path(path)
        getattr(native, "booster_", native).save_model(str(path))
        return path

    def load(self, path):
        """A ``lightgbm.Booster``; a file LightGBM's loader would crash on
        raises ConversionError first."""
        path = self.check_path(path)
        _check_readable(path)
        from .lightgbm import load_booster

        lightgbm = self.native_module()
        try:
            return load_booster(path)
        except lightgbm.basic.LightGBMError as error:
            raise ConversionError(f"{path} is not a readable LightGBM model: {first_line(error)}") from None

    def predict_native(self, native, X, raw: bool = False) -> np.ndarray:
        if raw:
            booster = getattr(native, "booster_", native)
            scores = np.asarray(booster.predict(X, raw_score=True), dtype=np.float64)
            return scores.reshape(len(scores), -1)
        if hasattr(native, "predict_proba"):
            return native.predict_proba(X)
        return native.predict(X)

    def deployed(self, native) -> tuple:
        booster = getattr(native, "booster_", native)  # what lightgbm.Booster(model_file=...) loads
        return booster, "lightgbm.Booster.predict", booster.predict


class XGBoostAdapter(Adapter):
    """XGBoost Boosters and estimators; files are XGBoost's JSON or UBJSON."""

    library = package = _module = extra = "xgboost"
    name = "XGBoost"
    extensions = (".json", ".ubj")
    # UBJSON: the format of Booster.save_raw() and of save_model for other suffixes than .json
    deployed_suffix = ".ubj"
    deployed_file = "Booster.save_model (UBJSON)"

    def save(self, native, path) -> Path:
        path = self.check_path(path)
        native.save_model(str(path))
        return path

    def load(self, path):
        """A ``xgboost.Booster`` (a file keeps no training configuration: pass
        ``learning_rate=`` to ``from_xgboost`` to collapse internal nodes);
        an unreadable file raises ConversionError."""
        path = self.check_path(path)
        _check_readable(path)
        xgboost = self.native_module()
        booster = xgboost.Booster()
        try:
            booster.load_model(str(path))
        except xgboost.core.XGBoostError as error:
            raise ConversionError(f"{path} is not a readable XGBoost model: {first_line(error)}") from None
        return booster

    def recorded_trees_per_iteration(self, ensemble) -> int | None:
        return self._interop().recorded_trees_per_iteration(ensemble)

    def predict_native(self, native, X, raw: bool = False) -> np.ndarray:
        xgboost = self.native_module()
        if isinstance(native, xgboost.Booster):
            # DMatrix prediction adds DART trees as the common format does (inplace_predict does not)
            scores = native.predict(xgboost.DMatrix(X), output_margin=raw)
        elif raw:
            scores = native.predict(X, output_margin=True)
        else:
            return native.predict_proba(X) if hasattr(native, "predict_proba") else native.predict(X)
        scores = np.asarray(scores, dtype=np.float64 if raw else scores.dtype)
        return scores.reshape(len(scores), -1) if raw else scores

    def deployed(self, native) -> tuple:
        import json

        xgboost = self.native_module()
        booster = native if isinstance(native, xgboost.Booster) else native.get_booster()
        if json.loads(booster.save_config())["learner"]["gradient_booster"]["name"] == "dart":
            # inplace_predict does not weight DART's trees as predict does (predict_native)
            return booster, "xgboost.Booster.predict(DMatrix)", lambda X: booster.predict(xgboost.DMatrix(X))
        return booster, "xgboost.Booster.inplace_predict", booster.inplace_predict


# Ensemble.source.library -> its adapter: the one table of library knowledge
ADAPTERS = {adapter.library: adapter for adapter in (SklearnAdapter(), LightGBMAdapter(), XGBoostAdapter())}
_BY_PACKAGE = {adapter.package: adapter for adapter in ADAPTERS.values()}
_ALIASES = {"scikit-learn": "sklearn", "lgbm": "lightgbm", "xgb": "xgboost"}


def adapter_for(what) -> Adapter:
    """The adapter of a library name, an :class:`Ensemble` (its source
    library), a native model (the first class of its hierarchy from a
    supported package, so subclasses work) or one of this project's
    estimators (its ``ensemble_``). Raises UnsupportedModelError otherwise."""
    from ..tree import Ensemble

    if isinstance(what, str):
        adapter = ADAPTERS.get(_ALIASES.get(what.lower(), what.lower()))
        if adapter is None:
            raise UnsupportedModelError(
                f"no adapter for the library {what!r}; known libraries: {', '.join(sorted(ADAPTERS))}"
            )
        return adapter
    if isinstance(what, Ensemble):
        adapter = ADAPTERS.get(what.source.library)
        if adapter is None:
            raise UnsupportedModelError(
                f"ensembles from {what.source.library!r} ({what.source.estimator}) cannot be exported: to_model "
                f"writes a model back to the library it came from, one of {sorted(ADAPTERS)}"
            )
        return adapter
    if isinstance(what, type):  # LGBMClassifier rather than a fitted LGBMClassifier(...)
        raise UnsupportedModelError(
            f"got the class {what.__module__}.{what.__name__}, not a fitted model: pass an instance fitted on "
            f"your data, such as {what.__name__}().fit(X, y)"
        )
    if hasattr(type(what), "ensemble_") or "ensemble_" in getattr(what, "__dict__", {}):
        return adapter_for(what.ensemble_)
    for cls in type(what).__mro__:
        adapter = _BY_PACKAGE.get(cls.__module__.split(".")[0])
        if adapter is not None:
            return adapter
    raise UnsupportedModelError(
        f"cannot import a {type(what).__module__}.{type(what).__name__}; supported models: {SUPPORTED}"
    )


def trees_per_iteration(ensemble) -> int:
    """Trees per boosting iteration of ``ensemble``, the unit its library's
    exporter writes whole: as the model recorded it (XGBoost: parallel
    trees of a random forest, times the classes), else ``K`` when tree ``t``
    feeds raw column ``t % K`` (one tree per class), else 1."""
    adapter = ADAPTERS.get(ensemble.source.library)
    recorded = adapter.recorded_trees_per_iteration(ensemble) if adapter is not None else None
    if recorded:
        return int(recorded)
    k = ensemble.n_outputs
    if (
        k > 1
        and ensemble.trees[0].value.shape[1] == 1
        and ensemble.n_trees % k == 0
        and np.array_equal(ensemble.tree_output, np.arange(ensemble.n_trees) % k)
    ):
        return k
    return 1


def adapter_for_path(path) -> Adapter:
    """The adapter whose ``extensions`` include ``path``'s suffix (``.txt``
    LightGBM, ``.json``/``.ubj`` XGBoost, ``.joblib``/``.pkl``/``.pickle`` a
    pickled estimator). Raises UnsupportedModelError for any other suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    for adapter in ADAPTERS.values():
        if suffix in adapter.extensions:
            return adapter
    known = "; ".join(f"{'/'.join(adapter.extensions)} ({adapter.name})" for adapter in ADAPTERS.values())
    raise UnsupportedModelError(f"cannot tell the format of {path.name!r} from its suffix; expected {known}")


__all__ = ["ADAPTERS", "OBJECTIVE_FAMILIES", "Adapter", "adapter_for", "adapter_for_path", "trees_per_iteration"]
