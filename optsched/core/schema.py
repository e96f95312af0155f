"""The instance file format as a JSON Schema (``optsched schema``)."""

from __future__ import annotations

from typing import Any

from optsched.core.fields import MAX_INTEGER
from optsched.core.job_profiles import UTILITY_KINDS

__all__ = ["instance_json_schema"]


def instance_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the instance file format.

    The schema states types and simple bounds; cross-field rules (unique ids, known GPU
    types, gang width) are enforced by :meth:`Instance.from_dict` and listed in the
    descriptions.
    """
    nonneg = {"type": "number", "minimum": 0}
    pos = {"type": "number", "exclusiveMinimum": 0}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://optsched.org/schema/instance.json",
        "title": "optsched instance",
        "type": "object",
        "required": ["cluster", "jobs"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "slot": {**pos, "description": "slot (round) length in seconds", "default": 360},
            "horizon": {**pos, "description": "optional horizon in seconds; every arrival "
                                               "precedes it"},
            "cluster": {
                "type": "object", "required": ["nodes"], "additionalProperties": False,
                "properties": {"nodes": {"type": "array", "minItems": 1,
                                         "items": {"$ref": "#/$defs/node"}}},
            },
            "colocation": {
                "type": "object",
                "description": "measured co-located rates per GPU type: rows [a, b, workers "
                               "or null, rate_a, rate_b], iterations/s per worker of a job "
                               "of co-location key a (its profile, else its id) and one of "
                               "key b sharing GPUs; one row per unordered pair",
                "additionalProperties": {"type": "array", "items": {
                    "type": "array", "minItems": 5, "maxItems": 5,
                    "prefixItems": [{"type": "string", "minLength": 1},
                                    {"type": "string", "minLength": 1},
                                    {"type": ["integer", "null"], "minimum": 1},
                                    nonneg, nonneg]}},
            },
            "jobs": {"type": "array", "items": {"$ref": "#/$defs/job"},
                     "description": "job ids unique; throughput types must exist in the cluster; "
                                    "workers no more than the GPUs of the usable types"},
        },
        "$defs": {
            "node": {
                "type": "object", "required": ["name", "gpus"], "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "gpus": {"type": "object",
                             "additionalProperties": {"type": "integer", "minimum": 0,
                                                      "maximum": MAX_INTEGER},
                             "description": "GPU count per GPU type"},
                    "cpus": {**nonneg, "description": "CPU cores"},
                    "memory": {**nonneg, "description": "DRAM in GB"},
                    "gpu_memory": {"type": "object", "additionalProperties": pos,
                                   "description": "memory of one GPU per type, GB"},
                },
            },
            "job": {
                "type": "object", "additionalProperties": False,
                "required": ["id", "arrival", "workers", "work", "throughput"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "arrival": {**nonneg, "description": "arrival time, s"},
                    "workers": {"type": "integer", "minimum": 1, "maximum": MAX_INTEGER,
                                "description": "gang size (GPUs)"},
                    "work": {**pos, "description": "iterations to train"},
                    "throughput": {"type": "object", "minProperties": 1,
                                   "additionalProperties": nonneg,
                                   "description": "iterations/s per worker per GPU type; "
                                                  "not all zero"},
                    "weight": {**pos, "default": 1},
                    "user": {"type": "string", "minLength": 1},
                    "profile": {"type": "string", "minLength": 1},
                    "sensitivity": {"$ref": "#/$defs/sensitivity"},
                    "memory": {"type": "object", "additionalProperties": False,
                               "required": ["persistent", "ephemeral"],
                               "properties": {"persistent": nonneg, "ephemeral": nonneg},
                               "description": "Salus GPU memory footprint, MB"},
                    "utility": {"$ref": "#/$defs/utility"},
                    "compute_share": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                                      "description": "fraction of one GPU's compute an "
                                                     "iteration keeps busy alone (Salus u); "
                                                     "default 1"},
                },
            },
            "sensitivity": {
                "type": "object", "additionalProperties": False,
                "required": ["cpu_grid", "memory_grid", "throughput", "best_cpu", "best_memory"],
                "properties": {
                    "cpu_grid": {"type": "array", "minItems": 1, "items": pos},
                    "memory_grid": {"type": "array", "minItems": 1, "items": pos},
                    "throughput": {"type": "array", "items": {"type": "array", "items": nonneg}},
                    "best_cpu": pos, "best_memory": pos,
                },
            },
            "utility": {
                "type": "object", "additionalProperties": False, "required": ["kind"],
                "properties": {
                    "kind": {"enum": list(UTILITY_KINDS)},
                    "value": nonneg, "slope": nonneg, "gamma1": nonneg, "gamma2": nonneg,
                    "gamma3": {"type": "number"}, "deadline": nonneg, "late_value": nonneg,
                },
            },
        },
    }
