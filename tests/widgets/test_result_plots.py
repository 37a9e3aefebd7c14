"""The result figures are tidy: legends outside the data, integer ticks on
counted axes, image grids without empty cells."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from sklearn.datasets import load_breast_cancer, load_digits  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402


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
    n_medoids = sum(len(result.medoids[leaf]) for leaf in sorted(result.medoids, key=lambda leaf: (-result.n_samples[leaf], leaf))[:10])
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
    axis = result.plot()
    assert legend_outside(axis)
    labels = [text.get_text() for text in axis.get_legend().get_texts()]
    assert "no change" in labels and any(label.startswith(("same feature", "another feature")) for label in labels)
    assert axis.get_xlim() == axis.get_ylim()  # old and new on one scale
