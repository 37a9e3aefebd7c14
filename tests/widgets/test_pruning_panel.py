"""Python state of PruningPanel and of the live-run helpers: background
thread, Stop, redraw rate, charts, export, errors and the static fallback."""

import time

import numpy as np
import pytest

pytest.importorskip("anywidget")

from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import bandit_tree_tools as btt  # noqa: E402
from bandit_tree_tools.widgets import PruningPanel  # noqa: E402
from bandit_tree_tools.widgets._live import RoundLog, binned_series  # noqa: E402
from bandit_tree_tools.widgets._payload import decode_column  # noqa: E402


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.35, random_state=0)
    model = DecisionTreeClassifier(max_depth=7, min_samples_leaf=3, random_state=0).fit(X_train, y_train)
    return model, X_val, y_val


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


# ----------------------------------------------------------------- live helpers
def test_round_log_is_bandit_prunes_callback_and_stops_it(data):
    model, X_val, y_val = data
    log = RoundLog()
    plain = btt.bandit_prune(model, X_val, y_val, n_rounds=200, min_depth=3, random_state=3, progress=False)
    logged = btt.bandit_prune(
        model, X_val, y_val, n_rounds=200, min_depth=3, random_state=3, progress=False, callback=log
    )
    assert logged.history.equals(plain.history)  # watching changes nothing
    snapshot = log.snapshot()
    np.testing.assert_allclose(snapshot["rewards"], plain.history["reward"])
    by_arm = plain.arms.sort_values("arm")
    np.testing.assert_array_equal(snapshot["counts"], by_arm["pulls"])
    np.testing.assert_allclose(snapshot["means"], by_arm["mean_reward"])
    log.stop_requested.set()  # Stop before the first round: one round is played, then the loop ends
    stopped = btt.bandit_prune(
        model, X_val, y_val, n_rounds=200, min_depth=3, random_state=3, progress=False, callback=log
    )
    assert len(stopped.history) == 1 and stopped.params["stopped"] and log.n_rounds == 201


def test_binned_series_against_a_loop():
    values = np.random.default_rng(0).random(1003)
    x, binned, running = binned_series(values, max_points=2000)
    np.testing.assert_array_equal(binned, values)
    np.testing.assert_allclose(running[-1], values.mean())
    x, binned, running = binned_series(values, max_points=10)
    assert len(binned) == 10
    edges = np.linspace(0, 1003, 11).astype(int)
    for k in range(10):
        chunk = values[edges[k] : edges[k + 1]]
        assert binned[k] == pytest.approx(chunk.mean())
        assert running[k] == pytest.approx(values[: edges[k + 1]].mean())
    assert [len(part) for part in binned_series(np.zeros(0))] == [0, 0, 0]


# ------------------------------------------------------------------- the panel
def test_a_run_equals_bandit_prune_and_fills_the_charts(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=300, min_depth=3, random_state=7)
    assert panel.start()
    result = panel.wait(60)
    expected = btt.bandit_prune(model, X_val, y_val, n_rounds=300, min_depth=3, random_state=7, progress=False)
    np.testing.assert_array_equal(result.history["arm"], expected.history["arm"])
    np.testing.assert_allclose(result.history["reward"], expected.history["reward"])

    def pairs(res):
        return sorted((tree, int(node)) for tree, nodes in res.pruned_nodes.items() for node in nodes)

    assert pairs(result) == pairs(expected) and result.n_pruned > 0  # the same nodes, not only the same trees
    assert panel.chart.state == "done"
    assert panel.chart.rounds["n_done"] == 300
    by_arm = result.arms.sort_values("arm")  # the loop's arm numbers, as while live
    np.testing.assert_allclose(decode_column(panel.chart.arms, "mean", np.float32), by_arm["mean_reward"], rtol=1e-6)
    np.testing.assert_array_equal(decode_column(panel.chart.arms, "pruned", np.uint8), by_arm["pruned"])
    assert panel.chart.path["n_pruned"] == result.path["n_pruned"].tolist()
    assert panel.chart.path["n_pruned"][panel.chart.path["chosen"]] == result.n_pruned
    assert panel.progress.value == 300
    assert "Done: 300 rounds" in panel.status.value
    assert "<table" in panel.arm_table.value and "before" in panel.metrics.value
    # the tree view marks the pruned nodes
    marks = decode_column(panel.tree_view.canvas.tree, "marks", np.uint8)
    assert (marks == 1).sum() == result.n_pruned
    assert not panel.start_button.disabled and not panel.export_button.disabled


