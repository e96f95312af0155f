r"""``optsched reproduce``: each seed paper's headline claim, re-measured with optsched.

Every row calls the models' public APIs on the shared profiles and traces of
:mod:`optsched.catalog` and reports the paper's factor next to the measured one, with
the instance, the seed and the seconds it took. A row whose model has not landed says
``not yet available`` and why; a row that does not reproduce says so and explains.

========================  ==========================================  ============
row                       claim                                       paper
========================  ==========================================  ============
``hadar_vs_gavel``        Hadar vs Gavel, total time duration         1.20x
``hadar_jct_vs_yarn``     Hadar vs YARN-CS, mean JCT                  about 3x
``hadar_jct_vs_gavel``    Hadar vs Gavel, mean JCT                    2.5x
``hadar_queueing_delay``  Hadar vs Gavel, queueing delay              13 % shorter
``hadar_ftf``             Hadar vs Gavel, finish-time fairness        1.5 % better
``hadare_vs_hadar``       HadarE vs Hadar, cluster resource use       1.45x
``synergy_tune``          Synergy-TUNE vs GPU-proportional, mean JCT  up to 3.4x
``tiresias_vs_fifo``      Tiresias vs FIFO (YARN-CS), mean JCT        up to 5.5x
``allox_talk``            AlloX 4-job example vs SJF                  2.5x / 4x
``salus_inference``       Salus: inference jobs packed on one GPU     42 jobs
``gavel_hetero``          Gavel heterogeneity-aware vs -agnostic      up to 3.5x
========================  ==========================================  ============

``quick=True`` shrinks every experiment (first jobs of a trace, fewer loads) so that
the whole run takes a few minutes on two cores; it is part of the test suite. The full
run is what ``benchmarks/reproduce.py`` commits to ``benchmarks/results/``.

Outputs (:func:`write_report`): ``OUT/REPRODUCTION.md``, ``OUT/REPRODUCTION.json`` and
the plots in ``OUT/img/``. While a run is unfinished its finished rows are kept in
``OUT/claims.jsonl`` and the report, marked partial, is rewritten after each row; the
same command resumes from them (:func:`run_reproduction`).
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from optsched.core.files import append_line, write_text
from optsched.errors import InvalidOption
from optsched.studies import interrupt
from optsched.studies.interrupt import Interrupted
from optsched.studies.reproduce import (
    allox_talk,
    gavel_hetero,
    hadar_ftf,
    hadar_jct_vs_gavel,
    hadar_jct_vs_yarn,
    hadar_queueing_delay,
    hadar_vs_gavel,
    hadare_vs_hadar,
    salus_inference,
    synergy_tune,
    tiresias_vs_fifo,
)
from optsched.studies.reproduce.claim import SEED, Claim, NotYetAvailable, Row
from optsched.studies.store import read_records

__all__ = ["CLAIMS", "Claim", "Row", "NotYetAvailable", "SEED", "STORE", "run_reproduction",
           "run_settings", "write_report", "quick_verdict", "verdict_strength"]

#: One module per claim (``optsched/studies/reproduce/<key>.py``), in report order.
CLAIMS: tuple[Claim, ...] = (
    hadar_vs_gavel.CLAIM, hadar_jct_vs_yarn.CLAIM, hadar_jct_vs_gavel.CLAIM,
    hadar_queueing_delay.CLAIM, hadar_ftf.CLAIM, hadare_vs_hadar.CLAIM, synergy_tune.CLAIM,
    tiresias_vs_fifo.CLAIM,
    allox_talk.CLAIM, salus_inference.CLAIM, gavel_hetero.CLAIM,
)


def verdict_strength(verdict: str) -> int:
    """How much a verdict claims: 3 reproduced, 2 same direction (smaller or larger
    factor), 1 not reproduced, 0 anything else (no number, error)."""
    v = verdict.removeprefix("quick: ").split(" (")[0]
    if v == "reproduced":
        return 3
    if v in ("same direction, smaller factor", "larger factor"):
        return 2
    return 1 if v == "not reproduced" else 0


def quick_verdict(claim: Claim, verdict: str) -> str:
    """A quick run's verdict: labelled ``quick:`` and never stronger than the committed
    full run's (a small instance can look better than the real experiment)."""
    if claim.full_verdict and verdict_strength(verdict) > verdict_strength(claim.full_verdict):
        verdict = claim.full_verdict
    return f"quick: {verdict}"


def _verdict(claim: Claim, measured: float) -> str:
    target = claim.paper_factor
    if target is None:
        return "measured"
    tol = claim.tolerance
    if abs(measured - target) <= tol * target or (claim.up_to and measured >= (1 - tol) * target):
        return "reproduced"
    if measured > 1.02:
        return "same direction, smaller factor" if measured < target else "larger factor"
    return "not reproduced"


#: the finished rows of an unfinished run, in ``OUT`` (see :func:`run_reproduction`)
STORE = "claims.jsonl"


def run_settings(quick: bool) -> dict[str, Any]:
    """What a stored row was measured with: a row is reused only by a run with the same."""
    from optsched.version import __version__

    return {"mode": "quick" if quick else "full", "seed": SEED, "optsched": __version__}


