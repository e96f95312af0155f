"""Exact reach: the largest contended instance each model's exact method solves to a
1 % gap within the default 60 s limit.

For each model (``reach_families.MODELS``) and sizes doubling from 15 jobs (15, 30, 60,
..., up to the family's end), ``optsched.registry.solve(family(model, n), model,
"exact", time_limit=60)`` is run in a fresh process (so a solve abandoned at its limit
cannot steal the next one's CPU) and the row records the status, objective, bound, gap,
the time split (``build_s``: the model's statement, the MIP start and the hand-off to
HiGHS; ``highs_s``: HiGHS's run), the process's CPU seconds, and the size of every
program HiGHS was handed (columns, rows, non-zeros, integer columns; several programs
for methods that solve a sequence). A model's ladder stops at the first size that
misses (status not optimal-within-1 %, or an error such as a size refusal). ``reach``
in the summary is the largest size solved to <= 1 % gap.

Gap curve: HiGHS writes its MIP log to a file (options ``log_file``; its console output
stays off); the incumbent, the dual bound and their gap at each log line are parsed
into ``curve`` (seconds, bound, incumbent, gap). For the first size that misses, the
curve is the gap over time within the 60 s.

The ladder honours a total wall-clock budget (``--budget``, seconds) and is resumable:
cells already in ``results/exact_reach.json`` are kept and skipped (``--redo`` drops a
model's rows first). Results are written after every cell.

``--option KEY=VALUE`` (repeatable; values parsed as JSON, as ``optsched solve
--option``) is passed to every cell's exact method, e.g. ``--option slot=360`` fixes
Tiresias' grid at the family's 6-minute round instead of the default coarsened one;
the options are in the parameters and in every row (``method_options``). Use another
``--name`` for such a ladder, so that the default grid's rows are not mixed with it.

    python benchmarks/exact_reach.py                          # every model, 1 h budget
    python benchmarks/exact_reach.py --models tiresias --budget 600
    python benchmarks/exact_reach.py --cell tiresias 60       # one cell, JSON on stdout
    python benchmarks/exact_reach.py --models tiresias --option slot=360 \
        --name exact_reach_tiresias_fixed                     # a fixed 6-minute grid
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from common import RESULTS, write_results
from reach_families import CONTENTION, MODELS, describe, family, max_size

NAME = "exact_reach"
TIME_LIMIT = 60.0
#: a size is reached when solved to at most this relative gap
GAP = 0.01
FIRST = 15
#: a cell's process is killed this long after its time limit (HiGHS honours the limit
#: within seconds; the margin covers instance reading and the schedule's validation)
KILL_AFTER = 240.0
HERE = Path(__file__).resolve().parent

_LOG_LINE = re.compile(r"(?P<bound>\S+)\s+(?P<inc>\S+)\s+(?P<gap>\S+%|Large|inf)\s+"
                       r"\d+\s+\d+\s+\d+\s+\d+\s+(?P<t>[\d.]+)s\s*$")


def ladder(model: str, first: int = FIRST) -> list[int]:
    """Sizes first, 2 first, 4 first, ... up to the family's end (its last size included
    when it is not a power-of-two multiple); 8 doublings at most for unbounded families."""
    top = max_size(model)
    sizes, n = [], first
    while (top is None and len(sizes) < 9) or (top is not None and n <= top):
        sizes.append(n)
        n *= 2
    if top is not None and sizes and sizes[-1] < top:
        sizes.append(top)
    return sizes


def _num(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_curve(log: str) -> list[list[float | None]]:
    """[seconds, bound, incumbent, gap] at each line of HiGHS's MIP progress table."""
    out: list[list[float | None]] = []
    for line in log.splitlines():
        m = _LOG_LINE.search(line)
        if not m:
            continue
        gap = m["gap"]
        g = _num(gap[:-1]) / 100.0 if gap.endswith("%") and _num(gap[:-1]) is not None \
            else None
        out.append([float(m["t"]), _num(m["bound"]), _num(m["inc"]), g])
    return out


def reached(row: dict) -> bool:
    """The cell is solved to at most :data:`GAP` (optimal, or stopped within it), and,
    for a method without a time limit, within the limit's seconds."""
    gap = row.get("gap")
    if row.get("time_limit") is False and row.get("wall_s", math.inf) > row.get(
            "limit_s", TIME_LIMIT):
        return False
    return row.get("status") in ("optimal", "time_limit") and gap is not None and gap <= GAP


