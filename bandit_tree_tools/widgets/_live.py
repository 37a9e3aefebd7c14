"""Watch a bandit loop round by round, and stop it, from another thread.

``bandit_prune`` asks its policy which arm to pull (``select``) and tells it
the reward (``update``) every round. Passing it a subclass of the chosen
policy class whose two methods also report to a :class:`RoundLog` gives the
panel the live rewards without touching the pruning code, and raising
:class:`StopRun` from ``select`` ends the loop promptly. The subclass adds
no behaviour: the same seed gives the same rounds as the plain policy, which
is how a stopped run is finished (re-run for the rounds already done).

No ipywidgets here: this is plain threading and numpy.
"""

from __future__ import annotations

import threading

import numpy as np


class StopRun(Exception):
    """Raised inside the bandit loop when Stop was pressed."""


class RoundLog:
    """Rewards and arms of every round, filled by the loop's thread and read
    (as copies) by the display thread. ``phase`` counts ``start`` calls:
    sequential pruning restarts the policy once per phase."""

    def __init__(self):
        self._lock = threading.Lock()
        self.stop_requested = threading.Event()
        self.rewards: list[float] = []
        self.arms: list[int] = []
        self.phase = -1
        self.phase_start = 0
        self.counts = np.zeros(0, dtype=np.int64)
        self.sums = np.zeros(0, dtype=np.float64)

    def on_start(self, n_arms: int) -> None:
        with self._lock:
            self.phase += 1
            self.phase_start = len(self.rewards)
            self.counts = np.zeros(n_arms, dtype=np.int64)
            self.sums = np.zeros(n_arms, dtype=np.float64)

    def on_update(self, arm: int, reward: float) -> None:
        with self._lock:
            self.rewards.append(float(reward))
            self.arms.append(int(arm))
            self.counts[arm] += 1
            self.sums[arm] += reward

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


def observed_policy(policy_class: type, log: RoundLog) -> type:
    """A subclass of ``policy_class`` that reports to ``log`` and stops when
    ``log.stop_requested`` is set. Its ``name`` and ``reward_family`` are the
    base class's, so the loop treats it exactly like the plain policy."""

    def start(self, n_arms, random_state=None):
        started = policy_class.start(self, n_arms, random_state=random_state)
        log.on_start(n_arms)
        return started

    def select(self):
        if log.stop_requested.is_set():
            raise StopRun
        return policy_class.select(self)

    def update(self, arm, reward):
        policy_class.update(self, arm, reward)
        log.on_update(arm, reward)

    return type(
        f"Observed{policy_class.__name__}",
        (policy_class,),
        {"start": start, "select": select, "update": update, "__module__": __name__},
    )


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
