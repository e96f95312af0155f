"""optsched.studies.sweep: grid, resumability, parallel == serial, Dask == local, tables, CLI."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from paths import DOCS

from optsched.cli import main
from optsched.errors import InvalidOption, UnknownName
from optsched.studies.sweep import (
    TIMING,
    SweepConfig,
    cell_key,
    cells_of,
    load_config,
    load_table,
    plot_sweep,
    run_sweep,
)

CONFIG = {
    "name": "t",
    "models": ["allox", "synergy"],
    "methods": {"allox": ["exact", "sjf"], "synergy": ["exact", "tune"]},
    "sizes": [5, 8],
    "seeds": [0, 1],
}


def strip(rows):
    """Rows without wall-clock columns (the only ones allowed to differ between runs)."""
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    rows, computed = run_sweep(SweepConfig.from_dict(CONFIG), out, workers=1, progress=False)
    return out, rows, computed


def test_grid_and_keys():
    cfg = SweepConfig.from_dict(CONFIG)
    cells = cells_of(cfg)
    assert len(cells) == 2 * 2 * 2 * 2
    keys = {c.key for c in cells}
    assert len(keys) == len(cells)                       # distinct parameters, distinct keys
    p = cells[0].params()
    assert cell_key(p) == cell_key(json.loads(json.dumps(p)))  # stable through JSON
    assert cell_key({**p, "seed": 99}) != cell_key(p)


def test_serial_rows(serial):
    out, rows, computed = serial
    assert computed == 16 and len(rows) == 16
    assert [(r["model"], r["method"], r["size"], r["seed"]) for r in rows] == [
        (c.model, c.method, c.size, c.seed) for c in cells_of(SweepConfig.from_dict(CONFIG))]
    assert all(r["status"] in ("optimal", "feasible") for r in rows)
    # exact is never worse than the heuristic on the same instance
    by = {(r["model"], r["method"], r["size"], r["seed"]): r["objective"] for r in rows}
    for size in (5, 8):
        for seed in (0, 1):
            assert by["allox", "exact", size, seed] <= by["allox", "sjf", size, seed] + 1e-6
            assert by["synergy", "exact", size, seed] >= by["synergy", "tune", size, seed] - 1e-6
    assert len((out / "cells.jsonl").read_text().splitlines()) == 16


def test_resume_computes_nothing(serial, tmp_path):
    out, rows, _ = serial
    again, computed = run_sweep(SweepConfig.from_dict(CONFIG), out, workers=1, progress=False)
    assert computed == 0
    assert again == rows                                   # reused verbatim, timings too
    assert len((out / "cells.jsonl").read_text().splitlines()) == 16
    # a grown grid computes only the new cells
    grown = SweepConfig.from_dict({**CONFIG, "seeds": [0, 1, 2]})
    more, computed = run_sweep(grown, out, workers=1, progress=False)
    assert computed == 8 and len(more) == 24


def test_interrupted_line_is_recomputed(serial, tmp_path):
    out, rows, _ = serial
    lines = (out / "cells.jsonl").read_text().splitlines()[:16]
    (tmp_path / "cells.jsonl").write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])
    again, computed = run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, progress=False)
    assert computed == 11
    assert strip(again) == strip(rows)


def test_parallel_equals_serial(serial, tmp_path):
    _, rows, _ = serial
    par, computed = run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, workers=2,
                              progress=False)
    assert computed == 16
    assert strip(par) == strip(rows)


def test_dask_equals_local(serial, tmp_path):
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask.distributed is not installed (extra 'dask')")
    from distributed import Client, LocalCluster

    _, rows, _ = serial
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        got, computed = run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, engine="dask",
                                  client=client, progress=False)
    assert computed == 16
    assert strip(got) == strip(rows)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_table_round_trip(serial, tmp_path, fmt):
    out, rows, _ = serial
    run_sweep(SweepConfig.from_dict(CONFIG), out, fmt=fmt, progress=False)
    back = load_table(out / f"results.{fmt}")
    for a, b in zip(back, rows):
        for k, v in b.items():
            assert a[k] == v or (a[k] in (None, "") and v in (None, "")), (k, a[k], v)


def test_parquet_needs_pyarrow(serial, tmp_path):
    if importlib.util.find_spec("pyarrow") is not None:
        out, rows, _ = serial
        run_sweep(SweepConfig.from_dict(CONFIG), out, fmt="parquet", progress=False)
        assert strip(load_table(out / "results.parquet")) == strip(rows)
        return
    with pytest.raises(InvalidOption, match="pyarrow"):
        run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, fmt="parquet", progress=False)
    assert not (tmp_path / "cells.jsonl").exists()        # refused before computing


def test_not_applicable_cells_are_recorded(tmp_path):
    # AlloX's exact matching refuses staggered arrivals: recorded, not raised, not retried
    cfg = SweepConfig.from_dict({
        "name": "na", "models": ["allox"], "methods": ["exact", "online"], "sizes": [6],
        "seeds": [0], "instance": {"generator": "philly", "cluster": "gavel-physical",
                                   "max_workers": 1, "jobs_per_hour": 2.0}})
    rows, _ = run_sweep(cfg, tmp_path, progress=False)
    assert rows[0]["status"] == "not_applicable" and "arriv" in rows[0]["message"]
    assert rows[1]["status"] == "feasible"
    _, computed = run_sweep(cfg, tmp_path, progress=False)
    assert computed == 0


@pytest.mark.parametrize("bad, exc", [
    ({**CONFIG, "models": ["allx"]}, UnknownName),
    ({**CONFIG, "methods": ["exact", "nope"]}, UnknownName),
    ({**CONFIG, "methods": {"allox": ["exact"]}}, InvalidOption),
    ({**CONFIG, "sizes": [0]}, InvalidOption),
    ({**CONFIG, "seeds": "x"}, InvalidOption),
    ({**CONFIG, "grid": 1}, InvalidOption),
    ({**CONFIG, "instance": {"generator": "nowhere"}}, InvalidOption),
])
def test_bad_config(bad, exc):
    with pytest.raises(exc):
        SweepConfig.from_dict(bad)


def test_toml_config_and_cli(tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text('name = "cli"\nmodels = ["allox"]\nmethods = ["exact", "sjf"]\n'
                   'sizes = [4]\nseeds = [0, 1]\n')
    assert load_config(cfg).sizes == (4,)
    out = tmp_path / "o"
    assert main(["sweep", str(cfg), "--out", str(out), "--format", "jsonl",
                 "--no-progress"]) == 0
    assert "4 computed" in capsys.readouterr().out
    assert len(load_table(out / "results.jsonl")) == 4
    assert main(["sweep", str(cfg), "--out", str(out), "--format", "jsonl"]) == 0
    assert "0 computed, 4 reused" in capsys.readouterr().out
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


def test_plot_sweep(serial, tmp_path):
    pytest.importorskip("matplotlib", reason="plotting needs the 'plot' extra")
    _, rows, _ = serial
    png = plot_sweep(rows, "objective", tmp_path / "obj.png")
    assert png.stat().st_size > 1000
    with pytest.raises(InvalidOption):
        plot_sweep(rows, "no_such_column", tmp_path / "x.png")


def test_shipped_grid_is_the_documented_one(tmp_path):
    """docs/grid.toml (the README's sweep) is the config docs/sweeps.md writes."""
    import re

    docs = DOCS
    page = (docs / "sweeps.md").read_text()
    written = re.search(r"cat > grid.toml <<'TOML'\n(.*?)\nTOML", page, re.S).group(1)
    shipped = load_config(docs / "grid.toml")
    copy = tmp_path / "grid.toml"
    copy.write_text(written)
    assert shipped == load_config(copy)
    assert len(cells_of(shipped)) == 60


def test_shipped_grid_compares_something_at_every_size():
    """At every size of docs/grid.toml each model's methods differ on some seed: a size
    axis on which exact and the heuristics coincide compares nothing (on Synergy's
    2-server demo they did at 16, 32 and 64 jobs for every seed)."""
    from optsched.studies.sweep import run_cell

    grid = load_config(DOCS / "grid.toml")
    cells = cells_of(grid)
    for model in grid.models:
        for size in grid.sizes:
            for seed in grid.seeds:
                values = {c.method: run_cell(c.params())["objective"] for c in cells
                          if (c.model, c.size, c.seed) == (model, size, seed)}
                assert None not in values.values(), (model, size, seed, values)
                if max(values.values()) - min(values.values()) > 1e-6 * max(values.values()):
                    break
            else:
                raise AssertionError(f"{model}: every method gives the same value at "
                                     f"{size} jobs on every seed {list(grid.seeds)}")


# --------------------------------------------------------------------------- simulation cells
SIM = {
    "name": "sim",
    "seeds": [0],
    "simulate": {"policies": ["tiresias.yarn_fifo", "tiresias.las"],
                 "traces": ["tiresias-60"], "loads": [1.0, 20.0]},
}


def _swept(tmp_path_factory, config: dict):
    """(output folder, rows, cells computed) of one sweep of ``config``."""
    out = tmp_path_factory.mktemp(config["name"])
    rows, computed = run_sweep(SweepConfig.from_dict(config), out, progress=False)
    return out, rows, computed


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    return _swept(tmp_path_factory, SIM)


def test_simulation_cells_are_the_registry_simulation(simulated):
    from optsched.registry import simulate
    from optsched.studies.sweep import build_sim_instance

    _, rows, computed = simulated
    cells = cells_of(SweepConfig.from_dict(SIM))
    assert computed == len(rows) == len(cells) == 4
    assert [(r["method"], r["load"]) for r in rows] == [
        ("tiresias.yarn_fifo", 1.0), ("tiresias.yarn_fifo", 20.0), ("tiresias.las", 1.0),
        ("tiresias.las", 20.0)]
    for cell, row in zip(cells, rows):
        assert (row["kind"], row["model"], row["trace"], row["status"]) == \
            ("simulate", "tiresias", "tiresias-60", "feasible")
        inst = build_sim_instance(cell.params())
        res = simulate(inst, cell.policy, seed=cell.seed, progress=False)
        m = res.metrics
        assert (row["n_jobs"], row["n_completed"]) == (inst.n_jobs, m.n_completed) == (60, 60)
        assert row["mean_jct"] == pytest.approx(m.mean_jct, rel=1e-12)
        assert row["objective"] == pytest.approx(res.objective, rel=1e-12)
        assert (row["p50_jct"], row["p99_jct"], row["makespan"], row["cru"]) == \
            pytest.approx((m.p50_jct, m.p99_jct, m.makespan, m.cru), rel=1e-12)
        assert row["preemptions"] == res.extra["total_preemptions"]
        assert row["epochs"] == res.extra["epochs"]


def test_load_divides_arrival_times():
    from optsched.catalog import shipped_trace
    from optsched.studies.sweep import build_sim_instance

    base = shipped_trace("tiresias-60").arrivals
    assert base.max() > 0
    cells = cells_of(SweepConfig.from_dict(SIM))
    assert np.allclose(build_sim_instance(cells[1].params()).arrivals, base / 20.0)


def test_simulation_sweep_resumes_and_grows(simulated, tmp_path):
    out, rows, _ = simulated
    again, computed = run_sweep(SweepConfig.from_dict(SIM), out, progress=False)
    assert computed == 0 and again == rows
    grown = {**SIM, "simulate": {**SIM["simulate"], "loads": [1.0, 20.0, 40.0]}}
    more, computed = run_sweep(SweepConfig.from_dict(grown), out, progress=False)
    assert computed == 2 and len(more) == 6
    assert strip([r for r in more if r["load"] != 40.0]) == strip(rows)


def test_rates_set_the_mean_arrival_rate():
    from optsched.studies.sweep import build_sim_instance

    cfg = SweepConfig.from_dict({"name": "r", "seeds": [3], "simulate": {
        "policies": ["gavel.fifo"], "traces": ["tiresias-60", "generate"],
        "jobs": [10], "rates": [2.0], "cluster": "gavel-physical"}})
    trace_cell, gen_cell = cells_of(cfg)
    inst = build_sim_instance(trace_cell.params())
    span_h = (inst.arrivals.max() - inst.arrivals.min()) / 3600.0
    assert inst.n_jobs == 10 and span_h == pytest.approx(9 / 2.0)
    gen = build_sim_instance(gen_cell.params())
    assert gen.n_jobs == 10 and gen.cluster.total_gpus == 48
    # the generator draws with the cell's seed: another seed, other jobs
    other = build_sim_instance({**gen_cell.params(), "seed": 4})
    assert [j.work for j in gen.jobs] != [j.work for j in other.jobs]


def test_mixed_grid_solve_then_simulate(tmp_path):
    cfg = SweepConfig.from_dict({**CONFIG, "models": ["allox"], "methods": ["sjf"],
                                 "sizes": [5], "seeds": [0],
                                 "simulate": {"policies": ["gavel.fifo"],
                                              "traces": ["gavel-artifact-15"], "jobs": [6]}})
    rows, computed = run_sweep(cfg, tmp_path, fmt="jsonl", progress=False)
    assert computed == 2
    assert [(r["kind"], r["method"]) for r in rows] == [("solve", "sjf"),
                                                        ("simulate", "gavel.fifo")]
    assert rows[1]["size"] == 6 and rows[1]["n_completed"] == 6
    back = load_table(tmp_path / "results.jsonl")
    assert strip(back) == strip(rows)
    # solve cells keep their keys: a table written before simulation cells existed resumes
    assert rows[0]["key"] == cell_key({"model": "allox", "method": "sjf", "size": 5, "seed": 0,
                                       "options": {}, "instance": {"generator": "demo"}})


def test_simulation_table_round_trip_csv(simulated, tmp_path):
    out, rows, _ = simulated
    run_sweep(SweepConfig.from_dict(SIM), out, fmt="csv", progress=False)
    back = load_table(out / "results.csv")
    assert strip(back) == strip(rows)


def test_simulation_cells_on_dask_equal_local(simulated, tmp_path):
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask.distributed is not installed (extra 'dask')")
    _, rows, _ = simulated
    got, computed = run_sweep(SweepConfig.from_dict(SIM), tmp_path, engine="dask", workers=2,
                              progress=False)
    assert computed == 4
    assert strip(got) == strip(rows)


@pytest.mark.parametrize("bad, exc", [
    ({"policies": ["tiresias.nope"], "traces": ["philly"]}, UnknownName),
    ({"policies": ["tiresias.las"], "traces": ["no-such-trace"]}, InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "loads": [1], "rates": [2]},
     InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "loads": [0]}, InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["generate"]}, InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "rates": [2.0]}, InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "options": {"backend": "highs"}},
     InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "cluster": "nowhere-9"}, UnknownName),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "max_time": -1}, InvalidOption),
    ({"policies": ["tiresias.las"], "traces": ["philly"], "seed": 1}, InvalidOption),
])
def test_bad_simulate_section(bad, exc):
    with pytest.raises(exc):
        SweepConfig.from_dict({"name": "b", "simulate": bad})


