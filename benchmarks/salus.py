"""Salus benchmarks: inference packing, hyper-parameter tuning and mixed training on lanes.

Jobs come from Salus' own data through :mod:`optsched.salus.workload` (P/T split by the
peak-vs-batch intercept, iteration time = JCT / iterations, compute share u derived from
the per-sample speed-up of the largest batch; inference footprints P/3 and one sample's
activations). Every assumption is in that module's docstring.

1. ``salus_packing``: Salus' inference setting (14 models x 3 copies = 42 jobs on one
   GPU; the catalog has data for 13 of the 14 models, so 13 x c copies), one 16 GB
   and one 12 GB GPU: how many jobs each method admits. Not sharing runs 1 job per GPU.
2. ``salus_tuning``: hyper-parameter tuning: K trials of one 5-minute workload (batch
   25) on 2 GPUs of 16 GB. Makespan and mean JCT with lanes (exact, LPT, lane manager)
   against exclusive GPUs (one job at a time per GPU, shortest first); the makespan
   ratio is the GPU-utilisation gain.
3. ``salus_training``: the 11 CNN training jobs (batch 25, 5-minute runs) together on
   2 GPUs: mean JCT and makespan with lanes vs exclusive GPUs (FIFO and SPT orders).

    python benchmarks/salus.py            # everything (about a minute)
    python benchmarks/salus.py --quick    # fewer rows
"""

from __future__ import annotations

import argparse
import time

from common import write_results

from optsched import Cluster, Instance, Node, Status
from optsched.salus import exact, ffd, inference_models, lane_manager, lpt, training_job
from optsched.salus.workload import footprints, inference_job, median_persistent_fraction

BIG_GB = 1.0e6  # "exclusive": memory plays no role when one job runs at a time


def gpus(count: int, gb: float) -> Cluster:
    return Cluster((Node("server", {"v100": count}, cpus=32, memory=128,
                         gpu_memory={"v100": gb}),))


def packing(copies_list: list[int]) -> list[dict]:
    rows = []
    models = sorted(inference_models())
    for gb in (16.0, 12.0):
        for copies in copies_list:
            jobs = tuple(inference_job(m, f"{m}-{c}") for m in models for c in range(copies))
            inst = Instance(gpus(1, gb), jobs, name=f"inference-{copies}")
            row = {"gpu_gb": gb, "models": len(models), "copies": copies, "jobs": len(jobs)}
            t = time.perf_counter()
            ex = exact(inst, objective="admitted", time_limit=120)
            row["exact_admitted"] = ex.objective
            row["exact_status"] = str(ex.status)
            row["exact_s"] = time.perf_counter() - t
            for name, h in (("lane_manager", lane_manager), ("ffd", ffd), ("lpt", lpt)):
                row[f"{name}_admitted"] = h(inst, objective="admitted").objective
            row["no_sharing"] = 1
            rows.append(row)
            print(row, flush=True)
    return rows


def exclusive(inst: Instance) -> tuple[float, float, float]:
    """Optimal exclusive makespan (one job at a time per GPU), SPT and FIFO mean JCT."""
    free = inst.replace(cluster=gpus(inst.cluster.total_gpus, BIG_GB))
    mk = exact(free, lanes=1, time_limit=60)
    assert mk.status is Status.OPTIMAL
    spt = exact(free, lanes=1, realize="serial", time_limit=60).metrics.mean_jct
    # FIFO: jobs in instance order to the GPU that frees first
    ends = [0.0] * inst.cluster.total_gpus
    total = 0.0
    for j in inst.jobs:
        g = min(range(len(ends)), key=lambda k: ends[k])
        ends[g] += j.work / j.throughput["v100"]
        total += ends[g]
    return mk.objective, spt, total / inst.n_jobs


