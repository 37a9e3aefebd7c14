import math
import warnings

import numba
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, ParameterError
from bandit_tree_tools.medoids import pairwise_distances
from tests.oracles import medoids as oracle


def blobs(seed=0, n=120, d=3):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0] * d, [6.0] * d, [-6.0] + [6.0] * (d - 1)])
    return centers[rng.integers(3, size=n)] + rng.normal(size=(n, d))


def test_passes_scikit_learns_estimator_checks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", message="Skipping check check_array_api_input")  # no array API here
        check_estimator(btt.KMedoids(n_clusters=3, random_state=0))


@pytest.mark.parametrize("algorithm", ["pam", "banditpam", "fasterpam", "auto"])
def test_fitted_attributes_are_consistent(algorithm):
    X = blobs()
    model = btt.KMedoids(3, algorithm=algorithm, random_state=0).fit(X)
    D = oracle.distance_matrix(X, oracle.euclidean)
    assert model.medoid_indices_.dtype == np.int64 and model.medoid_indices_.shape == (3,)
    np.testing.assert_array_equal(model.cluster_centers_, X[model.medoid_indices_])
    np.testing.assert_array_equal(model.labels_, np.argmin(D[:, model.medoid_indices_], axis=1))
    assert model.inertia_ == pytest.approx(oracle.loss(D, model.medoid_indices_))
    assert model.inertia_ == pytest.approx(oracle.loss(D, oracle.pam(D, 3)), rel=1e-9)
    assert model.n_distance_calls_ > 0
    # n_iter_ swaps (passes for FasterPAM) are enough: capped there, the fit converges to the same medoids
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        again = btt.KMedoids(3, algorithm=algorithm, random_state=0, max_iter=max(model.n_iter_, 1)).fit(X)
    np.testing.assert_array_equal(again.medoid_indices_, model.medoid_indices_)
    assert again.n_iter_ == model.n_iter_
    assert model.algorithm_ == ("pam" if algorithm == "auto" else algorithm)
    Y = blobs(1, 20)
    np.testing.assert_allclose(
        model.transform(Y),
        oracle.distance_matrix(np.vstack([Y, X]), oracle.euclidean)[:20, 20 + model.medoid_indices_],
        rtol=1e-12,
    )
    np.testing.assert_array_equal(model.predict(Y), np.argmin(model.transform(Y), axis=1))
    np.testing.assert_array_equal(model.fit_predict(X), model.labels_)


def test_precomputed_matches_rows():
    X = blobs(2, 80)
    D = pairwise_distances(X, metric="manhattan")
    rows = btt.KMedoids(3, metric="manhattan", algorithm="pam").fit(X)
    matrix = btt.KMedoids(3, metric="precomputed", algorithm="pam").fit(D)
    np.testing.assert_array_equal(matrix.medoid_indices_, rows.medoid_indices_)
    assert matrix.cluster_centers_ is None
    np.testing.assert_array_equal(matrix.predict(D[:10]), rows.predict(X[:10]))
    assert matrix.__sklearn_tags__().input_tags.pairwise


@numba.njit
def l1_distance(a, b):
    return np.abs(a - b).sum()


def test_user_metric_equals_builtin():
    X = blobs(3, 60)
    user = btt.KMedoids(3, metric=l1_distance, algorithm="pam").fit(X)
    builtin = btt.KMedoids(3, metric="l1", algorithm="pam").fit(X)
    np.testing.assert_array_equal(user.medoid_indices_, builtin.medoid_indices_)
    np.testing.assert_allclose(user.transform(X[:5]), builtin.transform(X[:5]))


def test_pandas_input_keeps_feature_names():
    X = pd.DataFrame(blobs(4, 50), columns=["a", "b", "c"])
    model = btt.KMedoids(2, random_state=0).fit(X)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    assert model.predict(X).shape == (50,)


def test_pandas_output_names_the_distances_to_each_medoid():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 3)), columns=["a", "b", "c"])
    model = btt.KMedoids(n_clusters=3, random_state=0).set_output(transform="pandas").fit(X)
    distances = model.transform(X)
    assert list(distances.columns) == ["kmedoids0", "kmedoids1", "kmedoids2"] == list(model.get_feature_names_out())
    np.testing.assert_array_equal(model.predict(X), np.argmin(distances.to_numpy(), axis=1))
    # a pipeline that ends in KMedoids takes set_output too (it raised: KMedoids had no set_output)
    pipeline = make_pipeline(StandardScaler(), btt.KMedoids(n_clusters=2, random_state=0)).set_output(
        transform="pandas"
    )
    assert list(pipeline.fit(X).transform(X).columns) == ["kmedoids0", "kmedoids1"]


