"""optsched: formal models for scheduling deep-learning training jobs on GPU clusters.

Each model is exposed two ways: an exact LP/MILP solved through one solver layer
(HiGHS directly, Pyomo or CVXPY) and the polynomial-time heuristic from its paper.
"""

from optsched import (
    allox,  # noqa: E402  (each model package registers itself)
    hadar,  # noqa: E402
    hadare,  # noqa: E402
    salus,  # noqa: E402
    synergy,  # noqa: E402
)
from optsched.core.instance import (
    Cluster,
    GpuMemory,
    Instance,
    Job,
    Node,
    Sensitivity,
    Utility,
    load_instance,
)
from optsched.core.metrics import Metrics, compute_metrics
from optsched.core.result import Result, Status
from optsched.core.schedule import Allocation, Schedule, load_schedule
from optsched.core.validate import validate_schedule
from optsched.errors import (
    InvalidInput,
    InvalidInstance,
    InvalidOption,
    InvalidSchedule,
    ModelNotApplicable,
    OptschedError,
    UnknownName,
)
from optsched.registry import ModelSpec, get_model, models, solve

__version__ = "0.1.0"

__all__ = [
    "allox", "hadar", "hadare", "salus", "synergy", "Allocation", "Cluster", "GpuMemory",
    "Instance", "InvalidInput", "InvalidInstance",
    "InvalidOption", "InvalidSchedule", "Job", "Metrics", "ModelNotApplicable", "ModelSpec",
    "Node", "OptschedError", "Result", "Schedule", "Sensitivity", "Status", "UnknownName",
    "Utility", "compute_metrics", "get_model", "load_instance", "load_schedule", "models",
    "solve", "validate_schedule",
]
