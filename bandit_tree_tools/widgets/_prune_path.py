"""The path view of :func:`bandit_tree_tools.prune` inside the PruningPanel.

``prune`` walks from the unpruned model to smaller ones, one accepted
removal per step, and reports each step to its ``callback``; the panel
draws the validation metric against the number of leaves as the steps
arrive, then lets a tolerance slider and a margin slider pick another point
of the same path (``PruneResult.choose``: nothing is rerun).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..exceptions import NotFittedError
from ..pruning._engine import MARGIN
from ._common import USER_ERRORS, describe_error, ipywidgets, plural
from ._static_html import section, table

REDRAW_INTERVAL = 0.1  # seconds between live redraws, as for the bandit runs

PATH_COLUMNS = ("step", "leaves", "trees", "nodes", "metric", "elapsed")


class PathLog:
    """The steps reported by ``prune``'s callback, shared between the
    search's thread and the display thread; ``stop_requested`` ends the
    search at the next step (the callback returns True)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.steps: list[dict] = []  # every walk's steps, in the order they came (never wiped)
        self.walk = 0
        self.stop_requested = threading.Event()

    def __call__(self, info: dict) -> bool:
        with self._lock:
            self.walk = int(info.get("walk", 0))  # each further walk of prune starts from the top again
            self.steps.append({**{name: info.get(name) for name in PATH_COLUMNS}, "walk": self.walk})
        return self.stop_requested.is_set()

    @property
    def n_rounds(self) -> int:  # the panel's status line counts steps like rounds
        return len(self.steps)

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.steps)


def chart_arguments(leaves, metric, *, metric_name: str, chosen: int = -1, floor=None) -> dict:
    """Keyword arguments of ``RewardChart.show_path`` for a prune path."""
    return {
        "n_pruned": [int(value) for value in leaves],
        "score": [float(value) for value in metric],
        "chosen": int(chosen),
        "x_label": "leaves",
        "y_label": metric_name,
        "floor": None if floor is None or not np.isfinite(floor) else float(floor),
        "title": f"Validation {metric_name} vs. leaves (one point per step of the search)",
    }


