import re

import numba
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import bandit_tree_tools as btt
from bandit_tree_tools.exceptions import DataError, NodeError, ParameterError
from bandit_tree_tools.medoids._core import fit_medoids
from bandit_tree_tools.medoids._distances import resolve_metric


@pytest.fixture(scope="module")
def digits_tree():
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    model = DecisionTreeClassifier(max_leaf_nodes=8, random_state=0).fit(X, y)
    return model, X


def test_each_leaf_gets_pams_medoids_of_its_rows(digits_tree):
    model, X = digits_tree
    result = btt.leaf_medoids(model, X, n_medoids=3, metric="manhattan")
    leaves_of_rows = model.apply(X)
    assert sorted(result.medoids) == sorted(np.unique(leaves_of_rows).tolist())
    assert sorted(result.medoids) == np.flatnonzero(model.tree_.children_left == -1).tolist()
    for leaf, medoids in result.medoids.items():
        rows = np.flatnonzero(leaves_of_rows == leaf)
        assert result.n_samples[leaf] == rows.size == result.cluster_sizes[leaf].sum()
        expected = fit_medoids(
            np.ascontiguousarray(X[rows], dtype=float), min(3, rows.size), resolve_metric("manhattan"), algorithm="pam"
        )
        np.testing.assert_array_equal(medoids, rows[expected.medoids])
        distances = np.abs(X[rows][:, None, :] - X[medoids][None, :, :]).sum(axis=2)
        assert result.loss[leaf] == pytest.approx(distances.min(axis=1).sum())
        np.testing.assert_array_equal(result.prototypes[leaf], X[medoids])
    assert result.algorithm == "pam" and result.n_distance_calls > 0
    assert "LeafMedoids(tree=0, n_medoids=3, leaves=8" in repr(result)
    frame = result.to_frame()  # one row per leaf, as the attributes hold them
    assert frame["leaf"].tolist() == sorted(result.medoids) and set(frame["algorithm"]) == {"pam"}
    for row in frame.itertuples():
        assert row.medoids == result.medoids[row.leaf].tolist() and row.n_samples == result.n_samples[row.leaf]
        assert row.cluster_sizes == result.cluster_sizes[row.leaf].tolist() and row.loss == result.loss[row.leaf]
    page = result._repr_html_()  # Jupyter's view: the first line and the leaves' table
    assert page.startswith("<pre>LeafMedoids(tree=0") and page.count("</tr>") == 1 + len(frame)


def test_an_embedding_measures_the_distances_while_the_model_reads_x():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4)) * [1.0, 100.0, 1.0, 1.0]  # one feature in other units
    X[rng.random(X.shape) < 0.15] = np.nan  # LightGBM routes NaN; distances cannot use it
    y = (np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1]) > 0.3).astype(int)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=6, min_child_samples=5, verbose=-1).fit(X, y)
    with pytest.raises(DataError, match=r"X contains NaN .* pass finite rows for the distances as embedding="):
        btt.leaf_medoids(model, X)
    filled = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
    embedding = (filled - filled.mean(axis=0)) / filled.std(axis=0)
    result = btt.leaf_medoids(model, X, n_medoids=2, tree=1, embedding=embedding, progress=False)
    # the leaves are those LightGBM routes X to, NaN included
    ours = btt.from_model(model).apply(X)[:, 1]
    native = model.booster_.predict(X, pred_leaf=True)[:, 1]
    assert len(set(zip(ours, native))) == len(np.unique(native)) == len(np.unique(ours)) == len(result.leaves)
    for leaf in result.leaves:
        rows = np.flatnonzero(ours == leaf)
        expected = fit_medoids(embedding[rows], 2, resolve_metric("euclidean"), algorithm="pam")
        np.testing.assert_array_equal(result.medoids[leaf], rows[expected.medoids])
        np.testing.assert_array_equal(result.prototypes[leaf], X[result.medoids[leaf]])  # X's rows, NaN kept
    assert (
        result.embedding_fingerprint
        and not btt.leaf_medoids(model, filled, tree=1, progress=False).embedding_fingerprint
    )
    # a 2-column embedding (say, a projection) serves as well; a wrong one is refused
    assert btt.leaf_medoids(model, X, tree=1, embedding=embedding[:, :2], progress=False).leaves.size
    with pytest.raises(DataError, match="embedding has 599 rows and X 600; pass one row of embedding per row of X"):
        btt.leaf_medoids(model, X, embedding=embedding[1:])
    with pytest.raises(DataError, match="embedding has no columns"):
        btt.leaf_medoids(model, X, embedding=embedding[:, :0])
    with pytest.raises(DataError, match="embedding must hold numbers: could not convert string to float"):
        btt.leaf_medoids(model, X, embedding=pd.DataFrame({"colour": ["red"] * 600}))
    bad = embedding.copy()
    bad[0, 3] = np.inf
    with pytest.raises(DataError, match=r"embedding contains NaN or infinity \(1 value at row 0, column 3\)"):
        btt.leaf_medoids(model, X, embedding=bad)


