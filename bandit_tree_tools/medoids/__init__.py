"""k-medoids: distances as numba kernels, exact PAM and FasterPAM on a
distance matrix, BanditPAM (BanditPAM++) without one, the scikit-learn
estimator :class:`KMedoids`, and :func:`leaf_medoids`, the medoid prototypes
of every leaf of a tree."""

from .. import _numba_config  # noqa: F401 (the threading layer, before any parallel kernel)
from ._distances import METRICS, pairwise_distances
from ._kmedoids import KMedoids
from ._leaves import LeafMedoids, leaf_medoids

__all__ = ["METRICS", "KMedoids", "LeafMedoids", "leaf_medoids", "pairwise_distances"]