def path_table_html(result, rows: int = 8) -> str:
    """The path's first and last steps, the chosen one marked."""
    path = result.path
    if not len(path):
        return section("Path", "<div>no step: nothing could be removed</div>")
    keep = sorted(
        set(range(min(rows // 2, len(path))))
        | set(range(max(0, len(path) - rows // 2), len(path)))
        | {int(result.chosen)}
    )
    lines = []
    for row in keep:
        record = path.iloc[row]
        lines.append(
            (
                int(record["step"]),
                int(record["leaves"]),
                int(record["trees"]),
                int(record["nodes"]),
                f"{float(record['metric']):.4f}",
                f"{float(record['elapsed']):.2f}",
                "chosen" if row == result.chosen else "",
            )
        )
    header = ["step", "leaves", "trees", "nodes", result.params["metric"], "seconds", ""]
    return section(f"Path of the search ({len(path)} models; first, last and chosen)", table(lines, header))


def with_notes(text: str, notes) -> str:
    """A status line with the run's notes after it."""
    return f"{text} Note: {' '.join(notes)}" if notes else text


def choice_text(result) -> str:
    """The chosen model, and how sure the choice is (``result.validation_change``)."""
    params = result.params
    row = result.path.iloc[int(result.chosen)]
    sure = result.validation_change.iloc[0]
    return (
        f"Tolerance {params['tolerance']:g}: step {int(row['step'])}, {int(row['leaves'])} leaves "
        f"(unpruned {int(result.path['leaves'].iat[0])}), {params['metric']} {float(row['metric']):.4f} "
        f"(unpruned {float(params['baseline']):.4f}): a change of {sure['change']:+.4f}, standard error "
        f"{sure['standard_error']:.4f}; held {params['margin']:g} standard errors inside, at worst "
        f"{sure['worst_plausible']:+.4f} against {sure['allowed']:+.4f} allowed. Its walk: {walk_text(params)}."
    )


def walk_text(params) -> str:
    """Which of prune's walks the chosen model is on."""
    parts = [f"ranked on {params['ranked_on']}", "leaves re-fitted" if params["refit"] else "leaf values kept"]
    if params["reweighted"]:
        parts.append("from re-weighted trees")
    return ", ".join(parts)


class PathRuns:
    """The PruningPanel's ``method="prune"`` part: controls, the search in
    a background thread (Stop ends it at the next step), the live path, and
    the tolerance slider. Mixed into PruningPanel, which provides the
    chart, tables, tree view, status and buttons."""

    def _build_path_controls(self, tolerance, random_state):
        style = {"description_width": "80px"}
        self.tolerance = ipywidgets.BoundedFloatText(
            value=float(tolerance),
            min=0.0,
            max=1e6,
            step=0.001,
            description="tolerance",
            style=style,
            layout=ipywidgets.Layout(width="215px"),
        )
        self.search = ipywidgets.Dropdown(
            options=["bandit", "exact"],
            value="bandit",
            description="search",
            style=style,
            layout=ipywidgets.Layout(width="215px"),
        )
        self.path_seed = ipywidgets.IntText(
            value=int(random_state), description="seed", style=style, layout=ipywidgets.Layout(width="215px")
        )
        self.path_settings = ipywidgets.HBox(
            [self.tolerance, self.search, self.path_seed], layout=ipywidgets.Layout(flex_flow="row wrap")
        )
        self.path_settings.add_class("btt-pruning-settings")
        # after a run: another point of the same path
        self.tolerance_slider = ipywidgets.FloatSlider(
            value=float(tolerance),
            min=0.0,
            max=max(0.05, 4 * float(tolerance)),
            step=0.0005,
            readout_format=".4f",
            description="tolerance",
            continuous_update=False,
            disabled=True,
            style={"description_width": "80px"},
            layout=ipywidgets.Layout(width="520px"),
        )
        self.tolerance_slider.add_class("btt-tolerance-slider")
        # the text box and the slider show one tolerance: the slider's choice
        # is written back to the box, and the box moves the slider after a run
        self.tolerance_slider.observe(lambda change: setattr(self.tolerance, "value", change["new"]), names="value")
        self.tolerance.observe(self._on_tolerance_text, names="value")
        self.tolerance_slider.observe(
            lambda change: self.choose(change["new"], self.margin_slider.value), names="value"
        )
        self.margin_slider = ipywidgets.FloatSlider(
            value=MARGIN,
            min=0.0,
            max=4.0,
            step=0.25,
            readout_format=".2f",
            description="margin",
            continuous_update=False,
            disabled=True,
            style={"description_width": "80px"},
            layout=ipywidgets.Layout(width="520px"),
        )
        self.margin_slider.add_class("btt-margin-slider")
        self.margin_slider.observe(
            lambda change: self.choose(self.tolerance_slider.value, change["new"]), names="value"
        )

    def _on_tolerance_text(self, change) -> None:
        if self.tolerance_slider.disabled or change["new"] == self.tolerance_slider.value:
            return
        self.tolerance_slider.max = max(self.tolerance_slider.max, float(change["new"]))
        self.tolerance_slider.value = float(change["new"])

    def _start_path(self) -> bool:
        self.error_box.clear()
        self.exception = None
        self.result = self._full_result = None
        self.round_log = PathLog()
        self.chart.clear()
        self.chart.state = "running"
        self.progress.max, self.progress.value = 1, 0
        self.start_button.disabled = True
        self.export_button.disabled = True
        self.tolerance_slider.disabled = self.margin_slider.disabled = True
        self.tree_view.set_after(None)
        self.arm_table.value = ""
        self.metrics.value = ""
        params = dict(
            tolerance=float(self.tolerance.value),
            margin=float(self.margin_slider.value),
            search=self.search.value,
            random_state=int(self.path_seed.value),
            progress=False,
        )
        params.update(self._prune_params)
        self._set_status(f"Searching the smallest model within tolerance {params['tolerance']:g}…")
        self._started = time.perf_counter()
        self._outcome = (None, False, "the search ended without a result", [])
        self._thread = threading.Thread(
            target=self._work_path, args=(params, self.round_log), daemon=True, name="btt-prune"
        )
        self._ticker = threading.Thread(
            target=self._tick_path, args=(self.round_log, self._thread), daemon=True, name="btt-prune-display"
        )
        self._thread.start()
        self._ticker.start()
        return True

    def _work_path(self, params, log) -> None:
        from ..pruning import prune

        result, failure, notes = None, "", []
        try:
            # prune's note (it kept the whole model) comes back in its result as well:
            # no process-wide warnings.catch_warnings() in this thread
            result = prune(self.ensemble, self.X_val, self.y_val, callback=log, **params)
            notes = list(result.params["warnings"])
        except USER_ERRORS as error:
            failure = describe_error(error)
        except Exception as error:  # a bug: shown with its traceback; kept in panel.exception
            failure = error
            self.exception = error
        self._outcome = (result, log.stop_requested.is_set(), failure, notes)

    def _tick_path(self, log, worker) -> None:
        while worker.is_alive():
            worker.join(REDRAW_INTERVAL)
            steps = log.snapshot()
            if worker.is_alive() and steps:
                self.chart.show_path(
                    **chart_arguments(
                        [step["leaves"] for step in steps],
                        [step["metric"] for step in steps],
                        metric_name=self._metric_name(),
                    )
                )
                if not log.stop_requested.is_set():
                    walk = f" (walk {steps[-1]['walk'] + 1})" if steps[-1]["walk"] else ""
                    self._set_status(
                        f"Searching: {plural(len(steps), 'step')} in all{walk}, "
                        f"{plural(steps[-1]['leaves'], 'leaf', 'leaves')} in the current model…"
                    )
        try:
            self._finish_path(*self._outcome)
        finally:
            self.refresh_static()

    def _metric_name(self) -> str:
        """The metric prune reports: the one asked for, else its default for the task."""
        from ..pruning._engine._metrics import _check_metric

        try:
            return _check_metric(self._prune_params.get("metric"), self.ensemble)
        except USER_ERRORS:
            return str(self._prune_params.get("metric"))

    def _finish_path(self, result, stopped, failure, notes) -> None:
        self.start_button.disabled = False
        if failure:
            self.error_box.show_failure(failure)
            self.chart.state = "error"
            self._set_status("The search failed: see the message above.")
            return
        self._full_result = result
        self._enable_export()
        tolerance = float(result.params["tolerance"])
        margin = float(result.params["margin"])
        with self.tolerance_slider.hold_trait_notifications(), self.margin_slider.hold_trait_notifications():
            self.tolerance_slider.max = max(self.tolerance_slider.max, 4 * tolerance)
            self.tolerance_slider.value = tolerance
            self.margin_slider.max = max(self.margin_slider.max, margin)
            self.margin_slider.value = margin
        self.tolerance_slider.disabled = self.margin_slider.disabled = False
        self._show_choice(result)
        head = f"Stopped after {len(result.path) - 1} steps" if stopped else f"Done: {len(result.path) - 1} steps"
        self._set_status(
            with_notes(f"{head} in {time.perf_counter() - self._started:.2f} s. " + choice_text(result), notes)
        )
        self.chart.state = "stopped" if stopped else "done"  # last: the page waits for it

    def choose(self, tolerance: float, margin: float | None = None):
        """``method="prune"``: show (and return) the smallest model of the
        last search's path within ``tolerance`` by ``margin`` standard errors
        (None: the search's own, see :func:`prune`); nothing is rerun."""
        if self._full_result is None:
            raise NotFittedError("nothing to choose from yet: run the search first (press Start)")
        result = self._full_result.choose(float(tolerance), None if margin is None else float(margin))
        self._show_choice(result)
        self._set_status(with_notes(choice_text(result), result.params["warnings"]))
        self.refresh_static()
        return result

    def _show_choice(self, result) -> None:
        self.result = result
        path = result.path
        self.chart.show_path(
            **chart_arguments(
                path["leaves"].to_numpy(),
                path["metric"].to_numpy(),
                metric_name=result.params["metric"],
                chosen=int(result.chosen),
                floor=result.metric_bound,
            )
        )
        self.arm_table.value = path_table_html(result)
        self.metrics.value = self._metrics_html(result)
        self.tree_view.set_after(result._ensemble_by_position())  # the tree view pairs trees by position
