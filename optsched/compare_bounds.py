r"""The certified bound of a comparison (:func:`optsched.compare.compare`) and each row's
gap to it.

Two kinds of certified bound can stand beside a model's rows:

* the **simulator's bound** (:mod:`optsched.sim.bounds`, :mod:`optsched.sim.utility_bounds`),
  valid for every schedule in the setting of the model's capabilities
  (:func:`optsched.registry.capabilities`), hence for every row whose value is such a
  schedule's objective. It covers the models whose objective is a function of the
  completion times of a schedule of that setting (:data:`COVERED`):

  ================  ======================================  ==============================
  model             objective                               bound
  ================  ======================================  ==============================
  tiresias, allox   :math:`\sum_j (C_j - r_j)`              :math:`n \cdot` mean JCT bound
  hadar             :math:`\sum_j w_j f_j(C_j - r_j)`       utility upper bound
  hadare            utility / makespan / :math:`\sum w_j    utility / makespan /
                    (C_j - r_j)` (``objective``)            :math:`\sum w \cdot` weighted
                                                            mean JCT bound
  salus             makespan (``objective="makespan"``),    makespan bound
                    all jobs released together
  ================  ======================================  ==============================

  A slotted model (Hadar, HadarE, Tiresias) records a completion at its slot's end, no
  earlier than the instant the work is done, and credits progress at most at the true
  rate; both only move its value away from the bound, so the bound holds for it.
  Not covered: Gavel's and Synergy's objectives (a round's allocation: fairness,
  throughput, cost, not completion times), Salus' ``admitted`` and ``gpus`` objectives,
  and Salus' makespan with distinct release dates (its lane plan's makespan is measured
  from one common release).
* the **exact method's dual bound** (``Result.bound`` of the row ``exact``): a bound on
  the optimum of the model's own program, valid for the rows whose method stays inside
  that program's feasible set (not ``Method.outside_exact``).

Each row gets the best bound valid for it and its gap, :math:`v / b \ge 1` for a
minimisation and :math:`b / v \ge 1` for a maximisation: the row is at most that factor
from the optimum. A model or row no bound covers gets ``None`` with the reason in
``Row.bound_note``, never a silent blank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from optsched.core.instance import Instance
from optsched.errors import InvalidInput

__all__ = ["COVERED", "NOT_COVERED", "simulator_bound", "certify_rows"]

#: Models whose objective the simulator's bounds cover (see the module docstring).
COVERED = ("tiresias", "allox", "hadar", "hadare", "salus")
#: Why the others are not covered.
NOT_COVERED = {
    "gavel": "Gavel's objective is a property of one round's allocation (fairness, "
             "throughput or cost), not of completion times: no schedule bound applies",
    "synergy": "Synergy's objective is the normalised throughput of one round's jobs, not "
               "a function of completion times: no schedule bound applies",
}


def _objective_of(model: str, options: Mapping[str, Any],
                  instance: Instance) -> tuple[str | None, str]:
    """``(kind, reason)``: the schedule quantity the model's objective is, one of
    ``"total_jct"``, ``"weighted_total_jct"``, ``"makespan"``, ``"utility"``, or ``None``
    with the reason."""
    if model in ("tiresias", "allox"):
        return "total_jct", ""
    if model == "hadar":
        return "utility", ""
    if model == "hadare":
        obj = options.get("objective", "utility")
        return {"utility": "utility", "makespan": "makespan",
                "jct": "weighted_total_jct"}.get(obj), f"HadarE objective {obj!r}"
    if model == "salus":
        obj = options.get("objective", "makespan")
        if obj != "makespan":
            return None, (f"Salus' {obj!r} objective counts jobs or GPUs of a lane plan, "
                          "not completion times: no schedule bound applies")
        if len({j.arrival for j in instance.jobs}) > 1:
            return None, ("Salus' makespan is that of a lane plan from one common release; "
                          "its jobs arrive at different times, outside the bound's setting")
        return "makespan", ""
    return None, NOT_COVERED.get(model, f"model {model!r}: its objective is not one the "
                                        "simulator's bounds cover (mean JCT, makespan, "
                                        "utility of a schedule)")


def simulator_bound(instance: Instance, model: str, options: Mapping[str, Any] | None = None,
                    ) -> tuple[float | None, str]:
    """The simulator's certified bound on ``model``'s objective over ``instance``, in the
    setting of the model's capabilities: ``(value, source)``, or ``(None, reason)`` when
    the objective is not covered (module docstring)."""
    from optsched.registry import capabilities
    from optsched.sim.bounds import Setting, lower_bounds
    from optsched.sim.utility_bounds import utility_upper_bound

    kind, why = _objective_of(model, options or {}, instance)
    if kind is None:
        return None, why
    setting = Setting.of(capabilities(model))
    if kind == "utility":
        u = utility_upper_bound(instance, setting)
        return u.utility, f"simulator bound ({u.source})"
    b = lower_bounds(instance, setting)
    if kind == "total_jct":
        return b.mean_jct * instance.n_jobs, f"simulator bound ({b.source['mean_jct']})"
    if kind == "weighted_total_jct":
        w = math.fsum(j.weight for j in instance.jobs)
        return (b.weighted_mean_jct * w,
                f"simulator bound ({b.source['weighted_mean_jct']})")
    return b.makespan, f"simulator bound ({b.source['makespan']})"


def _gap(sense: str, value: float | None, bound: float | None) -> float | None:
    if value is None or bound is None:
        return None
    if sense == "min":
        return value / bound if bound > 0 else (1.0 if value == bound else None)
    return bound / value if value > 0 else (1.0 if value == bound else None)


def certify_rows(rows: list, instance: Instance, model: str,
                 options: Mapping[str, Any] | None = None) -> None:
    """Fill ``certified_bound``, ``certified_gap``, ``bound_source`` and ``bound_note`` of
    each :class:`~optsched.compare.Row` (module docstring)."""
    if not rows:
        return
    sense = rows[0].sense
    better = max if sense == "min" else min
    try:
        sim, sim_src = simulator_bound(instance, model, options)
    except InvalidInput as exc:  # e.g. a job no GPU type of the cluster can run
        sim, sim_src = None, f"no simulator bound for this instance: {exc}"
    exact = next((r for r in rows if r.kind == "exact" and r.method == "exact"), None)
    dual = exact.bound if exact is not None and exact.bound is not None \
        and math.isfinite(exact.bound) else None
    for r in rows:
        cands = []
        if sim is not None:
            cands.append((sim, sim_src))
        if dual is not None and not r.outside_exact:
            cands.append((dual, "exact method's dual bound"))
        if not cands:
            r.bound_note = sim_src if sim is None and dual is None else (
                f"{sim_src}; the exact method's dual bound does not cover this row (outside "
                "the exact model's feasible set)")
            continue
        r.certified_bound, r.bound_source = better(cands, key=lambda c: c[0])
        if sim is None:
            r.bound_note = sim_src
        if r.kind == "bound" or r.value is None:
            continue
        r.certified_gap = _gap(sense, r.value, r.certified_bound)
        if r.certified_gap is None:
            r.bound_note = (f"value {r.value:.4g} against the bound {r.certified_bound:.4g}: "
                            "no finite factor")
