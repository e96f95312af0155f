"""Methods and policies of your own (optsched.extend): registered from user code, referenced
as module:name, installed as plugins; the Policy protocol's members checked."""

from __future__ import annotations

import pytest

import optsched
from optsched import catalog, extend
from optsched.allox import demo_instance, machines_of, plan_result
from optsched.errors import InvalidOption, InvalidSchedule, UnknownName
from optsched.registry import get_model, policies, policy_spec, simulate, solve
from optsched.sim.policy import POLICY_MEMBERS, check_policy


@pytest.fixture(scope="module")
def trace():
    """20 jobs of Gavel's trace at 50x arrivals on gavel-108: jobs queue."""
    return catalog.read_trace("gavel-philly-2000", "gavel-108", jobs=20, load=50.0)


# --------------------------------------------------------------------------- methods
def test_registered_method_runs_like_a_shipped_one(own_code):
    import ownsched

    spec = get_model("allox")
    m = spec.method("ect")
    assert m.fn is ownsched.ect and m.kind == "heuristic" and m.origin == "ownsched"
    assert m.proved_bound == "none known"
    inst = demo_instance(n_jobs=10, seed=1)
    res = solve(inst, "allox", "ect")
    exact = solve(inst, "allox", "exact")
    assert res.method == "ect" and res.model == "allox" and res.metrics is not None
    # a feasible schedule of the same model cannot beat its optimum
    assert res.objective >= exact.objective * (1 - 1e-9)
    # its result is the one of module:name and of the function itself
    assert solve(inst, "allox", "ownsched:ect").objective == res.objective
    with pytest.raises(InvalidOption, match="not an option"):
        solve(inst, "allox", "ect", alpha=0.5)


def test_register_method_declarations_are_checked(own_code):
    import ownsched

    with pytest.raises(InvalidOption, match="proved"):
        optsched.register_method("allox", "mine", ownsched.ect)  # a heuristic says it
    with pytest.raises(InvalidOption, match="kind"):
        optsched.register_method("allox", "mine", ownsched.ect, kind="guess", proved="x: y")
    with pytest.raises(InvalidOption, match="ships it"):
        optsched.register_method("allox", "sjf", ownsched.ect, proved="none known: x")
    with pytest.raises(InvalidOption, match="replace=True"):
        optsched.register_method("allox", "ect", ownsched.ect, proved="none known: x")
    with pytest.raises(InvalidOption, match="default heuristic"):
        optsched.register_method("allox", "heuristic", ownsched.ect, proved="none known: x")
    with pytest.raises(InvalidOption, match="':'"):
        optsched.register_method("allox", "a:b", ownsched.ect, proved="none known: x")
    with pytest.raises(InvalidOption, match="first positional"):
        optsched.register_method("allox", "mine", lambda *, k=1: None,
                                 proved="none known: x")
    with pytest.raises(InvalidOption, match="takes no parameter 'rule'"):
        optsched.register_method("allox", "mine", ownsched.ect, fixed={"rule": 1},
                                 proved="none known: x")
    with pytest.raises(UnknownName):
        optsched.register_method("alox", "mine", ownsched.ect, proved="none known: x")
    again = optsched.register_method("allox", "ect", ownsched.undeclared, replace=True,
                                     proved="none known: the same rule")
    assert get_model("allox").method("ect") is again
    assert extend.unregister_method("allox", "ect") is again
    assert "ect" not in get_model("allox").method_names
    with pytest.raises(InvalidOption, match="ships"):
        extend.unregister_method("allox", "sjf")


def test_method_references(own_code):
    inst = demo_instance(n_jobs=6)
    with pytest.raises(UnknownName, match="no module 'nosuchmod'"):
        solve(inst, "allox", "nosuchmod:ect")
    with pytest.raises(UnknownName, match="has no 'ectt'; did you mean 'ect'"):
        solve(inst, "allox", "ownsched:ectt")
    with pytest.raises(InvalidOption, match="no register_method call declares"):
        solve(inst, "allox", "ownsched:undeclared")
    with pytest.raises(InvalidOption, match="not a method"):
        solve(inst, "allox", "ownsched:not_a_policy")
    with pytest.raises(InvalidOption, match="registered for model"):
        solve(get_model("tiresias").demo_instance(), "tiresias", "ownsched:ect")


def test_plan_result_checks_the_plan():
    inst = demo_instance(n_jobs=4)
    mach = machines_of(inst)
    plan = [[] for _ in range(mach.count)]
    plan[0] = [0, 1]
    plan[1] = [inst.jobs[2].id, 3]  # ids and indices both name jobs
    res = plan_result(inst, plan, method="by-hand")
    assert res.method == "by-hand" and res.model == "allox"
    assert res.objective == pytest.approx(
        sum(c - inst.job(j).arrival for j, c in res.schedule.completion.items()))
    with pytest.raises(InvalidOption, match="machines"):
        plan_result(inst, plan[:-1])
    with pytest.raises(InvalidOption, match="each job runs once"):
        plan_result(inst, [[0, 1, 2, 3], [0]] + [[]] * (mach.count - 2))
    with pytest.raises(InvalidOption, match="on no machine"):
        plan_result(inst, [[0, 1]] + [[]] * (mach.count - 1))
    with pytest.raises(InvalidOption, match="not a job"):
        plan_result(inst, [[0, 1, 2, 3, 9]] + [[]] * (mach.count - 1))