def test_small_leaves_chosen_leaves_and_ensembles():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    model = DecisionTreeRegressor(min_samples_leaf=2, max_depth=4, random_state=0).fit(X, y)
    ensemble = btt.from_model(model)
    leaves = np.flatnonzero(model.tree_.children_left == -1)
    result = btt.leaf_medoids(ensemble, X, n_medoids=5, leaves=leaves[:3])
    assert sorted(result.medoids) == leaves[:3].tolist()
    for leaf in leaves[:3]:
        rows = np.flatnonzero(model.apply(X) == leaf)
        if rows.size <= 5:  # fewer rows than medoids: all of them
            np.testing.assert_array_equal(result.medoids[leaf], rows)
    # a leaf that no row of X reaches has no medoid
    empty = btt.leaf_medoids(model, X[:1], n_medoids=2)
    assert sum(len(m) for m in empty.medoids.values()) == 1


def test_bad_leaf_ids_and_inputs(digits_tree):
    model, X = digits_tree
    internal = int(np.flatnonzero(model.tree_.children_left != -1)[0])
    with pytest.raises(NodeError, match=f"leaf id {internal} of tree 0 is an internal node; the tree's 8 leaves"):
        btt.leaf_medoids(model, X, leaves=[internal])
    with pytest.raises(NodeError, match="leaf id 999 of tree 0 is not a node"):
        btt.leaf_medoids(model, X, leaves=[999])
    with pytest.raises(NodeError, match=r"tree index 1 does not exist; the ensemble has trees 0..0"):
        btt.leaf_medoids(model, X, tree=1)
    bad = X.copy()
    bad[3, 5] = np.nan
    with pytest.raises(DataError, match=r"NaN or infinity \(1 value at row 3, column 5\)"):
        btt.leaf_medoids(model, bad)
    with pytest.raises(DataError, match="X has no rows"):  # it returned every leaf without medoids
        btt.leaf_medoids(model, X[:0])
    with pytest.raises(DataError, match=r"overflow float64.*scale X first"):  # finite rows, infinite distances
        btt.leaf_medoids(model, X * 1e200)
    with pytest.raises(ParameterError, match="unknown metric"):
        btt.leaf_medoids(model, X, metric="hamming")
    with pytest.raises(ParameterError, match="precomputed"):
        btt.leaf_medoids(model, X, metric="precomputed")
    with pytest.raises(ParameterError, match="n_medoids"):
        btt.leaf_medoids(model, X, n_medoids=0)


@numba.njit
def l1(a, b):
    return np.abs(a - b).sum()


def test_parallel_and_user_metric_give_the_same_result(digits_tree):
    model, X = digits_tree
    serial = btt.leaf_medoids(model, X, metric="l1", n_jobs=1)
    threads = btt.leaf_medoids(model, X, metric=l1, n_jobs=2)
    assert serial.medoids.keys() == threads.medoids.keys()
    for leaf in serial.medoids:
        np.testing.assert_array_equal(serial.medoids[leaf], threads.medoids[leaf])


def test_a_progress_bar_counts_the_leaves_unless_turned_off(digits_tree, capsys):
    model, X = digits_tree
    quiet = btt.leaf_medoids(model, X, progress=False)
    assert capsys.readouterr().err == ""
    shown = btt.leaf_medoids(model, X, n_jobs=2)
    bar = capsys.readouterr().err
    assert re.search(r"leaf medoids: +0%.* 0/8 ", bar)  # one step per leaf of the digits tree's 8
    for leaf in quiet.medoids:
        np.testing.assert_array_equal(shown.medoids[leaf], quiet.medoids[leaf])


def test_dask_backend_gives_the_same_result(digits_tree):
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    model, X = digits_tree
    expected = btt.leaf_medoids(model, X, n_medoids=2)
    # in-process workers reached over TCP: tasks and results are serialised as
    # for remote workers, without new processes compiling numba again. Two
    # one-thread workers: with a single thread joblib runs the tasks locally.
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", processes=False, protocol="tcp", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with joblib.parallel_config(backend="dask"):
            result = btt.leaf_medoids(model, X, n_medoids=2, n_jobs=-1)
        assert cluster.scheduler.transition_counter > 0  # the leaves really went through the scheduler
    for leaf in expected.medoids:
        np.testing.assert_array_equal(result.medoids[leaf], expected.medoids[leaf])
        assert result.loss[leaf] == expected.loss[leaf]


