"""The instance and schedule arguments of the public functions, as objects.

:func:`optsched.solve`, :func:`optsched.simulate` and
:func:`optsched.validate_schedule` take an :class:`~optsched.core.instance.Instance`
(and a :class:`~optsched.core.schedule.Schedule`) or a mapping in their JSON form, read
by ``Instance.from_dict`` / ``Schedule.from_dict`` with the same checks as a file;
anything else is an :class:`~optsched.errors.InvalidInput` naming the argument, never
an ``AttributeError`` from deep inside a method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optsched.core.instance import Instance
from optsched.core.schedule import Schedule
from optsched.errors import InvalidInput

__all__ = ["as_instance", "as_schedule"]


def as_instance(value: Any, name: str = "instance") -> Instance:
    """``value`` if it is an :class:`Instance`, ``Instance.from_dict(value)`` for a
    mapping (raising :class:`~optsched.errors.InvalidInstance` on bad content)."""
    if isinstance(value, Instance):
        return value
    if isinstance(value, Mapping):
        return Instance.from_dict(value)
    raise InvalidInput(name, type(value).__name__,
                       "must be an Instance or a mapping in its JSON form "
                       "(optsched.load_instance reads a file)")


def as_schedule(value: Any, name: str = "schedule") -> Schedule:
    """``value`` if it is a :class:`Schedule`, ``Schedule.from_dict(value)`` for a
    mapping (a schedule or a result's JSON form; raising
    :class:`~optsched.errors.InvalidSchedule` on bad content)."""
    if isinstance(value, Schedule):
        return value
    if isinstance(value, Mapping):
        return Schedule.from_dict(value)
    raise InvalidInput(name, type(value).__name__,
                       "must be a Schedule or a mapping in its JSON form "
                       "(optsched.load_schedule reads a file)")
