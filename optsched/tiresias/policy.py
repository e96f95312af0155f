r"""Tiresias (Gu et al., NSDI'19 §3-4): 2D-LAS, 2D-Gittins and the baselines it is compared to.

Attained service (§3.1). Job J with :math:`W_J` GPUs that has run :math:`t_J` seconds has
attained :math:`a_J = W_J t_J` GPU-seconds ("2D": space x time); the 1D variant uses
:math:`t_J` alone.

Discretised priority queues (§3.2, MLFQ). Thresholds :math:`0 < Q_1 < \dots < Q_{K-1}`:
a job is in queue :math:`q` when :math:`Q_q \le a < Q_{q+1}` (:math:`Q_0 = 0`,
:math:`Q_K = \infty`); every job starts in queue 0 and is demoted as it runs. Queues are
served in order; within a queue 2D-LAS is FIFO (arrival order) and 2D-Gittins orders by
the Gittins index (highest first, ties by arrival). **Default queues:** the public
simulator's ``jobs.py`` (``num_queue = 3``, ``queue_limit = [3250, 7200, 18000]``, of
which 3 queues use the first two): thresholds ``(3250, 7200)`` GPU-seconds. The adaptdl
port's ``(3600*16,)`` is available as :data:`ADAPTDL_THRESHOLDS`. ``thresholds=None``
is continuous LAS (order by attained service itself).

Gang scheduling with skipping (§4): jobs are visited in priority order and started when
their whole gang fits; a job that does not fit is skipped so smaller jobs behind it can
run. Running jobs that are no longer selected are preempted. Inside a 2D-LAS queue the
running jobs come first, then the waiting ones, each in arrival order, as in Tiresias'
simulator (``dlas-gpu``): a waiting job cannot preempt a running job of its own queue,
only one of a lower queue. (``queue_order="arrival"`` orders the queue by arrival alone;
on 240 Philly-derived jobs on 16 P100 at 1 job/h that re-selection preempted 619 times
against the original's 355 and doubled the mean JCT.)

Starvation (``PROMOTE_KNOB``, §4 / code ``solve_starvation``): a waiting job in a queue
below the top that has run before is promoted to queue 0 when it has waited at least
``knob x`` its executed time since its last promotion; promotion restarts its attained
service count for queue purposes (the total is kept). ``None`` disables it (the code's
``dlas-gpu`` default).

2D-Gittins index (§3.2). With S the job's total GPU-time drawn from the empirical
distribution of past jobs (``tiresias_gpu_time_samples()``, Tiresias'
``yarn-gput1000.csv``) and a the attained service,

.. math::
    G(a) = \sup_{\Delta > 0} \frac{P(S - a \le \Delta \mid S > a)}
                                  {E[\min(S - a, \Delta) \mid S > a]}.

For an empirical distribution with samples :math:`s_i > a` (m of them), write
:math:`d_i = s_i - a` sorted. :math:`P` is a step function of :math:`\Delta`, constant on
:math:`[d_i, d_{i+1})`, while the denominator strictly increases there; so the ratio's
supremum over that interval is at its left end and the supremum over all
:math:`\Delta` is a maximum over the m candidates :math:`\Delta = d_i`:

.. math::
    G(a) = \max_i \frac{c_i}{\sum_{j \le c_i} d_j + d_i (m - c_i)},
    \quad c_i = \#\{j : d_j \le d_i\},

evaluated vectorised (:func:`gittins_index`). :math:`G(a) = 0` beyond the largest sample
(as in the code). The public simulator instead fixes :math:`\Delta` (``gittins_delta =
3250``) and, as a quirk, sums :math:`s_i` instead of :math:`s_i - a` in E; both are
options (``gittins_delta``, ``gittins_code_quirk``).

Fast ranking (:meth:`GittinsIndex.ranking_keys`). On an interval between consecutive
samples, :math:`s_{i_0 - 1} \le a < s_{i_0}`, write :math:`x = s_{i_0} - a` and
:math:`t_j = s_j - s_{i_0}`; candidate :math:`i` gives :math:`c_i / (F_i + m x)` with
:math:`F_i = \sum_{j \le c_i} t_j + t_i (m - c_i)` fixed on the interval, so
:math:`1 / G(a) = \min_i (F_i / c_i + (m / c_i) x)`, the lower envelope of lines in
:math:`x`. The envelope of each interval is built once (when first needed) and a query is
two binary searches. Both this form and the direct one add only non-negative terms, so
each is within :math:`(m + 6)\,\epsilon` relative of :math:`G`; jobs whose fast values
are within a margin far above that (:data:`GITTINS_TIE_MARGIN` relative) of another job's
with a different attained service get the direct value, so the order and the ties of the
keys are those of the direct index, and so are the decisions (tested).

Placement: ``"spread"`` (any free GPUs, fewest nodes first; Tiresias relaxes
consolidation when the model profile allows it) or ``"consolidated"`` (only placements
on as few nodes as the gang needs); see :func:`optsched.sim.placement.place_gang`. In
this simulator placement changes only queueing, not speed (as in Tiresias' simulator).

Baselines: ``yarn_fifo`` (YARN-CS, as in Tiresias' paper and simulator: arrival order,
whole gangs placed on as few servers as they need, no preemption, and a head job that
does not fit blocks every job behind it), ``fifo_backfill`` (the same without blocking
and with spread placement: smaller jobs start around a head job that does not fit),
``srtf`` (shortest remaining time first, preemptive, ``needs_work``), ``las_1d``
(Tiresias' ``dlas``: discretised LAS on executed time only), and the public
simulator's other single-queue schedulers (orders ``gpus``, ``srtf_gpu``, ``expected``;
see :mod:`optsched.tiresias`). Placement may also be the simulator's ``random`` or
``crandom`` (:mod:`optsched.sim.placement`).

**GPU packing: Tiresias' ``dlas-gpu-pack``** (:class:`PackingTiresiasPolicy`, on the core's
co-location).

The public simulator (SymbioticLab/Tiresias, ``simulator/run_sim.py``,
``dlas_pack_sim_jobs``; ``cluster.py``, ``free_gpu_util`` / ``dlas_pack_get_gpu_util``)
runs 2D-LAS (queues on attained GPU-seconds, thresholds ``(3250, 7200)``, no starvation
promotion) and replaces the GPU count of its admission test by a per-GPU memory budget:

* every GPU has budget 1; a job of model :math:`\mu` uses :math:`s_\mu \in (0, 1]` of the
  budget of each GPU it holds (``models.py``, ``mem_util``);
* at each event the budgets are reset and the jobs are visited in queue order; a job
  starts (or keeps running) when at least :math:`W_j` GPUs have budget
  :math:`\ge s_j` left, and takes the first :math:`W_j` such GPUs in index order, so a
  GPU already partly used comes before an empty one;
* jobs sharing a GPU each run at their full isolated speed (their remaining time is
  their duration minus their executed time).

At commit 959f9b0 every model's share is 1 (the per-model figures
``0.60, 0.55, 0.45, 0.13, 0.85, 0.70, 0.50, 0.85, 0.80`` for vgg19, vgg16, vgg11,
alexnet, resnet152, resnet101, resnet50, inception4, inception3 are commented out,
:data:`TIRESIAS_DRAFT_SHARES`), so a GPU never holds two jobs and ``dlas-gpu-pack``
takes the decisions of ``dlas-gpu`` (measured: the same 60 completions on its 60-job
trace).

Formulation here. The core model (:mod:`optsched.core.colocation`) lets two jobs of
equal gang size hold the same GPUs, each at its co-located rate from the instance's
table, and never three. This policy visits jobs in the 2D-LAS order of
:class:`~optsched.tiresias.policy.TiresiasPolicy` (every option of ``tiresias.las``
applies) and, for a job :math:`j` with share :math:`s_j < 1`, first looks for a
*host*: an already selected job :math:`h` without partner, of gang size :math:`W_h =
W_j`, with :math:`s_h + s_j \le 1` and a positive co-located rate of both jobs on the
host's GPU type; the first such host in selection order (the analogue of the first
partly used GPUs in index order) is taken and :math:`j` holds the host's GPUs, both
placements naming the other as ``partner``. Otherwise :math:`j` takes whole free GPUs as
in ``tiresias.las``. The rate of a pair is the instance's: :func:`full_speed_colocation`
declares the original's assumption (each job of a pair at its isolated throughput,
optimistic: co-located training slows both jobs down in measurements, e.g. Gavel's
pairs at 0.3-0.9 of isolated); an instance carrying measured co-located rates is used as
is. Without a table, or with every share 1, the decisions are those of ``tiresias.las``.

Differences from the original that the core's pair model imposes: a GPU holds at most
two jobs (the original fits :math:`\lfloor 1/s \rfloor`, e.g. seven alexnet jobs), a
pair has equal gang sizes and shares all its GPUs (the original packs a 2-GPU job onto
two GPUs each partly used by a different 1-GPU job), and GPUs are places on nodes (the
original counts GPUs without nodes). Under the shares of commit 959f9b0 none of these
arises.

Complexity: the 2D-LAS ranking, plus :math:`O(n \cdot p)` for the host search with
:math:`p` the open hosts.

**Tiresias' ``gandiva``** (:class:`GandivaPolicy`): time slicing over node sets, one class
per gang size.

The public Tiresias simulator (SymbioticLab/Tiresias at 959f9b0, ``simulator/run_sim.py``
``gandiva_sim_jobs``; ``simulator/cluster.py`` ``gandiva_placement``,
``gandiva_node_set_adjust`` / ``_expand`` / ``_shrink`` and ``time_slicing_execute``)
models Gandiva (Xiao et al., OSDI'18) as follows. Servers have :math:`G` GPUs each.

* **Node sets.** Jobs of gang size :math:`g \in \{1, 2, 4, 8, 12, 16, 24, 32, 64\}` (its
  *class*) live in node sets of :math:`n_g = \lceil g / G \rceil` whole servers, of
  capacity :math:`c_g = \lfloor n_g G / g \rfloor` concurrent jobs; a node set keeps an
  ordered job list and a load figure :math:`u` (the sum of its jobs' memory shares,
  all 1 at 959f9b0, rounded to 2 decimals; raised when a job joins, reset only when its
  class is re-balanced, never lowered at a completion).
* **Clock.** Steps of 10 s, cut short at the next arrival; at each step, in order:
  (1) *re-balance*: with :math:`D_g` = jobs of class g times g and :math:`D = \sum D_g`,
  class g aims at :math:`\min(\lfloor D_g / D \cdot N \rfloor, D_g)` GPUs (N the
  cluster's) and grows by :math:`\lceil \text{diff} / g \rceil` node sets taken from
  the free servers (first free first) or shrinks by as many (at most all but one,
  least loaded first, their jobs moved one by one onto the least loaded remaining set);
  after a growth the class's jobs are dealt again one by one onto the least loaded set
  (list order, stable sort); (2) *time slicing*: in each node set the first
  :math:`\min(c_g, |\text{jobs}|)` jobs ran during the step that ends now; a job whose
  work is done completes; when the clock is a multiple of 60 s (``int(t % 60) == 0``)
  and the set holds more jobs than it runs, its running jobs move to the end of its
  list; a set left empty returns its servers to the free list; (3) *arrivals*: a job
  joins the least loaded set of its class if :math:`u + 1 < c_g` (strict), else a new
  set on free servers, else (time sharing) the least loaded set after the first one
  tried moved to the end of the list; with no set of its class it waits; (4) when a set
  was released in (2), the waiting jobs are tried in order (a started job's successor
  in the list is skipped in that pass, as the original iterates a list it removes
  from).

Classes are visited in the order CPython 2.7 iterates the original's class dictionary
(:data:`CLASS_ORDER`), which decides which class gets free servers first.

Here the same state is kept by the policy and advanced at the same instants: the
simulator calls it at arrivals and completions and at the next step
(:meth:`GandivaPolicy.horizon`); a call between steps (a completion) changes nothing but
drops the finished job's placement (the original frees servers only at the next step).
The jobs a step runs are placed on their node set's servers (each job on :math:`g` GPUs
of its set's servers, exclusively: :math:`c_g g \le n_g G`), at their isolated speed.
The original's step credits whole steps and completes a job at the first step at or
after its work is done; here a job completes at the instant its work is done, at most
one step (10 s) earlier.

Scope. Memory shares are the original's (1 for every model at 959f9b0; below 1 the
original runs more jobs of a set than it has GPUs at full speed, which the core's
co-location does not express for more than two jobs). Every server must have the same
GPU count, one GPU type each; a heterogeneous cluster is taken as the original takes
servers (types are ignored when forming sets; a gang over servers of two types runs at
the slower type's rate), so every job must run on every type. A gang size outside the
classes is refused (the original exits).

Complexity per step: :math:`O(J \log J)` for J jobs in node sets (the load sorts).
"""