def test_n_clusters_equal_to_n_makes_every_row_a_medoid():
    X = blobs(5, 6)
    model = btt.KMedoids(6).fit(X)
    np.testing.assert_array_equal(np.sort(model.medoid_indices_), np.arange(6))
    assert model.inertia_ == 0.0 and model.n_distance_calls_ == 0


def test_max_iter_warns():
    X = blobs(6, 200)
    with pytest.warns(ConvergenceWarning, match="max_iter=0"):
        btt.KMedoids(3, algorithm="pam", max_iter=0).fit(np.vstack([X[100:], X[:100]]) * [1, 2, 3])


def test_bad_input_is_explained():
    X = blobs(7, 30)
    # the package's DataError (a ValueError, as scikit-learn raises), which says where and what to do
    with pytest.raises(DataError, match=r"NaN or infinity \(1 value at row 1, column 1\); .* impute or drop"):
        btt.KMedoids(2).fit(np.where(np.arange(90).reshape(30, 3) == 4, np.nan, X))
    with pytest.raises(DataError, match=r"NaN or infinity \(2 values, the first at row 1, column 1\)"):
        btt.KMedoids(2).fit(np.where(np.isin(np.arange(90).reshape(30, 3), [4, 5]), np.inf, X))
    with pytest.raises(DataError, match=r"NaN or infinity \(1 value at row 0, column 2\)"):
        btt.KMedoids(2).fit(X).predict(np.where(np.arange(90).reshape(30, 3) == 2, np.nan, X))
    with pytest.raises(DataError, match=r"overflow float64.*scale X first"):  # finite, but their squares are not
        btt.KMedoids(2).fit(X * 1e200)
    # a category column: scikit-learn's conversion raised a bare "could not convert string to float"
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(colour=pd.Categorical(["red", "blue"] * 15))
    with pytest.raises(DataError, match=r"non-numeric columns \['colour'\]; .*metric='precomputed'"):
        btt.KMedoids(2).fit(frame)
    with pytest.raises(DataError, match=r"non-numeric columns \['colour'\]"):
        btt.KMedoids(2).fit(frame.drop(columns="colour")).predict(frame.assign(colour=frame["colour"].astype(str)))
    with pytest.raises(DataError, match="n_clusters=31 is larger than the number of samples, n_samples=30"):
        btt.KMedoids(31).fit(X)
    with pytest.raises(ParameterError, match=r"n_clusters of KMedoids must be an int in \[1, inf\], got 0"):
        btt.KMedoids(0).fit(X)
    with pytest.raises(ParameterError, match="unknown metric 'jaccard'.*known metrics"):
        btt.KMedoids(2, metric="jaccard").fit(X)
    with pytest.raises(ParameterError, match="algorithm of KMedoids must be one of .*'banditpam'.*got 'clara'"):
        btt.KMedoids(2, algorithm="clara").fit(X)
    with pytest.raises(DataError, match="square"):
        btt.KMedoids(2, metric="precomputed").fit(X)
    asymmetric = pairwise_distances(X)
    asymmetric[0, 1] += 1.0
    with pytest.raises(DataError, match="not symmetric"):
        btt.KMedoids(2, metric="precomputed").fit(asymmetric)
    with pytest.raises(ParameterError, match="plain Python callable"):
        btt.KMedoids(2, metric=lambda a, b: 0.0).fit(X)
    with pytest.raises(ParameterError, match="batch_size"):
        btt.KMedoids(2, batch_size=0).fit(X)
    with pytest.raises(ParameterError, match=r"build_confidence of KMedoids must be a float in \[0, inf\)"):
        btt.KMedoids(2, build_confidence=math.nan).fit(X)
    with pytest.raises(ParameterError, match=r"swap_confidence of KMedoids must be a float in \[0, inf\)"):
        btt.KMedoids(2, swap_confidence=-1).fit(X)


def test_n_jobs_does_not_change_the_answer():
    X = blobs(8, 300)
    one = btt.KMedoids(3, algorithm="banditpam", random_state=0, n_jobs=1).fit(X)
    two = btt.KMedoids(3, algorithm="banditpam", random_state=0, n_jobs=-1).fit(X)
    np.testing.assert_array_equal(one.medoid_indices_, two.medoid_indices_)
    assert one.n_distance_calls_ == two.n_distance_calls_


def test_auto_picks_exact_pam_for_small_data():
    model = btt.KMedoids(3, random_state=0).fit(blobs(9, 200))
    assert model.algorithm_ == "pam"
