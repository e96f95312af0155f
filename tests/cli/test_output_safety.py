"""Output files are never destroyed, never half-written.

Every command that writes (solve, simulate, instance, plot, sweep, reproduce) refuses an
output that is one of its inputs, and reports a bad output path (a missing folder, a
folder where a file goes or a file where a folder goes, a place nobody can write, a full
disk) on ONE line, exit 2, naming the path and the reason: before any work is done, and
without a traceback or a partial file.

The tests call :func:`optsched.cli.main` in-process: an exception escaping it (the
``OSError`` tracebacks of older releases) fails the test.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from optsched.cli import main

SYS = Path("/sys")  # a place root cannot create files in either (sysfs)


# --------------------------------------------------------------------------- inputs
@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """An instance, a simulation result and a tiny sweep config, made once."""
    from optsched.allox import demo_instance

    d = tmp_path_factory.mktemp("inputs")
    inst = d / "inst.json"
    inst.write_text(demo_instance(n_jobs=4).to_json() + "\n")
    result = d / "result.json"
    assert main(["simulate", "--policy", "fifo", "--generate", "3", "--out", str(result)]) == 0
    grid = d / "grid.json"
    grid.write_text(json.dumps({"name": "tiny", "models": ["allox"], "methods": ["sjf"],
                                "sizes": [4], "seeds": [0]}))
    return {"inst": inst, "result": result, "grid": grid}


#: command -> (argv without --out, whether --out is a folder); the cheapest invocation
#: of each command that reaches its writes
COMMANDS = {
    "solve": (lambda i: ["solve", "allox", str(i["inst"]), "--method", "sjf"], False),
    "simulate": (lambda i: ["simulate", "--policy", "fifo", "--generate", "3"], False),
    "instance": (lambda i: ["instance", "allox-demo", "--jobs", "3"], False),
    "plot": (lambda i: ["plot", str(i["result"])], True),
    "sweep": (lambda i: ["sweep", str(i["grid"])], True),
    "reproduce": (lambda i: ["reproduce", "--quick", "--only", "allox_talk"], True),
}


def _fake_full_disk(monkeypatch):
    """statvfs says the file system has no free block left (what a full disk reports)."""
    real = os.statvfs

    class Full:
        def __init__(self, st):
            self.f_flag, self.f_blocks = st.f_flag, max(st.f_blocks, 1000)
            self.f_bfree = self.f_bavail = 0

    monkeypatch.setattr(os, "statvfs", lambda p: Full(real(p)))


def _out_path(case: str, folder: bool, tmp_path: Path, monkeypatch) -> tuple[Path, str]:
    """The bad ``--out`` of ``case`` and a word its one-line message must contain."""
    name = "out" if folder else "out.json"
    if case == "missing folder":
        return tmp_path / "no-such-folder" / name, "does not exist"
    if case == "wrong kind":  # a folder where a file goes, a file where a folder goes
        if folder:
            f = tmp_path / "a-file"
            f.write_text("keep me\n")
            return f, "is a file, not a folder"
        return tmp_path, "is a folder, not a file"
    if case == "unwritable":
        if not SYS.is_dir():
            pytest.skip("no /sys on this system")
        return SYS / f"optsched-test-{name}", "permission denied"
    assert case == "full disk"
    _fake_full_disk(monkeypatch)
    return tmp_path / name, "no space left on the device"


def _one_line_error(capsys, out: Path, word: str) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # one line: no traceback, no progress line before it
    line = lines[0]
    assert line.startswith("optsched: error: --out: "), line
    assert word in line and f"(got '{out}')" in line, line
    return line


@pytest.mark.parametrize("case", ["missing folder", "wrong kind", "unwritable", "full disk"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_bad_output_path_is_one_line_exit_2_before_any_work(command, case, inputs,
                                                            tmp_path, monkeypatch, capsys):
    argv, folder = COMMANDS[command]
    out, word = _out_path(case, folder, tmp_path, monkeypatch)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main([*argv(inputs), "--out", str(out)]) == 2
    _one_line_error(capsys, out, word)
    # nothing was written: no output, no folder made, no temporary file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if case == "wrong kind" and folder:
        assert out.read_text() == "keep me\n"
    elif case != "wrong kind":
        assert not out.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("command", [c for c, (_, folder) in COMMANDS.items() if not folder])
def test_a_device_that_is_full_is_reported_not_replaced(command, inputs, capsys):
    """/dev/full answers every write with ENOSPC: a real full device. It is written in
    place (never renamed over: it stays the device)."""
    argv, _ = COMMANDS[command]
    assert main([*argv(inputs), "--out", "/dev/full"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == "optsched: error: --out: no space left on the device (got '/dev/full')"
    assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize("command", ["solve", "simulate", "instance", "plot", "sweep"])
def test_disk_full_during_the_write_keeps_the_old_file(command, inputs, tmp_path,
                                                       monkeypatch, capsys):
    """The disk fills while the output is written (fsync reports ENOSPC, as it does on
    file systems that allocate late): exit 2 on one line, the previous output whole,
    no temporary file left."""
    if command in ("plot", "sweep"):
        pytest.importorskip("matplotlib")
    argv, folder = COMMANDS[command]
    if folder:
        out = tmp_path / "out"
        out.mkdir()
        old = out / ("jct_cdf.png" if command == "plot" else "config.json")
    else:
        out = old = tmp_path / "out.json"
    old.write_text("the previous output\n")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert main([*argv(inputs), "--out", str(out)]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("optsched: error: --out: no space left on the device (got '"), line
    assert str(out) in line
    assert old.read_text() == "the previous output\n"
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".part")]


# --------------------------------------------------------------------------- inputs
def test_solve_refuses_to_write_over_its_instance(inputs, tmp_path, monkeypatch, capsys):
    """``solve allox inst.json --out inst.json``: every spelling of the same file (./,
    a symlink, a hard link, ../folder/) is refused; the instance is untouched."""
    inst = tmp_path / "inst.json"
    inst.write_bytes(inputs["inst"].read_bytes())
    original = inst.read_bytes()
    (tmp_path / "link.json").symlink_to(inst)
    os.link(inst, tmp_path / "hard.json")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    for out in ("inst.json", "./inst.json", "link.json", "hard.json", "sub/../inst.json",
                str(inst)):
        assert main(["solve", "allox", "inst.json", "--method", "sjf", "--out", out]) == 2
        line = _one_line_error(capsys, Path(out) if out != "./inst.json" else out,
                               "is the input file 'inst.json' of this command")
        assert "refusing to write over it" in line
        assert inst.read_bytes() == original
    assert (tmp_path / "link.json").is_symlink()


def test_simulate_refuses_to_write_over_its_inputs(inputs, tmp_path, capsys):
    inst = tmp_path / "inst.json"
    inst.write_bytes(inputs["inst"].read_bytes())
    original = inst.read_bytes()
    assert main(["simulate", "--policy", "fifo", "--instance", str(inst),
                 "--out", str(tmp_path / "." / "inst.json")]) == 2
    _one_line_error(capsys, tmp_path / "inst.json", "is the input file")
    trace = tmp_path / "jobs.trace"
    trace.write_text("")
    (tmp_path / "alias.trace").symlink_to(trace)
    assert main(["simulate", "--policy", "fifo", "--trace", str(trace),
                 "--out", str(tmp_path / "alias.trace")]) == 2
    _one_line_error(capsys, tmp_path / "alias.trace", "is the input file")
    assert trace.read_text() == "" and inst.read_bytes() == original


def test_sweep_never_writes_over_its_config(inputs, tmp_path, capsys):
    """A config kept as OUT/config.json would be overwritten by the sweep's own copy."""
    out = tmp_path / "sweep"
    out.mkdir()
    cfg = out / "config.json"
    cfg.write_bytes(inputs["grid"].read_bytes())
    original = cfg.read_bytes()
    assert main(["sweep", str(cfg), "--out", str(out)]) == 2
    line = _one_line_error(capsys, out, "is the input file")
    assert f"would write '{cfg}'" in line
    assert cfg.read_bytes() == original and sorted(out.iterdir()) == [cfg]
    assert main(["sweep", str(cfg), "--out", str(cfg)]) == 2  # the file itself as folder
    _one_line_error(capsys, cfg, "is the input file")


