"""Cluster presets of the papers' evaluations and the GPU memory sizes."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from optsched.catalog.files import _read_shipped, _unknown
from optsched.core.instance import Cluster, Node
from optsched.errors import InvalidOption

__all__ = ["GPU_MEMORY_GB", "PRESETS", "cluster_preset"]


#: Memory of one GPU, GB. K80: 12 GB per GK210 die (a K80 board holds two dies, and Gavel
#: schedules each die as one GPU). P100: the 16 GB variant. V100: 16 GB, the variant of
#: AWS p3 instances; Gavel and Synergy do not model GPU memory and Synergy's paper does
#: not state the variant, so 16 GB is used for every preset.
GPU_MEMORY_GB: Mapping[str, float] = MappingProxyType({"k80": 12.0, "p100": 16.0,
                                                       "v100": 16.0})

#: Names accepted by :func:`cluster_preset`.
PRESETS = ("gavel-108", "gavel-physical", "synergy-128", "synergy-512", "tiresias-n32g4",
           "tiresias-n256g8")

_GAVEL_NODE_GPUS = 4
_TIRESIAS_GPU_TYPE = "p100"


# =========================================================================== clusters
def _typed_nodes(counts: Mapping[str, int], per_node: int) -> tuple[Node, ...]:
    nodes = []
    for gpu_type, count in counts.items():
        for i in range(count // per_node):
            nodes.append(Node(name=f"{gpu_type}-{i:02d}", gpus={gpu_type: per_node},
                              gpu_memory={gpu_type: GPU_MEMORY_GB[gpu_type]}))
    return tuple(nodes)


def _synergy_cluster(servers: int) -> Cluster:
    return Cluster(tuple(Node(name=f"server-{i:02d}", gpus={"v100": 8}, cpus=24.0,
                              memory=500.0, gpu_memory={"v100": GPU_MEMORY_GB["v100"]})
                         for i in range(servers)))


def _tiresias_cluster(file: str) -> Cluster:
    rows = list(csv.DictReader(io.StringIO(_read_shipped(file))))
    spec = rows[0]
    switches, per_switch = int(spec["num_switch"]), int(spec["num_node_p_switch"])
    gpus, cpus, mem = (int(spec["num_gpu_p_node"]), float(spec["num_cpu_p_node"]),
                       float(spec["mem_p_node"]))
    t = _TIRESIAS_GPU_TYPE
    return Cluster(tuple(Node(name=f"sw{s}-n{n:02d}", gpus={t: gpus}, cpus=cpus, memory=mem,
                              gpu_memory={t: GPU_MEMORY_GB[t]})
                         for s in range(switches) for n in range(per_switch)))


@lru_cache(maxsize=len(PRESETS))
def _preset(name: str) -> Cluster:
    if name == "gavel-108":
        return Cluster(_typed_nodes({"v100": 36, "p100": 36, "k80": 36}, _GAVEL_NODE_GPUS))
    if name == "gavel-physical":
        return Cluster(_typed_nodes({"v100": 8, "p100": 16, "k80": 24}, _GAVEL_NODE_GPUS))
    if name == "synergy-128":
        return _synergy_cluster(16)
    if name == "synergy-512":
        return _synergy_cluster(64)
    if name == "tiresias-n32g4":
        return _tiresias_cluster("tiresias_n32g4.csv")
    return _tiresias_cluster("tiresias_n256g8.csv")


def cluster_preset(name: str) -> Cluster:
    """A cluster from the papers' evaluations; ``name`` is one of :data:`PRESETS`.

    * ``gavel-108``: Gavel's simulated cluster, 36 V100 + 36 P100 + 36 K80 (OSDI'20 §7),
      as 9 nodes of 4 GPUs per type. Gavel's simulator takes GPUs per server as a
      parameter; 4 of one type per node is the shape used here.
    * ``gavel-physical``: Gavel's physical cluster, 8 V100 + 16 P100 + 24 K80, nodes of
      4 GPUs of one type (2 + 4 + 6 nodes).
    * ``synergy-128`` / ``synergy-512``: 16 / 64 Synergy servers of 8 V100, 24 cores,
      500 GB DRAM (OSDI'22 evaluation; ``configs/default_cluster.ini``,
      ``philly_cluster.ini``).
    * ``tiresias-n32g4``: Tiresias ``n32g4.csv``, 32 nodes x 4 GPUs, 40 cores, 256 GB
      (128 GPUs); ``tiresias-n256g8``: ``n256g8.csv``, 8 switches x 32 nodes x 8 GPUs,
      64 cores, 256 GB (2,048 GPUs). The specs name no GPU type; the Tiresias testbed
      had P100s (NSDI'19: 60 P100 GPUs), so the type is ``"p100"``.

    Gavel presets have no CPU or DRAM capacity (0: Gavel does not model them). GPU
    memory per type is :data:`GPU_MEMORY_GB`. Unknown names raise
    :class:`~optsched.errors.UnknownName`.
    """
    if name not in PRESETS:
        raise _unknown("preset", name, PRESETS)
    return _preset(name)


def _resolve_cluster(cluster: Cluster | str | None, default: str) -> Cluster:
    if cluster is None:
        return cluster_preset(default)
    if isinstance(cluster, str):
        return cluster_preset(cluster)
    if isinstance(cluster, Cluster):
        return cluster
    raise InvalidOption("cluster", cluster, "must be a Cluster or a preset name")
