"""optsched: formal models for scheduling deep-learning training jobs on GPU clusters.

Each paper is exposed the same way: an exact LP/MILP solved through one solver layer
(HiGHS directly, Pyomo or CVXPY), its bounds, the polynomial-time heuristics from the
paper, and its online policies in one simulator. :func:`solve` runs a method,
:func:`simulate` a policy; both resolve names through :mod:`optsched.registry`.
"""

from optsched import (  # each paper package registers itself
    allox,
    gavel,
    hadar,
    hadare,
    salus,
    synergy,
    tiresias,
)
from optsched.core.instance import (
    Cluster,
    Colocation,
    GpuMemory,
    Instance,
    Job,
    Node,
    Sensitivity,
    Utility,
    load_instance,
)
from optsched.core.metrics import Metrics, compute_metrics
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Placement, Schedule, load_schedule
from optsched.core.validate import validate_schedule
from optsched.errors import (
    InvalidInput,
    InvalidInstance,
    InvalidOption,
    InvalidSchedule,
    ModelNotApplicable,
    ModelTooLarge,
    OptschedError,
    SolverFailed,
    UnknownName,
)
from optsched.extend import register_method, register_policy
from optsched.registry import (
    ModelSpec,
    PaperSpec,
    get_model,
    get_policy,
    models,
    papers,
    policies,
    simulate,
    solve,
)
from optsched.version import __version__ as __version__

__all__ = [
    "allox", "gavel", "hadar", "hadare", "salus", "synergy", "tiresias", "Allocation",
    "Cluster", "Colocation", "GpuMemory", "Instance", "InvalidInput", "InvalidInstance",
    "InvalidOption", "InvalidSchedule", "Job", "Metrics", "ModelNotApplicable", "ModelSpec",
    "ModelTooLarge", "Node", "OptschedError", "PaperSpec", "Placement", "Result", "Schedule",
    "Sensitivity", "SolverFailed", "Status", "UnknownName", "Utility", "compute_metrics",
    "get_model", "get_policy", "load_instance", "load_schedule", "models", "papers",
    "policies", "simulate", "solve", "validate_schedule", "finalize", "register_method",
    "register_policy",
]

# every paper is registered: installed plugins may now extend them (on first use)
from optsched.registry import enable_plugins as _enable_plugins  # noqa: E402

_enable_plugins()
