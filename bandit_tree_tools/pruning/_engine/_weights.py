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
alone) and then every weight once more. The kernels release the GIL: ``prune``
fits the path on a thread of its own while the walks before it run.
"""

import numpy as np
from threadpoolctl import ThreadpoolController

from ..._kernels_inline import empty, larger
from ..._numba_config import kernel

# rows of the fit (the first of the fitting rows, stored in random order): every row of most
# training sets, since the start depends on the sample (Adult LightGBM: prune chose 99x and 48x
# on two samples of 20,000 of its 29,305 rows)
MAX_FIT_ROWS = 50_000
PATH_RATIO = 0.7  # each penalty of the path is this times the one before
PATH_LENGTH = 30  # penalties of the path, from the largest down
MAX_SWEEPS = 1_000  # coordinate sweeps of one Newton step, over the rows or on the Gram matrix
# the non-zero weights sweep on their Gram matrix once they have swept over the rows a sixteenth as
# often as they number: BLAS computes the matrix in about the time of that many sweeps
GRAM_AFTER = 16
MIN_HESSIAN = 1e-5  # floor of a row's log-loss curvature in the Newton steps
FAST = {"reassoc", "contract"}  # the kernels' sums over rows in any order: they vectorise


@kernel(nogil=True)
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


@kernel(fastmath=FAST, nogil=True)
def _newton_model(eta, y, logistic, hess, residual):
    """The quadratic model of the loss at ``eta``, in place: each row's weight
    ``hess`` and working residual (iteratively re-weighted least squares for
    log-loss, the residual itself for squared error); returns the sum of
    ``hess``."""
    hess_sum = 0.0
    for i in range(eta.shape[0]):
        if logistic:
            p = 1.0 / (1.0 + np.exp(-eta[i]))
            hess[i] = larger(p * (1.0 - p), MIN_HESSIAN)
            residual[i] = (y[i] - p) / hess[i]
        else:
            hess[i] = 1.0
            residual[i] = y[i] - eta[i]
        hess_sum += hess[i]
    return hess_sum


@kernel(fastmath=FAST, nogil=True)
def _row_sweeps(outputs, hess, hess_sum, residual, weight, curvature, known, intercept, penalty, tol, max_sweeps):
    """Coordinate sweeps over the rows, from one over every weight: then over
    the non-zero ones until they settle, and over every weight again, until
    a sweep over every weight changes nothing (``residual``, ``weight`` and
    the curvatures, computed where first needed, updated in place). Returns
    (intercept, sweeps taken, whether the non-zero weights should go on
    sweeping on their Gram matrix: they have swept ``1 / GRAM_AFTER`` times
    as often as they number without settling)."""
    n_weights, n = outputs.shape
    active_only = False
    active_sweeps = 0  # sweeps over the non-zero weights since the last sweep over every weight
    for sweep in range(max_sweeps):
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
                return intercept, sweep + 1, False  # a sweep over every weight changed nothing
            active_only = False
            continue
        active_sweeps = active_sweeps + 1 if active_only else 0
        active_only = True
        kept = 0
        for j in range(n_weights):
            kept += weight[j] != 0.0
        if GRAM_AFTER * active_sweeps >= kept + 1:
            return intercept, sweep + 1, True
    return intercept, max_sweeps, False


@kernel(fastmath=FAST, nogil=True)
def _gram_sweeps(gram, gradient_part, members, weight, penalty, tol, max_sweeps):
    """Coordinate sweeps of the intercept and then of ``members`` from their
    weighted Gram matrix and gradients (both updated in place, as
    ``weight``; position 0 stands for the intercept), without the rows,
    until the largest change of the loss's quadratic model is below ``tol``
    (glmnet's covariance updates). Returns (the intercept's shift, sweeps)."""
    m = members.shape[0]
    moved = 0.0
    for sweep in range(max_sweeps):
        shift = gradient_part[0] / gram[0, 0]
        for a in range(m + 1):
            gradient_part[a] -= shift * gram[a, 0]
        moved += shift
        largest = shift * shift * gram[0, 0]
        for a in range(m):
            j = members[a]
            curvature = gram[a + 1, a + 1]
            if curvature <= 0.0:  # a weight whose outputs are all 0 never moves
                continue
            gradient = gradient_part[a + 1] + curvature * weight[j]
            new = np.sign(gradient) * larger(abs(gradient) - penalty, 0.0) / curvature
            step = new - weight[j]
            if step != 0.0:
                for b in range(m + 1):
                    gradient_part[b] -= step * gram[b, a + 1]
                weight[j] = new
                largest = larger(largest, curvature * step * step)
        if largest < tol:
            return moved, sweep + 1
    return moved, max_sweeps


@kernel(fastmath=FAST, nogil=True)
def _add_steps(values, shift, weight, previous, outputs, sign):
    """``values += sign * (shift + sum_j (weight_j - previous_j) * outputs_j)``
    in place, over the weights that moved: a linear predictor or the working
    residuals brought up to date with a Newton step's changes."""
    for i in range(values.shape[0]):
        values[i] += sign * shift
    for j in range(weight.shape[0]):
        step = weight[j] - previous[j]
        if step != 0.0:
            for i in range(values.shape[0]):
                values[i] += sign * step * outputs[j, i]


