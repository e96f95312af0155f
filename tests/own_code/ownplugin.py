"""An installed package's optsched plugin (entry point group optsched.plugins)."""

import numpy as np

import optsched
from optsched.allox import machines_of, plan_result


def lpt(instance):
    """Longest processing time first, each job on the machine where it ends first."""
    mach = machines_of(instance)
    free = np.zeros(mach.count)
    plan = [[] for _ in range(mach.count)]
    for j in sorted(range(instance.n_jobs), key=lambda j: -mach.p[:, j].min()):
        m = int(np.argmin(np.maximum(free, instance.jobs[j].arrival) + mach.p[:, j]))
        plan[m].append(j)
        free[m] = max(free[m], instance.jobs[j].arrival) + mach.p[m, j]
    return plan_result(instance, plan)


optsched.register_method("allox", "lpt", lpt,
                         proved="none known: a list scheduler on unrelated machines")


@optsched.register_policy("plug.fifo")
class PluginFifo:
    """First come, first served: jobs in arrival order, each gang on the first type
    with enough free GPUs (spanning nodes), the rest wait."""

    name = "plug-fifo"
    needs_work = False
    event_driven = True
    periodic = False

    def allocate(self, state):
        free = state.capacity.copy()
        out = []
        for m in np.argsort(state.arrivals, kind="stable"):
            w = int(state.workers[m])
            k = next((k for k in range(free.shape[1]) if state.throughput_matrix[m, k] > 0
                      and free[:, k].sum() >= w), None)
            if k is None:
                continue
            need = w
            for h in np.flatnonzero(free[:, k]):
                g = int(min(need, free[h, k]))
                free[h, k] -= g
                need -= g
                out.append((state.ids[m], state.cluster.nodes[h].name,
                            state.gpu_types[k], g))
                if need == 0:
                    break
        return out