def test_stop_ends_promptly_and_finishes_with_the_rounds_played(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=10**7, min_depth=3)
    updates = []
    panel.chart.observe(lambda change: updates.append(time.monotonic()), names="rounds")
    started = time.monotonic()
    panel.start()
    assert not panel.start()  # a second Start while running is refused
    assert "Already running" in panel.status.value
    wait_for(lambda: panel.round_log.n_rounds > 100)
    assert panel.stop()
    assert not panel.stop()  # twice: nothing more happens
    result = panel.wait(60)
    elapsed = time.monotonic() - started
    played = panel.round_log.n_rounds
    assert played < 10**6  # stopped long before the end
    assert len(result.history) == played and result.params["stopped"]
    np.testing.assert_allclose(result.history["reward"], panel.round_log.rewards)
    # finished with exactly the rounds played: a run of that many rounds prunes the same nodes
    short = btt.bandit_prune(model, X_val, y_val, n_rounds=played, min_depth=3, random_state=0, progress=False)
    assert short.history.equals(result.history)
    assert {t: n.tolist() for t, n in short.pruned_nodes.items()} == {
        t: n.tolist() for t, n in result.pruned_nodes.items()
    }
    assert panel.chart.state == "stopped"
    assert f"Stopped after {played} rounds" in panel.status.value
    assert not panel.stop()  # Stop again once the run has ended: the summary stays
    assert f"Stopped after {played} rounds" in panel.status.value
    # at most ~10 redraws a second (plus the last ones)
    assert len(updates) <= 10 * elapsed + 3


def test_stop_of_a_sequential_run_gives_a_result(data):
    # the replay ("same seed, same rounds") could not finish this strategy: the panel returned nothing
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=10**6, min_depth=2, strategy="sequential")
    panel.start()
    wait_for(lambda: panel.round_log.n_rounds > 50)
    panel.stop()
    result = panel.wait(60)
    assert result is not None and result.params["stopped"] and result.n_pruned in (0, 1)
    assert len(result.history) == panel.round_log.n_rounds
    assert panel.chart.state == "stopped" and "Stopped after" in panel.status.value


def test_a_run_leaves_the_process_warning_state_alone_and_shows_its_warnings(data):
    import warnings

    from sklearn.ensemble import GradientBoostingClassifier

    model, X_val, y_val = data
    filters, show = warnings.filters, warnings.showwarning
    panel = PruningPanel(model, X_val, y_val, n_rounds=10**6, min_depth=3)
    panel.start()
    wait_for(lambda: panel.round_log.n_rounds > 20)
    seen = []
    for _ in range(50):  # the main thread's warning state while the run goes on
        seen.append(warnings.filters is filters and warnings.showwarning is show)
        time.sleep(0.002)
    assert panel.running
    panel.stop()
    panel.wait(60)
    assert all(seen) and warnings.filters is filters
    # log-loss boosting stores no value for internal nodes: no arm, and the status says why
    boosted = GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X_val, y_val)
    panel = PruningPanel(boosted, X_val, y_val, n_rounds=100, min_depth=1, candidates="internal")
    with pytest.warns(UserWarning) as told:  # scripts are told too
        panel.start()
        panel.wait(60)
    assert [str(w.message) for w in told] == list(panel.result.params["warnings"])
    assert panel.result.params["warnings"][1].endswith("Lower min_depth")  # already candidates='internal'
    assert "does not store the value" in panel.status.value and "no arm to pull" in panel.status.value
    assert len(panel.result.params["warnings"]) == 2 and not panel.error