def test_simulation_only_config_refuses_solve_settings():
    with pytest.raises(InvalidOption, match="no models"):
        SweepConfig.from_dict({**SIM, "sizes": [4]})


def test_jct_against_load_plot_and_cli(simulated, tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="plotting needs the 'plot' extra")
    from optsched.studies.sweep import default_x

    _, rows, _ = simulated
    assert default_x(SweepConfig.from_dict(SIM)) == "load"
    png = plot_sweep(rows, "mean_jct", tmp_path / "jct.png", x="load")
    assert png.stat().st_size > 1000
    cfg = tmp_path / "sim.json"
    cfg.write_text(json.dumps({**SIM, "simulate": {**SIM["simulate"],
                                                   "policies": ["tiresias.yarn_fifo"]}}))
    out = tmp_path / "o"
    assert main(["sweep", str(cfg), "--out", str(out), "--plot", "mean_jct",
                 "--no-progress"]) == 0
    assert (out / "mean_jct.png").stat().st_size > 1000
    assert "2 computed" in capsys.readouterr().out
    assert main(["sweep", str(cfg), "--out", str(out), "--x", "nope"]) == 2


def test_shipped_simulation_grid_is_the_documented_one(tmp_path):
    """docs/sim_grid.toml is the simulation config docs/sweeps.md writes."""
    import re

    page = (DOCS / "sweeps.md").read_text()
    written = re.search(r"cat > sim_grid.toml <<'TOML'\n(.*?)\nTOML", page, re.S).group(1)
    copy = tmp_path / "sim_grid.toml"
    copy.write_text(written)
    shipped = load_config(DOCS / "sim_grid.toml")
    assert shipped == load_config(copy)
    assert len(cells_of(shipped)) == 12


