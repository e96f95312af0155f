"""Re-measure every seed paper's headline claim: benchmarks/results/REPRODUCTION.md.

The experiments are in :mod:`optsched.studies.reproduce` (also ``optsched reproduce``); this
script runs them in full and writes the report, its JSON and its plots
(``benchmarks/results/img/reproduce_*.png``) next to the other benchmark results.

    python benchmarks/reproduce.py            # full run (tens of minutes on 2 cores)
    python benchmarks/reproduce.py --quick    # the CI-sized run (about a minute)
    python benchmarks/reproduce.py --only allox_talk --only salus_inference
"""

from __future__ import annotations

import argparse

from common import RESULTS

from optsched.studies.reproduce import CLAIMS, run_reproduction


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", action="append", choices=[c.key for c in CLAIMS])
    args = ap.parse_args()
    run_reproduction(RESULTS, quick=args.quick, only=args.only)
    print(RESULTS / "REPRODUCTION.md")


if __name__ == "__main__":
    main()
