"""Every figure optsched draws, each drawn once: JCT CDFs, GPU utilisation over time,
Gantt charts (per device, or per job coloured by GPU type), sweep lines, and what
``optsched plot`` draws: the three figures of one or several simulation results overlaid
(:func:`plot_results`), and JCT against load of sweep tables (:func:`plot_sweeps`).

The functions take plain data (JCTs, schedules or the JSON form of allocations) and write
a 120-dpi PNG through :func:`save_figure`, atomically (:mod:`optsched.core.files`): a
failed or interrupted save leaves the previous figure, never a truncated one. matplotlib
is imported lazily (the ``plot`` extra: ``pip install optsched[plot]``); without it
:class:`MatplotlibMissing` names the extra to install.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.files import ensure_folder, open_atomic
from optsched.core.instance import Instance
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidInput, InvalidOption

__all__ = ["MatplotlibMissing", "save_figure", "can_plot", "utilization_curve", "jct_cdf",
           "utilization", "gantt_by_device", "gantt_by_job", "gantt_panels", "bars", "lines",
           "sweep_lines", "plot_result", "plot_results", "plot_sweeps", "sweep_figure",
           "run_label", "RESULT_FIGURES"]

#: the files :func:`plot_result` writes in its folder
RESULT_FIGURES = ("jct_cdf.png", "utilization.png", "gantt.png")


class MatplotlibMissing(InvalidInput):
    """matplotlib is not installed (install the ``plot`` extra)."""


def can_plot() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _mpl() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise MatplotlibMissing("matplotlib", None, "plotting needs matplotlib: install the "
                                "'plot' extra (pip install 'optsched[plot]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig: Any, path: str | Path, *, title: str | None = None) -> Path:
    """Lay out ``fig`` (with an optional suptitle), write it to ``path`` at 120 dpi in the
    format its suffix names (PNG without one), creating the folder, and close it; every
    optsched figure is saved this way.

    The image is drawn into a temporary file beside ``path`` and renamed over it
    (:func:`optsched.core.files.open_atomic`); a folder or file that cannot be written
    is :class:`~optsched.errors.InvalidOutput` naming it.
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        ensure_folder(path.parent, field="path")
        with open_atomic(path, "wb", field="path") as fh:
            fig.savefig(fh, dpi=120, format=path.suffix.lstrip(".").lower() or "png")
    finally:
        plt.close(fig)
    return path


def _as_dicts(allocations: Iterable[Allocation | Mapping[str, Any]]) -> list[Mapping]:
    return [a.to_dict() if isinstance(a, Allocation) else a for a in allocations]


def utilization_curve(allocations: Iterable[Allocation | Mapping[str, Any]],
                      total_gpus: int) -> tuple[np.ndarray, np.ndarray]:
    """Step function (times, busy fraction) of GPUs held over time (shares weighted)."""
    allocs = _as_dicts(allocations)
    if not allocs:
        return np.zeros(1), np.zeros(1)
    s = np.array([a["start"] for a in allocs], float)
    e = np.array([a["end"] for a in allocs], float)
    g = np.array([a["gpus"] * a.get("share", 1.0) for a in allocs], float)
    t = np.concatenate([s, e])
    d = np.concatenate([g, -g])
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] > t[:-1] + 1e-9, True]  # the level after all events at one instant
    return t[last], level[last] / max(total_gpus, 1)


