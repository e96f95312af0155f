"""The max-min and agnostic split LPs written in CSR directly, the solver layer's
canonical-CSR entry and the round mechanism's lease extension: each against the general
path it shortens."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from optsched.errors import InvalidOption
from optsched.gavel.model import allocation_program
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram, RowBlock, VarBlock, program_from_csr

glp = importlib.import_module("optsched.gavel.exact")  # the module, not exact()


def _block_built(T, g, c, A):
    """The max-min epigraph LP through the block builder and ``freeze``."""
    lp, X = allocation_program(T, g, c, sense="max", name="gavel_max_min")
    z = lp.add_variables("z", 1, lb=-np.inf, ub=np.inf, cost=1.0)
    glp._add_rate_rows(lp, X, -A, "epigraph", z_col=int(z.index[0]), z_coef=1.0, ub=0.0)
    return lp.freeze()


def _assert_same_program(a, b):
    for f in ("sense", "offset", "name", "var_blocks", "row_blocks"):
        assert getattr(a, f) == getattr(b, f), f
    for f in ("c", "col_lb", "col_ub", "integer", "row_lb", "row_ub"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert a.A.shape == b.A.shape
    for f in ("indptr", "indices", "data"):
        x, y = getattr(a.A, f), getattr(b.A, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


@pytest.mark.parametrize("seed", range(40))
def test_max_min_program_is_the_block_built_program(seed):
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    T = rng.random((n, K)) * (rng.random((n, K)) < 0.7)  # zeros: unusable types
    A = T * rng.random((n, 1))
    A[rng.random((n, K)) < 0.1] = -0.0  # signed zeros are dropped like zeros
    g = rng.integers(1, 9, n).astype(float)
    c = rng.integers(0, 20, K).astype(float)
    _assert_same_program(_block_built(T, g, c, A), glp.max_min_program(T, g, c, A))


def test_max_min_program_solves_to_the_same_point():
    rng = np.random.default_rng(7)
    T = rng.random((25, 3)) * (rng.random((25, 3)) < 0.8)
    T[:, 2] += 0.1
    g = rng.integers(1, 5, 25).astype(float)
    c = np.array([4.0, 6.0, 8.0])
    A = T / T.max(axis=1, keepdims=True)
    a = solve_program(_block_built(T, g, c, A), "highs")
    b = solve_program(glp.max_min_program(T, g, c, A), "highs")
    assert a.success and b.success
    assert np.array_equal(a.values["X"], b.values["X"]) and a.objective == b.objective


def _split_block_built(U, g, c, s, floor, P):
    """The agnostic split LP through the block builder and ``freeze``."""
    n, K = U.shape
    lp, X = allocation_program(U.astype(float), g, c, sense="max", name="gavel_agnostic_split")
    t = lp.add_variables("t", 1, lb=0.0, ub=1.0, cost=1.0)
    idx = X.index
    lp.add_constraints("row_sum", rows=np.repeat(np.arange(n), K), cols=idx.ravel(),
                       vals=1.0, lb=s, ub=s, n_rows=n)
    if np.isfinite(floor).any():
        lp.add_constraints("stay_full", rows=np.tile(np.arange(K), n), cols=idx.ravel(),
                           vals=np.repeat(g, K), lb=floor, n_rows=K)
    m_i, k_i = np.nonzero(U)
    rows = np.arange(len(m_i))
    lp.add_constraints("near_proportional", rows=np.concatenate([rows, rows]),
                       cols=np.concatenate([idx[m_i, k_i], np.full(len(m_i), int(t.index[0]))]),
                       vals=np.concatenate([np.ones(len(m_i)), -P[m_i, k_i]]),
                       lb=0.0, n_rows=len(m_i))
    return lp.freeze()


@pytest.mark.parametrize("seed", range(40))
def test_agnostic_split_program_is_the_block_built_program(seed):
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 20)), int(rng.integers(1, 5))
    U = rng.random((n, K)) < 0.7
    g = rng.integers(1, 9, n).astype(float)
    c = rng.integers(1, 20, K).astype(float)
    s = rng.random(n)
    P = np.where(U, rng.random((n, K)), 0.0)
    P[U & (rng.random((n, K)) < 0.2)] = 0.0  # a zero share: no t entry in its row
    floor = np.where(rng.random(K) < 0.5, rng.random(K) * c, -np.inf)
    if seed % 3 == 0:
        floor[:] = -np.inf  # no stay_full block
    _assert_same_program(_split_block_built(U, g, c, s, floor, P),
                         glp.agnostic_split_program(U, g, c, s, floor, P))


def _random_program(rng):
    lp = LinearProgram(sense="min", name="p")
    x = lp.add_variables("x", (4, 3), lb=0.0, ub=rng.random((4, 3)) + 1, cost=rng.random((4, 3)))
    lp.add_constraints("r", rows=np.repeat(np.arange(4), 3), cols=x.index.ravel(),
                       vals=rng.random(12) + 0.1, ub=rng.random(4) + 1, n_rows=4)
    lp.add_constraints("s", rows=np.tile(np.arange(3), 4), cols=x.index.ravel(),
                       vals=rng.random(12) + 0.1, lb=0.0, n_rows=3)
    return lp.freeze()


def _from(d, **change):
    kw = dict(sense=d.sense, name=d.name, var_blocks=d.var_blocks, c=d.c, col_lb=d.col_lb,
              col_ub=d.col_ub, row_blocks=d.row_blocks, indptr=d.A.indptr,
              indices=d.A.indices, data=d.A.data, row_lb=d.row_lb, row_ub=d.row_ub)
    kw.update(change)
    return program_from_csr(**kw)


def test_program_from_csr_gives_what_freeze_gives():
    d = _random_program(np.random.default_rng(3))
    _assert_same_program(d, _from(d, indptr=d.A.indptr.astype(np.int64),
                                  indices=d.A.indices.astype(np.int64)))


def test_program_from_csr_rejects_a_matrix_not_in_canonical_form():
    d = _random_program(np.random.default_rng(4))
    ind = d.A.indices.copy()
    ind[[0, 1]] = ind[[1, 0]]  # two columns of row 0 swapped
    with pytest.raises(InvalidOption, match="indices"):
        _from(d, indices=ind)
    dup = d.A.indices.copy()
    dup[1] = dup[0]
    with pytest.raises(InvalidOption, match="indices"):
        _from(d, indices=dup)
    zero = d.A.data.copy()
    zero[2] = 0.0
    with pytest.raises(InvalidOption, match="data"):
        _from(d, data=zero)
    with pytest.raises(InvalidOption, match="indptr"):
        _from(d, indptr=d.A.indptr[:-1])
    with pytest.raises(InvalidOption, match="indices"):
        _from(d, indices=np.where(d.A.indices == 0, 99, d.A.indices))
    with pytest.raises(InvalidOption, match="blocks"):
        _from(d, var_blocks=(VarBlock("x", (4, 2), 0),))
    with pytest.raises(InvalidOption, match="blocks"):
        _from(d, row_blocks=(RowBlock("r", 0, 4),))
    inf = d.A.data.copy()
    inf[0] = np.inf
    with pytest.raises(InvalidOption):
        _from(d, data=inf)


@pytest.mark.parametrize("seed", range(20))
def test_sum_throughput_program_is_the_block_built_program(seed):
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    T = rng.random((n, K)) * (rng.random((n, K)) < 0.7)
    g = rng.integers(1, 9, n).astype(float)
    c = rng.integers(0, 20, K).astype(float)
    lp, X = allocation_program(T, g, c, sense="max", name="gavel_sum_throughput")
    lp.set_cost(X, g[:, None] * T)
    _assert_same_program(lp.freeze(), glp.sum_throughput_program(T, g, c))
