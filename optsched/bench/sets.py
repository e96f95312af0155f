r"""The benchmark library's sets: which instances each holds and how they were drawn.

Every instance is drawn from the shipped real data by a seeded rule, so the library can
be rebuilt and checked (``tests/bench``), but the instances are *shipped* as files: a
change to a catalog reader can never change a benchmark instance under a published
best-known value, nor can the machine. The files were written on an AVX-512 machine,
where numpy's vectorised ``pow`` and LAPACK's least squares (picked by CPU) rounded some
last bits otherwise than the C library's ``pow`` and the closed-form line fit that the
draws use now, on every CPU: a fresh draw differs from its file by at most 1.3e-14
relative (2,118 floats of the Salus, AlloX and HadarE instances). The shipped file is
the instance; the tests check a fresh draw against it field by field, floats to 1e-12
relative.

Solve sets (one per model and size class, ``<model>/<class>``), instance names
``<model>/g<GPUs>-j<jobs>-s<seed>``:

=========  ==============================================================  =================
model      instance of seed ``s`` with ``n`` jobs                         sizes (s/m/l)
=========  ==============================================================  =================
allox      ``n`` single-GPU jobs of Gavel's Philly-derived mixture, drawn   15 / 240 / 960
           with seed ``s``, all queued at 0, on 2 V100 + 2 P100 + 2 K80
           (:func:`optsched.allox.demo_instance`)
gavel      one round: ``n`` jobs of Gavel's 2,000-job trace from job        30 / 240 / 1500
           ``s * n`` on (wrapping), all active, on Gavel's 48-GPU cluster
           (:func:`optsched.gavel.demo_instance`); 1,500 and not 2,000 jobs,
           as three windows of the whole trace would hold the same jobs
hadar      jobs ``[s * 100, s * 100 + n)`` of Gavel's trace at 50x its      15 / 60 / 480
           arrival rate on gavel-108, shifted to start at 0, sigmoid
           utilities of seed ``s``; the slot is the one Hadar's exact
           program plans on by default (a multiple of the 6-minute round)
hadare     small, medium: :func:`optsched.hadare.demo_instance` (``n``      6 / 15 / 120
           jobs, 1-4 workers, on one node of 4 V100 + 4 P100 + 4 K80);
           large: as hadar
salus      ``n`` training runs of Salus' ``workloads.csv`` drawn with seed  15 / 60 / 240
           ``s`` (1-minute runs), six per 16 GB V100, all released at 0
synergy    one round: ``n`` jobs of Synergy's image/speech mix, seed        30 / 240 / 1920
           ``s``, on the 8-GPU servers their gangs fill
           (:func:`optsched.synergy.demo_instance`)
tiresias   as hadar, without utilities, on Tiresias' planning slot          15 / 120 / 1000
=========  ==============================================================  =================

Seeds 0-3 for the small and medium classes, 0-2 for the large one.

Simulation sets (``sim/<trace>``), instance names ``sim/<trace>-g<GPUs>-l<load>-j<jobs>``:
the first ``jobs`` jobs of a shipped trace on a cluster preset, arrivals divided by
``load`` (:func:`optsched.catalog.traces.read_trace`); loads are chosen so that jobs
queue in the heavier cells. Their objectives are the mean JCT and the makespan of a
complete schedule under the strict rules (no sharing, no forking) in continuous time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from optsched.core.instance import Instance
from optsched.errors import UnknownName

__all__ = ["InstanceSpec", "SetSpec", "SETS", "MODELS", "SIZE_CLASSES", "SIM_OBJECTIVES",
           "get_set", "draw", "set_of_instance"]

MODELS = ("allox", "gavel", "hadar", "hadare", "salus", "synergy", "tiresias")
SIZE_CLASSES = ("small", "medium", "large")
#: jobs per size class and model
SIZES: dict[str, tuple[int, int, int]] = {
    "allox": (15, 240, 960), "gavel": (30, 240, 1500), "hadar": (15, 60, 480),
    "hadare": (6, 15, 120), "salus": (15, 60, 240), "synergy": (30, 240, 1920),
    "tiresias": (15, 120, 1000)}
SEEDS = {"small": (0, 1, 2, 3), "medium": (0, 1, 2, 3), "large": (0, 1, 2)}
#: objectives of a simulation instance (both minimised)
SIM_OBJECTIVES = ("mean_jct", "makespan")
#: Gavel's trace at this multiple of its arrival rate for the trace-drawn families
TRACE_LOAD = 50.0
#: window offset between seeds of the trace-drawn families (jobs)
TRACE_STRIDE = 100
#: Salus: jobs per 16 GB V100
SALUS_JOBS_PER_GPU = 6


@dataclass(frozen=True)
class InstanceSpec:
    """One instance of a set: its stable name and what it was drawn from."""

    name: str
    model: str
    jobs: int
    seed: int = 0
    trace: str = ""
    cluster: str = ""
    load: float = 1.0


@dataclass(frozen=True)
class SetSpec:
    """A named set: a model's size class, or a simulation set (``model == "sim"``).

    ``tolerance`` is the relative gap at or under which an instance is ``closed``:
    :math:`|b - v| / \\max(|v|, |b|) \\le \\varepsilon` (best-known ``v``, bound ``b``).
    ``time_limit`` is the default seconds per solve of ``optsched bench run`` on it.
    """

    name: str
    model: str
    size_class: str
    instances: tuple[InstanceSpec, ...]
    description: str
    time_limit: float = 60.0
    tolerance: float = 1e-4
    objectives: tuple[str, ...] = field(default=("objective",))

    @property
    def kind(self) -> str:
        """``"simulate"`` for a simulation set, else ``"solve"``."""
        return "simulate" if self.model == "sim" else "solve"


# --------------------------------------------------------------------------- drawing
def _trace_window(n: int, seed: int) -> Instance:
    from optsched.catalog.traces import read_trace

    start = seed * TRACE_STRIDE
    inst = read_trace("gavel-philly-2000", "gavel-108", jobs=start + n, load=TRACE_LOAD)
    jobs = inst.jobs[start:]
    t0 = min(j.arrival for j in jobs)
    return inst.replace(jobs=tuple(replace(j, arrival=j.arrival - t0) for j in jobs))


def _allox(n: int, seed: int) -> Instance:
    from optsched.allox import demo_instance

    return demo_instance(n, seed=seed)


def _gavel(n: int, seed: int) -> Instance:
    from optsched.gavel import demo_instance

    return demo_instance(n, seed=seed)


def _planned(inst: Instance, model: str) -> Instance:
    """``inst`` with the slot its model's exact program plans on by default (the
    smallest multiple of the trace's 6-minute round that keeps the program within its
    default number of slots), so that every method of the model plans on the
    instance's own slot and a record's program is fixed by the instance file."""
    if model == "tiresias":
        from optsched.tiresias.model import build_model, slotted

        return inst.replace(slot=float(slotted(build_model(inst)).delta))
    from optsched.hadar.model import planning_instance

    return inst.replace(slot=float(planning_instance(inst).slot))


def _hadar(n: int, seed: int) -> Instance:
    from optsched.hadar import assign_utilities

    return _planned(assign_utilities(_trace_window(n, seed), "sigmoid", seed=seed), "hadar")


def _hadare(n: int, seed: int) -> Instance:
    if n > SIZES["hadare"][1]:
        return _hadar(n, seed)
    from optsched.hadare import demo_instance

    return demo_instance(n, seed=seed)


def _salus(n: int, seed: int) -> Instance:
    import math

    import numpy as np

    from optsched.catalog import salus_workloads
    from optsched.core.instance import Cluster, Node
    from optsched.salus import training_job

    rows = sorted(w.name for w in salus_workloads() if w.name.endswith("_1min"))
    pick = np.random.default_rng(seed).integers(0, len(rows), size=n)
    jobs = tuple(training_job(rows[int(k)], f"j{i}") for i, k in enumerate(pick))
    gpus = max(1, math.ceil(n / SALUS_JOBS_PER_GPU))
    cluster = Cluster((Node("server", {"v100": gpus}, cpus=32, memory=256,
                            gpu_memory={"v100": 16.0}),))
    return Instance(cluster, jobs)


def _synergy(n: int, seed: int) -> Instance:
    from optsched.synergy import demo_instance

    return demo_instance(n, seed=seed)


def _tiresias(n: int, seed: int) -> Instance:
    return _planned(_trace_window(n, seed), "tiresias")


_DRAW: dict[str, Callable[[int, int], Instance]] = {
    "allox": _allox, "gavel": _gavel, "hadar": _hadar, "hadare": _hadare, "salus": _salus,
    "synergy": _synergy, "tiresias": _tiresias}


def draw(spec: InstanceSpec) -> Instance:
    """The instance ``spec`` names, drawn afresh from the shipped data (module docstring);
    named ``spec.name``."""
    if spec.model == "sim":
        from optsched.catalog.traces import read_trace

        inst = read_trace(spec.trace, spec.cluster, jobs=spec.jobs, load=spec.load)
    else:
        inst = _DRAW[spec.model](spec.jobs, spec.seed)
    return inst.replace(name=spec.name)


# --------------------------------------------------------------------------- the sets
def _gpus(model: str, n: int, seed: int) -> int:
    if model == "salus":
        return max(1, -(-n // SALUS_JOBS_PER_GPU))
    if model == "synergy":
        return _synergy(n, seed).cluster.total_gpus
    if model in ("hadar", "tiresias") or (model == "hadare" and n > SIZES["hadare"][1]):
        return 108
    return {"allox": 6, "gavel": 48, "hadare": 12}[model]


_WHAT = {
    "allox": "single-GPU jobs of Gavel's Philly-derived mixture on 6 GPUs of 3 types, all "
             "queued at 0; total JCT",
    "gavel": "one allocation round of Gavel's 2,000-job trace on its 48-GPU cluster; "
             "max-min normalised throughput",
    "hadar": "windows of Gavel's trace at 50x its rate on gavel-108 (6-minute slots), "
             "sigmoid utilities; total utility",
    "hadare": "Gavel-profile jobs on a 12-GPU node (small, medium) or windows of Gavel's "
              "trace on gavel-108 (large), sigmoid utilities; total utility",
    "salus": "Salus' 1-minute training runs, six per 16 GB V100; makespan of the lane plan",
    "synergy": "one round of Synergy's image/speech mix on 8-GPU servers; total normalised "
               "throughput",
    "tiresias": "windows of Gavel's trace at 50x its rate on gavel-108 (6-minute slots); "
                "total JCT",
}


def _solve_sets() -> list[SetSpec]:
    out = []
    for model in MODELS:
        for cls, n in zip(SIZE_CLASSES, SIZES[model]):
            specs = tuple(InstanceSpec(f"{model}/g{_gpus(model, n, s)}-j{n}-s{s}", model, n, s)
                          for s in SEEDS[cls])
            out.append(SetSpec(f"{model}/{cls}", model, cls, specs,
                               f"{_WHAT[model]} ({n} jobs)",
                               time_limit=60.0 if cls != "large" else 120.0))
    return out


#: simulation cells: (trace, cluster preset, jobs, loads)
SIM_CELLS = (
    ("gavel-philly-2000", "gavel-108", 500, (1.0, 8.0, 32.0)),
    ("philly", "tiresias-n32g4", 500, (1.0, 4.0)),
    ("tiresias-60", "tiresias-n32g4", 60, (1.0, 4.0, 16.0)),
)


def _sim_sets() -> list[SetSpec]:
    from optsched import catalog

    out = []
    for trace, cluster, jobs, loads in SIM_CELLS:
        gpus = catalog.cluster_preset(cluster).total_gpus
        specs = tuple(InstanceSpec(f"sim/{trace}-g{gpus}-l{load:g}-j{jobs}", "sim", jobs,
                                   trace=trace, cluster=cluster, load=load)
                      for load in loads)
        out.append(SetSpec(f"sim/{trace}", "sim", "simulation", specs,
                           f"the first {jobs} jobs of {trace} on {cluster} ({gpus} GPUs) at "
                           f"{', '.join(f'{x:g}' for x in loads)}x its arrival rate; mean JCT "
                           "and makespan", time_limit=600.0, objectives=SIM_OBJECTIVES))
    return out


#: every set by name, models in alphabetical order then the simulation sets
SETS: dict[str, SetSpec] = {s.name: s for s in [*_solve_sets(), *_sim_sets()]}


def get_set(name: str) -> SetSpec:
    """The set called ``name`` (``optsched bench list`` shows them)."""
    if name not in SETS:
        import difflib

        close = difflib.get_close_matches(str(name), list(SETS), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("set", name, f"unknown benchmark set; known: {', '.join(SETS)}{hint}")
    return SETS[name]


def set_of_instance(name: str) -> SetSpec:
    """The set holding the instance called ``name``."""
    for s in SETS.values():
        if any(i.name == name for i in s.instances):
            return s
    raise UnknownName("instance", name, "no benchmark set holds this instance")
