"""Sampled mutation testing: plant one small bug at a time in one source file and see
whether that file's own tests notice.

Usage (from the repository root)::

    python benchmarks/mutation.py optsched/salus/heuristics.py --sample 30 --seed 0
    python benchmarks/mutation.py optsched/hadar/bounds.py --tests tests/hadar \\
        --out benchmarks/results/mutation.md --label "after"

Mutations (on the file's syntax tree, one per mutant; docstrings and ``__all__`` left
alone):

* comparison swaps: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``<`` <-> ``>``, ``==`` <-> ``!=``,
  ``is`` <-> ``is not``, ``in`` <-> ``not in``;
* arithmetic swaps: ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``**`` -> ``*``,
  and ``+=`` <-> ``-=``; a unary minus or ``not`` removed;
* ``and`` <-> ``or``; the builtins ``min`` <-> ``max``;
* constants: an integer ``k`` -> ``k + 1`` (and ``0`` <-> ``1``), a float ``x`` ->
  ``2 x`` (``0.0`` -> ``1.0``), ``True`` <-> ``False``;
* a statement removed (an assignment, expression, ``raise``, ``return``, ``assert``,
  augmented assignment, ``continue``/``break``) -- replaced by ``pass``;
* an ``if`` condition negated.

Every mutation point of the file is listed; ``--sample k --seed s`` draws k of them
(the same k for the same file, seed and mutation list). Each mutant is written into a
private copy of the source and test trees (the working tree is never touched) and the
tests (by default ``tests/<folder>`` mirroring the file's package folder) run with
``pytest -x`` under a timeout. A mutant is *killed* when the tests fail (or time out,
reported separately), and *survives* when they pass. The report lists every survivor
with its line and mutation. The unmutated copy is run first: if its tests fail, nothing
is scored.

Runs are sequential on purpose (a shared machine): about the test folder's run time
per mutant, less for mutants ``-x`` stops early.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CMP_SWAPS: dict[type, list[type]] = {
    ast.Lt: [ast.LtE, ast.Gt], ast.LtE: [ast.Lt], ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt], ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is], ast.In: [ast.NotIn], ast.NotIn: [ast.In],
}
BIN_SWAPS: dict[type, list[type]] = {
    ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div], ast.Div: [ast.Mult],
    ast.FloorDiv: [ast.Div], ast.Pow: [ast.Mult], ast.Mod: [ast.FloorDiv],
}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
          ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
          ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
          ast.FloorDiv: "//", ast.Pow: "**", ast.Mod: "%", ast.And: "and", ast.Or: "or"}
REMOVABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Return,
             ast.Assert, ast.Continue, ast.Break)


@dataclass(frozen=True)
class Mutant:
    """One mutation: the ``index``-th node (in :func:`ast.walk` order) changed by ``kind``."""

    index: int
    kind: str
    line: int
    what: str


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring expressions (never mutated)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0]))
    return out


def _skipped(tree: ast.AST) -> set[int]:
    """ids of nodes inside docstrings, ``__all__`` and type annotations."""
    skip: set[int] = set()
    roots: list[ast.AST] = []
    doc = _docstrings(tree)
    for node in ast.walk(tree):
        if id(node) in doc:
            roots.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                  for t in node.targets):
            roots.append(node)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    for r in roots:
        skip |= {id(n) for n in ast.walk(r)}
    return skip


def mutation_points(source: str) -> list[Mutant]:
    """Every mutant of ``source`` (module docstring), in a fixed order."""
    tree = ast.parse(source)
    skip = _skipped(tree)
    out: list[Mutant] = []
    for k, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for p, op in enumerate(node.ops):
                for new in CMP_SWAPS.get(type(op), []):
                    out.append(Mutant(k, f"cmp:{p}:{new.__name__}", line,
                                      f"{SYMBOL[type(op)]} -> {SYMBOL[new]}"))
        elif isinstance(node, ast.BinOp):
            for new in BIN_SWAPS.get(type(node.op), []):
                out.append(Mutant(k, f"bin:{new.__name__}", line,
                                  f"{SYMBOL[type(node.op)]} -> {SYMBOL[new]}"))
        elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
            new = ast.Sub if isinstance(node.op, ast.Add) else ast.Add
            out.append(Mutant(k, f"aug:{new.__name__}", line,
                              f"{SYMBOL[type(node.op)]}= -> {SYMBOL[new]}="))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            out.append(Mutant(k, "unary", line,
                              f"{'-' if isinstance(node.op, ast.USub) else 'not '}x -> x"))
        elif isinstance(node, ast.BoolOp):
            new = "Or" if isinstance(node.op, ast.And) else "And"
            out.append(Mutant(k, f"bool:{new}", line,
                              f"{SYMBOL[type(node.op)]} -> {new.lower()}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("min", "max"):
            new = "max" if node.func.id == "min" else "min"
            out.append(Mutant(k, f"call:{new}", line, f"{node.func.id}( -> {new}("))
        elif isinstance(node, ast.Constant) and not isinstance(node.value, str):
            v = node.value
            if isinstance(v, bool):
                out.append(Mutant(k, "const", line, f"{v} -> {not v}"))
            elif isinstance(v, int):
                out.append(Mutant(k, "const", line, f"{v} -> {_const(v)}"))
            elif isinstance(v, float):
                out.append(Mutant(k, "const", line, f"{v!r} -> {_const(v)!r}"))
        if isinstance(node, REMOVABLE):
            out.append(Mutant(k, "remove", line, f"`{_head(node)}` removed"))
        elif isinstance(node, ast.If):
            out.append(Mutant(k, "negate", line, f"if {_head(node.test)} -> if not (...)"))
    return out


def _const(v: int | float) -> int | float:
    if isinstance(v, int):
        return 1 if v == 0 else (0 if v == 1 else v + 1)
    return 1.0 if v == 0.0 else 2.0 * v


def _head(node: ast.AST) -> str:
    text = ast.unparse(node).splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


def apply(source: str, m: Mutant) -> str:
    """``source`` with mutant ``m`` applied (unparsed: comments and layout are lost)."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    node = nodes[m.index]
    kind, _, arg = m.kind.partition(":")
    if kind == "cmp":
        pos, _, name = arg.partition(":")
        node.ops[int(pos)] = getattr(ast, name)()
    elif kind in ("bin", "aug"):
        node.op = getattr(ast, arg)()
    elif kind == "bool":
        node.op = getattr(ast, arg)()
    elif kind == "call":
        node.func.id = arg
    elif kind == "const":
        node.value = (not node.value) if isinstance(node.value, bool) else _const(node.value)
    elif kind in ("unary", "remove", "negate"):
        parent = next(p for p in nodes for f, v in ast.iter_fields(p)
                      if v is node or (isinstance(v, list) and any(x is node for x in v)))
        if kind == "negate":
            node.test = ast.UnaryOp(ast.Not(), node.test)
        else:
            new = node.operand if kind == "unary" else ast.Pass()
            for f, v in ast.iter_fields(parent):
                if v is node:
                    setattr(parent, f, new)
                elif isinstance(v, list):
                    v[:] = [new if x is node else x for x in v]
    else:
        raise ValueError(m.kind)
    return ast.unparse(ast.fix_missing_locations(tree))