def _options(model: str, time_limit: float, log: Path,
             method_options: dict | None = None) -> dict:
    """The time limit and HiGHS's log file, where the exact method declares them (AlloX's
    matching declares no option: it runs without a limit, under the cell's kill timer),
    and ``method_options`` (``--option``), which the method checks like any option."""
    from optsched import registry

    declared = registry.get_model(model).method("exact").options
    opts: dict = dict(method_options or {})
    if "time_limit" in declared:
        opts["time_limit"] = time_limit
    if "options" in declared:
        opts["options"] = {"output_flag": True, "log_to_console": False,
                           "log_file": str(log)}
    return opts


def first_within(curve: list, gap: float = GAP) -> float | None:
    """Seconds at which the logged gap first reached ``gap`` (``None``: never)."""
    return next((c[0] for c in curve if c[3] is not None and c[3] <= gap), None)


def run_cell(model: str, n: int, time_limit: float = TIME_LIMIT,
             method_options: dict | None = None) -> dict:
    """Solve one cell in this process and return its row (used by ``--cell``);
    ``method_options`` go to the exact method with the time limit."""
    import optsched.solvers.highs as highs_backend

    programs: list[dict] = []
    solve = highs_backend.solve

    def observed(data, **kw):  # records what HiGHS is handed, changes nothing
        res = solve(data, **kw)
        programs.append({"columns": int(data.n_cols), "rows": int(data.n_rows),
                         "nonzeros": int(data.A.nnz), "integers": int(data.integer.sum()),
                         "handoff_s": res.build_seconds, "highs_s": res.solve_seconds,
                         "status": res.status.value})
        return res

    highs_backend.solve = observed
    try:
        return _solve_cell(model, n, time_limit, programs, method_options or {})
    finally:
        highs_backend.solve = solve


def _solve_cell(model: str, n: int, time_limit: float, programs: list[dict],
                method_options: dict) -> dict:
    from optsched import registry

    inst = family(model, n)
    facts = {**describe(model, inst), "method_options": method_options}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "highs.log"
        cpu0, t0 = time.process_time(), time.perf_counter()
        try:
            res = registry.solve(inst, model, "exact",
                                 **_options(model, time_limit, log, method_options))
        except Exception as exc:  # a refusal (ModelTooLarge) or a failure is a miss
            return {"model": model, "n": n, **facts, "status": type(exc).__name__,
                    "message": str(exc)[:300], "wall_s": time.perf_counter() - t0,
                    "cpu_s": time.process_time() - cpu0, "programs": programs}
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        curve = parse_curve(log.read_text(errors="replace")) if log.exists() else []
    extra = res.extra
    row = {"model": model, "n": n, **facts, "status": res.status.value,
           "objective": res.objective, "bound": res.bound, "gap": res.gap,
           "build_s": res.build_seconds, "highs_s": res.solve_seconds, "wall_s": wall,
           "cpu_s": cpu,
           "columns": sum(p["columns"] for p in programs) if programs else None,
           "rows": sum(p["rows"] for p in programs) if programs else None,
           "t_1pct": first_within(curve), "programs": programs, "curve": curve,
           "time_limit": "time_limit" in _options(model, time_limit, Path("-")),
           "limit_s": time_limit,
           "incumbent": extra.get("incumbent"), "message": res.message[:300]}
    for key in ("slot", "slots"):
        if key in extra:
            row[key] = extra[key]
    return row


def cell_command(model: str, n: int, time_limit: float,
                 method_options: dict | None = None) -> list[str]:
    """The command solving one cell in a fresh process (``--cell``), the method options
    passed on as ``--option KEY=JSON``."""
    cmd = [sys.executable, str(HERE / "exact_reach.py"), "--cell", model, str(n),
           "--time-limit", str(time_limit)]
    for key, value in (method_options or {}).items():
        cmd += ["--option", f"{key}={json.dumps(value)}"]
    return cmd


