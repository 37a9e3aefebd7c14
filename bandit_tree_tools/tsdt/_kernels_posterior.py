"""TSDT kernels, posteriors: the Normal posterior of a tree's objective from
the shared statistics (Beta posteriors of the leaves, Clark's maximum of
children) and the marking of the tree a search node stands for."""

import math

import numpy as np

from .._numba_config import helper, kernel
from ._kernels_state import MIN_SAMPLES, _leaf_counts


@kernel
def clark_max(mu1, sd1, mu2, sd2):
    """Clark's (1961) Normal approximation of max(N(mu1, sd1^2), N(mu2, sd2^2))
    for independent variables. The spread is ``a = sqrt(sd1^2 + sd2^2)``, a
    standard deviation: the TSDT paper (appendix C) and its reference code
    use the variance ``sd1^2 + sd2^2`` there, which is wrong."""
    a = math.sqrt(sd1 * sd1 + sd2 * sd2)
    if a < 1e-300:
        if mu1 >= mu2:
            return mu1, sd1
        return mu2, sd2
    alpha = (mu1 - mu2) / a
    cdf = 0.5 * math.erfc(-alpha / math.sqrt(2.0))
    cdf_minus = 0.5 * math.erfc(alpha / math.sqrt(2.0))
    pdf = math.exp(-0.5 * alpha * alpha) / math.sqrt(2.0 * math.pi)
    mu = mu1 * cdf + mu2 * cdf_minus + a * pdf
    second = (mu1 * mu1 + sd1 * sd1) * cdf + (mu2 * mu2 + sd2 * sd2) * cdf_minus + (mu1 + mu2) * a * pdf
    variance = second - mu * mu
    if variance < 0.0:  # rounding when one variable dominates
        variance = 0.0
    return mu, math.sqrt(variance)


@kernel
def beta_normal(correct, n_rows):
    """Mean and sd of the Normal matching Beta(1 + correct, 1 + scored - correct),
    where the first row of a leaf is not scored (no prediction exists yet:
    equations 5-6 sum from i = 2)."""
    scored = n_rows - 1 if n_rows > 0 else 0
    alpha = 1.0 + correct
    beta = 1.0 + scored - correct
    total = alpha + beta
    return alpha / total, math.sqrt(alpha * beta / (total * total * (total + 1.0)))


# --------------------------------------------------------------- tree marking
@helper
def _mark(state, search_node, value_if_set):
    """Write (value_if_set=True) or clear the splits of ``search_node``'s tree in ``split_of``."""
    node = search_node
    while node >= 0:
        leaf = state.s_split_leaf[node]
        if leaf >= 0:
            state.split_of[leaf] = state.s_split_feature[node] if value_if_set else -1
        node = state.s_parent[node]


@helper
def _tree_size(state, search_node, n_cat):
    size = 1
    node = search_node
    while node >= 0:
        if state.s_split_leaf[node] >= 0:
            size += n_cat[state.s_split_feature[node]]
        node = state.s_parent[node]
    return size


@helper
def evaluate_marked_tree(state, n_splits, n_cat, cat_offset, lambda_, gamma, divisor=0.0):
    """Posterior (mu, sd) of the tree written in ``split_of``; with
    ``divisor > 0``, sd is at least gain / divisor (the gain bound of
    :func:`_posterior`: the spread of the optimistic search)."""
    mu, sd, gain = _posterior(state, n_splits, n_cat, cat_offset, lambda_, gamma)
    if divisor > 0.0 and gain / divisor > sd:
        sd = gain / divisor
    return mu, sd


