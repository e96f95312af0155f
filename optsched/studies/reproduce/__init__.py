r"""``optsched reproduce``: each seed paper's headline claim, re-measured with optsched.

Every row calls the models' public APIs on the shared profiles and traces of
:mod:`optsched.catalog` and reports the paper's factor next to the measured one, with
the instance, the seed and the seconds it took. A row whose model has not landed says
``not yet available`` and why; a row that does not reproduce says so and explains.

======================  ==========================================  =============
row                     claim                                       paper
======================  ==========================================  =============
``hadar_vs_gavel``      Hadar vs Gavel, total time duration         1.20x
``hadare_vs_hadar``     HadarE vs Hadar, cluster resource use        1.45x
``synergy_tune``        Synergy-TUNE vs GPU-proportional, mean JCT  up to 3.4x
``tiresias_vs_fifo``    Tiresias vs FIFO (YARN-CS), mean JCT        up to 5.5x
``allox_talk``          AlloX 4-job example vs SJF                  2.5x / 4x
``salus_inference``     Salus: inference jobs packed on one GPU     42 jobs
``gavel_hetero``        Gavel heterogeneity-aware vs -agnostic      up to 3.5x
======================  ==========================================  =============

``quick=True`` shrinks every experiment (first jobs of a trace, fewer loads) so that
the whole run takes a few minutes on two cores; it is part of the test suite. The full
run is what ``benchmarks/reproduce.py`` commits to ``benchmarks/results/``.

Outputs (:func:`write_report`): ``OUT/REPRODUCTION.md``, ``OUT/REPRODUCTION.json`` and
the plots in ``OUT/img/``.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from optsched.errors import InvalidOption
from optsched.studies.reproduce import (
    allox_talk,
    gavel_hetero,
    hadar_vs_gavel,
    hadare_vs_hadar,
    salus_inference,
    synergy_tune,
    tiresias_vs_fifo,
)
from optsched.studies.reproduce.claim import SEED, Claim, NotYetAvailable, Row

__all__ = ["CLAIMS", "Claim", "Row", "NotYetAvailable", "SEED", "run_reproduction",
           "write_report", "quick_verdict", "verdict_strength"]

#: One module per claim (``optsched/studies/reproduce/<key>.py``), in report order.
CLAIMS: tuple[Claim, ...] = (
    hadar_vs_gavel.CLAIM, hadare_vs_hadar.CLAIM, synergy_tune.CLAIM, tiresias_vs_fifo.CLAIM,
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
    if abs(measured - target) <= 0.1 * target or (claim.up_to and measured >= 0.9 * target):
        return "reproduced"
    if measured > 1.02:
        return "same direction, smaller factor" if measured < target else "larger factor"
    return "not reproduced"


def run_reproduction(out: str | Path, *, quick: bool = False,
                     only: Sequence[str] | None = None,
                     log: Callable[[str], None] | None = print) -> list[Row]:
    """Run the claims (all, or the keys in ``only``), write the report into ``out``."""
    known = [c.key for c in CLAIMS]
    for k in only or ():
        if k not in known:
            raise InvalidOption("only", k, f"known rows: {', '.join(known)}")
    out = Path(out)
    img = out / "img"
    rows = []
    for c in CLAIMS:
        if only and c.key not in only:
            continue
        row = Row(c.key, c.claim, c.paper, c.paper_factor, source=c.source)
        t = time.perf_counter()
        try:
            got = c.run(quick, img)
        except NotYetAvailable as exc:
            row.verdict = "not yet available"
            row.notes = str(exc)
        except Exception as exc:
            row.verdict = "error"
            row.notes = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
        else:
            row.measured = None if got.get("measured") is None else float(got["measured"])
            row.measured_text = got.get("measured_text", "")
            row.instance = got.get("instance", "")
            row.seed = got.get("seed")
            row.notes = got.get("notes", "")
            row.plots = [Path(p).relative_to(out).as_posix() for p in got.get("plots", [])]
            row.verdict = got.get("verdict") or (
                _verdict(c, row.measured) if row.measured is not None else "no number")
        if quick and row.verdict != "error":
            row.verdict = quick_verdict(c, row.verdict)
        row.seconds = time.perf_counter() - t
        rows.append(row)
        if log:
            log(f"{c.key:18s} {row.verdict:32s} {row.measured_text or row.notes[:80]} "
                f"({row.seconds:.1f} s)")
    if only:
        rows = _merge_previous(rows, out, quick)
    write_report(rows, out, quick=quick)
    return rows


def _merge_previous(rows: list[Row], out: Path, quick: bool) -> list[Row]:
    """With ``only``: keep the other rows of an earlier report of the same mode in ``out``
    (so a row can be re-run as its model lands), in :data:`CLAIMS` order."""
    path = out / "REPRODUCTION.json"
    try:
        old = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return rows
    if old.get("meta", {}).get("mode") != ("quick" if quick else "full"):
        return rows
    fresh = {r.key: r for r in rows}
    keep = {d["key"]: Row(**d) for d in old.get("rows", [])
            if d.get("key") not in fresh and d.get("key") in {c.key for c in CLAIMS}}
    merged = {**keep, **fresh}
    return [merged[c.key] for c in CLAIMS if c.key in merged]


def write_report(rows: Sequence[Row], out: str | Path, *, quick: bool) -> Path:
    """``OUT/REPRODUCTION.md`` (table, notes, plots) and ``OUT/REPRODUCTION.json``."""
    import os
    import platform
    import sys

    from optsched.version import __version__

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"optsched": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "mode": "quick" if quick else "full", "seed": SEED}
    (out / "REPRODUCTION.json").write_text(json.dumps(
        {"meta": meta, "rows": [r.to_dict() for r in rows]}, indent=1, default=str) + "\n")

    def cell(s: Any) -> str:
        return "-" if s is None or s == "" else str(s).replace("|", "\\|").replace("\n", " ")

    md = ["# Reproduction of the seed papers' headline claims", "",
          f"`optsched reproduce{' --quick' if quick else ''}` (optsched {__version__}, "
          f"Python {meta['python']}, {meta['cpu_count']} cores, {meta['platform']}; "
          f"{meta['date']}). Mode: **{meta['mode']}**"
          + (" (shrunken experiments; run without `--quick` for the full ones)" if quick
             else "") + ".", "",
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
        for p in r.plots:
            md += [f"![{r.key}]({p})", ""]
    path = out / "REPRODUCTION.md"
    path.write_text("\n".join(md))
    return path
