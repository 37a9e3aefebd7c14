"""Tree weights by an L1-penalised fit: the re-weighted start of
:func:`bandit_tree_tools.prune`'s extra walks.

A summed ensemble with one raw output is a linear model of its trees'
outputs with every weight 1. Fitting the weights (and the intercept) by the
model's own loss with an L1 penalty on the weights gives many of them 0: those
trees go, and the others are scaled to take over their work (the first level
of LOP, Devos et al., ICML 2025). The penalty runs down a path from the
smallest that zeroes every weight; the walk starts from the sparsest point
whose checking metric is within half the tolerance, and the usual search
prunes on from there with the other half.

``prune`` re-weights binary classifiers only: on regression a re-weighted
walk chose a model that held the tolerance on the validation rows and broke
it on the test rows, and a softmax fit for multiclass models rarely won and
cost much time (the figures: ``docs/expect/notes/pruning.md``).

The fit is glmnet's: Newton steps on the loss (iteratively re-weighted least
squares for log-loss, one step for squared error), each solved by cyclic
coordinate descent with soft-thresholding, sweeping only the non-zero
weights until they settle (after many sweeps, on their weighted Gram matrix
alone) and then every weight once more.
"""

import numpy as np

from ..._kernels_inline import empty, full, larger, zeros
from ..._kernels_reduce import flatnonzero
from ..._numba_config import helper, kernel

# rows of the fit (the first of the fitting rows, stored in random order): every row of most
# training sets, since the start depends on the sample (Adult LightGBM: prune chose 99x and 48x
# on two samples of 20,000 of its 29,305 rows)
MAX_FIT_ROWS = 50_000
PATH_RATIO = 0.7  # each penalty of the path is this times the one before
PATH_LENGTH = 30  # penalties of the path, from the largest down
MIN_HESSIAN = 1e-5  # floor of a row's log-loss curvature in the Newton steps


@kernel
def tree_outputs(leaf, offset, current, value, factor, trees, n_rows):
    """float64 (len(trees), n_rows): each listed tree's current output on the
    first ``n_rows`` rows of ``leaf`` (int8, int16 or int32 (n_trees, n_rows))."""
    out = empty((trees.shape[0], n_rows), np.float64)
    for j in range(trees.shape[0]):
        tree = trees[j]
        root, scale = offset[tree], factor[tree]
        for row in range(n_rows):
            out[j, row] = scale * value[current[root + leaf[tree, row]], 0]
    return out


@helper(fastmath={"reassoc", "contract"})
def _weighted_gram(outputs, hess, members):
    """``(1/n) sum_i hess_i x_a x_b`` for the weights ``members`` of
    ``outputs`` (n_weights, n), position 0 standing for the intercept
    (``x = 1``)."""
    n, m = outputs.shape[1], members.shape[0]
    gram = empty((m + 1, m + 1), np.float64)
    hess_sum = 0.0
    for i in range(n):
        hess_sum += hess[i]
    gram[0, 0] = hess_sum / n
    for a in range(m):
        xa = outputs[members[a]]
        total = 0.0
        for i in range(n):
            total += hess[i] * xa[i]
        gram[0, a + 1] = gram[a + 1, 0] = total / n
        for b in range(a + 1):
            xb = outputs[members[b]]
            total = 0.0
            for i in range(n):
                total += hess[i] * xa[i] * xb[i]
            gram[a + 1, b + 1] = gram[b + 1, a + 1] = total / n
    return gram


@helper(fastmath={"reassoc", "contract"})
def _gram_gradients(outputs, hess, residual, members):
    """``(1/n) sum_i hess_i x_a residual_i`` for the intercept and ``members``
    (the positions of :func:`_weighted_gram`)."""
    n, m = outputs.shape[1], members.shape[0]
    out = empty(m + 1, np.float64)
    out[0] = np.dot(hess, residual) / n
    for a in range(m):
        total = 0.0
        for i in range(n):
            total += hess[i] * residual[i] * outputs[members[a], i]
        out[a + 1] = total / n
    return out


@helper(fastmath={"reassoc", "contract"})
def _sweep_on_gram(gram, gradient_part, members, weight, penalty):
    """One coordinate sweep of the intercept and then of ``members`` from
    their Gram matrix and gradients (both updated in place, as ``weight``);
    returns the intercept's shift and the largest change of the loss's
    quadratic model, as the sweeps over the rows measure it."""
    m = members.shape[0]
    shift = gradient_part[0] / gram[0, 0]
    for a in range(m + 1):
        gradient_part[a] -= shift * gram[a, 0]
    largest = shift * shift * gram[0, 0]
    for a in range(m):
        j = members[a]
        curvature = gram[a + 1, a + 1]
        gradient = gradient_part[a + 1] + curvature * weight[j]
        new = np.sign(gradient) * larger(abs(gradient) - penalty, 0.0) / curvature
        step = new - weight[j]
        if step != 0.0:
            for b in range(m + 1):
                gradient_part[b] -= step * gram[b, a + 1]
            weight[j] = new
            largest = larger(largest, curvature * step * step)
    return shift, largest