# --------------------------------------------------------------------------- policies
def test_registered_policy_runs_like_a_shipped_one(own_code, trace):
    import ownsched

    spec = optsched.register_policy("mine.srgt", ownsched.SRGT, aliases=("srgt",))
    assert policies()["mine.srgt"] is spec and policy_spec("srgt") is spec
    assert spec.options == {"name"} and spec.origin == "ownsched"
    res = simulate(trace, "mine.srgt")
    assert res.extra["registered_policy"] == "mine.srgt"
    assert res.metrics.n_completed == trace.n_jobs
    # the certified bounds hold for it as for every policy
    assert res.extra["gaps"]["mean_jct"] >= 1 - 1e-9
    assert simulate(trace, "ownsched:SRGT", bounds=False).objective == res.objective
    with pytest.raises(InvalidOption, match="ships it"):
        optsched.register_policy("tiresias.las", ownsched.SRGT)
    with pytest.raises(InvalidOption, match="replace=True"):
        optsched.register_policy("mine.srgt", ownsched.SRGT)
    with pytest.raises(InvalidOption, match="namespace.name"):
        optsched.register_policy("srgt2", ownsched.SRGT)
    assert extend.unregister_policy("srgt") is spec
    assert "mine.srgt" not in policies()
    with pytest.raises(UnknownName):
        policy_spec("srgt")


def test_policy_protocol_errors_at_registration(own_code):
    import ownsched

    with pytest.raises(InvalidOption, match="'sharng'.*did you mean 'sharing'"):
        optsched.register_policy("mine.a", ownsched.Misspelt)
    with pytest.raises(InvalidOption, match="'stat'.*did you mean 'stats'"):
        optsched.register_policy("mine.b", ownsched.StatTypo)
    with pytest.raises(InvalidOption, match="'sharing' must be True or False"):
        optsched.register_policy("mine.c", ownsched.BadFlag)
    with pytest.raises(InvalidOption, match="missing 'allocate'"):
        optsched.register_policy("mine.d", ownsched.NoAllocate)
    with pytest.raises(InvalidOption, match="takes 'instance'"):
        optsched.register_policy("mine.e", ownsched.ect)
    assert not {"mine.a", "mine.b", "mine.c", "mine.d", "mine.e"} & set(policies())
    # the same errors for a module:name reference, and in optsched.sim.simulate itself
    with pytest.raises(InvalidOption, match="did you mean 'sharing'"):
        policy_spec("ownsched:Misspelt")
    with pytest.raises(InvalidOption, match="did you mean 'stats'"):
        optsched.sim.simulate(demo_instance(n_jobs=3), ownsched.StatTypo())


def test_policy_references(own_code, trace):
    with pytest.raises(UnknownName, match="no module 'nosuchmod'"):
        policy_spec("nosuchmod:SRGT")
    with pytest.raises(UnknownName, match="has no 'SRTG'; did you mean 'SRGT'"):
        policy_spec("ownsched:SRGT".replace("SRGT", "SRTG"))
    with pytest.raises(InvalidOption, match="not a policy"):
        policy_spec("ownsched:not_a_policy")
    with pytest.raises(UnknownName, match="module:name"):
        policy_spec("ownsched:")
    obj = policy_spec("ownsched:srgt_object")  # one object, reused by every run
    assert obj.options == frozenset()
    res = simulate(trace, "ownsched:srgt_object", bounds=False)
    assert res.method == "srgt-object"
    # options of a referenced class are its keyword parameters
    assert simulate(trace, "ownsched:SRGT", name="x", bounds=False).method == "x"
    with pytest.raises(InvalidOption, match="not an option"):
        simulate(trace, "ownsched:SRGT", alpha=1)


def test_outside_policies_are_validated_with_the_rules_they_declare(own_code):
    strict = policy_spec("ownsched:SRGT").capabilities
    sharing = policy_spec("ownsched:Sharer").capabilities
    assert not strict.sharing and sharing.sharing
    assert optsched.registry.capabilities("ownsched:Sharer").sharing
    assert sharing.time == "continuous" and "ownsched:Sharer" in sharing.source
    # a schedule declaring sharing is refused under the strict policy's rules
    res = simulate(demo_instance(n_jobs=4), "ownsched:Sharer", bounds=False)
    with pytest.raises(InvalidSchedule, match="sharing"):
        optsched.validate_schedule(demo_instance(n_jobs=4), res.schedule, "ownsched:SRGT")
    optsched.validate_schedule(demo_instance(n_jobs=4), res.schedule, "ownsched:Sharer")


