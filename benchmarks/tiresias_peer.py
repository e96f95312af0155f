"""optsched's Tiresias policies next to Tiresias' own simulator on the same inputs.

Peer: SymbioticLab/Tiresias (``simulator/run_sim.py``, Python 2.7), run through
``peers/tiresias_run.py``. Set ``TIRESIAS_HOME`` (a checkout) and ``TIRESIAS_PYTHON``
(a Python 2.7 with numpy); without them the peer's runs are skipped with a message and
the committed peer results (``results/tiresias_peer/``) are used, so the optsched side
can still be re-measured offline.

Inputs (written to ``results/tiresias_peer/instances``):

* ``t60_n2g4``: Tiresias' 60-job trace on 2 servers x 4 P100;
* ``t60_n32g4``: the same on its own 32 x 4 cluster;
* ``philly240_r1``, ``philly240_r2``: 240 Philly-derived jobs
  (``generate_philly(240, seed=0)``) at 1 and 2 jobs/h on 4 x 4 P100.

Tiresias reads whole seconds: the runner rounds each job's submit time and duration.
optsched runs each input as is and on its whole-second copy (``NAME_int.json``: the
submit times and durations Tiresias reads), so a difference that comes only from the
rounding shows as a difference between the two agreement columns.

Pairs (Tiresias scheme -> optsched policy): ``yarn`` (FIFO + MS-YARN placement) ->
``tiresias.yarn_fifo``; ``fifo-count`` (FIFO, GPU counting) -> ``tiresias.yarn_fifo``
with ``placement=spread``; ``dlas-gpu`` -> ``tiresias.las`` (default; ``queue_order=
arrival``; ``queue_order=original``; and with ``demotion=original`` too);
``dlas-gpu-gittins`` -> ``tiresias.gittins`` (default, ``gittins_fixed``, the grid
index, the grid index with ``demotion=original``); the simulator's other schedulers
``fjf``, ``sjf``, ``lpjf``, ``shortest``, ``shortest-gpu``, ``shortest-expected`` ->
``tiresias.<name>`` (``lpjf`` also with ``scan=original``, its pass over the pending
list; ``shortest_expected`` also with ``expected_keys=original``, its keys); its
``random`` and ``crandom`` placements under ``fifo`` ->
``tiresias.yarn_fifo`` with ``placement=random`` / ``crandom`` (different random
streams: only the means compare).
``dlas-gpu-pack`` -> ``tiresias.dlas_gpu_pack`` (default and with the original queue
options): at 959f9b0 every model's memory share is 1, so neither packs;
``dlas-gpu-pack-draft`` runs the original with the per-model shares commented out in its
``models.py`` (``peers/tiresias_run.py --draft-shares``) against
``tiresias.dlas_gpu_pack`` on the input with those shares as full-speed co-located rates
(``full_speed_colocation``; a profile Tiresias does not know is read as resnet50, as the
runner writes it); ``gandiva`` (its ``gandiva`` scheduler and placement) ->
``tiresias.gandiva``; ``gittins`` (run with the launcher's ``--peer-fix-gittins``;
``gittins-unfixed`` records that without it the original crashes) ->
``tiresias.gittins`` with one queue, the grid index and ``demotion=original`` (the
same mechanism but for two lines of the original, see the notes) and
``tiresias.fjf`` with ``placement=spread`` (what it amounts to on long jobs) and
``tiresias.gittins_original`` (``gittins_scheme="original"``: both of the original's rules).

Per-job agreement: completion within 1 s of the original's, within one round
(``instance.slot``) and Pearson's r of the JCTs; on the whole-second copy within 1 s.
CPU seconds are optsched's (``time.process_time``).

    TIRESIAS_HOME=... TIRESIAS_PYTHON=... python benchmarks/tiresias_peer.py

``TIRESIAS_RERUN=tag,tag`` runs only those Tiresias schemes (``PEER`` tags) and reads
the others' committed results. ``TIRESIAS_ONLY=tag,tag`` re-measures only the pairs of
those schemes and keeps the other rows of the committed ``results/tiresias_peer.json``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import RESULTS, write_results

from optsched.catalog import cluster_preset, generate_philly, read_tiresias_trace
from optsched.core.instance import Cluster, Instance, Node, load_instance
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias import full_speed_colocation
from optsched.tiresias.policy import TIRESIAS_DRAFT_SHARES

HERE = Path(__file__).resolve().parent
DATA = RESULTS / "tiresias_peer"
RUNNER = HERE / "peers" / "tiresias_run.py"

#: tag -> (run_sim.py --schedule, --scheme placement or None for its default yarn[,
#: runner flags])
PEER: dict[str, tuple] = {"yarn": ("yarn", None), "fifo-count": ("fifo", "count"),
        "dlas-gpu": ("dlas-gpu", None), "dlas-gpu-gittins": ("dlas-gpu-gittins", None),
        "fjf": ("fjf", None), "lpjf": ("lpjf", None),
        # the preemptive schedulers with GPU counting: under yarn placement they stop
        # starting jobs after the first dozen (see the notes)
        "sjf-count": ("sjf", "count"), "shortest-count": ("shortest", "count"),
        "shortest-gpu-count": ("shortest-gpu", "count"),
        "shortest-expected-count": ("shortest-expected", "count"),
        "fifo-random": ("fifo", "random"), "fifo-crandom": ("fifo", "crandom"),
        # dlas-gpu-pack never calls a placement; the draft run sets the models' memory
        # shares to the figures commented out in its models.py (all 1 at 959f9b0)
        "dlas-gpu-pack": ("dlas-gpu-pack", None),
        "dlas-gpu-pack-draft": ("dlas-gpu-pack", None, ["--draft-shares"]),
        "gandiva": ("gandiva", "gandiva"),
        # --schedule=gittins: the runner passes the launcher's --peer-fix-gittins (at
        # 959f9b0 the scheme crashes at its first event without it); -unfixed records that
        "gittins": ("gittins", None), "gittins-unfixed": ("gittins", None, ["--no-fix"])}
ORIGINAL_LAS = {"queue_order": "original", "demotion": "original"}
ORIGINAL_GITTINS = {"gittins_grid": True, "demotion": "original"}
#: the original's ``gittins`` has no queues: one threshold above any job's service
ONE_QUEUE = {"thresholds": (1e15,), **ORIGINAL_GITTINS}
OURS = {
    "tiresias.yarn_fifo": ("tiresias.yarn_fifo", {}),
    "tiresias.yarn_fifo spread": ("tiresias.yarn_fifo", {"placement": "spread"}),
    "tiresias.las": ("tiresias.las", {}),
    "tiresias.las queue_order=arrival": ("tiresias.las", {"queue_order": "arrival"}),
    "tiresias.las queue_order=original": ("tiresias.las", {"queue_order": "original"}),
    "tiresias.las queue_order,demotion=original": ("tiresias.las", ORIGINAL_LAS),
    "tiresias.gittins": ("tiresias.gittins", {}),
    "tiresias.gittins_fixed": ("tiresias.gittins_fixed", {}),
    "tiresias.gittins gittins_grid": ("tiresias.gittins", {"gittins_grid": True}),
    "tiresias.gittins gittins_grid,demotion=original": ("tiresias.gittins",
                                                        ORIGINAL_GITTINS),
    "tiresias.fjf": ("tiresias.fjf", {}),
    "tiresias.sjf": ("tiresias.sjf", {}),
    "tiresias.lpjf": ("tiresias.lpjf", {}),
    "tiresias.lpjf scan=original": ("tiresias.lpjf", {"scan": "original"}),
    "tiresias.shortest": ("tiresias.shortest", {}),
    "tiresias.shortest_gpu": ("tiresias.shortest_gpu", {}),
    "tiresias.shortest_expected": ("tiresias.shortest_expected", {}),
    "tiresias.shortest_expected expected_keys=original": ("tiresias.shortest_expected",
                                                          {"expected_keys": "original"}),
    "tiresias.yarn_fifo placement=random": ("tiresias.yarn_fifo", {"placement": "random"}),
    "tiresias.yarn_fifo placement=crandom": ("tiresias.yarn_fifo", {"placement": "crandom"}),
    "tiresias.dlas_gpu_pack": ("tiresias.dlas_gpu_pack", {}),
    "tiresias.dlas_gpu_pack queue_order,demotion=original": ("tiresias.dlas_gpu_pack",
                                                             ORIGINAL_LAS),
    # the draft shares as full-speed co-located rates (full_speed_colocation)
    "tiresias.dlas_gpu_pack draft shares": ("tiresias.dlas_gpu_pack", {}, "draft"),
    "tiresias.dlas_gpu_pack draft shares,original": ("tiresias.dlas_gpu_pack", ORIGINAL_LAS,
                                                     "draft"),
    "tiresias.gandiva": ("tiresias.gandiva", {}),
    "tiresias.gittins one queue,gittins_grid,demotion=original": ("tiresias.gittins",
                                                                  ONE_QUEUE),
    "tiresias.fjf placement=spread": ("tiresias.fjf", {"placement": "spread"}),
    "tiresias.gittins_original": ("tiresias.gittins_original", {}),
}
PAIRS = [("yarn", "tiresias.yarn_fifo"), ("fifo-count", "tiresias.yarn_fifo spread"),
         ("dlas-gpu", "tiresias.las"), ("dlas-gpu", "tiresias.las queue_order=arrival"),
         ("dlas-gpu", "tiresias.las queue_order=original"),
         ("dlas-gpu", "tiresias.las queue_order,demotion=original"),
         ("dlas-gpu-gittins", "tiresias.gittins"),
         ("dlas-gpu-gittins", "tiresias.gittins_fixed"),
         ("dlas-gpu-gittins", "tiresias.gittins gittins_grid"),
         ("dlas-gpu-gittins", "tiresias.gittins gittins_grid,demotion=original"),
         ("fjf", "tiresias.fjf"), ("lpjf", "tiresias.lpjf"),
         ("lpjf", "tiresias.lpjf scan=original"), ("sjf-count", "tiresias.sjf"),
         ("shortest-count", "tiresias.shortest"),
         ("shortest-gpu-count", "tiresias.shortest_gpu"),
         ("shortest-expected-count", "tiresias.shortest_expected"),
         ("shortest-expected-count", "tiresias.shortest_expected expected_keys=original"),
         ("fifo-random", "tiresias.yarn_fifo placement=random"),
         ("fifo-crandom", "tiresias.yarn_fifo placement=crandom"),
         ("dlas-gpu-pack", "tiresias.dlas_gpu_pack"),
         ("dlas-gpu-pack", "tiresias.dlas_gpu_pack queue_order,demotion=original"),
         ("dlas-gpu-pack-draft", "tiresias.dlas_gpu_pack draft shares"),
         ("dlas-gpu-pack-draft", "tiresias.dlas_gpu_pack draft shares,original"),
         ("gandiva", "tiresias.gandiva"),
         ("gittins", "tiresias.gittins one queue,gittins_grid,demotion=original"),
         ("gittins", "tiresias.fjf placement=spread"),
         ("gittins", "tiresias.gittins_original"),
         ("gittins-unfixed", "tiresias.gittins one queue,gittins_grid,demotion=original")]


def _runner():
    spec = importlib.util.spec_from_file_location("tiresias_run", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def whole_seconds(inst: Instance) -> Instance:
    """The input as Tiresias reads it: submit times and durations in whole seconds (the
    runner's conversion), the work scaled to the rounded duration."""
    gpu_type, rows, _ = _runner().convert(inst)
    by = {r["oid"]: r for r in rows}
    jobs = tuple(dataclasses.replace(
        j, arrival=float(by[j.id]["submit"]),
        work=by[j.id]["duration"] * j.workers * j.throughput[gpu_type]) for j in inst.jobs)
    return dataclasses.replace(inst, jobs=jobs)


def instances() -> dict[str, Path]:
    (DATA / "instances").mkdir(parents=True, exist_ok=True)
    two = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(2)))
    c16 = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(4)))
    made = {"t60_n2g4": read_tiresias_trace(cluster=two),
            "t60_n32g4": read_tiresias_trace(cluster=cluster_preset("tiresias-n32g4")),
            **{f"philly240_r{r}": generate_philly(240, cluster=c16, seed=0,
                                                  jobs_per_hour=float(r)) for r in (1, 2)}}
    out = {}
    for name, inst in made.items():
        out[name] = DATA / "instances" / f"{name}.json"
        # the committed inputs are the ones the original ran on: a fresh draw on another
        # CPU may differ in last bits (numpy's vectorised pow), so they are kept
        if not out[name].exists():
            inst.to_json(out[name])
        whole = DATA / "instances" / f"{name}_int.json"
        if not whole.exists():
            whole_seconds(load_instance(out[name])).to_json(whole)
    return out


