"""Shared by every benchmark script: machine facts and result files.

Each benchmark writes ``benchmarks/results/<name>.json`` (rows + machine + parameters)
and ``benchmarks/results/<name>.md`` (the same rows as a Markdown table), atomically
(:func:`write_result_file`): an interrupted benchmark leaves the previous committed
results whole, never a truncated file.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from optsched.core.files import write_text

RESULTS = Path(__file__).resolve().parent / "results"


def pyplot():
    """matplotlib's pyplot on the Agg backend, or ``None`` (said on stdout) without it, and
    the figures' folder ``results/img`` made; a benchmark's figures are optional."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no figures")
        return None
    (RESULTS / "img").mkdir(parents=True, exist_ok=True)
    return plt


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for pkg in ("optsched", "numpy", "scipy", "highspy", "pyomo", "cvxpy"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=RESULTS.parent, check=False).stdout.strip()
    except OSError:
        commit = ""
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(),
            "memory_gib": mem, "python": sys.version.split()[0], "packages": versions,
            "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.4g}"
    return str(v)


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    head = "| " + " | ".join(columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def write_result_file(path: Path, text: str) -> Path:
    """Write one result file (JSON, Markdown) through optsched's atomic writer: a
    temporary file beside ``path`` renamed over it once complete."""
    return write_text(path, text, field="path")


def save_figure(fig, path: Path) -> Path:
    """Save a benchmark figure (laid out, 120 dpi) atomically and close it."""
    from optsched.plotting import save_figure as save

    return save(fig, path)


def write_results(name: str, rows: list[dict], columns: list[str], *, title: str,
                  params: dict | None = None, notes: str = "") -> tuple[Path, Path]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    # "columns" gives optsched.core.tables.read_benchmark the table's column order
    payload = {"benchmark": name, "title": title, "machine": info, "params": params or {},
               "columns": list(columns), "rows": rows, "notes": notes}
    jpath = RESULTS / f"{name}.json"
    write_result_file(jpath, json.dumps(payload, indent=1, default=str) + "\n")
    md = [f"# {title}", "",
          f"Machine: {info['cpu']} ({info['cpu_count']} cores, {info['memory_gib']} GiB), "
          f"{info['platform']}, Python {info['python']}; "
          + ", ".join(f"{k} {v}" for k, v in info["packages"].items() if v)
          + f"; commit {info['commit'] or '-'}; {info['date']}.", ""]
    if params:
        md += ["Parameters: " + ", ".join(f"{k}={v}" for k, v in params.items()), ""]
    md += [markdown_table(rows, columns), ""]
    if notes:
        md += [notes, ""]
    mpath = RESULTS / f"{name}.md"
    write_result_file(mpath, "\n".join(md))
    return jpath, mpath
