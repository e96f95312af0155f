"""One name per concept across the papers: the principal bound is ``bound`` in every
model, and the names of earlier releases still resolve to it."""

from __future__ import annotations

import pytest

from optsched.registry import get_model, models, solve

OLD = {"allox": "exact-lp", "hadar": "exact-lp", "hadare": "exact-lp",
       "salus": "lower-bound", "synergy": "exact-lp", "tiresias": "exact-lp"}


def test_every_model_calls_its_bound_bound():
    for name, spec in models().items():
        assert spec.method("bound").kind == "bound", name
        assert "bound" in spec.bounds
        assert all(m.name == "bound" or m.name.startswith("bound-")
                   for m in spec.bounds.values()), (name, list(spec.bounds))


@pytest.mark.parametrize("model", ["allox", "salus", "tiresias"])
def test_old_bound_names_are_aliases(model):
    spec = get_model(model)
    assert spec.method(OLD[model]) is spec.method("bound")
    inst = spec.demo_instance(n_jobs=4, seed=0)
    res = solve(inst, model, OLD[model])
    assert res.method == "bound" and res.bound is not None
    assert res.bound == solve(inst, model, "bound").bound


def test_synergy_step_one_bound():
    spec = get_model("synergy")
    assert spec.method("step1") is spec.method("bound-step1")
    assert spec.method("exact-lp") is spec.method("bound")
