"""Every result's ``plot`` follows the one convention (bandit_tree_tools._plotting):
``plot(ax=None, ...)`` returns the Figure it drew on; ``ax`` is one Axes or a
sequence of the documented number of Axes, and anything else is a
ParameterError. And the figures are tidy: legends outside the data, integer
ticks on counted axes, image grids without empty cells."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from sklearn.datasets import load_breast_cancer, load_digits  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402


# ------------------------------------------------------------ the convention
# one case per result: (builder of the result, keyword arguments of plot,
# number of Axes plot draws on). Each folder's owner keeps its own case.
def _medoids_case():
    X, y = load_digits(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:300], y[:300])
    result = btt.leaf_medoids(model, X[:300], n_medoids=2, random_state=0)
    return result, {"image_shape": (8, 8), "max_leaves": 3}, result.n_panels((8, 8), max_leaves=3)


def _medoid_profiles_case():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    result = btt.leaf_medoids(model, X, n_medoids=2, random_state=0)
    return result, {"max_leaves": 3}, 3


def _bandit_prune_case():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:300], y[:300])
    result = btt.bandit_prune(model, X[300:], y[300:], n_rounds=60, min_depth=2, random_state=0, progress=False)
    return result, {}, 3


def _compress_case():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:300], y[:300])
    return btt.prune(model, X[300:], y[300:], tolerance=0.05, random_state=0, progress=False), {}, 1


def _baseline_prune_case():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X[:300], y[:300])
    return btt.reduced_error_prune(model, X[300:], y[300:]), {}, 1


def _resplit_case():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    return btt.resplit(model, X, y, random_state=0), {}, 1


def _tsdt_trace_case():
    X, y = load_breast_cancer(return_X_y=True)
    tsdt = btt.TSDTClassifier(lambda_=0.01, max_iter=20, random_state=0).fit(
        (X[:200, :4] > np.median(X[:200, :4], axis=0)).astype(int), y[:200]
    )
    return tsdt.trace_, {}, 1


def _not_yet(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


CASES = [
    pytest.param(_medoids_case, id="LeafMedoids-images"),
    pytest.param(_medoid_profiles_case, id="LeafMedoids-profiles"),
    pytest.param(_bandit_prune_case, id="PruneResult-bandit"),
    pytest.param(_compress_case, id="PruneResult-compress"),
    pytest.param(_baseline_prune_case, id="PruneResult-reduced-error"),
    pytest.param(_resplit_case, id="ResplitResult"),
    pytest.param(_tsdt_trace_case, id="SearchTrace"),
]


@pytest.mark.parametrize("case", CASES)
def test_plot_returns_the_figure_and_draws_on_the_axes_given(case):
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from bandit_tree_tools.exceptions import ParameterError

    result, kwargs, n_panels = case()
    figure = result.plot(**kwargs)
    assert isinstance(figure, Figure)
    plt.close(figure)
    mine, axes = plt.subplots(1, n_panels, squeeze=False)
    given = axes[0, 0] if n_panels == 1 else list(axes[0])
    assert result.plot(ax=given, **kwargs) is mine  # drawn on the Axes given, not on a new figure
    assert all(axis.has_data() or axis.images or axis.texts for axis in axes[0])
    plt.close(mine)
    _, wrong = plt.subplots(1, n_panels + 1, squeeze=False)
    with pytest.raises(ParameterError, match="ax must be None or"):
        result.plot(ax=list(wrong[0]), **kwargs)
    plt.close("all")


def test_prune_result_plot_axes_keyword_still_works_with_a_warning():
    import matplotlib.pyplot as plt

    result, _, n_panels = _bandit_prune_case()
    mine, axes = plt.subplots(1, n_panels)
    with pytest.warns(FutureWarning, match=r"plot\(axes=...\) is deprecated; pass ax="):
        assert result.plot(axes=axes) is mine
    plt.close("all")


# ---------------------------------------------------------------- tidiness
def legend_outside(axis) -> bool:
    figure = axis.figure
    figure.canvas.draw()
    legend = axis.get_legend().get_window_extent()
    return legend.x0 >= axis.get_window_extent().x1 - 1


def test_medoid_figures_are_tidy():
    X, y = load_digits(return_X_y=True)
    X = X[:400]
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y[:400])
    result = btt.leaf_medoids(model, X, n_medoids=3, random_state=0)
    figure = result.plot(image_shape=(8, 8), max_leaves=10)
    n_medoids = sum(
        len(result.medoids[leaf])
        for leaf in sorted(result.medoids, key=lambda leaf: (-result.n_samples[leaf], leaf))[:10]
    )
    assert len(figure.axes) == n_medoids  # one panel per medoid, no empty cells
    width, height = figure.get_size_inches()
    assert 0.5 < width / height < 2.5  # blocks side by side, not one tall strip
    figure = result.plot(max_leaves=3)
    for axis in figure.axes:
        assert legend_outside(axis)
    ticks = figure.axes[-1].get_xticks()
    assert np.allclose(ticks, np.round(ticks))  # feature indices are whole numbers


def test_resplit_figure_is_tidy():
    X, y = load_breast_cancer(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    result = btt.resplit(model, X, y, random_state=0)
    (axis,) = result.plot().axes
    assert legend_outside(axis)
    labels = [text.get_text() for text in axis.get_legend().get_texts()]
    assert "no change" in labels and any(label.startswith(("same feature", "another feature")) for label in labels)
    assert axis.get_xlim() == axis.get_ylim()  # old and new on one scale
