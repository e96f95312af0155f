"""The vectorised validator against a plain re-statement of the rules
(tests/core/reference_validate.py, which imports none of the package's rule code): on
random schedules, valid and broken in every way the rules name, both give the same
verdict, the same error (path, value, message) and the same progress.

Most drawn schedules are built to pass rules 1-3 (gangs of the right width, within
capacity, copies on distinct nodes), so that progress is compared and not only the
first error; the others break a rule on purpose. Each test counts what it compared and
fails if too few cases reached the comparison it is about.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from reference_validate import job_progress as reference_progress
from reference_validate import validate_schedule as reference
from strategies import examples

from optsched import Allocation, Cluster, Instance, InvalidSchedule, Job, Node, Schedule
from optsched.core.instance import Sensitivity
from optsched.core.validate import Capabilities, job_progress, validate_schedule

SENS = Sensitivity(cpu_grid=(1, 3, 6), memory_grid=(20, 60),
                   throughput=((0.5, 0.5), (0.8, 1.0), (0.8, 2.0)), best_cpu=6, best_memory=60)
TIMES = [0.0, 1.0, 2.5, 3.0, 5.0, 7.25, 10.0]


def _peak(spans, s, e):
    """Largest summed amount of ``(start, end, amount)`` spans at an instant of [s, e)."""
    pts = [s] + [a for a, _, _ in spans if s < a < e]
    return max(sum(x for a, b, x in spans if a <= t < b) for t in pts)


@st.composite
def cases(draw, valid=None):
    """An instance and a schedule. ``valid=True``: allocations that pass rules 1-3 by
    construction (only completions may be wrong); ``False``: plausible gangs with no
    capacity bookkeeping (some a GPU too wide); ``None``: either, or plausible gangs and
    one allocation with a field set to a value that may break rule 1."""
    mode = "valid" if valid else "plausible"
    if valid is None:  # half valid, a quarter plausible, a quarter with a broken field
        mode = draw(st.sampled_from(["valid", "valid", "plausible", "broken"]))
        valid = mode == "valid"
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
    rule = draw(st.sampled_from(["gang", "gang", "partial", "additive"]))
    efficiency = draw(st.sampled_from([1.0, 0.5])) if forking else 1.0
    cons = draw(st.sampled_from([0.0, 0.0, 1.0]))
    node_names = [n.name for n in nodes]
    held: list[tuple[str, str, float, float, float, float, float]] = []
    spans: dict[tuple[str, int], list[tuple[float, float]]] = {}

    def interval(j):
        times = [t for t in TIMES if t >= j.arrival]
        return tuple(sorted(draw(st.lists(st.sampled_from(times), min_size=2, max_size=2,
                                          unique=True))))

    def room(parts, s, e, share, cpus, mem):
        """Whether ``parts`` [(node, type, gpus)] fit next to what is held over [s, e)."""
        for h, typ, g in parts:
            node = nodes[node_names.index(h)]
            gpu = [(a, b, x) for n, t, a, b, x, _, _ in held if (n, t) == (h, typ)]
            cpu = [(a, b, c) for n, _, a, b, _, c, _ in held if n == h]
            dram = [(a, b, m) for n, _, a, b, _, _, m in held if n == h]
            use = sum(gg for hh, tt, gg in parts if (hh, tt) == (h, typ))
            amount = use * (share if sharing else 1.0)
            if _peak(gpu + [(s, e, amount)], s, e) > node.gpus[typ] or \
                    _peak(cpu + [(s, e, cpus * g)], s, e) > node.cpus or \
                    _peak(dram + [(s, e, mem * g)], s, e) > node.memory:
                return False
        return True

    def valid_gang():
        """One gang of the right width over one interval, within capacity, or nothing."""
        j = draw(st.sampled_from(jobs))
        s, e = interval(j)
        share = draw(st.sampled_from([1.0, 0.5, 0.25])) if sharing else 1.0
        cpus = draw(st.sampled_from([0.0, 1.0, 3.0]))
        mem = draw(st.sampled_from([0.0, 20.0, 30.0]))
        if forking:  # copy c always on node c: two copies never share a node
            copy = draw(st.integers(0, len(nodes) - 1))
            h = nodes[copy]
            types = [t for t, r in j.throughput.items() if r > 0 and h.gpus.get(t, 0) > 0]
            if not types:
                return []
            typ = draw(st.sampled_from(types))
            parts = [(h.name, typ, draw(st.integers(1, min(j.workers, h.gpus[typ]))))]
        else:
            copy = 0
            typ = draw(st.sampled_from([t for t, r in j.throughput.items() if r > 0]))
            hosts = [n.name for n in nodes if n.gpus.get(typ, 0) > 0]
            width = draw(st.integers(1, j.workers)) if rule == "partial" else j.workers
            h = draw(st.sampled_from(hosts))
            first = draw(st.integers(1, min(width, nodes[node_names.index(h)].gpus[typ])))
            parts = [(h, typ, first)]
            if first < width:  # the rest on one more node (which may be the same)
                parts.append((draw(st.sampled_from(hosts)), typ, width - first))
        own = spans.setdefault((j.id, copy), [])
        if any(a < e and s < b for a, b in own) or not room(parts, s, e, share, cpus, mem):
            return []
        own.append((s, e))
        for h, t, g in parts:
            held.append((h, t, s, e, g * (share if sharing else 1.0), cpus * g, mem * g))
        return [Allocation(j.id, s, e, h, t, g, cpus * g, mem * g, copy, share)
                for h, t, g in parts]

    def gang():
        """One gang held over one interval: plausible, so that later rules get reached."""
        j = draw(st.sampled_from(jobs))
        s, e = interval(j)
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
            if draw(st.integers(0, 3)) == 0:  # one GPU too many under every rule
                parts.append((draw(st.sampled_from(hosts)), 1))
        return [Allocation(j.id, s, e, h, typ, g, cpus * g, mem * g, copy, share)
                for h, g in parts]

    def broken():
        """A plausible allocation with one field (or its interval) set to a value drawn
        from those the rules accept or refuse, so that each rule 1 check is reached."""
        a = draw(st.sampled_from(gang()))
        field = draw(st.sampled_from(["job", "node", "gpu_type", "gpus", "cpus", "memory",
                                      "copy", "share", "interval"]))
        if field == "interval":
            s, e = sorted(draw(st.lists(st.sampled_from(TIMES + [np.inf]), min_size=2,
                                        max_size=2, unique=True)))
            if draw(st.booleans()):
                s, e = e, s
            return replace(a, start=s, end=e)
        value = draw(st.sampled_from({
            "job": [j.id for j in jobs] + ["zz"], "node": node_names + ["n9"],
            "gpu_type": ["a", "b", "c"], "gpus": [2, 0, -1, True, 1.0],
            "cpus": [3.0, 9.0, -1.0, np.inf, np.nan], "memory": [30.0, -1.0, np.inf],
            "copy": [0, 1, True, 1.0], "share": [0.5, 0.0, 1.5]}[field]))
        return replace(a, **{field: value})

    make = valid_gang if valid else gang
    allocs = [a for _ in range(draw(st.integers(1 if valid else 0, 6))) for a in make()]
    if mode == "broken":
        allocs.insert(draw(st.integers(0, len(allocs))), broken())
    completion = {}
    finished = set()
    if valid:  # a valid schedule declares the jobs that did their work, at their last end
        plain = Schedule(tuple(allocs), {}, sharing=sharing, forking=forking,
                         resource_sensitive=sensitive, progress_rule=rule,
                         copy_efficiency=efficiency)
        done = reference_progress(inst, plain).done
        finished = {j.id for j in jobs if done.get(j.id, 0.0) >= j.work}
    for j in jobs:
        ends = [a.end for a in allocs if a.job == j.id]
        # none, at the job's last end, or any time (mostly wrong); for a valid schedule
        # mostly its finished jobs at their last end, so that most cases pass
        pick = draw(st.sampled_from([1, 1, 1, 1, 0, 2] if valid else [0, 1, 2, 3]))
        if pick == 1 and ends and (not valid or j.id in finished):
            completion[j.id] = max(ends) + cons
        elif pick == 2:
            completion[j.id] = draw(st.sampled_from(TIMES + [12.0]))
    if not valid and draw(st.integers(0, 19)) == 0:
        completion["zz"] = 3.0
    sched = Schedule(tuple(allocs), completion, sharing=sharing, forking=forking,
                     consolidation=cons, resource_sensitive=sensitive, progress_rule=rule,
                     copy_efficiency=efficiency)
    return inst, sched


def package(inst, sched, **kw):
    """The package's validator under exactly the rules the drawn schedule declares, in
    slotted time (the reference's default), so that a declared flag is a license here."""
    return validate_schedule(inst, sched, Capabilities.declared_by(sched), **kw)


def outcome(fn, inst, sched, **kw):
    try:
        p = fn(inst, sched, **kw)
    except InvalidSchedule as e:
        return ("error", e.path, repr(e.value), e.reason)
    return ("ok", dict(p.done))


def rule_of(result) -> str:
    """Which rule an outcome stopped at (``"ok"`` when none)."""
    if result[0] == "ok":
        return "ok"
    path = result[1]
    for prefix, name in (("allocations[", "allocation"), ("node ", "capacity"),
                         ("job ", "gang"), ("completion.", "completion")):
        if path.startswith(prefix):
            return name
    return path


WHEN_DONE = "a completion must be when the work is done"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def same(got, want, sched) -> bool:
    """Equal outcomes; iterations done equal bit for bit where both sides add the same
    terms in the same order ("gang" and "partial" rates, every copy in full), else to
    1e-12 relative (a sum of per-worker rates, or of copies at an efficiency, may be
    added in another order)."""
    if got[0] != "ok" or want[0] != "ok":
        if got[0] == want[0] == "error" and WHEN_DONE in got[3] and WHEN_DONE in want[3]:
            # the instant the work was done, as each side adds up the same runs: the
            # numbers in the message to 1e-9 relative, the rest of it the same
            nums = [[float(x) for x in NUMBER.findall(r)] for r in (got[3], want[3])]
            return (got[:3] == want[:3] and NUMBER.sub("#", got[3]) == NUMBER.sub("#", want[3])
                    and all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(*nums)))
        return got == want
    a, b = got[1], want[1]
    if sched.progress_rule != "additive" and sched.copy_efficiency == 1:
        return a == b
    return a.keys() == b.keys() and all(math.isclose(a[k], b[k], rel_tol=1e-12) for k in a)


