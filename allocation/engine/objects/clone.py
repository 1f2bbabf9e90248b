"""A copy of an engine object for copy-on-write states (``ClusterState.writable``).

A fork shares every object with its parent until one of them changes it; the one that
changes it first takes a copy whose mutable parts are its own. Copying deep would copy the
input document too, which nothing changes (docs/autoscaling.md, "Snapshots").
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TypeVar

from allocation.engine.objects.meta import KObject
from allocation.engine.objects.resource import Allocation

__all__ = ["clone", "own_parts"]

_T = TypeVar("_T", bound=KObject)


def clone(obj: _T) -> _T:
    """A copy of ``obj`` whose mutable parts are its own; the input document stays shared.

    Returns:
        The copy: metadata's labels, annotations, finalizers and owner references, and
        every attribute's containers two levels deep, new; ``raw`` and ``source`` shared.
    """
    twin = copy.copy(obj)
    meta = obj.meta
    twin.meta = dataclasses.replace(
        meta, labels=dict(meta.labels), annotations=dict(meta.annotations),
        finalizers=list(meta.finalizers),
        owner_references=[dict(r) for r in meta.owner_references])
    for name, value in vars(obj).items():
        if name not in ("raw", "source", "meta"):
            setattr(twin, name, own_parts(value))
    return twin


def own_parts(value):
    """``value`` with the parts an object may change in place its own: containers copied
    two levels deep (conditions, reservations, per-claim lists), deeper ones shared. What
    a copy on write takes, and what an object takes of its input document's status: the
    deeper parts are never changed in place, only replaced."""
    if isinstance(value, list):
        return [own_parts(v) if isinstance(v, list | dict) else v for v in value] \
            if any(isinstance(v, list | dict) for v in value) else list(value)
    if isinstance(value, dict):
        return {k: (copy.copy(v) if isinstance(v, list | dict) else v)
                for k, v in value.items()}
    if isinstance(value, Allocation):
        return dataclasses.replace(value, picks=list(value.picks))
    return value