def peer_result(name: str, path: Path, tag: str) -> dict | None:
    """The original's run (``{"failed": last error line}`` when it crashes)."""
    out = DATA / f"{name}.tiresias.{tag}.json"
    failed = DATA / f"{name}.tiresias.{tag}.failed.txt"
    home = os.environ.get("TIRESIAS_HOME")
    rerun = os.environ.get("TIRESIAS_RERUN")
    if rerun and tag not in rerun.split(",") and (out.exists() or failed.exists()):
        home = None  # the committed run of a scheme not asked for
    if home and Path(home, "simulator", "run_sim.py").is_file():
        scheme, placement, *flags = PEER[tag]
        cmd = [sys.executable, str(RUNNER), "--instance", str(path), "--scheme", scheme,
               "--out", str(out)] + (["--placement", placement] if placement else []) \
            + (flags[0] if flags else [])
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            lines = [x for x in run.stderr.splitlines() if x.strip()]
            failed.write_text(f"{' '.join(cmd[2:])}\n{lines[-1] if lines else run.returncode}\n")
            return {"failed": lines[-1] if lines else f"exit {run.returncode}"}
        failed.unlink(missing_ok=True)
    elif failed.exists():
        return {"failed": failed.read_text().splitlines()[-1]}
    elif not out.exists():
        print(f"skip peer {tag} on {name}: TIRESIAS_HOME not set and no committed result")
        return None
    d = json.loads(out.read_text())
    return {"jct": {k: v["jct"] for k, v in d["jobs"].items()},
            "completion": {k: v["completion"] for k, v in d["jobs"].items()},
            "mean": d["mean_jct"], "p99": d["p99_jct"], "makespan": d["makespan"],
            "preemptions": d["total_preemptions"], "commit": d.get("commit")}