def test_vectorised_validator_matches_the_reference():
    seen: Counter[str] = Counter()

    @settings(max_examples=examples(400))
    @given(case=cases())
    def check(case):
        inst, sched = case
        got, want = outcome(package, inst, sched), outcome(reference, inst, sched)
        assert same(got, want, sched), (got, want)
        kind = rule_of(want)
        event(kind)
        seen[kind] += 1

    check()
    total = sum(seen.values())
    # every rule is reached, and a large share of cases compare progress, not an error
    # (29-45 % over random seeds; every other case compares the first error)
    assert {"ok", "allocation", "capacity", "gang", "completion"} <= set(seen), seen
    assert seen["ok"] >= 0.2 * total, seen


def test_progress_with_a_cutoff_matches_the_reference():
    seen: Counter[str] = Counter()

    @settings(max_examples=examples(100))
    @given(case=cases(valid=True), data=st.data())
    def check(case, data):
        inst, sched = case
        assume(sched.allocations)  # no gang of the draw fitted: nothing to compare
        # a cutoff at an allocation's end or midpoint: every job not cut keeps all its
        # progress, and the allocation's own job some of it, so progress is compared
        at = data.draw(st.sampled_from(sorted({a.end for a in sched.allocations}
                                              | {(a.start + a.end) / 2
                                                 for a in sched.allocations})))
        cut = {j.id: at for j in inst.jobs[::2]}
        got = outcome(job_progress, inst, sched, until=cut)
        want = outcome(reference_progress, inst, sched, until=cut)
        assert same(got, want, sched), (got, want)
        kind = "compared" if want[0] == "ok" and want[1] else rule_of(want)
        event(kind)
        seen[kind] += 1

    check()
    # the cases are built to pass rules 1-3 and cut where some job has progress: every
    # one compares iterations done
    assert set(seen) == {"compared"}, seen
    assert seen["compared"] >= examples(100) // 2, seen


