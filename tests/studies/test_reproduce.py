"""optsched reproduce --quick: every row has a measured number or an explicit reason."""

from __future__ import annotations

import json

import pytest
from paths import BENCHMARKS

from optsched.allox.workload import talk_instance, talk_schedule
from optsched.cli import main
from optsched.errors import InvalidOption
from optsched.studies.reproduce import CLAIMS, quick_verdict, run_reproduction, verdict_strength


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduction")
    code = main(["reproduce", "--quick", "--out", str(out)])
    return out, code


@pytest.mark.slow
def test_quick_run_writes_every_row(quick):
    out, code = quick
    assert code == 0
    data = json.loads((out / "REPRODUCTION.json").read_text())
    rows = {r["key"]: r for r in data["rows"]}
    assert set(rows) == {c.key for c in CLAIMS}
    assert data["meta"]["mode"] == "quick"
    claims = {c.key: c for c in CLAIMS}
    for key, r in rows.items():
        assert r["verdict"] != "error", (key, r["notes"])
        # labelled quick, and never claiming more than the committed full run
        assert r["verdict"].startswith("quick: "), key
        assert verdict_strength(r["verdict"]) <= verdict_strength(claims[key].full_verdict)
        if r["measured"] is None:
            assert r["verdict"] == "quick: not yet available" and len(r["notes"]) > 40, key
        else:
            assert r["measured"] > 0 and r["measured_text"] and r["instance"], key
        for p in r["plots"]:
            assert (out / p).stat().st_size > 1000, p
    md = (out / "REPRODUCTION.md").read_text()
    for c in CLAIMS:
        assert c.claim in md and c.paper in md


@pytest.mark.slow
def test_rows_that_must_reproduce(quick):
    out, _ = quick
    rows = {r["key"]: r for r in json.loads((out / "REPRODUCTION.json").read_text())["rows"]}
    allox = rows["allox_talk"]
    assert allox["measured"] == pytest.approx(215 / 85)           # 2.53x mean JCT
    assert "4.00x vs the talk's optimum" in allox["measured_text"]
    assert allox["verdict"] == "quick: reproduced"
    assert rows["salus_inference"]["measured"] == 39              # all 13 x 3 jobs fit
    for key in ("synergy_tune", "tiresias_vs_fifo", "gavel_hetero"):
        assert rows[key]["measured"] > 1.0, key                   # right direction


def test_talk_schedule_is_an_optimum_with_smaller_makespan():
    from optsched import compute_metrics, solve, validate_schedule

    inst = talk_instance()
    validate_schedule(inst, talk_schedule())
    talk = compute_metrics(inst, talk_schedule())
    opt = solve(inst, model="allox")
    assert talk.mean_jct == pytest.approx(opt.metrics.mean_jct)
    assert talk.makespan == 25.0 <= opt.metrics.makespan


def test_unknown_row(tmp_path):
    with pytest.raises(InvalidOption):
        run_reproduction(tmp_path, quick=True, only=["nope"], log=None)
    assert main(["reproduce", "--quick", "--only", "nope", "--out", str(tmp_path)]) == 2


def test_only_merges_into_an_earlier_report_of_the_same_mode(tmp_path):
    run_reproduction(tmp_path, quick=True, only=["allox_talk"], log=None)
    run_reproduction(tmp_path, quick=True, only=["salus_inference"], log=None)
    keys = [r["key"] for r in json.loads((tmp_path / "REPRODUCTION.json").read_text())["rows"]]
    assert keys == ["allox_talk", "salus_inference"]              # CLAIMS order, both kept
    md = (tmp_path / "REPRODUCTION.md").read_text()
    assert "2.53x mean JCT" in md and "39 of 39 jobs" in md


def test_pinned_full_verdicts_are_the_committed_full_run():
    """Claim.full_verdict caps the quick verdicts: it must be the committed run's."""

    path = BENCHMARKS / "results/REPRODUCTION.json"
    data = json.loads(path.read_text())
    assert data["meta"]["mode"] == "full"
    committed = {r["key"]: r["verdict"] for r in data["rows"]}
    assert {c.key: c.full_verdict for c in CLAIMS} == committed


def test_quick_verdict_is_capped_by_the_full_run():
    hadar = next(c for c in CLAIMS if c.key == "hadar_vs_gavel")
    assert hadar.full_verdict == "not reproduced"
    # the quick 20-job instance once gave 1.18x, "reproduced": never above the full run
    assert quick_verdict(hadar, "reproduced") == "quick: not reproduced"
    allox = next(c for c in CLAIMS if c.key == "allox_talk")
    assert quick_verdict(allox, "same direction, smaller factor") == \
        "quick: same direction, smaller factor"