from __future__ import annotations

import dataclasses
import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from optsched.core.colocation import Colocation, PairRate
from optsched.core.instance import Instance
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.sim.placement import PLACEMENT_MODES, check_single_type_gangs, place_gang
from optsched.sim.policy import ClusterView

__all__ = ["gittins_index", "gittins_index_fixed", "gittins_index_grid", "expected_remaining",
           "GittinsIndex", "TiresiasPolicy", "Tiresias", "ORDERS", "QUEUE_ORDERS", "DEMOTIONS",
           "GITTINS_TIE_MARGIN", "CODE_THRESHOLDS", "ADAPTDL_THRESHOLDS",
           "DEFAULT_THRESHOLDS", "PROMOTE_KNOB", "PackingTiresiasPolicy",
           "full_speed_colocation", "TIRESIAS_SHARES", "TIRESIAS_DRAFT_SHARES",
           "GandivaPolicy", "CLASS_ORDER", "STEP", "SWITCH"]

#: Default starvation knob (the code's ``dlas-gpu``: promotion disabled); pass
#: ``promote_knob=`` (e.g. 1, 2, 4, 8 as in ``dlas-gpu-{1,2,4,8}``) to enable it.
PROMOTE_KNOB: float | None = None
CODE_THRESHOLDS = (3250.0, 7200.0)
ADAPTDL_THRESHOLDS = (3600.0 * 16,)
DEFAULT_THRESHOLDS = CODE_THRESHOLDS
#: Orders inside a 2D-LAS queue: running jobs first, arrival alone, or the public
#: simulator's persistent queue lists (``"original"``; see :class:`Tiresias`).
QUEUE_ORDERS = ("running_first", "arrival", "original")
#: When a job changes queue: at every decision from its attained service, or at the public
#: simulator's check instants, one queue per check (``"original"``).
DEMOTIONS = ("decision", "original")
#: ``gittins_scheme``: the paper's 2D-Gittins, or the public simulator's ``gittins``
GITTINS_SCHEMES = ("paper", "original")
#: ``scan``: a non-preemptive pass looks at every waiting job in order, or passes over
#: the one after each job it starts (the public simulator's ``lpjf``)
SCANS = ("all", "original")
#: ``expected_keys``: each job keyed by its own executed time, or as the public
#: simulator's ``shortest-expected`` keys them
EXPECTED_KEYS = ("own", "original")
#: Float noise below which a time or a service is the whole number next to it: the public
#: simulator's clock counts whole seconds, and ``demotion="original"`` floors like it.
_CLOCK_EPS = 1e-6
#: Orders that may decide at arrivals and completions only (``rounds=False``).
_EVENT_ORDERS = ("fifo", "gpus", "srtf", "srtf_gpu", "expected")
#: Orders of the policy (queue orders, and the baselines' single-queue orders).
ORDERS = ("las", "gittins", "fifo", "srtf", "srtf_gpu", "gpus", "expected")


def gittins_index(samples: np.ndarray, a: float) -> float:
    """Exact :math:`G(a)` (the supremum over Delta) for sorted positive ``samples``."""
    s = np.asarray(samples, dtype=float)
    i0 = int(np.searchsorted(s, a, side="right"))
    m = s.size - i0
    if m <= 0:
        return 0.0
    d = s[i0:] - a
    cnt = np.searchsorted(d, d, side="right")
    csum = np.cumsum(d)
    denom = csum[cnt - 1] + d * (m - cnt)
    return float(np.max(cnt / denom))


def gittins_index_fixed(samples: np.ndarray, a: float, delta: float,
                        code_quirk: bool = False) -> float:
    """:math:`P/E` at one fixed ``delta`` (the public simulator's variant).

    ``code_quirk=True`` reproduces ``cal_r_gittins_index``, whose E sums :math:`s_i`
    rather than :math:`s_i - a`.
    """
    s = np.asarray(samples, dtype=float)
    i0 = int(np.searchsorted(s, a, side="right"))
    m = s.size - i0
    if m <= 0:
        return 0.0
    d = s[i0:] - a
    c = int(np.searchsorted(d, delta, side="right"))
    top = d[:c].sum() + (a * c if code_quirk else 0.0)
    denom = top + delta * (m - c)
    return float(c / denom) if denom > 0 else 0.0


#: The public simulator's fixed Delta (``jobs.py``: ``gittins_delta = 3250``).
CODE_GITTINS_DELTA = 3250.0


