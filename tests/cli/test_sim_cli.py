"""``optsched simulate`` / ``optsched plot`` sub-commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from optsched.cli import build_parser


def run(argv):
    """The command's function itself, so that errors propagate to the test."""
    args = build_parser().parse_args(argv)
    return args.func(args)


def test_simulate_generated_and_plot(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert run(["simulate", "--policy", "tiresias_las", "--generate", "12", "--cluster",
                "tiresias-n32g4", "--seed", "2", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["metrics"]["n_completed"] == 12 and data["extra"]["policy"] == "tiresias_las"
    pytest.importorskip("matplotlib")
    assert run(["plot", str(out), "--out", str(tmp_path / "png")]) == 0
    for f in ("jct_cdf.png", "utilization.png", "gantt.png"):
        assert (tmp_path / "png" / f).stat().st_size > 1000


def test_simulate_trace_with_cluster_file_and_options(tmp_path):
    from optsched.catalog import cluster_preset, read_tiresias_trace
    inst = read_tiresias_trace()
    inst_file = tmp_path / "i.json"
    inst.to_json(inst_file)
    cl = tmp_path / "c.json"
    cl.write_text(json.dumps(cluster_preset("tiresias-n32g4").to_dict()))
    assert run(["simulate", "--policy", "tiresias_gittins", "--instance", str(inst_file),
                "--cluster", str(cl), "--option", "gittins_delta=3250"]) == 0


def test_bad_input_raises_invalid_input(tmp_path):
    from optsched.errors import InvalidInput
    with pytest.raises(InvalidInput):
        run(["simulate", "--policy", "nope", "--generate", "3"])
    with pytest.raises(InvalidInput):
        run(["simulate", "--policy", "fifo", "--trace", str(tmp_path / "missing.trace")])
    with pytest.raises(InvalidInput):
        run(["simulate", "--policy", "fifo", "--generate", "3", "--option", "bogus=1"])
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InvalidInput):
        run(["plot", str(bad), "--out", str(tmp_path)])


def test_plot_without_matplotlib_exits_2(tmp_path, monkeypatch, capsys):
    out = tmp_path / "r.json"
    run(["simulate", "--policy", "fifo", "--generate", "3", "--out", str(out)])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    from optsched.cli import main
    assert main(["plot", str(out), "--out", str(tmp_path / "p")]) == 2
    assert "plot" in capsys.readouterr().err


def test_progress_bar_renders_when_asked(tmp_path, capsys):
    """--progress draws the bar even when stderr is not a terminal; without it, nothing."""
    argv = ["simulate", "--policy", "fifo", "--generate", "6", "--seed", "1"]
    assert run([*argv, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "simulate fifo" in err and "6/6" in err
    assert run([*argv, "--no-progress"]) == 0
    assert "simulate fifo" not in capsys.readouterr().err


def test_sweep_progress_bar_renders_when_asked(tmp_path, capsys):
    config = tmp_path / "grid.json"
    config.write_text(json.dumps({"name": "tiny", "models": ["allox"], "methods": ["sjf"],
                                  "sizes": [4], "seeds": [0, 1]}))
    assert run(["sweep", str(config), "--out", str(tmp_path / "o"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "tiny" in err and "2/2" in err


def test_gantt_legend_colours_are_the_bars_colours(tmp_path, monkeypatch):
    """One legend entry per GPU type, in the colour its bars are drawn with."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    import optsched.plotting as plot

    out = tmp_path / "r.json"
    assert run(["simulate", "--policy", "max_min_fairness", "--generate", "30", "--seed",
                "3", "--out", str(out)]) == 0
    figures = {}
    real = plot.save_figure

    def keep(fig, path, **kw):
        figures[Path(path).name] = (fig.axes[0].get_legend(),
                                    [(to_hex(b.get_facecolor())) for b in fig.axes[0].patches])
        return real(fig, path, **kw)

    monkeypatch.setattr(plot, "save_figure", keep)
    plot.plot_result(json.loads(out.read_text()), tmp_path / "png")
    legend, bars = figures["gantt.png"]
    entries = {t.get_text(): to_hex(h.get_facecolor())
               for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert set(entries) == {"k80", "p100", "v100"}
    assert len(set(entries.values())) == 3
    assert set(entries.values()) == set(bars)