def draft_shares(inst: Instance) -> tuple[Instance, dict]:
    """The input with the draft memory shares as full-speed co-located rates, each job's
    model read as the runner writes it (a profile Tiresias does not know is resnet50)."""
    known = _runner().TIRESIAS_MODELS
    shares = {j.profile if j.profile is not None else j.id: TIRESIAS_DRAFT_SHARES[
        j.profile if j.profile in known else "resnet50"] for j in inst.jobs}
    return full_speed_colocation(inst, shares)


def ours_result(inst: Instance, policy: str, options: dict, setting: str = "") -> dict:
    if setting == "draft":
        inst, shares = draft_shares(inst)
        options = {**options, "memory_shares": shares}
    c0 = time.process_time()
    res = simulate(inst, get_policy(policy, **options), progress=False)
    cpu = time.process_time() - c0
    m = res.metrics
    return {"jct": dict(m.jct), "completion": dict(res.schedule.completion),
            "mean": m.mean_jct, "p99": m.p99_jct, "makespan": m.makespan,
            "preemptions": res.extra["total_preemptions"], "cpu": cpu}


def agreement(P: dict, O: dict, slot: float) -> dict:
    """Per-job agreement of optsched's run ``O`` with the original's ``P``."""
    ks = sorted(P["completion"])
    cp = np.array([P["completion"][k] for k in ks])
    co = np.array([O["completion"].get(k, np.inf) for k in ks])
    x = np.array([P["jct"][k] for k in ks])
    y = np.array([O["jct"].get(k, np.nan) for k in ks])
    ok = np.isfinite(y)
    r = (float(np.corrcoef(x[ok], y[ok])[0, 1])
         if ok.sum() > 1 and x[ok].std() > 0 and y[ok].std() > 0 else 1.0)
    d = np.abs(cp - co)
    return {"n": len(ks), "within_1s": int((d <= 1.0).sum()),
            "within_round": int((d <= slot).sum()), "pearson_r": r}


