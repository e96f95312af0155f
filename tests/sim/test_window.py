"""A measurement window over a job stream: ``simulate(..., until=...)`` and
:class:`optsched.sim.window.Window`."""

from __future__ import annotations

import pytest

from optsched.catalog import generate_philly
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.registry import simulate as simulate_named
from optsched.sim import simulate
from optsched.sim.window import Window, WindowUnfinished


@pytest.fixture(scope="module")
def stream():
    return generate_philly(60, cluster="gavel-physical", seed=2, jobs_per_hour=1.0,
                           max_workers=1)


@pytest.mark.parametrize("policy", ["max_min_fairness", "fifo"])
def test_until_stops_once_the_jobs_are_done_and_changes_nothing_before(stream, policy):
    full = simulate(stream, get_policy(policy), seed=0, progress=False)
    ids = [j.id for j in stream.jobs[10:20]]
    cut = simulate(stream, get_policy(policy), seed=0, progress=False, until=ids)
    assert cut.extra["until_met"] is True and full.extra["until_met"] is None
    last = max(full.schedule.completion[k] for k in ids)
    # every job done by the stop has its full-run completion; nothing after it ran
    assert cut.schedule.completion == {k: c for k, c in full.schedule.completion.items()
                                       if c <= last + stream.slot}
    assert all(k in cut.schedule.completion for k in ids)
    assert cut.extra["epochs"] < full.extra["epochs"]
    assert max(a.end for a in cut.schedule.allocations) <= last + stream.slot


def test_until_through_the_registry(stream):
    ids = [j.id for j in stream.jobs[:5]]
    res = simulate_named(stream, "gavel.max_min_fairness_agnostic", progress=False, until=ids)
    assert res.extra["until_met"] is True
    # no bound for a cut run, and the result says why instead of leaving them out silently
    assert "bounds" not in res.extra and "until=" in res.extra["gaps_note"]
    quiet = simulate_named(stream, "gavel.max_min_fairness_agnostic", progress=False,
                           until=ids, bounds=False)
    assert "gaps_note" not in quiet.extra


@pytest.mark.parametrize("until, value", [(["nope"], "nope"), ([], []), ("0", "0")])
def test_bad_until(stream, until, value):
    with pytest.raises(InvalidOption) as info:
        simulate(stream, get_policy("fifo"), progress=False, until=until)
    assert info.value.path == "until" and info.value.value == value


def test_window_jcts_are_the_full_run_jcts(stream):
    full = simulate(stream, get_policy("max_min_fairness"), seed=0, progress=False)
    w = Window.of([10, 20])
    jct = w.jcts(stream, lambda horizon, ids: simulate(
        stream, get_policy("max_min_fairness"), progress=False, max_time=horizon, until=ids))
    assert jct == pytest.approx({j.id: full.metrics.jct[j.id] for j in stream.jobs[10:20]},
                                rel=1e-12)


def test_window_unfinished_at_the_last_arrival(stream):
    w = Window.of((50, 60))          # the last job arrives at the horizon itself
    with pytest.raises(WindowUnfinished) as info:
        w.jcts(stream, lambda horizon, ids: simulate(
            stream, get_policy("fifo"), progress=False, max_time=horizon, until=ids))
    assert stream.jobs[59].id in info.value.unfinished
    assert info.value.horizon == stream.arrivals.max()


@pytest.mark.parametrize("value", [[1], [3, 3], [4, 2], [-1, 2], [0.0, 2], [False, 2],
                                   "0-10", None])
def test_bad_window(value):
    with pytest.raises(InvalidOption) as info:
        Window.of(value, "simulate.window")
    assert info.value.path == "simulate.window"


def test_window_past_the_stream(stream):
    with pytest.raises(InvalidOption, match="after the 60 jobs"):
        Window.of([50, 61]).ids(stream)