def test_a_bug_inside_a_run_is_shown_with_its_traceback_not_as_a_message(data, monkeypatch):
    import bandit_tree_tools.pruning

    model, X_val, y_val = data
    # the panel's own callback cannot be replaced: refused at construction
    with pytest.raises(btt.ParameterError, match="sets 'callback' itself"):
        PruningPanel(model, X_val, y_val, callback=print)

    def broken(*args, **kwargs):  # a programming error, not bad input
        raise TypeError("a bug")

    panel = PruningPanel(model, X_val, y_val, n_rounds=20, min_depth=3)
    monkeypatch.setattr(bandit_tree_tools.pruning, "bandit_prune", broken)
    panel.start()
    assert panel.wait(60) is None
    assert isinstance(panel.exception, TypeError)
    assert panel.error.startswith("unexpected error, please report it: TypeError")
    assert "Traceback (most recent call last)" in panel.error_box.traceback
    assert "<details" in panel.error_box.value and "traceback" in panel.error_box.value
    monkeypatch.undo()
    # the project's own errors stay one-line messages
    panel = PruningPanel(model, X_val, y_val, n_rounds=10, eval_size=10_000)
    panel.start()
    panel.wait(60)
    assert panel.error.startswith("DataError: eval_size=10000") and panel.error_box.traceback == ""
    assert panel.exception is None


def test_only_the_projects_errors_are_user_messages():
    from bandit_tree_tools.exceptions import BanditTreeToolsError
    from bandit_tree_tools.widgets._common import USER_ERRORS

    assert USER_ERRORS == (BanditTreeToolsError,)
    for bug in (TypeError, KeyError, IndexError, ValueError):
        assert not issubclass(bug, USER_ERRORS)


def test_stop_before_start_and_after_the_end(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=50, min_depth=3)
    assert not panel.stop()
    assert "Nothing to stop" in panel.status.value
    panel.start()
    panel.wait(60)
    assert not panel.stop()
    assert "already finished" in panel.status.value


def test_export_writes_a_native_model(data, tmp_path):
    import joblib

    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=200, min_depth=3)
    with pytest.raises(ValueError, match="nothing to export yet"):
        panel.export()
    panel.start()
    result = panel.wait(60)
    panel.export_path.value = str(tmp_path / "pruned.joblib")
    panel._export_clicked()
    assert "written to" in panel.export_message.value
    native = joblib.load(tmp_path / "pruned.joblib")
    np.testing.assert_array_equal(native.predict(X_val), result.ensemble.predict(X_val))
    assert native.tree_.node_count == result.ensemble.trees[0].n_nodes
    panel.export_path.value = str(tmp_path / "missing" / "folder" / "x.joblib")
    panel._export_clicked()
    assert "Error" in panel.export_message.value  # shown, not raised


def test_export_without_a_name_writes_the_default_file_and_offers_a_download(data, tmp_path, monkeypatch):
    import base64
    import re

    import joblib

    model, X_val, y_val = data
    monkeypatch.chdir(tmp_path)
    panel = PruningPanel(model, X_val, y_val, n_rounds=200, min_depth=3)
    panel.start()
    panel.wait(60)
    panel._export_clicked()
    target = tmp_path / "pruned_model.joblib"
    assert target.is_file()
    message = panel.export_message.value
    assert str(target.resolve()) in message  # the absolute path
    encoded = re.search(r'download="pruned_model.joblib" href="data:application/octet-stream;base64,([^"]+)"', message)
    assert base64.b64decode(encoded.group(1)) == target.read_bytes()
    assert joblib.load(target).tree_.node_count == panel.result.ensemble.trees[0].n_nodes
    # the button never replaces a file: the default name is numbered past it, a given name refused
    panel._export_clicked()
    assert (tmp_path / "pruned_model_2.joblib").is_file() and "pruned_model_2.joblib" in panel.export_message.value
    before = target.read_bytes()
    panel.export_path.value = str(target)
    panel._export_clicked()
    assert "exists: the Export button does not replace files" in panel.export_message.value
    assert target.read_bytes() == before and not (tmp_path / "pruned_model_3.joblib").exists()


