r"""Measured co-located (space-sharing) rates: two jobs on the same GPUs at once.

Gavel (Narayanan et al., OSDI'20, §3.1 "space sharing") measures, for every pair of job
types of equal scale factor and every GPU type, the throughput each job of the pair
reaches when both run on the same GPUs; its packed policies allocate time to such pairs
as well as to single jobs. An :class:`Instance` may carry these rates as a
:class:`Colocation` table; a schedule may then place two jobs on the same GPUs
(:attr:`~optsched.core.schedule.Allocation.partner`), each progressing at its
co-located rate, and never three.

The table
---------
Each entry is ``(gpu_type, a, b, workers, rate_a, rate_b)``: when a job whose
*co-location key* is ``a`` and a job whose key is ``b`` share GPUs of ``gpu_type``, the
first runs at ``rate_a`` and the second at ``rate_b`` iterations/s **per worker** (the
unit of :attr:`Job.throughput <optsched.core.instance.Job.throughput>`; Gavel's figures,
which are per job, divided by the scale factor). A job's co-location key is its
``profile``, or its ``id`` when it has none. ``workers`` restricts the entry to pairs of
jobs that both have that gang size (Gavel measures pairs of one scale factor only);
``None`` means any gang size. Pairs are unordered: the entry ``(a, b)`` answers for
``(b, a)`` with the rates swapped; an entry ``(a, a)`` (two jobs of one key) must have
equal rates, since nothing tells its two jobs apart.

JSON form (the instance's ``colocation`` field)::

    {"v100": [["ResNet-50 (batch size 64)", "LM (batch size 20)", 1, 1.89, 3.02], ...]}

one row ``[a, b, workers or null, rate_a, rate_b]`` per unordered pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from optsched.core.fields import _int, _mapping, _num, _str
from optsched.errors import InvalidInstance

__all__ = ["Colocation", "PairRate"]


@dataclass(frozen=True)
class PairRate:
    """One measured pair: per-worker rates of ``a`` and ``b`` sharing ``gpu_type`` GPUs."""

    gpu_type: str
    a: str
    b: str
    workers: int | None
    rate_a: float
    rate_b: float


@dataclass(frozen=True)
class Colocation:
    """A table of co-located per-worker rates (module docstring).

    Built from :class:`PairRate` entries; each is checked (non-empty names, a gang size
    ``>= 1`` or ``None``, finite rates ``>= 0``, equal rates for a pair of one key) and a
    second entry for the same unordered pair, GPU type and gang size is refused.
    Invalid entries raise :class:`~optsched.errors.InvalidInstance` naming the entry
    (``colocation.v100[3]``) and the value.

    Look-up (:meth:`rate`) is one dictionary access, :math:`O(1)`.
    """

    entries: tuple[PairRate, ...] = ()
    _table: dict[tuple[str, str, str, int | None], tuple[float, float]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check("colocation")

    def _check(self, path: str) -> None:
        if not isinstance(self.entries, (tuple, list)):
            raise InvalidInstance(path, self.entries, "must be a list of pair rates")
        object.__setattr__(self, "entries", tuple(self.entries))
        table: dict[tuple[str, str, str, int | None], tuple[float, float]] = {}
        count: dict[str, int] = {}
        for e in self.entries:
            if not isinstance(e, PairRate):
                raise InvalidInstance(path, e, "must be a PairRate")
            i = count.get(e.gpu_type, 0)
            count[e.gpu_type] = i + 1
            where = f"{path}.{e.gpu_type}[{i}]"
            _str(f"{path}.gpu_type", e.gpu_type)
            _str(f"{where}.a", e.a)
            _str(f"{where}.b", e.b)
            if e.workers is not None:
                object.__setattr__(e, "workers", _int(f"{where}.workers", e.workers,
                                                      minimum=1))
            ra = _num(f"{where}.rate_a", e.rate_a)
            rb = _num(f"{where}.rate_b", e.rate_b)
            object.__setattr__(e, "rate_a", ra)
            object.__setattr__(e, "rate_b", rb)
            if e.a == e.b and ra != rb:
                raise InvalidInstance(where, [e.a, e.b, e.workers, ra, rb],
                                      "a pair of two jobs of one key must have equal "
                                      "rates (nothing tells its jobs apart)")
            a, b, r = (e.a, e.b, (ra, rb)) if e.a <= e.b else (e.b, e.a, (rb, ra))
            key = (e.gpu_type, a, b, e.workers)
            if key in table:
                raise InvalidInstance(where, [e.a, e.b, e.workers, ra, rb],
                                      f"a second entry for the pair ({a!r}, {b!r}) on "
                                      f"{e.gpu_type!r} with workers {e.workers}")
            table[key] = r
        object.__setattr__(self, "_table", table)

    @property
    def gpu_types(self) -> tuple[str, ...]:
        """The GPU types the table has entries for, sorted."""
        return tuple(sorted({e.gpu_type for e in self.entries}))

    def __len__(self) -> int:
        return len(self.entries)

    def rate(self, gpu_type: str, key: str, other: str, workers: int) -> float | None:
        """Per-worker rate of a job of key ``key`` sharing ``gpu_type`` GPUs with a job
        of key ``other``, both of gang size ``workers``; ``None`` when not measured (an
        entry for this gang size first, else one for any gang size)."""
        swap = other < key
        a, b = (other, key) if swap else (key, other)
        r = self._table.get((gpu_type, a, b, workers))
        if r is None:
            r = self._table.get((gpu_type, a, b, None))
            if r is None:
                return None
        return r[1] if swap else r[0]

    def restricted(self, keys: Iterable[str]) -> Colocation:
        """The entries whose two keys are both in ``keys`` (e.g. the profiles of an
        instance's jobs)."""
        ks = set(keys)
        return Colocation(tuple(e for e in self.entries if e.a in ks and e.b in ks))

    def to_dict(self) -> dict[str, list[list[Any]]]:
        out: dict[str, list[list[Any]]] = {}
        for e in self.entries:
            out.setdefault(e.gpu_type, []).append([e.a, e.b, e.workers, e.rate_a, e.rate_b])
        return out

    @classmethod
    def from_dict(cls, data: Any, path: str = "colocation") -> Colocation:
        data = _mapping(path, data)
        entries = []
        for t, rows in data.items():
            _str(path, t)
            if not isinstance(rows, list):
                raise InvalidInstance(f"{path}.{t}", rows, "must be a list of rows "
                                      "[a, b, workers or null, rate_a, rate_b]")
            for i, row in enumerate(rows):
                if not isinstance(row, list) or len(row) != 5:
                    raise InvalidInstance(f"{path}.{t}[{i}]", row, "must be a row "
                                          "[a, b, workers or null, rate_a, rate_b]")
                entries.append(PairRate(t, *row))
        try:
            return cls(tuple(entries))
        except InvalidInstance as e:
            raise InvalidInstance(e.path.replace("colocation", path, 1), e.value,
                                  e.reason) from None

    @classmethod
    def of(cls, rows: Mapping[str, Iterable[Iterable[Any]]]) -> Colocation:
        """The table of rows ``{gpu_type: [(a, b, workers, rate_a, rate_b), ...]}``."""
        return cls(tuple(PairRate(t, *r) for t, rs in rows.items() for r in rs))
