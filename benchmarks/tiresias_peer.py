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

Pairs (Tiresias scheme -> optsched policy): ``yarn`` (FIFO + MS-YARN placement) ->
``tiresias.yarn_fifo``; ``fifo-count`` (FIFO, GPU counting) -> ``tiresias.yarn_fifo``
with ``placement=spread``; ``dlas-gpu`` -> ``tiresias.las`` (and with
``queue_order=arrival``, the previous order); ``dlas-gpu-gittins`` ->
``tiresias.gittins`` and ``tiresias.gittins_fixed``.

    TIRESIAS_HOME=... TIRESIAS_PYTHON=... python benchmarks/tiresias_peer.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import RESULTS, write_results

from optsched.catalog import cluster_preset, generate_philly, read_tiresias_trace
from optsched.core.instance import Cluster, Node, load_instance
from optsched.registry import get_policy
from optsched.sim import simulate

HERE = Path(__file__).resolve().parent
DATA = RESULTS / "tiresias_peer"
RUNNER = HERE / "peers" / "tiresias_run.py"

PEER = {"yarn": ("yarn", None), "fifo-count": ("fifo", "count"),
        "dlas-gpu": ("dlas-gpu", None), "dlas-gpu-gittins": ("dlas-gpu-gittins", None)}
OURS = {
    "tiresias.yarn_fifo": ("tiresias.yarn_fifo", {}),
    "tiresias.yarn_fifo spread": ("tiresias.yarn_fifo", {"placement": "spread"}),
    "tiresias.las": ("tiresias.las", {}),
    "tiresias.las queue_order=arrival": ("tiresias.las", {"queue_order": "arrival"}),
    "tiresias.gittins": ("tiresias.gittins", {}),
    "tiresias.gittins_fixed": ("tiresias.gittins_fixed", {}),
}
PAIRS = [("yarn", "tiresias.yarn_fifo"), ("fifo-count", "tiresias.yarn_fifo spread"),
         ("dlas-gpu", "tiresias.las"), ("dlas-gpu", "tiresias.las queue_order=arrival"),
         ("dlas-gpu-gittins", "tiresias.gittins"),
         ("dlas-gpu-gittins", "tiresias.gittins_fixed")]


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
        inst.to_json(out[name])
    return out


def peer_result(name: str, path: Path, tag: str) -> dict | None:
    out = DATA / f"{name}.tiresias.{tag}.json"
    home = os.environ.get("TIRESIAS_HOME")
    if home and Path(home, "simulator", "run_sim.py").is_file():
        scheme, placement = PEER[tag]
        cmd = [sys.executable, str(RUNNER), "--instance", str(path), "--scheme", scheme,
               "--out", str(out)] + (["--placement", placement] if placement else [])
        subprocess.run(cmd, check=True)
    elif not out.exists():
        print(f"skip peer {tag} on {name}: TIRESIAS_HOME not set and no committed result")
        return None
    d = json.loads(out.read_text())
    return {"jct": {k: v["jct"] for k, v in d["jobs"].items()}, "mean": d["mean_jct"],
            "p50": d["p50_jct"], "p99": d["p99_jct"], "makespan": d["makespan"],
            "preemptions": d["total_preemptions"], "commit": d.get("commit")}


def ours_result(path: Path, policy: str, options: dict) -> dict:
    res = simulate(load_instance(path), get_policy(policy, **options), progress=False)
    m = res.metrics
    return {"jct": dict(m.jct), "mean": m.mean_jct, "p50": m.p50_jct, "p99": m.p99_jct,
            "makespan": m.makespan, "preemptions": res.extra["total_preemptions"]}


def main() -> None:
    if not os.environ.get("TIRESIAS_HOME"):
        print("TIRESIAS_HOME is not set: the peer is not run; its committed results are used")
    rows, commit = [], None
    for name, path in instances().items():
        peer = {t: r for t in PEER if (r := peer_result(name, path, t)) is not None}
        ours = {t: ours_result(path, *OURS[t]) for t in OURS}
        for pt, ot in PAIRS:
            if pt not in peer:
                continue
            P, O = peer[pt], ours[ot]
            commit = commit or P["commit"]
            ks = sorted(P["jct"])
            x = np.array([P["jct"][k] for k in ks])
            y = np.array([O["jct"][k] for k in ks])
            r = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else 1.0
            rows.append({
                "instance": name, "tiresias": pt, "optsched": ot,
                "mean_jct_h_tiresias": P["mean"] / 3600, "mean_jct_h_optsched": O["mean"] / 3600,
                "mean_ratio": O["mean"] / P["mean"], "p99_ratio": O["p99"] / P["p99"],
                "makespan_ratio": O["makespan"] / P["makespan"],
                "preemptions": f"{O['preemptions']}/{P['preemptions']}",
                "jobs_equal_1s": f"{int((np.abs(x - y) <= 1.0).sum())}/{len(ks)}",
                "pearson_r": r})
    write_results(
        "tiresias_peer", rows,
        ["instance", "tiresias", "optsched", "mean_jct_h_tiresias", "mean_jct_h_optsched",
         "mean_ratio", "p99_ratio", "makespan_ratio", "preemptions", "jobs_equal_1s",
         "pearson_r"],
        title="Tiresias' simulator vs optsched on the same inputs",
        params={"peer": "SymbioticLab/Tiresias", "peer_commit": commit,
                "inputs": "results/tiresias_peer/instances"},
        notes="Ratios are optsched / Tiresias; preemptions optsched/Tiresias. Tiresias "
              "keeps times in whole seconds (its trace format: durations and submit times "
              "are rounded), so the same decisions can give per-job JCTs a few seconds "
              "apart (jobs_equal_1s counts those within 1 s). yarn_fifo = FIFO with "
              "head-of-line blocking and MS-YARN first-fit placement; with spread "
              "placement it is Tiresias' fifo + count. "
              "2D-LAS keeps a queue's running jobs ahead of its waiting ones as Tiresias "
              "does; queue_order=arrival (the previous default) preempts a running job "
              "for an older waiting one of the same queue. 2D-Gittins: Tiresias' "
              "dlas-gpu-gittins uses a fixed Delta and sums s_i (code quirk) in its "
              "index; tiresias.gittins takes the supremum over Delta.")


if __name__ == "__main__":
    main()
