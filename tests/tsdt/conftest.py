from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data"


def load_monk1():
    """MONK-1 train and test, attributes as codes 0.. (a1..a6), label 0/1."""
    folder = DATA

    def load(name):
        table = np.genfromtxt(folder / name, delimiter=" ", dtype=int)[:, :-1]
        return table[:, 1:] - 1, table[:, 0]

    return load("monks-1.train") + load("monks-1.test")


def or_of_equal(n_rows=300, seed=0):
    """y = (x0 == x1) or (x2 == 0) on three-valued attributes, plus a noise attribute."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n_rows, 4))
    y = ((X[:, 0] == X[:, 1]) | (X[:, 2] == 0)).astype(np.int64)
    return X, y


def xor_stream(n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_rows, n_features))
    return X, (X[:, 0] ^ X[:, 1]).astype(np.int64)


def load_monk2():
    """MONK-2's 169 training rows in their six categorical attributes (the
    data file is one-hot with the last level dropped)."""
    import pandas as pd

    path = DATA / "monk2-train.csv"
    table = pd.read_csv(path, sep=";")
    y = table.pop(table.columns[-1]).to_numpy()
    groups = {}
    for index, column in enumerate(table.columns):
        groups.setdefault(column.split("_")[0], []).append(index)
    B = table.to_numpy()
    X = np.column_stack([np.where(B[:, g].sum(axis=1) == 0, len(g), B[:, g].argmax(axis=1)) for g in groups.values()])
    return X.astype(np.int64), y


def load_tic_tac_toe():
    """tic-tac-toe (958 rows) as the data file's 0/1 attributes."""
    import pandas as pd

    path = DATA / "tic-tac-toe.csv"
    table = pd.read_csv(path, sep=";")
    y = table.pop(table.columns[-1]).to_numpy()
    return table.to_numpy().astype(np.int64), y
