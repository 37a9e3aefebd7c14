"""Link functions: raw scores (margins) to probabilities or predictions.

One table, :data:`LINKS`: every link's name, its code for numba kernels and
its numpy body. :func:`link_row` is the numba body of the same links, for
kernels that transform one row at a time (the pruning evaluator), and
:func:`link_value` that of the elementwise links on one raw score. They
mirror the arithmetic of the libraries we import, in float32 when the source
library works in float32 (XGBoost; ``float32=True``).

Which ``exp`` a link calls is a fact of the source library (:data:`LINK_EXPS`,
``Ensemble.link_exp``): scikit-learn goes through numpy and scipy
(``"numpy"``), whose vectorised ``exp`` differs from the C library's in the
last bit of a few percent of values; LightGBM and XGBoost call the C
library's (``"libm"``), which is what numba's ``np.exp`` calls too. So
:func:`apply_link` gives scikit-learn's probabilities bit for bit through
numpy, and LightGBM's and XGBoost's through the numba bodies for the softmax
and exp links (the sigmoid stays scipy's ``expit``, which calls the C
library's ``exp`` and computes ``1 / (1 + exp(-x))`` as the numba body does).
The numba softmax sums its denominator class by class, as LightGBM does
(numpy sums blocks of 8 pairwise), and in float32 it is XGBoost's: float32
exponentials summed in float64, each divided by that sum rounded to float32.
The pruning kernels take the numba bodies for every model: within an ulp or
two of scikit-learn's softmax and exp.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.special import expit, softmax

from .._kernels_inline import larger
from .._numba_config import helper, kernel

IDENTITY, SIGMOID, SOFTMAX, EXP = 0, 1, 2, 3


def _identity(raw, scale):
    return raw


def _sigmoid(raw, scale):
    return expit(raw * scale) if scale != 1.0 else expit(raw)


def _softmax(raw, scale):
    return softmax(raw, axis=1)


def _exp(raw, scale):
    return np.exp(raw)


class Link(NamedTuple):
    code: int  # what numba kernels receive (see link_row)
    transform: Callable  # numpy body: (raw (n_rows, n_outputs), scale) -> same shape


LINKS = {
    "identity": Link(IDENTITY, _identity),
    "sigmoid": Link(SIGMOID, _sigmoid),
    "softmax": Link(SOFTMAX, _softmax),
    "exp": Link(EXP, _exp),
}
LINK_CODES = {name: link.code for name, link in LINKS.items()}
LINK_EXPS = ("numpy", "libm")  # whose exp the source library's link calls (see the module docstring)


def kernel_link(link: str) -> int | None:
    """The ``code`` :func:`link_value` and :func:`link_row` receive for
    ``link``: its code, or None for the identity. numba types None apart and
    drops the branches that test it, so a kernel compiled for an identity
    model (a forest's) compiles none of the other links."""
    return None if link == "identity" else LINK_CODES[link]


def apply_link(link: str, raw: np.ndarray, scale: float = 1.0, float32: bool = False, exp: str = "numpy") -> np.ndarray:
    """``link(raw)`` row-wise, float64; ``float32`` computes in float32 (as XGBoost);
    ``exp`` whose exponential the link takes (:data:`LINK_EXPS`)."""
    if exp == "libm" and link in ("softmax", "exp"):
        out = np.empty(raw.shape, dtype=np.float64)
        _link_rows(np.ascontiguousarray(raw, dtype=np.float64), LINK_CODES[link], float(scale), bool(float32), out)
        return out
    if float32:
        out = LINKS[link].transform(raw.astype(np.float32), np.float32(scale))
        return out.astype(np.float64)
    return LINKS[link].transform(raw, scale)


@kernel
def sigmoid(z, scale):
    """``expit(scale * z)`` in float64."""
    return 1.0 / (1.0 + np.exp(-(scale * z)))


@helper
def link_value(z, code, scale, float32):
    """One raw score through an elementwise link (sigmoid, exp, identity),
    in float32 arithmetic when ``float32``: the body of :func:`link_row` for
    those links, taken alone where a kernel has one raw score per row (a
    scalar, not a row: per-row views cost several times the arithmetic).
    ``code`` None is the identity (:func:`kernel_link`)."""
    if code is None:
        return np.float64(np.float32(z)) if float32 else z
    if float32:
        z32 = np.float32(z)
        if code == SIGMOID:
            if scale != 1.0:
                z32 = np.float32(scale) * z32
            return np.float64(np.float32(1.0) / (np.float32(1.0) + np.exp(-z32)))
        if code == EXP:
            return np.float64(np.exp(z32))
        return np.float64(z32)
    if code == SIGMOID:
        return sigmoid(z, scale) if scale != 1.0 else 1.0 / (1.0 + np.exp(-z))
    if code == EXP:
        return np.exp(z)
    return z


@helper
def _softmax_row64(raw_row, out):
    n = raw_row.shape[0]
    largest = raw_row[0]  # raw_row.max(), NaN included, without compiling numpy's reduction (0.3 s)
    for k in range(1, n):
        if raw_row[k] > largest or raw_row[k] != raw_row[k]:
            largest = raw_row[k]
    total = 0.0
    for k in range(n):
        out[k] = np.exp(raw_row[k] - largest)
        total += out[k]
    for k in range(n):
        out[k] /= total


@helper
def _softmax_row32(raw_row, out):
    """XGBoost's softmax: float32 exponentials summed in float64, each divided
    by the sum rounded to float32."""
    n = raw_row.shape[0]
    largest = np.float32(raw_row[0])
    for k in range(1, n):
        largest = larger(largest, np.float32(raw_row[k]))
    total = 0.0
    for k in range(n):
        e = np.exp(np.float32(raw_row[k]) - largest)
        out[k] = e
        total += e
    total32 = np.float32(total)
    for k in range(n):
        out[k] = np.float32(out[k]) / total32


@kernel
def link_row(raw_row, code, scale, float32, out):
    """``link(raw_row)`` into ``out`` (float64, same length): the numba body of
    :data:`LINKS` (``code`` from :data:`LINK_CODES`), in float32 arithmetic
    when ``float32`` (as :func:`apply_link`); ``code`` None is the identity."""
    if code is not None and code == SOFTMAX:
        if float32:
            _softmax_row32(raw_row, out)
        else:
            _softmax_row64(raw_row, out)
    else:
        for k in range(raw_row.shape[0]):
            out[k] = link_value(raw_row[k], code, scale, float32)


@kernel
def _link_rows(raw, code, scale, float32, out):
    """:func:`link_row` of every row of ``raw`` into ``out``: the links with
    the C library's ``exp`` (``apply_link(..., exp="libm")``). The elementwise
    links go value by value: a row's view per row cost more than its exp."""
    for row in range(raw.shape[0]):
        if code == SOFTMAX:  # link_row's softmax, without compiling link_row itself
            if float32:
                _softmax_row32(raw[row], out[row])
            else:
                _softmax_row64(raw[row], out[row])
        else:
            for k in range(raw.shape[1]):
                out[row, k] = link_value(raw[row, k], code, scale, float32)
