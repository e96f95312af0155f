"""Interrupts lose nothing and end cleanly: Ctrl-C / SIGTERM / SIGKILL on real sweeps,
reproductions, simulations and solves, then the resumed result against an
uninterrupted run; torn and damaged store lines."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import REPO

from optsched.cli import main
from optsched.errors import InvalidOption
from optsched.studies import reproduce
from optsched.studies.interrupt import Interrupted
from optsched.studies.reproduce import run_reproduction
from optsched.studies.sweep import TIMING, SweepConfig, cell_key, cells_of, run_sweep

#: a small solve grid: 16 cells of well under a second each
TINY = {"name": "tiny", "models": ["allox"], "methods": ["exact", "sjf"], "sizes": [3, 4],
        "seeds": [0, 1, 2, 3]}
#: a sweep whose cells take tens of milliseconds each (about 1 s in all), so that a kill
#: after one or two stored cells lands while the sweep still runs (TINY's 16 cells take
#: a few milliseconds in all: a kill after them may come once the run is over)
KILLED = {"name": "killed", "seeds": [0],
          "simulate": {"policies": ["tiresias.las", "tiresias.yarn_fifo", "tiresias.srtf",
                                    "tiresias.gittins"],
                       "traces": ["tiresias-60"], "loads": [1.0, 4.0, 16.0, 32.0],
                       "cluster": "tiresias-n32g4"}}
#: quick reproduction rows of a few seconds in all
ROWS = ["hadare_vs_hadar", "tiresias_vs_fifo", "allox_talk", "salus_inference"]
RESUME = "run the same command again to resume"


def strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def report_rows(out: Path) -> list[dict]:
    data = json.loads((out / "REPRODUCTION.json").read_text())
    return [{k: v for k, v in r.items() if k != "seconds"} for r in data["rows"]]


# ----------------------------------------------------------------------- subprocesses
def start(*argv: str, cwd: Path = REPO) -> subprocess.Popen:
    """``optsched ARGV`` in a process group of its own (a terminal's Ctrl-C reaches
    the whole group: :func:`ctrl_c`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    # a suite started in the background of a non-interactive shell inherits SIGINT as
    # ignored, and so would the command: it gets the terminal's default back
    return subprocess.Popen([sys.executable, "-m", "optsched.cli", *argv], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c(proc: subprocess.Popen, sig: int = signal.SIGINT) -> None:
    os.killpg(proc.pid, sig)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[float, str, str]:
    """Seconds until ``proc`` exits, its stdout and stderr."""
    t = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return time.monotonic() - t, out.decode(), err.decode()


def alive_in_group(pgid: int) -> list[str]:
    """Processes of group ``pgid`` still running (zombies excluded)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(stat.parent.name)
    return alive


def no_process_left(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 3
    while alive_in_group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = alive_in_group(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    assert not left, f"processes {left} of the command outlived it"


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> bool:
    """Wait until ``path`` holds ``n`` lines; False if ``proc`` ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise AssertionError(f"{path} did not reach {n} lines in {timeout} s")


def wait_for_stderr(proc: subprocess.Popen, timeout: float = 120) -> bytes:
    """The first bytes the command writes on stderr (it has started its work)."""
    assert proc.stderr is not None
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    assert sel.select(timeout), "the command wrote nothing on stderr"
    return os.read(proc.stderr.fileno(), 4096)


def one_line_interrupt(err: str) -> str:
    """The interrupt's line: the last of stderr, no traceback anywhere."""
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    last = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err).strip().splitlines()[-1]
    assert last.startswith("optsched: interrupted: "), err
    assert err.count("optsched: interrupted") == 1, err
    return last


# ------------------------------------------------------------------------ torn lines
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    rows, _ = run_sweep(SweepConfig.from_dict(TINY), out, progress=False)
    return out, rows


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    out = tmp_path_factory.mktemp("killed")
    rows, _ = run_sweep(SweepConfig.from_dict(KILLED), out, progress=False)
    return out, rows


@pytest.mark.parametrize("torn", ["prefix", "no_newline"])
def test_torn_last_line_is_cut_reported_and_recomputed(tiny, tmp_path, torn, capsys):
    """A kill inside the append of a cell: the next run cuts the torn line off (one
    line on stderr) and recomputes that cell; every later run reads a whole file."""
    out, rows = tiny
    lines = (out / "cells.jsonl").read_text().splitlines()
    tail = lines[5][:37] if torn == "prefix" else lines[5]  # JSON, newline never written
    store = tmp_path / "cells.jsonl"
    store.write_text("\n".join(lines[:5]) + "\n" + tail)
    cfg = SweepConfig.from_dict(TINY)
    again, computed = run_sweep(cfg, tmp_path, progress=False)
    err = capsys.readouterr().err
    assert computed == len(rows) - 5
    assert strip(again) == strip(rows)
    assert err.count("\n") == 1 and "line 6 was cut short by an interrupted write" in err
    text = store.read_text()
    assert text.endswith("\n")
    keys = [json.loads(line)["key"] for line in text.splitlines()]
    assert sorted(keys) == sorted(c.key for c in cells_of(cfg))   # each cell once
    # the next runs resume from a whole file (today: "line 6 is not JSON", exit 2)
    again, computed = run_sweep(cfg, tmp_path, progress=False)
    assert computed == 0 and strip(again) == strip(rows)
    assert capsys.readouterr().err == ""
    cfg_file = tmp_path / "tiny.json"
    cfg_file.write_text(json.dumps(TINY))
    assert main(["sweep", str(cfg_file), "--out", str(tmp_path), "--no-progress"]) == 0


def test_damaged_middle_line_is_an_error_naming_it(tiny, tmp_path, capsys):
    """A bad line before the last is corruption, not a torn write: exit 2, the file
    untouched."""
    out, _ = tiny
    lines = (out / "cells.jsonl").read_text().splitlines()
    lines[2] = lines[2][:30]
    store = tmp_path / "cells.jsonl"
    store.write_text("\n".join(lines) + "\n")
    before = store.read_bytes()
    with pytest.raises(InvalidOption, match="line 3 is not a JSON object"):
        run_sweep(SweepConfig.from_dict(TINY), tmp_path, progress=False)
    cfg_file = tmp_path / "tiny.json"
    cfg_file.write_text(json.dumps(TINY))
    assert main(["sweep", str(cfg_file), "--out", str(tmp_path), "--no-progress"]) == 2
    assert "line 3" in capsys.readouterr().err
    assert store.read_bytes() == before


# ----------------------------------------------------------- the reproduction's store
@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    """The uninterrupted quick run of :data:`ROWS`."""
    out = tmp_path_factory.mktemp("reproduced")
    run_reproduction(out, quick=True, only=ROWS, log=None)
    return out


def _interrupt_at(monkeypatch, key: str) -> None:
    """Ctrl-C while the row ``key`` runs."""
    def boom(quick, img):
        raise KeyboardInterrupt
    monkeypatch.setattr(reproduce, "CLAIMS", tuple(
        dataclasses.replace(c, run=boom) if c.key == key else c for c in reproduce.CLAIMS))


def test_reproduction_keeps_finished_rows_and_resumes(reproduced, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        _interrupt_at(m, "allox_talk")
        with pytest.raises(Interrupted, match=r"2 of 4 rows kept in .*claims.jsonl"):
            run_reproduction(tmp_path, quick=True, only=ROWS, log=None)
    # the rows finished before the interrupt are stored and in a partial report
    stored = [json.loads(line) for line in (tmp_path / "claims.jsonl").read_text().splitlines()]
    assert [r["key"] for r in stored] == ROWS[:2]
    data = json.loads((tmp_path / "REPRODUCTION.json").read_text())
    assert data["meta"]["partial"] is True
    assert report_rows(tmp_path) == report_rows(reproduced)[:2]
    assert "Partial report" in (tmp_path / "REPRODUCTION.md").read_text()
    # the same call again measures only the other rows ...
    log: list[str] = []
    run_reproduction(tmp_path, quick=True, only=ROWS, log=log.append)
    assert [line.split()[0] for line in log if "kept from" in line] == ROWS[:2]
    # ... and writes the uninterrupted run's report, complete, the store gone
    assert report_rows(tmp_path) == report_rows(reproduced)
    assert json.loads((tmp_path / "REPRODUCTION.json").read_text())["meta"]["partial"] is False
    assert not (tmp_path / "claims.jsonl").exists()


def test_reproduction_store_of_other_settings_is_refused(tmp_path, monkeypatch, capsys):
    with monkeypatch.context() as m:
        _interrupt_at(m, "salus_inference")
        with pytest.raises(Interrupted):
            run_reproduction(tmp_path, quick=True, only=["allox_talk", "salus_inference"],
                             log=None)
    before = (tmp_path / "claims.jsonl").read_bytes()
    with pytest.raises(InvalidOption, match="unfinished run with other settings"):
        run_reproduction(tmp_path, quick=False, only=["allox_talk"], log=None)
    assert main(["reproduce", "--only", "allox_talk", "--out", str(tmp_path)]) == 2
    assert "quick mode" in capsys.readouterr().err
    assert (tmp_path / "claims.jsonl").read_bytes() == before       # never mixed


# -------------------------------------------------------------- Ctrl-C on a command
# the large cells: the whole Philly trace, about 85 s each (a prefix of a few thousand jobs
# now finishes within the second the test waits)
SLOW_SWEEP = {"name": "slow", "seeds": [0], "simulate": {
    "policies": ["tiresias.las", "tiresias.srtf"], "traces": ["philly"], "jobs": [5, 82247]}}


def test_ctrl_c_stops_a_parallel_sweep_at_once(tmp_path):
    """Workers ignore the terminal's SIGINT; the parent cancels the queued cells and
    terminates the running ones (today: 90-180 s and a traceback)."""
    cfg = tmp_path / "slow.json"
    cfg.write_text(json.dumps(SLOW_SWEEP))
    out = tmp_path / "out"
    proc = start("sweep", str(cfg), "--out", str(out), "--workers", "2", "--no-progress")
    assert wait_for_lines(out / "cells.jsonl", 1, proc)      # the first (small) cell
    time.sleep(0.3)
    ctrl_c(proc)
    seconds, _, err = finish(proc)
    assert proc.returncode == 130, err
    assert seconds < 2.0, (seconds, err)
    line = one_line_interrupt(err)
    assert re.fullmatch(rf"optsched: interrupted: [12] of 4 cells kept in "
                        rf"{re.escape(str(out / 'cells.jsonl'))}; {RESUME}", line), line
    no_process_left(proc)
    kept = [json.loads(s) for s in (out / "cells.jsonl").read_text().splitlines()]
    assert all(r["size"] == 5 and r["status"] == "feasible" for r in kept)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_a_simulation(tmp_path, sig, code):
    result = tmp_path / "sim.json"
    # the whole Philly trace: about 85 s, so the signal always lands mid-run
    proc = start("simulate", "--policy", "tiresias.las", "--trace", "philly", "--out",
                 str(result), "--progress")
    wait_for_stderr(proc)                          # the progress bar: simulating
    time.sleep(0.5)
    if sig == signal.SIGINT:
        ctrl_c(proc)
    else:
        proc.send_signal(sig)                      # `kill PID`: the process alone
    seconds, _, err = finish(proc)
    assert proc.returncode == code, err
    assert seconds < 2.0, (seconds, err)
    assert one_line_interrupt(err) == (
        "optsched: interrupted: simulate stopped before it finished, nothing written; run "
        "the same command again to start over")
    assert not result.exists()
    no_process_left(proc)


def test_ctrl_c_stops_a_long_milp(tmp_path):
    """HiGHS runs in a thread of its own while the main thread waits for it, so the
    interrupt is not held back until the solver returns (its time limit here: 10 min)."""
    from optsched import catalog

    path = tmp_path / "t.json"
    catalog.read_trace("philly", "tiresias-n32g4", jobs=120, load=20.0).to_json(path)
    proc = start("solve", "tiresias", str(path), "--time-limit", "600")
    assert b"exact" in wait_for_stderr(proc)       # "tiresias exact (time limit 600 s) ..."
    time.sleep(3.0)                                # building done, HiGHS presolving
    ctrl_c(proc)
    seconds, out, err = finish(proc)
    assert proc.returncode == 130, err
    assert seconds < 2.0, (seconds, err)
    assert one_line_interrupt(err).startswith("optsched: interrupted: solve stopped")
    no_process_left(proc)


# --------------------------------------------------- kills at random points, resumed
def _kill_sweep_and_resume(tmp_path: Path, kills: list[int], seed: int, reference) -> None:
    """Run the KILLED sweep, kill it with each signal of ``kills`` at a random point
    (after a random number of stored cells, plus a random delay), resume it each time,
    and compare the end result with the uninterrupted run."""
    _, rows = reference
    rng = random.Random(seed)
    tmp_path.mkdir(exist_ok=True)
    cfg = tmp_path / "killed.json"
    cfg.write_text(json.dumps(KILLED))
    out = tmp_path / "out"
    store = out / "cells.jsonl"
    stopped = 0
    for sig in kills:
        done = store.read_bytes().count(b"\n") if store.exists() else 0
        target = done + rng.randint(1, 2)        # kill after this many stored cells ...
        proc = start("sweep", str(cfg), "--out", str(out), "--no-progress",
                     "--workers", "2" if sig == signal.SIGINT else "1")
        if target < len(rows) and wait_for_lines(store, target, proc):
            time.sleep(rng.uniform(0.0, 0.1))    # ... and a moment, inside the next ones
            os.killpg(proc.pid, sig)
        _, _, err = finish(proc)
        if sig == signal.SIGINT and proc.returncode == 130:
            assert RESUME in one_line_interrupt(err)
        else:
            assert proc.returncode in (0, -signal.SIGKILL), err
        stopped += proc.returncode != 0
        no_process_left(proc)
    assert stopped >= len(kills) // 2           # the kills landed while it ran
    again, _ = run_sweep(SweepConfig.from_dict(KILLED), out, progress=False)
    assert strip(again) == strip(rows)                              # nothing changed
    keys = [json.loads(line)["key"] for line in store.read_text().splitlines()]
    grid = [cell_key(c.params()) for c in cells_of(SweepConfig.from_dict(KILLED))]
    assert sorted(keys) == sorted(grid)                             # none lost or doubled


def _kill_reproduction_and_resume(tmp_path: Path, kills: list[int], seed: int,
                                  reference: Path) -> None:
    rng = random.Random(seed)
    store = tmp_path / "claims.jsonl"
    argv = ["reproduce", "--quick", "--out", str(tmp_path)]
    for k in ROWS:
        argv += ["--only", k]
    stopped = 0
    for sig in kills:
        done = store.read_bytes().count(b"\n") if store.exists() else 0
        proc = start(*argv)
        if done + 1 < len(ROWS) and wait_for_lines(store, done + 1, proc):
            time.sleep(rng.uniform(0.0, 0.3))    # inside the next row
            os.killpg(proc.pid, sig)
        _, _, err = finish(proc)
        if sig == signal.SIGINT and proc.returncode == 130:
            assert RESUME in one_line_interrupt(err)
            assert json.loads((tmp_path / "REPRODUCTION.json").read_text())["meta"]["partial"]
        else:
            assert proc.returncode in (0, -signal.SIGKILL), err
        stopped += proc.returncode != 0
        no_process_left(proc)
    assert stopped >= 1
    run_reproduction(tmp_path, quick=True, only=ROWS, log=None)
    assert report_rows(tmp_path) == report_rows(reference)
    assert not store.exists()


def test_killed_sweep_and_reproduction_resume_to_the_uninterrupted_result(
        killed, reproduced, tmp_path):
    _kill_sweep_and_resume(tmp_path / "sweep", [signal.SIGKILL, signal.SIGINT], 1, killed)
    _kill_reproduction_and_resume(tmp_path / "rep", [signal.SIGKILL, signal.SIGINT], 2,
                                  reproduced)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_killed_sweep_resumes_at_random_points(killed, tmp_path, seed):
    _kill_sweep_and_resume(tmp_path, [signal.SIGKILL, signal.SIGINT] * 3, seed, killed)


@pytest.mark.slow
@pytest.mark.parametrize("seed, kills", [
    (21, [signal.SIGKILL, signal.SIGINT, signal.SIGKILL]),
    (22, [signal.SIGINT, signal.SIGKILL, signal.SIGINT]),
    (23, [signal.SIGKILL, signal.SIGKILL, signal.SIGINT])])
def test_killed_reproduction_resumes_at_random_points(reproduced, tmp_path, seed, kills):
    _kill_reproduction_and_resume(tmp_path, kills, seed, reproduced)
