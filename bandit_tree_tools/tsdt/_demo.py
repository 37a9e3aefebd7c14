"""The TSDT part of ``bandit-tree-tools demo``: generated data only."""

import time

import numpy as np


def demo() -> str:
    from sklearn.tree import DecisionTreeClassifier

    from . import TSDTClassifier, optimal_categorical_tree

    rng = np.random.default_rng(0)
    # MONK-1's concept on its attributes' cardinalities: (a1 == a2) or (a5 == 1).
    cardinalities = (3, 3, 2, 3, 4, 2)
    X = np.column_stack([rng.integers(0, c, 300) for c in cardinalities])
    y = ((X[:, 0] == X[:, 1]) | (X[:, 4] == 0)).astype(int)
    lambda_ = 0.01
    lines = [f"MONK-1 concept on 300 generated rows, objective = accuracy - {lambda_} * splits:"]

    def line(name, accuracy, n_leaves, n_splits, seconds):
        objective = accuracy - lambda_ * n_splits
        return (
            f"  {name:<10} {n_leaves:3d} leaves {n_splits:3d} splits  accuracy {accuracy:.3f}  "
            f"objective {objective:.4f}  {seconds:.2f} s"
        )

    started = time.perf_counter()
    search = TSDTClassifier(lambda_=lambda_, random_state=1).fit(X, y)
    lines.append(line("TSDT", search.score(X, y), search.n_leaves_, search.n_splits_, time.perf_counter() - started))
    started = time.perf_counter()
    paper = TSDTClassifier(lambda_=lambda_, variant="fast", random_state=1).fit(X, y)
    lines.append(
        line("Fast-TSDT", paper.score(X, y), paper.n_leaves_, paper.n_splits_, time.perf_counter() - started)
        + "  (the paper's search)"
    )
    started = time.perf_counter()
    optimum = optimal_categorical_tree(X, y, lambda_)
    lines.append(
        line("exact", optimum.score(X, y), optimum.n_leaves_, optimum.n_splits_, time.perf_counter() - started)
    )
    started = time.perf_counter()
    cart = DecisionTreeClassifier(random_state=0).fit(X, y)
    lines.append(
        line("CART", cart.score(X, y), cart.get_n_leaves(), cart.get_n_leaves() - 1, time.perf_counter() - started)
    )
    same = np.array_equal(search.ensemble_.predict(X), search.predict(X))
    lines.append(f"  TSDT's tree in the common format predicts identically: {same}")

    n_features = 20
    stream = rng.integers(0, 2, size=(400 * 100, n_features))
    labels = stream[:, 0] ^ stream[:, 1]
    started = time.perf_counter()
    xor = TSDTClassifier(lambda_=0.05, max_iter=400, random_state=0).fit(stream, labels)
    found = xor.n_leaves_ == 4 and set(xor.tree_.feature[xor.tree_.feature >= 0].tolist()) == {0, 1}
    lines.append(
        f"XOR stream (x1 xor x2 among {n_features} binary attributes, 400 x 100 rows): TSDT found the "
        f"4-leaf tree on x1, x2: {'yes' if found else 'no'} ({time.perf_counter() - started:.2f} s)"
    )
    return "\n".join(lines)