def jct_cdf(curves: Mapping[str, Sequence[float]], path: str | Path, *, title: str = "",
            unit: float = 3600.0, unit_name: str = "h") -> Path:
    """JCT CDFs of several runs on one axes (JCTs in seconds, shown in ``unit_name``)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    lo, hi = math.inf, 0.0
    for label, jct in curves.items():
        x = np.sort(np.asarray(jct, float)) / unit
        if x.size == 0:
            continue
        lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post",
                label=f"{label} (mean {x.mean():.3g} {unit_name})")
    if hi > 0 and lo > 0 and hi / lo > 100:
        ax.set_xscale("log")
    ax.set_xlabel(f"job completion time ({unit_name})")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize=8, loc="lower right")
    return save_figure(fig, path)


def utilization(curves: Mapping[str, Schedule | Iterable[Allocation | Mapping[str, Any]]],
                total_gpus: int | Mapping[str, int], path: str | Path, *,
                title: str = "") -> Path:
    """GPU utilisation over time of several schedules (or allocation lists), each as the
    busy share of its cluster's GPUs: ``total_gpus`` is one count for all, or one per
    label (runs on clusters of different sizes; each legend entry then names its
    count)."""
    plt = _mpl()
    totals = {label: int(total_gpus[label] if isinstance(total_gpus, Mapping) else total_gpus)
              for label in curves}
    same = len(set(totals.values())) <= 1
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for label, sched in curves.items():
        allocs = sched.allocations if isinstance(sched, Schedule) else sched
        t, u = utilization_curve(allocs, totals[label])
        ax.step(t / 3600.0, u, where="post", lw=0.9,
                label=label if same else f"{label} ({totals[label]} GPUs)")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (h)")
    ax.set_ylabel(f"GPU utilisation ({next(iter(totals.values()))} GPUs)" if same and totals
                  else "GPU utilisation (share of each run's GPUs)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if len(curves) > 1:
        ax.legend(fontsize=8)
    return save_figure(fig, path)


def _gpu_rows(instance: Instance, sched: Schedule) -> dict[int, list[int]]:
    """Allocation index -> the GPU rows it occupies: each (node, type) has one row per
    GPU, and an allocation of g GPUs takes g rows free at its start, keeping a job on
    the rows it held before where it can (a valid exclusive schedule always fits)."""
    base: dict[tuple[str, str], int] = {}
    row = 0
    for n in instance.cluster.nodes:
        for t, c in n.gpus.items():
            base[(n.name, t)] = row
            row += c
    free_at: dict[tuple[str, str], list[float]] = {
        (n.name, t): [-math.inf] * c for n in instance.cluster.nodes for t, c in n.gpus.items()}
    last: dict[tuple[str, str, str], list[int]] = {}
    out: dict[int, list[int]] = {}
    order = sorted(range(len(sched.allocations)), key=lambda i: (sched.allocations[i].start, i))
    for i in order:
        a = sched.allocations[i]
        key = (a.node, a.gpu_type)
        free = [g for g, t in enumerate(free_at[key]) if t <= a.start + 1e-9]
        prev = [g for g in last.get((a.job, *key), []) if g in free]
        pick = (prev + [g for g in free if g not in prev])[:a.gpus]
        if len(pick) < a.gpus:  # shared GPUs (fractions): draw on the least busy rows
            pick = sorted(range(len(free_at[key])), key=lambda g: free_at[key][g])[:a.gpus]
        for g in pick:
            free_at[key][g] = a.end
        last[(a.job, *key)] = pick
        out[i] = [base[key] + g for g in pick]
    return out


def gantt_by_device(instance: Instance, schedules: Mapping[str, Schedule], path: str | Path,
                    *, title: str = "") -> Path:
    """Side-by-side Gantt charts (one row per GPU, grouped by node and type; time in
    seconds) of several schedules of the same instance, with each panel's mean JCT and
    makespan."""
    from optsched.core.metrics import compute_metrics

    plt = _mpl()
    labels = [f"{n.name} {t}#{g}" for n in instance.cluster.nodes for t, c in n.gpus.items()
              for g in range(c)]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    jcol = {j.id: colors[i % len(colors)] for i, j in enumerate(instance.jobs)}
    fig, axes = plt.subplots(1, len(schedules), figsize=(4.6 * len(schedules),
                                                          0.28 * len(labels) + 1.8),
                             squeeze=False, sharey=True)
    horizon = max((a.end for s in schedules.values() for a in s.allocations), default=1.0)
    for ax, (label, sched) in zip(axes[0], schedules.items()):
        m = compute_metrics(instance, sched)
        for i, rows in _gpu_rows(instance, sched).items():
            a = sched.allocations[i]
            for y in rows:
                ax.barh(y, a.end - a.start, left=a.start, height=0.8, color=jcol[a.job],
                        edgecolor="black", lw=0.4)
                ax.text((a.start + a.end) / 2, y, a.job, ha="center", va="center",
                        fontsize=6)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xlim(0, horizon * 1.03)
        ax.invert_yaxis()
        ax.set_xlabel("time (s)")
        stats = (f"mean JCT {m.mean_jct:.4g} s, makespan {m.makespan:.4g} s"
                 if m.mean_jct is not None else "no job completed")
        ax.set_title(f"{label}\n{stats}", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, path, title=title)


def gantt_by_job(allocations: Iterable[Allocation | Mapping[str, Any]], path: str | Path, *,
                 jobs: int = 60, title: str = "") -> Path:
    """A Gantt chart with one row per job (the first ``jobs`` to start), bars coloured by
    GPU type, time in hours."""
    allocs = _as_dicts(allocations)
    return gantt_panels({title or f"Gantt (first {min(jobs, _n_jobs(allocs))} jobs)": allocs},
                        path, jobs=jobs)


def _n_jobs(allocs: Sequence[Mapping]) -> int:
    return len({a["job"] for a in allocs})


def gantt_panels(runs: Mapping[str, Iterable[Allocation | Mapping[str, Any]]],
                 path: str | Path, *, jobs: int = 60, title: str | None = None) -> Path:
    """One Gantt panel per run (label -> allocations), stacked on a shared time axis in
    hours: a row per job (the first ``jobs`` to start in that run), bars coloured by GPU
    type with one colour per type across the panels, and one legend."""
    from matplotlib.patches import Patch

    plt = _mpl()
    panels = {label: _as_dicts(a) for label, a in runs.items()}
    types = sorted({a["gpu_type"] for allocs in panels.values() for a in allocs})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    tcol = {t: colors[i % len(colors)] for i, t in enumerate(types)}
    heights = [max(3.0, 0.18 * min(jobs, _n_jobs(a)) + 1.5) for a in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, sum(heights)), squeeze=False,
                             sharex=True, gridspec_kw={"height_ratios": heights})
    for ax, (label, allocs) in zip(axes[:, 0], panels.items()):
        first: dict[str, float] = {}
        for a in allocs:
            first[a["job"]] = min(first.get(a["job"], np.inf), a["start"])
        shown = sorted(first, key=lambda j: (first[j], j))[:jobs]
        row = {j: i for i, j in enumerate(shown)}
        for a in allocs:
            if a["job"] in row:
                ax.barh(row[a["job"]], (a["end"] - a["start"]) / 3600.0,
                        left=a["start"] / 3600.0, height=0.7, color=tcol[a["gpu_type"]], lw=0)
        ax.set_yticks(range(len(shown)))
        ax.set_yticklabels(shown, fontsize=6)
        ax.invert_yaxis()
        ax.set_title(label, fontsize=10)
    if types:
        # explicit patches: empty bar containers would all take the first cycle colour
        axes[0, 0].legend(handles=[Patch(color=c, label=t) for t, c in tcol.items()],
                          loc="lower right", fontsize=8)
    axes[-1, 0].set_xlabel("time (h)")
    return save_figure(fig, path, title=title)


def bars(values: Mapping[str, float], path: str | Path, *, ylabel: str = "",
         title: str = "") -> Path:
    """One bar per label, its value written on top."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(values)), 3))
    labels, vals = list(values), list(values.values())
    ax.bar(labels, vals, color=[f"C{i}" for i in range(len(vals))])
    for i, v in enumerate(vals):
        ax.text(i, v, f"{v:g}", ha="center", va="bottom")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=7)
    return save_figure(fig, path)


