"""Policy registry and the placement helpers shared by the online policies.

Policies register a factory under a name in :data:`POLICIES`;
:func:`get_policy` builds one (``get_policy("max_min_fairness", backend="cvxpy")``).

Placement (node choice for a gang of W GPUs of one type k), used by Gavel's round
mechanism (Alg. 1: "consolidate onto the same server" when possible) and by Tiresias
(consolidated vs spread placement, NSDI'19 §4):

1. *lease extension*: the job's previous placement on type k, if all of it is free;
2. *best fit*: the single node with the fewest free GPUs of type k that still fits W;
3. otherwise the fewest nodes: nodes in decreasing free count (ties by node order).
   With ``mode="consolidated"`` step 3 is accepted only if it uses no more nodes than
   ``ceil(W / largest node size of type k)`` (the gang is as packed as the cluster
   allows); with ``mode="spread"`` any number of nodes is accepted.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from optsched.errors import InvalidOption, ModelNotApplicable, UnknownName
from optsched.options import check_options, declared_options
from optsched.sim.policy import ClusterView, Placement, Policy

__all__ = ["POLICIES", "RUNNERS", "PolicySpec", "register_policy", "register_runner",
           "get_policy", "policy_spec", "run_policy", "simulation_names", "place_gang",
           "choose_nodes", "check_single_type_gangs", "PLACEMENT_MODES"]

PLACEMENT_MODES = ("consolidated", "spread")
#: Arguments of a simulation, not options of its policy.
SIM_ARGS = frozenset({"seed", "max_time", "progress"})


@dataclass(frozen=True)
class PolicySpec:
    """A named simulator policy and the options it declares.

    Either ``factory(**options) -> Policy`` (the simulator runs it) or ``runner(instance,
    *, seed, max_time, progress, **options) -> Result`` for a policy built from the
    instance itself. ``fixed`` options are bound by the name (not the caller's);
    ``defaults`` are the name's defaults, which the caller may override. The options are
    the keyword parameters of ``takes`` (default: the factory or runner) minus the fixed
    ones and the simulation arguments.
    """

    name: str
    factory: Callable[..., Policy] | None = None
    runner: Callable[..., Any] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    takes: Callable[..., Any] | None = None
    exclude: frozenset[str] = frozenset()

    @cached_property
    def options(self) -> frozenset[str]:
        fn = self.takes or self.factory or self.runner
        assert fn is not None
        return declared_options(fn, exclude=set(self.fixed) | SIM_ARGS | self.exclude)

    def check(self, options: Mapping[str, Any]) -> dict[str, Any]:
        check_options(f"policy {self.name!r}", options, self.options)
        return {**self.defaults, **options, **self.fixed}


POLICIES: dict[str, PolicySpec] = {}
RUNNERS: dict[str, PolicySpec] = {}


def register_policy(name: str, factory: Callable[..., Policy], *,
                    defaults: Mapping[str, Any] | None = None,
                    exclude: frozenset[str] = frozenset(), **fixed: Any) -> PolicySpec:
    """Register ``factory(**fixed, **options) -> Policy`` under ``name``; ``exclude``
    names keyword parameters of ``factory`` that are not options of this name."""
    spec = PolicySpec(name, factory=factory, fixed=fixed, defaults=dict(defaults or {}),
                      exclude=frozenset(exclude))
    POLICIES[name] = spec
    return spec


def register_runner(name: str, runner: Callable[..., Any], *,
                    takes: Callable[..., Any] | None = None,
                    exclude: frozenset[str] = frozenset(), **fixed: Any) -> PolicySpec:
    """Register a simulation whose policy is built from the instance itself.

    Some online policies plan from what the instance lets them estimate before the run
    (Hadar's price parameters U and L, HadarE's admission pass) or check the model's
    applicability first (Synergy, Salus). ``runner(instance, *, seed, max_time, progress,
    **options) -> Result`` builds such a policy and runs :func:`optsched.sim.simulate`;
    its options are the keyword parameters of ``takes`` (default: ``runner``).
    """
    spec = PolicySpec(name, runner=runner, fixed=fixed, takes=takes,
                      exclude=frozenset(exclude))
    RUNNERS[name] = spec
    return spec


def simulation_names() -> list[str]:
    """Every name :func:`run_policy` accepts."""
    return sorted(set(POLICIES) | set(RUNNERS))


def policy_spec(name: str) -> PolicySpec:
    """The :class:`PolicySpec` registered as ``name`` (policy or runner)."""
    spec = POLICIES.get(name) or RUNNERS.get(name)
    if spec is None:
        known = simulation_names()
        close = difflib.get_close_matches(str(name), known, n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("policy", name, f"unknown policy; known: {known}{hint}")
    return spec


def run_policy(name: str, instance, *, seed: int = 0, max_time: float | None = None,
               progress: bool | None = None, **options: Any):
    """Simulate the policy or runner registered as ``name`` over ``instance``."""
    spec = policy_spec(name)
    kw = spec.check(options)
    if spec.runner is not None:
        return spec.runner(instance, seed=seed, max_time=max_time, progress=progress, **kw)
    from optsched.sim.core import simulate

    assert spec.factory is not None
    return simulate(instance, spec.factory(**kw), seed=seed, progress=progress,
                    max_time=max_time)


def get_policy(policy: str, /, **options: Any) -> Policy:
    """Build the policy registered as ``policy`` with ``options`` (checked against its
    declaration; ``name=`` relabels it where the policy takes a name)."""
    spec = policy_spec(policy)
    if spec.factory is None:
        raise UnknownName("policy", policy, "this policy is built from the instance: "
                          "use run_policy(name, instance, ...)")
    return spec.factory(**spec.check(options))


def check_single_type_gangs(instance, policy: str) -> None:
    """Raise :class:`ModelNotApplicable` for a job whose gang fits no single GPU type.

    Gavel's allocation (:math:`X_{mk}`: job m on :math:`W_m` GPUs of type k) and
    Tiresias' placement run a gang on one type; an instance may hold a job that only
    fits across types, which such a policy would never start.
    """
    per_type = instance.cluster.gpus_per_type
    for i, j in enumerate(instance.jobs):
        pool = max((per_type.get(t, 0) for t, r in j.throughput.items() if r > 0), default=0)
        if j.workers > pool:
            raise ModelNotApplicable(
                f"jobs[{i}].workers", j.workers,
                f"policy {policy!r} runs a gang on one GPU type, and the largest pool of one "
                f"type job {j.id!r} can use has {pool} GPUs")


def place_gang(view: ClusterView, free: np.ndarray, job_id: str, workers: int, k: int,
               mode: str = "spread") -> list[Placement] | None:
    """Choose nodes for ``workers`` GPUs of type index ``k``; update ``free`` in place.

    Returns the placements, or ``None`` (``free`` untouched) when the gang does not fit
    under ``mode`` (see module docstring).
    """
    if mode not in PLACEMENT_MODES:
        raise InvalidOption("placement", mode, f"must be one of {PLACEMENT_MODES}")
    col = free[:, k].tolist()
    hs = choose_nodes(view, col, job_id, workers, k, mode)
    if hs is None:
        return None
    nodes = view.cluster.nodes
    tname = view.gpu_types[k]
    out = []
    for h, g in hs:
        free[h, k] -= g
        out.append(Placement(job_id, nodes[h].name, tname, g))
    return out


def choose_nodes(view: ClusterView, col: list[int], job_id: str, workers: int, k: int,
                 mode: str = "spread") -> list[tuple[int, int]] | None:
    """The node choice of :func:`place_gang` on a plain list ``col`` of free GPUs of type
    ``k`` per node (updated in place); returns ``[(node index, gpus), ...]`` or ``None``."""
    tname = view.gpu_types[k]
    prev = view.previous_by_job.get(job_id)
    if prev and all(p.gpu_type == tname for p in prev) and \
            sum(p.gpus for p in prev) == workers:
        hs = [(view.cluster.node_index(p.node), p.gpus) for p in prev]
        if all(col[h] >= g for h, g in hs):
            for h, g in hs:
                col[h] -= g
            return hs
    if sum(col) < workers:
        return None
    best = -1
    for h, f in enumerate(col):
        if f >= workers and (best < 0 or f < col[best]):
            best = h
    if best >= 0:
        col[best] -= workers
        return [(best, workers)]
    order = sorted(range(len(col)), key=lambda h: -col[h])
    hs = []
    need = workers
    for h in order:
        if need == 0 or col[h] <= 0:
            break
        g = min(col[h], need)
        hs.append((h, g))
        need -= g
    if mode == "consolidated":
        biggest = int(view.capacity[:, k].max())
        if len(hs) > math.ceil(workers / max(biggest, 1)):
            return None
    for h, g in hs:
        col[h] -= g
    return hs
