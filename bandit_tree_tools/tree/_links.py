"""Link functions: raw scores (margins) to probabilities or predictions.

Each mirrors the arithmetic of the libraries we import, so probabilities
match theirs: scipy's ``expit``/``softmax`` as scikit-learn uses them; float32
arithmetic when the source library works in float32 (XGBoost).
"""

import numpy as np
from scipy.special import expit, softmax


def _identity(raw, scale):
    return raw


def _sigmoid(raw, scale):
    return expit(raw * scale) if scale != 1.0 else expit(raw)


def _softmax(raw, scale):
    return softmax(raw, axis=1)


def _exp(raw, scale):
    return np.exp(raw)


LINKS = {"identity": _identity, "sigmoid": _sigmoid, "softmax": _softmax, "exp": _exp}


def apply_link(link: str, raw: np.ndarray, scale: float = 1.0, float32: bool = False) -> np.ndarray:
    if float32:
        out = LINKS[link](raw.astype(np.float32), np.float32(scale))
        return out.astype(np.float64)
    return LINKS[link](raw, scale)