# --------------------------------------------------------------------------- measurement window
WIN = {"name": "win", "seeds": [0], "simulate": {
    "policies": ["gavel.max_min_fairness", "gavel.max_min_fairness_agnostic"],
    "traces": ["generate"], "jobs": [70], "rates": [0.4], "window": [23, 33],
    "cluster": "gavel-physical", "trace_options": {"max_workers": 1}}}


@pytest.fixture(scope="module")
def windowed(tmp_path_factory):
    return _swept(tmp_path_factory, WIN)


def test_window_rows_are_the_window_jobs_of_the_full_run(windowed):
    """A window row: JCT figures over jobs 23-32 only, equal to those jobs' JCTs in the
    simulation of the whole stream (stopping early changes nothing before the stop)."""
    from optsched.registry import simulate
    from optsched.studies.sweep import build_sim_instance

    _, rows, computed = windowed
    assert computed == 2
    for cell, row in zip(cells_of(SweepConfig.from_dict(WIN)), rows):
        assert row["status"] == "feasible", row["message"]
        assert (row["n_jobs"], row["n_completed"]) == (10, 10)
        inst = build_sim_instance(cell.params())
        full = simulate(inst, cell.policy, seed=0, progress=False)
        ids = [j.id for j in inst.jobs[23:33]]
        jct = np.array([full.metrics.jct[k] for k in ids])
        assert len(full.metrics.jct) == 70            # the full run finished every job
        assert row["mean_jct"] == pytest.approx(jct.mean(), rel=1e-12)
        assert row["objective"] == row["mean_jct"]
        assert (row["p50_jct"], row["p99_jct"]) == pytest.approx(
            (np.median(jct), np.percentile(jct, 99)), rel=1e-12)
        assert row["preemptions"] == sum(full.extra["preemptions"][k] for k in ids)
        assert row["makespan"] is None
        assert row["epochs"] < full.extra["epochs"]    # stopped once the window was done
        assert "jobs 23-32 of a 70-job stream" in row["message"]


