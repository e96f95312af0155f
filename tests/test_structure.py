"""The package's shape: no import cycle, no import that runs back up the layers, the
same files in every paper folder, one registry.

Every import statement counts, including those inside functions. Run alone with
``pytest tests/test_structure.py -v``; a failure names the modules involved.
"""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict
from pathlib import Path

import pytest
from paths import PACKAGE

ROOT = PACKAGE
PAPERS = ("allox", "gavel", "hadar", "hadare", "salus", "synergy", "tiresias")
PAPER_FILES = {"__init__.py", "model.py", "exact.py", "bounds.py", "heuristics.py",
               "policy.py", "workload.py"}

# Layers, lowest first: a module may import only from its own layer or below. Papers
# may import each other (HadarE builds on Hadar) as long as there is no cycle.
LAYERS = [
    ("base", ("optsched.errors", "optsched.options", "optsched.version")),
    ("core", ("optsched.core",)),
    ("solvers", ("optsched.solvers",)),
    ("catalog", ("optsched.catalog", "optsched.progressbar")),
    ("sim", ("optsched.sim",)),
    ("registry", ("optsched.registry", "optsched.extend", "optsched.plotting")),
    ("papers", tuple(f"optsched.{p}" for p in PAPERS)),
    ("studies", ("optsched.compare", "optsched.compare_bounds", "optsched.studies",
                 "optsched.bench")),
    ("cli", ("optsched.cli",)),
    ("package", ("optsched",)),
]


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the optsched modules it imports (anywhere in its body)."""
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    node.module.startswith("optsched"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    graph[mod].add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("optsched"):
                        graph[mod].add(alias.name)
        graph[mod].discard(mod)
    return {m: {t for t in ts if t in modules} for m, ts in graph.items()} | \
        {m: set() for m in modules if m not in graph}


def _layer(mod: str) -> int:
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if mod == p or mod.startswith(p + "."):
                if best is None or len(p) > best[1]:
                    best = (i, len(p))
    assert best is not None, f"{mod} is in no layer"
    return best[0]


def test_no_import_cycle():
    graph = _imports()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if t == "optsched":
                continue
            # a package's __init__ importing its own modules is not a cycle through them
            if state.get(t) == 1 and not m.startswith(t + "."):
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state and m != "optsched":
            visit(m)


def test_no_import_runs_back_up():
    bad = []
    for mod, targets in _imports().items():
        for t in targets:
            if _layer(t) > _layer(mod):
                bad.append(f"{mod} ({LAYERS[_layer(mod)][0]}) imports {t} "
                           f"({LAYERS[_layer(t)][0]})")
    assert not bad, "\n".join(sorted(bad))


#: Modules that only re-exported another path, removed in 0.x (CHANGELOG.md).
REMOVED = ("instance", "schedule", "validate", "metrics", "result", "progress", "policies")


def test_no_submodule_shadows_a_function():
    """``import optsched.X`` binds the submodule X as an attribute of the package: a
    submodule named like one of the package's functions would replace that function
    (``import optsched.policies`` made ``optsched.policies()`` a TypeError)."""
    import importlib
    import pkgutil

    import optsched

    subs = {m.name for m in pkgutil.iter_modules(optsched.__path__)}
    funcs = {n for n in dir(optsched) if not n.startswith("_")
             and callable(getattr(optsched, n)) and not isinstance(getattr(optsched, n), type)
             and not inspect.ismodule(getattr(optsched, n))}
    assert {"policies", "models", "solve", "simulate", "validate_schedule"} <= funcs
    assert not subs & funcs, sorted(subs & funcs)
    assert not subs & set(REMOVED), sorted(subs & set(REMOVED))
    # importing every submodule leaves every function in place
    for name in sorted(subs - {"__main__"}):
        importlib.import_module(f"optsched.{name}")
    assert all(callable(getattr(optsched, f)) and not inspect.ismodule(getattr(optsched, f))
               for f in funcs)
    assert "allox.online" in optsched.policies()


def test_every_paper_folder_has_the_same_files():
    for paper in PAPERS:
        files = {p.name for p in (ROOT / paper).glob("*.py")}
        assert files == PAPER_FILES, (paper, sorted(files ^ PAPER_FILES))


def test_one_registry():
    """Every paper registers exactly once, its methods and its policies together."""
    import optsched
    from optsched.registry import models, policies

    assert set(models()) == set(PAPERS)
    for name, spec in models().items():
        assert spec.exact is not None and spec.heuristics, name
        assert spec.policies, name
        assert getattr(optsched, name).SPEC is spec
    assert {p.paper for p in policies().values()} == set(PAPERS)


def test_tests_mirror_the_package():
    """Every subpackage has its own test folder (tests/<name>/test_*.py); only the
    cross-cutting tests (every path, the structure) sit at the top."""
    tests = PACKAGE.parent / "tests"
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    subpackages -= {"catalog_data"}  # data, no code
    missing = sorted(s for s in subpackages if not list((tests / s).glob("test_*.py")))
    assert not missing, f"subpackages without tests/<name>/: {missing}"
    top = {p.name for p in tests.glob("test_*.py")}
    assert top == {"test_matrix.py", "test_structure.py"}, top
    # test folders are not packages: pytest imports test modules by basename
    names = sorted(p.name for p in tests.rglob("test_*.py"))
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"test modules sharing a basename: {dup}"


SECTIONS = ("Parameters", "Returns", "Guarantee", "Complexity", "References")


def test_every_method_states_its_guarantee_complexity_and_reference():
    """Every registered exact, bound and heuristic function has the numpydoc sections
    Parameters, Returns, Guarantee (an inequality, or "None" and why), Complexity and
    References."""
    import inspect
    import re

    from optsched.registry import models

    missing = {}
    for paper, spec in models().items():
        for m in spec.methods:
            doc = inspect.getdoc(m.fn) or ""
            lacks = [s for s in SECTIONS if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.M)]
            guarantee = doc.split("Guarantee\n---------", 1)[-1].split("\nComplexity")[0]
            # an inequality, or an explicit "None ..." saying why there is none
            stated = re.search(r"\\(le|ge)|[<>]=?|=", guarantee) \
                or guarantee.strip().startswith("None")
            if "Guarantee" not in lacks and not stated:
                lacks.append("an inequality in Guarantee")
            if lacks:
                missing[f"{paper}.{m.name} ({m.fn.__module__}.{m.fn.__name__})"] = lacks
    assert not missing, missing


def test_every_heuristic_declares_what_is_proved():
    """Every registered heuristic declares its proved bound against the exact optimum,
    or "none known" with the reason (``Method.proved``); the declaration is required."""
    import pytest

    from optsched.errors import InvalidOption
    from optsched.registry import Method, models

    declared = {}
    for paper, spec in models().items():
        for m in spec.heuristics.values():
            bound, _, why = m.proved.partition(": ")
            assert bound and len(why) >= 20, (paper, m.name, m.proved)
            assert (bound, why) == (m.proved_bound, m.proved_statement)
            declared[paper, m.name] = bound
    assert len(declared) == 22
    # the bounds the papers prove; every other heuristic says none is known
    assert declared.pop(("hadar", "online")) == "2α"
    assert declared.pop(("salus", "ffd")) == "2/(1-θ)+1 if gpus"
    assert declared.pop(("allox", "online")) == "1 if common arrival"
    assert set(declared.values()) == {"none known"}

    def fn(instance):
        raise AssertionError("not run")

    for bad in ("", "none known", "none known: ", ": a reason", 3):
        with pytest.raises(InvalidOption, match="proved"):
            Method("h", fn, proved=bad)
    with pytest.raises(InvalidOption, match="proved"):
        Method("h", fn)
    assert Method("x", fn, "exact").proved == ""  # exact and bound methods need none


def _bare_example_counts(text: str) -> list[int]:
    """Lines of ``text`` where ``max_examples=`` is given anything but ``examples(...)``."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "max_examples" and not (
                        isinstance(kw.value, ast.Call) and isinstance(kw.value.func, ast.Name)
                        and kw.value.func.id == "examples"):
                    out.append(kw.value.lineno)
    return out