@kernel(fastmath={"reassoc", "contract"})  # sums over rows in any order: they vectorise
def l1_fit(outputs, y, logistic, penalty, weight, intercept, max_newton=50, tol=1e-9):
    """Minimise ``mean loss(intercept + weight @ outputs, y) + penalty * |weight|_1``
    from the given start (``weight`` is updated in place); returns the
    intercept. ``outputs``: (n_weights, n_rows); log-loss when ``logistic``
    (``y`` in [0, 1]: class codes, or probabilities as soft labels), else half
    the squared error. (Loops, not array expressions: those allocate a
    temporary per weight and sweep.)

    Sweeps over every weight and over the non-zero ones pass over the rows,
    updating their residuals. The trees' outputs are strongly correlated, so
    the non-zero weights can take hundreds of sweeps to settle: once they
    have taken as many as their weighted Gram matrix costs to compute (about
    a quarter of their number), they sweep on that matrix and their
    gradients alone, without the rows (glmnet's covariance updates)."""
    n_weights, n = outputs.shape
    eta = full(n, intercept, np.float64)
    for j in range(n_weights):
        if weight[j] != 0.0:
            for i in range(n):
                eta[i] += weight[j] * outputs[j, i]
    hess = full(n, 1, np.float64)
    start_residual = empty(n, np.float64)  # the working residuals at the start of the Newton step
    residual = empty(n, np.float64)
    curvature = empty(n_weights, np.float64)
    known = zeros(n_weights, np.bool_)
    previous = weight.copy()
    for _ in range(max_newton):
        # the quadratic model of the loss at eta: rows weighted by hess, working residuals
        for i in range(n):
            if logistic:
                p = 1.0 / (1.0 + np.exp(-eta[i]))
                hess[i] = larger(p * (1.0 - p), MIN_HESSIAN)
                start_residual[i] = (y[i] - p) / hess[i]
            else:
                start_residual[i] = y[i] - eta[i]
        # a sum and copies by loops: hess.sum() and slice assignments compile numba's implementations
        # in a fresh environment, and the copies' shape check its string functions (2.2 s in all); the
        # sum in this kernel's own (reassociated) order, as hess.sum() took it, not array_sum's
        hess_sum = 0.0
        for i in range(n):
            hess_sum += hess[i]
        known[:] = False  # curvatures of this Newton step, computed where first needed
        for j in range(n_weights):
            previous[j] = weight[j]
        start_intercept = intercept
        for i in range(n):
            residual[i] = start_residual[i]
        active_only = False
        active_sweeps = 0  # sweeps over the non-zero weights since the last sweep over every weight
        members = zeros(0, np.int64)  # the non-zero weights sweeping on their Gram matrix, if any
        gram = zeros((1, 1), np.float64)
        gradient_part = zeros(1, np.float64)  # (1/n) sum_i hess_i x_a residual_i of the intercept and the members
        for _sweep in range(1000):
            if members.shape[0] > 0:
                shift, largest = _sweep_on_gram(gram, gradient_part, members, weight, penalty)
                intercept += shift
                if largest < tol:
                    # settled: the rows' residuals from the step's start and every change since
                    for i in range(n):
                        residual[i] = start_residual[i] - (intercept - start_intercept)
                    for j in range(n_weights):
                        step = weight[j] - previous[j]
                        if step != 0.0:
                            for i in range(n):
                                residual[i] -= step * outputs[j, i]
                    members = zeros(0, np.int64)
                    active_only = False
                continue
            shift = 0.0
            for i in range(n):
                shift += hess[i] * residual[i]
            shift /= hess_sum
            intercept += shift
            for i in range(n):
                residual[i] -= shift
            largest = shift * shift * hess_sum / n
            for j in range(n_weights):
                if active_only and weight[j] == 0.0:
                    continue
                total = 0.0
                for i in range(n):
                    total += hess[i] * outputs[j, i] * residual[i]
                if weight[j] == 0.0 and abs(total / n) <= penalty:
                    continue  # it stays 0 whatever its curvature: most weights, most sweeps
                if not known[j]:
                    curvature_sum = 0.0
                    for i in range(n):
                        curvature_sum += hess[i] * outputs[j, i] * outputs[j, i]
                    curvature[j] = curvature_sum / n
                    known[j] = True
                if curvature[j] <= 0.0:
                    continue
                gradient = total / n + curvature[j] * weight[j]
                new = np.sign(gradient) * larger(abs(gradient) - penalty, 0.0) / curvature[j]
                step = new - weight[j]
                if step != 0.0:
                    for i in range(n):
                        residual[i] -= step * outputs[j, i]
                    weight[j] = new
                    largest = larger(largest, curvature[j] * step * step)
            if largest < tol:
                if not active_only:
                    break  # a sweep over every weight changed nothing
                active_only = False
                continue
            active_sweeps = active_sweeps + 1 if active_only else 0
            active_only = True
            kept = flatnonzero(weight)
            if 4 * active_sweeps >= kept.shape[0] + 1:
                members = kept
                gram = _weighted_gram(outputs, hess, members)
                gradient_part = _gram_gradients(outputs, hess, residual, members)
        moved = 0.0
        for i in range(n):
            eta[i] += intercept - start_intercept
        for j in range(n_weights):
            step = weight[j] - previous[j]
            if step != 0.0:
                for i in range(n):
                    eta[i] += step * outputs[j, i]
                moved = larger(moved, curvature[j] * step * step)
        if not logistic or moved < tol:
            break
    return intercept


def l1_path(outputs, y, logistic):
    """Yield ``(weights, intercept)`` down the penalty path: from the
    smallest penalty that zeroes every weight, each ``PATH_RATIO`` times the
    one before, warm-started."""
    mean = float(np.mean(y))
    if logistic:
        mean = min(max(mean, 1e-6), 1 - 1e-6)
        intercept = float(np.log(mean / (1 - mean)))
    else:
        intercept = mean
    largest = float(np.max(np.abs(outputs @ (y - mean)))) / outputs.shape[1]
    weight = np.zeros(outputs.shape[0])
    for k in range(1, PATH_LENGTH + 1):
        intercept = l1_fit(outputs, y, logistic, largest * PATH_RATIO**k, weight, intercept)
        yield weight.copy(), intercept
