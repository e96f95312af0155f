"""AlloX's workloads: the demo instance and the 4-job example of AlloX's talk."""

from __future__ import annotations

from optsched.core.instance import Cluster, Instance, Job, Node
from optsched.core.schedule import Allocation, Schedule

__all__ = ["demo_instance", "talk_instance", "talk_schedule", "TALK_TIMES"]


def demo_instance(n_jobs: int = 24, seed: int = 0) -> Instance:
    """Single-GPU jobs from Gavel's measured profiles on 2 V100 + 2 P100 + 2 K80 GPUs.

    Durations follow Gavel's Philly-derived mixture; all jobs are queued at time 0.
    """
    from optsched.catalog import generate_philly

    cluster = Cluster(tuple(Node(f"{t}-node", {t: 2}, cpus=16, memory=128)
                            for t in ("v100", "p100", "k80")))
    inst = generate_philly(n_jobs, cluster=cluster, seed=seed, max_workers=1)
    return inst.replace(name=f"allox-demo-{n_jobs}")


#: Processing times (s) of the talk's jobs on machine types X and Y.
TALK_TIMES = {"J1": (10, 20), "J2": (15, 25), "J3": (20, 100), "J4": (20, 90)}


def talk_instance() -> Instance:
    """The AlloX talk's example: 2 machines of type X, 2 of type Y, four jobs with
    processing times (X, Y) = J1 (10, 20), J2 (15, 25), J3 (20, 100), J4 (20, 90) s."""
    cluster = Cluster(tuple(Node(f"{t}{i}", {t: 1}) for t in ("x", "y") for i in (1, 2)))
    jobs = tuple(Job(name, 0.0, 1, 100.0, {"x": 100 / px, "y": 100 / py})
                 for name, (px, py) in TALK_TIMES.items())
    return Instance(cluster, jobs, name="allox-talk-4")


def talk_schedule() -> Schedule:
    """The talk's optimal schedule: J3, J4 on X; J1, J2 on Y (total JCT 85 s, makespan 25 s)."""
    return Schedule((Allocation("J3", 0.0, 20.0, "x1", "x", 1),
                     Allocation("J4", 0.0, 20.0, "x2", "x", 1),
                     Allocation("J1", 0.0, 20.0, "y1", "y", 1),
                     Allocation("J2", 0.0, 25.0, "y2", "y", 1)),
                    completion={"J1": 20.0, "J2": 25.0, "J3": 20.0, "J4": 20.0})
