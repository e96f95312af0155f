"""Every side-by-side pair with an original system, in one table: optsched's policy next
to Gavel's, Tiresias' or Synergy's own simulator on the same input, read from the
committed peer results (nothing is run again; no original is needed).

Per pair: the original and its commit, the original's policy, optsched's policy with its
options, the input, the mean JCT ratio and the makespan ratio (optsched / original), and
the per-job agreement: the share of jobs whose completion is within one round of the
original's (Gavel: 360 s; Tiresias: the file's ``within_round``, 60 s on the 60-job
trace, 360 s on philly240; Synergy: 300 s, on Synergy's round grid when the row has it,
otherwise raw, which the ``agreement`` column says). ``meets_95`` marks the pairs at or
above 95 %. Tiresias' simulator reads whole seconds (the runner rounds each arrival and
duration), so ``within_one_round_whole_seconds`` gives the same share with optsched run
on that whole-second copy of the input, the inputs both sides then share exactly. A
pair that several files record with the same figures is one row, naming every file.
Rows whose file records no per-job agreement (the 2,000-job Gavel runs) keep their
ratios with ``-`` there.

    python benchmarks/peer_pairs.py            # writes results/peer_pairs.{json,md}
    python benchmarks/peer_pairs.py --check    # exit 1 if the committed table is stale

The causes of the pairs below 95 % are in docs/gavel.md, docs/tiresias.md and
docs/synergy.md, next to each original's tables.
"""

from __future__ import annotations

import argparse
import json
import sys

from common import RESULTS, write_results

GAVEL = ("Gavel", "c4fa400")
TIRESIAS = ("Tiresias", "959f9b0")
SYNERGY = ("Synergy", "1bb2bed")
#: Gavel's files with one row per (policy pair, options, input): the rounds files say the
#: round mechanism in ``rounds`` ("alg1" is the default, the paper's)
GAVEL_FILES = ("gavel_policies_peer_100", "gavel_policies_peer_300", "gavel_queue_peer",
               "gavel_packed_peer", "gavel_packed_peer_physical", "gavel_packed_peer_lp",
               "gavel_packed_peer_more", "gavel_packed_original", "gavel_fifo_original",
               "gavel_fifo_original_400", "gavel_gandiva_original", "gavel_rounds_peer",
               "gavel_rounds_peer_300",
               "gavel_rounds_interior", "gavel_rounds_interior_300",
               "gavel_ftf_reference", "gavel_ftf_reference_300")
SYNERGY_FILES = ("synergy_peer", "synergy_peer_policies")
COLUMNS = ["original", "commit", "original_policy", "optsched", "input", "mean_ratio",
           "makespan_ratio", "within_one_round", "agreement", "meets_95",
           "within_one_round_whole_seconds", "files"]
#: the options a rounds-file label stands for
ROUND_OPTIONS = {"alg1": [], "original": ["rounds=original"],
                 "interior": ["point=interior"], "interior-highs": ["point=interior",
                                                                   "backend=highs"],
                 "accumulated": ["isolated_time=accumulated"]}


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _share(v) -> float | None:
    """A share given as a number, a numeric string or ``"k/n"``."""
    if v is None or v == "-":
        return None
    if isinstance(v, str) and "/" in v:
        k, n = v.split("/")
        return int(k) / int(n)
    return float(v)


def _gavel_input(n, subset: str) -> str:
    return f"first {n}" + (f" @{subset}" if subset else "")


def _row(original, policy, ours, inp, mean, makespan, within, agreement, file) -> dict:
    return {"original": original[0], "commit": original[1], "original_policy": policy,
            "optsched": ours, "input": inp,
            "mean_ratio": None if mean is None else float(mean),
            "makespan_ratio": None if makespan is None else float(makespan),
            "within_one_round": within, "agreement": agreement if within is not None
            else "-", "meets_95": None if within is None else bool(within >= 0.95),
            "within_one_round_whole_seconds": None, "files": [file]}


def gavel_rows() -> list[dict]:
    out = []
    for name in GAVEL_FILES:
        data = _load(name)
        if data is None:
            continue
        for r in data["rows"]:
            policy, _, subset = r["gavel_policy"].partition("@")
            ours = r["ours_policy"].split(" @")[0]
            if not ours.startswith("gavel."):
                ours = f"gavel.{ours}"
            opts = [] if " " not in ours else ours.split(" ", 1)[1].split(",")
            ours = ours.split(" ")[0]
            for part in (r.get("rounds") or "alg1").split("+"):
                opts += [o for o in ROUND_OPTIONS[part] if o not in opts]
            label = ours + (" " + ", ".join(opts) if opts else "")
            out.append(_row(GAVEL, policy, label, _gavel_input(r["n"], subset),
                            r["mean_ratio"], r["makespan_ratio"],
                            _share(r["within_one_round"]), "360 s", name))
    data = _load("gavel_peer")
    for r in data["rows"] if data else []:
        out.append(_row(GAVEL, r["gavel_policy"], f"gavel.{r['ours_policy']}",
                        _gavel_input(r["n"], ""), r["after_mean_vs_gavel"],
                        r["after_makespan_vs_gavel"], None, "-", "gavel_peer"))
    data = _load("gavel_interior_2000")
    for r in data["rows"] if data else []:
        if r.get("mean_ratio") is None:  # Gavel's run stopped: no ratio
            continue
        opts = ROUND_OPTIONS[r["rounds"]] + (["point=interior"] if r["point"] == "interior"
                                             else [])
        label = f"gavel.{r['policy']}" + (" " + ", ".join(opts) if opts else "")
        makespan = r["makespan_h"] / r["gavel_makespan_h"] if r.get("gavel_makespan_h") \
            else None
        out.append(_row(GAVEL, r["gavel_policy"], label, "first 2000", r["mean_ratio"],
                        makespan, None, "-", "gavel_interior_2000"))
    return out


