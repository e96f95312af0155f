"""optsched: formal models for scheduling deep-learning training jobs on GPU clusters.

Each model is exposed two ways: an exact LP/MILP solved through one solver layer
(HiGHS directly, Pyomo or CVXPY) and the polynomial-time heuristic from its paper.
"""

from . import (
    allox,  # noqa: E402  (each model package registers itself)
    hadar,  # noqa: E402
    hadare,  # noqa: E402
    salus,  # noqa: E402
    synergy,  # noqa: E402
)
from .errors import (
    InvalidInput,
    InvalidInstance,
    InvalidOption,
    InvalidSchedule,
    ModelNotApplicable,
    OptschedError,
    UnknownName,
)
from .instance import Cluster, GpuMemory, Instance, Job, Node, Sensitivity, Utility, load_instance
from .metrics import Metrics, compute_metrics
from .registry import ModelSpec, get_model, models, solve
from .result import Result, Status
from .schedule import Allocation, Schedule, load_schedule
from .validate import validate_schedule

__version__ = "0.1.0"

__all__ = [
    "allox", "hadar", "hadare", "salus", "synergy", "Allocation", "Cluster", "GpuMemory",
    "Instance", "InvalidInput", "InvalidInstance",
    "InvalidOption", "InvalidSchedule", "Job", "Metrics", "ModelNotApplicable", "ModelSpec",
    "Node", "OptschedError", "Result", "Schedule", "Sensitivity", "Status", "UnknownName",
    "Utility", "compute_metrics", "get_model", "load_instance", "load_schedule", "models",
    "solve", "validate_schedule",
]
