"""Watch a bandit loop round by round, and stop it, from another thread.

:class:`RoundLog` is the ``callback`` of :func:`bandit_tree_tools.bandit_prune`:
the loop hands it a :class:`~bandit_tree_tools.pruning._bandit.BanditRound`
after every round, it keeps what the display needs, and it answers True
(stop) once ``stop_requested`` is set. ``bandit_prune`` then finishes the
phase with the rounds played, so nothing is re-run after a Stop.

No ipywidgets here: this is plain threading and numpy.
"""

from __future__ import annotations

import threading

import numpy as np


class RoundLog:
    """Rewards and arms of every round, filled by the loop's thread and read
    (as copies) by the display thread. ``phase`` is the loop's phase
    (sequential pruning numbers arms afresh in each); -1 before any round."""

    def __init__(self):
        self._lock = threading.Lock()
        self.stop_requested = threading.Event()
        self.rewards: list[float] = []
        self.arms: list[int] = []
        self.phase = -1
        self.phase_start = 0
        self.counts = np.zeros(0, dtype=np.int64)
        self.sums = np.zeros(0, dtype=np.float64)
        self.warnings: tuple = ()

    def __call__(self, state) -> bool:
        """Record one round of ``bandit_prune``; True asks it to stop."""
        with self._lock:
            if state.phase != self.phase:
                self.phase = state.phase
                self.phase_start = len(self.rewards)
                self.counts = np.zeros(state.n_arms, dtype=np.int64)
                self.sums = np.zeros(state.n_arms, dtype=np.float64)
            self.rewards.append(float(state.reward))
            self.arms.append(int(state.arm))
            self.counts[state.arm] += 1
            self.sums[state.arm] += state.reward
            self.warnings = state.warnings
        return self.stop_requested.is_set()

    @property
    def n_rounds(self) -> int:
        return len(self.rewards)

    def snapshot(self) -> dict:
        """Copies of everything, consistent with each other."""
        with self._lock:
            rewards = np.asarray(self.rewards, dtype=np.float64)
            counts = self.counts.copy()
            sums = self.sums.copy()
            return {
                "rewards": rewards,
                "arms": np.asarray(self.arms, dtype=np.int64),
                "phase": self.phase,
                "phase_rounds": len(rewards) - self.phase_start,
                "counts": counts,
                "means": np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0),
            }


def binned_series(values: np.ndarray, max_points: int = 1200):
    """Round index, mean reward per bin and running mean at each bin's end,
    with at most ``max_points`` bins (so a long run stays cheap to send)."""
    n = values.shape[0]
    if n == 0:
        empty = np.zeros(0, dtype=np.float64)
        return empty, empty, empty
    running = np.cumsum(values) / np.arange(1, n + 1)
    if n <= max_points:
        return np.arange(n, dtype=np.float64), values.astype(np.float64), running
    edges = np.linspace(0, n, max_points + 1).astype(np.int64)
    sums = np.add.reduceat(values, edges[:-1])
    widths = np.diff(edges)
    centres = (edges[:-1] + edges[1:] - 1) / 2.0
    return centres, sums / widths, running[edges[1:] - 1]
