"""The instances and options AlloX's heuristics are pinned on (tests/allox/pinned.json).

The figures in ``pinned.json`` were computed by the stand-alone implementation of
:mod:`optsched.allox.heuristics` (its own event loop, before the heuristics ran
:class:`~optsched.allox.policy.AlloXPolicy` in the shared simulator; main at 29aedd6).
Rewrite them only for a change of behaviour that is meant, stated in the docstring::

    PYTHONPATH=<checkout> python tests/allox/allox_cases.py > tests/allox/pinned.json

This module builds instances from :mod:`optsched.core` only, so that any checkout can
compute the figures.

The demo is :func:`optsched.allox.demo_instance` as drawn once and frozen in
``demo_instance.json`` (``test_allox_pinned`` checks a fresh draw against it), so that
no change of a generator moves these pins. Its draw's last bits once depended on the CPU
(numpy's vectorised ``pow`` on AVX-512; the generator now uses the C library's), and the
demo's GPUs come in identical pairs, so many schedules tie: a one-ulp change in one
job's work swaps jobs between the two GPUs of a node at an equal total (measured: 28 of
48 one-ulp nudges of a single job's work change ``online(alpha=1)``'s completion times,
none its total by more than 5e-10 s), and with a cap on the jobs planned the later
decisions and the total follow. The figures pin the heuristics' choices among those
ties, so they are pinned on one fixed input.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from optsched.core.instance import Cluster, Instance, Job, Node

TYPES = ("k80", "p100", "v100")
#: ``online``'s options: every (alpha, max_jobs) pair below.
ALPHAS = (1.0, 0.5, 0.25, 0.1)
CAPS = (None, 1, 2, 4)
SEEDS = range(30)


def make(ptimes: list[list[float]], machines: list[str], arrivals=None, users=None,
         name: str = "allox-case") -> Instance:
    """Jobs with the given processing time (s) per machine *type* (sorted type order;
    ``inf``: cannot run there); ``machines`` lists each machine's type, one node each."""
    types = sorted(set(machines))
    nodes = tuple(Node(f"m{i}", {t: 1}) for i, t in enumerate(machines))
    jobs = []
    for j, row in enumerate(ptimes):
        tp = {t: (100.0 / p if math.isfinite(p) else 0.0) for t, p in zip(types, row)}
        jobs.append(Job(f"J{j + 1}", 0.0 if arrivals is None else float(arrivals[j]), 1,
                        100.0, tp, user=None if users is None else users[j]))
    return Instance(Cluster(nodes), tuple(jobs), name=name)


def seeded(seed: int) -> Instance:
    """A small random instance: 3-12 jobs on 1-5 machines of up to 3 types, integer
    processing times 1-60 s (some jobs cannot use some types), up to 3 users (or none);
    even seeds put every arrival at 0, odd seeds draw integer arrivals in [0, 60] s, so
    arrivals and releases often fall on the same instant."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 13))
    machines = [TYPES[int(k)] for k in rng.integers(0, 3, size=int(rng.integers(1, 6)))]
    nt = len(set(machines))
    rows = []
    for _ in range(n):
        row = [float(x) for x in rng.integers(1, 61, size=nt)]
        for k in range(nt):
            if rng.random() < 0.15:
                row[k] = math.inf
        if all(math.isinf(x) for x in row):
            row[int(rng.integers(0, nt))] = float(rng.integers(1, 61))
        rows.append(row)
    arrivals = None if seed % 2 == 0 else sorted(int(x) for x in rng.integers(0, 61, size=n))
    users = None if seed % 3 == 0 else [f"u{int(u)}" for u in rng.integers(0, 3, size=n)]
    return make(rows, machines, arrivals, users, name=f"seeded-{seed}")


def frozen_demo() -> Instance:
    """The AlloX demo instance (24 jobs, seed 0) as frozen in ``demo_instance.json``."""
    return Instance.from_json((Path(__file__).parent / "demo_instance.json").read_bytes())


def instances() -> dict[str, Instance]:
    """The AlloX demo, the talk's example and the seeded instances, by name."""
    from optsched.allox.workload import talk_instance

    out = {"demo": frozen_demo(), "talk": talk_instance()}
    out.update({f"seeded-{s}": seeded(s) for s in SEEDS})
    return out


def runs() -> list[tuple[str, dict]]:
    """(rule, options) for every pinned run."""
    out: list[tuple[str, dict]] = [("sjf", {}), ("sjf_fastest", {}), ("jsq", {})]
    out += [("online", {"alpha": a, "max_jobs": c}) for a in ALPHAS for c in CAPS]
    return out


def key(rule: str, options: dict) -> str:
    return rule + "".join(f" {k}={v}" for k, v in sorted(options.items()))


def figures() -> dict[str, dict[str, dict]]:
    """instance -> run -> {"objective", "completion" (job order), "where" (node per job)}."""
    import optsched.allox as allox

    out: dict[str, dict[str, dict]] = {}
    for name, inst in instances().items():
        out[name] = {}
        for rule, options in runs():
            res = getattr(allox, rule)(inst, **options)
            sched = res.schedule
            where = {a.job: a.node for a in sched.allocations}
            out[name][key(rule, options)] = {
                "objective": res.objective,
                "completion": [sched.completion[j.id] for j in inst.jobs],
                "where": [where[j.id] for j in inst.jobs],
            }
    return out


if __name__ == "__main__":
    json.dump(figures(), sys.stdout, indent=0, sort_keys=True)
    sys.stdout.write("\n")