def lanes_rows(inst: Instance, base: dict) -> list[dict]:
    mk_ex, spt, fifo = exclusive(inst)
    rows = []
    for name, fn in (("exact", lambda i, **k: exact(i, time_limit=60, **k)),
                     ("lpt", lpt), ("lane_manager", lane_manager)):
        t = time.perf_counter()
        ser = fn(inst, realize="serial")     # model makespan in .objective; serial metrics
        secs = time.perf_counter() - t
        row = dict(base, method=name)
        if not ser.success:
            row["status"] = str(ser.status)
            rows.append(row)
            continue
        row.update({
            "status": str(ser.status), "gap": ser.gap,
            "lanes": "+".join(map(str, ser.extra["lanes_per_gpu"])),
            "makespan_s": ser.objective, "excl_makespan_s": mk_ex,
            "util_gain": mk_ex / ser.objective, "serial_makespan_s": ser.metrics.makespan,
            "mean_jct_serial_s": ser.metrics.mean_jct,
            "excl_spt_jct_s": spt, "excl_fifo_jct_s": fifo,
            "jct_gain_vs_spt": spt / ser.metrics.mean_jct,
            "jct_gain_vs_fifo": fifo / ser.metrics.mean_jct, "seconds": secs})
        rows.append(row)
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)
    return rows


def tuning(models: list[str], trials: int) -> list[dict]:
    rows = []
    for m in models:
        w = f"{m}_25_5min"
        jobs = tuple(training_job(w, f"{m}-trial{k}") for k in range(trials))
        inst = Instance(gpus(2, 16.0), jobs, name=f"tuning-{m}")
        rows += lanes_rows(inst, {"workload": w, "jobs": trials,
                                  "u": round(jobs[0].compute_share, 3)})
    return rows


def training() -> list[dict]:
    jobs = tuple(training_job(f"{m}_25_5min", m) for m in sorted(footprints()))
    inst = Instance(gpus(2, 16.0), jobs, name="training-mix")
    return lanes_rows(inst, {"workload": "11 CNNs, batch 25, 5 min", "jobs": len(jobs),
                             "u": "per model"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    copies = [3, 6] if args.quick else [3, 4, 6, 9, 12]
    models = ["resnet50", "alexnet"] if args.quick else [
        "resnet50", "googlenet", "alexnet", "vgg11", "inception3", "overfeat"]
    rows = packing(copies)
    write_results(
        "salus_packing", rows,
        ["gpu_gb", "models", "copies", "jobs", "exact_admitted", "lane_manager_admitted",
         "ffd_admitted", "lpt_admitted", "no_sharing", "exact_status", "exact_s"],
        title="Salus inference packing: jobs admitted on one GPU",
        params={"P_inf": "P_train/3", "T_inf": "per-sample activations (batch 1)",
                "persistent_fraction_published": round(median_persistent_fraction(), 3)},
        notes="Salus reports 42 inference jobs (14 models x 3) on one GPU, 42x not "
              "sharing. The exact optimum is one lane (merging lemma); the lane manager "
              "gives every job a lane of its own P+T while memory lasts, and a lane of "
              "exactly P+T takes no later job unless that job has P = 0 and T no larger.")
    rows = tuning(models, 8)
    cols = ["workload", "jobs", "u", "method", "status", "gap", "lanes", "makespan_s",
            "excl_makespan_s", "util_gain", "serial_makespan_s", "mean_jct_serial_s",
            "excl_spt_jct_s", "excl_fifo_jct_s", "jct_gain_vs_spt", "jct_gain_vs_fifo",
            "seconds"]
    write_results("salus_tuning", rows, cols,
                  title="Salus hyper-parameter tuning: 8 trials on 2 x 16 GB GPUs",
                  params={"trials": 8, "gpus": 2, "gpu_gb": 16},
                  notes="makespan_s is the fluid model's makespan of the plan; util_gain = "
                        "exclusive makespan / makespan_s (Salus: 2.38x GPU utilisation for "
                        "tuning). Mean JCT and serial_makespan_s come from the serial "
                        "realisation of the same plan (lanes run jobs shortest first, "
                        "compute shared in proportion). Exclusive: optimal makespan with "
                        "one job at a time per GPU; SPT and FIFO orders for mean JCT.")
    rows = training()
    write_results("salus_training", rows, cols,
                  title="Salus training mix: 11 CNN jobs on 2 x 16 GB GPUs",
                  params={"gpus": 2, "gpu_gb": 16},
                  notes="Salus reports 3.19x better mean JCT for training with SRTF "
                        "time-slicing (an online result); here a static plan of all jobs "
                        "resident at once, against exclusive GPUs in FIFO and SPT order.")


if __name__ == "__main__":
    main()