def test_gavel_curve_config_is_the_shipped_one():
    """benchmarks/gavel_las_rate.toml, docs/sweeps.md and the claim run the same sweep."""
    from optsched.studies.reproduce.gavel_hetero import CURVE, PAPER_RATE
    from optsched.studies.sweep import SweepConfig, load_config

    shipped = load_config(BENCHMARKS / "gavel_las_rate.toml")
    assert shipped == SweepConfig.from_dict(CURVE)
    assert PAPER_RATE in shipped.simulate["rates"]
    assert shipped.simulate["window"] == [4000, 5000]
    doc = (BENCHMARKS.parent / "docs/sweeps.md").read_text()
    assert 'rates = [0.5, 1.5, 3.0, 4.0, 5.0, 5.6, 6.5, 7.5]' in doc


def test_gavel_curve_table_never_divides_a_survivor_mean():
    from optsched.studies.reproduce.gavel_hetero import curve_table

    def row(method, rate, status, jct):
        return {"method": method, "rate": rate, "status": status, "mean_jct": jct}

    table = curve_table([
        row("gavel.max_min_fairness", 5.6, "feasible", 36000.0),
        row("gavel.max_min_fairness_agnostic", 5.6, "feasible", 126000.0),
        row("gavel.max_min_fairness", 7.5, "feasible", 72000.0),
        row("gavel.max_min_fairness_agnostic", 7.5, "window_unfinished", None),
        row("gavel.fifo", 7.5, "time_limit", 1.0),     # a JCT over survivors: not used
        row("tiresias.las", 7.5, "feasible", 1.0),      # not a policy of the curve
    ])
    assert [t["rate"] for t in table] == [5.6, 7.5]
    assert table[0]["LAS ratio"] == pytest.approx(3.5)
    assert (table[0]["LAS aware"], table[0]["LAS agnostic"]) == (10.0, 35.0)
    assert table[1]["LAS agnostic"] is None and table[1]["LAS ratio"] is None
    assert table[1]["LAS agnostic status"] == "window_unfinished"
    assert table[1]["FIFO aware"] is None and table[1]["FIFO ratio"] is None


@pytest.mark.slow
def test_quick_run_carries_bounds_and_gaps(quick):
    """The claims comparing simulated policies give each run's certified bound and gap
    (>= 1); the others say why they have none."""
    out, _ = quick
    rows = {r["key"]: r for r in json.loads((out / "REPRODUCTION.json").read_text())["rows"]}
    expect = {"hadar_vs_gavel": {"makespan", "utility"},
              "hadar_jct_vs_yarn": {"mean_jct"}, "hadar_jct_vs_gavel": {"mean_jct"},
              "hadare_vs_hadar": {"makespan", "utility"}, "tiresias_vs_fifo": {"mean_jct"}}
    for key, r in rows.items():
        if key in expect:
            assert {b["objective"] for b in r["bounds"]} == expect[key], key
            for b in r["bounds"]:
                assert b["gap"] is not None and b["gap"] >= 1 - 1e-9, (key, b)
                assert b["bound_is"] == ("upper" if b["objective"] == "utility" else "lower")
        else:
            assert not r["bounds"] and len(r["bounds_note"]) > 40, key
    md = (out / "REPRODUCTION.md").read_text()
    assert md.count("Certified bounds (every schedule") == len(expect)
    assert "Certified bounds: none (" in md


def test_simulated_claim_rows_carry_their_gaps(tmp_path):
    run_reproduction(tmp_path, quick=True, only=["tiresias_vs_fifo"], log=None)
    data = json.loads((tmp_path / "REPRODUCTION.json").read_text())
    (row,) = [r for r in data["rows"] if r["key"] == "tiresias_vs_fifo"]
    runs = {b["run"] for b in row["bounds"]}
    assert runs == {"fifo_yarn", "tiresias_las", "tiresias_gittins"}
    bound = {b["bound"] for b in row["bounds"]}
    assert len(bound) == 1                      # one instance, one setting, one bound
    for b in row["bounds"]:
        assert b["value"] / b["bound"] == pytest.approx(b["gap"]) and b["gap"] >= 1
    md = (tmp_path / "REPRODUCTION.md").read_text()
    assert "| tiresias-60 on 2x4 P100 | tiresias_las | mean JCT (h) |" in md


def test_run_gaps_rejects_an_objective_it_does_not_bound():
    from optsched.errors import InvalidOption
    from optsched.studies.reproduce.claim import run_gaps

    with pytest.raises(InvalidOption, match="objectives"):
        run_gaps(None, {}, ("cru",))


