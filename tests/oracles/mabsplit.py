"""Slow, obvious reference versions of the MABSplit kernels."""

import math

import numpy as np


def reference_linspace_edges(column, n_bins):
    """``n_bins`` evenly spaced float32 edges from min to max of the values
    that are not NaN, duplicates and the maximum (which splits nothing off)
    removed."""
    column = np.asarray(column, dtype=float)
    column = column[~np.isnan(column)]
    if column.size == 0:
        return np.empty(0)
    low, high = float(np.min(column)), float(np.max(column))
    if not high > low:
        return np.empty(0)
    edges = []
    for k in range(n_bins):
        value = low if n_bins == 1 else low + (high - low) * (k / (n_bins - 1.0))
        value = float(np.float32(value))
        if value < high and (not edges or value > edges[-1]):
            edges.append(value)
    return np.array(edges)


def reference_bin(x, edges):
    """Histogram bin of ``x``: how many edges lie strictly below it."""
    return sum(1 for edge in edges if edge < x)


def reference_histogram(X, rows, features, edges, y, n_classes, shift=0.0):
    """Per feature: class counts per bin, or [count, sum, sum of squares] of
    ``y - shift`` per bin when ``n_classes`` is None; the rows where the
    feature is NaN in the last bin."""
    width = 3 if n_classes is None else n_classes
    n_bins = max((len(e) for e in edges), default=0) + 2
    hist = np.zeros((len(features), n_bins, width))
    for slot, feature in enumerate(features):
        for row in rows:
            x = float(X[row, feature])
            b = n_bins - 1 if math.isnan(x) else reference_bin(x, edges[slot])
            if n_classes is None:
                target = float(y[row]) - shift
                hist[slot, b] += [1.0, target, target * target]
            else:
                hist[slot, b, int(y[row])] += 1.0
    return hist


def reference_impurity(y, criterion, n_classes=None):
    """Gini, entropy (bits) or variance of the targets ``y``."""
    y = np.asarray(y)
    if y.size == 0:
        return 0.0
    if criterion == "squared_error":
        return float(np.mean((y - y.mean()) ** 2))
    counts = np.bincount(y.astype(int), minlength=n_classes or 0)
    p = counts / counts.sum()
    if criterion == "gini":
        return float(1.0 - np.sum(p**2))
    return float(-sum(q * math.log2(q) for q in p if q > 0))


def impurity_of_proportions(p, criterion):
    if criterion == "gini":
        return 1.0 - float(np.sum(np.asarray(p) ** 2))
    return -sum(q * math.log2(q) for q in p if q > 0)


def reference_delta_variance(counts, criterion, step=1e-6):
    """Delta-method variance of the plug-in impurity of class counts, with a
    numerical gradient over the free proportions (all classes but the most
    frequent one, which absorbs ``1 - sum``) and the multinomial covariance."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    p = counts / n
    reference = int(np.argmax(counts))
    free = [k for k in range(len(p)) if k != reference and p[k] > 0]
    if not free:
        return 0.0

    def impurity(values):
        q = p.copy()
        q[free] = values
        q[reference] = 1.0 - sum(q[k] for k in range(len(q)) if k != reference)
        return impurity_of_proportions(q, criterion)

    base = p[free].copy()
    gradient = np.zeros(len(free))
    for i in range(len(free)):
        up, down = base.copy(), base.copy()
        up[i] += step
        down[i] -= step
        gradient[i] = (impurity(up) - impurity(down)) / (2 * step)
    covariance = (np.diag(p[free]) - np.outer(p[free], p[free])) / n
    return float(gradient @ covariance @ gradient)


def reference_arm_values(X, y, features, edges, criterion, n_classes=None, min_samples_leaf=1, missing_left=False):
    """Exact value of every (feature, edge) arm, NaN sent left if
    ``missing_left`` (else right): weighted child impurity minus parent
    impurity; NaN where a child has fewer than min_samples_leaf rows."""
    parent = reference_impurity(y, criterion, n_classes)
    values = []
    for slot, feature in enumerate(features):
        row = []
        for edge in edges[slot]:
            left = (X[:, feature] <= edge) | (missing_left & np.isnan(X[:, feature]))
            n_left, n_right = int(left.sum()), int((~left).sum())
            if n_left < min_samples_leaf or n_right < min_samples_leaf:
                row.append(np.nan)
                continue
            weighted = (
                n_left * reference_impurity(y[left], criterion, n_classes)
                + n_right * reference_impurity(y[~left], criterion, n_classes)
            ) / len(y)
            row.append(weighted - parent)
        values.append(row)
    return values


def reference_exact_split(X, y, features, edges, criterion, n_classes=None, min_samples_leaf=1):
    """(feature, threshold, NaN sent left, reduction) of the best arm. The
    arms of a feature are its edges with NaN sent right, then, if the
    feature has NaN, the same edges with NaN sent left; the first arm in
    (feature, arm) order wins ties (values equal up to 1e-12 relative).
    (-1, nan, False, 0) when no arm reduces impurity."""
    right = reference_arm_values(X, y, features, edges, criterion, n_classes, min_samples_leaf)
    left = reference_arm_values(X, y, features, edges, criterion, n_classes, min_samples_leaf, missing_left=True)
    flat = []
    for slot, feature in enumerate(features):
        flat += [(v, slot, t, False) for t, v in enumerate(right[slot])]
        if np.isnan(X[:, feature]).any():
            flat += [(v, slot, t, True) for t, v in enumerate(left[slot])]
    flat = [item for item in flat if not np.isnan(item[0])]
    if not flat:
        return -1, float("nan"), False, 0.0
    best = min(v for v, _, _, _ in flat)
    if not best < 0:
        return -1, float("nan"), False, 0.0
    band = best + 1e-12 * max(1.0, abs(best))
    value, slot, t, nan_left = next(item for item in flat if item[0] <= band)
    return int(features[slot]), float(edges[slot][t]), nan_left, -value
