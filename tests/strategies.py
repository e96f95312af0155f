"""What the property tests share: example counts that scale with the Hypothesis
profile, and (see the papers' test modules) the strategies that build instances."""

from __future__ import annotations

from hypothesis import settings

#: ``max_examples`` of the default profile (tests/conftest.py); a test's own count ``n``
#: is scaled by the active profile's ``max_examples`` over this.
BASE_EXAMPLES = 50


def examples(n: int) -> int:
    """``n`` examples under the default profile, scaled with the active one: ``10 n`` under
    ``long`` (500 / 50), and in proportion under any profile a user registers and loads
    (never fewer than 1). Every per-test count is written this way
    (tests/test_structure.py checks it)."""
    return max(1, round(n * settings.default.max_examples / BASE_EXAMPLES))


def slotted_utility_instance(draw, caps, *, max_work):
    """One contended instance over the nodes ``caps`` (GPUs per type, a dict per node):
    1-5 jobs of 1-3 workers that fit the types they can use, 1-``max_work`` units of
    work, arrivals on or half a slot after a boundary, and a constant, linear or sigmoid
    utility, over 2-5 slots of 1 s. ``draw`` is a ``@st.composite``'s."""
    from hypothesis import strategies as st

    from optsched import Cluster, Instance, Job, Node
    from optsched import Utility as Ut

    present = sorted({k for c in caps for k in c})
    per_type = {k: sum(c.get(k, 0) for c in caps) for k in present}
    T = draw(st.integers(2, 5))
    jobs = []
    for i in range(draw(st.integers(1, 5))):
        usable = draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
        rates = {k: float(draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))) for k in usable}
        W = draw(st.integers(1, min(3, sum(per_type[k] for k in usable))))
        E = float(draw(st.integers(1, max_work)))
        arr = float(draw(st.integers(0, T - 1))) + draw(st.sampled_from([0.0, 0.5]))
        v = float(draw(st.integers(1, 20)))
        kind = draw(st.sampled_from(["constant", "linear", "sigmoid"]))
        u = (Ut("constant", value=v) if kind == "constant" else
             Ut("linear", value=v, slope=v / (4.0 * T)) if kind == "linear" else
             Ut("sigmoid", gamma1=v, gamma2=0.5, gamma3=float(draw(st.integers(1, T)))))
        jobs.append(Job(f"J{i}", arr, W, E, rates, utility=u))
    nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(caps))
    return Instance(Cluster(nodes), tuple(jobs), slot=1.0, horizon=float(T))