def test_plot_never_writes_over_its_result(inputs, tmp_path, capsys):
    out = tmp_path / "figs"
    out.mkdir()
    res = out / "gantt.png"  # an odd name, but the user's file all the same
    res.write_bytes(inputs["result"].read_bytes())
    assert main(["plot", str(res), "--out", str(out)]) == 2
    _one_line_error(capsys, out, "is the input file")
    assert res.read_bytes() == inputs["result"].read_bytes()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into a read-only folder")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_read_only_folder(command, inputs, tmp_path, capsys):
    argv, folder = COMMANDS[command]
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    out = ro / ("out" if folder else "out.json")
    try:
        assert main([*argv(inputs), "--out", str(out)]) == 2
    finally:
        ro.chmod(0o755)
    _one_line_error(capsys, out, "permission denied")


# --------------------------------------------------------------------------- catch-all
def test_an_oserror_on_the_output_is_one_line_others_keep_their_traceback(
        tmp_path, monkeypatch, capsys):
    """A write to the command's own --out that fails outside the checked writers still
    ends on one line naming the file; an OSError about anything else is a defect and is
    not swallowed."""
    import optsched.cli.studies as studies

    out = tmp_path / "rep"

    def fails_on_the_report(args):
        raise OSError(errno.EIO, "Input/output error", str(args.out / "REPRODUCTION.md"))

    monkeypatch.setattr(studies, "cmd_reproduce", fails_on_the_report)
    assert main(["reproduce", "--out", str(out)]) == 2
    line = capsys.readouterr().err.strip()
    assert line == (f"optsched: error: --out: Input/output error "
                    f"(got '{out / 'REPRODUCTION.md'}')")

    def fails_elsewhere(args):
        raise OSError(errno.EIO, "Input/output error", "/somewhere/else")

    monkeypatch.setattr(studies, "cmd_reproduce", fails_elsewhere)
    with pytest.raises(OSError):
        main(["reproduce", "--out", str(out)])


