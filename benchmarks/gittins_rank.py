"""2D-Gittins under contention: the index's lower-envelope ranking against the direct one.

Tiresias' 2D-Gittins ranks every visible job by :math:`G(a)` at its attained GPU-time
each decision. ``GittinsIndex.ranking_keys`` evaluates it from the lower envelope of one
line per candidate on the interval of samples that holds ``a`` (built once per interval,
a query is two binary searches); the direct form sums over every candidate each time a
new ``a`` is seen. Both runs here are the same simulation (``tiresias.gittins``, Philly
trace, first ``--jobs`` jobs, arrivals ``--load`` times faster, ``tiresias-n256g8``), once
with the direct keys (``GittinsIndex.__call__`` per job, memoised, as before the envelope)
and once with the envelope; the schedules must be identical, and the table gives
wall and policy seconds side by side, one after the other in one process.

    python benchmarks/gittins_rank.py                      # 5,000 jobs at load 6
    python benchmarks/gittins_rank.py --jobs 2000 --load 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import write_results

from optsched import catalog
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias.policy import GittinsIndex


def direct_keys(self: GittinsIndex, a) -> np.ndarray:
    """The keys as computed before the envelope: the memoised direct index per job."""
    return np.array([self(x) for x in np.asarray(a, dtype=float).ravel().tolist()])


def run(inst, keys) -> tuple[dict, object]:
    saved = GittinsIndex.ranking_keys
    GittinsIndex.ranking_keys = keys  # type: ignore[method-assign]
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate(inst, get_policy("tiresias.gittins"), progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        GittinsIndex.ranking_keys = saved  # type: ignore[method-assign]
    m = res.metrics
    return {"wall_s": wall, "cpu_s": cpu, "policy_s": res.extra["policy_seconds"],
            "decisions": res.extra["policy_calls"], "mean_jct_h": m.mean_jct / 3600,
            "preemptions": res.extra["total_preemptions"]}, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--load", type=float, default=6.0)
    args = ap.parse_args()
    inst = catalog.read_philly_trace(cluster="tiresias-n256g8", jobs=args.jobs, load=args.load)
    rows, schedules = [], []
    for label, keys in (("direct", direct_keys), ("envelope", GittinsIndex.ranking_keys)):
        row, res = run(inst, keys)
        rows.append({"ranking": label, "jobs": inst.n_jobs, **row})
        schedules.append(res.schedule.to_dict())
        print(rows[-1], flush=True)
    same = schedules[0] == schedules[1]
    if not same:
        raise SystemExit("the two rankings gave different schedules")
    d, e = rows
    write_results(f"gittins_rank_{args.jobs}", rows,
                  ["ranking", "jobs", "wall_s", "cpu_s", "policy_s", "decisions",
                   "mean_jct_h", "preemptions"],
                  title="2D-Gittins ranking: lower envelope vs direct index (same run)",
                  params={"trace": f"philly, first {args.jobs} jobs, arrivals / {args.load:g}",
                          "cluster": "tiresias-n256g8 (2,048 P100)",
                          "policy": "tiresias.gittins"},
                  notes=f"Identical schedules: {same}. Envelope over direct: wall "
                        f"{d['wall_s'] / e['wall_s']:.2f}x faster, policy time "
                        f"{d['policy_s'] / e['policy_s']:.2f}x faster.")


if __name__ == "__main__":
    main()
