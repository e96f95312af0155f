"""The vectorised validator against the loop it replaced (tests/core/reference_validate.py):
on random schedules, valid and broken in every way the rules name, both give the same
verdict, the same error (path, value, message) and the same progress, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_validate import job_progress as reference_progress
from reference_validate import validate_schedule as reference
from strategies import examples

from optsched import Allocation, Cluster, Instance, InvalidSchedule, Job, Node, Schedule
from optsched.core.instance import Sensitivity
from optsched.core.validate import job_progress, validate_schedule

SENS = Sensitivity(cpu_grid=(1, 3, 6), memory_grid=(20, 60),
                   throughput=((0.5, 0.5), (0.8, 1.0), (0.8, 2.0)), best_cpu=6, best_memory=60)
TIMES = [0.0, 1.0, 2.5, 3.0, 5.0, 7.25, 10.0]


@st.composite
def cases(draw):
    nodes = tuple(Node(f"n{h}", {"a": draw(st.integers(3 if h == 0 else 0, 3)),
                                 "b": draw(st.integers(1 if h == 0 else 0, 3))},
                       cpus=8, memory=64) for h in range(draw(st.integers(1, 3))))
    cluster = Cluster(nodes)
    jobs = []
    for i in range(draw(st.integers(1, 4))):
        tp = {"a": draw(st.sampled_from([1.0, 2.0, 3])),
              "b": draw(st.sampled_from([0.0, 0.5, 4.0]))}
        jobs.append(Job(f"j{i}", draw(st.sampled_from([0.0, 1.0, 2.5])),
                        draw(st.integers(1, 3)), draw(st.sampled_from([1.0, 5.0, 12.0, 40.0])),
                        tp, sensitivity=draw(st.sampled_from([None, SENS])),
                        compute_share=draw(st.sampled_from([None, 0.5, 1.0]))))
    inst = Instance(cluster, tuple(jobs), slot=1.0)
    sharing, forking, sensitive = (draw(st.booleans()) for _ in range(3))
    cons = draw(st.sampled_from([0.0, 0.0, 1.0]))
    node_names = [n.name for n in nodes]

    def gang():
        """One gang held over one interval: plausible, so that later rules get reached."""
        j = draw(st.sampled_from(jobs))
        times = [t for t in TIMES if t >= j.arrival]
        s, e = sorted(draw(st.lists(st.sampled_from(times), min_size=2, max_size=2,
                                    unique=True)))
        typ = draw(st.sampled_from([t for t, r in j.throughput.items() if r > 0]))
        copy = draw(st.integers(0, 2)) if forking else 0
        share = draw(st.sampled_from([1.0, 0.5, 0.25])) if sharing else 1.0
        cpus = draw(st.sampled_from([0.0, 1.0, 3.0]))
        mem = draw(st.sampled_from([0.0, 20.0, 30.0]))
        hosts = [n.name for n in nodes if n.gpus.get(typ, 0) > 0]
        if forking:
            parts = [(draw(st.sampled_from(hosts)), draw(st.integers(1, j.workers)))]
        else:
            first = draw(st.integers(1, j.workers))
            parts = [(draw(st.sampled_from(hosts)), first)]
            if first < j.workers and draw(st.integers(0, 5)):  # else a gang short of GPUs
                parts.append((draw(st.sampled_from(hosts)), j.workers - first))
        return [Allocation(j.id, s, e, h, typ, g, cpus * g, mem * g, copy, share)
                for h, g in parts]

    def broken():
        """One allocation with any field drawn from values the rules accept or refuse."""
        s, e = sorted(draw(st.lists(st.sampled_from(TIMES), min_size=2, max_size=2,
                                    unique=True)))
        if draw(st.integers(0, 9)) == 0:
            s, e = e, s
        return Allocation(draw(st.sampled_from([j.id for j in jobs] + ["zz"])), s, e,
                          draw(st.sampled_from(node_names + ["n9"])),
                          draw(st.sampled_from(["a", "b", "c"])),
                          draw(st.sampled_from([1, 2, 3, 0, True, 1.0])),
                          draw(st.sampled_from([0.0, 3.0, 6.0, -1.0, 9.0])),
                          draw(st.sampled_from([0.0, 30.0, 60.0, np.inf])),
                          draw(st.sampled_from([0, 1, 2])),
                          draw(st.sampled_from([1.0, 0.5, 0.25])))

    allocs = [a for _ in range(draw(st.integers(0, 5))) for a in gang()]
    if draw(st.integers(0, 3)) == 0:
        allocs.insert(draw(st.integers(0, len(allocs))), broken())
    completion = {}
    for j in jobs:
        ends = [a.end for a in allocs if a.job == j.id]
        pick = draw(st.integers(0, 3))
        if pick == 1 and ends:
            completion[j.id] = max(ends) + cons
        elif pick == 2:
            completion[j.id] = draw(st.sampled_from(TIMES + [12.0]))
    if draw(st.integers(0, 19)) == 0:
        completion["zz"] = 3.0
    sched = Schedule(tuple(allocs), completion, sharing=sharing, forking=forking,
                     consolidation=cons,
                     resource_sensitive=sensitive)
    return inst, sched


def outcome(fn, inst, sched):
    try:
        p = fn(inst, sched)
    except InvalidSchedule as e:
        return ("error", e.path, repr(e.value), e.reason)
    return ("ok", list(p.done.items()))


@settings(max_examples=examples(400))
@given(case=cases())
def test_vectorised_validator_matches_the_loop(case):
    inst, sched = case
    assert outcome(validate_schedule, inst, sched) == outcome(reference, inst, sched)


@settings(max_examples=examples(100))
@given(case=cases(), at=st.sampled_from(TIMES))
def test_progress_with_a_cutoff_matches_the_loop(case, at):
    inst, sched = case
    try:
        reference(inst, Schedule(sched.allocations, {}, sharing=sched.sharing,
                                 forking=sched.forking,
                                 resource_sensitive=sched.resource_sensitive))
    except InvalidSchedule:
        return  # job_progress reads schedules whose allocations pass their own rules
    cut = {j.id: at for j in inst.jobs[::2]}
    assert list(job_progress(inst, sched, until=cut).done.items()) == \
        list(reference_progress(inst, sched, until=cut).done.items())


def test_reference_and_vectorised_agree_on_a_simulated_schedule():
    from optsched import catalog
    from optsched.registry import simulate

    inst = catalog.shipped_trace("gavel-philly-2000")
    inst = inst.replace(jobs=inst.jobs[:40])
    res = simulate(inst, "gavel.max_min_fairness", progress=False)
    assert len(res.schedule.allocations) > 1000
    assert validate_schedule(inst, res.schedule) == reference(inst, res.schedule)
    # a broken copy: one allocation stretched past its job's completion
    a = res.schedule.allocations
    k = max(range(len(a)), key=lambda i: a[i].end)
    moved = a[:k] + (Allocation(**{**a[k].to_dict(), "end": a[k].end + 100.0}),) + a[k + 1:]
    bad = Schedule(moved, res.schedule.completion)
    with pytest.raises(InvalidSchedule) as got:
        validate_schedule(inst, bad)
    with pytest.raises(InvalidSchedule) as want:
        reference(inst, bad)
    assert (got.value.path, got.value.reason) == (want.value.path, want.value.reason)