def _run_subprocess(model: str, n: int, time_limit: float,
                    method_options: dict | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = cell_command(model, n, time_limit, method_options)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                             timeout=time_limit + KILL_AFTER, cwd=HERE, env=os.environ)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        row = json.loads(lines[-1]) if lines else {
            "model": model, "n": n, "status": "crashed",
            "message": (out.stderr or out.stdout)[-300:]}
    except subprocess.TimeoutExpired:
        row = {"model": model, "n": n, "status": "killed",
               "message": f"no answer {time_limit + KILL_AFTER:g} s after the start"}
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row["process_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                                 before.ru_stime)
    row["process_wall_s"] = time.perf_counter() - t0
    return row


COLUMNS = ["model", "n", "contention", "status", "gap", "t_1pct", "objective", "bound",
           "build_s", "highs_s", "cpu_s", "process_cpu_s", "columns", "rows", "slot", "slots"]


def summary(rows: list[dict]) -> list[dict]:
    """Per model: the largest size reached and the first size missed."""
    out = []
    for model in MODELS:
        mine = sorted((r for r in rows if r["model"] == model), key=lambda r: r["n"])
        if not mine:
            continue
        ok = [r["n"] for r in mine if reached(r)]
        miss = next((r for r in mine if not reached(r)), None)
        out.append({"model": model, "reach": max(ok) if ok else 0,
                    "first_miss": miss["n"] if miss else None,
                    "miss_status": miss["status"] if miss else None,
                    "miss_gap": miss.get("gap") if miss else None})
    return out


def _curve_text(rows: list[dict]) -> str:
    lines = ["Gap curve at the first size missed (HiGHS log: seconds, gap):", ""]
    for s in summary(rows):
        miss = next((r for r in rows if r["model"] == s["model"] and r["n"] ==
                     s["first_miss"]), None)
        if miss is None:
            continue
        curve = [c for c in miss.get("curve") or [] if c[3] is not None]
        if not curve:
            lines.append(f"- {s['model']} n={miss['n']}: no MIP progress logged "
                         f"({miss['status']}: {miss.get('message', '')[:160]})")
            continue
        picks, seen = [], set()
        for target in (1, 5, 10, 20, 30, 45, 60):
            before = [c for c in curve if c[0] <= target]
            if before and before[-1][0] not in seen:
                seen.add(before[-1][0])
                picks.append(before[-1])
        picks.append(curve[-1]) if curve[-1][0] not in seen else None
        lines.append(f"- {s['model']} n={miss['n']}: " + ", ".join(
            f"{c[0]:g} s {100 * c[3]:.2f} %" for c in picks))
    return "\n".join(lines)


def write(rows: list[dict], params: dict, name: str = NAME, extra_notes: str = "") -> None:
    rows = sorted(rows, key=lambda r: (MODELS.index(r["model"]), r["n"]))
    summ = summary(rows)
    notes = "\n".join([
        "Reach (largest size solved to <= 1 % gap within 60 s; ladder stops at the "
        "first miss):", "",
        *(f"- {s['model']}: {s['reach']} jobs (first miss: {s['first_miss']}, "
          f"{s['miss_status']}" + (f", gap {100 * s['miss_gap']:.1f} %"
                                   if s['miss_gap'] is not None else "") + ")"
          for s in summ), "",
        "Contention figures: " + "; ".join(f"{m}: {CONTENTION[m]}" for m in MODELS) + ".",
        "", "build_s: the model's statement, its MIP start and the hand-off to HiGHS; "
        "highs_s: HiGHS's run; cpu_s: the solving process's CPU seconds (HiGHS threads "
        "included); columns/rows: summed over the programs the method solved. The "
        "machine was shared with other jobs while this ran: wall times are inflated, "
        "CPU times are the comparable figures.", "", _curve_text(rows),
        *([ "", extra_notes] if extra_notes else [])])
    write_results(name, rows, COLUMNS, title="Exact reach on contended families",
                  params=params, notes=notes)


def before_after(before: list[dict], after: list[dict]) -> list[dict]:
    """Per model: reach and first miss in ``before`` and in ``after`` (models not
    re-run keep their ``before`` figures)."""
    b = {s["model"]: s for s in summary(before)}
    a = {s["model"]: s for s in summary(after)}
    out = []
    for model in MODELS:
        if model not in b and model not in a:
            continue
        row: dict = {"model": model}
        for tag, src in (("before", b), ("after", a if model in a else b)):
            s = src.get(model)
            if s is None:
                continue
            row[f"{tag}_reach"] = s["reach"]
            row[f"{tag}_miss"] = (f"{s['first_miss']} ({s['miss_status']}"
                                  + (f", {100 * s['miss_gap']:.1f} %" if s["miss_gap"]
                                     is not None else "") + ")"
                                  if s["first_miss"] is not None else "none (family end)")
        row["rerun"] = model in a
        out.append(row)
    return out


def merge(before_name: str, after_name: str, params: dict) -> None:
    """``results/exact_reach``: the re-run models' rows from ``after_name``, the others'
    from ``before_name``, with the before/after reach of every model in the notes."""
    before, after = load_rows(before_name), load_rows(after_name)
    rerun = {r["model"] for r in after}
    rows = [r for r in before if r["model"] not in rerun] + after
    table = before_after(before, after)
    cols = ["model", "before_reach", "before_miss", "after_reach", "after_miss", "rerun"]
    from common import markdown_table

    text = ("Before (results/" + before_name + ".md) and after; models not re-run "
            "have unchanged code:\n\n" + markdown_table(table, cols))
    write(rows, {**params, "before": before_name, "after": after_name}, NAME,
          extra_notes=text)


def load_rows(name: str = NAME) -> list[dict]:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return []
    return list(json.loads(path.read_text())["rows"])


def check_resumable(rows: list[dict], models: list[str], method_options: dict,
                    name: str) -> None:
    """Refuse to resume a ladder whose recorded cells of ``models`` were solved with other
    method options (their reach would be mixed with this run's)."""
    for r in rows:
        if r["model"] in models and r.get("method_options", {}) != method_options:
            raise SystemExit(
                f"results/{name}.json has {r['model']} n={r['n']} solved with method "
                f"options {r.get('method_options', {})}, not {method_options}: use another "
                "--name, or --redo")


def run_ladder(models: list[str], budget: float, rows: list[dict],
               time_limit: float = TIME_LIMIT, sizes=ladder,
               runner=_run_subprocess, save=None) -> list[dict]:
    """Run the ladders of ``models`` (``sizes(model)``) within ``budget`` seconds,
    keeping ``rows`` (cells already done are skipped; a model's ladder stops below its
    smallest recorded miss, so a ladder resumed with smaller sizes, ``--first``, runs
    only those below it). A cell starts only if ``time_limit`` still fits the budget.
    ``save(rows)`` is called after each new cell. Returns all rows."""
    t0 = time.perf_counter()
    done = {(r["model"], r["n"]): r for r in rows}
    for model in models:
        # a recorded miss ends the ladder there, also for a ladder of other sizes
        missed = min((r["n"] for r in rows if r["model"] == model and not reached(r)),
                     default=math.inf)
        for n in sizes(model):
            if n >= missed:
                break
            if (model, n) in done:
                continue
            if time.perf_counter() - t0 + time_limit > budget:
                print(f"budget spent: {model} n={n} not run")
                return rows
            row = runner(model, n, time_limit)
            rows.append(row)
            done[model, n] = row
            print(f"{model:9s} n={n:5d} {row['status']:12s} gap={row.get('gap')} "
                  f"cpu={row.get('process_cpu_s', 0):.1f}s", flush=True)
            if save is not None:
                save(rows)
            if not reached(row):
                break
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--budget", type=float, default=3600.0, help="total seconds")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    ap.add_argument("--redo", action="store_true", help="drop the models' rows first")
    ap.add_argument("--cell", nargs=2, metavar=("MODEL", "N"))
    ap.add_argument("--name", default=NAME, help="result file name (results/NAME.md)")
    ap.add_argument("--merge", nargs=2, metavar=("BEFORE", "AFTER"),
                    help="write results/exact_reach from two result files' rows")
    ap.add_argument("--first", type=int, default=FIRST,
                    help="the ladder's first size (then doubling; default %(default)s)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of every cell's exact method (value parsed as JSON), "
                         "e.g. slot=360; repeatable")
    a = ap.parse_args()
    from optsched.cli.common import parse_options

    method_options = parse_options(a.option)
    if a.cell:
        row = run_cell(a.cell[0], int(a.cell[1]), a.time_limit, method_options)
        print(json.dumps(row, default=str), flush=True)
        os._exit(0)  # an abandoned HiGHS thread must not hold the process
    if a.first < 1:
        ap.error(f"--first must be at least 1 (got {a.first})")
    params = {"time_limit": a.time_limit, "gap": GAP, "first": a.first, "load": 50,
              "cluster": "gavel-108 (trace families)", "seed": 0}
    if method_options:
        params["method_options"] = method_options
    if a.merge:
        merge(a.merge[0], a.merge[1], params)
        return
    rows = load_rows(a.name)
    if a.redo:
        rows = [r for r in rows if r["model"] not in a.models]
    check_resumable(rows, a.models, method_options, a.name)
    rows = run_ladder(a.models, a.budget, rows, a.time_limit,
                      sizes=partial(ladder, first=a.first),
                      runner=partial(_run_subprocess, method_options=method_options),
                      save=lambda rs: write(rs, params, a.name))
    write(rows, params, a.name)


if __name__ == "__main__":
    main()
