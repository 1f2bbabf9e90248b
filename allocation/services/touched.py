"""What a write touches: the stored rows it replaces, and the rows its checks need.

A write of a few objects must not read every stored document (docs/console.md,
"Services"). The engine's whole-cluster checks (``ClusterState.build``) judge objects
through a node: a pod's ``spec.nodeName`` must name a node; a claim's allocated devices must
be published on their node (slices, capacities) and held by no other claim. So the
neighbourhood of a write is every node it names (its objects', and the replaced and deleted
rows'), with each such node's slices, capacities, bound pods and allocated claims, found
through the indexed columns; ``ClusterState.build`` of that neighbourhood reports exactly the
problems the whole cluster would report about it. The v1 dialect rule
(``simulation.refuse_unsimulated_v1``) needs a written pod's claims and templates, found by
name. An import that replaces the whole cluster reads every row anyway.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from allocation.engine import kinds
from allocation.engine.objects import (
    KObject,
    Node,
    NodeResourceCapacity,
    NodeResourceSlice,
    Pod,
    PodTemplate,
    ResourceClaim,
)
from allocation.models import (
    OBJECT_MODELS,
    Event,
    StoredObject,
    VendorObject,
    models_of_kind,
)
from allocation.models import Node as NodeRow
from allocation.models import NodeResourceCapacity as CapacityRow
from allocation.models import NodeResourceSlice as SliceRow
from allocation.models import Pod as PodRow
from allocation.models import ResourceClaim as ClaimRow
from allocation.services.store import Identity, row_identity

__all__ = ["rows_of", "neighbourhood", "claim_references", "uid_holders"]

_CHUNK = 500  # values per IN (...) query (SQLite's limit on query parameters)
_ALLOCATED = ("Allocated", "Reserved", "DeallocationRequested")


def _chunks(values: Iterable[str]) -> list[list[str]]:
    values = sorted(set(values))
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)]


def rows_of(identities: Iterable[Identity]) -> list[StoredObject]:
    """The stored rows with these identities (every version of a kind: a seed and a v1
    claim of one name are one object), in document order."""
    wanted = set(identities)
    by_model: dict[type[StoredObject], set[str]] = defaultdict(set)
    for group, kind, _namespace, name in wanted:
        if group or not models_of_kind(kind):
            by_model[Event if kind == "Event" and not group else VendorObject].add(name)
        else:
            for model in models_of_kind(kind):
                by_model[model].add(name)
    found = []
    for model, names in by_model.items():
        if len(names) > _CHUNK and not model.objects.exists():
            continue  # an empty table (a first import): one query, not one per chunk
        for chunk in _chunks(names):
            found.extend(r for r in model.objects.filter(name__in=chunk)
                         if row_identity(r) in wanted)
    found.sort(key=lambda r: r.position)
    return found


def _nodes_of(obj: KObject) -> set[str]:
    """The nodes an object's checks go through."""
    if isinstance(obj, Node):
        return {obj.name}
    if isinstance(obj, Pod):
        return {obj.node_name} if obj.node_name else set()
    if isinstance(obj, NodeResourceSlice | NodeResourceCapacity):
        return {obj.node_name} if obj.node_name else set()
    if isinstance(obj, ResourceClaim) and obj.allocation is not None:
        nodes = {obj.allocation.node_name} if obj.allocation.node_name else set()
        for handle in obj.allocation.handles:
            data = handle.get("structuredData") if isinstance(handle, dict) else None
            if isinstance(data, dict) and isinstance(data.get("nodeName"), str):
                nodes.add(data["nodeName"])
        return nodes
    return set()


def _row_nodes(row: StoredObject) -> set[str]:
    if isinstance(row, NodeRow):
        return {row.name}
    node = getattr(row, "node_name", "")
    return {node} if node else set()


def neighbourhood(objects: Iterable[KObject], rows: Iterable[StoredObject],
                  load) -> tuple[list[StoredObject], dict[tuple[type, int], object]]:
    """The stored rows the checks of a write need: every node that ``objects`` (written)
    and ``rows`` (replaced or deleted) name, with its slices, capacities, bound pods and
    allocated claims. ``load(row)`` gives a claim's engine object (or a stand-in for a row
    that cannot be loaded) to follow its devices to their nodes.

    Returns:
        The rows (document order), and what ``load`` gave for the rows it was called on,
        keyed by ``(model, pk)``.
    """
    nodes: set[str] = set()
    for obj in objects:
        nodes |= _nodes_of(obj)
    for row in rows:
        nodes |= _row_nodes(row)
    found: dict[tuple[type, int], StoredObject] = {}
    loaded: dict[tuple[type, int], object] = {}
    seen: set[str] = set()
    wanted = nodes
    while wanted:  # a claim found may hold devices on one more node (rarely)
        claims: list[StoredObject] = []
        for chunk in _chunks(wanted):
            found.update(((NodeRow, r.pk), r) for r in NodeRow.objects.filter(name__in=chunk))
            for model in (SliceRow, CapacityRow, PodRow):
                found.update(((model, r.pk), r)
                             for r in model.objects.filter(node_name__in=chunk))
            claims.extend(ClaimRow.objects.filter(node_name__in=chunk))
        if not seen:  # allocations tied to no node name: few, and any node's business
            claims.extend(ClaimRow.objects.filter(node_name="", status__in=_ALLOCATED))
        seen |= wanted
        more: set[str] = set()
        for row in claims:
            if (ClaimRow, row.pk) in found:
                continue
            found[(ClaimRow, row.pk)] = row
            obj = loaded[(ClaimRow, row.pk)] = load(row)
            if isinstance(obj, KObject):
                more |= _nodes_of(obj)
        wanted = more - seen
    return sorted(found.values(), key=lambda r: r.position), loaded


def claim_references(objects: Iterable[KObject]) -> list[Identity]:
    """The claims and claim templates written pods and PodTemplates name (both versions
    share an identity): what the v1 dialect rule reads."""
    out: list[Identity] = []
    for obj in objects:
        if isinstance(obj, Pod):
            entries = [(c.template_name, c.claim_name) for c in obj.claims]
        elif isinstance(obj, PodTemplate):
            spec = obj.template.get("spec") or {}
            entries = [(e.get("resourceClaimTemplateName"), e.get("resourceClaimName"))
                       for e in spec.get("resourceClaims") or () if isinstance(e, dict)]
        else:
            continue
        namespace = obj.namespace or ""
        for template, claim in entries:
            if isinstance(template, str) and template:
                out.append(("", kinds.RESOURCE_CLAIM_TEMPLATE.name, namespace, template))
            elif isinstance(claim, str) and claim:
                out.append(("", kinds.RESOURCE_CLAIM.name, namespace, claim))
    return out


def uid_holders(objects: Iterable[KObject]) -> list[StoredObject]:
    """The stored rows holding a ``metadata.uid`` one of ``objects`` sets (the indexed
    ``uid`` column), in document order."""
    uids = {obj.meta.uid for obj in objects if obj.meta.uid}
    if not uids:
        return []
    found = []
    for model in OBJECT_MODELS:
        if len(uids) <= _CHUNK:
            found.extend(model.objects.filter(uid__in=uids))
            continue
        # many (an import): the uids stored are read once, not in a query per 500
        held = [pk for pk, uid in model.objects.exclude(uid="").values_list("pk", "uid")
                if uid in uids]
        for start in range(0, len(held), _CHUNK):
            found.extend(model.objects.filter(pk__in=held[start:start + _CHUNK]))
    found.sort(key=lambda r: r.position)
    return found