def run_reproduction(out: str | Path, *, quick: bool = False,
                     only: Sequence[str] | None = None,
                     log: Callable[[str], None] | None = print) -> list[Row]:
    """Run the claims (all, or the keys in ``only``), write the report into ``out`` and
    return its rows (with ``only``, also the other rows of an earlier report of the same
    mode in ``out``, which are kept).

    Each row is appended to ``OUT/claims.jsonl`` as it finishes (with the settings of
    the run: :func:`run_settings`), and the report is rewritten, marked partial, after
    each row; so a run stopped at any point (Ctrl-C, ``kill``) keeps its finished rows,
    and the same call again takes them from the store (a row that ended in ``error``
    is measured again) and measures only the rest. The resumed report is the one an
    uninterrupted run writes (the rows' seconds are those of the run that measured
    them). Once every row is done, the complete report is written and the store
    removed, so a later run measures everything again. A store left by a run with
    other settings (``quick`` or not) is refused, never mixed in.

    Raises
    ------
    InvalidOption
        an unknown key in ``only``, or a store of a run with other settings in ``out``.
    optsched.studies.interrupt.Interrupted
        on Ctrl-C or SIGTERM, once the finished rows are stored and the partial report
        is written; its message says how many rows were kept.
    """
    known = [c.key for c in CLAIMS]
    for k in only or ():
        if k not in known:
            raise InvalidOption("only", k, f"known rows: {', '.join(known)}")
    out = Path(out)
    img = out / "img"
    store = out / STORE
    settings = run_settings(quick)
    stored = _read_store(store, settings)
    previous = _previous_rows(out, quick) if only else {}
    todo = [c for c in CLAIMS if not only or c.key in only]
    fresh: dict[str, Row] = {}

    def report(partial: bool) -> list[Row]:
        merged = {**previous, **stored, **fresh}
        rows = [merged[c.key] for c in CLAIMS if c.key in merged]
        write_report(rows, out, quick=quick,
                     partial=(f"{sum(c.key in fresh for c in todo)} of {len(todo)} rows "
                              "finished") if partial else None)
        return rows

    try:
        for c in todo:
            if c.key in stored:
                fresh[c.key] = row = stored[c.key]
                if log:
                    log(f"{c.key:18s} {row.verdict:32s} kept from {store}")
                continue
            row = _measure(c, quick, out, img)
            out.mkdir(parents=True, exist_ok=True)
            append_line(store, json.dumps({"key": c.key, "settings": settings,
                                           "row": row.to_dict()}, default=str),
                        field=STORE)
            fresh[c.key] = row
            if log:
                log(f"{c.key:18s} {row.verdict:32s} {row.measured_text or row.notes[:80]} "
                    f"({row.seconds:.1f} s)")
            if len(fresh) < len(todo):
                report(partial=True)
            interrupt.check()  # an interrupt a library swallowed
    except KeyboardInterrupt:
        if fresh:
            report(partial=True)
            kept = (f"{len(fresh)} of {len(todo)} rows kept in {store} (partial report "
                    f"{out / 'REPRODUCTION.md'}); run the same command again to resume")
        else:
            kept = f"0 of {len(todo)} rows finished; run the same command again to start"
        raise Interrupted(kept) from None
    rows = report(partial=False)
    store.unlink(missing_ok=True)  # the report holds the rows now
    return rows


def _measure(c: Claim, quick: bool, out: Path, img: Path) -> Row:
    """Run one claim into its row (an exception becomes an ``error`` row)."""
    row = Row(c.key, c.claim, c.paper, c.paper_factor, source=c.source)
    t = time.perf_counter()
    try:
        got = c.run(quick, img)
    except NotYetAvailable as exc:
        row.verdict = "not yet available"
        row.notes = str(exc)
    except Exception as exc:
        if interrupt.requested():  # a library turned the KeyboardInterrupt into this
            raise KeyboardInterrupt from exc
        row.verdict = "error"
        row.notes = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
    else:
        row.measured = None if got.get("measured") is None else float(got["measured"])
        row.measured_text = got.get("measured_text", "")
        row.instance = got.get("instance", "")
        row.seed = got.get("seed")
        row.notes = got.get("notes", "")
        row.plots = [Path(p).relative_to(out).as_posix() for p in got.get("plots", [])]
        row.bounds = list(got.get("bounds", []))
        row.bounds_note = got.get("bounds_note", "")
        row.verdict = got.get("verdict") or (
            _verdict(c, row.measured) if row.measured is not None else "no number")
    if quick and row.verdict != "error":
        row.verdict = quick_verdict(c, row.verdict)
    row.seconds = time.perf_counter() - t
    return row