def gittins_index_grid(samples: np.ndarray, a: float, delta: float = CODE_GITTINS_DELTA
                       ) -> float:
    r"""The index as Tiresias' simulator evaluates it: a step function on the sample grid.

    With samples :math:`s_0 \le \dots \le s_{n-1}` (:math:`n` of them), ``dlas-gpu-gittins``
    evaluates the index once per sample and looks it up: for attained service :math:`a`
    and :math:`i` the first sample with :math:`s_i > a`, the index is :math:`r(s_i - 1)`
    (so every job below the first sample has the same index, and two jobs between the
    same two samples tie, broken by submit time); :math:`0` when :math:`a \ge s_{n-1}`.
    For :math:`x = s_i - 1`, :math:`j` the first sample above :math:`x + \Delta` (or
    :math:`j = n - 1` when :math:`x + \Delta > s_{n-1} - 1`):

    .. math::
        P = [\tfrac{j - i}{n - i}]_5, \quad
        E = \Big[\Big\lfloor \frac{\sum_{i \le l < j} s_l + \Delta (n - j)}{n - i}
        \Big\rfloor\Big]_5, \quad r = [10^6 P / E]_4,

    :math:`[\cdot]_d` rounding to d decimals, halves away from zero. E sums :math:`s_l`,
    not :math:`s_l - x`
    (the ``gittins_code_quirk`` of :func:`gittins_index_fixed`), and is floored because
    the simulator divides integers in Python 2 (it reads whole-second samples); for
    non-integral samples the division is exact. :math:`O(n)` per call.
    """
    s = np.asarray(samples, dtype=float)
    n = s.size
    if n == 0 or a >= s[-1]:
        return 0.0
    i = int(np.searchsorted(s, a, side="right"))
    x = s[i] - 1.0
    i = int(np.searchsorted(s, x, side="right"))
    y = x + delta
    j = n - 1 if y > s[-1] - 1.0 else int(np.searchsorted(s, y, side="right"))
    P = _round_half_away((j - i) / (n - i), 5)
    top = float(s[i:j].sum()) + delta * (n - j)
    integral = bool(np.all(s == np.floor(s))) and float(delta).is_integer()
    E = _round_half_away(top // (n - i) if integral else top / (n - i), 5)
    return _round_half_away(P * 1e6 / E, 4) if E > 0 else 0.0


def _round_half_away(x: float, digits: int) -> float:
    """``x`` rounded to ``digits`` decimals, halves away from zero (Python 2's ``round``,
    which the simulator's index uses; Python 3 rounds halves to even)."""
    q = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return float(q)


#: Relative gap below which two fast Gittins values are recomputed with the direct
#: formula before they are ordered (both forms are within ~1e-13 relative for 1,000
#: samples; the margin is scaled up with the number of samples).
GITTINS_TIE_MARGIN = 1e-9


class GittinsIndex:
    """:math:`G(a)` from an empirical distribution of job GPU-time (sorted once)."""

    def __init__(self, samples: Sequence[float] | np.ndarray | None = None, *,
                 delta: float | None = None, code_quirk: bool = False, grid: bool = False):
        if samples is None:
            from optsched.catalog import tiresias_gpu_time_samples
            samples = tiresias_gpu_time_samples()
        s = np.sort(np.asarray(samples, dtype=float).ravel())
        if s.size == 0 or not np.all(np.isfinite(s)) or s[0] <= 0:
            raise InvalidOption("samples", s[:3].tolist(), "need positive finite samples")
        self.samples = s
        self.delta = delta
        self.code_quirk = code_quirk
        self.grid = grid
        self._memo: dict[float, float] = {}
        self._fast: dict[float, float] = {}
        self._sorted = s.tolist()
        self._ends = np.searchsorted(s, s, side="right")
        self._envelopes: dict[int, tuple[list[float], list[float], list[float], int]] = {}
        # the envelopes built so far, flat (for fast_many): breaks, line constants F_i,
        # counts c_i, and per interval i0 where its breaks and lines start (-1: not
        # built) and how many there are
        n = s.size
        self._flat_b, self._flat_f, self._flat_c = np.zeros(0), np.zeros(0), np.zeros(0)
        self._b_start = np.full(n, -1, dtype=np.int64)
        self._b_len = np.zeros(n, dtype=np.int64)
        self._l_start = np.full(n, -1, dtype=np.int64)
        self._l_len = np.zeros(n, dtype=np.int64)
        #: every flat break as (interval, break) in a complex number, sorted: numpy
        #: orders complex numbers by real then imaginary part, so one searchsorted finds
        #: each value's place among its own interval's breaks
        self._keys = np.zeros(0, dtype=complex)
        #: per interval, the position in ``_keys`` of its first break (of the first
        #: break of a later interval when it has none)
        self._key_first = np.zeros(n + 1, dtype=np.int64)
        self.tie_margin = max(GITTINS_TIE_MARGIN, 1e4 * s.size * np.finfo(float).eps)

    def __call__(self, a: float) -> float:
        # a pure function of a: a waiting job's attained service, hence its index,
        # stays the same from one decision to the next
        g = self._memo.get(a)
        if g is None:
            if len(self._memo) > 100_000:
                self._memo.clear()
            if self.grid:
                g = gittins_index_grid(self.samples, a, self.delta or CODE_GITTINS_DELTA)
            elif self.delta is None:
                g = gittins_index(self.samples, a)
            else:
                g = gittins_index_fixed(self.samples, a, self.delta, self.code_quirk)
            self._memo[a] = g
        return g

    def _envelope(self, i0: int) -> tuple[list[float], list[float], list[float], int]:
        r"""Lines ``(F_i, c_i)`` of the lower envelope of :math:`(F_i + m x) / c_i` over
        :math:`x \ge 0` for attained service just below sample ``i0`` (module
        docstring), with the ``x`` where each next line takes over."""
        env = self._envelopes.get(i0)
        if env is not None:
            return env
        s = self.samples
        n = s.size
        m = n - i0
        t = s[i0:] - s[i0]
        ends = self._ends[i0:] - i0  # c_i: samples up to and including s_i
        last = np.flatnonzero(ends == np.arange(1, m + 1))  # one candidate per value
        c = ends[last]
        F = np.cumsum(t)[c - 1] + t[last] * (m - c)
        # line i: y = F_i / c_i + (m / c_i) x; slopes strictly decrease along c
        b_all, k_all = (F / c).tolist(), (m / c).tolist()
        keep: list[int] = []
        for i in range(len(b_all)):
            while len(keep) >= 2:
                p, q = keep[-2], keep[-1]
                # q is never strictly lowest when i meets p no later than q does
                if (b_all[i] - b_all[p]) * (k_all[p] - k_all[q]) <= \
                        (b_all[q] - b_all[p]) * (k_all[p] - k_all[i]):
                    keep.pop()
                else:
                    break
            keep.append(i)
        breaks = [(b_all[q] - b_all[p]) / (k_all[p] - k_all[q])
                  for p, q in zip(keep, keep[1:])]
        env = (breaks, [float(F[i]) for i in keep], [float(c[i]) for i in keep], m)
        self._envelopes[i0] = env
        return env

    def fast(self, a: float) -> float:
        r""":math:`G(a)` from the interval's envelope (within :math:`(m + 6)\epsilon`
        relative of :func:`gittins_index`; not bit for bit)."""
        g = self._fast.get(a)
        if g is not None:
            return g
        i0 = bisect_right(self._sorted, a)
        if i0 >= len(self._sorted):
            g = 0.0
        else:
            breaks, F, c, m = self._envelope(i0)
            x = self._sorted[i0] - a
            p = bisect_right(breaks, x)
            # the neighbours too: a rounded crossing point may pick the wrong side
            g = max(c[q] / (F[q] + m * x)
                    for q in range(max(0, p - 1), min(len(F), p + 2)))
        if len(self._fast) > 100_000:
            self._fast.clear()
        self._fast[a] = g
        return g

    def _flatten(self, intervals: np.ndarray) -> None:
        """Add the envelopes of ``intervals`` (unique sample indices) not yet flat."""
        missing = intervals[self._l_start[intervals] < 0].tolist()
        if not missing:
            return
        bs, fs, cs = [self._flat_b], [self._flat_f], [self._flat_c]
        nb, nl = self._flat_b.size, self._flat_f.size
        for i in missing:
            breaks, F, c, _ = self._envelope(i)
            self._b_start[i], self._b_len[i] = nb, len(breaks)
            self._l_start[i], self._l_len[i] = nl, len(F)
            nb += len(breaks)
            nl += len(F)
            bs.append(np.asarray(breaks, dtype=float))
            fs.append(np.asarray(F, dtype=float))
            cs.append(np.asarray(c, dtype=float))
        self._flat_b, self._flat_f, self._flat_c = (np.concatenate(bs), np.concatenate(fs),
                                                    np.concatenate(cs))
        fresh = np.empty(nb - self._keys.size, dtype=complex)
        fresh.real = np.repeat(np.array(missing, dtype=float), self._b_len[missing])
        fresh.imag = np.concatenate(bs[1:])
        fresh.sort()
        self._keys = np.insert(self._keys, np.searchsorted(self._keys, fresh), fresh)
        self._key_first = np.searchsorted(self._keys.real,
                                          np.arange(self.samples.size + 1, dtype=float),
                                          side="left")

    def fast_many(self, a: Sequence[float] | np.ndarray) -> np.ndarray:
        """:meth:`fast` of every value of ``a`` at once, the same floats (the same
        operations, elementwise in numpy): a binary search per value in its interval's
        breaks, run for all values together, then the three neighbouring lines."""
        vals = np.asarray(a, dtype=float).ravel()
        s = self.samples
        i0 = np.searchsorted(s, vals, side="right")
        out = np.zeros(vals.size)
        inside = np.flatnonzero(i0 < s.size)
        if not inside.size:
            return out
        ii = i0[inside]
        need = ii[self._l_start[ii] < 0]
        if need.size:
            self._flatten(np.unique(need))
        x = s[ii] - vals[inside]
        # bisect_right within each value's own breaks: the breaks of lower intervals,
        # and those of its interval up to x, come before (ii, x)
        at = np.empty(ii.size, dtype=complex)
        at.real, at.imag = ii, x
        p = np.searchsorted(self._keys, at, side="right") - self._key_first[ii]
        n_lines, l0 = self._l_len[ii], self._l_start[ii]
        m = s.size - ii
        best = np.full(ii.size, -np.inf)
        for d in (-1, 0, 1):  # the neighbours too, as in fast()
            q = p + d
            ok = (q >= 0) & (q < n_lines)
            idx = l0 + np.minimum(np.maximum(q, 0), n_lines - 1)
            val = self._flat_c[idx] / (self._flat_f[idx] + m * x)
            best = np.where(ok, np.maximum(best, val), best)
        out[inside] = best
        return out

    def ranking_keys(self, a: Sequence[float] | np.ndarray) -> np.ndarray:
        r"""Keys that order (and tie) as :math:`G` at each value of ``a`` does.

        The fast value of each (:meth:`fast`), except where two fast values of different
        attained services are within :attr:`tie_margin` relative: those get the direct
        :func:`gittins_index`. The fast and direct values are each within
        :math:`(m + 6)\epsilon` of :math:`G`, far below the margin, so every order
        between a fast value and another key is the direct values' order.
        """
        vals = np.asarray(a, dtype=float).ravel()
        if self.delta is not None or self.grid:  # no fast form for these variants
            return np.array([self(x) for x in vals.tolist()], dtype=float)
        keys = self.fast_many(vals)
        if keys.size < 2:
            return keys
        o = np.argsort(keys, kind="stable")
        ks, av = keys[o], vals[o]
        close = (ks[1:] - ks[:-1] <= self.tie_margin * ks[1:]) & (av[1:] != av[:-1])
        if close.any():
            # in key order: both ends of each close pair, then every job whose attained
            # service is one of theirs. Equal a gives equal keys, so those jobs share a
            # run of equal keys; a run holding two values of a holds a close pair at
            # each change of value, so every one of its jobs is near already. Marking
            # the whole run of each near job is therefore the same.
            near_s = np.zeros(keys.size, dtype=bool)
            near_s[1:] = close
            near_s[:-1] |= close
            run = np.empty(keys.size, dtype=np.int64)
            run[0] = 0
            np.cumsum(ks[1:] != ks[:-1], out=run[1:])
            hit = np.zeros(int(run[-1]) + 1, dtype=bool)
            hit[run[near_s]] = True
            near = np.zeros(keys.size, dtype=bool)
            near[o] = hit[run]
            for i in np.flatnonzero(near).tolist():
                keys[i] = self(float(vals[i]))
        return keys


def expected_remaining(samples: np.ndarray, a: float) -> float:
    r"""The public simulator's ``shortest-expected`` key for a job that has run ``a``.

    With sorted samples :math:`s_0 \le \dots \le s_{n-1}` and :math:`i` the first with
    :math:`s_i > a`: the mean of :math:`s_i, \dots, s_{n-2}` rounded to 2 decimals (the
    largest sample is left out), :math:`s_{n-1}` when :math:`i = n - 1`, and 0 when
    :math:`a \ge s_{n-1}`. It is the expected *total* service of a job that survived
    :math:`a` (nothing subtracts :math:`a`). :math:`O(n)`.
    """
    s = np.asarray(samples, dtype=float)
    return _expected_after(s, int(np.searchsorted(s, a, side="right")))


def _expected_after(s: np.ndarray, i: int) -> float:
    """:func:`expected_remaining` for an attained service with ``i`` samples at or below
    it (the key depends on the service only through ``i``)."""
    n = s.size
    if i >= n:
        return 0.0
    if i == n - 1:
        return float(s[-1])
    return _round_half_away(float(s[i:n - 1].sum()) / (n - 1 - i), 2)


class TiresiasPolicy:
    r"""Queue-ordered gang scheduler: 2D-LAS, 2D-Gittins and the baselines (module docstring).

    Parameters
    ----------
    order : {"las", "gittins", "fifo", "srtf", "srtf_gpu", "gpus", "expected"}
        Order within a queue (LAS: arrival; Gittins: index) or a single-queue order:
        arrival (``fifo``), remaining time (``srtf``), remaining GPU-time
        :math:`W_j \times` remaining time (``srtf_gpu``), gang size then arrival
        (``gpus``), expected remaining service from the Gittins samples (``expected``,
        :func:`expected_remaining`). Ties: arrival, then instance order.
    dims : {1, 2}
        Attained service as GPU-seconds (2) or executed seconds (1).
    thresholds : sequence of float or None
        Queue thresholds (K-1 values, increasing); ``None`` = continuous LAS.
    promote_knob : float or None
        PROMOTE_KNOB; ``None`` disables starvation promotion.
    placement : {"spread", "consolidated", "yarn", "random", "crandom"}
        Node choice (:func:`optsched.sim.placement.place_gang`).
    preemptive : bool
        ``False`` keeps running jobs running (FIFO / YARN-CS).
    queue_order : {"running_first", "arrival", "original"}
        Order inside a discretised 2D-LAS queue. ``"running_first"``: the queue's jobs
        that ran in the previous decision, then its waiting ones, each by arrival (a
        waiting job never preempts a running job of its own queue). ``"arrival"``:
        arrival alone (an older waiting job preempts a running job of the same queue).
        ``"original"``: the public simulator's persistent queue lists: an arriving job
        is appended to queue 0, a job that changes queue (demotion, promotion) is
        appended at the end of its new queue, behind that queue's waiting jobs, and only
        after each scheduling pass are a queue's selected jobs moved ahead of its
        unselected ones (stable). It differs from ``"running_first"`` in the pass in
        which a job is demoted (it is then the last of its new queue, not among the
        running jobs) and in the order of waiting jobs (list order, not arrival).
    demotion : {"decision", "original"}
        ``"decision"`` (default, the paper's rule): a job's queue is the one its attained
        service falls in at each decision (decisions at arrivals, completions and round
        boundaries). ``"original"``: as the public simulator, which keeps each job's
        queue as state and checks a running job only at its events: decisions happen at
        arrivals, completions and the check instants, not at round boundaries
        (``periodic = False``); at a check, a running job in queue :math:`q < K-1` whose
        service reached :math:`Q_{q+1}` moves down one queue, and the next check of a
        running job in queue :math:`q` is at :math:`t + \max(1, \lfloor (Q_{q+1} - e)
        / W \rfloor)` with :math:`e` its executed *seconds* since promotion (the
        simulator subtracts seconds from a GPU-second threshold and divides integers:
        a 4-GPU job with :math:`Q_1 = 3250` is checked at 812 s, at 3,248 GPU-s still
        below the threshold, and demoted at the next check, 1,421 s and 5,684 GPU-s,
        unless another event comes first). 1D (``dims=1``): :math:`t + \max(1,
        \lfloor Q_{q+1} - e \rfloor)`. Pending promotions add :math:`t + (\text{knob}
        \cdot e - \text{waited})`.
    skip : bool
        ``True``: a job whose gang does not fit is skipped and those behind it may start
        (Tiresias' gang scheduling); ``False``: it blocks the queue (YARN-CS).
    rounds : bool
        Also decide at round boundaries (``periodic``). ``False`` (orders ``fifo``,
        ``gpus``, ``srtf``, ``srtf_gpu``, ``expected``): decide at arrivals and
        completions only, as the public simulator's single-queue schedulers do. Under a
        static order (arrival, gang size) or remaining time (a running job's only falls,
        a waiting job's is fixed) the selected set changes only at those instants, so
        the decisions are the same with fewer calls; the ``expected`` key of a running
        job grows between them and is then re-read only at the next event.
    gittins_samples, gittins_delta, gittins_code_quirk
        Gittins distribution (default: the catalog's Tiresias samples), fixed Delta.
    gittins_grid : bool
        The public simulator's index (:func:`gittins_index_grid`: a step function of the
        sample grid, fixed Delta ``gittins_delta`` or 3250, E summing :math:`s_l`,
        rounded): every job below the first sample has the same index, and ties go to
        the earlier submission. The grid formula fixes E itself, so
        ``gittins_code_quirk`` must be left unset with it.
    gittins_scheme : {"paper", "original"}
        ``"paper"`` (default): 2D-Gittins as in §3.2, the highest index first.
        ``"original"``: the public simulator's ``--schedule=gittins`` (``run_sim.py``
        at 959f9b0, whose branch crashes unless its job table is stored where the index
        reads it), which differs from the paper in two rules: one list without queues
        sorted by the index in *ascending* order (the lowest index first; its
        ``dlas-gpu-gittins`` sorts descending), and the service fed to the index is a
        running job's GPU-seconds but a waiting job's executed seconds, in whole
        seconds. It decides at arrivals and completions only, as that scheme does
        (``periodic = False``). Needs ``order="gittins"``, ``thresholds=None``,
        ``promote_knob=None`` and ``dims=2``. Offered to compare with the original; the
        lowest-first order is the original's, not the paper's definition.
    scan : {"all", "original"}
        How a non-preemptive pass walks the waiting jobs. ``"all"`` (default): each in
        order, until one does not fit (``skip=False``) or past it. ``"original"``: the
        public simulator's ``lpjf`` (``longest_pending_first_sim_jobs`` in ``run_sim.py``
        at 959f9b0), which removes a started job from the pending list while iterating
        over that list, so the job right after each started one is not looked at in
        that pass (the simulator's ``yarn`` and ``fjf`` passes defer the removal for this
        reason; ``lpjf`` does not). Needs ``preemptive=False``. Offered to compare with
        the original; it is not the definition of longest-pending-first.
    expected_keys : {"own", "original"}
        Keys of the ``expected`` order. ``"own"`` (default): each job's
        :func:`expected_remaining` of its own executed seconds. ``"original"``: the
        public simulator's ``shortest-expected`` (``shortest_first_sim_jobs`` in
        ``run_sim.py`` at 959f9b0): a job's key is set once, at arrival, to the key of
        0 s; at each event every running job's key is computed from its whole executed
        seconds but stored on the most recently arrived job (the loop writes through
        the variable of the arrival loop), each running job in turn, in the list's
        order; the list is kept across events (arrivals appended, completed jobs
        removed) and sorted stably by the keys. Its order is then nearly arrival
        order. Needs ``order="expected"``. Offered to compare with the original; it is
        not the definition of the expected-remaining order.
    """

    event_driven = True

    def __init__(self, order: str = "las", *, dims: int = 2,
                 thresholds: Sequence[float] | None = DEFAULT_THRESHOLDS,
                 promote_knob: float | None = PROMOTE_KNOB, placement: str = "spread",
                 preemptive: bool = True, gittins_samples=None,
                 gittins_delta: float | None = None, gittins_code_quirk: bool = False,
                 gittins_grid: bool = False, queue_order: str = "running_first",
                 demotion: str = "decision", skip: bool = True, rounds: bool = True,
                 gittins_scheme: str = "paper", scan: str = "all",
                 expected_keys: str = "own", name: str | None = None):
        if order not in ORDERS:
            raise InvalidOption("order", order, f"must be one of {ORDERS}")
        if order != "gittins":
            for k, v in (("gittins_delta", gittins_delta),
                         ("gittins_code_quirk", gittins_code_quirk or None),
                         ("gittins_grid", gittins_grid or None)):
                if v is not None:
                    raise InvalidOption(k, v, f"only 2D-Gittins takes it (order is {order!r})")
            if gittins_samples is not None and order != "expected":
                raise InvalidOption("gittins_samples", "...", "only 2D-Gittins and the "
                                    f"expected-remaining order take it (order is {order!r})")
        if gittins_scheme not in GITTINS_SCHEMES:
            raise InvalidOption("gittins_scheme", gittins_scheme,
                                f"must be one of {GITTINS_SCHEMES}")
        if gittins_scheme == "original":
            # the original's scheme has one list, no queues to move between, and a
            # service of its own per job state
            needs: tuple[tuple[str, Any, Any], ...] = (
                ("order", order, "gittins"), ("thresholds", thresholds, None),
                ("promote_knob", promote_knob, None), ("dims", dims, 2))
            for field_, got, want in needs:
                if got != want:
                    raise InvalidOption(field_, got,
                                        f"gittins_scheme='original' needs {field_}={want!r}")
        if gittins_grid and gittins_code_quirk:
            raise InvalidOption("gittins_code_quirk", gittins_code_quirk, "gittins_grid "
                                "evaluates the simulator's own formula, which fixes E")
        if demotion not in DEMOTIONS:
            raise InvalidOption("demotion", demotion, f"must be one of {DEMOTIONS}")
        if demotion != "decision" and (order not in ("las", "gittins") or thresholds is None):
            raise InvalidOption("demotion", demotion, "only discretised 2D-LAS and "
                                "2D-Gittins move jobs between queues")
        if dims not in (1, 2):
            raise InvalidOption("dims", dims, "must be 1 or 2")
        if queue_order not in QUEUE_ORDERS:
            raise InvalidOption("queue_order", queue_order, f"must be one of {QUEUE_ORDERS}")
        if queue_order != "running_first" and (order != "las" or thresholds is None):
            raise InvalidOption("queue_order", queue_order, "only discretised 2D-LAS has "
                                "an order inside a queue to choose")
        if not isinstance(skip, bool):
            raise InvalidOption("skip", skip, "must be True or False")
        if expected_keys not in EXPECTED_KEYS:
            raise InvalidOption("expected_keys", expected_keys,
                                f"must be one of {EXPECTED_KEYS}")
        if expected_keys == "original" and order != "expected":
            raise InvalidOption("expected_keys", expected_keys, "only the expected-remaining "
                                f"order has these keys (order is {order!r})")
        if scan not in SCANS:
            raise InvalidOption("scan", scan, f"must be one of {SCANS}")
        if scan == "original" and preemptive:
            raise InvalidOption("scan", scan, "the original's pass over its pending list "
                                "belongs to a non-preemptive scheduler (preemptive=False)")
        if rounds is not True and (rounds is not False or order not in _EVENT_ORDERS):
            raise InvalidOption("rounds", rounds, "must be True, or False for the orders "
                                f"{_EVENT_ORDERS}")
        if placement not in PLACEMENT_MODES:
            raise InvalidOption("placement", placement, f"must be one of {PLACEMENT_MODES}")
        if thresholds is not None:
            th = tuple(float(x) for x in thresholds)
            if any(x <= 0 for x in th) or any(b <= a for a, b in zip(th, th[1:])):
                raise InvalidOption("thresholds", thresholds, "must be positive and increasing")
            thresholds = th
        if promote_knob is not None and thresholds is None:
            raise InvalidOption("promote_knob", promote_knob, "promotion moves jobs between "
                                "queues; continuous LAS (thresholds=None) has none")
        if promote_knob is not None and not promote_knob > 0:
            raise InvalidOption("promote_knob", promote_knob, "must be > 0 or None")
        self.order = order
        self.dims = dims
        self.thresholds = thresholds
        self.promote_knob = promote_knob
        self.placement = placement
        self.preemptive = preemptive
        self.queue_order = queue_order
        self.demotion = demotion
        # the simulator's queue checks replace the round boundaries as decision instants
        self.periodic = rounds and demotion != "original" and gittins_scheme != "original"
        self.gittins_scheme = gittins_scheme
        self.skip = skip
        self.scan = scan
        self.expected_keys = expected_keys
        self.needs_work = order in ("srtf", "srtf_gpu")
        self.name = name or f"tiresias_{order}"
        self._gittins: GittinsIndex | None = (GittinsIndex(gittins_samples, delta=gittins_delta,
                                      code_quirk=gittins_code_quirk, grid=gittins_grid)
                         if order == "gittins" else None)
        self._expected: np.ndarray | None = None
        if order == "expected":
            if gittins_samples is None:
                from optsched.catalog import tiresias_gpu_time_samples
                gittins_samples = tiresias_gpu_time_samples()
            s = np.sort(np.asarray(gittins_samples, dtype=float).ravel())
            if s.size == 0 or not np.all(np.isfinite(s)) or s[0] <= 0:
                raise InvalidOption("gittins_samples", s[:3].tolist(),
                                    "need positive finite samples")
            self._expected = s
            # the key of each sample slot i, computed at its first use (NaN: not yet)
            self._expected_keys = np.full(s.size + 1, np.nan)
        self._lists_kept = queue_order == "original" or demotion == "original"
        self.reset()

    def reset(self) -> None:
        self._type_order: dict[bytes, list[int]] = {}
        self._held_memo: tuple[np.ndarray, bool] | None = None
        self._lease: dict[tuple[Placement, ...], list[tuple[int, int, int]]] = {}
        self._base_service: dict[str, float] = {}
        self._base_exec: dict[str, float] = {}
        self._pending_since: dict[str, float] = {}
        self._promotions = 0
        # persistent queues (queue_order / demotion "original"): job -> queue, and each
        # queue's list in the simulator's order
        self._queue_of: dict[str, int] = {}
        self._lists: list[list[str]] = [[] for _ in range(len(self.thresholds or ()) + 1)]
        self._wake: float | None = None
        # expected_keys="original": the runnable list, each job's key, the job the
        # arrival loop last named
        self._x_list: list[str] = []
        self._x_key: dict[str, float] = {}
        self._x_last: str | None = None

    def stats(self) -> dict[str, Any]:
        return {"promotions": self._promotions}

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    # ------------------------------------------------------------------ priorities
    def service(self, view: ClusterView) -> np.ndarray:
        """Attained service used for queueing (since the last promotion)."""
        raw = view.attained if self.dims == 2 else view.executed
        if not self._base_service:  # no job promoted yet
            return raw
        base = np.array([self._base_service.get(j, 0.0) for j in view.ids])
        return raw - base if base.size else raw

    def queues(self, view: ClusterView) -> np.ndarray:
        if self.demotion == "original":  # the queues kept as state (_sync_queues)
            qof = self._queue_of
            return np.array([qof.get(j, 0) for j in view.ids], dtype=np.int64)
        return self._derived_queues(view)

    def _derived_queues(self, view: ClusterView) -> np.ndarray:
        svc = self.service(view)
        if self.thresholds is None:
            return np.zeros(len(svc), dtype=np.int64)
        return np.searchsorted(np.asarray(self.thresholds), svc, side="right")

    def ranking(self, view: ClusterView, rows: np.ndarray | None = None) -> np.ndarray:
        """Visible-job indices in scheduling order (highest priority first); with
        ``rows`` (ascending visible-job indices), those jobs only, in the order the whole
        ranking gives them.

        The order is a lexicographic sort of per-job keys, so restricting it to some
        jobs is sorting those jobs by their keys. 2D-Gittins computes the index of those
        jobs only: their ranking keys may then differ from the whole ranking's (a fast
        value where a close neighbour outside ``rows`` made it direct), but both are
        within the tie margin of :math:`G`, so they order the jobs alike
        (:meth:`GittinsIndex.ranking_keys`).
        """
        if rows is not None:
            if self._gittins is not None and self.thresholds is not None \
                    and not self._lists_kept:
                g = self._gittins.ranking_keys(view.attained[rows])
                q = self.queues(view)[rows]
                return rows[np.lexsort((rows, view.arrivals[rows], -g, q))]
            full = self.ranking(view)
            mask = np.zeros(len(view.ids), dtype=bool)
            mask[rows] = True
            return full[mask[full]]
        n = len(view.ids)
        arr = view.arrivals
        tie = np.arange(n)
        if self.order == "fifo":
            if not n or bool((arr[1:] >= arr[:-1]).all()):
                return tie  # the simulator lists visible jobs by arrival, then index
            return np.lexsort((tie, arr))
        if self.order in ("srtf", "srtf_gpu"):
            T = view.throughput_matrix
            left = view.remaining / (view.workers * T.max(axis=1))
            if self.order == "srtf_gpu":
                left = left * view.workers
            return np.lexsort((tie, arr, left))
        if self.order == "gpus":
            return np.lexsort((tie, arr, view.workers))
        if self.expected_keys == "original":
            pos = view.position
            return np.array([pos[j] for j in self._x_list], dtype=np.int64)
        if self._expected is not None:
            # a job's key depends on its service only through its sample slot: one
            # vectorised search per decision, each slot's key computed once per run
            return np.lexsort((tie, arr, self._expected_of(self.service(view))))
        if self.gittins_scheme == "original":
            # lowest index first; a running job's index from its GPU-seconds, a waiting
            # job's from its executed seconds (the public simulator's gittins scheme)
            svc = np.floor(np.where(view.ran_before, view.attained, view.executed))
            assert self._gittins is not None
            return np.lexsort((tie, arr, self._gittins.ranking_keys(svc)))
        q = self.queues(view)
        if self.thresholds is None:  # continuous LAS
            return np.lexsort((tie, arr, self.service(view)))
        if self._lists_kept:  # position in the simulator's queue lists breaks ties
            pos = {jid: m for m, jid in enumerate(view.ids)}
            listed = np.array([pos[j] for lst in self._lists for j in lst], dtype=np.int64)
            if self.queue_order == "original":
                return listed
            tie = np.empty(n, dtype=np.int64)
            tie[listed] = np.arange(n)
        if self._gittins is not None:
            if self._lists_kept:  # the simulator's index reads whole GPU-seconds since
                svc = np.floor(self.service(view))  # the last promotion
            else:
                svc = view.attained  # the index uses the job's total GPU-time attained
            g = self._gittins.ranking_keys(svc)
            return np.lexsort((tie, arr, -g, q))
        if self.queue_order == "running_first":
            # Tiresias keeps a queue's running jobs ahead of its waiting ones: a waiting
            # job never preempts a running job of its own queue
            return np.lexsort((tie, arr, ~view.ran_before, q))
        return np.lexsort((tie, arr, q))

    def _promote(self, view: ClusterView) -> None:
        if self.promote_knob is None or self.thresholds is None:
            return  # the waiting times are read only by the promotion rule
        now = view.time
        running = view.previous_by_job
        pending = self._pending_since
        for jid in view.ids:
            if jid in running:
                pending.pop(jid, None)
            elif jid not in pending:
                pending[jid] = now
        q = self.queues(view).tolist()
        executed, attained = view.executed.tolist(), view.attained.tolist()
        for m, jid in enumerate(view.ids):
            if q[m] == 0 or jid in running:
                continue
            ran = executed[m] - self._base_exec.get(jid, 0.0)
            if ran <= 0:
                continue
            waited = now - pending.get(jid, now)
            if waited >= ran * self.promote_knob:
                raw = attained[m] if self.dims == 2 else executed[m]
                self._base_service[jid] = raw
                self._base_exec[jid] = executed[m]
                pending[jid] = now
                self._promotions += 1
                if self.demotion == "original":
                    self._move(jid, 0)

    # ------------------------------------------------------------------ queue state
    def _move(self, jid: str, q: int) -> None:
        """Append ``jid`` at the end of queue ``q`` (the simulator's list operations)."""
        old = self._queue_of.get(jid)
        if old is not None:
            self._lists[old].remove(jid)
        self._queue_of[jid] = q
        self._lists[q].append(jid)

    def _sync_queues(self, view: ClusterView) -> None:
        """Update the kept queues at a decision: completed jobs leave, arrivals join
        queue 0 (in arrival order), then each job whose queue changed is appended to
        its new queue in arrival order: with ``demotion="original"`` a job that ran is
        moved one queue down when its service reached its queue's threshold; otherwise
        to the queue its service falls in."""
        qof = self._queue_of
        present = set(view.ids)
        gone = [j for j in qof if j not in present]
        if gone:
            dead = set(gone)
            for lst in self._lists:
                lst[:] = [j for j in lst if j not in dead]
            for j in gone:
                del qof[j]
        for jid in view.ids:
            if jid not in qof:
                qof[jid] = 0
                self._lists[0].append(jid)
        th = self.thresholds or ()
        if self.demotion == "original":
            running = view.previous_by_job
            svc = self.service(view).tolist()
            for m, jid in enumerate(view.ids):
                q = qof[jid]
                if jid in running and q < len(th) and svc[m] >= th[q] - _CLOCK_EPS:
                    self._move(jid, q + 1)
        else:
            for m, q in enumerate(self._derived_queues(view).tolist()):
                jid = view.ids[m]
                if qof[jid] != q:
                    self._move(jid, q)

    def _after_pass(self, view: ClusterView, out: list[Placement]) -> None:
        """Selected jobs move ahead of the others in each kept queue (stable), and the
        next queue check (``demotion="original"``) is set for :meth:`horizon`."""
        sel = {p.job for p in out}
        for lst in self._lists:
            lst[:] = [j for j in lst if j in sel] + [j for j in lst if j not in sel]
        self._wake = None
        if self.demotion != "original":
            return
        th = self.thresholds or ()
        t = view.time
        executed = view.executed.tolist()
        workers = view.workers.tolist()
        wake = math.inf
        for m, jid in enumerate(view.ids):
            q = self._queue_of[jid]
            e = executed[m] - self._base_exec.get(jid, 0.0)
            if jid in sel:
                if q < len(th):
                    step = (th[q] - e) / workers[m] if self.dims == 2 else th[q] - e
                    wake = min(wake, t + max(1.0, math.floor(step + _CLOCK_EPS)))
            elif self.promote_knob is not None and q > 0 and e > 0:
                since = self._pending_since.get(jid, t)
                left = e * self.promote_knob - (t - since)
                if left > 0:
                    wake = min(wake, t + left)
        self._wake = wake if math.isfinite(wake) else None

    def horizon(self) -> float | None:
        """The next queue check of ``demotion="original"`` (else ``None``)."""
        return self._wake

    # ------------------------------------------------------------------ allocation
    def _types(self, view: ClusterView, m: int) -> list[int]:
        """Usable GPU types of visible job ``m``, fastest first (a function of its
        throughput row, remembered per row)."""
        T = view.throughput_matrix[m]
        key = T.tobytes()
        ks = self._type_order.get(key)
        if ks is None:
            usable = np.flatnonzero(T > 0)
            ks = self._type_order[key] = usable[np.argsort(-T[usable], kind="stable")].tolist()
        return ks

    def _need(self, view: ClusterView, prev: list[Placement]) -> list[tuple[int, int, int]]:
        """(node index, type index, GPUs) of each previous placement (remembered)."""
        key = tuple(prev)
        need = self._lease.get(key)
        if need is None:
            if len(self._lease) > 100_000:
                self._lease.clear()
            cols = {t: k for k, t in enumerate(view.gpu_types)}
            node_index = view.cluster.node_index
            need = self._lease[key] = [(node_index(p.node), cols[p.gpu_type], p.gpus)
                                       for p in prev]
        return need

    def _held(self, view: ClusterView) -> tuple[np.ndarray, bool]:
        """GPUs held per (node, type) by the previous decision, and whether they fit the
        capacity (checked once per previous decision)."""
        held = view.held_before
        memo = self._held_memo
        if memo is not None and memo[0] is held:
            return held, memo[1]
        fits = bool((held <= view.capacity).all())
        self._held_memo = (held, fits)
        return held, fits

    def _all_keep(self, view: ClusterView) -> list[Placement] | None:
        """When every visible job ran in the previous decision and those placements fit
        the cluster together, every job keeps its GPUs (each lease extension succeeds,
        in any order): the previous placements (the two passes would list the same
        placements in priority order; a decision is a set); else ``None``."""
        if view.previous_count != len(view.ids) or not view.ids or not view.ran_before.all():
            return None
        if not self._held(view)[1]:
            return None
        return list(view.previous)

    def _try(self, view, free, m: int, left: list[int], fresh: bool = False
             ) -> list[Placement] | None:
        """Place visible job ``m`` on ``free`` (updated, with ``left``, the free GPUs
        per type), or return ``None``; ``fresh``: the job held nothing before."""
        jid = view.ids[m]
        prev = None if fresh else view.previous_by_job.get(jid)
        if prev:  # keep the previous GPUs when they are all free (no migration)
            need = self._need(view, prev)
            if all(free[h, k] >= g for h, k, g in need):
                for h, k, g in need:
                    free[h, k] -= g
                    left[k] -= g
                return list(prev)
        workers = int(view.workers[m])
        for k in self._types(view, m):
            if left[k] < workers:  # place_gang would find too few GPUs of type k
                continue
            ps = place_gang(view, free, jid, workers, k, self.placement, fresh=fresh)
            if ps is not None:
                left[k] -= workers
                return ps
        return None

    def allocate(self, state: ClusterView) -> list[Placement]:
        view = state
        self._promote(view)
        if self.expected_keys == "original":
            self._sync_expected(view)
        if not self._lists_kept:
            return self._decide(view)
        self._sync_queues(view)
        out = self._decide(view)
        self._after_pass(view, out)
        return out

    def _expected_of(self, service: np.ndarray) -> np.ndarray:
        """:func:`expected_remaining` of each service (each sample slot's key computed
        once per run)."""
        s, table = self._expected, self._expected_keys
        assert s is not None
        slot = np.searchsorted(s, service, side="right")
        for i in np.unique(slot[np.isnan(table[slot])]).tolist():
            table[i] = _expected_after(s, i)
        return table[slot]

    def _sync_expected(self, view: ClusterView) -> None:
        """One event of the original's ``shortest-expected`` (``expected_keys``)."""
        pos = view.position
        self._x_list = [j for j in self._x_list if j in pos]  # completed jobs leave
        new = [j for j in view.ids if j not in self._x_key]
        if new:  # appended in arrival order, keyed as having run 0 s
            at_zero = float(self._expected_of(np.zeros(1))[0])
            self._x_list += new
            self._x_key.update(dict.fromkeys(new, at_zero))
            self._x_last = new[-1]
        # each running job's key, in the list's order, is written through the arrival
        # loop's variable: the last running job's is the one that stays
        ran = view.ran_before
        running = [j for j in self._x_list if ran[pos[j]]]
        if running and self._x_last is not None:
            executed = math.floor(float(view.executed[pos[running[-1]]]) + _CLOCK_EPS)
            self._x_key[self._x_last] = float(self._expected_of(np.array([executed]))[0])
        self._x_list.sort(key=self._x_key.__getitem__)

    def _decide(self, view: ClusterView) -> list[Placement]:
        kept_all = self._all_keep(view)
        if kept_all is not None:
            # every job keeps its GPUs whatever the priorities; the full passes would
            # list them in priority order, but a decision is a set of placements (the
            # simulator groups them by job), so the ranking is not computed
            return kept_all
        if self.preemptive and self.skip and self.placement == "spread" \
                and len(view.gpu_types) == 1:
            counted = self._decide_by_counts(view)
            if counted is not None:
                return counted
        order = self.ranking(view)
        free = view.capacity.astype(np.int64).copy()
        chosen: list[int] = []
        kept: set[int] = set()
        trial: list[Placement] = []
        fresh = False  # the order holds only jobs that held nothing before
        if not self.preemptive:  # running jobs keep their GPUs
            held, fits = self._held(view)
            if fits:  # each lease extension succeeds: the previous placements
                free -= held
                trial = list(view.previous)
                order = order[~view.ran_before[order]]
                fresh = True
            else:
                prev = view.previous_by_job
                left = free.sum(axis=0).tolist()
                for m, jid in enumerate(view.ids):
                    if jid in prev:
                        trial.extend(self._try(view, free, m, left) or [])
                        kept.add(m)
        left = free.sum(axis=0).tolist()
        passed_over = self.scan == "original"
        after_start = False
        for m in order.tolist():
            if not any(left):  # every placement holds a GPU: no job fits any more
                break
            if m in kept:
                continue
            if after_start:  # the original's iterator has moved past this job
                after_start = False
                continue
            ps = self._try(view, free, m, left, fresh)
            if ps is not None:
                trial.extend(ps)
                chosen.append(m)
                after_start = passed_over
            elif not self.skip:  # head-of-line blocking: nothing behind it may start
                break
        if not self.preemptive:
            return trial
        # second pass: selected jobs that ran before keep their GPUs, then the others
        prev = view.previous_by_job
        rank = {int(m): r for r, m in enumerate(order)}
        sel = sorted(chosen, key=lambda m: (view.ids[m] not in prev, rank[m]))
        free2 = view.capacity.astype(np.int64).copy()
        left2 = free2.sum(axis=0).tolist()
        out: list[Placement] = []
        for m in sel:
            ps = self._try(view, free2, m, left2)
            if ps is None:
                return trial
            out.extend(ps)
        return out

    def _decide_by_counts(self, view: ClusterView, order: np.ndarray | None = None
                          ) -> list[Placement] | None:
        r""":meth:`_decide` for a preemptive, skipping policy with ``spread`` placement on
        a cluster of one GPU type, from GPU counts; ``None`` hands over to the full passes.

        Why the counts decide: a ``spread`` gang fits iff its type has ``workers`` free
        GPUs anywhere (lease extension, best fit or fewest nodes; never refused), and a
        job that keeps its previous GPUs takes exactly ``workers`` of them; so the first
        pass selects, in priority order, each usable job whose gang is no larger than the
        GPUs still free: runs of consecutive gangs that fit (one cumulative sum each),
        skipping to the next gang that fits after each one that does not. In the second pass
        the selected jobs that ran before keep their GPUs (the previous decision's
        placements fit together), then the others are placed in priority order on what
        is left, exactly as the full passes do; when the previous placements do not fit
        or a gang finds no nodes (neither happens on a valid previous decision) the
        full passes run instead. A decision is a set of placements, so the kept ones are
        listed in the previous decision's order. When every usable gang fits together
        the first pass selects them all in any order, so only the jobs that start are
        ranked (``order`` is then not needed; ``None`` ranks on demand).
        :math:`O(n \log n)` in numpy for the order and the first pass, plus Python work
        per job preempted or started.
        """
        held, fits = self._held(view)
        if not fits:
            return None
        total = int(view.capacity[:, 0].sum())
        usable = view.throughput_matrix[:, 0] > 0
        ran = view.ran_before
        ids = view.ids
        if int(view.workers[usable].sum()) <= total:
            # every usable gang fits together: the first pass selects them all whatever
            # the order, which then only orders the jobs that start (they are placed in
            # it); the others' priorities are not computed
            chosen = np.flatnonzero(usable).tolist()
            new = self.ranking(view, np.flatnonzero(usable & ~ran)).tolist()
        else:
            if order is None:
                order = self.ranking(view)
            w = np.where(usable, view.workers, total + 1)[order]
            chosen = []
            left, i, n = total, 0, len(w)
            while i < n and left > 0:
                cum = np.cumsum(w[i:])
                p = int(np.searchsorted(cum, left, side="right"))  # the run that fits
                if p:
                    chosen += order[i:i + p].tolist()
                    left -= int(cum[p - 1])
                    i += p
                    continue
                hit = np.flatnonzero(w[i:] <= left)  # skip to the next gang that fits
                if not hit.size:
                    break
                i += int(hit[0])
            new = [m for m in chosen if not ran[m]]
        free = view.capacity.astype(np.int64) - held
        if len(chosen) - len(new) == view.previous_count:
            out = list(view.previous)
        else:  # preempted jobs give their GPUs back
            kept = {ids[m] for m in chosen if ran[m]}
            out = []
            node_index = view.cluster.node_index
            for q in view.previous:
                if q.job in kept:
                    out.append(q)
                else:
                    free[node_index(q.node), 0] += q.gpus
        workers = view.workers
        for m in new:
            ps_new = place_gang(view, free, ids[m], int(workers[m]), 0, "spread", fresh=True)
            if ps_new is None:
                return None
            out.extend(ps_new)
        return out


#: The former name of :class:`TiresiasPolicy`, kept as an alias.
Tiresias = TiresiasPolicy


# 2D-LAS with GPU packing, Tiresias' dlas-gpu-pack (the module docstring states it).

_MODELS = ("vgg19", "vgg16", "vgg11", "alexnet", "resnet152", "resnet101", "resnet50",
           "inception4", "inception3")
#: Per-model GPU memory shares of the public simulator at 959f9b0 (``models.m_mem``):
#: 1 for each model; an unknown model is read as inception3 (share 1).
TIRESIAS_SHARES: Mapping[str, float] = {m: 1.0 for m in _MODELS}
#: The per-model shares commented out beside them in ``models.py`` (not used by the
#: original at 959f9b0; they make packing happen).
TIRESIAS_DRAFT_SHARES: Mapping[str, float] = dict(zip(
    _MODELS, (0.60, 0.55, 0.45, 0.13, 0.85, 0.70, 0.50, 0.85, 0.80)))
#: Slack on a GPU's memory budget: shares are decimal fractions added in floating point
#: (0.55 + 0.45 must fit).
_BUDGET_EPS = 1e-9


def _shares(memory_shares: Mapping[str, float] | None) -> dict[str, float]:
    if memory_shares is None:
        return dict(TIRESIAS_SHARES)
    if not isinstance(memory_shares, Mapping):
        raise InvalidOption("memory_shares", memory_shares,
                            "must map co-location keys (profiles) to shares in (0, 1]")
    out = {}
    for k, v in memory_shares.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1 \
                or not math.isfinite(v):
            raise InvalidOption(f"memory_shares.{k}", v, "must be a number in (0, 1]")
        out[str(k)] = float(v)
    return out


def full_speed_colocation(instance: Instance,
                          memory_shares: Mapping[str, float] | None = None
                          ) -> tuple[Instance, dict[str, float]]:
    r"""The original ``dlas-gpu-pack``'s assumption as co-located rates: a copy of
    ``instance`` whose co-location table says that two jobs whose memory shares fit one
    GPU (:math:`s_a + s_b \le 1`) each keep their isolated per-worker throughput when
    they share GPUs (optimistic), and the shares for ``memory_shares=`` of the policy.

    ``memory_shares`` (default :data:`TIRESIAS_SHARES`) maps a job's profile (else its
    id) to its share; jobs not listed have share 1 and pair with nothing. The table's
    rates are per co-location key, while throughputs are per job: the jobs of a profile
    whose throughputs all agree keep it as key; otherwise (e.g. Tiresias' traces, where
    every job has its own duration) the copy drops the profile of each job with share
    below 1 so that its key is its id. One entry per unordered pair of keys and GPU type
    where both run, any gang size (the instance pairs equal gangs only); an existing
    table is replaced. :math:`O(n + K^2 T)` for K keys of share below 1 and T types.

    Returns
    -------
    (Instance, dict)
        The copy, and the share per co-location key of the copy.
    """
    shares = _shares(memory_shares)
    share_of = {j.id: shares.get(instance.colocation_key(j.id), 1.0) for j in instance.jobs}
    by_key: dict[str, set[tuple[tuple[str, float], ...]]] = {}
    for j in instance.jobs:
        by_key.setdefault(instance.colocation_key(j.id), set()).add(
            tuple(sorted(j.throughput.items())))
    jobs = tuple(dataclasses.replace(j, profile=None)
                 if share_of[j.id] < 1.0 and j.profile is not None
                 and len(by_key[j.profile]) > 1 else j for j in instance.jobs)
    copy = instance.replace(jobs=jobs, colocation=None)
    rate: dict[str, dict[str, float]] = {}
    key_share: dict[str, float] = {}
    for j in copy.jobs:
        key = copy.colocation_key(j.id)
        key_share[key] = share_of[j.id]
        if share_of[j.id] < 1.0:
            rate[key] = dict(j.throughput)
    keys = sorted(rate)
    entries = []
    for i, a in enumerate(keys):
        for b in keys[i:]:
            if key_share[a] + key_share[b] > 1.0 + _BUDGET_EPS:
                continue
            for t in sorted(set(rate[a]) & set(rate[b])):
                if rate[a][t] > 0 and rate[b][t] > 0:
                    entries.append(PairRate(t, a, b, None, rate[a][t], rate[b][t]))
    table = Colocation(tuple(entries)) if entries else None
    return copy.replace(colocation=table), {k: v for k, v in key_share.items() if v < 1.0}


class PackingTiresiasPolicy(TiresiasPolicy):
    """2D-LAS that packs two jobs onto the same GPUs when their memory shares fit
    (module docstring; Tiresias' ``dlas-gpu-pack``).

    Parameters
    ----------
    memory_shares : mapping of str to float, optional
        GPU memory share in (0, 1] per co-location key (a job's profile, else its id);
        default :data:`TIRESIAS_SHARES` (the original's, all 1: nothing packs); keys not
        listed have share 1.
    **options
        As :class:`~optsched.tiresias.policy.TiresiasPolicy` with ``order="las"``.
    """

    colocation = True

    def __init__(self, *, memory_shares: Mapping[str, float] | None = None,
                 **options: Any):
        if options.get("order", "las") != "las":
            raise InvalidOption("order", options["order"], "packing is defined for 2D-LAS")
        super().__init__(**options)
        self.memory_shares = _shares(memory_shares)
        self._share: dict[str, float] = {}
        self._packs = False

    def check(self, instance) -> None:
        super().check(instance)
        self._share = {j.id: self.memory_shares.get(instance.colocation_key(j.id), 1.0)
                       for j in instance.jobs}
        # with no table or no share below 1 no pair can form: 2D-LAS itself
        self._packs = instance.colocation is not None and any(
            s < 1.0 for s in self._share.values())

    def _decide(self, view: ClusterView) -> list[Placement]:
        if not self._packs:
            return super()._decide(view)
        order = self.ranking(view)
        free = view.capacity.astype(np.int64).copy()
        left = free.sum(axis=0).tolist()
        share = self._share
        hosts: list[tuple[str, list[Placement]]] = []  # selected, unpaired, share < 1
        pair: dict[str, str] = {}
        placed: dict[str, list[Placement]] = {}
        for m in order.tolist():
            jid = view.ids[m]
            s = share.get(jid, 1.0)
            if s < 1.0:
                host = self._host(view, jid, s, hosts)
                if host is not None:
                    pair[jid], pair[host] = host, jid
                    hosts[:] = [h for h in hosts if h[0] != host]
                    continue
            if not any(left):
                continue
            ps = self._try(view, free, m, left)
            if ps is None:
                continue
            # a kept lease may still name the job's former partner
            placed[jid] = [p._replace(partner=None) if p.partner else p for p in ps]
            if s < 1.0:
                hosts.append((jid, placed[jid]))
        out: list[Placement] = []
        for jid, ps in placed.items():
            mate = pair.get(jid)
            if mate is None:
                out.extend(ps)
                continue
            for p in ps:
                out.append(p._replace(partner=mate))
                out.append(Placement(mate, p.node, p.gpu_type, p.gpus, partner=jid))
        return out

    def _host(self, view: ClusterView, jid: str, s: float,
              hosts: list[tuple[str, list[Placement]]]) -> str | None:
        """The first open host that ``jid`` can share its GPUs with, or ``None`` (the
        instance's pair rate exists only for equal gang sizes)."""
        share = self._share
        for host, ps in hosts:
            if share[host] + s > 1.0 + _BUDGET_EPS:
                continue
            types = {p.gpu_type for p in ps}
            if all((view.colocated_rate(jid, host, t) or 0.0) > 0
                   and (view.colocated_rate(host, jid, t) or 0.0) > 0 for t in types):
                return host
        return None


def _signature() -> None:
    # the registry reads a policy's options from its signature: TiresiasPolicy's and
    # memory_shares
    import inspect
    base = inspect.signature(TiresiasPolicy.__init__)
    params = [p for p in base.parameters.values() if p.name != "name"]
    params.append(inspect.Parameter("memory_shares", inspect.Parameter.KEYWORD_ONLY,
                                    default=None))
    params.append(base.parameters["name"])
    PackingTiresiasPolicy.__init__.__signature__ = base.replace(  # type: ignore[attr-defined]
        parameters=params)


_signature()


# Tiresias' gandiva scheduler (the module docstring states it).

#: Gang sizes with node sets, in the order CPython 2.7 iterates the original's
#: ``{1: .., 2: .., 4: .., 8: .., 12: .., 16: .., 24: .., 32: .., 64: ..}``.
CLASS_ORDER = (16, 1, 2, 4, 24, 32, 8, 64, 12)
#: The original's clock step (s).
STEP = 10.0
#: Time-slice period (s): running jobs rotate when ``int(t % SWITCH) == 0``.
SWITCH = 60
#: Memory share of every job (the original's ``models.m_mem`` at 959f9b0).
_SHARE = 1.0
#: Distance (s) below which a call is at a step of the clock (float noise of completion
#: times computed from rates).
_CLOCK_TOL = 1e-6


@dataclass
class _NodeSet:
    nodes: list[int]
    capacity: int
    util: float = 0.0
    jobs: list[str] = field(default_factory=list)

    def running(self) -> int:
        """How many leading jobs run: those whose shares add up to at most the capacity
        (at least one, as the original credits the first job before testing)."""
        total, k = 0.0, 0
        for _ in self.jobs:
            total += _SHARE
            if total > self.capacity:
                break
            k += 1
        return max(k, 1) if self.jobs else 0

    def add(self, job: str) -> None:
        self.util = round(self.util + round(_SHARE, 2), 2)
        self.jobs.append(job)


class GandivaPolicy:
    """Tiresias' ``gandiva`` scheduler (module docstring): node sets per gang size, 10 s
    steps, 60 s time slices.

    Parameters
    ----------
    name : str
        Name in results.
    """

    event_driven = True
    periodic = False
    needs_work = False

    def __init__(self, *, name: str = "tiresias_gandiva"):
        self.name = name
        self._per_node = 0
        self._types: list[str] = []
        self._names: list[str] = []
        self.reset()

    def check(self, instance) -> None:
        nodes = instance.cluster.nodes
        counts = set()
        for h, nd in enumerate(nodes):
            kinds = [t for t, c in nd.gpus.items() if c > 0]
            if len(kinds) != 1:
                raise ModelNotApplicable(f"cluster.nodes[{h}].gpus", dict(nd.gpus),
                                         "gandiva forms node sets of servers with one GPU "
                                         "type each")
            counts.add(nd.gpus[kinds[0]])
        if len(counts) != 1:
            raise ModelNotApplicable("cluster.nodes", sorted(counts), "gandiva needs the "
                                     "same GPU count on every server")
        per_node = counts.pop()
        types = sorted({t for nd in nodes for t, c in nd.gpus.items() if c > 0})
        for i, j in enumerate(instance.jobs):
            if j.workers not in CLASS_ORDER:
                raise ModelNotApplicable(f"jobs[{i}].workers", j.workers,
                                         f"gandiva has node sets for gangs of "
                                         f"{sorted(CLASS_ORDER)} GPUs")
            slow = [t for t in types if not j.rate(t) > 0]
            if slow:
                raise ModelNotApplicable(f"jobs[{i}].throughput", dict(j.throughput),
                                         f"gandiva places on any server; the job cannot "
                                         f"run on {slow}")
        self._per_node = per_node
        self._names = [nd.name for nd in nodes]
        self._types = [next(t for t, c in nd.gpus.items() if c > 0) for nd in nodes]
        self._n_gpus = per_node * len(nodes)

    def reset(self) -> None:
        self._free: list[int] = list(range(len(self._names)))
        self._sets: dict[int, list[_NodeSet]] = {g: [] for g in CLASS_ORDER}
        self._pending: list[str] = []
        self._seen: set[str] = set()
        self._workers: dict[str, int] = {}
        self._next: float | None = None
        self._anchor = 0.0
        self._out: list[Placement] = []
        self._started = False

    # ------------------------------------------------------------------ the step
    def allocate(self, view: ClusterView) -> list[Placement]:
        t = view.time
        visible = set(view.ids)
        new = [j for j in view.ids if j not in self._seen]
        if self._started and not new:
            steps = (t - self._anchor) / STEP
            if abs(steps - round(steps)) * STEP > _CLOCK_TOL:
                # between steps (a completion): the original holds its node sets until
                # the next step
                self._next = self._anchor + STEP * math.ceil(steps)
                return [p for p in self._out if p.job in visible]
            # the step's exact time: a completion computed in floating point may land
            # a hair before it, and the 60 s test reads whole seconds
            t = self._anchor + STEP * round(steps)
        for m, jid in enumerate(view.ids):
            self._workers.setdefault(jid, int(view.workers[m]))
        released = self._slice(t, visible) if self._started else False
        self._started = True
        if new:  # the original's clock jumps to an arrival and steps on from there
            self._anchor = t
        for jid in new:
            self._seen.add(jid)
            if not self._place(jid):
                self._pending.append(jid)
        if released:
            k = 0
            while k < len(self._pending):
                if self._place(self._pending[k]):
                    del self._pending[k]  # the original's loop then skips one job
                k += 1
        self._adjust()
        self._out = self._placements()
        self._next = None if self._quiet() else t + STEP
        return list(self._out)

    def horizon(self) -> float | None:
        """The next step of the clock that can change a decision: ``None`` when, until
        the next arrival or completion, every step leaves the node sets as they are."""
        return self._next

    def _state(self) -> tuple:
        return (tuple((g, tuple((tuple(ns.nodes), ns.capacity, ns.util, tuple(ns.jobs))
                                for ns in self._sets[g])) for g in CLASS_ORDER),
                tuple(self._free), tuple(self._pending))

    def _quiet(self) -> bool:
        """Whether a step without arrivals or completions changes nothing: no node set
        runs fewer jobs than it holds (so none rotates) and re-balancing is a no-op
        (tried on the state, then the state is put back). Steps are then skipped until
        the next event, which the original would have taken with the same result."""
        if any(len(ns.jobs) > ns.running() for g in CLASS_ORDER for ns in self._sets[g]):
            return False
        before = self._state()
        self._adjust()
        after = self._state()
        if after == before:
            return True
        self._sets = {g: [_NodeSet(list(n), c, u, list(js)) for n, c, u, js in sets]
                      for g, sets in before[0]}
        self._free, self._pending = list(before[1]), list(before[2])
        return False

    # ------------------------------------------------------------------ the rules
    def _slice(self, t: float, visible: set[str]) -> bool:
        """Step (2): completions, rotation, released node sets."""
        switch = int(t % SWITCH) == 0
        released = False
        for g in CLASS_ORDER:
            keep = []
            for ns in self._sets[g]:
                k = ns.running()
                ended = [j for j in ns.jobs[:k] if j not in visible]
                if switch and len(ns.jobs) > k:
                    ns.jobs = ns.jobs[k:] + ns.jobs[:k]
                for j in ended:
                    ns.jobs.remove(j)
                if ns.jobs:
                    keep.append(ns)
                else:
                    self._free.extend(ns.nodes)
                    released = True
            self._sets[g] = keep
        return released

    def _new_set(self, g: int) -> _NodeSet | None:
        need = math.ceil(g / self._per_node)
        if need > len(self._free):
            return None
        nodes, self._free = self._free[:need], self._free[need:]
        return _NodeSet(nodes, int(need * self._per_node / g))

    def _place(self, jid: str) -> bool:
        """Step (3) for one job (the original's ``gandiva_placement``)."""
        g = self._workers[jid]
        sets = self._sets[g]
        if sets:
            least = sets.pop(0)
            if round(least.util + round(_SHARE, 2), 2) < least.capacity:
                least.add(jid)
                sets.append(least)
                sets.sort(key=lambda s: s.util)
                return True
            sets.append(least)  # tried first, now last: not re-sorted
        fresh = self._new_set(g)
        if fresh is not None:
            fresh.add(jid)
            sets.append(fresh)
            sets.sort(key=lambda s: s.util)
            return True
        if sets:  # time sharing on the (now) first set
            ns = sets.pop(0)
            ns.add(jid)
            sets.append(ns)
            sets.sort(key=lambda s: s.util)
            return True
        return False

    def _deal(self, sets: list[_NodeSet], jobs: list[str]) -> None:
        for jid in jobs:
            sets[0].add(jid)
            sets.sort(key=lambda s: s.util)

    def _adjust(self) -> None:
        """Step (1), run for the next step: its input is the node sets as this step
        leaves them (the original runs it first thing in the next step)."""
        demand = {g: sum(len(ns.jobs) for ns in self._sets[g]) * g for g in CLASS_ORDER}
        held = {g: sum(len(ns.nodes) for ns in self._sets[g]) * self._per_node
                for g in CLASS_ORDER}
        total = sum(demand.values())
        if total == 0:
            return
        for g in CLASS_ORDER:
            if demand[g] == 0:
                continue
            plan = math.floor((demand[g] / total) * self._n_gpus)
            diff = min(plan, demand[g]) - held[g]
            if diff > 0:
                self._expand(g, math.ceil(diff / g))
            elif diff < 0:
                self._shrink(g, math.ceil(-diff / g))

    def _expand(self, g: int, count: int) -> None:
        sets = self._sets[g]
        need = math.ceil(g / self._per_node)
        last = 0
        for k in range(1, count + 1):
            last = k
            ns = self._new_set(g)
            if ns is not None:
                ns.util = 0.0
                sets.append(ns)
                # the original's inner loop over the new set's servers reuses the outer
                # loop variable, which decides below whether the jobs are dealt again
                last = need - 1
        if last > 0:
            jobs: list[str] = []
            for ns in sets:
                if ns.jobs:
                    jobs.extend(ns.jobs)
                    ns.jobs, ns.util = [], 0.0
            self._deal(sets, jobs)

    def _shrink(self, g: int, count: int) -> None:
        sets = self._sets[g]
        count = min(count, len(sets) - 1)
        jobs: list[str] = []
        for _ in range(count):
            ns = sets.pop(0)
            jobs.extend(ns.jobs)
            self._free.extend(ns.nodes)
        if count > 0:
            self._deal(sets, jobs)

    def _placements(self) -> list[Placement]:
        """The jobs each node set runs during the next step, on its servers."""
        out: list[Placement] = []
        per = self._per_node
        for g in CLASS_ORDER:
            for ns in self._sets[g]:
                free = {h: per for h in ns.nodes}
                for jid in ns.jobs[:ns.running()]:
                    left = g
                    for h in ns.nodes:
                        take = min(left, free[h])
                        if take:
                            out.append(Placement(jid, self._names[h], self._types[h], take))
                            free[h] -= take
                            left -= take
                        if not left:
                            break
        return out

    def stats(self) -> dict[str, Any]:
        return {"waiting": len(self._pending)}
