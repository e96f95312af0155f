"""What a job may carry beyond its rates: a utility of its completion delay (Hadar), a
CPU/DRAM sensitivity profile (Synergy) and a GPU memory footprint (Salus). Immutable and
validated like the instance that holds them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.fields import _mapping, _no_unknown, _num, _require
from optsched.errors import InvalidInstance

__all__ = ["Utility", "Sensitivity", "GpuMemory", "UTILITY_KINDS"]

UTILITY_KINDS = ("constant", "linear", "sigmoid", "step")


@dataclass(frozen=True)
class Utility:
    r"""Utility :math:`f(d) \ge 0` of finishing a job with completion delay ``d`` seconds.

    ``d`` is completion time minus arrival time (the job's JCT). Every kind is
    non-negative and non-increasing in ``d``, as the OASiS/Hadar primal-dual analysis
    requires (Bao et al., INFOCOM'18, §II).

    * ``constant``: :math:`f(d) = v`.
    * ``linear``: :math:`f(d) = \max(0, v - s\,d)` (``value`` v, ``slope`` s per second).
    * ``sigmoid``: :math:`f(d) = \gamma_1 / (1 + e^{\gamma_2 (d - \gamma_3)})` with
      ``gamma1, gamma2, gamma3`` (OASiS §V; ``gamma2`` per second, ``gamma3`` seconds).
    * ``step``: :math:`f(d) = v` if :math:`d \le D` else ``late_value`` (deadline D).
    """

    kind: str = "constant"
    value: float = 1.0
    slope: float = 0.0
    gamma1: float = 1.0
    gamma2: float = 0.0
    gamma3: float = 0.0
    deadline: float = math.inf
    late_value: float = 0.0

    def __post_init__(self) -> None:
        self._check("utility")

    def _check(self, path: str) -> None:
        if self.kind not in UTILITY_KINDS:
            raise InvalidInstance(f"{path}.kind", self.kind, f"must be one of {UTILITY_KINDS}")
        _num(f"{path}.value", self.value)
        _num(f"{path}.slope", self.slope)
        _num(f"{path}.gamma1", self.gamma1)
        _num(f"{path}.gamma2", self.gamma2)
        _num(f"{path}.gamma3", self.gamma3, minimum=None)
        _num(f"{path}.deadline", self.deadline, allow_inf=True)
        late = _num(f"{path}.late_value", self.late_value)
        if self.kind == "step" and late > self.value:
            raise InvalidInstance(f"{path}.late_value", self.late_value,
                                  "must not exceed value (utility must be non-increasing)")

    def __call__(self, delay: float | np.ndarray) -> float | np.ndarray:
        d = np.asarray(delay, dtype=float)
        if self.kind == "constant":
            out = np.full_like(d, self.value)
        elif self.kind == "linear":
            out = np.maximum(0.0, self.value - self.slope * d)
        elif self.kind == "sigmoid":
            z = np.clip(self.gamma2 * (d - self.gamma3), -700.0, 700.0)
            out = self.gamma1 / (1.0 + np.exp(z))
        else:  # step
            out = np.where(d <= self.deadline, self.value, self.late_value)
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict[str, Any]:
        keys = {"constant": ("value",), "linear": ("value", "slope"),
                "sigmoid": ("gamma1", "gamma2", "gamma3"),
                "step": ("value", "deadline", "late_value")}[self.kind]
        return {"kind": self.kind, **{k: getattr(self, k) for k in keys}}

    @classmethod
    def from_dict(cls, data: Any, path: str = "utility") -> Utility:
        data = _mapping(path, data)
        allowed = {"kind", "value", "slope", "gamma1", "gamma2", "gamma3", "deadline",
                   "late_value"}
        _no_unknown(path, data, allowed)
        kw = {k: data[k] for k in data}
        try:
            u = cls.__new__(cls)
            for f_, default in cls.__dataclass_fields__.items():
                object.__setattr__(u, f_, kw.get(f_, default.default))
            u._check(path)
        except InvalidInstance:
            raise
        return u


# --------------------------------------------------------------------------- sensitivity
_GRID_TOL = 1e-9


def _bracket(grid: tuple[float, ...], x: float) -> tuple[int, int, float] | None:
    """Indices (lo, hi) and weight of ``x`` on ``grid``; ``None`` below the grid."""
    if x < grid[0] - _GRID_TOL:
        return None
    if x >= grid[-1] - _GRID_TOL:
        n = len(grid) - 1
        return n, n, 0.0
    hi = int(np.searchsorted(grid, x - _GRID_TOL, side="left"))
    if abs(grid[hi] - x) <= _GRID_TOL:
        return hi, hi, 0.0
    lo = hi - 1
    return lo, hi, (x - grid[lo]) / (grid[hi] - grid[lo])


@dataclass(frozen=True)
class Sensitivity:
    """Synergy-style CPU x memory sensitivity of a job (Mohan et al., OSDI'22, §3).

    ``throughput[c][m]`` is the per-GPU throughput relative to the GPU-proportional share
    with ``cpu_grid[c]`` cores and ``memory_grid[m]`` GB of DRAM per GPU.
    ``best_cpu``/``best_memory`` give the best-case demand per GPU.
    """

    cpu_grid: tuple[float, ...]
    memory_grid: tuple[float, ...]
    throughput: tuple[tuple[float, ...], ...]
    best_cpu: float
    best_memory: float

    def __post_init__(self) -> None:
        self._check("sensitivity")

    def _check(self, path: str) -> None:
        for name in ("cpu_grid", "memory_grid"):
            grid = getattr(self, name)
            if not isinstance(grid, (tuple, list)) or len(grid) == 0:
                raise InvalidInstance(f"{path}.{name}", grid, "must be a non-empty list")
            vals = [_num(f"{path}.{name}[{i}]", g, strict=True) for i, g in enumerate(grid)]
            if any(b <= a for a, b in zip(vals, vals[1:])):
                raise InvalidInstance(f"{path}.{name}", grid, "must be strictly increasing")
            object.__setattr__(self, name, tuple(vals))
        t = self.throughput
        if not isinstance(t, (tuple, list)) or len(t) != len(self.cpu_grid):
            raise InvalidInstance(f"{path}.throughput", t,
                                  f"must have {len(self.cpu_grid)} rows (one per cpu_grid entry)")
        rows = []
        for i, row in enumerate(t):
            if not isinstance(row, (tuple, list)) or len(row) != len(self.memory_grid):
                raise InvalidInstance(f"{path}.throughput[{i}]", row,
                                      f"must have {len(self.memory_grid)} entries")
            rows.append(tuple(_num(f"{path}.throughput[{i}][{j}]", v) for j, v in enumerate(row)))
        object.__setattr__(self, "throughput", tuple(rows))
        _num(f"{path}.best_cpu", self.best_cpu, strict=True)
        _num(f"{path}.best_memory", self.best_memory, strict=True)

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.throughput, dtype=float)

    def relative(self, cpu: float, memory: float) -> float:
        r"""Throughput per GPU relative to the proportional share at ``cpu`` cores and
        ``memory`` GB *per GPU*.

        Bilinear interpolation between grid points; above the top of a grid the last row
        or column applies (more CPU or DRAM than profiled buys nothing more); below the
        first grid point, or next to an unprofiled (zero) corner, the throughput is 0
        (the job cannot run there).
        """
        bc = _bracket(self.cpu_grid, float(cpu))
        bm = _bracket(self.memory_grid, float(memory))
        if bc is None or bm is None:
            return 0.0
        (c0, c1, wc), (m0, m1, wm) = bc, bm
        t = self.throughput
        corners = (t[c0][m0], t[c0][m1], t[c1][m0], t[c1][m1])
        if any(v == 0 for v in corners):
            return 0.0
        top = (1 - wm) * corners[0] + wm * corners[1]
        bot = (1 - wm) * corners[2] + wm * corners[3]
        return float((1 - wc) * top + wc * bot)

    def to_dict(self) -> dict[str, Any]:
        return {"cpu_grid": list(self.cpu_grid), "memory_grid": list(self.memory_grid),
                "throughput": [list(r) for r in self.throughput],
                "best_cpu": self.best_cpu, "best_memory": self.best_memory}

    @classmethod
    def from_dict(cls, data: Any, path: str = "sensitivity") -> Sensitivity:
        data = _mapping(path, data)
        _no_unknown(path, data, {"cpu_grid", "memory_grid", "throughput", "best_cpu",
                                 "best_memory"})
        _require(path, data, ("cpu_grid", "memory_grid", "throughput", "best_cpu",
                              "best_memory"))
        s = cls.__new__(cls)
        for k in cls.__dataclass_fields__:
            object.__setattr__(s, k, data[k])
        s._check(path)
        return s


@dataclass(frozen=True)
class GpuMemory:
    """Salus-style GPU memory footprint in MB (Yu & Chowdhury, MLSys'20, §3).

    ``persistent`` (P) is the model and framework-internal memory that stays resident;
    ``ephemeral`` (T) is the per-iteration scratch peak, live only while an iteration runs.
    """

    persistent: float
    ephemeral: float

    def __post_init__(self) -> None:
        self._check("memory")

    def _check(self, path: str) -> None:
        _num(f"{path}.persistent", self.persistent)
        _num(f"{path}.ephemeral", self.ephemeral)
        if self.persistent + self.ephemeral <= 0:
            raise InvalidInstance(path, self.to_dict(), "footprint P + T must be > 0")

    @property
    def peak(self) -> float:
        return self.persistent + self.ephemeral

    def to_dict(self) -> dict[str, float]:
        return {"persistent": self.persistent, "ephemeral": self.ephemeral}

    @classmethod
    def from_dict(cls, data: Any, path: str = "memory") -> GpuMemory:
        data = _mapping(path, data)
        _no_unknown(path, data, {"persistent", "ephemeral"})
        _require(path, data, ("persistent", "ephemeral"))
        m = cls.__new__(cls)
        object.__setattr__(m, "persistent", data["persistent"])
        object.__setattr__(m, "ephemeral", data["ephemeral"])
        m._check(path)
        return m


# --------------------------------------------------------------------------- cluster