@helper
def _posterior(state, n_splits, n_cat, cat_offset, lambda_, gamma):
    """Posterior N(mu, sd^2) of the tree currently written in ``split_of``:
    mu = sum_l p(l) mu_l - lambda * splits and
    sd = (sum_l (p(l) sd_l)^2)^(gamma / 2) (equations 9-10 with the gamma
    exponent of appendix B applied to the standard deviation, as the
    reference code does), where p(l) is the chain-rule estimator of
    section 4.4: the product along the path of n(node) / n(parent).

    Returns ``(mu, sd, gain)``, where ``gain`` is an upper bound of what
    splitting its leaves further can add:
    ``sum_l max(0, p(l) * (1 - majority share of l) - lambda)`` over the
    leaves that can still be split (a deeper tree is at best right on every
    row of the leaf, and costs at least one more split)."""
    mean = 0.0
    variance = 0.0
    gain = 0.0
    n_features = n_cat.shape[0]
    state.stack_node[0] = 0
    state.stack_weight[0] = 1.0
    top = 1
    while top > 0:
        top -= 1
        node = state.stack_node[top]
        weight = state.stack_weight[top]
        feature = state.split_of[node]
        if feature >= 0:
            slot = state.dt_slot[node]
            total = state.slot_total[slot]
            first = state.slot_child[slot, feature]
            for category in range(n_cat[feature]):
                cell = cat_offset[feature] + category
                n_child = 0
                for k in range(state.slot_counts.shape[2]):
                    n_child += state.slot_counts[slot, cell, k]
                if n_child > 0:  # empty children have p = 0 and add nothing
                    state.stack_node[top] = first + category
                    state.stack_weight[top] = weight * n_child / total
                    top += 1
        else:
            counts, correct = _leaf_counts(state, node, cat_offset)
            n_rows = np.int64(0)  # not a literal 0: numba would compile beta_normal for it too
            for k in range(counts.shape[0]):
                n_rows += counts[k]
            if n_rows > 0:
                leaf_mu, leaf_sd = beta_normal(correct, n_rows)
                mean += weight * leaf_mu
                variance += weight * weight * leaf_sd * leaf_sd
                if n_rows >= MIN_SAMPLES and state.dt_depth[node] < n_features:
                    majority = 0
                    for k in range(counts.shape[0]):
                        if counts[k] > majority:
                            majority = counts[k]
                    room = weight * (1.0 - majority / n_rows) - lambda_
                    if room > 0.0:
                        gain += room
    return mean - lambda_ * n_splits, variance ** (0.5 * gamma), gain


@helper
def _evaluate_child(state, child, n_cat, cat_offset, lambda_, gamma, divisor):
    """Posterior of a child of the search node whose tree is marked, and its
    sd widened by the gain bound (a "stop" child is final: not widened)."""
    leaf = state.s_split_leaf[child]
    if leaf >= 0:
        state.split_of[leaf] = state.s_split_feature[child]
    mu, sd, gain = _posterior(state, state.s_n_splits[child], n_cat, cat_offset, lambda_, gamma)
    if leaf >= 0:
        state.split_of[leaf] = -1
    state.s_mu[child] = mu
    state.s_sd[child] = sd
    wide = sd
    if divisor > 0.0 and state.s_is_stop[child] == 0 and gain / divisor > sd:
        wide = gain / divisor
    state.s_wide[child] = wide


@helper
def _combine_children(state, node, clark):
    """Back-propagation rule: Fast-TSDT takes the child with the largest
    posterior mean (equation 12); TSDT folds Clark's approximation over the
    children in order (appendix C)."""
    child = state.s_first_child[node]
    mu = state.s_mu[child]
    sd = state.s_sd[child]
    wide = state.s_wide[child]
    child = state.s_next_sibling[child]
    while child >= 0:
        if clark:
            mu, sd = clark_max(mu, sd, state.s_mu[child], state.s_sd[child])
            wide = sd
        elif state.s_mu[child] > mu:
            mu = state.s_mu[child]
            sd = state.s_sd[child]
            wide = state.s_wide[child]
        child = state.s_next_sibling[child]
    state.s_mu[node] = mu
    state.s_sd[node] = sd
    state.s_wide[node] = wide