def tiresias_rows() -> list[dict]:
    data = _load("tiresias_peer")
    out = []
    for r in data["rows"] if data else []:
        if r.get("peer_status", "ok") != "ok" or r.get("mean_ratio") is None:
            continue
        row = _row(TIRESIAS, r["tiresias"], r["optsched"], r["instance"],
                   r["mean_ratio"], r["makespan_ratio"], _share(r["within_round"]),
                   "one round", "tiresias_peer")
        row["within_one_round_whole_seconds"] = _share(r.get("within_round_int"))
        out.append(row)
    return out


def synergy_rows() -> list[dict]:
    out = []
    for name in SYNERGY_FILES:
        data = _load(name)
        for r in data["rows"] if data else []:
            if r.get("mean_ratio") is None:  # Synergy's run raised: said in its file
                continue
            grid = r.get("within_300s_on_round_grid")
            within = _share(grid) if grid not in (None, "-") else _share(r["within_300s"])
            makespan = r["makespan_h_optsched"] / r["makespan_h_synergy"]
            out.append(_row(SYNERGY, r["synergy"], f"synergy {r['optsched']}",
                            f"{r['pair'].split('_')[0]} {r['split']} jobs {r['window']}",
                            r["mean_ratio"], makespan, within,
                            "300 s, grid" if grid not in (None, "-") else "300 s, raw", name))
    for path in sorted((RESULTS / "synergy_peer").glob("*_aligned.summary.json")):
        s = json.loads(path.read_text())
        pair = path.name[: -len("_aligned.summary.json")]
        kind, order, alloc, split = pair.split("_")
        out.append(_row(SYNERGY, f"{order.upper()}+{alloc} (exact iterations)",
                        f"synergy {alloc}+{order} (arrivals on Synergy's grid)",
                        f"{kind} {split.replace('-', '/')} aligned",
                        s["mean_ratio"],
                        s["makespan_h_optsched"] / s["makespan_h_synergy"],
                        float(s["within_one_round_on_grid"]), "300 s, grid",
                        f"synergy_peer/{path.name}"))
    return out


def merged(rows: list[dict]) -> list[dict]:
    """One row per pair and figures; the files that record it listed together."""
    out: dict[tuple, dict] = {}
    for r in rows:
        key = (r["original"], r["original_policy"], r["optsched"], r["input"],
               None if r["mean_ratio"] is None else round(r["mean_ratio"], 9),
               r["within_one_round"])
        if key in out:
            out[key]["files"] += [f for f in r["files"] if f not in out[key]["files"]]
        else:
            out[key] = r
    return [{**r, "files": ", ".join(r["files"])} for r in out.values()]


def table() -> list[dict]:
    return merged(gavel_rows() + tiresias_rows() + synergy_rows())


def summary(rows: list[dict]) -> list[str]:
    lines = []
    for org in (GAVEL[0], TIRESIAS[0], SYNERGY[0]):
        mine = [r for r in rows if r["original"] == org]
        measured = [r for r in mine if r["within_one_round"] is not None]
        met = [r for r in measured if r["meets_95"]]
        line = (f"- {org}: {len(mine)} pairs, {len(measured)} with per-job agreement, "
                f"{len(met)} of them with at least 95 % of jobs within one round")
        whole = [r for r in mine if r["within_one_round_whole_seconds"] is not None]
        if whole:
            met_whole = sum(r["within_one_round_whole_seconds"] >= 0.95 for r in whole)
            line += f"; on the whole-second copies {met_whole} of {len(whole)}"
        lines.append(line + ".")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed table instead of writing it")
    ap.add_argument("--name", default="peer_pairs")
    args = ap.parse_args()
    rows = table()
    if args.check:
        committed = _load(args.name)
        if committed is None or committed["rows"] != rows:
            print(f"results/{args.name}.json is not the table of the committed peer results:"
                  " run python benchmarks/peer_pairs.py")
            return 1
        print(f"results/{args.name}.json: {len(rows)} pairs, current")
        return 0
    write_results(args.name, rows, COLUMNS,
                  title="Every side-by-side pair with an original system",
                  params={"sources": "the committed peer results named in `files` "
                                     "(nothing re-run)"},
                  notes="\n".join(summary(rows)) + "\n\n" + __doc__.split("\n\n")[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
