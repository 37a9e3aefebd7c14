"""The probes whose first calls ``_side_compile`` splits over two processes, and the
recording of what each compiles into ``_side_compile.json``.

``python -m bandit_tree_tools._side_compile_probes`` records every probe, each in a process of
its own with an empty numba cache, and writes the file; run it when a kernel's arguments or a
capability's path change (``tests/test_side_compile.py`` says when the file no longer covers a
probe). A probe is the capability's typical first call, on tiny data.
"""

import json
import os
import subprocess
import sys

from ._side_compile import SIGNATURES, SWITCH, _decode, _encode


def _tiny_classification():
    from sklearn.datasets import make_classification

    return make_classification(n_samples=2000, n_features=10, n_informative=6, random_state=0)


# Each probe returns what it fitted or pruned (whose predictions tests compare), and the rows.


def _probe_tsdt():
    from .tsdt import TSDTClassifier

    X, y = _tiny_classification()
    X = (X[:, :6] > 0).astype(int)
    return TSDTClassifier(lambda_=0.01, max_iter=200, random_state=0).fit(X, y), X


def _probe_mabsplit_classification():
    from .mabsplit import MABSplitForestClassifier

    X, y = _tiny_classification()
    return MABSplitForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(X, y), X


def _probe_mabsplit_regression():
    from sklearn.datasets import make_regression

    from .mabsplit import MABSplitForestRegressor

    X, y = make_regression(n_samples=2000, n_features=10, n_informative=6, random_state=0)
    return MABSplitForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(X, y), X


def _probe_prune_boosted():
    import lightgbm

    from .pruning import prune

    X, y = _tiny_classification()
    model = lightgbm.LGBMClassifier(n_estimators=50, num_leaves=31, verbose=-1, random_state=0)
    return prune(model.fit(X[:1000], y[:1000]), X[1000:], y[1000:], random_state=0, progress=False).ensemble, X


def _probe_prune_forest():
    from sklearn.ensemble import RandomForestClassifier

    from .pruning import prune

    X, y = _tiny_classification()
    model = RandomForestClassifier(n_estimators=30, max_depth=8, random_state=0).fit(X[:1000], y[:1000])
    return prune(model, X[1000:], y[1000:], random_state=0, progress=False).ensemble, X


def _probe_bandit_prune():
    from sklearn.ensemble import RandomForestClassifier

    from .pruning import bandit_prune

    X, y = _tiny_classification()
    model = RandomForestClassifier(n_estimators=10, max_depth=8, random_state=0).fit(X[:1000], y[:1000])
    return bandit_prune(model, X[1000:], y[1000:], n_rounds=200, random_state=0, progress=False).ensemble, X


def _probe_leaf_medoids():
    from sklearn.tree import DecisionTreeClassifier

    from .medoids import leaf_medoids

    X, y = _tiny_classification()
    return leaf_medoids(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y), X, progress=False), X


def outputs(made, X):
    """What a probe made, as one array that tests compare between processes: a model's
    predictions on ``X``, or the medoid rows of every leaf."""
    import numpy as np

    if hasattr(made, "predict"):
        return np.asarray(made.predict(X))
    return np.concatenate([made.medoids[leaf] for leaf in sorted(made.medoids)])


#: probe -> its call (the first calls that compile longest; each keyed where the call starts the other process)
PROBES = {
    "tsdt": _probe_tsdt,
    "mabsplit_classification": _probe_mabsplit_classification,
    "mabsplit_regression": _probe_mabsplit_regression,
    "prune_boosted": _probe_prune_boosted,
    "prune_forest": _probe_prune_forest,
    "bandit_prune": _probe_bandit_prune,
    "leaf_medoids": _probe_leaf_medoids,
}


def _record(probe: str) -> list:
    """Run ``probe`` and list what numba compiles, in order (in a process with an empty cache)."""
    from numba.core import event

    entries = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            function = getattr(ev.data["dispatcher"], "py_func", None)
            if function is None or not function.__module__.startswith(__package__):
                return  # numba's own functions: not cached
            if "<locals>" in function.__qualname__:
                return  # a function made inside another: not reachable by name
            args = tuple(ev.data["args"])
            encoded = [_encode(arg) for arg in args]
            if all(item is not None for item in encoded) and tuple(map(_decode, encoded)) == args:
                entries.append([function.__module__, function.__qualname__, encoded])

        def on_end(self, ev):
            pass

    listener = Compiles()
    event.register("numba:compile", listener)
    try:
        PROBES[probe]()
    finally:
        event.unregister("numba:compile", listener)
    return entries


def _write() -> None:
    """Record every probe, each in a fresh process and an empty cache, into :data:`SIGNATURES`."""
    import tempfile

    import numba

    probes = {}
    for probe in PROBES:
        with tempfile.TemporaryDirectory() as folder:
            env = dict(os.environ, NUMBA_CACHE_DIR=folder, **{SWITCH: "0"})
            recorded = os.path.join(folder, "recorded.json")
            command = [sys.executable, "-m", "bandit_tree_tools._side_compile_probes", "--record", probe, recorded]
            subprocess.run(command, env=env, check=True)
            with open(recorded) as file:
                probes[probe] = json.load(file)
        sys.stderr.write(f"{probe}: {len(probes[probe])} functions\n")
    lines = [f'{{"numba": {json.dumps(numba.__version__)}, "probes": {{']
    for index, (probe, entries) in enumerate(probes.items()):
        rows = ",\n".join(f"  {json.dumps(entry)}" for entry in entries)
        lines.append(f"{json.dumps(probe)}: [\n{rows}\n]" + ("," if index < len(probes) - 1 else ""))
    SIGNATURES.write_text("\n".join([*lines, "}}"]) + "\n")


def main(argv=None) -> None:
    import warnings

    from ._numba_config import compile_note_shown

    argv = sys.argv[1:] if argv is None else argv
    warnings.simplefilter("ignore")
    if not argv:
        _write()
    elif len(argv) == 3 and argv[0] == "--record" and argv[1] in PROBES:
        with compile_note_shown():
            entries = _record(argv[1])
        with open(argv[2], "w") as file:
            json.dump(entries, file)
    else:
        raise SystemExit(f"usage: python -m bandit_tree_tools._side_compile_probes [--record {'|'.join(PROBES)} PATH]")


if __name__ == "__main__":
    main()
