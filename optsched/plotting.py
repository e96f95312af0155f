"""Plots of a simulation result: JCT CDF, GPU utilisation over time, Gantt chart.

Works on the JSON form of a :class:`~optsched.core.result.Result` (``Result.to_dict()``, what
``optsched simulate --out`` writes) so results can be plotted later. matplotlib is
imported lazily (the ``plot`` extra: ``pip install optsched[plot]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from optsched.errors import InvalidInput

__all__ = ["plot_result", "utilization_curve", "MatplotlibMissing"]


class MatplotlibMissing(InvalidInput):
    """matplotlib is not installed (install the ``plot`` extra)."""


def save_figure(fig, path: str | Path, *, title: str | None = None) -> Path:
    """Lay out ``fig`` (with an optional suptitle), write it to ``path`` as a 120-dpi PNG,
    creating the folder, and close it; every optsched plot is saved this way."""
    import matplotlib.pyplot as plt

    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _mpl():
    try:
        import matplotlib
    except ImportError:
        raise MatplotlibMissing("matplotlib", None, "plotting needs matplotlib: install the "
                                "'plot' extra (pip install 'optsched[plot]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _check(data: Any) -> tuple[list[dict], dict, dict]:
    if not isinstance(data, Mapping) or "schedule" not in data or "metrics" not in data:
        raise InvalidInput("(root)", type(data).__name__,
                           "not a simulation result JSON (needs 'schedule' and 'metrics')")
    sched = data["schedule"]
    allocs = sched.get("allocations") if isinstance(sched, Mapping) else None
    if not isinstance(allocs, list):
        raise InvalidInput("schedule.allocations", allocs, "must be a list")
    return allocs, data["metrics"], data.get("extra") or {}


def utilization_curve(allocations: list[Mapping], total_gpus: int) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """Step function (times, busy fraction) of GPUs held over time."""
    if not allocations:
        return np.zeros(1), np.zeros(1)
    s = np.array([a["start"] for a in allocations], float)
    e = np.array([a["end"] for a in allocations], float)
    g = np.array([a["gpus"] * a.get("share", 1.0) for a in allocations], float)
    t = np.concatenate([s, e])
    d = np.concatenate([g, -g])
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] > t[:-1] + 1e-9, True]  # the level after all events at one instant
    t, level = t[last], level[last]
    return t, level / max(total_gpus, 1)


def plot_result(data: Mapping, out_dir: str | Path, *, gantt_jobs: int = 60,
                title: str | None = None) -> list[Path]:
    """Write ``jct_cdf.png``, ``utilization.png`` and ``gantt.png`` into ``out_dir``."""
    allocs, metrics, extra = _check(data)
    plt = _mpl()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    label = title or f"{data.get('method', '')} ({extra.get('instance', '')})"
    files = []

    jct = np.sort(np.array(list((metrics.get("jct") or {}).values()), float)) / 3600.0
    fig, ax = plt.subplots(figsize=(6, 4))
    if jct.size:
        ax.step(jct, np.arange(1, jct.size + 1) / jct.size, where="post")
        ax.set_xscale("log" if jct.min() > 0 and jct.max() / jct.min() > 100 else "linear")
    ax.set_xlabel("job completion time (h)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"JCT CDF - {label}")
    ax.grid(alpha=0.3)
    files.append(save_figure(fig, out / "jct_cdf.png"))

    total = int(extra.get("total_gpus") or 0) or max(
        (sum(a["gpus"] for a in allocs) if allocs else 1), 1)
    t, u = utilization_curve(allocs, total)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.step(t / 3600.0, u, where="post", lw=0.8)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (h)")
    ax.set_ylabel(f"GPU utilisation ({total} GPUs)")
    ax.set_title(f"Utilisation - {label}")
    ax.grid(alpha=0.3)
    files.append(save_figure(fig, out / "utilization.png"))

    first: dict[str, float] = {}
    for a in allocs:
        first[a["job"]] = min(first.get(a["job"], np.inf), a["start"])
    jobs = sorted(first, key=lambda j: (first[j], j))[:gantt_jobs]
    row = {j: i for i, j in enumerate(jobs)}
    types = sorted({a["gpu_type"] for a in allocs})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    tcol = {t_: colors[i % len(colors)] for i, t_ in enumerate(types)}
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.18 * len(jobs) + 1.5)))
    for a in allocs:
        if a["job"] in row:
            ax.barh(row[a["job"]], (a["end"] - a["start"]) / 3600.0,
                    left=a["start"] / 3600.0, height=0.7, color=tcol[a["gpu_type"]], lw=0)
    if types:
        # explicit patches: empty bar containers would all take the first cycle colour
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=c, label=t_) for t_, c in tcol.items()],
                  loc="lower right", fontsize=8)
    ax.set_yticks(range(len(jobs)))
    ax.set_yticklabels(jobs, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("time (h)")
    ax.set_title(f"Gantt (first {len(jobs)} jobs) - {label}")
    files.append(save_figure(fig, out / "gantt.png"))
    return files
