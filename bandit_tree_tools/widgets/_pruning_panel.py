"""PruningPanel: run bandit pruning live, look at the rewards, export the result."""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path

import numpy as np

from .._validation import Interval, Options, check_params
from ..bandits import POLICIES
from ..exceptions import NotFittedError, ParameterError
from ..pruning._bandit import CONSTRAINTS as BANDIT_PRUNE_CONSTRAINTS
from ..pruning._engine._prune import PRUNE_CONSTRAINTS
from ..pruning._inputs import check_target, check_training_pair
from ..pruning._metrics import COUNTS
from . import _prune_path
from ._common import USER_ERRORS, ErrorBox, Panel, describe_error, import_model, ipywidgets
from ._live import RoundLog
from ._prune_path import PathRuns, with_notes
from ._reward_chart import RewardChart
from ._static_html import error_html, escape, polyline_svg, section, table
from ._tree_view import TreeView

REDRAW_INTERVAL = 0.1  # seconds between live redraws: at most 10 per second
ARM_ROWS = 12  # rows of the arm table
MIN_PULLS_PER_ARM = 5  # fewer rounds per arm than this cannot tell arms apart
DEFAULT_PULLS_PER_ARM = 10  # the default n_rounds gives each starting arm this many pulls
REPLAY_SECONDS = 1.2  # a run over before its first frame is drawn again at this pace
REPLAY_FRAMES = 12
DOWNLOAD_LIMIT = 20_000_000  # bytes: larger exports are written to the file only (a widget message carries the link)


def _adapter(ensemble):
    """The library adapter that writes the pruned model back
    (:func:`bandit_tree_tools.interop.adapter_for`)."""
    from ..interop import adapter_for

    return adapter_for(ensemble)


METHODS = {"bandit": "bandit_prune", "prune": "prune"}
# what each named parameter of PruningPanel accepts: bandit_prune's and prune's rules where the value goes
# to them, the policy by name and the seed as an int (the controls hold those)
PRUNING_PANEL_CONSTRAINTS = {
    "policy": [Options(POLICIES)],
    "n_rounds": [None, *BANDIT_PRUNE_CONSTRAINTS["n_rounds"]],
    "eval_size": BANDIT_PRUNE_CONSTRAINTS["eval_size"],
    "candidates": BANDIT_PRUNE_CONSTRAINTS["candidates"],
    "min_depth": BANDIT_PRUNE_CONSTRAINTS["min_depth"],
    "strategy": BANDIT_PRUNE_CONSTRAINTS["strategy"],
    "random_state": [Interval(int, 0, 2**32 - 1)],
    "method": [Options(METHODS)],
    "tolerance": PRUNE_CONSTRAINTS["tolerance"],
}
WAIT_CONSTRAINTS = {"timeout": [None, Interval(float, 0, None, finite=True)]}  # seconds, as Thread.join takes

# set by the panel's own controls, not by **prune_params
_CONTROLLED = {
    "bandit": ("model", "X_val", "y_val", "policy", "callback"),
    "prune": ("model", "X_val", "y_val", "callback"),
}


def _first_free(path: Path) -> Path:
    """``path``, or ``stem_2.ext``, ``stem_3.ext``, ...: the first that does not exist."""
    number = 1
    free = path
    while free.exists():
        number += 1
        free = path.with_name(f"{path.stem}_{number}{path.suffix}")
    return free


def count_arms(ensemble, candidates: str, min_depth: int) -> int:
    """How many arms bandit_prune starts with: twigs (internal nodes whose
    children are both leaves) or internal nodes, at depth >= min_depth."""
    from ._payload import depths

    total = 0
    for tree in ensemble.trees:
        left, right = tree.children_left, tree.children_right
        internal = left != -1
        if candidates == "twigs":
            internal &= (left[np.where(internal, left, 0)] == -1) & (left[np.where(internal, right, 0)] == -1)
        total += int(np.count_nonzero(internal & (depths(tree) >= min_depth)))
    return total


