"""``optsched plot``: one or several runs in the same figures.

::

    optsched plot RUN.json [RUN.json ...] --out DIR [--label NAME ...] [--gantt-jobs N]
    optsched plot results.csv [results.jsonl ...] --out DIR [--label NAME ...]

Simulation results (what ``optsched simulate --out`` writes) are overlaid: their JCT
CDFs on one axes, their GPU utilisation over time on one axes, one legend entry per run
(the policy's name, or ``--label``), and a Gantt panel per run
(:func:`optsched.plotting.plot_results`). Sweep tables (``results.csv``, ``.jsonl`` or
``.parquet`` of ``optsched sweep``) give mean JCT against load, or against arrival rate,
one line per policy (:func:`optsched.plotting.plot_sweeps`). One call plots one kind.

Bad input raises :mod:`optsched.errors` types (the main CLI maps them to exit 2): a
missing file, a file that is neither kind, a mix of both kinds, ``--label`` not once per
file; the output folder is checked before anything is drawn (never over an input).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from optsched.cli.common import EXIT_OK
from optsched.core.files import check_output
from optsched.core.jsonio import load_json
from optsched.errors import InvalidInput, InvalidOption, OptschedError

__all__ = ["add_parsers", "cmd_plot", "load_run", "run_labels", "table_names",
           "TABLE_SUFFIXES"]

#: the suffixes of a sweep table (:func:`optsched.studies.sweep.load_table`)
TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")


def add_parsers(subparsers) -> None:
    q = subparsers.add_parser(
        "plot", help="plot simulation results (JCT CDF, utilisation, Gantt; several "
                     "overlaid) or sweep tables (JCT against load) to PNG; needs the "
                     "'plot' extra (matplotlib)")
    q.add_argument("results", type=Path, nargs="+",
                   help="result JSON files written by 'optsched simulate', or sweep tables "
                        "(results.csv/.jsonl/.parquet of 'optsched sweep'); not both")
    q.add_argument("--out", type=Path, required=True, help="output directory")
    q.add_argument("--label", action="append", default=None, metavar="NAME",
                   help="legend entry of each file, in order (once per file; default: "
                        "the policy's name, with the instance or file name where two "
                        "runs share it)")
    q.add_argument("--gantt-jobs", type=int, default=60,
                   help="jobs shown in each run's Gantt chart")
    q.set_defaults(func=cmd_plot)


def load_run(path: Path) -> tuple[str, Any]:
    """``("result", data)`` for a simulation result JSON, ``("sweep", rows)`` for a sweep
    table; :class:`~optsched.errors.InvalidInput` naming the file when it is missing or
    neither."""
    if not path.is_file():
        raise InvalidInput("results", str(path), "no such file")
    if path.suffix.lower() in TABLE_SUFFIXES:
        from optsched.studies.sweep import load_table

        try:
            rows = load_table(path)
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, InvalidInput):
                raise
            raise InvalidInput(str(path), path.suffix, f"not a sweep table: {exc}") from None
        if not rows or not all(isinstance(r, Mapping) and "kind" in r and "method" in r
                               for r in rows):
            raise InvalidInput(str(path), path.suffix, "not a sweep table (no rows with "
                               "'kind' and 'method' columns)")
        return "sweep", rows
    try:
        data = load_json(path, InvalidInput, str(path))
    except InvalidInput as exc:
        raise InvalidInput(str(path), path.name, "neither a simulation result JSON nor a "
                           f"sweep table ({', '.join(TABLE_SUFFIXES)}): {exc.reason}") from None
    if not (isinstance(data, Mapping) and "schedule" in data and "metrics" in data):
        raise InvalidInput(str(path), type(data).__name__,
                           "not a simulation result (needs 'schedule' and 'metrics', as "
                           "'optsched simulate --out' writes) nor a sweep table ("
                           f"{', '.join(TABLE_SUFFIXES)})")
    return "result", data


def _qualified(name: str) -> str:
    """A registered policy's qualified name (``tiresias.las`` for ``tiresias_las``), as
    sweeps and the catalog name it; a name of your own (``module:name``, never imported
    here) or one not registered stays as it is."""
    from optsched.registry import policy_spec

    if ":" in name:
        return name
    try:
        return policy_spec(name).qualified
    except OptschedError:
        return name


def run_labels(results: Sequence[Mapping], paths: Sequence[Path]) -> list[str]:
    """The legend entry of each result: its policy's name; where several share one, the
    name with the run's instance, else with the file name, else with its folder and file
    name; the same file given twice is numbered."""
    from optsched.plotting import run_label

    base = [_qualified(run_label(d)) for d in results]
    levels = (lambda i: f"{base[i]} ({(results[i].get('extra') or {}).get('instance')})",
              lambda i: f"{base[i]} ({paths[i].name})",
              lambda i: f"{base[i]} ({Path(paths[i].parent.name, paths[i].name)})")
    labels = list(base)
    for level in levels:
        shared = [i for i, lab in enumerate(labels) if labels.count(lab) > 1]
        for i in shared:
            labels[i] = level(i)
    return [lab if labels.count(lab) == 1 else f"{lab} #{labels[:i + 1].count(lab)}"
            for i, lab in enumerate(labels)]


def table_names(paths: Sequence[Path]) -> list[str]:
    """A name per sweep table for the legend where policies repeat across tables: the
    file name, or its folder and name (``sweep-a/results.csv``) where that is shared, or
    the path as given."""
    for name in (lambda p: p.name, lambda p: f"{p.parent.name}/{p.name}", str):
        names = [name(p) for p in paths]
        if len(set(names)) == len(names):
            return names
    return [f"{p} #{i + 1}" for i, p in enumerate(paths)]  # the same file twice


def cmd_plot(args) -> int:
    from optsched.plotting import RESULT_FIGURES, plot_results, plot_sweeps, sweep_figure

    paths: list[Path] = list(args.results)
    if args.label is not None and len(args.label) != len(paths):
        raise InvalidOption("--label", args.label, f"give it once per file ({len(paths)} "
                            f"files, {len(args.label)} labels)")
    if args.gantt_jobs < 1:
        raise InvalidOption("--gantt-jobs", args.gantt_jobs, "must be >= 1")
    loaded = [load_run(p) for p in paths]
    kinds = {kind for kind, _ in loaded}
    if len(kinds) > 1:
        def listed(kind: str) -> str:
            return ", ".join(str(p) for p, (k, _) in zip(paths, loaded) if k == kind)

        raise InvalidInput("results", [str(p) for p in paths],
                           f"mixes simulation results ({listed('result')}) and sweep tables "
                           f"({listed('sweep')}); plot each kind with its own command")
    data = [d for _, d in loaded]
    if kinds == {"sweep"}:
        labels = args.label or table_names(paths)
        names = [sweep_figure([r for rows in data for r in rows])[1]]
    else:
        labels = args.label or run_labels(data, paths)
        names = list(RESULT_FIGURES)
    if len(set(labels)) < len(labels):
        raise InvalidOption("--label", labels, "two files have the same label")
    check_output(args.out, paths, folder=True, names=names)
    if kinds == {"sweep"}:
        files = plot_sweeps(dict(zip(labels, data)), args.out)
    else:
        files = plot_results(dict(zip(labels, data)), args.out, gantt_jobs=args.gantt_jobs)
    for f in files:
        print(f)
    return EXIT_OK