def test_arms_keep_their_numbers_and_too_few_rounds_are_flagged(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=30, min_depth=0, candidates="internal")
    panel.start()
    result = panel.wait(60)
    n_arms = len(result.arms)
    assert 30 < 5 * n_arms
    assert f"30 rounds for {n_arms} arms" in panel.status.value
    # the final arm table starts with the arm numbers the live table used
    first = result.arms.sort_values("rank").iloc[0]
    assert f'<td style="text-align:right;padding:2px 8px">{int(first.arm)}</td>' in panel.arm_table.value
    means = decode_column(panel.chart.arms, "mean", np.float32)
    np.testing.assert_allclose(means, result.arms.sort_values("arm")["mean_reward"].to_numpy(), rtol=1e-6)
    enough = PruningPanel(model, X_val, y_val, n_rounds=50 * n_arms, min_depth=0, candidates="internal")
    assert enough._few_rounds_note(n_arms) == ""


def test_bernoulli_rewards_are_drawn_as_binned_means(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val)
    rewards = np.random.default_rng(0).integers(0, 2, size=500).astype(float)
    panel.chart.show_rounds(rewards, 500, "bernoulli")
    binned = decode_column(panel.chart.rounds, "reward", np.float32)
    assert binned.size == 50  # bins of 10 rounds
    np.testing.assert_allclose(binned, rewards.reshape(50, 10).mean(axis=1), rtol=1e-6)  # means, not 0/1 dots
    panel.chart.show_rounds(rewards, 500, "gaussian")
    assert decode_column(panel.chart.rounds, "reward", np.float32).size == 500


def test_overview_bars_follow_the_pruned_forest(data):
    from sklearn.ensemble import RandomForestClassifier

    _, X_val, y_val = data
    forest = RandomForestClassifier(n_estimators=4, max_depth=8, random_state=0).fit(X_val[:90], y_val[:90])
    view = btt.TreeView(forest)
    before = list(view.canvas.overview["values"])
    pruned = btt.bandit_prune(forest, X_val[90:], y_val[90:], n_rounds=400, min_depth=1, progress=False, random_state=0)
    assert pruned.n_pruned > 0
    view.set_after(pruned.ensemble)
    assert view.canvas.overview["values"] == [tree.n_leaves for tree in pruned.ensemble.trees]
    assert view.canvas.overview["values"] != before and "after the edit" in view.canvas.overview["metric"]


def test_bad_input_is_shown_not_raised(data):
    model, X_val, y_val = data
    panel = PruningPanel(object(), X_val, y_val)
    assert panel.error.startswith("UnsupportedModelError")
    assert panel.start_button.disabled and not panel.start()
    with pytest.raises(btt.ParameterError, match=r"timeout of PruningPanel.wait must be None or a finite float"):
        panel.wait("a")  # taken before: no thread to pass it to
    panel = PruningPanel(model, X_val.to_numpy()[:, :5], y_val)
    assert "DataError: X_val has 5 features, but the model was trained on 30" in panel.error
    assert panel.start_button.disabled
    panel = PruningPanel(model, X_val, y_val[:10])
    assert "y_val has 10 rows, but X_val has" in panel.error and panel.start_button.disabled
    # btt.prune's training rows too, and their pairing
    panel = PruningPanel(model, X_val, y_val, method="prune", X_train=X_val.to_numpy()[:, :5], y_train=y_val)
    assert "DataError: X_train has 5 features, but the model was trained on 30" in panel.error
    assert panel.start_button.disabled
    with pytest.raises(btt.ParameterError, match="pass X_train and y_train together"):
        PruningPanel(model, X_val, y_val, method="prune", X_train=X_val)
    # the labels are checked as Start's method checks them, before Start
    panel = PruningPanel(model, X_val, np.where(np.asarray(y_val) == 1, "yes", "no"))
    assert "y_val contains labels the model never saw: 'no', 'yes'" in panel.error
    assert panel.start_button.disabled
    # an error raised inside the run: eval_size larger than the validation set
    panel = PruningPanel(model, X_val, y_val, n_rounds=10, eval_size=10_000)
    panel.start()
    assert panel.wait(60) is None
    assert "eval_size=10000" in panel.error and panel.chart.state == "error"
    assert not panel.start_button.disabled  # the user can fix the setting and retry


def test_static_fallback_before_and_after_a_run(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=100, min_depth=3)
    html = panel._repr_mimebundle_()["text/html"]
    assert "Ready" in html and "<script" not in html.lower()
    panel.start()
    panel.wait(60)
    html = panel._repr_mimebundle_()["text/html"]
    assert "<svg" in html and "Validation metrics" in html and "<script" not in html.lower()
    assert "finished" in repr(panel)


