"""RewardChart: the live charts of a bandit run (reward per round, per arm,
score versus the number of pruned branches)."""

from __future__ import annotations

import numpy as np

from ._assets import module_source, stylesheet
from ._common import anywidget, traitlets
from ._live import binned_series
from ._payload import column

STATES = ("idle", "running", "stopping", "done", "stopped", "error")


class RewardChart(anywidget.AnyWidget):
    """Charts of a bandit run; series travel as float32 buffers."""

    _esm = module_source("reward_chart.js")
    _css = stylesheet()

    rounds = traitlets.Dict().tag(sync=True)
    arms = traitlets.Dict().tag(sync=True)
    path = traitlets.Dict().tag(sync=True)
    state = traitlets.Enum(STATES, default_value="idle").tag(sync=True)
    mode = traitlets.Enum(("bandit", "path"), default_value="bandit").tag(sync=True)  # path: prune's path only

    def show_rounds(self, rewards, n_total: int, family: str = "", max_points: int = 1200) -> None:
        rewards = np.asarray(rewards, dtype=np.float64)
        if family == "bernoulli":
            # 0/1 rewards one by one are two rows of dots: show the mean of
            # bins of >= 10 rounds instead
            max_points = max(1, min(max_points, 80, rewards.shape[0] // 10))
        x, binned, running = binned_series(rewards, max_points)
        self.rounds = {
            "x": column(x, np.float32),
            "reward": column(binned, np.float32),
            "running": column(running, np.float32),
            "n_done": int(len(rewards)),
            "n_total": int(n_total),
            "family": family,
        }

    def show_arms(self, means, pulls, pruned=None, label: str = "arm") -> None:
        payload = {
            "mean": column(means, np.float32),
            "pulls": column(pulls, np.float32),
            "label": label,
        }
        if pruned is not None:
            payload["pruned"] = column(np.asarray(pruned, dtype=bool), np.uint8)
        self.arms = payload

    def show_path(
        self,
        n_pruned,
        score,
        chosen: int,
        *,
        x_label: str = "pruned branches",
        y_label: str = "score",
        floor: float | None = None,
        title: str = "",
    ) -> None:
        """A score per point of a path; ``floor`` draws the lowest score a
        tolerance accepts as a dashed line."""
        self.path = {
            "n_pruned": [int(value) for value in n_pruned],
            "score": [float(value) for value in score],
            "chosen": int(chosen),
            "x_label": x_label,
            "y_label": y_label,
            "floor": floor,
            "title": title,
        }

    def clear(self) -> None:
        with self.hold_sync():
            self.rounds = {}
            self.arms = {}
            self.path = {}
            self.state = "idle"