GRID_CLUSTER = Cluster((Node("n0", {"a": 4, "b": 1}, cpus=8, memory=64),
                        Node("n1", {"a": 4}, cpus=8, memory=64)))
GRID_JOB = Job("j0", 1.0, 2, 10.0, {"a": 2.0, "b": 0.0}, sensitivity=SENS,
               compute_share=0.5)
BREAKS = [("job", "zz"), ("node", "n9"), ("gpu_type", "c"), ("gpu_type", "b"),
          ("gpus", 0), ("gpus", -1), ("gpus", True), ("gpus", 1.0), ("cpus", -1.0),
          ("cpus", np.inf), ("cpus", np.nan), ("memory", -1.0), ("memory", np.inf),
          ("share", 0.0), ("share", 1.5), ("share", 0.5), ("copy", 1), ("copy", True),
          ("copy", 1.0), ("start", 0.5), ("start", 9.0), ("end", 2.0), ("end", np.inf)]


@pytest.mark.parametrize("field,value", BREAKS)
@pytest.mark.parametrize("sharing,forking", [(False, False), (True, True)])
def test_each_placement_rule_matches_the_reference(field, value, sharing, forking):
    """One allocation of a valid 2-GPU gang with one field set to a value that breaks (or,
    with sharing or forking declared, may not break) rule 1: the same verdict and error."""
    inst = Instance(GRID_CLUSTER, (GRID_JOB,), slot=1.0)
    base = Allocation("j0", 2.0, 7.0, "n0", "a", 2, 2.0, 20.0)
    sched = Schedule((replace(base, **{field: value}),), {"j0": 7.0}, sharing=sharing,
                     forking=forking)
    got, want = outcome(package, inst, sched), outcome(reference, inst, sched)
    assert got == want
    if not (sharing and field == "share" and value == 0.5) and \
            not (forking and field == "copy" and value == 1):
        assert want[0] == "error" and want[1] == "allocations[0]", want


