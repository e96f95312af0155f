"""Salus: lane safety, exact MILP vs brute force, heuristics vs exact, the FFD bound."""

from __future__ import annotations

import pytest

from optsched import (
    Allocation,
    Cluster,
    Instance,
    InvalidInstance,
    Job,
    Node,
    Schedule,
    validate_schedule,
)
from optsched.instance import instance_json_schema


# ------------------------------------------------------------------ core: compute_share
def test_compute_share_field_round_trip_and_checks():
    j = Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.25)
    d = j.to_dict()
    assert d["compute_share"] == 0.25
    assert Job.from_dict(d) == j
    assert "compute_share" not in Job("b", 0.0, 1, 10.0, {"v100": 1.0}).to_dict()
    assert "compute_share" in instance_json_schema()["$defs"]["job"]["properties"]
    for bad in (0.0, 1.5, -1.0, "x"):
        with pytest.raises(InvalidInstance, match="compute_share"):
            Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=bad)


def test_validator_progress_is_capped_by_compute_share():
    """A job with u = 0.5 runs at full speed on half a GPU, and no faster on a whole one."""
    cl = Cluster((Node("n", {"v100": 1}),))
    inst = Instance(cl, (Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.5),
                         Job("b", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.5)))
    half = Schedule((Allocation("a", 0, 10, "n", "v100", 1, share=0.5),
                     Allocation("b", 0, 10, "n", "v100", 1, share=0.5)),
                    {"a": 10, "b": 10}, sharing=True)
    assert validate_schedule(inst, half).done == pytest.approx({"a": 10.0, "b": 10.0})
    quarter = Schedule((Allocation("a", 0, 10, "n", "v100", 1, share=0.25),), {"a": 10},
                       sharing=True)
    with pytest.raises(Exception, match="iterations"):
        validate_schedule(inst, quarter)   # 0.25 / 0.5 of the speed: 5 of 10 iterations
    whole = Schedule((Allocation("a", 0, 9, "n", "v100", 1),), {"a": 9})
    with pytest.raises(Exception, match="iterations"):
        validate_schedule(inst, whole)     # a whole GPU is no faster than u of it
    plain = Instance(cl, (Job("c", 0.0, 1, 10.0, {"v100": 1.0}),))
    s = Schedule((Allocation("c", 0, 20, "n", "v100", 1, share=0.5),), {"c": 20},
                 sharing=True)
    assert validate_schedule(plain, s).done["c"] == pytest.approx(10.0)  # unchanged: s * rate
