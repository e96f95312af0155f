r"""What the four claims of Hadar's IPDPS'24 abstract share: the runs and their figures.

The abstract (Sultana et al., IPDPS'24) reports, from trace-driven simulation, that Hadar
beats a YARN-based production scheduler (YARN-CS) and Gavel: mean JCT about 3x better
than YARN-CS and 2.5x better than Gavel, 13 % shorter queueing delay and 1.5 % better
finish-time fairness. Neither the paper's trace, cluster, utilities nor its Gavel
configuration is public, so the closest public shape is Gavel's own: the shipped
Philly-derived trace (``gavel-philly-2000``, continuous Poisson arrivals at its
recorded times, 1.6 jobs/h) on Gavel's simulated cluster (``gavel-108``: 36 V100 +
36 P100 + 36 K80), 6-minute rounds, with

* Hadar = ``hadar.online`` (:class:`optsched.hadar.policy.HadarPolicy`, its defaults) on
  OASiS-style sigmoid utilities (:func:`optsched.hadar.assign_utilities`, the same as
  the ``hadar_vs_gavel`` row; Hadar needs utilities and the trace has none);
* Gavel = ``gavel.max_min_fairness``, Gavel's heterogeneity-aware LAS: Gavel's
  headline JCT policy (OSDI'20 §7, the 3.5x of the ``gavel_hetero`` row) and the one the
  ``hadar_vs_gavel`` row uses; the abstract names no Gavel policy;
* YARN-CS = ``tiresias.yarn_fifo`` (arrival order, no preemption, head-of-line
  blocking, consolidated placement on the fastest free type), as in Tiresias.

Every figure comes from :func:`optsched.core.metrics.compute_metrics`: mean JCT, mean
queueing delay (first start - arrival), mean waiting time (time holding no GPU) and
mean finish-time fairness :math:`\rho`. Each ratio is the baseline's figure over
Hadar's, so a factor above 1 means Hadar is better.

Where a claim does not reproduce, the cause is measured on other settings
(:data:`ALTERNATIVES`): a prefix of the trace, the same prefix at half the arrival rate
(load), and Hadar with constant utilities (admission of every job), next to the
certified lower bound on the mean JCT of any schedule of the full trace.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optsched.core.instance import Instance
from optsched.core.metrics import Metrics
from optsched.studies.reproduce.claim import SEED, run_gaps

__all__ = ["POLICIES", "TRACE", "CLUSTER", "ALTERNATIVES", "BOUND_OPTIONS", "Setting", "settings",
           "instance", "measure", "ratio", "shape_text", "ladder", "load_effect",
           "utility_effect", "size_effect", "SHARED_RUNS",
           "jct_plot"]

#: label -> registered policy
POLICIES: Mapping[str, str] = {"Hadar": "hadar.online", "Gavel": "gavel.max_min_fairness",
                               "YARN-CS": "tiresias.yarn_fifo"}
TRACE, CLUSTER = "gavel-philly-2000", "gavel-108"


@dataclass(frozen=True)
class Setting:
    """One simulated setting: the first ``jobs`` jobs of :data:`TRACE`, arrivals divided
    by ``load``, utilities of kind ``utilities``, the ``policies`` (labels) run on it."""

    key: str
    label: str
    jobs: int | None
    load: float = 1.0
    utilities: str = "sigmoid"
    policies: tuple[str, ...] = tuple(POLICIES)


#: the settings that locate a claim's cause, by mode: (quick, full)
ALTERNATIVES = {
    False: (Setting("prefix", "first 300 jobs", 300),
            Setting("half_rate", "first 300 jobs at half the arrival rate", 300, 0.5),
            Setting("constant", "first 300 jobs, constant utilities", 300,
                    utilities="constant", policies=("Hadar",))),
    True: (Setting("half_rate", "first 120 jobs at half the arrival rate", 120, 0.5),
           Setting("constant", "first 120 jobs, constant utilities", 120,
                   utilities="constant", policies=("Hadar",))),
}

#: said in each row's notes: why the seconds of all but one of the four rows are ~0
SHARED_RUNS = ("The four rows of the abstract share one set of runs (and the bound); the "
               "first of them measured in a run carries their seconds.")

#: the mean-JCT bound's options, by mode: on the whole trace jobs wait hundreds of
#: hours, so the interval LP's window must reach that far (docs/bounds.md: 35.4 h with
#: the defaults, 40.5 h over 1,000 hours in about 20 s CPU)
BOUND_OPTIONS: Mapping[bool, Mapping[str, Any]] = {
    False: {"window": 1000 * 3600.0, "max_columns": 200_000}, True: {}}


def settings(quick: bool) -> tuple[Setting, ...]:
    """The headline setting (the whole trace; its first 120 jobs when ``quick``) and the
    alternatives."""
    main = Setting("main", "first 120 jobs" if quick else "whole trace",
                   120 if quick else None)
    return (main, *ALTERNATIVES[quick])


def instance(s: Setting) -> Instance:
    """The jobs of ``s`` on :data:`CLUSTER`, with their utilities."""
    from optsched.catalog import read_trace
    from optsched.hadar import assign_utilities

    inst = read_trace(TRACE, CLUSTER, jobs=s.jobs, load=s.load)
    return assign_utilities(inst, s.utilities, seed=SEED)


@functools.lru_cache(maxsize=2)
def measure(quick: bool) -> dict[str, Any]:
    """Every setting's runs: ``{"runs": {setting key: {label: Metrics}}, "instances":
    {key: Instance}, "gaps": run_gaps of the headline runs (mean JCT), "results":
    the headline Results}``. A run that leaves a job unfinished is an error: the
    figures compare finished runs only."""
    from optsched.registry import simulate

    runs: dict[str, dict[str, Metrics]] = {}
    insts: dict[str, Instance] = {}
    main_results = {}
    for s in settings(quick):
        inst = insts[s.key] = instance(s)
        runs[s.key] = {}
        for label in s.policies:
            res = simulate(inst, POLICIES[label], seed=SEED, progress=False, bounds=False)
            m = res.metrics
            if m is None or not m.complete:
                done = None if m is None else m.n_completed
                raise RuntimeError(f"{label} ({POLICIES[label]}) on {s.label}: {done} of "
                                   f"{inst.n_jobs} jobs completed; the claims compare "
                                   "finished runs only")
            runs[s.key][label] = m
            if s.key == "main":
                main_results[label] = res
    gaps = run_gaps(insts["main"], main_results, ("mean_jct",), "main",
                    bound_options=BOUND_OPTIONS[quick])
    return {"runs": runs, "instances": insts, "gaps": gaps, "results": main_results}


def ratio(m: Mapping[str, Metrics], field: str, baseline: str) -> float:
    """``baseline``'s ``field`` over Hadar's (> 1: Hadar better)."""
    return float(getattr(m[baseline], field)) / float(getattr(m["Hadar"], field))


def shape_text(quick: bool) -> str:
    """The headline instance, in words."""
    inst = measure(quick)["instances"]["main"]
    what = f"first {inst.n_jobs} jobs of " if quick else "all 2,000 jobs of "
    return (f"{'quick: ' if quick else ''}{what}{TRACE} (Philly-derived, continuous "
            f"arrivals, 1.6 jobs/h) on {CLUSTER} (36 V100 + 36 P100 + 36 K80), 6-minute "
            "rounds, OASiS-style sigmoid utilities")


def ladder(quick: bool, field: str, baseline: str, unit: float = 3600.0,
           fmt: str = "{:.3g} h") -> str:
    """``baseline`` against Hadar on ``field`` in every setting that ran both, and
    Hadar's figure wherever it ran: the measured cause of a claim's gap."""
    got = measure(quick)
    parts = []
    for s in settings(quick):
        m = got["runs"][s.key]
        h = fmt.format(getattr(m["Hadar"], field) / unit)
        if baseline in m:
            b = fmt.format(getattr(m[baseline], field) / unit)
            parts.append(f"{s.label}: {baseline} {b} vs Hadar {h} "
                         f"({ratio(m, field, baseline):.2f}x)")
        else:
            parts.append(f"{s.label}: Hadar {h}")
    return "; ".join(parts)


def load_effect(quick: bool, field: str, baseline: str) -> str:
    """How ``baseline``'s factor against Hadar on ``field`` moves when the same jobs
    arrive at half the rate (the half-rate setting against the setting of the same
    jobs at the trace's rate), as a sentence stating the measured direction."""
    got = measure(quick)["runs"]
    same = "main" if quick else "prefix"
    n = measure(quick)["instances"]["half_rate"].n_jobs
    a = ratio(got[same], field, baseline)
    b = ratio(got["half_rate"], field, baseline)
    moved = "rises" if b > a else "falls" if b < a else "stays"
    return (f"on the same {n} jobs at half the arrival rate the factor {moved} from "
            f"{a:.2f}x to {b:.2f}x")


def size_effect(quick: bool, field: str, baseline: str) -> str:
    """``baseline``'s factor against Hadar on ``field`` on the prefix of the trace and on
    the whole trace (the queues a longer stream builds), as a sentence; ``""`` when
    ``quick`` (no whole-trace run)."""
    if quick:
        return ""
    got = measure(quick)["runs"]
    n = measure(quick)["instances"]["prefix"].n_jobs
    a, b = ratio(got["prefix"], field, baseline), ratio(got["main"], field, baseline)
    return f"the factor is {a:.2f}x on the first {n} jobs and {b:.2f}x on the whole trace"


def utility_effect(quick: bool, field: str, what: str, unit: float = 3600.0,
                   fmt: str = "{:.3g} h") -> str:
    """Hadar's ``field`` (named ``what``) with constant utilities (value independent of
    completion time) against the sigmoid ones, on the same jobs, as a sentence."""
    got = measure(quick)["runs"]
    same = "main" if quick else "prefix"
    n = measure(quick)["instances"]["constant"].n_jobs
    c = getattr(got["constant"]["Hadar"], field)
    g = getattr(got[same]["Hadar"], field)
    side = "higher" if c > g else "lower" if c < g else "equal"
    return (f"Hadar with constant utilities (value independent of completion time) has a "
            f"{what} of {fmt.format(c / unit)} against {fmt.format(g / unit)} with the "
            f"sigmoid ones on the same {n} jobs ({side})")


def jct_plot(quick: bool, img: Path) -> list[Path]:
    """The JCT CDF of the three headline runs (none without matplotlib)."""
    from optsched.plotting import can_plot, jct_cdf

    if not can_plot():
        return []
    m = measure(quick)["runs"]["main"]
    return [jct_cdf({k: list(v.jct.values()) for k, v in m.items()},
                    img / "reproduce_hadar_ipdps_jct_cdf.png",
                    title=f"Hadar vs Gavel vs YARN-CS, {shape_text(quick)}")]