@pytest.mark.parametrize("rule", ["gang", "partial", "additive"])
@pytest.mark.parametrize("forking", [False, True])
@pytest.mark.parametrize("widths", [(1,), (2,), (3,), (1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("second_node", [False, True])
def test_each_gang_rule_matches_the_reference(rule, forking, widths, second_node):
    """A job of 2 workers holding 1-3 GPUs over one or two allocations (on one node or
    two) under every progress rule, with and without forking: the same verdict, error
    and progress."""
    inst = Instance(GRID_CLUSTER, (GRID_JOB,), slot=1.0)
    nodes = ["n0", "n1" if second_node else "n0"]
    allocs = tuple(Allocation("j0", 2.0, 7.0, nodes[k], "a", g, 0.0, 0.0)
                   for k, g in enumerate(widths))
    sched = Schedule(allocs, {}, forking=forking, progress_rule=rule)
    got, want = outcome(package, inst, sched), outcome(reference, inst, sched)
    assert same(got, want, sched), (got, want)


def test_reference_and_vectorised_agree_on_a_simulated_schedule():
    from optsched import catalog
    from optsched.registry import simulate

    inst = catalog.shipped_trace("gavel-philly-2000")
    inst = inst.replace(jobs=inst.jobs[:40])
    res = simulate(inst, "gavel.max_min_fairness", progress=False)
    assert len(res.schedule.allocations) > 1000
    assert package(inst, res.schedule).done == reference(inst, res.schedule).done
    # a broken copy: one allocation stretched past its job's completion
    a = res.schedule.allocations
    k = max(range(len(a)), key=lambda i: a[i].end)
    moved = a[:k] + (Allocation(**{**a[k].to_dict(), "end": a[k].end + 100.0}),) + a[k + 1:]
    bad = Schedule(moved, res.schedule.completion)
    with pytest.raises(InvalidSchedule) as got:
        package(inst, bad)
    with pytest.raises(InvalidSchedule) as want:
        reference(inst, bad)
    assert (got.value.path, got.value.reason) == (want.value.path, want.value.reason)


def test_the_reference_states_the_rules_itself():
    """The reference imports no module that states a rule: were it to share the
    package's rules, a wrong rule would agree with itself."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parent / "reference_validate.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    shared = imported & {"optsched.core.rules", "optsched.core.progress",
                         "optsched.core.validate", "optsched.validate", "optsched.progress",
                         "optsched.sim.decisions"}
    assert not shared, shared
