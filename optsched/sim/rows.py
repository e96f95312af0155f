"""The visible jobs' rows of a :class:`~optsched.sim.policy.ClusterView`, kept up to date
by what changed.

A view shows each visible (arrived, unfinished) job as one row of per-job arrays, in
arrival order. Taking those rows from the run's per-job arrays at every decision
(``attained[ix]`` and the like, one tuple of ids, one set of visible jobs) costs
:math:`O(A)` per epoch for :math:`A` visible jobs, and in a loaded run (thousands of
jobs queued, few running) that is most of a simulation's time. :class:`VisibleRows`
keeps the rows instead: arrivals are appended, completed jobs removed, and only the rows
of the jobs whose counters changed since the last view (those that ran, those
preempted) are written again. A view still receives arrays of its own (copies, so that
nothing it keeps is changed afterwards) holding, value for value, what the fancy
indexing gave.

Cost per epoch: :math:`O(D \\log A)` Python-free numpy steps for :math:`D` changed
jobs, plus one ``memcpy`` of each live array; per arrival or completion epoch, one
``memcpy``-like concatenation or compression of each array and one tuple of ids (C
loops, no Python step per visible job).
"""

from __future__ import annotations

from itertools import compress
from typing import Any

import numpy as np

__all__ = ["VisibleRows"]

#: the profile columns a view shows as tuples (``None`` per job when no job has one)
PROFILE_COLUMNS = ("sensitivities", "gpu_memories", "compute_shares", "users")


class VisibleRows:
    """The rows of the visible jobs, in arrival order (ties in instance order).

    Parameters
    ----------
    rank : ndarray
        Per job index its position in arrival order (the rows stay sorted by it).
    fixed : dict of str to ndarray
        Per-job arrays that never change (a view's ``throughput_matrix``, ``workers``,
        ...): a row is taken from them once, when the job arrives.
    live : dict of str to ndarray
        The run's per-job counters (``attained``, ``executed``, ...), changed in place by
        the run; a row is read again when :meth:`touch` names its job.
    columns : dict of str to list
        Per-job Python objects shown as tuples (``ids``, ``throughput_maps``, the profile
        columns); a column missing here is shown as ``None`` per job.
    """

    def __init__(self, rank: np.ndarray, fixed: dict[str, np.ndarray],
                 live: dict[str, np.ndarray], columns: dict[str, list[Any]]) -> None:
        self.rank = rank
        self._fixed_src, self._live_src, self._col_src = fixed, live, columns
        self.ix = np.zeros(0, dtype=np.int64)  # the visible jobs, row by row
        self._ranks = np.zeros(0, dtype=rank.dtype)  # rank[ix], increasing
        self._fixed = {k: v[:0].copy() for k, v in fixed.items()}
        self._live = {k: v[:0].copy() for k, v in live.items()}
        self._cols: dict[str, list[Any]] = {k: [] for k in columns}
        self._touched: list[np.ndarray] = []
        self.members: set[int] = set()  # the visible jobs as a set
        self._shown: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.ix)

    def admit(self, new: np.ndarray) -> None:
        """Append the rows of the jobs ``new`` (arrived, in arrival order, after every
        visible job)."""
        if not len(new):
            return
        self.ix = np.concatenate([self.ix, new])
        self._ranks = np.concatenate([self._ranks, self.rank[new]])
        for k, src in self._fixed_src.items():
            self._fixed[k] = np.concatenate([self._fixed[k], src[new]])
        for k, src in self._live_src.items():
            self._live[k] = np.concatenate([self._live[k], src[new]])
        added = new.tolist()
        for k, col in self._col_src.items():
            self._cols[k] += [col[i] for i in added]
        self.members.update(added)
        self._shown = None

    def remove(self, done: list[int]) -> None:
        """Remove the rows of the visible jobs ``done``."""
        if not done:
            return
        pos = np.searchsorted(self._ranks, self.rank[np.array(done, dtype=np.int64)])
        keep = np.ones(len(self.ix), dtype=bool)
        keep[pos] = False
        self.ix = self.ix[keep]
        self._ranks = self._ranks[keep]
        for d in (self._fixed, self._live):
            for k, v in d.items():
                d[k] = v[keep]
        if len(pos) <= 32:  # a few deletions (memmove) beat a rebuild
            gone = sorted(pos.tolist(), reverse=True)
            for col in self._cols.values():
                for p in gone:
                    del col[p]
        else:
            flags = keep.tolist()
            for k, col in self._cols.items():
                self._cols[k] = list(compress(col, flags))
        self.members.difference_update(done)
        self._shown = None

    def touch(self, jobs: np.ndarray) -> None:
        """The counters of ``jobs`` changed: their rows are read again before the next
        view."""
        if len(jobs):
            self._touched.append(jobs)

    def _refresh(self) -> None:
        """Read the touched jobs' rows again (those still visible)."""
        if not self._touched:
            return
        jobs = np.unique(np.concatenate(self._touched)) if len(self._touched) > 1 \
            else self._touched[0]
        self._touched = []
        pos = np.searchsorted(self._ranks, self.rank[jobs])
        pos = np.minimum(pos, len(self._ranks) - 1)
        hit = self.ix[pos] == jobs  # a job finished since has no row
        if not hit.all():
            jobs, pos = jobs[hit], pos[hit]
        for k, src in self._live_src.items():
            self._live[k][pos] = src[jobs]

    def shown(self) -> dict[str, Any]:
        """What a view shows of the visible jobs that changes only when they do
        (read-only arrays and tuples, shared by the views until then)."""
        if self._shown is None:
            n = len(self.ix)
            shown: dict[str, Any] = {"index": self.ix}
            shown.update(self._fixed)
            for k in ("ids", "throughput_maps") + PROFILE_COLUMNS:
                col = self._cols.get(k)
                shown[k] = (None,) * n if col is None else tuple(col)
            for a in shown.values():
                if isinstance(a, np.ndarray):
                    a.flags.writeable = False
            self._shown = shown
        return self._shown

    def live(self) -> dict[str, Any]:
        """The visible jobs' counters now, as arrays of the caller's own."""
        if len(self.ix):
            self._refresh()
        return {k: v.copy() for k, v in self._live.items()}
