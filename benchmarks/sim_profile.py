"""Where a simulation's time goes, before and after, measured side by side in one run.

Gavel max-min fairness (heterogeneity-aware) on Gavel's 2,000-job Philly-derived trace
(gavel-108: 36 K80 + 36 P100 + 36 V100, 6-minute rounds), run in child processes that
alternate between two source trees: BEFORE (``git archive`` of ``--base``, extracted to
a temporary directory) and AFTER (this checkout). Each child times the ``simulate()``
call and, through thin wrappers installed before it starts, its parts:

* ``highs_s``: HiGHS's own solves (``highspy.Highs.run``);
* ``policy_s``: the policy's ``allocate`` (it holds the LP build, HiGHS and the round
  mechanism), of which ``choose_nodes_s`` is placement;
* ``check_s``: the simulator's per-decision check (``check_decision``);
* ``validate_s``: the final independent validation (``validate_schedule``);
* ``metrics_s``: ``compute_metrics``;
* ``loop_s``: the rest (the simulator's own loop: views, progress, segments).

Parts are CPU seconds of the child process (``time.process_time``: on a machine shared
with other work, wall seconds also count the time spent waiting for a core); the total
is given both ways. The wrappers cost a fraction of a microsecond per call (about 0.3 s
over the ~800k ``choose_nodes`` calls) in both trees alike. Each child records every
decision the policy returns and every job's completion time; the report says whether
BEFORE and AFTER agree on all of them (the decisions must not change).

*Replay* children then measure the simulator alone: the recorded decisions are handed
back, one per epoch, by a policy that does nothing else, so ``replay_cpu_s`` is the
simulator's loop, per-decision check, validation and metrics without the policy.
With ``--cprofile`` one more child per tree runs under cProfile and its top functions
by own time are listed.

    python benchmarks/sim_profile.py --cprofile          # base 29aedd6, 1 repetition
    python benchmarks/sim_profile.py --repeat 2 --jobs 500
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from common import RESULTS, write_result_file, write_results

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("highs_s", "policy_s", "choose_nodes_s", "check_s", "validate_s", "metrics_s")


# --------------------------------------------------------------------------- child
def child(out: Path, jobs: int | None, policy: str, profile: bool,
          replay: Path | None) -> None:
    """Run one simulation in this process (optsched from PYTHONPATH) and write a JSON;
    the decisions go to ``out`` with suffix ``.pkl`` (or, with ``replay``, come from
    that file instead of the policy)."""
    import pickle
    from collections import defaultdict

    import highspy

    import optsched
    import optsched.core.metrics as metrics
    import optsched.core.validate as validate
    import optsched.gavel.policy as gavel_policy
    import optsched.sim.simulator as simulator
    from optsched import catalog
    from optsched.core.schedule import Placement
    from optsched.registry import get_policy
    from optsched.sim import simulate

    acc: dict[str, float] = defaultdict(float)

    def timed(name, fn):
        def wrapper(*a, **k):
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                acc[name] += time.process_time() - t0
        return wrapper

    inst = catalog.shipped_trace("gavel-philly-2000")
    if jobs is not None:
        inst = inst.replace(jobs=inst.jobs[:jobs])
    decisions: list[list[tuple]] = []
    if replay is not None:
        flags, recorded = pickle.loads(replay.read_bytes())
        queue = [[Placement(*p) for p in ps] for ps in recorded]

        class Replay:
            name = "replay"
            needs_work, event_driven = flags

            def reset(self):
                self.k = 0

            def allocate(self, view):
                self.k += 1
                return list(queue[self.k - 1])

        pol = Replay()
    else:
        pol = get_policy(policy)
        choose = pol.allocate

        def allocate(view):
            c0 = time.process_time()
            ps = list(choose(view))
            acc["policy_s"] += time.process_time() - c0
            decisions.append([tuple(p) for p in ps])
            return ps

        pol.allocate = allocate  # type: ignore[method-assign]
        if not profile:
            highspy.Highs.run = timed("highs_s", highspy.Highs.run)
            gavel_policy.choose_nodes = timed("choose_nodes_s", gavel_policy.choose_nodes)
    if not profile:
        validate.validate_schedule = timed("validate_s", validate.validate_schedule)
        metrics.compute_metrics = timed("metrics_s", metrics.compute_metrics)
        if hasattr(simulator, "DecisionChecker"):  # the per-decision check, by tree
            checker = simulator.DecisionChecker
            checker.check = timed("check_s", checker.check)  # type: ignore[method-assign]
        else:
            simulator.check_decision = timed("check_s", simulator.check_decision)
    load0 = os.getloadavg()[0]
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        t0 = time.perf_counter()
        res = prof.runcall(simulate, inst, pol, seed=0, progress=False)
        wall = time.perf_counter() - t0
        st = pstats.Stats(prof)
        top = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:15]  # type: ignore[attr-defined]
        rows = [{"function": f"{Path(f).name}:{line}({fn})", "calls": v[1],
                 "tottime_s": v[2], "cumtime_s": v[3]} for (f, line, fn), v in top]
        data: dict = {"wall_s": wall, "top": rows}
    else:
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate(inst, pol, seed=0, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        data = {"wall_s": wall, "cpu_s": cpu, **{k: acc.get(k, 0.0) for k in PARTS}}
    comp = {k: float(v) for k, v in res.schedule.completion.items()}
    if decisions:
        blob = pickle.dumps(((pol.needs_work, pol.event_driven), decisions))
        out.with_suffix(".pkl").write_bytes(blob)
        data["decisions_sha256"] = hashlib.sha256(repr(decisions).encode()).hexdigest()[:16]
    data.update(
        optsched_path=str(Path(optsched.__file__).parent), jobs=inst.n_jobs,
        epochs=res.extra["epochs"], allocations=len(res.schedule.allocations),
        mean_jct_s=res.metrics.mean_jct, loadavg_1min=(round(load0, 2),
                                                       round(os.getloadavg()[0], 2)),
        completion_sha256=hashlib.sha256(json.dumps(sorted(comp.items())).encode()
                                         ).hexdigest()[:16],
        completion=comp)
    out.write_text(json.dumps(data))


# --------------------------------------------------------------------------- parent
def base_tree(base: str, into: Path) -> Path:
    """The source tree of commit ``base`` (``git archive``), extracted under ``into``."""
    tar = into / "base.tar"
    with tar.open("wb") as fh:
        subprocess.run(["git", "archive", base], cwd=ROOT, stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(into / "tree", filter="data")
    return into / "tree"


def run_child(tree: Path, args, profile: bool, tmp: Path, tag: str,
              replay: Path | None = None) -> dict:
    out = tmp / f"{tag}.json"
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out),
           "--policy", args.policy]
    if args.jobs is not None:
        cmd += ["--jobs", str(args.jobs)]
    if profile:
        cmd.append("--profile")
    if replay is not None:
        cmd += ["--replay", str(replay)]
    subprocess.run(cmd, env=env, check=True, cwd=tmp)
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="29aedd6", help="commit measured as BEFORE")
    ap.add_argument("--jobs", type=int, default=None, help="first N jobs (default all 2,000)")
    ap.add_argument("--policy", default="gavel.max_min_fairness")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--replays", type=int, default=2, help="replay runs per tree")
    ap.add_argument("--cprofile", action="store_true", help="one cProfile run per tree")
    ap.add_argument("--name", default="sim_profile")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.jobs, args.policy, args.profile, args.replay)
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        trees = {"before": base_tree(args.base, tmp), "after": ROOT}
        rows, comps, profiles, digests, replays = [], {}, {}, {}, []
        for r in range(args.repeat):
            # alternate the order so that a drift in machine load hits both trees
            for variant in (("before", "after") if r % 2 == 0 else ("after", "before")):
                data = run_child(trees[variant], args, False, tmp, f"{variant}{r}")
                comps.setdefault(variant, data.pop("completion"))
                digests.setdefault(variant, data["decisions_sha256"])
                parts = sum(data[k] for k in ("policy_s", "check_s", "validate_s",
                                              "metrics_s"))
                row = {"variant": variant, "repeat": r, **data, "loop_s": data["cpu_s"] - parts,
                       "cpu_per_highs": data["cpu_s"] / max(data["highs_s"], 1e-12),
                       "validate_share": data["validate_s"] / data["cpu_s"]}
                rows.append(row)
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()
                       if k != "optsched_path"}, flush=True)
        for r in range(args.replays):
            for variant in (("before", "after") if r % 2 == 0 else ("after", "before")):
                data = run_child(trees[variant], args, False, tmp, f"{variant}-replay{r}",
                                 replay=tmp / f"{variant}0.pkl")
                if data.pop("completion") != comps[variant]:
                    raise SystemExit(f"replay of {variant}'s decisions changed completions")
                replays.append({"variant": variant, "repeat": r, "replay_wall_s": data["wall_s"],
                                "replay_cpu_s": data["cpu_s"], "check_s": data["check_s"],
                                "validate_s": data["validate_s"], "metrics_s": data["metrics_s"],
                                "loop_s": data["cpu_s"] - data["check_s"] - data["validate_s"]
                                - data["metrics_s"], "loadavg_1min": data["loadavg_1min"]})
                print(replays[-1], flush=True)
        if args.cprofile:
            for variant in ("before", "after"):
                data = run_child(trees[variant], args, True, tmp, f"{variant}-profile")
                data.pop("completion")
                profiles[variant] = data
                print(variant, "cProfile wall", round(data["wall_s"], 1), flush=True)
    same = comps["before"] == comps["after"]
    same_decisions = digests["before"] == digests["after"]
    diff = max((abs(comps["before"][k] - comps["after"].get(k, float("inf")))
                for k in comps["before"]), default=0.0)
    cols = ["variant", "repeat", "wall_s", "cpu_s", "highs_s", "policy_s", "choose_nodes_s",
            "check_s", "validate_s", "metrics_s", "loop_s", "cpu_per_highs", "validate_share",
            "epochs", "allocations", "mean_jct_s", "decisions_sha256", "loadavg_1min"]
    rcols = ["variant", "repeat", "replay_wall_s", "replay_cpu_s", "check_s", "validate_s",
             "metrics_s", "loop_s", "loadavg_1min"]
    from common import markdown_table

    notes = [
        f"Per-job completion times BEFORE and AFTER identical: {same} (largest difference "
        f"{diff:g} s over {len(comps['before'])} jobs); every decision identical: "
        f"{same_decisions}.",
        "Targets (issue 13): total <= 1.5x the HiGHS time inside it (cpu_per_highs); "
        "validation <= 10 % of the simulation's time (validate_share, CPU seconds). "
        "loop_s = cpu - policy - check - validate - metrics. All parts in CPU seconds.",
        "\nSimulator alone (the recorded decisions replayed, no policy), CPU seconds:\n\n"
        + markdown_table(replays, rcols),
        "Machine: 2 cores shared with other work (see loadavg_1min at child start and end); "
        "the two trees ran alternately in one invocation, so both saw the same load.",
    ]
    for variant, data in profiles.items():
        notes.append(f"\ncProfile, {variant} (wall {data['wall_s']:.1f} s under the "
                     "profiler), top functions by own time:\n\n| function | calls | own s | "
                     "cumulative s |\n|---|---|---|---|\n" + "\n".join(
                         f"| {t['function']} | {t['calls']} | {t['tottime_s']:.2f} | "
                         f"{t['cumtime_s']:.2f} |" for t in data["top"]))
    write_results(args.name, rows, cols,
                  title="Simulator profile: Gavel max-min on the 2,000-job trace, "
                  f"before ({args.base}) and after",
                  params={"trace": "gavel-philly-2000" + (f" first {args.jobs}" if args.jobs
                                                          else ""),
                          "policy": args.policy, "cluster": "gavel-108", "base": args.base,
                          "repeat": args.repeat},
                  notes="\n".join(notes))
    payload = json.loads((RESULTS / f"{args.name}.json").read_text())
    payload["completion_identical"] = same
    payload["decisions_identical"] = same_decisions
    payload["replays"] = replays
    payload["cprofile"] = profiles
    write_result_file(RESULTS / f"{args.name}.json",
                      json.dumps(payload, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
