"""The benchmark library: named instance sets with best-known solutions, bounds and
open/closed status (``docs/bench.md``).

Every model has sets of fixed instances drawn from the shipped real data, from small
(optimum known) to the papers' scale (open, with a certified gap); the simulation sets
are trace x cluster x load cells. Each instance carries a record: per objective, the
best-known value with the method and optsched version that found it and its *proof*
(the schedule or allocation that reaches it, which the validator checks and which must
reproduce the value), the best bound and its source, and the status ``closed`` (gap
within the set's tolerance) or ``open``.

Modules: :mod:`~optsched.bench.proof` (a result's proof, and the objective a proof
reproduces once validated), :mod:`~optsched.bench.sets` (how each set's instances are
drawn), :mod:`~optsched.bench.library` (the shipped files: sets, instances, records),
:mod:`~optsched.bench.run` (a method or policy over a set, resumable) and
:mod:`~optsched.bench.update` (recording improvements with their proofs).
"""

from optsched.bench.library import SHIPPED, Library, Record, check_record
from optsched.bench.run import run_bench, summarize
from optsched.bench.sets import SETS, SetSpec, draw, get_set
from optsched.bench.update import update_library

__all__ = ["SETS", "SHIPPED", "Library", "Record", "SetSpec", "check_record", "draw",
           "get_set", "run_bench", "summarize", "update_library"]
