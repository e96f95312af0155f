"""AlloX (Le, Sun, Chowdhury, Liu; EuroSys'20): min-cost matching on interchangeable
resources.

* :mod:`optsched.allox.model` - AlloX's machines (one GPU each) and the processing-time matrix
  (:func:`machines_of`); :func:`plan_result` turns a plan (jobs per machine, in order) into
  a validated result: the two a heuristic of your own needs;
* :mod:`optsched.allox.exact` - :math:`R\\,||\\,\\sum_j (C_j - a_j)` as an assignment problem
  (Bruno-Coffman-Sethi / Horn), by the matching algorithm or as an ILP;
* :mod:`optsched.allox.bounds` - the assignment's LP relaxation (integral);
* :mod:`optsched.allox.heuristics` - SJF, SJF on the fastest type, JSQ and online AlloX;
* :mod:`optsched.allox.policy` - the same rules as simulator policies
  (``optsched simulate --policy allox.online``, ``allox.sjf``, ``allox.sjf_fastest``,
  ``allox.jsq``; ``online`` takes the options ``alpha``, ``max_jobs`` and ``replan``);
* :mod:`optsched.allox.workload` - the demo instance and the talk's 4-job example.

Objective: total job completion time :math:`\\sum_j (C_j - a_j)` in seconds (minimised);
mean JCT is that divided by the number of jobs.
"""

from __future__ import annotations

from optsched.allox.bounds import lp_bound
from optsched.allox.exact import exact, match, plan_result
from optsched.allox.heuristics import jsq, online, sjf, sjf_fastest
from optsched.allox.model import Machines, machines_of
from optsched.allox.policy import RULES, AlloXPolicy
from optsched.allox.workload import demo_instance, talk_instance, talk_schedule
from optsched.registry import Method, PaperSpec, PolicySpec, register

__all__ = ["exact", "match", "lp_bound", "sjf", "sjf_fastest", "jsq", "online",
           "machines_of", "Machines", "plan_result", "AlloXPolicy", "demo_instance",
           "talk_instance", "talk_schedule", "SPEC"]

SPEC = register(PaperSpec(
    name="allox",
    summary="AlloX (EuroSys'20): jobs to (machine, position) min-cost matching",
    sense="min",
    objective="total JCT (s)",
    methods=(
        Method("exact", exact, "exact", fixed={"algorithm": "matching"}),
        Method("exact-ilp", exact, "exact", fixed={"algorithm": "ilp"}, backend=True),
        Method("bound", lp_bound, "bound", backend=True, aliases=("exact-lp",)),
        Method("online", online,
               proved="1 if common arrival: with a common arrival, alpha=1 and no cap the "
                      "first matching is optimal and every re-solve keeps an optimal "
                      "continuation (= OPT); with staggered arrivals (R|r_j|sum C_j, "
                      "strongly NP-hard) no ratio is known"),
        Method("sjf", sjf,
               proved="none known: no constant ratio on unrelated machines (R||sum C_j): "
                      "the AlloX talk's 4-job example gives 215/85 = 2.53 x OPT; only on "
                      "one machine with a common arrival is it optimal (SPT)"),
        Method("sjf_fastest", sjf_fastest,
               proved="none known: no constant ratio: jobs that are all fastest on one "
                      "type queue there while the other types idle"),
        Method("jsq", jsq,
               proved="none known: no constant ratio: a job commits to a machine at "
                      "arrival, whatever arrives later (AlloX's repository example: 60 s "
                      "mean JCT against the optimum's 45 s)"),
    ),
    # alpha, max_jobs and replan change only the online rule's decisions, so only it
    # declares them
    policies=tuple(PolicySpec(rule, factory=AlloXPolicy, fixed={"rule": rule},
                              exclude=frozenset() if rule == "online"
                              else frozenset({"alpha", "max_jobs", "replan"}))
                   for rule in RULES),
    default_heuristic="online",
    demo_instance=demo_instance,
    reference="Le, Sun, Chowdhury, Liu, AlloX: Compute Allocation in Hybrid Clusters, "
              "EuroSys'20",
))