def default_tests(target: Path) -> str:
    """``tests/<folder>`` for ``optsched/<folder>/file.py``."""
    parts = target.parts
    return str(Path("tests", parts[1])) if len(parts) > 2 else "tests"


def run_tests(root: Path, tests: str, timeout: float) -> tuple[str, float]:
    """``("passed" | "failed" | "timeout", seconds)`` for pytest on ``tests`` under ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    env.pop("OPTSCHED_HYPOTHESIS_PROFILE", None)  # the default, derandomised profile
    cmd = [sys.executable, "-m", "pytest", tests, "-x", "-q", "-p", "no:cacheprovider",
           "-m", "not slow"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the test run and any solver it started
        proc.wait()
        return "timeout", time.perf_counter() - t0
    return ("passed" if rc == 0 else "failed"), time.perf_counter() - t0


def _machine() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import machine_info

    info = machine_info()
    return (f"{info['cpu']} ({info['cpu_count']} cores), {info['platform']}, Python "
            f"{info['python']}; {info['date']}")


def _commit(root: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                         capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "optsched", "tests"], cwd=root,
                           capture_output=True, text=True, check=False).stdout.strip()
    return (out or "-") + (" (with uncommitted changes)" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="source file, e.g. optsched/salus/heuristics.py")
    ap.add_argument("--tests", help="test path (default: tests/<package folder>)")
    ap.add_argument("--root", default=str(REPO),
                    help="tree holding optsched/ and tests/ (default: this repository)")
    ap.add_argument("--sample", type=int, default=30, help="mutants drawn (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per mutant (default: 5 x the unmutated run + 30)")
    ap.add_argument("--list", action="store_true", help="list the mutation points and stop")
    ap.add_argument("--mutants", help="run only these mutation points (numbers from "
                    "--list, comma-separated) instead of a sample")
    ap.add_argument("--out", help="Markdown file to add this run's report to")
    ap.add_argument("--label", default="", help="a name for this run in the report")
    args = ap.parse_args(argv)

    root = Path(args.root).resolve()
    target = Path(args.target)
    source = (root / target).read_text()
    points = mutation_points(source)
    if args.list:
        for k, m in enumerate(points):
            print(f"{k:4d}  line {m.line:4d}  {m.what}")
        return 0
    tests = args.tests or default_tests(target)
    rng = random.Random(args.seed)
    if args.mutants:
        chosen = sorted(int(k) for k in args.mutants.split(","))
    else:
        chosen = sorted(rng.sample(range(len(points)), min(args.sample, len(points)))
                        if args.sample else range(len(points)))
    print(f"{target}: {len(points)} mutation points, {len(chosen)} drawn (seed {args.seed});"
          f" tests {tests}", flush=True)
    commit = _commit(root)  # of the tree as copied, not as it is when the run ends
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        work = Path(tmp)
        for folder in ("optsched", "tests"):
            shutil.copytree(root / folder, work / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for f in ("pyproject.toml",):
            if (root / f).exists():
                shutil.copy2(root / f, work / f)
        status, base = run_tests(work, tests, timeout=3600)
        if status != "passed":
            print(f"the unmutated tests do not pass ({status}): nothing to score")
            return 2
        timeout = args.timeout or 5 * base + 30
        print(f"unmutated run: {base:.1f} s; timeout per mutant {timeout:.0f} s", flush=True)
        rows = []
        original = ast.unparse(ast.parse(source))
        for k in chosen:
            m = points[k]
            mutated = apply(source, m)
            if mutated == original:
                rows.append((m, "equivalent", 0.0))
                continue
            (work / target).write_text(mutated)
            try:
                status, secs = run_tests(work, tests, timeout)
            finally:
                (work / target).write_text(source)
            verdict = {"failed": "killed", "timeout": "timeout", "passed": "survived"}[status]
            rows.append((m, verdict, secs))
            print(f"  line {m.line:4d}  {m.what:<48s} {verdict} ({secs:.1f} s)", flush=True)
    counted = [r for r in rows if r[1] != "equivalent"]
    killed = sum(r[1] in ("killed", "timeout") for r in counted)
    score = killed / len(counted) if counted else float("nan")
    print(f"score {killed}/{len(counted)} = {100 * score:.0f} % killed")
    if args.out:
        _report(Path(args.out), commit, target, tests, args, len(points), base, rows, killed,
                counted)
    return 0


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _report(path: Path, commit: str, target: Path, tests: str, args, n_points: int,
            base: float, rows, killed: int, counted) -> None:
    survivors = [r for r in rows if r[1] == "survived"]
    timeouts = sum(r[1] == "timeout" for r in rows)
    title = f"## `{target}` against `{tests}`" + (f" ({args.label})" if args.label else "")
    lines = [title, "",
             f"Source tree commit {commit}; {_machine()}.",
             f"{n_points} mutation points, {len(rows)} drawn (`--sample {args.sample} --seed "
             f"{args.seed}`); unmutated test run {base:.1f} s.", "",
             f"**{killed} of {len(counted)} killed ({100 * killed / max(1, len(counted)):.0f} %)**"
             f"; {timeouts} of them by timeout; "
             f"{sum(r[1] == 'equivalent' for r in rows)} equivalent (unchanged code) left out.",
             ""]
    if survivors:
        lines += ["Surviving mutants:", "", "| line | mutation |", "|---|---|"]
        lines += [f"| {m.line} | {_escape(m.what)} |" for m, _, _ in survivors]
        lines.append("")
    old = path.read_text() if path.exists() else (
        "# Mutation testing\n\nSampled mutants (`benchmarks/mutation.py`), each file against "
        "its own test folder. A mutant is killed when a test fails.\n\n")
    sys.path.insert(0, str(REPO))
    from optsched.core.files import write_text

    write_text(path, old.rstrip("\n") + "\n\n" + "\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