def lines(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path, *,
          xlabel: str = "", ylabel: str = "", logy: bool = False, title: str = "") -> Path:
    """One line per label through its ``(x, y)`` points (e.g. a price function)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o", ms=3, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return save_figure(fig, path)


def sweep_lines(rows: Iterable[Mapping[str, Any]], y: str, path: str | Path, *,
                x: str = "size", logy: bool = False, logx: bool = False,
                title: str | None = None, group: str = "model", line: str = "method",
                xlabel: str | None = None, ylabel: str | None = None,
                scale: float = 1.0) -> Path:
    """Column ``y`` against ``x`` of a tidy table: one panel per ``group`` value, one line
    per ``line`` value (mean over the other columns, min-max band). Rows without a
    number in ``y`` are left out. Where the rows carry a certified lower bound on ``y``
    (a column ``bound_<y>``, as simulation sweeps do), each panel also draws the bound
    under the lines: at each ``x`` the least bound of the rows there (mean over seeds),
    which holds for every policy drawn. ``y`` (and its bound) is divided by ``scale``
    (3600 shows seconds in hours); the axes are labelled ``xlabel`` and ``ylabel``
    (default: the column names)."""
    plt = _mpl()
    rows = list(rows)
    groups: dict[str, dict[str, dict[float, list[float]]]] = {}
    bounds: dict[str, dict[float, dict[Any, float]]] = {}
    for r in rows:
        if r.get(y) is None or r.get(x) is None:
            continue
        groups.setdefault(str(r[group]), {}).setdefault(str(r[line]), {}).setdefault(
            float(r[x]), []).append(float(r[y]) / scale)
        b = r.get(f"bound_{y}")
        if b is not None:
            at = bounds.setdefault(str(r[group]), {}).setdefault(float(r[x]), {})
            seed = r.get("seed")
            at[seed] = min(at.get(seed, float(b) / scale), float(b) / scale)
    if not groups:
        raise InvalidOption("y", y, "no row has a number in this column")
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.8), squeeze=False)
    for ax, (name, lines) in zip(axes[0], sorted(groups.items())):
        for label, pts in sorted(lines.items()):
            xs = np.array(sorted(pts))
            vals = [np.array(pts[v]) for v in xs]
            ax.plot(xs, [v.mean() for v in vals], marker="o", label=label)
            ax.fill_between(xs, [v.min() for v in vals], [v.max() for v in vals], alpha=0.2)
        if name in bounds:
            bx = np.array(sorted(bounds[name]))
            ax.plot(bx, [np.mean(list(bounds[name][v].values())) for v in bx], "k--",
                    label="certified lower bound")
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel or y)
        if logy:
            ax.set_yscale("log")
        if logx:
            ax.set_xscale("log")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path, title=title)


def _check(data: Any, name: str = "(root)") -> tuple[list[dict], Mapping, Mapping]:
    if not isinstance(data, Mapping) or "schedule" not in data or "metrics" not in data:
        raise InvalidInput(name, type(data).__name__,
                           "not a simulation result JSON (needs 'schedule' and 'metrics')")
    sched = data["schedule"]
    allocs = sched.get("allocations") if isinstance(sched, Mapping) else None
    if not isinstance(allocs, list):
        raise InvalidInput(f"{name}: schedule.allocations", allocs, "must be a list")
    Schedule.from_dict(sched)  # a malformed allocation is an error naming its field
    metrics = data["metrics"]
    if not isinstance(metrics, Mapping) or not isinstance(metrics.get("jct", {}), Mapping):
        raise InvalidInput(f"{name}: metrics", metrics, "must be an object with 'jct' per job")
    return allocs, metrics, data.get("extra") or {}


def run_label(data: Mapping) -> str:
    """A result's legend entry: the name of the policy (or method) that produced it."""
    return str(data.get("method") or (data.get("extra") or {}).get("policy") or "?")


