"""The rows a view shows are kept up to date by what changed (``optsched.sim.rows``):
every view of a run must hold, array for array and value for value, what taking the
visible jobs' rows from the run's per-job arrays gives, and keep holding it after the
run went on."""

from __future__ import annotations

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.allox.workload import demo_instance as allox_demo
from optsched.registry import simulate
from optsched.sim import simulator
from optsched.synergy.workload import demo_instance as synergy_demo

_LIVE = {"attained": "attained", "executed": "executed", "time_on_types": "on_type",
         "rounds_received": "rounds", "preemptions": "preempt"}
_FIXED = {"throughput_matrix": "T", "workers": "W", "arrivals": "arrival",
          "weights": "weights"}


def _expected(run) -> dict:
    """The visible jobs' rows, taken from the run's per-job arrays (arrival order)."""
    ix = run.order[:run.ptr]
    ix = ix[~run.done_mask[ix]]
    jobs = [run.jobs[i] for i in ix.tolist()]
    out = {"index": ix.copy(), "ids": tuple(j.id for j in jobs),
           "throughput_maps": tuple(j.throughput for j in jobs)}
    for field, name in {**_LIVE, **_FIXED}.items():
        out[field] = getattr(run, name)[ix].copy()
    out["work_"] = run.work[ix].copy() if run.decl.needs_work else None
    out["remaining_"] = run.remaining[ix].copy() if run.decl.needs_work else None
    for field, attr in (("sensitivities", "sensitivity"), ("gpu_memories", "memory"),
                        ("compute_shares", "compute_share"), ("users", "user")):
        out[field] = tuple(getattr(j, attr) for j in jobs)
    return out


def _same(view, expected: dict) -> None:
    for field, want in expected.items():
        got = getattr(view, field)
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray), field
            assert got.dtype == want.dtype and got.shape == want.shape, field
            assert np.array_equal(got, want), field
        else:
            assert got == want, field


def _checked_run(monkeypatch, instance, policy: str):
    """Run ``policy``, checking each view against :func:`_expected` when it is made and
    again after the run; the run's result and the number of views."""
    views: list = []
    real_view, real_decide = simulator.ClusterView, simulator._Run._decide

    def view(**fields):
        v = real_view(**fields)
        views.append(v)
        return v

    def decide(run):
        want = _expected(run)
        out = real_decide(run)
        _same(views[-1], want)
        record.append((views[-1], want))
        return out

    real_checked = simulator._Run._checked
    waited: set[int] = set()

    def checked(run, placements):
        ep = real_checked(run, placements)
        waited.update(set(record[-1][1]["index"].tolist()) - set(ep.gangs))
        return ep

    record: list = []
    monkeypatch.setattr(simulator, "ClusterView", view)
    monkeypatch.setattr(simulator._Run, "_decide", decide)
    monkeypatch.setattr(simulator._Run, "_checked", checked)
    res = simulate(instance, policy, seed=0, progress=False, bounds=False)
    for v, want in record:  # nothing a view holds changed as the run went on
        _same(v, want)
    # the queue measured: the jobs visible in some epoch that ran nothing in it
    assert res.extra["queued_jobs"] == len(waited)
    return res, len(record)


def _loaded(n: int = 200, seed: int = 3) -> Instance:
    """``n`` gangs of 1-8 GPUs arriving faster than 16 GPUs serve them: a long queue."""
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(15.0, n))
    work = rng.lognormal(5.0, 1.2, n)
    workers = rng.choice([1, 1, 2, 4, 8], n)
    jobs = tuple(Job(f"j{i}", arrival=round(float(arrival[i]), 1), workers=int(workers[i]),
                     work=round(float(work[i]), 1), throughput={"p100": 1.0})
                 for i in range(n))
    cluster = Cluster((Node("n0", {"p100": 8}), Node("n1", {"p100": 8})))
    return Instance(cluster, jobs, slot=60.0)


@pytest.mark.parametrize("policy", ["tiresias.las", "tiresias.srtf", "tiresias.yarn_fifo",
                                    "gavel.max_min_fairness_agnostic"])
def test_views_of_a_queued_run_are_the_rows_of_the_visible_jobs(monkeypatch, policy):
    res, calls = _checked_run(monkeypatch, _loaded(), policy)
    assert calls > 50
    assert res.extra["queued_jobs"] > 20  # a queue: arrivals and completions interleave
    if policy in ("tiresias.srtf", "gavel.max_min_fairness_agnostic"):
        assert res.extra["total_preemptions"] > 0


@pytest.mark.parametrize("policy, demo", [("synergy.tune", synergy_demo),
                                          ("allox.online", allox_demo)])
def test_views_show_the_profile_columns_of_the_visible_jobs(monkeypatch, policy, demo):
    res, calls = _checked_run(monkeypatch, demo(), policy)
    assert calls > 1