def test_window_changes_the_key_only_when_set():
    plain = {**WIN, "simulate": {k: v for k, v in WIN["simulate"].items() if k != "window"}}
    with_w, without = cells_of(SweepConfig.from_dict(WIN)), cells_of(SweepConfig.from_dict(plain))
    assert "window" not in without[0].params()           # earlier sweeps keep their keys
    assert with_w[0].params() == {**without[0].params(), "window": [23, 33]}
    assert with_w[0].key != without[0].key


def test_window_unfinished_is_recorded_not_averaged(tmp_path):
    """A stream that ends before the window's jobs are done cannot measure them: the row
    says so (no JCT over the survivors) and is not retried."""
    short = {**WIN, "simulate": {**WIN["simulate"], "policies": ["gavel.fifo"],
                                 "jobs": [31], "window": [25, 30], "rates": [20.0]}}
    rows, computed = run_sweep(SweepConfig.from_dict(short), tmp_path, progress=False)
    (row,) = rows
    assert computed == 1 and row["status"] == "window_unfinished"
    assert row["mean_jct"] is None and row["n_jobs"] == 5 and row["n_completed"] < 5
    assert "unfinished at the stream's last arrival" in row["message"]
    _, again = run_sweep(SweepConfig.from_dict(short), tmp_path, progress=False)
    assert again == 0


