"""A model-agnostic statement of a linear or mixed-integer linear program.

A model writes its LP/MILP once as a :class:`LinearProgram` (named variable blocks,
sparse constraint blocks, a linear objective, integrality); a backend solves the frozen
:class:`ProgramData` without knowing which model produced it::

    lp = LinearProgram(sense="min")
    x = lp.add_variables("x", (3, 4), lb=0, ub=1, cost=c, integer=True)
    lp.add_constraints("assign", rows=..., cols=x.index[...], vals=..., lb=1, ub=1)
    data = lp.freeze()

Rows are ``lb <= A x <= ub`` (``lb == ub`` for equalities, ``-inf``/``inf`` for
one-sided rows). Constraint blocks are given in coordinate form (row within the block,
global column, value); duplicates are summed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from optsched.errors import InvalidOption

__all__ = ["LinearProgram", "ProgramData", "VarBlock", "RowBlock", "program_from_csr"]


@dataclass(frozen=True)
class VarBlock:
    """A named block of variables; ``index`` holds their global column numbers."""

    name: str
    shape: tuple[int, ...]
    start: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def index(self) -> np.ndarray:
        return (self.start + np.arange(self.size, dtype=np.int64)).reshape(self.shape)


@dataclass(frozen=True)
class RowBlock:
    name: str
    start: int
    size: int

    @property
    def index(self) -> np.ndarray:
        return self.start + np.arange(self.size, dtype=np.int64)


@dataclass(frozen=True)
class ProgramData:
    """Frozen arrays of a program: what every backend consumes.

    ``objective = c @ x + offset``, optimised in direction ``sense``.
    """

    sense: str
    c: np.ndarray
    offset: float
    col_lb: np.ndarray
    col_ub: np.ndarray
    integer: np.ndarray  # bool per column
    A: sp.csr_matrix
    row_lb: np.ndarray
    row_ub: np.ndarray
    var_blocks: tuple[VarBlock, ...]
    row_blocks: tuple[RowBlock, ...]
    name: str = "program"

    @property
    def n_cols(self) -> int:
        return self.c.shape[0]

    @property
    def n_rows(self) -> int:
        return self.A.shape[0]

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    def col_names(self) -> list[str]:
        names: list[str] = []
        for b in self.var_blocks:
            for idx in np.ndindex(*b.shape) if b.shape else [()]:
                names.append(b.name + ("[" + ",".join(map(str, idx)) + "]" if idx else ""))
        return names

    def row_names(self) -> list[str]:
        return [f"{b.name}[{i}]" for b in self.row_blocks for i in range(b.size)]

    def split_cols(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Split a full column vector into its named blocks (shaped)."""
        return {b.name: np.asarray(x[b.start:b.start + b.size]).reshape(b.shape)
                for b in self.var_blocks}

    def split_rows(self, y: np.ndarray) -> dict[str, np.ndarray]:
        return {b.name: np.asarray(y[b.start:b.start + b.size]) for b in self.row_blocks}

    def relaxed(self) -> ProgramData:
        """The LP relaxation: this program with every integrality dropped."""
        return replace(self, integer=np.zeros_like(self.integer), name=f"{self.name}-lp")

    def start_vector(self, start: Mapping[str, object] | np.ndarray) -> np.ndarray:
        """The full column vector of a start given by block (``{"x": array, ...}``, every
        block of the program, each of its block's shape) or as one vector of ``n_cols``
        values. Raises :class:`~optsched.errors.InvalidOption` naming what is wrong."""
        if isinstance(start, Mapping):
            names = {b.name for b in self.var_blocks}
            unknown = sorted(set(start) - names)
            if unknown:
                raise InvalidOption("start", unknown[0], f"not a variable block of "
                                    f"{self.name} (blocks: {', '.join(sorted(names))})")
            missing = [b.name for b in self.var_blocks if b.name not in start]
            if missing:
                raise InvalidOption("start", missing[0], "a start gives every variable block; "
                                    "this one is missing")
            parts = []
            for b in self.var_blocks:
                v = np.asarray(start[b.name], dtype=float)
                if v.size != b.size:
                    raise InvalidOption(f"start[{b.name!r}]", v.shape,
                                        f"must have {b.size} values (block shape {b.shape})")
                parts.append(v.ravel())
            x = np.concatenate(parts) if parts else np.zeros(0)
        else:
            x = np.asarray(start, dtype=float).ravel()
            if x.size != self.n_cols:
                raise InvalidOption("start", x.size, f"must have {self.n_cols} values, one "
                                    "per column")
        if not np.all(np.isfinite(x)):
            raise InvalidOption("start", "non-finite", "start values must be finite")
        return x

    def objective_value(self, x: np.ndarray) -> float:
        return float(self.c @ x + self.offset)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of bounds, rows and integrality by ``x`` (0 if feasible)."""
        ax = self.A @ x
        v = [np.max(self.col_lb - x, initial=0.0), np.max(x - self.col_ub, initial=0.0),
             np.max(self.row_lb - ax, initial=0.0), np.max(ax - self.row_ub, initial=0.0)]
        if self.is_mip:
            xi = x[self.integer]
            v.append(np.max(np.abs(xi - np.round(xi)), initial=0.0))
        return float(max(v))


@dataclass
class LinearProgram:
    """Incremental builder of a :class:`ProgramData` (vectorised: blocks, not scalars)."""

    sense: str = "min"
    name: str = "program"
    _vars: list[VarBlock] = field(default_factory=list)
    _lb: list[np.ndarray] = field(default_factory=list)
    _ub: list[np.ndarray] = field(default_factory=list)
    _cost: list[np.ndarray] = field(default_factory=list)
    _int: list[np.ndarray] = field(default_factory=list)
    _rows: list[RowBlock] = field(default_factory=list)
    _coo: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    _rlb: list[np.ndarray] = field(default_factory=list)
    _rub: list[np.ndarray] = field(default_factory=list)
    offset: float = 0.0

    def __post_init__(self) -> None:
        if self.sense not in ("min", "max"):
            raise InvalidOption("sense", self.sense, "must be 'min' or 'max'")

    @property
    def n_cols(self) -> int:
        return self._vars[-1].start + self._vars[-1].size if self._vars else 0

    @property
    def n_rows(self) -> int:
        return self._rows[-1].start + self._rows[-1].size if self._rows else 0

    def add_variables(self, name: str, shape: int | tuple[int, ...], *, lb=0.0, ub=np.inf,
                      cost=0.0, integer: bool = False) -> VarBlock:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        if any(b.name == name for b in self._vars):
            raise InvalidOption("name", name, "duplicate variable block name")
        block = VarBlock(name, shape, self.n_cols)
        n = block.size
        self._vars.append(block)
        self._lb.append(np.broadcast_to(np.asarray(lb, dtype=float), shape).ravel().copy())
        self._ub.append(np.broadcast_to(np.asarray(ub, dtype=float), shape).ravel().copy())
        self._cost.append(np.broadcast_to(np.asarray(cost, dtype=float), shape).ravel().copy())
        self._int.append(np.full(n, bool(integer)))
        return block

    def set_cost(self, block: VarBlock, cost) -> None:
        i = self._vars.index(block)
        self._cost[i] = np.broadcast_to(np.asarray(cost, dtype=float), block.shape).ravel().copy()

    def add_constraints(self, name: str, *, rows, cols, vals, lb=-np.inf, ub=np.inf,
                        n_rows: int | None = None) -> RowBlock:
        """Add ``n_rows`` rows ``lb <= A_block x <= ub`` from coordinates.

        ``rows`` are 0-based within the block, ``cols`` global column numbers (e.g.
        ``block.index[...]``), ``vals`` the coefficients; all broadcast to one shape.
        """
        rows, cols, vals = np.broadcast_arrays(np.asarray(rows, dtype=np.int64),
                                               np.asarray(cols, dtype=np.int64),
                                               np.asarray(vals, dtype=float))
        rows, cols, vals = rows.ravel(), cols.ravel(), vals.ravel()
        if n_rows is None:
            n_rows = int(rows.max()) + 1 if rows.size else 0
        if rows.size and (rows.min() < 0 or rows.max() >= n_rows):
            raise InvalidOption(f"{name}.rows", int(rows.max()),
                                f"row index outside 0..{n_rows - 1}")
        if cols.size and (cols.min() < 0 or cols.max() >= self.n_cols):
            raise InvalidOption(f"{name}.cols", int(cols.max()), "column index outside the program")
        if any(b.name == name for b in self._rows):
            raise InvalidOption("name", name, "duplicate constraint block name")
        block = RowBlock(name, self.n_rows, n_rows)
        self._rows.append(block)
        self._coo.append((rows + block.start, cols, vals))
        self._rlb.append(np.broadcast_to(np.asarray(lb, dtype=float), (n_rows,)).copy())
        self._rub.append(np.broadcast_to(np.asarray(ub, dtype=float), (n_rows,)).copy())
        return block

    def add_dense_rows(self, name: str, A, *, lb=-np.inf, ub=np.inf) -> RowBlock:
        """Add rows from a (dense or scipy-sparse) matrix over *all* current columns."""
        A = sp.coo_matrix(A)
        if A.shape[1] != self.n_cols:
            raise InvalidOption(f"{name}.A", A.shape, f"must have {self.n_cols} columns")
        return self.add_constraints(name, rows=A.row, cols=A.col, vals=A.data, lb=lb, ub=ub,
                                    n_rows=A.shape[0])

    def freeze(self) -> ProgramData:
        n, m = self.n_cols, self.n_rows
        if self._coo:
            r = np.concatenate([c[0] for c in self._coo])
            c = np.concatenate([c[1] for c in self._coo])
            v = np.concatenate([c[2] for c in self._coo])
        else:
            r = c = np.zeros(0, dtype=np.int64)
            v = np.zeros(0)
        A = _csr(r, c, v, (m, n))

        def cat(xs, dt=float):
            return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dtype=dt)

        data = ProgramData(
            sense=self.sense, c=cat(self._cost), offset=float(self.offset),
            col_lb=cat(self._lb), col_ub=cat(self._ub), integer=cat(self._int, bool), A=A,
            row_lb=cat(self._rlb), row_ub=cat(self._rub), var_blocks=tuple(self._vars),
            row_blocks=tuple(self._rows), name=self.name)
        _check_data(data)
        return data


def _csr(r: np.ndarray, c: np.ndarray, v: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """The canonical CSR matrix of coordinates ``(r, c, v)``: duplicates summed, explicit
    zeros dropped, columns sorted within each row.

    Without duplicate coordinates (every model here) the arrays are assembled with one
    stable sort, the same arrays scipy's ``csr_matrix((v, (r, c))).sum_duplicates()``
    gives, so every backend sees the same matrix either way; scipy sums duplicates
    (its summation order is its own), so they go through it.
    """
    m, n = shape
    order = np.argsort(r * max(n, 1) + c, kind="stable")
    rs, cs = r[order], c[order]
    if rs.size > 1 and np.any((rs[1:] == rs[:-1]) & (cs[1:] == cs[:-1])):
        A = sp.csr_matrix((v, (r, c)), shape=shape)
        A.sum_duplicates()
        A.eliminate_zeros()
        return A
    vs = v[order]
    keep = vs != 0
    rs, cs, vs = rs[keep], cs[keep], vs[keep]
    idx = np.int32 if max(m, n, rs.size) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(m + 1, dtype=idx)
    np.cumsum(np.bincount(rs, minlength=m), out=indptr[1:])
    A = sp.csr_matrix((vs.astype(float, copy=False), cs.astype(idx), indptr), shape=shape)
    A.has_sorted_indices = True
    return A


#: ``np.iinfo(np.int32).max`` (what :func:`_csr` compares with), without its per-call cost
_INT32_MAX = 2**31 - 1


def program_from_csr(*, sense: str, name: str, var_blocks: tuple[VarBlock, ...],
                     c: np.ndarray, col_lb: np.ndarray, col_ub: np.ndarray,
                     row_blocks: tuple[RowBlock, ...], indptr: np.ndarray,
                     indices: np.ndarray, data: np.ndarray, row_lb: np.ndarray,
                     row_ub: np.ndarray, integer: np.ndarray | None = None,
                     offset: float = 0.0) -> ProgramData:
    """A :class:`ProgramData` whose matrix is given in canonical CSR form: rows in order,
    columns strictly increasing within each row, no explicit zeros.

    The very arrays :meth:`LinearProgram.freeze` builds from the same coordinates (its
    :func:`_csr` sorts them into this form), for a model that can write them in order
    and so spares the builder's concatenations and sort on programs solved many times
    (a simulation's thousands of small LPs). The form is checked (``O(nnz)``), as are
    the bounds and entries :meth:`LinearProgram.freeze` checks; anything else raises
    :class:`~optsched.errors.InvalidOption` naming it.
    """
    if sense not in ("min", "max"):
        raise InvalidOption("sense", sense, "must be 'min' or 'max'")
    n_cols, n_rows = c.shape[0], row_lb.shape[0]
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    data = np.asarray(data, dtype=float)
    nnz = data.shape[0]
    if indptr.shape != (n_rows + 1,) or indptr[0] != 0 or indptr[-1] != nnz \
            or indices.shape != (nnz,) or np.any(np.diff(indptr) < 0):
        raise InvalidOption("indptr", indptr.shape, f"must be the CSR row pointers of "
                            f"{n_rows} rows over {nnz} entries")
    if nnz:
        if indices.min() < 0 or indices.max() >= n_cols:
            raise InvalidOption("indices", int(indices.max()), "column index outside the "
                                "program")
        step = np.diff(indices)
        first = np.zeros(nnz, dtype=bool)
        first[indptr[1:-1][indptr[1:-1] < nnz]] = True
        if not np.all((step > 0) | first[1:]):
            raise InvalidOption("indices", "unsorted", "columns must increase strictly "
                                "within each row (no duplicates)")
        if not np.all(data != 0):
            raise InvalidOption("data", 0.0, "no explicit zeros in canonical CSR form")
    if sum(b.size for b in var_blocks) != n_cols or sum(b.size for b in row_blocks) != n_rows:
        raise InvalidOption("blocks", (n_cols, n_rows), "the blocks must cover every column "
                            "and row")
    idx = np.int32 if max(n_rows, n_cols, nnz) < _INT32_MAX else np.int64
    A = sp.csr_matrix((data, indices.astype(idx, copy=False), indptr.astype(idx, copy=False)),
                      shape=(n_rows, n_cols))
    A.has_sorted_indices = True
    out = ProgramData(
        sense=sense, c=np.asarray(c, dtype=float), offset=float(offset),
        col_lb=np.asarray(col_lb, dtype=float), col_ub=np.asarray(col_ub, dtype=float),
        integer=np.zeros(n_cols, dtype=bool) if integer is None
        else np.asarray(integer, dtype=bool),
        A=A, row_lb=np.asarray(row_lb, dtype=float), row_ub=np.asarray(row_ub, dtype=float),
        var_blocks=tuple(var_blocks), row_blocks=tuple(row_blocks), name=name)
    _check_data(out)
    return out


def _check_data(d: ProgramData) -> None:
    for name, arr in (("c", d.c), ("A", d.A.data)):
        if not np.all(np.isfinite(arr)):
            raise InvalidOption(name, "non-finite", "objective and matrix entries must be finite")
    if np.any(np.isnan(d.col_lb)) or np.any(np.isnan(d.col_ub)):
        raise InvalidOption("bounds", "NaN", "variable bounds must not be NaN")
    bad = np.flatnonzero(d.col_lb > d.col_ub)
    if bad.size:
        raise InvalidOption("bounds", d.col_names()[bad[0]], "lower bound exceeds upper bound")
    bad = np.flatnonzero(d.row_lb > d.row_ub)
    if bad.size:
        raise InvalidOption("rows", d.row_names()[bad[0]], "row lower bound exceeds upper bound")