# ------------------------------------------------------ the path of btt.prune
def test_compress_method_draws_the_path_and_the_slider_picks_along_it(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, method="prune", tolerance=0.03, random_state=0)
    assert panel.chart.mode == "path" and panel.tolerance_slider.disabled
    with pytest.raises(btt.NotFittedError, match="nothing to choose from yet"):
        panel.choose(0.01)
    panel.start()
    result = panel.wait(300)
    expected = btt.prune(model, X_val, y_val, tolerance=0.03, random_state=0, progress=False)
    assert result.path["leaves"].tolist() == expected.path["leaves"].tolist()
    assert result.chosen == expected.chosen
    # one point per visited model; the chosen one marked; the tolerance's floor drawn
    assert panel.chart.path["n_pruned"] == result.path["leaves"].tolist()
    assert panel.chart.path["chosen"] == result.chosen
    assert panel.chart.path["floor"] == pytest.approx(result.params["baseline"] - 0.03)
    assert not panel.tolerance_slider.disabled and panel.tolerance_slider.value == pytest.approx(0.03)
    assert f"{int(result.path['leaves'].iat[result.chosen])} leaves" in panel.status.value
    assert "Its walk: ranked on X_val, measured by walks on its halves, leaf values kept" in panel.status.value
    sure = result.validation_change.iloc[0]  # how sure the choice is
    assert f"standard error {sure['standard_error']:.4f}" in panel.status.value
    assert f"at worst {sure['worst_plausible']:+.4f} against {sure['allowed']:+.4f} allowed" in panel.status.value
    # the slider: another point of the same path, as PruneResult.choose gives it
    panel.tolerance_slider.value = 0.0
    assert panel.result.chosen == expected.choose(0.0).chosen
    assert panel.tree_view.after.n_leaves == panel.result.ensemble.n_leaves
    assert "Tolerance 0:" in panel.status.value
    # prune's note when a tolerance keeps the whole model, as the result carries it
    assert ("Note: prune kept the unpruned model" in panel.status.value) == (panel.result.chosen == 0)
    assert list(panel.result.params["warnings"]) == list(expected.choose(0.0).params["warnings"])
    # the margin slider: the same path by another margin, at the slider's tolerance
    assert not panel.margin_slider.disabled and panel.margin_slider.value == 2.0
    panel.tolerance_slider.value = 0.03
    panel.margin_slider.value = 0.0
    plain = expected.choose(0.03, margin=0.0)
    assert panel.result.chosen == plain.chosen and panel.result.params["margin"] == 0.0
    assert panel.result.ensemble.n_leaves <= expected.ensemble.n_leaves
    assert "held 0 standard errors inside" in panel.status.value
    assert "Pruning (btt.prune)" in panel.static_html()
    # the saved view escapes the status once (a boosted walk's "model's outputs" read "model&amp;#x27;s")
    panel._set_status("ranked on the model's outputs, x < 1")
    assert "ranked on the model&#x27;s outputs, x &lt; 1" in panel.static_html()


def test_compress_method_shows_the_note_of_a_search_that_kept_the_whole_model():
    from sklearn.datasets import make_classification

    lightgbm = pytest.importorskip("lightgbm")
    X, y = make_classification(3000, 8, n_informative=5, flip_y=0.05, random_state=0)
    model = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=7, verbose=-1, random_state=0).fit(X[:2000], y[:2000])
    panel = PruningPanel(model, X[2000:2600], y[2000:2600], method="prune", tolerance=0.0, random_state=0)
    with pytest.warns(UserWarning, match="kept the unpruned model"):  # prune warns in the panel's thread too
        panel.start()
        result = panel.wait(300)
    assert result.chosen == 0 and len(result.params["warnings"]) == 1
    assert "Done:" in panel.status.value and "Note: prune kept the unpruned model" in panel.status.value
    panel.tolerance_slider.value = 0.05  # a choice that prunes carries no note
    assert panel.result.chosen > 0 and "Note:" not in panel.status.value
    # it removed whole trees: the tree view still pairs the trees by position, a removed one as a single leaf
    removed = [tree for tree, nodes in panel.result.pruned_nodes.items() if list(nodes) == [0]]
    assert panel.result.ensemble.n_trees == 20 - len(removed) < 20
    assert panel.tree_view.after.n_trees == 20
    assert all(panel.tree_view.after.trees[tree].n_nodes == 1 for tree in removed)


