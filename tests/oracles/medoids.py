"""Slow, obvious reference versions of the k-medoids kernels: distances as
Python loops over coordinates, PAM as "evaluate the loss of every medoid
set the step considers", and the definition of a swap-local optimum."""

import math

import numpy as np


def euclidean(a, b):
    return math.sqrt(sum((float(x) - float(y)) ** 2 for x, y in zip(a, b)))


def sqeuclidean(a, b):
    return sum((float(x) - float(y)) ** 2 for x, y in zip(a, b))


def manhattan(a, b):
    return sum(abs(float(x) - float(y)) for x, y in zip(a, b))


def minkowski(a, b, p):
    return sum(abs(float(x) - float(y)) ** p for x, y in zip(a, b)) ** (1.0 / p)


def chebyshev(a, b):
    return max((abs(float(x) - float(y)) for x, y in zip(a, b)), default=0.0)


def cosine(a, b):
    dot = sum(float(x) * float(y) for x, y in zip(a, b))
    norm_a = math.sqrt(sum(float(x) ** 2 for x in a))
    norm_b = math.sqrt(sum(float(y) ** 2 for y in b))
    if norm_a == 0.0 or norm_b == 0.0:
        return 0.0 if norm_a == norm_b else 1.0
    return min(max(1.0 - dot / (norm_a * norm_b), 0.0), 2.0)


DISTANCES = {
    "euclidean": euclidean,
    "sqeuclidean": sqeuclidean,
    "manhattan": manhattan,
    "chebyshev": chebyshev,
    "cosine": cosine,
}


def distance_matrix(X, distance):
    n = len(X)
    return np.array([[distance(X[i], X[j]) for j in range(n)] for i in range(n)])


def loss(D, medoids):
    """Sum over points of the distance to the nearest medoid (D[point, medoid])."""
    return float(np.min(D[:, list(medoids)], axis=1).sum())


def pam(D, k, max_swaps=100, tolerance=1e-12):
    """PAM as its definition reads: BUILD adds, k times, the point whose
    addition gives the lowest loss; SWAP replaces, while it helps, the
    (medoid, point) pair whose exchange gives the lowest loss. Ties go to the
    lowest point, then the lowest medoid slot. Returns the medoids by slot."""
    n = D.shape[0]
    medoids = []
    for _ in range(k):
        candidates = [x for x in range(n) if x not in medoids]
        losses = [loss(D, medoids + [x]) for x in candidates]
        medoids.append(candidates[int(np.argmin(losses))])
    for _ in range(max_swaps):
        current = loss(D, medoids)
        best = None
        for x in range(n):
            if x in medoids:
                continue
            for slot in range(k):
                trial = list(medoids)
                trial[slot] = x
                value = loss(D, trial)
                if best is None or value < best[0]:
                    best = (value, x, slot)
        if best is None or not best[0] < current - tolerance * current:
            break
        medoids[best[2]] = best[1]
    return np.array(medoids)


def best_swap_gain(D, medoids):
    """Largest loss decrease any single (medoid, point) swap achieves
    (<= 0 at a swap-local optimum)."""
    n = D.shape[0]
    current = loss(D, medoids)
    best = -np.inf
    for x in range(n):
        if x in medoids:
            continue
        for slot in range(len(medoids)):
            trial = list(medoids)
            trial[slot] = x
            best = max(best, current - loss(D, trial))
    return best