def default_rounds(ensemble, candidates: str, min_depth: int) -> int:
    """Rounds that give every starting arm about DEFAULT_PULLS_PER_ARM pulls
    (at least 1,100, rounded up to a hundred)."""
    if ensemble is None:
        return 1100
    arms = count_arms(ensemble, candidates, int(min_depth))
    return int(max(1100, -(-DEFAULT_PULLS_PER_ARM * arms // 100) * 100))


def _check_method(method) -> str:
    if method == "compress":
        warnings.warn(
            'PruningPanel(method="compress") is now method="prune" (the name of btt.prune); "compress" will be '
            "removed in a future version",
            FutureWarning,
            stacklevel=3,
        )
        return "prune"
    if method not in METHODS:
        raise ParameterError(
            f"method of PruningPanel must be 'bandit' (btt.bandit_prune) or 'prune' (btt.prune), got {method!r}"
        )
    return method


def _check_keywords(method: str, prune_params: dict) -> None:
    """Refuse, at construction, a keyword the pruning function does not take,
    or a value it does not accept (else the mistake shows only when Start is
    pressed)."""
    import difflib
    import inspect

    from .. import pruning

    function = getattr(pruning, METHODS[method])
    accepted = [name for name in inspect.signature(function).parameters if name not in _CONTROLLED[method]]
    panel_own = {
        "policy",
        "n_rounds",
        "eval_size",
        "candidates",
        "min_depth",
        "strategy",
        "random_state",
        "tolerance",
        "method",
    }
    for name in prune_params:
        if name in _CONTROLLED[method]:
            raise ParameterError(f"PruningPanel sets {name!r} itself; do not pass it as a keyword")
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted + sorted(panel_own), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ParameterError(
                f"PruningPanel(method={method!r}) got an unexpected keyword {name!r}: btt.{METHODS[method]} "
                f"takes {', '.join(sorted(accepted))}{hint}"
            )
    table = function._parameter_constraints
    given = {name: value for name, value in prune_params.items() if name in table}  # not the data (X_train, ...)
    check_params(given, table, owner=f"PruningPanel(method={method!r})")
    check_training_pair(prune_params.get("X_train"), prune_params.get("y_train"))


class PruningPanel(Panel, PathRuns, ipywidgets.VBox):
    """Bandit pruning, live: controls, Start/Stop, reward charts, the arm
    table, before/after metrics, the tree with pruned nodes marked, export.

    The bandit loop (:func:`bandit_tree_tools.bandit_prune`) runs in a
    background thread, so the notebook stays responsive and Stop works; the
    display is refreshed at most 10 times a second. The panel follows the
    rounds through ``bandit_prune``'s ``callback``; Stop makes the callback
    answer True, and ``bandit_prune`` finishes the pruning with the rounds
    already played (nothing is re-run).

    With ``method="prune"`` the panel runs :func:`bandit_tree_tools.prune`
    instead: the validation metric against the number of leaves, drawn step
    by step as the search goes, then a tolerance slider and a margin slider
    (standard errors held inside the tolerance) that pick another model of
    the same path (nothing is rerun).

    Parameters
    ----------
    model : fitted model or Ensemble
    X_val, y_val : validation data (never the training data)
    method : {"bandit", "prune"}, default "bandit"
        :func:`bandit_prune` (arms, rounds) or :func:`prune` (a path).
        ``"compress"``, the former name of ``"prune"``, still works and
        warns (FutureWarning).
    policy, n_rounds, eval_size, candidates, min_depth, strategy, random_state
        Initial values of the controls (see :func:`bandit_prune`). By
        default ``n_rounds`` gives each arm about
        ``DEFAULT_PULLS_PER_ARM`` pulls (at least 1,100 rounds), so that the
        reward charts of a large ensemble are not flat.
    tolerance : float, default 0.005
        ``method="prune"``: the initial tolerance (see :func:`prune`).
    **prune_params
        Other keyword arguments of :func:`bandit_prune` or :func:`prune`
        (weights, metric, X_train, ...), checked at construction: a name
        the method does not take raises a ParameterError.

    Attributes
    ----------
    result : PruneResult or None
        The last finished run.
    error : str
        The message shown when something went wrong ("" otherwise).
    exception : Exception or None
        An unexpected error of the last run (a bug: the panel shows it with
        its traceback); the project's own errors are only messages.

    Raises
    ------
    ParameterError
        At construction, for a parameter outside what its table
        (``_parameter_constraints``) allows. A model or rows the panel
        cannot use are shown in the panel instead (``error``).

    Examples
    --------
    Run the pruning from Python (a notebook shows the panel and its Start
    and Stop buttons):

    >>> import bandit_tree_tools as btt
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> model = DecisionTreeClassifier(random_state=0).fit(X[:200], y[:200])
    >>> panel = btt.PruningPanel(model, X[200:], y[200:], n_rounds=200, min_depth=2)
    >>> panel.start()
    True
    >>> result = panel.wait(60)
    >>> type(panel).__name__, len(result.history), panel.chart.state
    ('PruningPanel', 200, 'done')
    >>> panel.default_export_name()
    'pruned_model.joblib'
    """

    _parameter_constraints = PRUNING_PANEL_CONSTRAINTS

    def __init__(
        self,
        model,
        X_val,
        y_val,
        *,
        policy: str = "ucb1",
        n_rounds: int | None = None,
        eval_size: float = 0.5,
        candidates: str = "twigs",
        min_depth: int = 4,
        strategy: str = "rank",
        random_state: int = 0,
        method: str = "bandit",
        tolerance: float = 0.005,
        **prune_params,
    ):
        method = _check_method(method)  # first: "compress" is the former name of "prune"
        check_params(
            dict(
                policy=policy,
                n_rounds=n_rounds,
                eval_size=eval_size,
                candidates=candidates,
                min_depth=min_depth,
                strategy=strategy,
                random_state=random_state,
                method=method,
                tolerance=tolerance,
            ),
            PRUNING_PANEL_CONSTRAINTS,
            owner="PruningPanel",
        )
        _check_keywords(method, prune_params)
        super().__init__()
        self.add_class("btt-pruning-panel")
        self.method = method
        self._full_result = None  # compress: the result of the search, before any choose()
        self.result = None
        self.exception = None
        self.round_log = None
        self._thread = None
        self._ticker = None
        self._prune_params = prune_params
        self.ensemble, error = import_model(model)
        self.X_val = self.y_val = None
        messages = [error] if error else []
        if self.ensemble is not None:
            try:
                self.X_val = self.ensemble.check_X(X_val, "X_val")
                self.y_val = np.asarray(y_val)
                # the checks Start's method makes, before Start: labels the model never saw, NaN, ...
                check_target(self.ensemble, self.y_val, self.X_val.shape[0], "y_val")
                if prune_params.get("X_train") is not None:  # btt.prune's training rows, checked alike
                    X_train = self.ensemble.check_X(prune_params["X_train"], "X_train")
                    check_target(self.ensemble, prune_params["y_train"], X_train.shape[0], "y_train")
            except USER_ERRORS as failure:
                messages.append(describe_error(failure))
                self.X_val = self.y_val = None
        if n_rounds is None:
            n_rounds = default_rounds(self.ensemble, candidates, min_depth)
        self._build_controls(policy, n_rounds, eval_size, candidates, min_depth, strategy, random_state)
        self._build_path_controls(tolerance, random_state)
        self.error_box = ErrorBox("\n".join(messages))
        self.status = ipywidgets.HTML("")
        self.status.add_class("btt-status")
        self.chart = RewardChart(mode="path" if method == "prune" else "bandit")
        self.arm_table = ipywidgets.HTML("")
        self.arm_table.add_class("btt-arm-table")
        self.metrics = ipywidgets.HTML("")
        self.metrics.add_class("btt-metrics")
        self.tree_view = TreeView(self.ensemble) if self.ensemble is not None else None
        self._export_problem = self._why_not_exportable()
        if self.ensemble is not None and self._export_problem is None:
            self.export_path.placeholder = f"file name (default {self.default_export_name()})"
        ready = self.ensemble is not None and self.X_val is not None
        self.start_button.disabled = not ready
        self.export_button.disabled = True
        self._set_status(
            "Ready: choose the settings and press Start." if ready else "Cannot run: see the message above."
        )
        self.arm_table.layout.margin = "0 24px 0 0"
        tables = ipywidgets.HBox([self.arm_table, self.metrics])
        settings = self.path_settings if method == "prune" else self.settings
        children = [settings, self.buttons, self.error_box, self.status, self.chart]
        if method == "prune":
            children += [self.tolerance_slider, self.margin_slider]
            self.progress.layout.display = "none"  # steps, not rounds: the path chart shows them
        children.append(tables)
        if self.tree_view is not None:
            children.append(self.tree_view)
        children.append(self.export_row)
        self.children = children

    # --------------------------------------------------------------- controls
    def _build_controls(self, policy, n_rounds, eval_size, candidates, min_depth, strategy, random_state):
        from ..bandits import POLICIES

        order = ["ucb1", "kl_ucb", "thompson", "bayes_ucb", "softmax", "wsls", "epsilon_greedy"]
        names = [name for name in order if name in POLICIES] + sorted(set(POLICIES) - set(order))
        short = ipywidgets.Layout(width="215px")  # "epsilon_greedy" fits without clipping
        style = {"description_width": "80px"}
        self.policy = ipywidgets.Dropdown(
            options=names,
            value=policy if policy in names else names[0],
            description="policy",
            layout=short,
            style=style,
        )
        self.n_rounds = ipywidgets.BoundedIntText(
            value=n_rounds, min=1, max=10**8, description="rounds", layout=short, style=style
        )
        self.eval_size = ipywidgets.BoundedFloatText(
            value=eval_size,
            min=1e-6,
            max=1e9,
            description="eval size",
            layout=short,
            style=style,
            tooltip="fraction of the validation rows (<= 1) or rows (> 1)",
        )
        self.candidates = ipywidgets.Dropdown(
            options=["twigs", "internal"], value=candidates, description="candidates", layout=short, style=style
        )
        self.min_depth = ipywidgets.BoundedIntText(
            value=min_depth, min=0, max=10**4, description="min depth", layout=short, style=style
        )
        self.strategy = ipywidgets.Dropdown(
            options=["rank", "sequential"], value=strategy, description="strategy", layout=short, style=style
        )
        self.seed = ipywidgets.IntText(value=int(random_state), description="seed", layout=short, style=style)
        self.settings = ipywidgets.HBox(
            [self.policy, self.n_rounds, self.eval_size, self.candidates, self.min_depth, self.strategy, self.seed],
            layout=ipywidgets.Layout(flex_flow="row wrap"),
        )
        self.settings.add_class("btt-pruning-settings")
        self.start_button = ipywidgets.Button(description="Start", button_style="success", icon="play")
        self.start_button.add_class("btt-start")
        self.stop_button = ipywidgets.Button(description="Stop", button_style="danger", icon="stop")
        self.stop_button.add_class("btt-stop")
        self.progress = ipywidgets.IntProgress(value=0, min=0, max=1, description="rounds")
        self.progress.add_class("btt-progress")
        self.start_button.on_click(lambda _: self.start())
        self.stop_button.on_click(lambda _: self.stop())
        self.buttons = ipywidgets.HBox([self.start_button, self.stop_button, self.progress])
        self.export_path = ipywidgets.Text(
            value="",
            placeholder="file name, e.g. pruned_model.joblib",
            description="export to",
            layout=ipywidgets.Layout(width="380px"),
        )
        self.export_button = ipywidgets.Button(description="Export", icon="download")
        self.export_button.add_class("btt-export")
        self.export_message = ipywidgets.HTML("")
        self.export_button.on_click(lambda _: self._export_clicked())
        self.export_row = ipywidgets.HBox([self.export_path, self.export_button, self.export_message])

    def _params(self) -> dict:
        params = dict(
            # a whole number above 1 is rows, a fraction in (0, 1] a share: the pruning's own rule
            n_rounds=int(self.n_rounds.value),
            eval_size=float(self.eval_size.value),
            candidates=self.candidates.value,
            min_depth=int(self.min_depth.value),
            strategy=self.strategy.value,
            random_state=int(self.seed.value),
            progress=False,
        )
        params.update(self._prune_params)
        return params

    # ------------------------------------------------------------------- runs
    @property
    def running(self) -> bool:
        """Whether a run is under way: its loop, or the last redraw after it
        (the display thread outlives the loop by that redraw)."""
        return any(thread is not None and thread.is_alive() for thread in (self._thread, self._ticker))

    def start(self) -> bool:
        """Start a run in a background thread; False if one is running or
        the input cannot be used."""
        if self.running:
            self._set_status("Already running: press Stop first.")
            return False
        if self.ensemble is None or self.X_val is None:
            self._set_status("Cannot run: see the message above.")
            return False
        if self.method == "prune":
            return self._start_path()
        from ..bandits import POLICIES

        self.error_box.clear()
        self.result = None
        self.exception = None
        self.round_log = RoundLog()
        params = self._params()
        policy_name = self.policy.value
        self.chart.clear()
        self.chart.state = "running"
        self.progress.max = params["n_rounds"]
        self.progress.value = 0
        self.start_button.disabled = True
        self.export_button.disabled = True
        self.tree_view.set_after(None)
        self.arm_table.value = ""
        self.metrics.value = ""
        self._set_status(f"Running {policy_name} for {params['n_rounds']} rounds…")
        self._started = time.perf_counter()
        self._family = POLICIES[policy_name].reward_family
        self._outcome = (None, False, "the run ended without a result", [])
        self._thread = threading.Thread(
            target=self._work, args=(policy_name, params, self.round_log), daemon=True, name="btt-pruning"
        )
        self._ticker = threading.Thread(
            target=self._tick, args=(self.round_log, self._thread), daemon=True, name="btt-pruning-display"
        )
        self._thread.start()
        self._ticker.start()
        return True

    def stop(self) -> bool:
        """Ask the running loop to stop; False (and a note) if nothing runs."""
        if not self.running:
            if self.round_log is not None and self.round_log.stop_requested.is_set():
                return False  # Stop pressed again after it ended the run: keep the run's summary
            self._set_status(
                "Nothing to stop: no run in progress."
                if self.result is None
                else "Nothing to stop: the run has already finished."
            )
            return False
        if self.round_log.stop_requested.is_set():
            return False
        self.round_log.stop_requested.set()
        self.chart.state = "stopping"
        self._set_status("Stopping…")
        return True

    def wait(self, timeout: float | None = None):
        """Block until the run (and its last redraw) ends, or ``timeout``
        seconds have passed; return the result (None while it runs)."""
        check_params(dict(timeout=timeout), WAIT_CONSTRAINTS, owner="PruningPanel.wait")
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in (self._thread, self._ticker):
            if thread is not None:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.result

    def _work(self, policy_name, params, log) -> None:
        from ..pruning import bandit_prune

        result, stopped, failure, notes = None, False, "", []
        try:
            # the run's own warnings come back in its result (and the log):
            # no process-wide warnings.catch_warnings() in this thread
            result = bandit_prune(self.ensemble, self.X_val, self.y_val, policy=policy_name, callback=log, **params)
            stopped = bool(result.params["stopped"])
            notes = list(result.params["warnings"])
        except USER_ERRORS as error:
            failure = describe_error(error)
        except Exception as error:  # a bug: shown with its traceback; kept in panel.exception
            failure = error
            self.exception = error
        self._outcome = (result, stopped, failure, notes)

    def _tick(self, log, worker) -> None:
        """Redraw while the worker runs (<= 10 times a second), then once more.
        A run that ended before the first redraw is drawn again round by
        round over ~1 s, so that a person sees it happen."""
        frames = 0
        while worker.is_alive():
            worker.join(REDRAW_INTERVAL)
            if worker.is_alive():
                self._draw_live(log)
                frames += 1
        if frames == 0 and not log.stop_requested.is_set():
            self._replay(log)
        self._draw_live(log)
        self._finish(*self._outcome)

    def _replay(self, log) -> None:
        snapshot = log.snapshot()
        n = len(snapshot["rewards"])
        if n < 2 or snapshot["phase"] > 0:
            return
        for step in range(1, REPLAY_FRAMES):
            if log.stop_requested.is_set():
                return
            k = max(1, n * step // REPLAY_FRAMES)
            arms = snapshot["arms"][:k]
            counts = np.bincount(arms, minlength=snapshot["counts"].size)
            sums = np.bincount(arms, weights=snapshot["rewards"][:k], minlength=snapshot["counts"].size)
            with np.errstate(invalid="ignore", divide="ignore"):
                means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
            partial = {
                **snapshot,
                "rewards": snapshot["rewards"][:k],
                "counts": counts,
                "means": means,
                "phase_rounds": k,
            }
            self._draw_live(log, partial)
            time.sleep(REPLAY_SECONDS / REPLAY_FRAMES)

    def _few_rounds_note(self, n_arms: int) -> str:
        rounds = int(self.n_rounds.value)
        if n_arms == 0 or rounds >= MIN_PULLS_PER_ARM * n_arms:
            return ""
        return (
            f"{rounds} rounds for {n_arms} arms is {rounds / n_arms:.1f} pulls per arm, too few to tell the arms "
            f"apart: use at least {MIN_PULLS_PER_ARM * n_arms} rounds, or fewer arms (candidates='twigs', "
            "a larger min depth)."
        )

    def _draw_live(self, log, snapshot=None) -> None:
        snapshot = log.snapshot() if snapshot is None else snapshot
        family = self._family
        with self.chart.hold_sync():
            self.chart.show_rounds(
                snapshot["rewards"], self.progress.max if log.phase <= 0 else len(snapshot["rewards"]), family
            )
            if snapshot["counts"].size:
                self.chart.show_arms(snapshot["means"], snapshot["counts"], label=f"arm ({snapshot['counts'].size})")
        self.progress.value = min(self.progress.max, snapshot["phase_rounds"])
        if snapshot["counts"].size:
            order = np.argsort(-snapshot["counts"], kind="stable")[:ARM_ROWS]
            rows = [(int(arm), int(snapshot["counts"][arm]), f"{snapshot['means'][arm]:.4f}") for arm in order]
            phase = f" (phase {snapshot['phase']})" if snapshot["phase"] > 0 else ""
            self.arm_table.value = section(f"Most pulled arms{phase}", table(rows, ["arm", "pulls", "mean reward"]))
        if not log.stop_requested.is_set():
            note = self._few_rounds_note(int(snapshot["counts"].size))
            self._set_status(
                f"Running: {len(snapshot['rewards'])} rounds played…" + (f" Warning: {note}" if note else "")
            )

    def _finish(self, result, stopped, failure, notes) -> None:
        try:
            self._finish_run(result, stopped, failure, notes)
        finally:
            self.refresh_static()  # the saved picture shows this run, not "Ready"

    def _finish_run(self, result, stopped, failure, notes) -> None:
        self.result = result
        self.start_button.disabled = False
        elapsed = time.perf_counter() - self._started
        if failure:
            self.error_box.show_failure(failure)
            self.chart.state = "error"
            self._set_status("The run failed: see the message above.")
            return
        played = self.round_log.n_rounds
        self._show_result(result)
        self._enable_export()
        self.chart.state = "stopped" if stopped else "done"
        before, after = result.metrics.loc["before", "score"], result.metrics.loc["after", "score"]
        head = f"Stopped after {played} rounds; finished with those rounds" if stopped else f"Done: {played} rounds"
        text = (
            f"{head} in {elapsed:.2f} s. Pruned {result.n_pruned} nodes; validation score "
            f"{before:.4f} → {after:.4f}; leaves {result.original.n_leaves} → {result.ensemble.n_leaves}."
        )
        few = self._few_rounds_note(len(result.arms))
        if few:
            notes = [few] + list(notes)
        self._set_status(with_notes(text, notes))

    def _show_result(self, result) -> None:
        # arms in the loop's own numbering, as while the run was live
        arms = result.arms.sort_values("arm") if len(result.arms) else result.arms
        with self.chart.hold_sync():
            if len(arms):
                self.chart.show_arms(
                    arms["mean_reward"].to_numpy(),
                    arms["pulls"].to_numpy(),
                    pruned=arms["pruned"].to_numpy(),
                    label=f"arm ({len(arms)}; red: pruned)",
                )
            if len(result.path):
                n_pruned = result.path["n_pruned"].to_numpy()
                hits = np.flatnonzero(n_pruned == result.n_pruned)
                chosen = int(hits[0]) if hits.size else int(np.argmax(result.path["score"].to_numpy()))
                self.chart.show_path(n_pruned, result.path["score"].to_numpy(), chosen)
        self.arm_table.value = self._arm_table_html(result)
        self.metrics.value = self._metrics_html(result)
        self.tree_view.set_after(result.ensemble)

    @staticmethod
    def _arm_table_html(result) -> str:
        if not len(result.arms):
            return section("Arms", "<div>no arm: nothing could be pruned at these settings</div>")
        arms = result.arms.sort_values("rank").head(ARM_ROWS)
        rows = [
            (
                int(r.arm),
                int(r.rank),
                int(r.tree),
                int(r.node),
                int(r.depth),
                int(r.samples) if r.samples >= 0 else "n/a",
                int(r.pulls),
                f"{r.mean_reward:.4f}",
                f"{r.mean_score_delta:+.4f}",
                "yes" if r.pruned else "",
            )
            for r in arms.itertuples()
        ]
        header = ["arm", "rank", "tree", "node", "depth", "samples", "pulls", "mean reward", "mean Δscore", "pruned"]
        return section(f"Arms, best first ({len(result.arms)} in all)", table(rows, header))

    @staticmethod
    def _metrics_html(result) -> str:
        frame = result.metrics

        def shown(value, name):
            return f"{value:,.0f}" if name in COUNTS else f"{value:.4f}"

        rows = [
            (name, shown(frame.loc["before", name], name), shown(frame.loc["after", name], name))
            for name in frame.columns
        ]
        return section("Validation metrics", table(rows, ["", "before", "after"]))

    def _set_status(self, text: str) -> None:
        self.status.value = f'<span class="btt-status-text">{escape(text)}</span>'

    # ----------------------------------------------------------------- export
    def export(self, path=None):
        """The pruned model as a native object of its library (written to
        ``path`` too, if given, by the library's adapter: ``path`` must end
        in one of its ``extensions``, e.g. ``.txt`` for LightGBM; a file
        there is replaced, as the library's own ``save_model`` does)."""
        if self.result is None:
            raise NotFittedError("nothing to export yet: run the pruning first (press Start, or call panel.start())")
        if self._export_problem is not None:
            _adapter(self.result.ensemble)  # raises the adapter's own UnsupportedModelError
        native = self.result.to_model()
        if path:
            _adapter(self.result.ensemble).save(native, path)
        return native

    def _why_not_exportable(self):
        """None when the model's library can read the pruned model back, else why not."""
        if self.ensemble is None:
            return None
        try:
            _adapter(self.ensemble)
        except USER_ERRORS as error:
            return describe_error(error)
        return None

    def _enable_export(self) -> None:
        """After a run: the Export button, or why the pruned model stays a btt model."""
        if self._export_problem is None:
            self.export_button.disabled = False
            return
        self.export_button.disabled = True
        self.export_message.value = (
            '<span class="btt-export-message">The pruned model cannot be written back to its library '
            f"({escape(self._export_problem)}); use <code>panel.result.ensemble</code> (predict, "
            "TreeView, joblib).</span>"
        )

    def default_export_name(self) -> str:
        """``pruned_model`` with the first suffix the model's library reads back."""
        extension = _adapter(self.ensemble).extensions[0] if self.ensemble is not None else ".joblib"
        return f"pruned_model{extension}"

    def _export_clicked(self) -> None:
        """Write the file (the default name when none is given, numbered past
        the files already there), say where (absolute path), and offer it as
        a browser download too: the kernel may run on another machine than
        the browser. The button never replaces a file: a name given that
        exists is refused, as a button cannot ask first."""
        name = self.export_path.value.strip()
        path = Path(name).expanduser().resolve() if name else _first_free(Path(self.default_export_name()).resolve())
        if path.exists():
            self.export_message.value = error_html(
                f"{path} exists: the Export button does not replace files. Give another name, or remove that "
                "file first (panel.export(path) writes over it)."
            )
            return
        try:
            native = self.export(path)
        except USER_ERRORS + (OSError,) as error:
            self.export_message.value = error_html(describe_error(error))
            return
        link = ""
        size = path.stat().st_size
        if size <= DOWNLOAD_LIMIT:
            import base64

            data = base64.b64encode(path.read_bytes()).decode("ascii")
            link = (
                f' <a class="btt-download" download="{escape(path.name)}" '
                f'href="data:application/octet-stream;base64,{data}">download {escape(path.name)}</a>'
            )
        self.export_message.value = (
            f'<span class="btt-export-message">{escape(type(native).__name__)} written to '
            f"<code>{escape(str(path))}</code> ({size:,} bytes).{link}</span>"
        )

    # ---------------------------------------------------------------- display
    def static_html(self) -> str:
        parts = []
        if self.error:
            parts.append(error_html(self.error))
        parts.append(f'<div class="btt-static-status">{escape(self._status_text())}</div>')
        if self.result is not None and self.method == "prune":
            path = self.result.path
            parts.append(
                section(
                    f"Validation {self.result.params['metric']} per step (x: steps, leaves "
                    f"{int(path['leaves'].iat[0])} → {int(path['leaves'].iat[-1])})",
                    polyline_svg(
                        [path["metric"].to_numpy()],
                        labels=(self.result.params["metric"],),
                        x_label="step",
                        y_label=self.result.params["metric"],
                    ),
                )
            )
            parts.append(self._metrics_html(self.result))
            parts.append(_prune_path.path_table_html(self.result))
            if self.tree_view is not None:
                parts.append(self.tree_view.static_html())
        elif self.result is not None:
            history = self.result.history
            if len(history):
                rewards = history["reward"].to_numpy()
                running = np.cumsum(rewards) / np.arange(1, len(rewards) + 1)
                parts.append(
                    section(
                        "Reward per round (blue) and running mean (red)",
                        polyline_svg(
                            [rewards, running], labels=("reward", "running mean"), x_label="round", y_label="reward"
                        ),
                    )
                )
            parts.append(self._metrics_html(self.result))
            parts.append(self._arm_table_html(self.result))
            if self.tree_view is not None:
                parts.append(self.tree_view.static_html())
        name = "Pruning (btt.prune)" if self.method == "prune" else "Bandit pruning"
        return '<div class="btt-static btt-pruning-panel-static">' + section(name, "".join(parts)) + "</div>"

    def _status_text(self) -> str:
        """The status line as plain text (its HTML's tags dropped and entities read back, so that
        the static view escapes it once: "model's", not "model&amp;#x27;s")."""
        import html
        import re

        return html.unescape(re.sub(r"<[^>]+>", "", self.status.value))

    def __repr__(self) -> str:
        if self.ensemble is None:
            return f"PruningPanel(error={self.error!r})"
        state = "running" if self.running else ("finished" if self.result is not None else "not run")
        return f"PruningPanel({self.ensemble!r}, {state})"