def test_unknown_method_is_refused_at_construction(data):
    model, X_val, y_val = data
    with pytest.raises(
        btt.ParameterError, match="method of PruningPanel must be 'bandit' .* or 'prune' .*, got 'greedy'"
    ):
        PruningPanel(model, X_val, y_val, method="greedy")


def test_compress_is_a_deprecated_alias_of_prune(data):
    model, X_val, y_val = data
    with pytest.warns(FutureWarning, match='method="prune"'):
        panel = PruningPanel(model, X_val, y_val, method="compress")
    assert panel.method == "prune" and panel.chart.mode == "path"


@pytest.mark.parametrize(
    "method, keyword, hint",
    [
        ("bandit", "class_names", None),
        ("bandit", "weigths", "weights"),
        ("prune", "metrc", "metric"),
        ("prune", "X_trian", "X_train"),
    ],
)
def test_misspelt_keywords_are_refused_at_construction(data, keyword, method, hint):
    model, X_val, y_val = data
    with pytest.raises(btt.ParameterError, match=f"unexpected keyword '{keyword}'") as caught:
        PruningPanel(model, X_val, y_val, method=method, **{keyword: 1})
    if hint:
        assert f"did you mean '{hint}'" in str(caught.value)


def test_values_the_method_refuses_are_refused_at_construction(data):
    model, X_val, y_val = data
    with pytest.raises(btt.ParameterError, match=r"^margin of PruningPanel\(method='prune'\) must be"):
        PruningPanel(model, X_val, y_val, method="prune", margin=-1.0)
    with pytest.raises(btt.ParameterError, match=r"^reward_threshold of PruningPanel\(method='bandit'\) must be"):
        PruningPanel(model, X_val, y_val, reward_threshold="high")


def test_keywords_of_the_method_are_accepted(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, method="prune", metric="accuracy", search="exact")
    assert panel.error == "" and not panel.start_button.disabled


def test_stop_ends_the_search_at_the_next_step(data):
    from bandit_tree_tools.widgets._prune_path import PathLog

    model, X_val, y_val = data
    full = btt.prune(model, X_val, y_val, tolerance=0.03, random_state=0, progress=False)
    log = PathLog()
    log.stop_requested.set()  # Stop pressed before the first step
    stopped = btt.prune(model, X_val, y_val, tolerance=0.03, random_state=0, progress=False, callback=log)
    assert len(full.path) > 2
    # the callback saw the unpruned model (step 0), answered True, and the search ended there
    assert [step["step"] for step in log.steps] == [0] == stopped.path["step"].tolist()
    assert log.steps[0]["leaves"] == full.path["leaves"].iat[0]


def test_export_goes_through_the_library_adapter(data, tmp_path):
    lightgbm = pytest.importorskip("lightgbm")
    _, X_val, y_val = data
    booster = lightgbm.LGBMClassifier(n_estimators=5, num_leaves=15, min_child_samples=3, verbose=-1)
    booster.fit(X_val, y_val)
    panel = PruningPanel(booster, X_val, y_val, n_rounds=100, min_depth=2)
    assert panel.default_export_name() == "pruned_model.txt"  # the adapter's first extension
    panel.start()
    result = panel.wait(60)
    panel.export(tmp_path / "pruned.txt")
    reloaded = lightgbm.Booster(model_file=str(tmp_path / "pruned.txt"))
    np.testing.assert_allclose(
        reloaded.predict(X_val.to_numpy()), result.ensemble.predict_proba(X_val)[:, 1], rtol=1e-6, atol=1e-9
    )
    panel.export_path.value = str(tmp_path / "pruned.joblib")  # not a file LightGBM reads back
    panel._export_clicked()
    assert "DataError" in panel.export_message.value and "suffix" in panel.export_message.value


