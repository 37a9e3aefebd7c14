"""Slow, obvious reference versions of the TSDT kernels and the exact solver.

Paths stand for decision-tree nodes: a path is a tuple of (attribute,
category) pairs from the root; a tree is a dict {path: attribute it splits on}.
"""

import math

import numpy as np
from scipy import integrate, stats


# --------------------------------------------------------------- exact optimum
def reference_optimal_value(X, y, lambda_, n_categories=None):
    """Best ``accuracy - lambda_ * splits`` over every tree with multiway splits
    (each attribute at most once per path), by trying every split everywhere.
    No memo, no bounds."""
    X = np.asarray(X, dtype=np.int64)
    y = np.asarray(y)
    n_total = len(y)
    if n_categories is None:
        n_categories = X.max(axis=0) + 1

    def best(rows, free):
        if len(rows) == 0:
            return 0.0
        _, counts = np.unique(y[rows], return_counts=True)
        value = counts.max() / n_total
        for feature in free:
            split = -lambda_
            for category in range(n_categories[feature]):
                split += best(rows[X[rows, feature] == category], free - {feature})
            value = max(value, split)
        return value

    return best(np.arange(n_total), frozenset(range(X.shape[1])))


# --------------------------------------------------------------- search stats
class ReferenceStatistics:
    """Per-path statistics of the TSDT paper, kept in dicts.

    For each path ``p`` that rows went through and each attribute ``j`` and
    category ``v``: class counts ``n[p][j][v]`` and the prequential correct
    count ``correct[p][j][v]`` (the majority class of the counts before the
    row is added, scored only once the cell has a row). The root's own leaf
    statistics are ``root_counts`` and ``root_correct``.
    """

    def __init__(self, n_categories, n_classes):
        self.n_categories = list(n_categories)
        self.n_classes = n_classes
        self.n = {}
        self.correct = {}
        self.root_counts = [0] * n_classes
        self.root_correct = 0

    @staticmethod
    def _predicts(counts, label):
        if sum(counts) == 0:
            return False
        return max(range(len(counts)), key=lambda k: (counts[k], -k)) == label

    def observe(self, tree, x, label):
        if self._predicts(self.root_counts, label):
            self.root_correct += 1
        self.root_counts[label] += 1
        path = ()
        while True:
            if path not in self.n:
                self.n[path] = [[[0] * self.n_classes for _ in range(c)] for c in self.n_categories]
                self.correct[path] = [[0] * c for c in self.n_categories]
            for attribute, category in enumerate(x):
                cell = self.n[path][attribute][category]
                if self._predicts(cell, label):
                    self.correct[path][attribute][category] += 1
                cell[label] += 1
            if path not in tree:
                return
            feature = tree[path]
            path = path + ((feature, int(x[feature])),)

    def leaf(self, path):
        """(class counts, prequential correct count) of ``path`` as a leaf."""
        if not path:
            return self.root_counts, self.root_correct
        parent, (feature, category) = path[:-1], path[-1]
        return self.n[parent][feature][category], self.correct[parent][feature][category]

    def posterior(self, tree, lambda_, gamma, divisor=0.0):
        """(mean, sd) of the tree's objective: chain-rule leaf weights, Normal
        approximations of Beta(1 + correct, 1 + scored - correct) leaves.
        With ``divisor``, sd is at least (sum over leaves with at least 2 rows
        and an attribute left of max(0, weight * wrong share - lambda)) / divisor."""
        mean, variance, gain = 0.0, 0.0, 0.0
        stack = [((), 1.0)]
        while stack:
            path, weight = stack.pop()
            if path in tree:
                feature = tree[path]
                sizes = [sum(self.n[path][feature][v]) for v in range(self.n_categories[feature])]
                for category, size in enumerate(sizes):
                    if size > 0:
                        stack.append((path + ((feature, category),), weight * size / sum(sizes)))
                continue
            counts, correct = self.leaf(path)
            rows = sum(counts)
            if rows == 0:
                continue
            alpha = 1.0 + correct
            beta = 1.0 + (rows - 1) - correct
            leaf_mean = alpha / (alpha + beta)
            leaf_variance = alpha * beta / ((alpha + beta) ** 2 * (alpha + beta + 1.0))
            mean += weight * leaf_mean
            variance += weight**2 * leaf_variance
            if rows >= 2 and len(path) < len(self.n_categories):
                gain += max(0.0, weight * (1.0 - max(counts) / rows) - lambda_)
        sd = variance ** (gamma / 2)
        if divisor > 0:
            sd = max(sd, gain / divisor)
        return mean - lambda_ * len(tree), sd


# ---------------------------------------------------------------- Clark's max
def reference_max_moments(mu1, sd1, mu2, sd2):
    """Mean and sd of max(X1, X2) for independent Normals, by numerical integration."""
    low = min(mu1 - 12 * sd1, mu2 - 12 * sd2)
    high = max(mu1 + 12 * sd1, mu2 + 12 * sd2)

    def density(t):  # d/dt [F1(t) F2(t)]
        return stats.norm.pdf(t, mu1, sd1) * stats.norm.cdf(t, mu2, sd2) + stats.norm.cdf(t, mu1, sd1) * stats.norm.pdf(
            t, mu2, sd2
        )

    points = [mu1, mu2]
    first = integrate.quad(lambda t: t * density(t), low, high, points=points, limit=200)[0]
    second = integrate.quad(lambda t: t * t * density(t), low, high, points=points, limit=200)[0]
    return first, math.sqrt(max(second - first * first, 0.0))


def reference_beta_normal(correct, n_rows):
    scored = max(n_rows - 1, 0)
    distribution = stats.beta(1 + correct, 1 + scored - correct)
    return float(distribution.mean()), float(distribution.std())


# ------------------------------------------------------------ multiway trees
def reference_predict_proba(tree, X):
    """Class fractions of the node each row stops at, walking one row at a time."""
    out = []
    for row in np.asarray(X, dtype=np.float64):
        node = 0
        while tree.feature[node] >= 0:
            x = row[tree.feature[node]]
            if math.isnan(x) or x < 0 or x >= tree.n_categories[tree.feature[node]]:
                break
            node = tree.first_child[node] + int(x)
        out.append(tree.value[node])
    return np.array(out)