def _gram_system(outputs, hess, residual, members):
    """The Gram matrix of ``(1, outputs[members])`` weighted by ``hess``, and
    the gradients ``(1/n) sum_i hess_i x_a residual_i``, position 0 standing
    for the intercept (``x = 1``). By BLAS (several times faster than a
    kernel's loops over the rows) on one thread, so that its sums do not
    depend on the number of threads."""
    n, m = outputs.shape[1], members.shape[0]
    root = np.sqrt(hess)
    with _one_blas_thread():
        scaled = outputs[members]  # a copy, scaled in place: rows x sqrt(hess)
        scaled *= root
        gram = np.empty((m + 1, m + 1))
        gram[0, 0] = hess.sum() / n
        gram[0, 1:] = gram[1:, 0] = scaled @ root / n
        gram[1:, 1:] = scaled @ scaled.T / n  # symmetric to the last bit (BLAS's syrk)
        gradient_part = np.empty(m + 1)
        gradient_part[0] = hess @ residual / n
        gradient_part[1:] = scaled @ (root * residual) / n
    return gram, gradient_part


def _one_blas_thread():
    """A context in which BLAS runs on one thread (``threadpoolctl``; the
    libraries are looked up on first use)."""
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


_BLAS = None


def l1_fit(outputs, y, logistic, penalty, weight, intercept, max_newton=50, tol=1e-9):
    """Minimise ``mean loss(intercept + weight @ outputs, y) + penalty * |weight|_1``
    from the given start (``weight`` is updated in place); returns the
    intercept. ``outputs``: C-contiguous float64 (n_weights, n_rows);
    log-loss when ``logistic`` (``y`` in [0, 1]: class codes, or
    probabilities as soft labels), else half the squared error.

    Each Newton step sweeps over the rows (``_row_sweeps``). The trees'
    outputs are strongly correlated, so the non-zero weights can take
    hundreds of sweeps to settle: once they have taken a sixteenth as many
    as they number, they sweep on their weighted Gram matrix and their
    gradients alone (``_gram_sweeps``), and then over every weight again.
    At most ``MAX_SWEEPS`` sweeps of either kind a step."""
    n_weights, n = outputs.shape
    eta = np.full(n, float(intercept))
    _add_steps(eta, 0.0, weight, np.zeros(n_weights), outputs, 1.0)
    hess, start_residual, residual = np.empty(n), np.empty(n), np.empty(n)
    curvature, known = np.empty(n_weights), np.zeros(n_weights, dtype=bool)
    for _ in range(max_newton):
        hess_sum = _newton_model(eta, y, bool(logistic), hess, start_residual)
        known[:] = False  # curvatures of this Newton step, computed where first needed
        previous, start_intercept = weight.copy(), intercept
        residual[:] = start_residual
        sweeps = 0
        while sweeps < MAX_SWEEPS:
            intercept, taken, on_gram = _row_sweeps(
                outputs,
                hess,
                hess_sum,
                residual,
                weight,
                curvature,
                known,
                intercept,
                penalty,
                tol,
                MAX_SWEEPS - sweeps,
            )
            sweeps += taken
            if not on_gram or sweeps >= MAX_SWEEPS:
                break
            members = np.flatnonzero(weight)
            gram, gradient_part = _gram_system(outputs, hess, residual, members)
            shift, taken = _gram_sweeps(gram, gradient_part, members, weight, penalty, tol, MAX_SWEEPS - sweeps)
            intercept += shift
            sweeps += taken
            # the rows' residuals from the step's start and every change since
            residual[:] = start_residual
            _add_steps(residual, intercept - start_intercept, weight, previous, outputs, -1.0)
        _add_steps(eta, intercept - start_intercept, weight, previous, outputs, 1.0)
        # converged when the step moved no weight and not the intercept either (by the quadratic model)
        moved = weight != previous
        largest = float(np.max(curvature[moved] * (weight[moved] - previous[moved]) ** 2, initial=0.0))
        largest = max(largest, hess_sum / n * (intercept - start_intercept) ** 2)
        if not logistic or largest < tol:
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