# --------------------------------------------------------------------------- atomicity
def test_an_interrupted_table_write_leaves_the_old_table(inputs, tmp_path, monkeypatch):
    """Ctrl-C in the middle of writing the sweep table: the previous table is whole and
    no temporary file remains (the old writer truncated it first)."""
    import csv

    from optsched.studies.sweep import load_table, write_table

    rows = [{"key": str(i), "kind": "solve", "model": "allox", "method": "sjf", "size": 4,
             "seed": i, "status": "feasible", "objective": float(i)} for i in range(5)]
    path = tmp_path / "results.csv"
    write_table(rows, path)
    old = path.read_bytes()
    real = csv.DictWriter.writerow
    written = []

    def interrupted(self, row):
        if len(written) == 2:
            raise KeyboardInterrupt
        written.append(row)
        return real(self, row)

    monkeypatch.setattr(csv.DictWriter, "writerow", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_table([{**r, "objective": -1.0} for r in rows], path)
    assert path.read_bytes() == old and len(load_table(path)) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]


def test_an_interrupted_figure_leaves_the_old_figure(inputs, tmp_path, monkeypatch):
    """An error while matplotlib draws the PNG: the previous figure is kept whole."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    out = tmp_path / "figs"
    assert main(["plot", str(inputs["result"]), "--out", str(out)]) == 0
    old = (out / "jct_cdf.png").read_bytes()

    def half_then_fail(self, fname, **kw):
        if hasattr(fname, "write"):
            fname.write(b"\x89PNG half")
        else:
            Path(fname).write_bytes(b"\x89PNG half")
        raise MemoryError("drawing failed")

    monkeypatch.setattr(Figure, "savefig", half_then_fail)
    with pytest.raises(MemoryError):
        main(["plot", str(inputs["result"]), "--out", str(out)])
    assert (out / "jct_cdf.png").read_bytes() == old
    assert sorted(p.name for p in out.iterdir()) == ["gantt.png", "jct_cdf.png",
                                                     "utilization.png"]
