"""One object, one uid: ``metadata.uid`` is unique across a cluster.

The API server gives every object its own uid, and the planner follows objects by uid (an
owner reference names its pod by uid, a claim's ``reservedFor`` names its pods by uid), so
two objects that share one would be taken for each other: a template claim owned by both
pods, a reservation kept for the wrong pod. Manifests written by hand can copy a uid, so
the loader and the console's writes refuse a uid that another object already has.
"""

from __future__ import annotations

from collections.abc import Iterable

from allocation.engine.manifests.problems import Problem
from allocation.engine.objects import KObject, Source

__all__ = ["duplicate_uids"]


def duplicate_uids(objects: Iterable[KObject], others: Iterable[KObject] = ()) -> list[Problem]:
    """Problems for every object in ``objects`` whose ``metadata.uid`` an earlier object of
    ``objects``, or any object of ``others`` (already stored, say), has too. An object
    replacing one of ``others`` (same kind, namespace and name) may keep its uid.

    Returns:
        One problem per object that repeats a uid, at ``metadata.uid``, naming the object
        that has it first.
    """
    owners: dict[str, KObject] = {}
    for other in others:
        if other.meta.uid:
            owners.setdefault(other.meta.uid, other)
    found: list[Problem] = []
    for obj in objects:
        uid = obj.meta.uid
        if not uid:
            continue
        first = owners.get(uid)
        if first is None or _same(first, obj):
            owners[uid] = obj
            continue
        source = obj.source or Source("", 0)
        found.append(Problem(source.file, source.doc, obj.kind_name, obj.namespace, obj.name,
                             "metadata.uid", f"duplicate uid {uid!r}: {_where(first)} has it"))
    return found


def _same(a: KObject, b: KObject) -> bool:
    return (a.kind_name, a.namespace, a.name) == (b.kind_name, b.namespace, b.name)


def _where(obj: KObject) -> str:
    ident = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    source = obj.source
    at = f" at {source.file}:{source.doc}" if source and source.file else ""
    return f"{obj.kind_name} {ident}{at}"
