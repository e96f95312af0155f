r"""Gap reports: the certified bounds of an instance next to a simulation's values.

The bounds are those of :mod:`optsched.sim.bounds` (mean JCT, makespan) and
:mod:`optsched.sim.utility_bounds` (total utility); this module puts them beside what a
run achieved, as ``optsched simulate``, ``optsched.simulate`` and sweep cells report them.
"""

from __future__ import annotations

import time
from typing import Any

from optsched.core.instance import Instance
from optsched.errors import InvalidOption
from optsched.sim.bounds import Setting, lower_bounds
from optsched.sim.utility_bounds import has_utilities, utility_upper_bound

__all__ = ["gap_report", "REPORT_KEYS", "SIMULATE_MAX_COLUMNS", "SIMULATE_TIME_LIMIT"]


#: What ``simulate`` computes by default: the combinatorial bounds always, the LPs only
#: within the column budget (:func:`column_budget`): about 5 CPU seconds on Gavel's 2,000
#: jobs, whose simulation takes 30-120 s, and 17 s on the full Philly trace, whose
#: simulations take minutes. The budget, not a clock, limits their cost, so the reported
#: figures do not depend on the machine's speed or load (a 30 s limit dropped Gavel's
#: interval LP on a loaded machine, and the table showed the per-job bound instead).
SIMULATE_MAX_COLUMNS: int | None = None
SIMULATE_TIME_LIMIT: float | None = None
#: The keys :func:`gap_report` may return.
REPORT_KEYS = ("bounds", "gaps", "bound_sources", "bound_seconds", "bound_skipped", "setting",
               "gaps_note")


def gap_report(instance: Instance, result: Any, setting: Setting | None = None, *,
               max_columns: int | None = SIMULATE_MAX_COLUMNS,
               time_limit: float | None = SIMULATE_TIME_LIMIT) -> dict[str, Any]:
    r"""The certified bounds of ``instance`` next to a simulation ``result``'s values.

    Returns ``{"bounds": {"mean_jct", "makespan"}, "gaps": {"mean_jct", "makespan"},
    "bound_sources": ..., "bound_seconds": ..., "setting": ...}`` where a gap is
    value / bound, :math:`\ge 1` for every schedule: the policy is at most that factor
    from the optimum. When some job carries a utility function, ``"utility"`` is added
    to ``bounds``, ``gaps`` and ``bound_sources``: the certified *upper* bound on total
    utility (:func:`optsched.sim.utility_bounds.utility_upper_bound`) and the gap
    bound / value, :math:`\ge 1` (``None`` when the run's utility is 0). A mean-JCT or
    makespan gap is ``None`` (with ``"gaps_note"``) when some job did not
    complete, as the policy's mean then covers fewer jobs than the bound. ``setting``
    defaults to the capabilities the run's schedule declares.
    """
    if setting is None:
        setting = Setting.of(result.schedule)
    elif not isinstance(setting, Setting):
        raise InvalidOption("setting", setting, "must be an optsched.sim.bounds.Setting "
                            "(Setting.of(policy or capabilities) for a policy's)")
    t0 = time.perf_counter()
    b = lower_bounds(instance, setting, max_columns=max_columns, time_limit=time_limit)
    m = result.metrics
    out: dict[str, Any] = {
        "bounds": {"mean_jct": b.mean_jct, "makespan": b.makespan},
        "gaps": {"mean_jct": None, "makespan": None},
        "bound_sources": {"mean_jct": b.source["mean_jct"], "makespan": b.source["makespan"]},
        "bound_seconds": time.perf_counter() - t0,
        "setting": setting.describe()}
    if b.skipped:
        out["bound_skipped"] = dict(b.skipped)
    if has_utilities(instance):
        # an upper bound (utility is maximised): the gap is bound / value, >= 1, and is
        # defined with unfinished jobs too (they add 0 to the value, at most their
        # utility to the bound)
        u = utility_upper_bound(instance, setting, max_columns=max_columns,
                                time_limit=time_limit)
        out["bounds"]["utility"] = u.utility
        out["bound_sources"]["utility"] = u.source
        if u.skipped:
            out.setdefault("bound_skipped", {}).update(
                {f"utility.{k}": v for k, v in u.skipped.items()})
        value = None if m is None else m.utility
        out["gaps"]["utility"] = u.gap(value) if value is not None and value > 0 else None
        out["bound_seconds"] = time.perf_counter() - t0
    if m is None or m.n_completed < m.n_jobs:
        out["gaps_note"] = ("not every job completed: no mean-JCT or makespan gap against a "
                            "bound over all jobs")
        return out
    for key, value in (("mean_jct", m.mean_jct), ("makespan", m.makespan)):
        bound = out["bounds"][key]
        if value is not None and bound > 0:
            out["gaps"][key] = value / bound
    return out