def test_the_path_log_keeps_every_walk_and_the_chart_names_the_metric(data):
    from bandit_tree_tools.widgets._prune_path import PathLog

    log = PathLog()
    for walk, leaves in [(0, 40), (0, 30), (0, 20), (1, 40), (1, 25)]:
        log({"step": 0, "leaves": leaves, "metric": 0.9, "walk": walk})
    # the step count never runs backwards when prune starts a further walk
    assert [step["walk"] for step in log.snapshot()] == [0, 0, 0, 1, 1]
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, method="prune")
    assert panel._metric_name() == "balanced_accuracy"  # the axis is named by prune's own default
    assert PruningPanel(model, X_val, y_val, method="prune", metric="accuracy")._metric_name() == "accuracy"


def test_tolerance_box_and_slider_agree(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, method="prune", tolerance=0.03, random_state=0)
    panel.start()
    panel.wait(120)
    panel.tolerance_slider.value = 0.01
    assert panel.tolerance.value == pytest.approx(0.01)
    panel.tolerance.value = 0.02
    assert panel.tolerance_slider.value == pytest.approx(0.02)
    assert panel.result.params["tolerance"] == pytest.approx(0.02)


def test_default_rounds_give_every_arm_pulls_on_a_large_ensemble():
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from bandit_tree_tools.widgets._pruning_panel import DEFAULT_PULLS_PER_ARM, count_arms

    X, y = make_classification(n_samples=600, random_state=0)
    forest = RandomForestClassifier(n_estimators=60, random_state=0).fit(X[:400], y[:400])
    panel = PruningPanel(forest, X[400:], y[400:])
    arms = count_arms(panel.ensemble, "twigs", 4)
    assert arms > 200
    assert panel.n_rounds.value >= DEFAULT_PULLS_PER_ARM * arms
    # the count is bandit_prune's own
    result = btt.bandit_prune(forest, X[400:], y[400:], n_rounds=1, progress=False)
    assert len(result.arms) == arms
    small = PruningPanel(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y), X, y)
    assert small.n_rounds.value == 1100


def test_the_saved_text_repr_carries_no_state_a_run_changes(data):
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=50, min_depth=3)
    before = panel._repr_mimebundle_()
    before = before[0] if isinstance(before, tuple) else before
    panel.start()
    panel.wait(60)
    after = panel._repr_mimebundle_()
    after = after[0] if isinstance(after, tuple) else after
    assert "not run" not in before["text/plain"] and before["text/plain"] == after["text/plain"]
    assert "finished" in repr(panel)  # repr() itself still says where the panel is


def test_a_tsdt_model_is_pruned_and_the_export_says_why_it_cannot_be_written():
    import itertools
    import warnings

    import pandas as pd

    rows = list(itertools.product(range(3), range(3), range(2), range(3), range(4), range(2)))
    X = pd.DataFrame(rows, columns=["a1", "a2", "a3", "a4", "a5", "a6"])
    y = ((X.a1 == X.a2) | (X.a5 == 0)).astype(int).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tsdt = btt.TSDTClassifier(lambda_=0.01, n_iter=30, random_state=0).fit(X, y)
    panel = PruningPanel(tsdt, X, y, method="prune", tolerance=0.02)
    assert panel.error == "" and not panel.start_button.disabled
    panel.start()
    result = panel.wait(120)
    assert panel.error == "" and result is not None
    assert panel.export_button.disabled
    assert "cannot be written back" in panel.export_message.value and "result.ensemble" in panel.export_message.value
    with pytest.raises(btt.UnsupportedModelError, match="cannot be exported"):
        panel.export()


def test_the_static_reward_chart_has_axes_like_the_live_one(data):
    from bandit_tree_tools.widgets._static_html import polyline_svg

    svg = polyline_svg([[3.244, 3.25, 3.256]], x_label="round", y_label="reward")
    import re

    texts = re.findall(r">([^<>]*)</text>", svg)
    assert {"3.244", "3.25", "3.256"} <= set(texts)  # y ticks, each its own
    assert {"1", "3", "round", "reward"} <= set(texts)  # x range and both axis titles
    model, X_val, y_val = data
    panel = PruningPanel(model, X_val, y_val, n_rounds=60, min_depth=3)
    panel.start()
    panel.wait(60)
    html = panel.static_html()
    assert ">round</text>" in html and ">reward</text>" in html and ">60</text>" in html
