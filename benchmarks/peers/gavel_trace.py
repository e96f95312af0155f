"""Gavel's own simulator, round by round: ``gavel_run.py`` plus a log of every round's
decision, for tracing where optsched's rounds first differ.

    cd $GAVEL_HOME/scheduler && $GAVEL_PYTHON gavel_trace.py JOBS.json POLICY OUT.json

Gavel's code is not modified: its ``Scheduler._schedule_jobs_on_workers`` and
``_compute_allocation`` are wrapped from outside to record, per round, the simulated
time and each scheduled job's GPU type (jobs numbered by position, as Gavel numbers
them), each allocation computed (time, {job: {type: share}}) and, at each of them,
every job's priority and deficit per type (also at the round starting at
``$GAVEL_TRACE_AT`` seconds, if set). ``OUT.json`` is ``gavel_run.py``'s output
with ``rounds`` ([time, {job: type}]), ``allocations`` ([time, X]) and ``reset_states``
([time, {type: {job: [priority, deficit]}}]) added.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
import gavel_run  # noqa: E402
import scheduler  # noqa: E402

ROUNDS, ALLOCATIONS, STATES = [], [], []
_schedule = scheduler.Scheduler._schedule_jobs_on_workers
_compute = scheduler.Scheduler._compute_allocation


def schedule(self):
    n_alloc = len(ALLOCATIONS)
    out = _schedule(self)
    at = os.environ.get("GAVEL_TRACE_AT")  # also dump the state of the round at this time
    if len(ALLOCATIONS) > n_alloc or (at and abs(float(at) - self.get_current_timestamp())
                                      < 1e-3):
        STATES.append([self.get_current_timestamp(),
                       {t: {str(j[0]): [p, self._deficits[t][j]]
                            for j, p in self._priorities[t].items()}
                        for t in self._priorities}])
    ROUNDS.append([self.get_current_timestamp(),
                   {str(j[0]): self._worker_id_to_worker_type_mapping[w[0]]
                    for j, w in out.items()}])
    return out


def compute(self, *a, **k):
    out = _compute(self, *a, **k)
    ALLOCATIONS.append([self.get_current_timestamp(),
                        {str(j[0]): x for j, x in out.items()}])
    return out


scheduler.Scheduler._schedule_jobs_on_workers = schedule
scheduler.Scheduler._compute_allocation = compute

if __name__ == "__main__":
    jobs_file, policy, out = sys.argv[1:4]
    gavel_run.main(jobs_file, policy, out)
    res = json.load(open(out))
    res.update(rounds=ROUNDS, allocations=ALLOCATIONS, reset_states=STATES)
    with open(out + ".tmp", "w") as f:
        json.dump(res, f)
    os.replace(out + ".tmp", out)
