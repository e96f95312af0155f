"""``optsched reproduce`` and ``optsched sweep``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from optsched.cli.common import EXIT_FAILED, EXIT_OK
from optsched.core.files import check_output

__all__ = ["add_parsers"]


def add_parsers(subparsers) -> None:
    from optsched.studies.reproduce import CLAIMS
    from optsched.studies.sweep import ENGINES, FORMATS

    p = subparsers.add_parser(
        "reproduce", help="re-measure every seed paper's headline claim (REPRODUCTION.md)",
        description="Run each seed paper's headline experiment and write REPRODUCTION.md "
                    f"with the paper's and the measured factors. Rows: "
                    f"{', '.join(c.key for c in CLAIMS)}.")
    p.add_argument("--quick", action="store_true",
                   help="shrunken experiments (a few minutes on two cores); their verdicts "
                        "are labelled quick")
    p.add_argument("--out", type=Path, default=Path("reproduction"),
                   help="output directory (default: ./reproduction)")
    p.add_argument("--only", action="append", metavar="ROW",
                   help="run only this row; repeatable")
    p.set_defaults(func=cmd_reproduce)

    s = subparsers.add_parser(
        "sweep", help="run a grid of solve cells (models x methods x sizes x seeds) and "
                      "simulation cells (policies x traces x loads or rates x seeds); "
                      "parallel, resumable",
        description="Run every cell of a TOML/JSON sweep config not already in "
                    "OUT/cells.jsonl, then write OUT/results.<format>.")
    s.add_argument("config", type=Path, help="sweep config (.toml or .json)")
    s.add_argument("--out", type=Path, help="output directory (default: sweep-<name>)")
    s.add_argument("--workers", type=int, default=1, help="parallel processes (default 1)")
    s.add_argument("--engine", choices=ENGINES, default="local",
                   help="local process pool or a Dask cluster (extra 'dask')")
    s.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    s.add_argument("--format", choices=FORMATS, default="csv", dest="fmt",
                   help="table format (parquet needs pyarrow)")
    s.add_argument("--plot", metavar="COLUMN", action="append", default=[],
                   help="also plot COLUMN (e.g. mean_jct) against --x to OUT/<COLUMN>.png; "
                        "repeatable")
    s.add_argument("--x", metavar="COLUMN", default=None,
                   help="x axis of the plots (default: load or rate for a simulation sweep "
                        "that varies it, else size)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    s.set_defaults(func=cmd_sweep)


def cmd_reproduce(args) -> int:
    from optsched.studies.reproduce import run_reproduction

    check_output(args.out, folder=True)  # before the claims run, not after
    rows = run_reproduction(args.out, quick=args.quick, only=args.only)
    print(args.out / "REPRODUCTION.md")
    return EXIT_FAILED if any(r.verdict == "error" for r in rows) else EXIT_OK


def cmd_sweep(args) -> int:
    from optsched.errors import InvalidOption
    from optsched.studies.sweep import COLUMNS, default_x, load_config, plot_sweep, run_sweep

    config = load_config(args.config)
    x = args.x or default_x(config)
    for col in (x, *args.plot):  # a typo fails before anything runs
        if col not in COLUMNS:
            raise InvalidOption("--x" if col == x else "--plot", col,
                                f"not a column of the sweep table ({', '.join(COLUMNS)})")
    out = args.out = args.out or Path(f"sweep-{config.name}")
    check_output(out, [args.config], folder=True,  # before any cell runs
                 names=["config.json", "cells.jsonl", f"results.{args.fmt}",
                        *(f"{col}.png" for col in args.plot)])
    t = time.perf_counter()
    rows, computed = run_sweep(config, out, workers=args.workers, engine=args.engine,
                               fmt=args.fmt, scheduler=args.scheduler, progress=args.progress)
    for col in args.plot:
        print(plot_sweep(rows, col, out / f"{col}.png", x=x, title=config.name))
    errors = sum(r["status"] == "error" for r in rows)
    quiet = sum(r.get("queued_jobs") == 0 for r in rows)
    if quiet:
        from optsched.sim.simulator import NO_QUEUE

        print(f"optsched: warning: {quiet} simulation cell(s) with {NO_QUEUE} (column "
              "queued_jobs = 0): raise their load or shrink their cluster", file=sys.stderr)
    print(f"sweep {config.name}: {len(rows)} cells, {computed} computed, "
          f"{len(rows) - computed} reused, {errors} errors, "
          f"{time.perf_counter() - t:.1f} s -> {out / f'results.{args.fmt}'}")
    return EXIT_FAILED if errors else EXIT_OK
