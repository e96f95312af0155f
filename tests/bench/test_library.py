"""The shipped benchmark library: every record's proof validates and reproduces its
value, no bound crosses its best-known value, the files are what the sets draw, and a
tampered record is refused naming its instance."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from optsched.bench.library import SHIPPED, Library, check_record
from optsched.bench.sets import MODELS, SETS, draw
from optsched.errors import InvalidRecord

LIB = Library()
RECORDS = LIB.records()
SMALL = [i.name for s in SETS.values() if s.size_class in ("small", "simulation")
         for i in s.instances if s.model != "sim" or i.jobs <= 60]


def test_every_set_has_records_with_values_and_bounds():
    """All seven models and the simulation sets are shipped, and every instance has a
    best-known value with a proof and a bound."""
    assert {s.model for s in SETS.values()} == {*MODELS, "sim"}
    for s in SETS.values():
        assert len(s.instances) >= 2
        for i in s.instances:
            rec = RECORDS[i.name]
            assert rec.set == s.name
            for key in s.objectives:
                e = rec.entries[key]
                assert e.best is not None and e.best.proof, (i.name, key)
                assert e.bound is not None, (i.name, key)
                assert (LIB.root / e.best.proof).is_file()


def test_every_bound_is_on_its_side_of_the_best_known_value():
    for name, rec in RECORDS.items():
        for key, e in rec.entries.items():
            v, b = e.best.value, e.bound.value
            if e.sense == "min":
                assert b <= v * (1 + 1e-9) + 1e-9, (name, key, b, v)
            else:
                assert b >= v * (1 - 1e-9) - 1e-9, (name, key, b, v)
            assert e.gap >= -1e-9
            assert e.status(rec.spec.tolerance) == ("closed" if e.gap <= rec.spec.tolerance
                                                    else "open")


@pytest.mark.parametrize("name", SMALL)
def test_small_records_validate_and_reproduce(name):
    check_record(LIB, RECORDS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in RECORDS if n not in SMALL])
def test_every_record_validates_and_reproduces(name):
    check_record(LIB, RECORDS[name])


# The shipped files were written on an AVX-512 machine, where numpy's vectorised pow
# and LAPACK's least squares rounded some last bits otherwise than the C library's pow
# and the closed-form fit the draws use now (at most 1.3e-14 relative). So the draw is
# compared field by field: every name, count and structure exactly, every float to
# DRAW_REL; the shipped file, fixed by its sha256 in the record, stays the instance.
DRAW_REL = 1e-12


def differences(got, want, path="") -> list[str]:
    """Where two JSON trees differ beyond DRAW_REL on floats (exact on all else)."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return [f"{path}: keys {sorted(got) if isinstance(got, dict) else got!r}"
                    f" != {sorted(want)}"]
        return [d for k in want for d in differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} != {want!r}"]
        return [d for i, (g, w) in enumerate(zip(got, want))
                for d in differences(g, w, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) \
            and not isinstance(got, bool):
        ok = got == want or abs(got - want) <= DRAW_REL * max(abs(got), abs(want))
        return [] if ok else [f"{path}: {got!r} != {want!r}"]
    return [] if type(got) is type(want) and got == want else [f"{path}: {got!r} != {want!r}"]


def assert_drawn(spec):
    shipped = json.loads(LIB.instance(spec.name).to_json(indent=None))  # sha256 checked
    drawn = json.loads(draw(spec).to_json(indent=None))
    diff = differences(drawn, shipped)
    assert not diff, (spec.name, diff[:5])


def test_the_draw_comparison_can_fail():
    """The comparison refuses a changed count, a changed name and a float off by 1e-9,
    and accepts a float off in its last bit."""
    base = {"jobs": [{"id": "a", "work": 332.3, "workers": 2}]}
    last_bit = {"jobs": [{"id": "a", "work": 332.30000000000103, "workers": 2}]}
    assert differences(last_bit, base) == []
    for bad in ({"jobs": [{"id": "a", "work": 332.3 * (1 + 1e-9), "workers": 2}]},
                {"jobs": [{"id": "b", "work": 332.3, "workers": 2}]},
                {"jobs": [{"id": "a", "work": 332.3, "workers": 3}]},
                {"jobs": []}, {"jobs": [{"id": "a", "work": 332.3}]}):
        assert differences(bad, base), bad


@pytest.mark.parametrize("name", SMALL)
def test_shipped_small_instances_are_what_their_sets_draw(name):
    assert_drawn(next(i for s in SETS.values() for i in s.instances if i.name == name))


@pytest.mark.slow
def test_every_shipped_instance_is_what_its_set_draws():
    for s in SETS.values():
        for spec in s.instances:
            assert_drawn(spec)


def test_library_stays_small():
    total = sum(p.stat().st_size for p in SHIPPED.rglob("*") if p.is_file())
    assert total < 20e6, total


# --------------------------------------------------------------------------- tampering
@pytest.fixture
def copy(tmp_path):
    root = tmp_path / "lib"
    shutil.copytree(SHIPPED, root)
    return Library(root)


def _edit(lib: Library, name: str, fn) -> None:
    raw = json.loads((lib.root / "records.json").read_text())
    fn(raw[name]["objectives"][next(iter(raw[name]["objectives"]))])
    (lib.root / "records.json").write_text(json.dumps(raw))


NAME = "tiresias/g108-j15-s0"


def test_a_value_without_a_proof_is_refused(copy):
    _edit(copy, NAME, lambda o: o["best"].update(proof=""))
    with pytest.raises(InvalidRecord, match=NAME):
        check_record(copy, copy.records()[NAME])


def test_a_value_its_proof_does_not_reproduce_is_refused(copy):
    def better(o):
        o["best"]["value"] *= 0.99
        o.pop("status")
    _edit(copy, NAME, better)
    with pytest.raises(InvalidRecord, match=f"{NAME}.*reproduces"):
        check_record(copy, copy.records()[NAME])


def test_a_proof_that_fails_the_validator_is_refused(copy):
    rec = copy.records()[NAME]
    best = rec.entries["objective"].best
    path = copy.root / best.proof
    proof = json.loads(gzip.decompress(path.read_bytes()))
    allocs = proof["schedule"]["allocations"]
    for a in allocs:  # every job on one node at once: capacity overbooked
        a["node"] = allocs[0]["node"]
    path.write_bytes(gzip.compress(json.dumps(proof).encode()))
    with pytest.raises(InvalidRecord, match=NAME):
        check_record(copy, rec)


def test_a_changed_instance_file_is_refused(copy):
    path = copy.instance_file(NAME)
    inst = json.loads(gzip.decompress(path.read_bytes()))
    inst["jobs"][0]["work"] *= 0.5
    path.write_bytes(gzip.compress(json.dumps(inst).encode()))
    with pytest.raises(InvalidRecord, match="sha256"):
        copy.instance(NAME)


def test_a_bound_crossing_its_best_known_value_is_refused(copy):
    def cross(o):
        o["bound"]["value"] = o["best"]["value"] * 1.5
        o.pop("status")
    _edit(copy, NAME, cross)
    with pytest.raises(InvalidRecord, match=f"{NAME}.*bound"):
        check_record(copy, copy.records()[NAME])


def test_a_stated_status_the_numbers_do_not_give_is_refused(copy):
    def flip(o):
        o["status"] = "closed" if o["status"] == "open" else "open"
    _edit(copy, NAME, flip)
    with pytest.raises(InvalidRecord, match=f"{NAME}.*status"):
        copy.records()


def test_the_docs_table_is_the_librarys():
    """docs/bench.md shows the table `optsched bench list --markdown` prints: no stale
    figure."""
    from paths import DOCS

    from optsched.cli.bench import markdown_table

    text = (DOCS / "bench.md").read_text()
    start = text.index("<!-- bench-table: optsched bench list --markdown -->")
    end = text.index("<!-- end bench-table -->")
    shown = text[start:end].split("\n", 1)[1].strip()
    assert shown == markdown_table(list(SETS.values()), RECORDS)


def test_a_proof_planned_on_another_slot_is_refused(copy):
    name = next(n for n, r in RECORDS.items() if n.startswith("hadar/")
                and r.entries["objective"].best.method == "exact")
    rec = copy.records()[name]
    best = rec.entries["objective"].best
    path = copy.root / best.proof
    proof = json.loads(gzip.decompress(path.read_bytes()))
    assert proof["slot"] == copy.instance(name).slot  # shipped proofs plan on its slot
    proof["slot"] = 360.0
    path.write_bytes(gzip.compress(json.dumps(proof).encode()))
    with pytest.raises(InvalidRecord, match=f"{name}.*planned on 360-s slots"):
        check_record(copy, rec)


def test_tiresias_records_are_bounded_by_the_simulator_only():
    """Tiresias' exact program does not hold its continuous-time heuristics' schedules,
    which the model admits: its dual bound and LP relaxation do not bound them."""
    from optsched.bench.library import PROGRAM_BOUNDS

    assert "tiresias" not in PROGRAM_BOUNDS
    for name, rec in RECORDS.items():
        if name.startswith("tiresias/"):
            assert rec.entries["objective"].bound.source.startswith("simulator bound"), name


def test_a_new_proof_never_overwrites_the_one_a_record_names(copy):
    """Proofs are named by their content: an update stopped between writing its proofs
    and its records leaves every record's file as it was."""
    rec = copy.records()[NAME]
    named = copy.root / rec.entries["objective"].best.proof
    before = named.read_bytes()
    other = json.loads(gzip.decompress(before))
    other["schedule"]["allocations"] = other["schedule"]["allocations"][:1]
    file = copy.write_proof(NAME, "objective", other)
    assert copy.root / file != named and named.read_bytes() == before
    check_record(copy, copy.records()[NAME])
