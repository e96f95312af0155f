"""A researcher's own AlloX heuristic and simulator policies, outside optsched.

Importing this module registers ``ect`` on the AlloX model (as a user's package would);
the policies are referenced as ``ownsched:SRGT`` or registered by the tests. The other
classes break the Policy protocol on purpose.
"""

import numpy as np

import optsched
from optsched.allox import machines_of, plan_result


@optsched.register_method("allox", "ect", kind="heuristic",
                          proved="none known: a list scheduler on unrelated machines "
                                 "(R||sum C_j) has no constant ratio")
def ect(instance):
    """Earliest completion time: jobs by arrival, then shortest best time, each on the
    machine that finishes it first."""
    mach = machines_of(instance)
    free = np.zeros(mach.count)
    plan = [[] for _ in range(mach.count)]
    order = sorted(range(instance.n_jobs),
                   key=lambda j: (instance.jobs[j].arrival, mach.p[:, j].min()))
    for j in order:
        end = np.maximum(free, instance.jobs[j].arrival) + mach.p[:, j]
        m = int(np.argmin(end))
        plan[m].append(j)
        free[m] = end[m]
    return plan_result(instance, plan)


def undeclared(instance):
    """A heuristic no register_method call declares."""
    return ect(instance)


class SRGT:
    """Shortest remaining GPU time first: every round, jobs by remaining work x workers
    over their best rate, each gang on the fastest type with enough free GPUs."""

    needs_work = True
    event_driven = False

    def __init__(self, name: str = "srgt"):
        self.name = name

    def allocate(self, state):
        free = state.capacity.copy()
        best = state.throughput_matrix.max(axis=1)
        key = state.remaining * state.workers / np.where(best > 0, best, np.inf)
        out = []
        for m in np.argsort(key, kind="stable"):
            w = int(state.workers[m])
            for k in np.argsort(-state.throughput_matrix[m], kind="stable"):
                if state.throughput_matrix[m, k] <= 0 or free[:, k].sum() < w:
                    continue
                need = w  # a gang may span nodes of one type
                for h in np.flatnonzero(free[:, k]):
                    g = int(min(need, free[h, k]))
                    free[h, k] -= g
                    need -= g
                    out.append((state.ids[m], state.cluster.nodes[h].name,
                                state.gpu_types[k], g))
                    if need == 0:
                        break
                break
        return out


class Sharer(SRGT):
    """SRGT declaring that it shares GPUs (it never does: the rules allow it)."""

    sharing = True


class Misspelt(SRGT):
    """Means to share GPUs, but misspells the flag."""

    sharng = True


class StatTypo(SRGT):
    """Means to report figures, but names the hook ``stat``."""

    def stat(self):
        return {"calls": 1}


class BadFlag(SRGT):
    """A capability with a value it cannot take."""

    sharing = "yes"


class NoAllocate:
    """Not a policy: nothing to decide with."""

    name = "none"
    needs_work = False
    event_driven = False


srgt_object = SRGT("srgt-object")
not_a_policy = 42