def test_plot_images_and_profiles(digits_tree):
    pytest.importorskip("matplotlib")
    model, X = digits_tree
    result = btt.leaf_medoids(model, X, n_medoids=2, leaves=None)
    figure = result.plot(image_shape=(8, 8), max_leaves=3)
    assert len(figure.axes) == 6
    figure = result.plot(max_leaves=2)
    assert len(figure.axes) == 2
    assert len(result.plot(max_leaves=None).axes) == result.n_panels(max_leaves=None)  # every leaf with rows
    for bad in [0, -1, 2.5, True]:  # -1 dropped the smallest leaf, 2.5 raised a slice's TypeError
        with pytest.raises(
            ParameterError, match=r"max_leaves of LeafMedoids.plot must be None or an int in \[1, inf\]"
        ):
            result.plot(max_leaves=bad)
    # (-8, -8) and (8.5, 8) were taken, ("a", "b") raised int()'s ValueError
    for shape in [(7, 7), (-8, -8), (8.5, 8), ("a", "b"), (8, 8, 1), "ab", 64]:
        with pytest.raises(ParameterError, match=r"image_shape must be \(height, width\), two positive ints.* == 64"):
            result.plot(image_shape=shape)


def test_the_result_records_what_it_was_computed_with(digits_tree):
    from bandit_tree_tools.medoids._leaves import rows_fingerprint

    model, X = digits_tree
    result = btt.leaf_medoids(model, X, n_medoids=4, metric="manhattan")
    assert (result.n_medoids, result.tree, result.metric, result.p, result.n_rows) == (4, 0, "manhattan", 2.0, 600)
    assert (result.n_trees, result.tree_nodes) == (1, model.tree_.node_count)
    assert result.rows_fingerprint == rows_fingerprint(X.astype(float)) != rows_fingerprint(X[::-1].astype(float))
    result.check_matches(model, X, tree=0, n_medoids=4, metric="manhattan")  # nothing differs
    with pytest.raises(ParameterError, match="computed with n_medoids=4, not 3"):
        result.check_matches(model, X, n_medoids=3)
    with pytest.raises(ParameterError, match="metric='manhattan', not 'euclidean'"):
        result.check_matches(metric="euclidean")
    with pytest.raises(DataError, match="computed on 600 rows of X, not on these 10 rows"):
        result.check_matches(model, X[:10])
    assert sum(result.distance_calls.values()) == result.n_distance_calls
    assert set(result.distance_calls) == set(result.medoids)


def test_a_legacy_random_state_works_like_its_draw(digits_tree):
    model, X = digits_tree
    # RandomState gives one draw that seeds the run, as everywhere in the library
    legacy = btt.leaf_medoids(model, X, n_medoids=3, algorithm="fasterpam", random_state=np.random.RandomState(5))
    seed = int(np.random.RandomState(5).randint(2**31 - 1))
    same = btt.leaf_medoids(model, X, n_medoids=3, algorithm="fasterpam", random_state=seed)
    assert {leaf: m.tolist() for leaf, m in legacy.medoids.items()} == {
        leaf: m.tolist() for leaf, m in same.medoids.items()
    }
    generator = btt.leaf_medoids(model, X, n_medoids=3, random_state=np.random.default_rng(0))
    assert len(generator.medoids) == 8
    with pytest.raises(ParameterError, match="random_state of leaf_medoids must be"):
        btt.leaf_medoids(model, X, random_state=-1)
    with pytest.raises(ParameterError, match="random_state of leaf_medoids must be"):
        btt.leaf_medoids(model, X, random_state="0")


def test_bad_parameters_are_parameter_errors(digits_tree):
    model, X = digits_tree
    with pytest.raises(ParameterError, match="n_medoids of leaf_medoids must be an int in"):
        btt.leaf_medoids(model, X, n_medoids=2.5)
    with pytest.raises(ParameterError, match="algorithm of leaf_medoids must be one of"):
        btt.leaf_medoids(model, X, algorithm="clara")
    with pytest.raises(ParameterError, match="max_iter of leaf_medoids"):
        btt.leaf_medoids(model, X, max_iter=-1)


def test_the_leaves_are_those_of_the_tree_asked_for():
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    forest = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    result = btt.leaf_medoids(forest, X, n_medoids=2, tree=1)
    leaves = forest.estimators_[1].apply(X.astype(np.float32))
    assert {leaf: n for leaf, n in result.n_samples.items() if n} == {
        int(leaf): int((leaves == leaf).sum()) for leaf in np.unique(leaves)
    }
    assert result.tree_nodes == forest.estimators_[1].tree_.node_count and result.n_trees == 3
