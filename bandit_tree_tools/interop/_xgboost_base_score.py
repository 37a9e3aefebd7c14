"""XGBoost's base_score: stored after the inverse link, turned into a margin
with XGBoost's own float32 arithmetic (``ProbToMargin``), and written back as
the float32 XGBoost turns into the same margin."""

import ctypes
import ctypes.util
import functools

import numpy as np

from ..exceptions import ConversionError


def parse_base_score(text: str) -> np.ndarray:
    text = str(text).strip()
    if text.startswith("["):
        text = text[1:-1]
    return np.array([float(part) for part in text.split(",") if part.strip()], dtype=np.float32)


@functools.lru_cache(maxsize=1)
def _c_logf():
    """The C library's ``logf``, which XGBoost's ``ProbToMargin`` calls: it is
    not always correctly rounded, so a numpy logarithm can be one float32
    step away from XGBoost's base margin. None where no C library is found."""
    name = ctypes.util.find_library("m") or ctypes.util.find_library("c") or ctypes.util.find_library("ucrtbase")
    try:
        logf = ctypes.CDLL(name).logf
    except (OSError, AttributeError, TypeError):
        return None
    logf.restype, logf.argtypes = ctypes.c_float, [ctypes.c_float]
    return logf


def _logf(values: np.ndarray) -> np.ndarray:
    logf = _c_logf()
    if logf is None:
        return np.log(values.astype(np.float64)).astype(np.float32)
    out = np.empty(values.shape, dtype=np.float32)
    for index, value in enumerate(values.tolist()):
        out[index] = logf(value) if value > 0 else (-np.inf if value == 0 else np.nan)
    return out


def to_margin(stored: np.ndarray, kind: str, check: bool = True) -> np.ndarray:
    """XGBoost's ``ProbToMargin`` in float32: ``-logf(1/p - 1)``, ``logf(p)``."""
    stored = stored.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "logit":
            # XGBoost clips the probability to [kRtEps, 1 - kRtEps] (1e-6f) before the logit
            eps = np.float32(1e-6)
            clipped = np.clip(stored, eps, np.float32(1.0) - eps)
            margin = -_logf(np.float32(1.0) / clipped - np.float32(1.0))
        elif kind == "log":
            margin = _logf(stored)
        else:
            margin = stored
    if check and not np.all(np.isfinite(margin)):
        raise ConversionError(f"the XGBoost model's base_score {stored.tolist()} has no finite margin")
    return margin.astype(np.float64)


def from_margin(margin: np.ndarray, kind: str) -> np.ndarray:
    """float32 values XGBoost turns back into exactly ``float32(margin)``
    where such a value lies within a few float32 steps of the inverse link
    (it always does for the identity), else the nearest float32."""
    target = margin.astype(np.float32).astype(np.float64)
    if kind == "logit":
        guess = (1.0 / (1.0 + np.exp(-margin))).astype(np.float32)
    elif kind == "log":
        guess = np.exp(margin).astype(np.float32)
    else:
        return margin.astype(np.float32)
    best = guess.copy()
    for index in range(best.shape[0]):
        up = down = guess[index]
        for _ in range(8):
            hits = [c for c in (up, down) if to_margin(np.array([c]), kind, check=False)[0] == target[index]]
            if hits:
                best[index] = hits[0]
                break
            up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(-np.inf))
    return best


def format_base_score(values: np.ndarray) -> str:
    return "[" + ",".join(np.format_float_scientific(np.float32(v), unique=True) for v in values) + "]"