HADAR_IPDPS = ("hadar_jct_vs_yarn", "hadar_jct_vs_gavel", "hadar_queueing_delay", "hadar_ftf")


@pytest.mark.slow
def test_hadar_abstract_rows_are_the_ratios_of_their_runs(quick):
    """The four rows of Hadar's IPDPS abstract: each factor is the baseline's figure over
    Hadar's, the JCT rows agree with the mean JCTs their gap tables record, and every
    row names the alternative settings that locate its cause."""
    out, _ = quick
    rows = {r["key"]: r for r in json.loads((out / "REPRODUCTION.json").read_text())["rows"]}
    for key in HADAR_IPDPS:
        r = rows[key]
        assert r["measured"] > 0 and "gavel-philly-2000" in r["instance"], key
        assert "half the arrival rate" in r["notes"] and "constant utilities" in r["notes"]
    for key, base in (("hadar_jct_vs_yarn", "YARN-CS"), ("hadar_jct_vs_gavel", "Gavel")):
        jct = {b["run"]: b["value"] for b in rows[key]["bounds"]}
        assert set(jct) == {"Hadar", "Gavel", "YARN-CS"}
        assert rows[key]["measured"] == pytest.approx(jct[base] / jct["Hadar"])
    # the Gavel row's ceiling is the certified bound: no schedule beats Gavel by more
    (bound,) = {b["bound"] for b in rows["hadar_jct_vs_gavel"]["bounds"]}
    gavel = next(b["value"] for b in rows["hadar_jct_vs_gavel"]["bounds"]
                 if b["run"] == "Gavel")
    assert f"more than {gavel / bound:.2f}x better than Gavel" in rows[
        "hadar_jct_vs_gavel"]["notes"]
    assert "waiting time" in rows["hadar_queueing_delay"]["notes"]


def test_hadar_abstract_verdicts_use_the_stated_tolerances():
    """13 % shorter and 1.5 % better are factors 1/0.87 and 1/0.985, reproduced within
    5 % and 1 % of them; the JCT factors within the default 10 %."""
    from optsched.studies.reproduce import _verdict
    from optsched.studies.reproduce.hadar_ftf import CLAIM as FTF
    from optsched.studies.reproduce.hadar_jct_vs_gavel import CLAIM as JCT
    from optsched.studies.reproduce.hadar_queueing_delay import CLAIM as QD

    assert QD.paper_factor == pytest.approx(1 / 0.87)
    assert _verdict(QD, 1 / 0.87) == "reproduced"
    assert _verdict(QD, 1.10) == "reproduced"                       # 9 % shorter
    assert _verdict(QD, 1.07) == "same direction, smaller factor"   # 6.5 % shorter
    assert _verdict(QD, 0.5) == "not reproduced"
    assert FTF.paper_factor == pytest.approx(1 / 0.985)
    assert _verdict(FTF, 1.01) == "reproduced"                      # 1 % better
    assert _verdict(FTF, 1.003) == "not reproduced"                 # 0.3 % better
    assert _verdict(FTF, 1.04) == "larger factor"                   # 3.8 % better
    assert _verdict(JCT, 2.3) == "reproduced" and _verdict(JCT, 2.2) != "reproduced"


def test_hadar_abstract_settings_are_gavel_trace_and_cluster():
    """The headline setting is the whole shipped trace on gavel-108 at its recorded
    arrivals; the half-rate alternative is the same jobs arriving twice as slowly."""
    from dataclasses import replace

    from optsched.registry import policy_spec
    from optsched.studies.reproduce import _hadar_ipdps as h

    main, *alts = h.settings(quick=False)
    assert (main.jobs, main.load, main.utilities) == (None, 1.0, "sigmoid")
    by = {s.key: s for s in alts}
    assert by["half_rate"].jobs == by["prefix"].jobs and by["half_rate"].load == 0.5
    assert by["constant"].utilities == "constant"
    for name in h.POLICIES.values():
        policy_spec(name)                                           # registered
    small = h.instance(replace(by["half_rate"], jobs=6))
    ref = h.instance(replace(by["prefix"], jobs=6))
    assert small.cluster.gpus_per_type == {"k80": 36, "p100": 36, "v100": 36}
    assert [j.arrival for j in small.jobs] == pytest.approx([2 * j.arrival for j in ref.jobs])
    assert [j.work for j in small.jobs] == [j.work for j in ref.jobs]
    assert all(j.utility is not None for j in small.jobs)
