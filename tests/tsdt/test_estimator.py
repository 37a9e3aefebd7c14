"""TSDTClassifier against scikit-learn's conventions, and the default search on streams."""

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from bandit_tree_tools.exceptions import DataError, NotFittedError
from bandit_tree_tools.tsdt import TSDTClassifier

from .conftest import load_monk1, or_of_equal


@pytest.mark.parametrize("variant", ["optimistic", "fast"])
def test_passes_scikit_learn_estimator_checks(variant):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(TSDTClassifier(max_iter=50, variant=variant, random_state=0))


def test_tags_declare_what_a_categorical_estimator_refuses():
    tags = TSDTClassifier().__sklearn_tags__()
    assert tags.input_tags.categorical and tags.input_tags.positive_only
    assert not tags.input_tags.allow_nan and not tags.input_tags.sparse


def test_not_fitted_error_is_also_scikit_learns():
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError
    from sklearn.utils.validation import check_is_fitted

    model = TSDTClassifier()
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(model)
    with pytest.raises(NotFittedError, match="fit"):
        model.predict(np.zeros((1, 3)))
    X, y = or_of_equal(n_rows=60)
    check_is_fitted(model.set_params(max_iter=10).fit(X, y))


def test_sparse_input_is_refused_with_a_data_error():
    from scipy import sparse

    X, y = or_of_equal(n_rows=60)
    with pytest.raises(DataError, match="sparse"):
        TSDTClassifier(max_iter=10).fit(sparse.csr_matrix(X), y)


def test_partial_fit_on_a_shuffled_stream_reaches_the_monk1_optimum():
    _, _, X, y = load_monk1()  # the 432-row grid: optimum 27 leaves, objective 0.900 at lambda 0.01
    rng = np.random.default_rng(0)
    stream = np.concatenate([rng.permutation(len(y)) for _ in range(700)])
    models = {
        variant: TSDTClassifier(lambda_=0.01, variant=variant, random_state=0) for variant in ("optimistic", "fast")
    }
    for start in range(0, len(stream), 10_000):
        rows = stream[start : start + 10_000]
        for model in models.values():
            model.partial_fit(X[rows], y[rows], classes=[0, 1], n_categories=[3, 3, 2, 3, 4, 2])
    default, paper = models["optimistic"], models["fast"]
    assert default.n_leaves_ == 27 and default.score(X, y) == 1.0
    assert default.score(X, y) - 0.01 * default.n_splits_ == pytest.approx(0.9)
    assert paper.score(X, y) - 0.01 * paper.n_splits_ == pytest.approx(0.87)  # the paper's collapse


def test_a_new_category_in_a_later_batch_is_refused_and_leaves_the_model_as_it_was():
    X, y = or_of_equal(n_rows=200, seed=4)
    model = TSDTClassifier(batch_size=20, random_state=0).partial_fit(X[:100], y[:100])
    before = (model.n_iter_, model._state.root_counts.copy(), model.tree_.feature.copy(), len(model.trace_.mean))
    later = X[100:].copy()
    later[7, 2] = 3  # feature 2 had categories 0..2
    with pytest.raises(DataError, match="feature 2 has category 3 .* n_categories="):
        model.partial_fit(later, y[100:])
    assert model.n_iter_ == before[0] and len(model.trace_.mean) == before[3]
    np.testing.assert_array_equal(model._state.root_counts, before[1])
    np.testing.assert_array_equal(model.tree_.feature, before[2])
    model.partial_fit(X[100:], y[100:])  # the stream goes on with known categories
    assert model.n_iter_ == before[0] + 5


def test_declared_categories_let_a_later_batch_bring_a_new_one():
    X, y = or_of_equal(n_rows=200, seed=4)
    model = TSDTClassifier(batch_size=20, random_state=0)
    model.partial_fit(X[:100], y[:100], n_categories=[3, 3, 4, 3])
    later = X[100:].copy()
    later[:, 2] = np.where(later[:, 2] == 2, 3, later[:, 2])
    model.partial_fit(later, y[100:])
    assert model.n_iter_ == 10
    assert model.predict(later).shape == (100,)


@pytest.mark.parametrize("optimism", [0, -1.0, float("inf"), "3"])
def test_bad_optimism_is_refused(optimism):
    X, y = or_of_equal(n_rows=30)
    with pytest.raises(ValueError, match="optimism"):
        TSDTClassifier(optimism=optimism).fit(X, y)