def test_property_tests_scale_with_the_hypothesis_profile():
    """A per-test ``max_examples`` is written ``examples(n)`` (tests/strategies.py), so that
    the long profile runs 10x as many; a bare number would stay at n under every profile.
    Only conftest.py, which defines the profiles, states counts of its own."""
    tests = PACKAGE.parent / "tests"
    bare = {f"{p.relative_to(tests)}:{line}"
            for p in sorted(tests.rglob("*.py")) if p.name != "conftest.py"
            for line in _bare_example_counts(p.read_text())}
    assert not bare, f"max_examples not written as examples(n): {sorted(bare)}"
    # the check itself sees the forms a bare count takes
    assert _bare_example_counts("@settings(max_examples=25)\ndef f(): pass") == [1]
    assert _bare_example_counts("s = settings(deadline=None, max_examples=N * 2)") == [1]
    assert _bare_example_counts("@settings(max_examples=examples(25))\ndef f(): pass") == []


def test_examples_follow_the_active_profile():
    import os

    from hypothesis import settings
    from strategies import BASE_EXAMPLES, examples

    assert examples(7) == round(7 * settings.default.max_examples / BASE_EXAMPLES)
    try:
        for profile, factor in (("default", 1), ("long", 10)):
            settings.load_profile(profile)
            assert examples(7) == 7 * factor
    finally:
        settings.load_profile(os.environ.get("OPTSCHED_HYPOTHESIS_PROFILE", "default"))