def _read_store(path: Path, settings: dict[str, Any]) -> dict[str, Row]:
    """The finished rows of ``OUT/claims.jsonl`` by key (``error`` rows are measured
    again); refuses a store written with other settings."""
    rows: dict[str, Row] = {}
    keys = {c.key for c in CLAIMS}
    for n, rec in enumerate(read_records(path, field=STORE, what="its row"), 1):
        if rec.get("settings") != settings:
            other = rec.get("settings")
            mode = other.get("mode") if isinstance(other, dict) else None
            raise InvalidOption(
                "--out", str(path.parent),
                f"{path} holds the rows of an unfinished run with other settings ("
                + (f"{mode} mode" if mode else f"record {n}: {other!r}")
                + f"; this run: {settings['mode']} mode, optsched {settings['optsched']});"
                " finish that run with its own command, or remove the file or choose "
                "another --out")
        d = rec.get("row")
        if rec.get("key") in keys and isinstance(d, dict) and d.get("verdict") != "error":
            rows[rec["key"]] = Row(**d)
    return rows


def _previous_rows(out: Path, quick: bool) -> dict[str, Row]:
    """With ``only``: the rows of an earlier report of the same mode in ``out`` (so a
    row can be re-run as its model lands; the others are kept)."""
    path = out / "REPRODUCTION.json"
    try:
        old = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    if not isinstance(old, dict) or old.get("meta", {}).get("mode") != (
            "quick" if quick else "full"):
        return {}
    return {d["key"]: Row(**d) for d in old.get("rows", [])
            if isinstance(d, dict) and d.get("key") in {c.key for c in CLAIMS}}


def write_report(rows: Sequence[Row], out: str | Path, *, quick: bool,
                 partial: str | None = None) -> Path:
    """``OUT/REPRODUCTION.md`` (table, notes, plots) and ``OUT/REPRODUCTION.json``, each
    written atomically. ``partial`` (e.g. ``"3 of 7 rows finished"``) marks the report
    of an unfinished run: ``"partial": true`` in the JSON's meta, a line in the
    Markdown."""
    import os
    import platform
    import sys

    from optsched.version import __version__

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"optsched": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "mode": "quick" if quick else "full", "seed": SEED, "partial": partial is not None}
    write_text(out / "REPRODUCTION.json", json.dumps(
        {"meta": meta, "rows": [r.to_dict() for r in rows]}, indent=1, default=str) + "\n")

    def cell(s: Any) -> str:
        return "-" if s is None or s == "" else str(s).replace("|", "\\|").replace("\n", " ")

    md = ["# Reproduction of the seed papers' headline claims", "",
          f"`optsched reproduce{' --quick' if quick else ''}` (optsched {__version__}, "
          f"Python {meta['python']}, {meta['cpu_count']} cores, {meta['platform']}; "
          f"{meta['date']}). Mode: **{meta['mode']}**"
          + (" (shrunken experiments; run without `--quick` for the full ones)" if quick
             else "") + ".", "",
          *([f"**Partial report**: the run was interrupted ({partial}); run the same "
             "command again to finish it.", ""] if partial is not None else []),
          "| claim | paper | measured | verdict | instance | seed | seconds |",
          "|---|---|---|---|---|---|---|"]
    for r in rows:
        measured = r.measured_text or ("-" if r.measured is None else f"{r.measured:.3g}")
        md.append(f"| {cell(r.claim)} ({cell(r.source)}) | {cell(r.paper)} | {cell(measured)} "
                  f"| {cell(r.verdict)} | {cell(r.instance)} | {cell(r.seed)} "
                  f"| {r.seconds:.1f} |")
    md += ["", "## Notes per row", ""]
    for r in rows:
        md += [f"### {r.claim}", "", f"Paper: {r.paper} ({r.source}). Verdict: **{r.verdict}**.",
               ""]
        if r.measured_text:
            md += [f"Measured: {r.measured_text}.", ""]
        if r.notes:
            md += [r.notes.strip(), ""]
        md += _bounds_md(r)
        for p in r.plots:
            md += [f"![{r.key}]({p})", ""]
    path = out / "REPRODUCTION.md"
    write_text(path, "\n".join(md))
    return path


def _bounds_md(r: Row) -> list[str]:
    """The row's simulated runs against the certified bounds (or why there are none)."""
    if not r.bounds:
        return [f"Certified bounds: none ({r.bounds_note}).", ""] if r.bounds_note else []
    unit = {"mean_jct": 3600.0, "makespan": 3600.0, "utility": 1.0}
    name = {"mean_jct": "mean JCT (h)", "makespan": "makespan (h)", "utility": "utility"}
    md = ["Certified bounds (every schedule of the instance in the run's setting; gap >= 1 "
          "is how far the run is at most from the optimum):", "",
          "| setting | run | objective | value | bound | gap | bound from |",
          "|---|---|---|---|---|---|---|"]
    for b in r.bounds:
        u = unit[b["objective"]]
        value = "-" if b["value"] is None else f"{b['value'] / u:.4g}"
        gap = "-" if b["gap"] is None else f"{b['gap']:.2f}x"
        side = ">=" if b["bound_is"] == "lower" else "<="
        md.append(f"| {b['setting']} | {b['run']} | {name[b['objective']]} | {value} "
                  f"| {side} {b['bound'] / u:.4g} | {gap} | {b['source']} |")
    return md + [""]