def test_score_is_scikit_learns_accuracy_with_its_checks():
    # score compared predict(X) with y element by element: a y of labels as text scored 0.0, a
    # missing label counted as a miss, a y of another length raised numpy's broadcasting error
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(300, 4))
    y = (X[:, 0] == X[:, 1]).astype(int)
    model = TSDTClassifier(lambda_=0.01, max_iter=50, random_state=0).fit(X, y)
    hits = model.predict(X) == y
    assert model.score(X, y) == pytest.approx(hits.mean())
    weights = rng.random(300)
    assert model.score(X, y, sample_weight=weights) == pytest.approx(np.average(hits, weights=weights))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.score(X, y[:10])
    with pytest.raises(ValueError, match="Mix of label input types"):
        model.score(X, y.astype(str))
    with pytest.raises(ValueError, match="contains NaN"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scikit-learn's cast of the NaN, before its error
        model.score(X, np.where(np.arange(300) == 5, np.nan, y))


def test_log_probabilities_are_the_logs_of_the_fractions():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(300, 3))
    y = np.where(X[:, 0] == 0, 0, 1 + (X[:, 1] == 2))  # a pure leaf: zero fractions of the other classes
    model = TSDTClassifier(lambda_=0.01, max_iter=50, random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    assert (proba == 0).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log(0) is -inf, without numpy's divide warning
        log_proba = model.predict_log_proba(X)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(log_proba, np.log(proba))


def _gini(labels):
    if labels.size == 0:
        return 0.0
    fractions = np.bincount(labels) / labels.size
    return 1.0 - float(np.square(fractions).sum())


def test_decision_path_walks_the_codes_from_the_root_to_where_each_row_stops():
    X, y = or_of_equal(n_rows=300, seed=1)
    model = TSDTClassifier(lambda_=0.005, max_iter=300, random_state=0).fit(X, y)
    tree = model.tree_
    probes = np.vstack([X[:50], [[5, 0, 0, 1], [np.nan, 1, 1, 0], [0, -1, 2, 2]]]).astype(np.float64)
    path = model.decision_path(probes)
    assert path.shape == (probes.shape[0], tree.n_nodes) and path.dtype == np.int64
    for row, codes in enumerate(probes):
        walked, node = [0], 0  # the multiway tree walked by hand: a category without a child stops the row
        while tree.feature[node] >= 0:
            code = codes[tree.feature[node]]
            if not 0 <= code < tree.n_categories[tree.feature[node]]:
                break
            node = int(tree.first_child[node] + code)
            walked.append(node)
        assert path[row].indices.tolist() == sorted(walked)
    np.testing.assert_array_equal(model.apply(probes), [max(path[row].indices) for row in range(probes.shape[0])])
    assert model.get_depth() == tree.max_depth == max(path[row].nnz for row in range(50)) - 1 > 0
    assert model.get_n_leaves() == model.n_leaves_


def test_feature_importances_are_the_gini_decrease_of_the_training_rows_at_each_split():
    X, y = or_of_equal(n_rows=300, seed=2)
    X = np.column_stack([X, np.arange(300) % 2])  # one more attribute of no use
    model = TSDTClassifier(lambda_=0.005, max_iter=300, random_state=0).fit(X, y)
    tree, path = model.tree_, model.decision_path(X).toarray().astype(bool)
    expected = np.zeros(X.shape[1])
    for node in np.flatnonzero(tree.feature >= 0):
        children = tree.first_child[node] + np.arange(tree.n_categories[tree.feature[node]])
        decrease = path[:, node].sum() * _gini(y[path[:, node]])
        decrease -= sum(path[:, child].sum() * _gini(y[path[:, child]]) for child in children)
        expected[tree.feature[node]] += decrease
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(), atol=1e-12)
    assert model.feature_importances_.sum() == pytest.approx(1.0) and expected[:3].min() > 0 == expected[3:].max()
    stump = TSDTClassifier(lambda_=1.0, max_iter=20, random_state=0).fit(X, y)  # no split pays at this penalty
    assert stump.get_depth() == 0 and stump.get_n_leaves() == 1
    np.testing.assert_array_equal(stump.feature_importances_, np.zeros(X.shape[1]))
    with pytest.raises(NotFittedError, match="fit"):
        TSDTClassifier().get_depth()