@pytest.mark.parametrize("window, jobs, field", [
    ([5], [70], "simulate.window"),
    ([5, 5], [70], "simulate.window"),
    ([-1, 5], [70], "simulate.window"),
    ([2.0, 5], [70], "simulate.window"),
    ([True, 5], [70], "simulate.window"),
    ("20-30", [70], "simulate.window"),
    ([20, 30], [30], "simulate.jobs"),
    ([20, 30], [70, 25], "simulate.jobs"),
])
def test_bad_window(window, jobs, field):
    bad = {**WIN["simulate"], "window": window, "jobs": jobs}
    with pytest.raises(InvalidOption) as info:
        SweepConfig.from_dict({"name": "b", "simulate": bad})
    assert info.value.path == field


def test_window_needs_the_stream_length():
    bad = {"policies": ["tiresias.las"], "traces": ["philly"], "window": [0, 10]}
    with pytest.raises(InvalidOption) as info:
        SweepConfig.from_dict({"name": "b", "simulate": bad})
    assert info.value.path == "simulate.window"


# --------------------------------------------------------------------------- seeds
PHILLY_ROWS = "\n".join(
    ["timestamp,duration,num_gpus,gpu_time,cluster"]
    + [f"2017-10-09 07:{i:02d}:00,{600 + 300 * i:.1f},{1 + i % 2},0,vc{i % 2}"
       for i in range(8)]) + "\n"