def plot_result(data: Mapping, out_dir: str | Path, *, gantt_jobs: int = 60,
                title: str | None = None) -> list[Path]:
    """``jct_cdf.png``, ``utilization.png`` and ``gantt.png`` of a simulation result's JSON
    form (``Result.to_dict()``, what ``optsched simulate --out`` writes): the figures of
    :func:`plot_results` for one run, labelled ``title`` (default: its policy and
    instance)."""
    _, _, extra = _check(data)
    label = title or f"{data.get('method', '')} ({extra.get('instance', '')})"
    return plot_results({label: data}, out_dir, gantt_jobs=gantt_jobs)


def plot_results(runs: Mapping[str, Mapping], out_dir: str | Path, *, gantt_jobs: int = 60,
                 title: str | None = None) -> list[Path]:
    """:data:`RESULT_FIGURES` of several simulation results overlaid (label -> the
    result's JSON form, ``Result.to_dict()``): their JCT CDFs on one axes and their GPU
    utilisation over time on one axes, one legend entry per run (the label, and the
    run's mean JCT on the CDF), and one Gantt panel per run (its first ``gantt_jobs``
    jobs). One run is drawn the same way (:func:`plot_result`).

    Raises
    ------
    InvalidInput
        a run is not a simulation result (naming its label), or ``runs`` is empty.
    """
    if not runs:
        raise InvalidInput("runs", {}, "no result to plot")
    checked = {label: _check(data, label) for label, data in runs.items()}
    _mpl()
    out = Path(out_dir)
    cdf, util, gantt = (out / name for name in RESULT_FIGURES)
    instances = {str(extra.get("instance", "")) for _, _, extra in checked.values()}
    what = title or (next(iter(runs)) if len(runs) == 1 else
                     f"{len(runs)} runs on {instances.pop()}" if len(instances) == 1
                     and "" not in instances else f"{len(runs)} runs")
    totals = {label: int(extra.get("total_gpus") or 0) or max(
        (sum(a["gpus"] for a in allocs) if allocs else 1), 1)
        for label, (allocs, _, extra) in checked.items()}
    return [
        jct_cdf({label: list((m.get("jct") or {}).values())
                 for label, (_, m, _) in checked.items()}, cdf, title=f"JCT CDF - {what}"),
        utilization({label: allocs for label, (allocs, _, _) in checked.items()}, totals,
                    util, title=f"Utilisation - {what}"),
        gantt_panels({f"Gantt (first {gantt_jobs} jobs) - {label}": allocs
                      for label, (allocs, _, _) in checked.items()}, gantt, jobs=gantt_jobs),
    ]


