r"""2D-LAS with GPU packing: Tiresias' ``dlas-gpu-pack`` scheduler on the core's co-location.

The public simulator (SymbioticLab/Tiresias, ``simulator/run_sim.py``,
``dlas_pack_sim_jobs``; ``cluster.py``, ``free_gpu_util`` / ``dlas_pack_get_gpu_util``)
runs 2D-LAS (queues on attained GPU-seconds, thresholds ``(3250, 7200)``, no starvation
promotion) and replaces the GPU count of its admission test by a per-GPU memory budget:

* every GPU has budget 1; a job of model :math:`\mu` uses :math:`s_\mu \in (0, 1]` of the
  budget of each GPU it holds (``models.py``, ``mem_util``);
* at each event the budgets are reset and the jobs are visited in queue order; a job
  starts (or keeps running) when at least :math:`W_j` GPUs have budget
  :math:`\ge s_j` left, and takes the first :math:`W_j` such GPUs in index order, so a
  GPU already partly used comes before an empty one;
* jobs sharing a GPU each run at their full isolated speed (their remaining time is
  their duration minus their executed time).

At commit 959f9b0 every model's share is 1 (the per-model figures
``0.60, 0.55, 0.45, 0.13, 0.85, 0.70, 0.50, 0.85, 0.80`` for vgg19, vgg16, vgg11,
alexnet, resnet152, resnet101, resnet50, inception4, inception3 are commented out,
:data:`TIRESIAS_DRAFT_SHARES`), so a GPU never holds two jobs and ``dlas-gpu-pack``
takes the decisions of ``dlas-gpu`` (measured: the same 60 completions on its 60-job
trace).

Formulation here. The core model (:mod:`optsched.core.colocation`) lets two jobs of
equal gang size hold the same GPUs, each at its co-located rate from the instance's
table, and never three. This policy visits jobs in the 2D-LAS order of
:class:`~optsched.tiresias.policy.TiresiasPolicy` (every option of ``tiresias.las``
applies) and, for a job :math:`j` with share :math:`s_j < 1`, first looks for a
*host*: an already selected job :math:`h` without partner, of gang size :math:`W_h =
W_j`, with :math:`s_h + s_j \le 1` and a positive co-located rate of both jobs on the
host's GPU type; the first such host in selection order (the analogue of the first
partly used GPUs in index order) is taken and :math:`j` holds the host's GPUs, both
placements naming the other as ``partner``. Otherwise :math:`j` takes whole free GPUs as
in ``tiresias.las``. The rate of a pair is the instance's: :func:`full_speed_colocation`
declares the original's assumption (each job of a pair at its isolated throughput,
optimistic: co-located training slows both jobs down in measurements, e.g. Gavel's
pairs at 0.3-0.9 of isolated); an instance carrying measured co-located rates is used as
is. Without a table, or with every share 1, the decisions are those of ``tiresias.las``.

Differences from the original that the core's pair model imposes: a GPU holds at most
two jobs (the original fits :math:`\lfloor 1/s \rfloor`, e.g. seven alexnet jobs), a
pair has equal gang sizes and shares all its GPUs (the original packs a 2-GPU job onto
two GPUs each partly used by a different 1-GPU job), and GPUs are places on nodes (the
original counts GPUs without nodes). Under the shares of commit 959f9b0 none of these
arises.

Complexity: the 2D-LAS ranking, plus :math:`O(n \cdot p)` for the host search with
:math:`p` the open hosts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from optsched.core.colocation import Colocation, PairRate
from optsched.core.instance import Instance
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.sim.policy import ClusterView
from optsched.tiresias.policy import TiresiasPolicy

__all__ = ["PackingTiresiasPolicy", "full_speed_colocation", "TIRESIAS_SHARES",
           "TIRESIAS_DRAFT_SHARES"]

_MODELS = ("vgg19", "vgg16", "vgg11", "alexnet", "resnet152", "resnet101", "resnet50",
           "inception4", "inception3")
#: Per-model GPU memory shares of the public simulator at 959f9b0 (``models.m_mem``):
#: 1 for each model; an unknown model is read as inception3 (share 1).
TIRESIAS_SHARES: Mapping[str, float] = {m: 1.0 for m in _MODELS}
#: The per-model shares commented out beside them in ``models.py`` (not used by the
#: original at 959f9b0; they make packing happen).
TIRESIAS_DRAFT_SHARES: Mapping[str, float] = dict(zip(
    _MODELS, (0.60, 0.55, 0.45, 0.13, 0.85, 0.70, 0.50, 0.85, 0.80)))
#: Slack on a GPU's memory budget: shares are decimal fractions added in floating point
#: (0.55 + 0.45 must fit).
_BUDGET_EPS = 1e-9


def _shares(memory_shares: Mapping[str, float] | None) -> dict[str, float]:
    if memory_shares is None:
        return dict(TIRESIAS_SHARES)
    if not isinstance(memory_shares, Mapping):
        raise InvalidOption("memory_shares", memory_shares,
                            "must map co-location keys (profiles) to shares in (0, 1]")
    out = {}
    for k, v in memory_shares.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1 \
                or not math.isfinite(v):
            raise InvalidOption(f"memory_shares.{k}", v, "must be a number in (0, 1]")
        out[str(k)] = float(v)
    return out


def full_speed_colocation(instance: Instance,
                          memory_shares: Mapping[str, float] | None = None
                          ) -> tuple[Instance, dict[str, float]]:
    r"""The original ``dlas-gpu-pack``'s assumption as co-located rates: a copy of
    ``instance`` whose co-location table says that two jobs whose memory shares fit one
    GPU (:math:`s_a + s_b \le 1`) each keep their isolated per-worker throughput when
    they share GPUs (optimistic), and the shares for ``memory_shares=`` of the policy.

    ``memory_shares`` (default :data:`TIRESIAS_SHARES`) maps a job's profile (else its
    id) to its share; jobs not listed have share 1 and pair with nothing. The table's
    rates are per co-location key, while throughputs are per job: the jobs of a profile
    whose throughputs all agree keep it as key; otherwise (e.g. Tiresias' traces, where
    every job has its own duration) the copy drops the profile of each job with share
    below 1 so that its key is its id. One entry per unordered pair of keys and GPU type
    where both run, any gang size (the instance pairs equal gangs only); an existing
    table is replaced. :math:`O(n + K^2 T)` for K keys of share below 1 and T types.

    Returns
    -------
    (Instance, dict)
        The copy, and the share per co-location key of the copy.
    """
    shares = _shares(memory_shares)
    share_of = {j.id: shares.get(instance.colocation_key(j.id), 1.0) for j in instance.jobs}
    by_key: dict[str, set[tuple[tuple[str, float], ...]]] = {}
    for j in instance.jobs:
        by_key.setdefault(instance.colocation_key(j.id), set()).add(
            tuple(sorted(j.throughput.items())))
    jobs = tuple(dataclasses.replace(j, profile=None)
                 if share_of[j.id] < 1.0 and j.profile is not None
                 and len(by_key[j.profile]) > 1 else j for j in instance.jobs)
    copy = instance.replace(jobs=jobs, colocation=None)
    rate: dict[str, dict[str, float]] = {}
    key_share: dict[str, float] = {}
    for j in copy.jobs:
        key = copy.colocation_key(j.id)
        key_share[key] = share_of[j.id]
        if share_of[j.id] < 1.0:
            rate[key] = dict(j.throughput)
    keys = sorted(rate)
    entries = []
    for i, a in enumerate(keys):
        for b in keys[i:]:
            if key_share[a] + key_share[b] > 1.0 + _BUDGET_EPS:
                continue
            for t in sorted(set(rate[a]) & set(rate[b])):
                if rate[a][t] > 0 and rate[b][t] > 0:
                    entries.append(PairRate(t, a, b, None, rate[a][t], rate[b][t]))
    table = Colocation(tuple(entries)) if entries else None
    return copy.replace(colocation=table), {k: v for k, v in key_share.items() if v < 1.0}


class PackingTiresiasPolicy(TiresiasPolicy):
    """2D-LAS that packs two jobs onto the same GPUs when their memory shares fit
    (module docstring; Tiresias' ``dlas-gpu-pack``).

    Parameters
    ----------
    memory_shares : mapping of str to float, optional
        GPU memory share in (0, 1] per co-location key (a job's profile, else its id);
        default :data:`TIRESIAS_SHARES` (the original's, all 1: nothing packs); keys not
        listed have share 1.
    **options
        As :class:`~optsched.tiresias.policy.TiresiasPolicy` with ``order="las"``.
    """

    colocation = True

    def __init__(self, *, memory_shares: Mapping[str, float] | None = None,
                 **options: Any):
        if options.get("order", "las") != "las":
            raise InvalidOption("order", options["order"], "packing is defined for 2D-LAS")
        super().__init__(**options)
        self.memory_shares = _shares(memory_shares)
        self._share: dict[str, float] = {}
        self._packs = False

    def check(self, instance) -> None:
        super().check(instance)
        self._share = {j.id: self.memory_shares.get(instance.colocation_key(j.id), 1.0)
                       for j in instance.jobs}
        # with no table or no share below 1 no pair can form: 2D-LAS itself
        self._packs = instance.colocation is not None and any(
            s < 1.0 for s in self._share.values())

    def _decide(self, view: ClusterView) -> list[Placement]:
        if not self._packs:
            return super()._decide(view)
        order = self.ranking(view)
        free = view.capacity.astype(np.int64).copy()
        left = free.sum(axis=0).tolist()
        share = self._share
        hosts: list[tuple[str, list[Placement]]] = []  # selected, unpaired, share < 1
        pair: dict[str, str] = {}
        placed: dict[str, list[Placement]] = {}
        for m in order.tolist():
            jid = view.ids[m]
            s = share.get(jid, 1.0)
            if s < 1.0:
                host = self._host(view, jid, s, hosts)
                if host is not None:
                    pair[jid], pair[host] = host, jid
                    hosts[:] = [h for h in hosts if h[0] != host]
                    continue
            if not any(left):
                continue
            ps = self._try(view, free, m, left)
            if ps is None:
                continue
            # a kept lease may still name the job's former partner
            placed[jid] = [p._replace(partner=None) if p.partner else p for p in ps]
            if s < 1.0:
                hosts.append((jid, placed[jid]))
        out: list[Placement] = []
        for jid, ps in placed.items():
            mate = pair.get(jid)
            if mate is None:
                out.extend(ps)
                continue
            for p in ps:
                out.append(p._replace(partner=mate))
                out.append(Placement(mate, p.node, p.gpu_type, p.gpus, partner=jid))
        return out

    def _host(self, view: ClusterView, jid: str, s: float,
              hosts: list[tuple[str, list[Placement]]]) -> str | None:
        """The first open host that ``jid`` can share its GPUs with, or ``None`` (the
        instance's pair rate exists only for equal gang sizes)."""
        share = self._share
        for host, ps in hosts:
            if share[host] + s > 1.0 + _BUDGET_EPS:
                continue
            types = {p.gpu_type for p in ps}
            if all((view.colocated_rate(jid, host, t) or 0.0) > 0
                   and (view.colocated_rate(host, jid, t) or 0.0) > 0 for t in types):
                return host
        return None


def _signature() -> None:
    # the registry reads a policy's options from its signature: TiresiasPolicy's and
    # memory_shares
    import inspect
    base = inspect.signature(TiresiasPolicy.__init__)
    params = [p for p in base.parameters.values() if p.name != "name"]
    params.append(inspect.Parameter("memory_shares", inspect.Parameter.KEYWORD_ONLY,
                                    default=None))
    params.append(base.parameters["name"])
    PackingTiresiasPolicy.__init__.__signature__ = base.replace(  # type: ignore[attr-defined]
        parameters=params)


_signature()