def test_seeds_reach_a_trace_that_draws(tmp_path):
    """Philly's throughputs='gavel' draws each job's type: the cell's seed draws it, so
    two seeds give two instances and two rows (they were copies of seed 0)."""
    from optsched.studies.sweep import build_sim_instance

    trace = tmp_path / "philly.csv"
    trace.write_text(PHILLY_ROWS)
    cfg = SweepConfig.from_dict({"name": "s", "seeds": [0, 1], "simulate": {
        "policies": ["tiresias.las"], "traces": [str(trace)], "cluster": "gavel-108",
        "trace_options": {"throughputs": "gavel"}}})
    a, b = (build_sim_instance(c.params()) for c in cells_of(cfg))
    assert [j.profile for j in a.jobs] != [j.profile for j in b.jobs]
    rows, computed = run_sweep(cfg, tmp_path / "out", progress=False)
    assert computed == 2 and [r["seed"] for r in rows] == [0, 1]
    assert rows[0]["mean_jct"] != rows[1]["mean_jct"]


@pytest.mark.parametrize("sim", [
    {"policies": ["tiresias.las"], "traces": ["tiresias-60"], "jobs": [5]},
    {"policies": ["gavel.fifo"], "traces": ["gavel-artifact-15"], "jobs": [4]},
    # Gavel's agnostic policy draws a job's type order, but the Tiresias trace's
    # cluster has one GPU type: the draw cannot change anything
    {"policies": ["gavel.max_min_fairness_agnostic"], "traces": ["tiresias-60"],
     "jobs": [5]},
])
def test_several_seeds_over_a_deterministic_cell_are_refused(sim, tmp_path):
    cfg = SweepConfig.from_dict({"name": "d", "seeds": [0, 1], "simulate": sim})
    with pytest.raises(InvalidOption, match="seeds.*every seed would give the same row"):
        run_sweep(cfg, tmp_path, progress=False)
    assert not (tmp_path / "cells.jsonl").exists()
    one = SweepConfig.from_dict({"name": "d", "seeds": [0], "simulate": sim})
    rows, _ = run_sweep(one, tmp_path, progress=False)
    assert rows[0]["status"] == "feasible"


def test_several_seeds_over_a_policy_that_draws_run(tmp_path):
    """Gavel's agnostic FIFO draws each job's GPU type: on a cluster of three types the
    seeds are replicates, not copies."""
    cfg = SweepConfig.from_dict({"name": "r", "seeds": [0, 1, 2], "simulate": {
        "policies": ["gavel.fifo_agnostic"], "traces": ["gavel-artifact-15"]}})
    rows, _ = run_sweep(cfg, tmp_path, progress=False)
    assert len({r["mean_jct"] for r in rows}) > 1


def test_simulation_rows_carry_the_queue(tmp_path, capsys):
    """queued_jobs in the table; a cell where no job waited says policies cannot differ,
    and so does the CLI's summary."""
    from optsched.sim.simulator import NO_QUEUE

    cfg = tmp_path / "q.toml"
    cfg.write_text('name = "q"\nseeds = [0]\n[simulate]\npolicies = ["tiresias.las"]\n'
                   'traces = ["tiresias-60"]\nloads = [1.0, 50.0]\n'
                   'cluster = "tiresias-n32g4"\n')
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    rows = load_table(tmp_path / "o" / "results.csv")
    quiet, busy = rows
    assert quiet["queued_jobs"] == 0 and quiet["message"].startswith(NO_QUEUE)
    assert busy["queued_jobs"] > 0 and NO_QUEUE not in busy["message"]
    assert f"1 simulation cell(s) with {NO_QUEUE}" in capsys.readouterr().err


