r"""A result's *proof*, and the objective value a proof reproduces once validated.

A best-known value of the benchmark library is accepted only with a proof: what, with
the instance alone, lets anyone check that the value is reached. :func:`proof_of` takes
it from a :class:`~optsched.core.result.Result`; :func:`evaluate` validates it with the
model's own rules and recomputes the model's objective from it (never from a stored
number); :func:`evaluate_simulation` does the same for a simulated schedule under the
strict rules (or a named policy's). Every refusal is an
:class:`~optsched.errors.InvalidRecord` whose ``path`` is the instance name the caller
gives (``where``) and whose message says which rule failed.

Proof formats (JSON objects)
----------------------------
* ``{"kind": "schedule", "schedule": Schedule.to_dict(), "slot": float | None}`` for the
  models whose results carry a schedule (AlloX, HadarE, Hadar, Salus, Synergy,
  Tiresias). ``slot`` is the planning slot of a slotted model (``Result.extra["slot"]``,
  e.g. Hadar's, which may exceed ``instance.slot``): the validator's grid of
  ``"slots"`` time, read only for such models (a larger slot only lets a completion be
  declared later). Salus adds ``"lanes"``: per GPU of
  :func:`~optsched.salus.model.salus_view`, its lanes as lists of job ids
  (``Result.extra["plan"]``). A Synergy schedule declares ``resource_sensitive``: its
  jobs run at :math:`T_j(c, m)` times their throughput for the cores and DRAM per GPU
  they hold, which :func:`proof_of` states (the round's own result validates the same
  allocations on an instance with those rates written into the throughputs,
  :func:`~optsched.synergy.model.effective_instance`).
* ``{"kind": "allocation", "jobs": [ids], "types": [GPU types], "X": [[...]]}`` for
  Gavel: one round's time fractions ``X[m][k]`` of job ``jobs[m]`` on type ``types[k]``
  (``Result.values["X"]``). Without ``jobs``/``types`` (``None``), ``X`` is read in the
  instance's job order and ``instance.cluster.gpu_types``.

What is validated and recomputed
--------------------------------
Every schedule passes :func:`~optsched.core.validate.validate_schedule` with the model's
:class:`~optsched.core.validate.Capabilities` (:func:`optsched.registry.capabilities`)
and, in slotted time, the proof's slot; then the model's structure
(:mod:`optsched.bench._checks`); then the value is computed by the model's own code.
Where an objective counts every job, a job missing from the schedule's ``completion``
is refused. A proof is judged on the instance it is given with: one made for another
instance fails there when it names other jobs, nodes or types or does too little work
(a proof that happens to be feasible on another instance proves its value there, which
the caller compares with the value a record claims).

Per model (objectives, default first; "all" marks those that count every job):

================  ==========================  ===========================  ===================
model             objectives                  checked beyond the validator value recomputed
================  ==========================  ===========================  ===================
allox             total_jct (all)             (a)                          (1)
tiresias          total_jct (all)             (b)                          (2)
hadar             utility                     slot grid (validator)        (3)
hadare            utility, makespan (all),    forking, consolidation       (4)
                  jct (all)                   (validator)
salus             makespan (all), admitted,   (c)                          (5)
                  gpus
synergy           throughput                  (d)                          (6)
gavel             max_min_fairness,           (e)                          (7)
                  makespan,
                  max_sum_throughput,
                  finish_time_fairness
================  ==========================  ===========================  ===================

Checks: (a) each job runs on one machine (one (node, GPU type)) in one interval, without
preemption (AlloX's :math:`R||\sum_j C_j`); (b) a gang holds GPUs of one type at every
instant; (c) the lane plan ``lanes`` is memory-safe (per GPU,
:math:`\sum_l (\sum_{i \in l} P_i + \max_{i \in l} T_i) \le M_g`), is the plan the
schedule runs (a job is allocated iff it is in a lane, only on its GPU's node and type),
and on each GPU the shares sum to at most 1 and on each lane :math:`\sum s_i/u_i \le 1`;
(d) the schedule is an allocation of the instance's default round (start at the latest
arrival, FIFO admission, :func:`~optsched.synergy.model.prepare`): exactly the admitted
jobs, each in one interval from the round start, at one fair configuration
(:math:`T_j \ge T^f_j`) of the model's finite set on all its servers; (e) Gavel's
constraints (:func:`~optsched.gavel.model.check_allocation`): :math:`0 \le X \le 1`,
:math:`X_{mk} = 0` where :math:`T_{mk} = 0`, :math:`\sum_k X_{mk} \le 1`,
:math:`\sum_m W_m X_{mk} \le c_k`, and the proof's job ids and types are exactly the
instance's. Details: :mod:`optsched.bench._checks`.

Values, by the model's own code: (1) :func:`optsched.allox.exact.plan_cost`,
:math:`\sum_j (C_j - a_j)`; (2) ``optsched.tiresias.model.build_model(inst).total_jct``,
the same sum; (3) ``compute_metrics(...).utility``, :math:`\sum_{j \text{ done}} w_j
f_j(C_j - a_j)`; (4) the HadarE exact model's objective: that utility,
:math:`\max_j C_j - \min_j a_j` or :math:`\sum_j w_j (C_j - a_j)`; (5) the schedule's
makespan (``compute_metrics``; the fluid realisation of a plan reaches the plan's
:math:`\max_g C_g`), :func:`~optsched.salus.model.plan_objective` of the plan for the
admitted weight and the GPUs used; (6) :math:`\sum_j T_j(c_j, m_j)` over the placed jobs,
each configuration's value in the model's set; (7)
:func:`~optsched.gavel.model.objective_value` on
:func:`~optsched.gavel.model.round_state` of the instance.

Complexity: the validator's cost (about linear in the allocations after a sort,
:math:`O(a \log a)`) plus :math:`O(a \log a + n)` for the model checks; Gavel's is
:math:`O(nK)`; Synergy's also :math:`O(nq)` for :math:`q` configurations per job.

Measured on every shipped method (``tests/bench/test_proof.py``): each proof reproduces
its result's objective exactly, with these exceptions, which are the model's rules and
not tolerances:

* Synergy's GREEDY (``outside_exact``) leaves admitted jobs unplaced or below their fair
  throughput; such a proof is refused (outside the exact model's feasible set).
* Salus with ``realize="serial"``: the result's objective is its plan's fluid makespan
  :math:`\max_g C_g`, while its schedule (lanes run their jobs one by one) ends 0.4-6.3%
  later on the demo and contended instances; the proof is worth the schedule's makespan.
  With the default ``realize="fluid"`` the two are equal.
* A Gavel allocation that gives some job nothing has makespan and finish-time fairness
  ``inf`` (:func:`~optsched.gavel.model.objective_value`), as its result reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from optsched.core.coerce import as_instance
from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.core.validate import STRICT, Capabilities, validate_schedule
from optsched.errors import InvalidOption, InvalidRecord, InvalidSchedule

__all__ = ["proof_of", "evaluate", "evaluate_simulation", "objectives", "PROOF_KINDS",
           "SIMULATION_OBJECTIVES"]

PROOF_KINDS = ("schedule", "allocation")
#: what :func:`evaluate_simulation` recomputes
SIMULATION_OBJECTIVES = ("mean_jct", "makespan")

#: per model the objectives :func:`evaluate` recomputes, the default first (the
#: registry's ``objectives`` keys where the model has several)
_OBJECTIVES: dict[str, tuple[str, ...]] = {
    "allox": ("total_jct",),
    "tiresias": ("total_jct",),
    "hadar": ("utility",),
    "hadare": ("utility", "makespan", "jct"),
    "salus": ("makespan", "admitted", "gpus"),
    "synergy": ("throughput",),
    "gavel": ("max_min_fairness", "makespan", "max_sum_throughput", "finish_time_fairness"),
}
#: (model, objective) pairs that count every job of the instance
_EVERY_JOB = {("allox", "total_jct"), ("tiresias", "total_jct"), ("hadare", "makespan"),
              ("hadare", "jct"), ("salus", "makespan")}


def objectives(model: str) -> tuple[str, ...]:
    """The objectives :func:`evaluate` recomputes for ``model``, its default first.

    Raises
    ------
    InvalidOption
        ``model`` is none of the shipped models.
    """
    if model not in _OBJECTIVES:
        raise InvalidOption("model", model, f"proofs are checked for {sorted(_OBJECTIVES)}")
    return _OBJECTIVES[model]


def proof_of(model: str, result: Result, *, instance: Instance | None = None
             ) -> dict[str, Any]:
    """The proof of ``result`` (module docstring): a JSON-ready dict.

    Parameters
    ----------
    model : str
        The model (or simulated policy) that produced ``result``: a result with a
        schedule gives a schedule proof; a ``"gavel"`` result without one, an allocation
        proof.
    result : Result
        A result with a solution: a schedule, or for Gavel ``values["X"]``.
    instance : Instance, optional
        Gavel only: names the rows (job ids) and columns (GPU types) of ``X``; without
        it they are ``None`` and ``X`` is read in the instance's order.

    Raises
    ------
    InvalidRecord
        ``path="proof"``: the result has neither a schedule nor (Gavel) an allocation,
        or a Salus result has no lane plan, or ``instance`` does not match ``X``.

    Complexity
    ----------
    :math:`O(a)` for :math:`a` allocations, :math:`O(nK)` for Gavel.
    """
    if model == "gavel" and result.schedule is None:
        X = result.values.get("X")
        if X is None:
            raise InvalidRecord("proof", result.status.value, f"this {model} result "
                                f"({result.method}) has no allocation values['X']")
        X = np.asarray(X, dtype=float)
        jobs = types = None
        if instance is not None:
            instance = as_instance(instance)
            jobs = [j.id for j in instance.jobs]
            types = list(instance.cluster.gpu_types)
            if X.shape != (len(jobs), len(types)):
                raise InvalidRecord("proof", X.shape, f"X must be {len(jobs)} jobs x "
                                    f"{len(types)} GPU types for this instance")
        return {"kind": "allocation", "jobs": jobs, "types": types, "X": X.tolist()}
    if result.schedule is None:
        raise InvalidRecord("proof", result.status.value, f"this {model} result "
                            f"({result.method}) has no schedule")
    schedule = result.schedule.to_dict()
    if model == "synergy":
        schedule["resource_sensitive"] = True
    slot = result.extra.get("slot")
    if isinstance(slot, bool) or not isinstance(slot, (int, float)) or not slot > 0:
        slot = None
    proof: dict[str, Any] = {"kind": "schedule", "schedule": schedule,
                             "slot": None if slot is None else float(slot)}
    if model == "salus":
        if "plan" not in result.extra:
            raise InvalidRecord("proof", result.method, "a salus result without its lane "
                                "plan (extra['plan']) proves no lane's memory safety")
        proof["lanes"] = [[list(lane) for lane in gpu] for gpu in result.extra["plan"]]
    return proof


def evaluate(model: str, instance: Instance, proof: Mapping[str, Any], *,
             objective: str | None = None, where: str = "") -> float:
    """Validate ``proof`` with ``model``'s rules on ``instance`` and return the model's
    ``objective`` value that it reaches (module docstring: what each model checks and
    computes).

    Parameters
    ----------
    model : str
        A shipped model (:func:`objectives`).
    instance : Instance
        Or its JSON form.
    proof : mapping
        A proof (module docstring), e.g. from :func:`proof_of` or a library file.
    objective : str, optional
        One of :func:`objectives` of the model; ``None``: its default (the first).
    where : str
        Names the record in errors (e.g. ``"tiresias/g108-j60-s0"``).

    Returns
    -------
    float
        The objective value, recomputed from the proof and the instance.

    Raises
    ------
    InvalidRecord
        ``path=where or "proof"``: a malformed proof, a schedule the validator refuses
        (its message is quoted), a breach of the model's own structure, a job missing
        where the objective counts every job, an allocation outside Gavel's constraints
        or naming other jobs or types.
    InvalidOption
        An unknown model or objective.
    ModelNotApplicable
        The instance is outside the model (raised by the model's own code).

    Complexity
    ----------
    The validator's, about :math:`O(a \\log a)` for :math:`a` allocations, plus
    :math:`O(a \\log a + n)` for the model's structure; :math:`O(nK)` for Gavel.
    """
    kinds = objectives(model)
    if objective is None:
        objective = kinds[0]
    elif objective not in kinds:
        raise InvalidOption("objective", objective, f"{model} proofs give {list(kinds)}")
    instance = as_instance(instance)
    path = where or "proof"
    if model == "gavel":
        return _gavel(instance, proof, objective, path)
    from optsched.registry import capabilities

    schedule, slot = _schedule_of(proof, path)
    _validate(instance, schedule, capabilities(model), slot, path)
    try:
        if (model, objective) in _EVERY_JOB:
            _complete(instance, schedule)
        return float(_VALUES[model](instance, schedule, proof, objective))
    except InvalidSchedule as e:
        raise InvalidRecord(path, e.value, f"not a schedule of the {model} model: "
                            f"{e.path}: {e.reason}") from e


def evaluate_simulation(instance: Instance, proof: Mapping[str, Any], objective: str, *,
                        rules: str | Capabilities = "strict", where: str = "") -> float:
    """Validate a simulated schedule's proof and return its mean JCT or makespan.

    Parameters
    ----------
    instance : Instance
        Or its JSON form.
    proof : mapping
        A schedule proof (``kind`` ``"schedule"``).
    objective : {"mean_jct", "makespan"}
        :class:`~optsched.core.metrics.Metrics` ``mean_jct`` or ``makespan`` (s).
    rules : str or Capabilities
        ``"strict"`` (:data:`~optsched.core.validate.STRICT`: gang progress, no sharing,
        forking or consolidation, continuous time), or a registered model or policy
        name whose rules apply (:func:`optsched.registry.capabilities`; a simulated
        policy's are in continuous time), or the capabilities themselves.
    where : str
        Names the record in errors.

    Raises
    ------
    InvalidRecord
        A malformed proof, a schedule the validator refuses, a job not completed.

    Complexity
    ----------
    The validator's and :func:`~optsched.core.metrics.compute_metrics`',
    about :math:`O(a \\log a)`.
    """
    from optsched.core.metrics import compute_metrics

    if objective not in SIMULATION_OBJECTIVES:
        raise InvalidOption("objective", objective,
                            f"must be one of {list(SIMULATION_OBJECTIVES)}")
    path = where or "proof"
    if isinstance(rules, Capabilities):
        caps = rules
    elif rules == "strict":
        caps = STRICT
    else:
        from optsched.registry import capabilities

        caps = capabilities(rules)
    schedule, slot = _schedule_of(proof, path)
    _validate(instance := as_instance(instance), schedule, caps, slot, path)
    try:
        _complete(instance, schedule)
    except InvalidSchedule as e:
        raise InvalidRecord(path, e.value, f"{e.path}: {e.reason}") from e
    value = getattr(compute_metrics(instance, schedule), objective)
    return float(value) if value is not None else 0.0


# --------------------------------------------------------------------------- shared
def _schedule_of(proof: Mapping[str, Any], path: str) -> tuple[Schedule, float | None]:
    """The proof's schedule and slot, or :class:`InvalidRecord` naming what is malformed."""
    if not isinstance(proof, Mapping):
        raise InvalidRecord(path, type(proof).__name__, "a proof is a JSON object")
    if proof.get("kind") != "schedule":
        raise InvalidRecord(path, proof.get("kind"), "this model's proof is a schedule "
                            "(kind 'schedule')")
    try:
        schedule = Schedule.from_dict(proof.get("schedule"))
    except (InvalidSchedule, InvalidOption) as e:
        raise InvalidRecord(path, e.value, f"the proof's schedule is malformed: "
                            f"{e.path}: {e.reason}") from e
    slot = proof.get("slot")
    if slot is not None and (isinstance(slot, bool) or not isinstance(slot, (int, float))
                             or not math.isfinite(slot) or slot <= 0):
        raise InvalidRecord(path, slot, "the proof's slot must be a number of seconds > 0 "
                            "or null")
    return schedule, None if slot is None else float(slot)


def _validate(instance: Instance, schedule: Schedule, caps: Capabilities,
              slot: float | None, path: str) -> None:
    try:
        validate_schedule(instance, schedule, caps,
                          slot=slot if caps.time == "slots" else None)
    except (InvalidSchedule, InvalidOption) as e:
        raise InvalidRecord(path, e.value, f"the schedule fails the validator at {e.path}: "
                            f"{e.reason} (rules: {caps.describe()})") from e


def _complete(instance: Instance, schedule: Schedule) -> None:
    missing = [j.id for j in instance.jobs if j.id not in schedule.completion]
    if missing:
        raise InvalidSchedule("completion", missing[:5], f"{len(missing)} of the "
                              f"{instance.n_jobs} jobs are not completed; the objective "
                              "counts every job")


# --------------------------------------------------------------------------- per model
def _allox(instance: Instance, schedule: Schedule, proof: Mapping, objective: str) -> float:
    from optsched.allox.exact import plan_cost
    from optsched.bench._checks import one_machine

    one_machine(schedule)
    return plan_cost(instance, dict(schedule.completion))


def _tiresias(instance: Instance, schedule: Schedule, proof: Mapping, objective: str
              ) -> float:
    from optsched.bench._checks import one_type_per_gang
    from optsched.tiresias.model import build_model

    model = build_model(instance)
    one_type_per_gang(schedule)
    return model.total_jct(schedule.completion)


def _hadar(instance: Instance, schedule: Schedule, proof: Mapping, objective: str) -> float:
    from optsched.core.metrics import compute_metrics

    return compute_metrics(instance, schedule).utility


def _hadare(instance: Instance, schedule: Schedule, proof: Mapping, objective: str
            ) -> float:
    from optsched.hadare.exact import _objective

    return _objective(instance, schedule, objective)


def _salus(instance: Instance, schedule: Schedule, proof: Mapping, objective: str) -> float:
    from optsched.bench._checks import salus_lanes
    from optsched.core.metrics import compute_metrics
    from optsched.salus.model import plan_objective, salus_view

    plan = salus_lanes(instance, schedule, proof.get("lanes"))
    if objective == "makespan":
        return compute_metrics(instance, schedule).makespan or 0.0
    return plan_objective(salus_view(instance), plan, objective)


def _synergy(instance: Instance, schedule: Schedule, proof: Mapping, objective: str
             ) -> float:
    from optsched.bench._checks import synergy_round

    if not schedule.resource_sensitive:
        raise InvalidSchedule("schedule.resource_sensitive", False, "a Synergy schedule "
                              "runs its jobs at the rates of the cores and DRAM they hold: "
                              "it must declare resource_sensitive")
    rel = synergy_round(instance, schedule)
    return float(sum(rel[j] for j in sorted(rel)))


_VALUES: dict[str, Callable[[Instance, Schedule, Mapping, str], float]] = {
    "allox": _allox, "tiresias": _tiresias, "hadar": _hadar, "hadare": _hadare,
    "salus": _salus, "synergy": _synergy}


def _gavel(instance: Instance, proof: Mapping[str, Any], objective: str, path: str
           ) -> float:
    """Gavel's allocation proof: ``X`` put in the instance's order, checked against the
    round's constraints, scored by :func:`~optsched.gavel.model.objective_value`."""
    from optsched.gavel.model import check_allocation, objective_value, round_state

    if not isinstance(proof, Mapping):
        raise InvalidRecord(path, type(proof).__name__, "a proof is a JSON object")
    if proof.get("kind") != "allocation":
        raise InvalidRecord(path, proof.get("kind"), "a gavel proof is an allocation "
                            "(kind 'allocation')")
    state = round_state(instance)
    try:
        X = np.asarray(proof.get("X"), dtype=float)
    except (TypeError, ValueError) as e:
        raise InvalidRecord(path, proof.get("X"), f"X must be a matrix of numbers: {e}"
                            ) from e
    if X.ndim != 2 or not np.isfinite(X).all():
        raise InvalidRecord(path, X.shape, "X must be a finite matrix (jobs x GPU types)")
    rows = _order(proof.get("jobs"), [j.id for j in instance.jobs], "jobs", path)
    cols = _order(proof.get("types"), list(state.types), "types", path)
    want = (len(rows) if rows is not None else state.n,
            len(cols) if cols is not None else len(state.types))
    if X.shape != want:
        raise InvalidRecord(path, X.shape, f"X must be {want[0]} jobs x {want[1]} GPU "
                            "types")
    if rows is not None:
        X = X[rows]
    if cols is not None:
        X = X[:, cols]
    try:
        check_allocation(state, X)
    except InvalidSchedule as e:
        raise InvalidRecord(path, e.value, f"the allocation breaks the round's constraints "
                            f"at {e.path} (in the instance's order): {e.reason}") from e
    return objective_value(state, X, objective)


def _order(named: Any, ids: list[str], what: str, path: str) -> list[int] | None:
    """Positions in ``named`` of each of ``ids`` (``None`` if ``named`` is ``None``)."""
    if named is None:
        return None
    if not isinstance(named, list) or not all(isinstance(x, str) for x in named):
        raise InvalidRecord(path, named, f"{what} must be a list of names")
    pos = {x: i for i, x in enumerate(named)}
    if len(pos) != len(named) or set(pos) != set(ids):
        odd = sorted(set(named) ^ set(ids)) or [x for x in named if named.count(x) > 1]
        raise InvalidRecord(path, odd[:5], f"the proof's {what} must be exactly the "
                            f"instance's {len(ids)} {what}, each once")
    return [pos[x] for x in ids]