def main() -> None:
    if not os.environ.get("TIRESIAS_HOME"):
        print("TIRESIAS_HOME is not set: the peer is not run; its committed results are used")
    rows, commit = [], None
    only = [t for t in os.environ.get("TIRESIAS_ONLY", "").split(",") if t]
    kept = []
    if only:  # the other pairs' rows as committed
        old = json.loads((RESULTS / "tiresias_peer.json").read_text())
        kept = [r for r in old["rows"] if r["tiresias"] not in only]
        commit = old["params"].get("peer_commit")
    for name, path in instances().items():
        inst = load_instance(path)
        whole = load_instance(DATA / "instances" / f"{name}_int.json")
        peer = {t: r for t in PEER if (not only or t in only)
                and (r := peer_result(name, path, t)) is not None}
        used = {ot for pt, ot in PAIRS if pt in peer}
        ours = {t: ours_result(inst, *OURS[t]) for t in OURS if t in used}
        ours_int = {t: ours_result(whole, *OURS[t]) for t in OURS if t in used}
        for pt, ot in PAIRS:
            if pt not in peer:
                continue
            P, O, Oi = peer[pt], ours[ot], ours_int[ot]
            if "failed" in P:
                rows.append({"instance": name, "tiresias": pt, "optsched": ot,
                             "mean_jct_h_optsched": O["mean"] / 3600,
                             "peer_status": f"crashed: {P['failed']}", "cpu_s": O["cpu"]})
                continue
            commit = commit or P["commit"]
            a = agreement(P, O, inst.slot)
            ai = agreement(P, Oi, inst.slot)
            n = a["n"]
            rows.append({
                "instance": name, "tiresias": pt, "optsched": ot,
                "mean_jct_h_tiresias": P["mean"] / 3600, "mean_jct_h_optsched": O["mean"] / 3600,
                "mean_ratio": O["mean"] / P["mean"],
                "makespan_ratio": O["makespan"] / P["makespan"],
                "p99_ratio": O["p99"] / P["p99"],
                "preemptions": f"{O['preemptions']}/{P['preemptions']}",
                "within_1s": f"{a['within_1s']}/{n}", "within_round": f"{a['within_round']}/{n}",
                "pearson_r": a["pearson_r"],
                "mean_ratio_int": Oi["mean"] / P["mean"],
                "within_1s_int": f"{ai['within_1s']}/{n}",
                "within_round_int": f"{ai['within_round']}/{n}", "pearson_r_int": ai["pearson_r"],
                "peer_status": "ok", "cpu_s": O["cpu"]})
    if kept:
        order = {(pt, ot): k for k, (pt, ot) in enumerate(PAIRS)}
        names = list(instances())
        rows = sorted(kept + rows, key=lambda r: (names.index(r["instance"]),
                                                  order[(r["tiresias"], r["optsched"])]))
    write_results(
        "tiresias_peer", rows,
        ["instance", "tiresias", "optsched", "mean_jct_h_tiresias", "mean_jct_h_optsched",
         "mean_ratio", "makespan_ratio", "p99_ratio", "preemptions", "within_1s",
         "within_round", "pearson_r", "mean_ratio_int", "within_1s_int", "within_round_int",
         "pearson_r_int",
         "peer_status", "cpu_s"],
        title="Tiresias' simulator vs optsched on the same inputs",
        params={"peer": "SymbioticLab/Tiresias", "peer_commit": commit,
                "inputs": "results/tiresias_peer/instances"},
        notes="Ratios are optsched / Tiresias; preemptions optsched/Tiresias. within_1s / "
              "within_round: jobs whose completion is within 1 s / one round (instance "
              "slot: 60 s on t60, 360 s on philly240) of Tiresias'; pearson_r of the "
              "per-job JCTs. The _int columns run optsched on the whole-second copy of "
              "the input (the submit times and durations Tiresias reads). "
              "yarn_fifo = FIFO with head-of-line blocking and MS-YARN first-fit "
              "placement; with spread placement it is Tiresias' fifo + count. "
              "2D-LAS: the default keeps a queue's running jobs ahead of its waiting ones "
              "and derives queues from attained service at every decision (the paper's "
              "rule); queue_order=original keeps Tiresias' queue lists (a demoted job "
              "joins the end of its new queue, running jobs move first only after the "
              "pass) and demotion=original its check instants "
              "(t + floor((Q - executed seconds) / GPUs)). 2D-Gittins: tiresias.gittins "
              "takes the supremum over Delta; gittins_fixed a fixed Delta; gittins_grid "
              "is Tiresias' index (a step function of its sample grid, rounded). With "
              "both original options the decisions are Tiresias' on the whole-second "
              "copies; on the raw inputs sub-second differences of attained service "
              "straddle a grid sample (Gittins, philly240_r2) or move completions by up "
              "to a few seconds. random / crandom draw from other random streams than "
              "Tiresias': only the means compare. gittins (with the launcher's "
              "--peer-fix-gittins; unfixed it crashes at its first event) has no queues "
              "and visits the jobs by its index in ascending order, i.e. lowest Gittins "
              "index first, and indexes a waiting job by its executed seconds but a "
              "running one by its GPU-seconds; tiresias.gittins_original has both rules, "
              "while the paper's order (index highest first on one service) of the "
              "one-queue row differs in both (with those two lines "
              "changed in a scratch copy of the original, every completion is within 1 s "
              "of optsched's on all four whole-second copies). No index exceeds the one below the "
              "first sample (121 s), so lowest first puts every job whose service has "
              "passed it ahead of every job that has not started: on long jobs FIFO with "
              "skipping (fjf with spread placement). CPU: optsched's simulation, on a "
              "shared 2-core machine.")


if __name__ == "__main__":
    main()