def test_every_shipped_policy_keeps_the_protocol():
    """The members the protocol declares are the ones the shipped policies use; none of
    theirs is mistaken for a typo."""
    used = set()
    for name, spec in policies().items():
        if spec.factory is None or spec.origin:
            continue
        p = spec.build()
        check_policy(p, name)
        check_policy(type(p), name)
        used |= {m for m in POLICY_MEMBERS if hasattr(p, m)}
    assert {"name", "needs_work", "event_driven", "allocate", "reset", "check",
            "stats", "periodic"} <= used


def test_check_policy_states_every_member():
    kinds = {m.kind for m in POLICY_MEMBERS.values()}
    assert kinds == {"required", "capability", "hook", "stats"}
    for name in ("sharing", "forking", "consolidation", "resource_sensitive",
                 "progress_rule", "periodic", "reset", "check", "horizon", "stats"):
        assert name in POLICY_MEMBERS and name in optsched.sim.policy.Policy.__doc__

    class P:
        name, needs_work, event_driven = "p", False, False
        consolidation = -1.0

        def allocate(self, state):
            return []

    with pytest.raises(InvalidOption, match="consolidation"):
        check_policy(P())
    P.consolidation = 0.0
    P.progress_rule = "fast"
    with pytest.raises(InvalidOption, match="progress_rule"):
        check_policy(P())
    P.progress_rule = "partial"
    P.stats = {"a": 1}
    with pytest.raises(InvalidOption, match="'stats' must be a method"):
        check_policy(P())
    del P.stats
    P.horizn = lambda self: None
    with pytest.raises(InvalidOption, match="did you mean 'horizon'"):
        check_policy(P())
    del P.horizn
    # an attribute that is not a member's shape is the policy's own business
    P.status, P.state, P.allocation = "ok", {}, lambda self: None
    check_policy(P())
    check_policy(P)


# --------------------------------------------------------------------------- plugins
def test_plugins_register_through_entry_points(plugin_dist, trace):
    found = {p.name: p for p in extend.load_plugins()}
    assert found["own"].loaded and found["own"].dist == "ownplugin"
    assert not found["broken"].loaded and "this plugin is broken" in found["broken"].error
    lpt = get_model("allox").method("lpt")
    assert lpt.origin == "plugin own (ownplugin)"
    spec = policy_spec("plug.fifo")
    assert spec.origin == "plugin own (ownplugin)"
    res = simulate(trace, "plug.fifo", bounds=False)
    assert res.metrics.n_completed == trace.n_jobs
    inst = demo_instance(n_jobs=8)
    assert solve(inst, "allox", "lpt").objective >= \
        solve(inst, "allox", "exact").objective * (1 - 1e-9)
    # loading again finds nothing new and registers nothing twice
    assert extend.load_plugins(reload=True) == tuple(found.values())


def test_plugin_loading_is_lazy_and_once(own_code, monkeypatch):
    calls = []
    monkeypatch.setattr(extend, "_plugins", None)
    monkeypatch.setattr("importlib.metadata.entry_points",
                        lambda group: calls.append(group) or [])
    optsched.models()
    optsched.policies()
    assert calls == ["optsched.plugins"]



# --------------------------------------------------------------------------- backends
def test_solver_backend_of_your_own(own_code):
    """A registered backend solves every solver-backed method; the solver layer keeps
    its statuses and its checks."""
    from optsched import solvers
    from optsched.solvers import highs

    class Delegate:  # highspy behind another name: the same optimum, by another path
        NAME, PACKAGE = "mine", "highspy"
        CAPABILITIES = solvers.Capabilities()
        STATUS = highs.STATUS

        def __init__(self):
            self.calls = 0

        def installed(self):
            return True

        def available(self):
            return True

        def solve(self, data, **kw):
            self.calls += 1
            return highs.solve(data, **kw).replace(backend=self.NAME)

    mine = Delegate()
    solvers.register_backend(mine)
    assert "mine" in solvers.backends() and solvers.available_backends()["mine"]
    inst = demo_instance(n_jobs=6)
    res = solve(inst, "allox", "exact-ilp", backend="mine")
    assert mine.calls == 1 and res.backend == "mine"
    assert res.objective == pytest.approx(solve(inst, "allox", "exact").objective, rel=1e-9)
    with pytest.raises(InvalidOption, match="already registered"):
        solvers.register_backend(mine)
    with pytest.raises(InvalidOption, match="new name"):
        mine.NAME = "highs"
        solvers.register_backend(mine, replace=True)
    with pytest.raises(InvalidOption, match="needs 'solve'"):
        solvers.register_backend(type("NoSolve", (), {"NAME": "x", "PACKAGE": "",
                                                      "CAPABILITIES": None, "STATUS": {},
                                                      "installed": None,
                                                      "available": None})())
    assert solvers.unregister_backend("mine") is mine
    with pytest.raises(UnknownName, match="known backends"):
        solve(inst, "allox", "exact-ilp", backend="mine")
