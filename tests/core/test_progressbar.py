"""The progress bar's ETA: extrapolated from items completed, or from a run's own clock
against its span (a simulation's arrivals), as the caller gives."""

from __future__ import annotations

import pytest

import optsched
from optsched import catalog
from optsched.progressbar import ProgressBar, eta_seconds


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_eta_extrapolates_the_pace_so_far():
    assert eta_seconds(10.0, None) is None and eta_seconds(10.0, 0.0) is None
    assert eta_seconds(10.0, 0.25) == pytest.approx(30.0)
    assert eta_seconds(10.0, 1.0) == 0.0 and eta_seconds(10.0, 1.5) == 0.0


def test_eta_from_items_completed():
    clock = FakeClock()
    with ProgressBar(10, "x", False, clock=clock) as bar:
        assert bar.fraction == 0 and bar.eta is None  # nothing done: no pace yet
        clock.now += 4.0
        bar.advance(2)
        assert bar.fraction == pytest.approx(0.2) and bar.eta == pytest.approx(16.0)
        bar.advance(8)
        assert bar.eta == 0.0


def test_eta_from_the_runs_clock_inside_its_span_then_from_items():
    clock = FakeClock()
    with ProgressBar(8, "sim", False, span=(100.0, 1100.0), clock=clock) as bar:
        clock.now += 5.0
        bar.advance(1, now=350.0)  # a quarter of the span, one job of eight
        assert bar.fraction == pytest.approx(0.25) and bar.eta == pytest.approx(15.0)
        clock.now += 5.0
        bar.advance(3, now=1500.0)  # past the last arrival: the jobs left measure it
        assert bar.fraction == pytest.approx(0.5) and bar.eta == pytest.approx(10.0)
    flat = ProgressBar(4, "same instant", False, span=(0.0, 0.0), clock=clock)
    flat.advance(1, now=0.0)  # every job arrived at once: no span to measure
    assert flat.fraction == pytest.approx(0.25)


def test_the_old_call_shape_still_works(capsys):
    with ProgressBar(3, "cells", True) as bar:
        for _ in range(3):
            bar.advance()
    err = capsys.readouterr().err
    assert "cells" in err and "3/3" in err and "ETA 0:00:00" in err and "sim " not in err


def test_a_simulation_reports_its_clock_against_its_arrivals(monkeypatch, capsys):
    import optsched.sim.simulator as simulator

    seen: list[ProgressBar] = []

    class Recording(ProgressBar):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            self.times: list[float] = []
            seen.append(self)

        def advance(self, k=1, *, now=None):
            super().advance(k, now=now)
            self.times.append(now)

    monkeypatch.setattr(simulator, "ProgressBar", Recording)
    inst = catalog.generate_philly(15, seed=4, jobs_per_hour=6)
    res = optsched.simulate(inst, "fifo", bounds=False, progress=True)
    (bar,) = seen
    arrivals = [j.arrival for j in inst.jobs]
    assert bar.span == (min(arrivals), max(arrivals)) and bar.span[1] > bar.span[0]
    assert bar.completed == 15 and bar.times == sorted(bar.times)
    # completions are reported at the end of the round they fall in
    assert res.metrics.makespan <= bar.times[-1] <= res.metrics.makespan + inst.slot
    err = capsys.readouterr().err
    assert "simulate fifo" in err and "15/15" in err and "ETA 0:00:00" in err
    assert f"/{max(arrivals) / 3600:.1f} h" in err