def sweep_figure(rows: Iterable[Mapping[str, Any]]) -> tuple[str, str]:
    """``(x, file name)`` of :func:`plot_sweeps` for these rows: JCT against the arrival
    rate when the simulation rows carry one, else against the load factor."""
    rate = any(r.get("kind") == "simulate" and r.get("rate") is not None for r in rows)
    x = "rate" if rate else "load"
    return x, f"jct_vs_{x}.png"


def plot_sweeps(tables: Mapping[str, Iterable[Mapping[str, Any]]], out_dir: str | Path, *,
                title: str | None = None) -> list[Path]:
    """Mean JCT (hours) against load (or arrival rate) of the simulation rows of one or
    several sweep tables (name -> rows, :func:`optsched.studies.sweep.load_table`): one
    panel per trace, one line per policy (mean over seeds, min-max band) and the
    certified lower bound where the rows carry it. A policy that appears in several
    tables gets one line per table, labelled ``policy (table name)``.

    Raises
    ------
    InvalidInput
        a table has no simulation row with a mean JCT (naming it).
    """
    sims: dict[str, list[Mapping[str, Any]]] = {}
    for name, rows in tables.items():
        sims[name] = [r for r in rows if r.get("kind") == "simulate"
                      and r.get("mean_jct") is not None]
        if not sims[name]:
            raise InvalidInput(name, "sweep table", "has no simulation row with a mean JCT "
                               "(JCT against load needs a sweep with a [simulate] table)")
    seen: dict[tuple[Any, Any], set[str]] = {}
    for name, rows in sims.items():
        for r in rows:
            seen.setdefault((r.get("trace"), r.get("method")), set()).add(name)
    merged = [{**r, "line": r.get("method") if len(seen[(r.get("trace"), r.get("method"))]) == 1
               else f"{r.get('method')} ({name})"}
              for name, rows in sims.items() for r in rows]
    x, file = sweep_figure(merged)
    xlabel = "arrival rate (jobs/h)" if x == "rate" else "load factor (arrivals sped up)"
    return [sweep_lines(merged, "mean_jct", Path(out_dir) / file, x=x, group="trace",
                        line="line", xlabel=xlabel, ylabel="mean JCT (h)", scale=3600.0,
                        title=title or f"Mean JCT against {xlabel.split(' (')[0]}")]
