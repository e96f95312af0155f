"""Claim ``hadar_queueing_delay``: Hadar vs Gavel: queueing delay (Hadar's IPDPS'24
abstract: 13 % shorter).

The factor is Gavel's mean queueing delay over Hadar's (:mod:`optsched.core.metrics`:
first start - arrival); 13 % shorter is a factor 1 / 0.87. The runs and the setting are
:mod:`optsched.studies.reproduce._hadar_ipdps`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.studies.reproduce import _hadar_ipdps as h
from optsched.studies.reproduce.claim import SEED, Claim

__all__ = ["CLAIM", "run", "PAPER_FACTOR"]

#: 13 % shorter: Hadar's delay is 0.87 of Gavel's
PAPER_FACTOR = 1 / 0.87


def _shorter(r: float) -> str:
    """A factor as the paper words it: Hadar's figure x % shorter (or longer; beyond
    twice as long, a factor)."""
    if r < 0.5:
        return f"{1 / r:.1f}x longer"
    pct = 100 * (1 - 1 / r)
    return f"{abs(pct):.0f} % {'shorter' if pct >= 0 else 'longer'}"


def run(quick: bool, img: Path) -> dict[str, Any]:
    got = h.measure(quick)
    m = got["runs"]["main"]
    r = h.ratio(m, "mean_queueing_delay", "Gavel")
    w = h.ratio(m, "mean_waiting_time", "Gavel")
    return {
        "measured": r,
        "measured_text": f"{_shorter(r)} ({r:.3g}x: Gavel "
                         f"{m['Gavel'].mean_queueing_delay / 3600:.3g} h vs Hadar "
                         f"{m['Hadar'].mean_queueing_delay / 3600:.3g} h); YARN-CS "
                         f"{m['YARN-CS'].mean_queueing_delay / 3600:.3g} h",
        "instance": h.shape_text(quick),
        "seed": SEED,
        "notes": "Against Gavel (gavel.max_min_fairness), the stronger baseline; the "
                 "abstract does not say which. Queueing delay = first start - arrival "
                 "(optsched.core.metrics). Verdict tolerance: reproduced when Hadar's "
                 "delay is 8.5-17 % shorter (the factor within 5 % of 1/0.87). Where it "
                 "differs: Gavel time-shares, spreading each round's GPUs over the jobs "
                 "present, so a job starts sooner (mean queueing delay "
                 f"{m['Gavel'].mean_queueing_delay / 360:.3g} 6-minute rounds against "
                 f"Hadar's {m['Hadar'].mean_queueing_delay / 360:.3g}) and waits "
                 "between its rounds instead, while Hadar holds an admitted job until its "
                 "plan's slots and a job its prices reject until GPUs are left over. The "
                 "alternative definition, every hour a completed job holds no GPU "
                 "(waiting time, optsched.core.metrics), moves the factor from "
                 f"{r:.3g}x to {w:.2f}x ({_shorter(w)})"
                 + (": the definition accounts for part of the gap, not all of it" if w < 1
                    else ": the definition is the cause")
                 + ". Waiting time per setting: "
                 + h.ladder(quick, "mean_waiting_time", "Gavel")
                 + ". Queueing delay per setting: "
                 + h.ladder(quick, "mean_queueing_delay", "Gavel") + "; "
                 + h.load_effect(quick, "mean_queueing_delay", "Gavel") + "; "
                 + h.utility_effect(quick, "mean_queueing_delay", "mean queueing delay")
                 + ". " + h.SHARED_RUNS,
        "bounds_note": "no certified bound covers a queueing delay",
        "plots": [],
    }


CLAIM = Claim("hadar_queueing_delay", "Hadar vs Gavel: queueing delay", "13 % shorter",
              PAPER_FACTOR, "Sultana et al., IPDPS'24", run, tolerance=0.05,
              full_verdict="not reproduced")
