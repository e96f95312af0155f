"""``optsched plot`` of several runs: overlaid JCT CDFs and utilisation with a legend of
policy names, a Gantt panel per run, JCT against load of sweep tables, and exit 2 for a
missing file, a file that is no result, a mix of kinds or labels that do not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optsched.cli import main

pytest.importorskip("matplotlib")


def simulate(out: Path, policy: str, *extra: str) -> Path:
    assert main(["simulate", "--policy", policy, "--generate", "12", "--jobs-per-hour", "30",
                 "--cluster", "tiresias-n32g4", "--seed", "1", "--no-bound", *extra,
                 "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    return {"fifo": simulate(d / "fifo.json", "fifo"),
            "las": simulate(d / "las.json", "tiresias.las"),
            "las_other": simulate(d / "las2.json", "tiresias.las", "--load", "2")}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweeps")
    tables = []
    for name, policies in (("a", ["fifo", "tiresias.las"]), ("b", ["fifo"])):
        cfg = d / f"{name}.json"
        cfg.write_text(json.dumps({"name": name, "simulate": {
            "policies": policies, "traces": ["generate"], "jobs": [8], "loads": [1.0, 3.0],
            "cluster": "tiresias-n32g4"}, "seeds": [0]}))
        assert main(["sweep", str(cfg), "--out", str(d / name)]) == 0
        tables.append(d / name / "results.csv")
    return tables


@pytest.fixture
def drawn(monkeypatch):
    """The figures drawn, by file name: what each axes shows."""
    import optsched.plotting as plotting

    figures: dict[str, list] = {}
    real = plotting.save_figure

    def keep(fig, path, **kw):
        figures[Path(path).name] = [
            {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
             "legend": [t.get_text() for t in ax.get_legend().get_texts()]
             if ax.get_legend() else [],
             "lines": [ln.get_label() for ln in ax.get_lines()]} for ax in fig.axes]
        return real(fig, path, **kw)

    monkeypatch.setattr(plotting, "save_figure", keep)
    return figures


def test_several_runs_are_overlaid_with_policy_names(runs, tmp_path, drawn, capsys):
    out = tmp_path / "figs"
    assert main(["plot", str(runs["fifo"]), str(runs["las"]), "--out", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(out / f) for f in
                                               ("jct_cdf.png", "utilization.png", "gantt.png")]
    for f in ("jct_cdf.png", "utilization.png", "gantt.png"):
        assert (out / f).stat().st_size > 1000
    (cdf,) = drawn["jct_cdf.png"]
    means = {json.loads(p.read_text())["metrics"]["mean_jct"] / 3600
             for p in (runs["fifo"], runs["las"])}
    assert [t.split(" (mean")[0] for t in cdf["legend"]] == ["gavel.fifo", "tiresias.las"]
    assert {float(t.split("mean ")[1].split(" h")[0]) for t in cdf["legend"]} == \
        {float(f"{m:.3g}") for m in means}
    assert "2 runs on philly-12-seed1" in cdf["title"]
    (util,) = drawn["utilization.png"]
    assert util["legend"] == ["gavel.fifo", "tiresias.las"] and "128 GPUs" in util["ylabel"]
    gantt = drawn["gantt.png"]
    assert [ax["title"] for ax in gantt] == ["Gantt (first 60 jobs) - gavel.fifo",
                                             "Gantt (first 60 jobs) - tiresias.las"]


def test_one_run_is_drawn_by_the_same_code(runs, tmp_path, drawn):
    assert main(["plot", str(runs["las"]), "--out", str(tmp_path), "--gantt-jobs", "5"]) == 0
    (cdf,) = drawn["jct_cdf.png"]
    assert len(cdf["legend"]) == 1 and cdf["legend"][0].startswith("tiresias.las (mean ")
    assert cdf["title"] == "JCT CDF - tiresias.las"
    (gantt,) = drawn["gantt.png"]
    assert gantt["title"] == "Gantt (first 5 jobs) - tiresias.las"


def test_runs_of_one_policy_are_told_apart(runs, tmp_path, drawn):
    from optsched.cli.plot import run_labels

    las, other = (json.loads(runs[k].read_text()) for k in ("las", "las_other"))
    assert run_labels([las, other], [runs["las"], runs["las_other"]]) == \
        ["tiresias.las (philly-12-seed1)", "tiresias.las (philly-12-seed1-load2)"]
    assert run_labels([las, las], [Path("a/x.json"), Path("b/y.json")]) == \
        ["tiresias.las (x.json)", "tiresias.las (y.json)"]
    assert run_labels([las, las, other], [Path("a/x.json"), Path("b/x.json"), Path("o")]) \
        == ["tiresias.las (a/x.json)", "tiresias.las (b/x.json)",
            "tiresias.las (philly-12-seed1-load2)"]
    assert run_labels([las, las], [Path("x.json")] * 2) == \
        ["tiresias.las (x.json) #1", "tiresias.las (x.json) #2"]
    own = {**las, "method": "mymod:SRGT"}  # a policy of your own is not imported
    assert run_labels([own], [Path("o.json")]) == ["mymod:SRGT"]
    argv = ["plot", str(runs["las"]), str(runs["las_other"]), "--out", str(tmp_path)]
    assert main([*argv, "--label", "slow", "--label", "fast"]) == 0
    assert drawn["utilization.png"][0]["legend"] == ["slow", "fast"]
    assert [t.split(" (mean")[0] for t in drawn["jct_cdf.png"][0]["legend"]] == \
        ["slow", "fast"]


def test_sweep_tables_give_jct_against_load(sweeps, tmp_path, drawn, capsys):
    a, b = sweeps
    assert main(["plot", str(a), "--out", str(tmp_path / "one")]) == 0
    (panel,) = drawn["jct_vs_load.png"]
    assert panel["title"] == "generate" and panel["ylabel"] == "mean JCT (h)"
    assert panel["legend"] == ["gavel.fifo", "tiresias.las", "certified lower bound"]
    assert (tmp_path / "one" / "jct_vs_load.png").stat().st_size > 1000
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "two")]) == 0
    assert drawn["jct_vs_load.png"][0]["legend"] == [
        "gavel.fifo (a/results.csv)", "gavel.fifo (b/results.csv)", "tiresias.las",
        "certified lower bound"]


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optsched: error:")
    return err[0]


def test_bad_inputs_exit_2_and_write_nothing(runs, sweeps, tmp_path, capsys):
    out = tmp_path / "figs"
    cases = {
        "no such file": [str(runs["fifo"]), str(tmp_path / "missing.json")],
        "mixes simulation results": [str(runs["fifo"]), str(sweeps[0])],
    }
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"rows": [1, 2]}))
    cases["not a simulation result"] = [str(notes)]
    toml = tmp_path / "grid.toml"
    toml.write_text('name = "x"\n')
    cases["neither a simulation result JSON nor a sweep table"] = [str(toml)]
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    cases["not a sweep table"] = [str(other)]
    broken = tmp_path / "broken.json"
    data = json.loads(runs["fifo"].read_text())
    data["schedule"]["allocations"][0]["gpus"] = "two"
    broken.write_text(json.dumps(data))
    cases["gpus"] = [str(broken)]
    for reason, files in cases.items():
        capsys.readouterr()
        assert main(["plot", *files, "--out", str(out)]) == 2, reason
        assert reason in _error(capsys)
    assert main(["plot", str(runs["fifo"]), str(runs["las"]), "--out", str(out),
                 "--label", "one"]) == 2
    assert "once per file" in _error(capsys)
    assert not out.exists()


def test_a_table_in_the_output_folder_is_never_written_over(sweeps, tmp_path, capsys):
    out = tmp_path / "figs"
    out.mkdir()
    table = out / "jct_vs_load.png"  # an odd name, but the user's table all the same
    original = sweeps[0].read_bytes()
    table.write_bytes(original)
    capsys.readouterr()
    # the suffix decides how a file is read: .png is read as JSON, which a CSV is not
    assert main(["plot", str(table), "--out", str(out)]) == 2
    assert table.read_bytes() == original
    copy = out / "results.csv"
    copy.write_bytes(original)
    assert main(["plot", str(copy), "--out", str(out)]) == 0
    assert copy.read_bytes() == original and (out / "jct_vs_load.png").read_bytes() != original
