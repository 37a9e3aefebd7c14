"""The leaf-medoid part of ``bandit-tree-tools demo``."""

import time


def demo() -> str:
    """Leaf medoids of a decision tree trained on scikit-learn's digits, and
    BanditPAM against exact PAM on all 1,797 digits."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.tree import DecisionTreeClassifier

    from . import KMedoids, leaf_medoids

    X, y = load_digits(return_X_y=True)
    model = DecisionTreeClassifier(max_leaf_nodes=8, random_state=0).fit(X, y)
    start = time.perf_counter()
    result = leaf_medoids(model, X, n_medoids=3, progress=False)
    seconds = time.perf_counter() - start
    largest = sorted(result.medoids, key=lambda leaf: -result.n_samples[leaf])[:3]
    lines = [
        f"decision tree on digits (1797 x 64): {len(result.medoids)} leaves, 3 medoids each "
        f"({result.algorithm}, {result.n_distance_calls:,} distance calls, {seconds:.2f} s)"
    ]
    for leaf in largest:
        labels = y[result.medoids[leaf]].tolist()
        lines.append(
            f"  leaf {leaf}: {result.n_samples[leaf]} rows, medoid rows "
            f"{result.medoids[leaf].tolist()} (digits {labels}), cluster sizes "
            f"{result.cluster_sizes[leaf].tolist()}"
        )
    fits = {}
    for algorithm in ("pam", "banditpam"):
        start = time.perf_counter()
        fits[algorithm] = KMedoids(5, algorithm=algorithm, random_state=0).fit(X)
        fits[algorithm].seconds_ = time.perf_counter() - start
    same = np.array_equal(np.sort(fits["pam"].medoid_indices_), np.sort(fits["banditpam"].medoid_indices_))
    lines.append(
        "k=5 medoids of all digits: BanditPAM {} PAM's medoids; loss {:.1f} vs {:.1f}; distance calls {:,} vs "
        "{:,} ({:.2f} n^2); {:.2f} s vs {:.2f} s".format(
            "returns" if same else "DIFFERS FROM",
            fits["banditpam"].inertia_,
            fits["pam"].inertia_,
            fits["banditpam"].n_distance_calls_,
            fits["pam"].n_distance_calls_,
            fits["banditpam"].n_distance_calls_ / len(X) ** 2,
            fits["banditpam"].seconds_,
            fits["pam"].seconds_,
        )
    )
    return "\n".join(lines)