def test_simulation_rows_carry_the_bound_and_gap(tmp_path):
    """bound_* and gap_* in the table: the cell's certified bounds and the policy's value
    over them (>= 1), the same figures optsched.simulate reports; the JCT-vs-load plot
    draws the bound."""
    import optsched

    cfg = tmp_path / "b.toml"
    cfg.write_text('name = "b"\nseeds = [0]\n[simulate]\n'
                   'policies = ["tiresias.las", "tiresias.yarn_fifo"]\n'
                   'traces = ["tiresias-60"]\nloads = [1.0, 50.0]\n'
                   'cluster = "tiresias-n32g4"\n')
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--no-progress",
                 "--plot", "mean_jct"]) == 0
    rows = load_table(tmp_path / "o" / "results.csv")
    assert len(rows) == 4
    for r in rows:
        assert r["bound_mean_jct"] > 0 and r["gap_mean_jct"] >= 1 - 1e-9
        assert r["gap_mean_jct"] == pytest.approx(r["mean_jct"] / r["bound_mean_jct"])
        assert r["gap_makespan"] == pytest.approx(r["makespan"] / r["bound_makespan"])
    inst = optsched.catalog.read_trace("tiresias-60", "tiresias-n32g4", load=50.0)
    res = optsched.simulate(inst, "tiresias.las")
    busy = [r for r in rows if r["load"] == 50.0 and r["method"] == "tiresias.las"][0]
    assert busy["bound_mean_jct"] == pytest.approx(res.extra["bounds"]["mean_jct"])
    assert list((tmp_path / "o").glob("*mean_jct*.png"))


def test_the_plot_draws_the_bound_under_the_policies(tmp_path, monkeypatch):
    import matplotlib.axes

    from optsched.plotting import sweep_lines

    labels: list[str] = []
    real = matplotlib.axes.Axes.plot

    def spy(self, *args, **kw):
        labels.append(kw.get("label"))
        return real(self, *args, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", spy)
    rows = [{"trace": "t", "method": m, "load": x, "seed": 0, "mean_jct": v,
             "bound_mean_jct": b} for m, x, v, b in
            [("a", 1.0, 10.0, 8.0), ("b", 1.0, 12.0, 7.0), ("a", 2.0, 20.0, 15.0)]]
    sweep_lines(rows, "mean_jct", tmp_path / "p.png", x="load", group="trace")
    assert labels == ["a", "b", "certified lower bound"]


def test_every_demo_instance_takes_size_and_seed(tmp_path):
    """One signature, ``demo_instance(n_jobs, seed)``, for every model, so a sweep's
    default generator serves them all (Salus and Tiresias included)."""
    import inspect

    from optsched.registry import models

    for name, spec in models().items():
        params = inspect.signature(spec.demo_instance).parameters
        assert list(params)[:2] == ["n_jobs", "seed"], name
    for name in ("salus", "tiresias"):
        demo = models()[name].demo_instance
        assert demo(4, 0).n_jobs == 4
        assert [j.id for j in demo(4, 1).jobs] != [j.id for j in demo(4, 0).jobs]
        assert [j.id for j in demo(4, 1).jobs] == [j.id for j in demo(4, 1).jobs]
    assert models()["salus"].demo_instance().name == "salus-demo"  # the default demo
    config = SweepConfig.from_dict({"name": "demos", "models": ["salus", "tiresias"],
                                    "methods": ["heuristic"], "sizes": [4],
                                    "seeds": [0, 1]})
    rows, _ = run_sweep(config, tmp_path, progress=False)
    assert [(r["model"], r["seed"], r["status"]) for r in rows] == [
        ("salus", 0, "feasible"), ("salus", 1, "feasible"),
        ("tiresias", 0, "feasible"), ("tiresias", 1, "feasible")]
