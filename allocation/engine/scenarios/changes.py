"""What-if changes: small, JSON-serialisable edits applied to a cluster's documents.

A scenario is a baseline plus an ordered list of changes. Each change is a mapping with an
``op`` and its arguments; :func:`apply_changes` returns the baseline's documents with the
changes applied, sharing every document it does not touch (copy-on-write), so a fork of a
large cluster costs only what it changes.

Operations:

- ``pin-pod`` (``pod``: ``ns/name``, ``node``): the pod must run on that node. It is unbound
  and its reservations dropped, then given a required node affinity on ``metadata.name``
  (as DaemonSets pin their pods), so the scheduler places it there or explains why not.
- ``unpin-pod`` (``pod``): back to the queue: unbound, reservations dropped, pin removed.
- ``add-nodes`` (``group``, ``count``): nodes of a NodeGroup, as its scale-up would add them
  (even beyond ``maxSize``: the question is "what if we had more of these nodes").
- ``remove-node`` (``node``): the node, its slices and capacities go (v1 ResourceSlices
  naming it too; network-attached ones stay); its pods are evicted (unbound, their claims
  released: a v1 claim allocated there is deallocated) and planned again.
- ``add-object`` (``manifest``): add or replace one object (a ProvisioningRequest, a pod...).
- ``remove-object`` (``kind``, ``name``, optional ``namespace``).
- ``edit-selector`` (``kind``, ``object``: ``[ns/]name``, ``path``: a dotted path to a
  ``selector`` field, or a DeviceClass's ``spec.selectors[i].cel.expression``,
  ``expression``).
- ``set-strategy`` (``strategy``: ``first-fit`` or ``best-fit``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from allocation.engine import kinds
from allocation.engine.allocator import STRATEGIES
from allocation.engine.autoscaler.nodegroups import blueprints, free_names
from allocation.engine.constants import EXPLAIN_ANNOTATION, V1_CLAIM_FINALIZER
from allocation.engine.manifests import load_documents
from allocation.engine.objects import ObjectKey
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name

__all__ = ["OPS", "ChangeError", "Applied", "apply_changes", "check_change", "pinned_node"]

OPS = ("pin-pod", "unpin-pod", "add-nodes", "remove-node", "add-object", "remove-object",
       "edit-selector", "set-strategy")


class ChangeError(ValueError):
    """A change that cannot apply: ``changes[i].field: message``."""

    def __init__(self, index: int, field_name: str, message: str) -> None:
        self.index, self.field, self.message = index, field_name, message
        super().__init__(f"changes[{index}].{field_name}: {message}")


@dataclass
class Applied:
    """Documents after the changes, and the strategy the scenario asks for."""

    documents: list[dict]
    strategy: str = "first-fit"
    added_nodes: list[str] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)


_REQUIRED = {"pin-pod": ("pod", "node"), "unpin-pod": ("pod",), "add-nodes": ("group", "count"),
             "remove-node": ("node",), "add-object": ("manifest",),
             "remove-object": ("kind", "name"), "edit-selector": ("kind", "object", "path",
                                                                  "expression"),
             "set-strategy": ("strategy",)}


def check_change(change: Any, index: int = 0) -> None:
    """Raise :class:`ChangeError` unless ``change`` is well-formed (not whether it applies)."""
    if not isinstance(change, dict):
        raise ChangeError(index, "op", "a change must be an object with an op")
    op = change.get("op")
    if op not in OPS:
        raise ChangeError(index, "op", f"unknown operation {op!r}; one of {', '.join(OPS)}")
    for name in _REQUIRED[op]:
        if change.get(name) in (None, ""):
            raise ChangeError(index, name, "required field is missing")
    if op == "add-nodes" and (not isinstance(change["count"], int) or
                              isinstance(change["count"], bool) or not 1 <= change["count"] <= 100):
        raise ChangeError(index, "count", "must be an integer from 1 to 100")
    if op == "set-strategy" and change["strategy"] not in STRATEGIES:
        raise ChangeError(index, "strategy", f"must be one of {', '.join(STRATEGIES)}")
    if op == "add-object" and not isinstance(change["manifest"], dict):
        raise ChangeError(index, "manifest", "must be a manifest object")
    if op == "edit-selector" and not str(change["path"]).endswith(("selector",
                                                                    "cel.expression")):
        raise ChangeError(index, "path", "must name a selector field")


class _Docs:
    """Documents by identity with copy-on-write edits."""

    def __init__(self, documents: Sequence[dict]) -> None:
        self.order: list[ObjectKey] = []
        self.by_key: dict[ObjectKey, dict] = {}
        self.owned: set[ObjectKey] = set()
        for doc in documents:
            key = _key(doc)
            if key not in self.by_key:
                self.order.append(key)
            self.by_key[key] = doc

    def get(self, kind: str, namespace: str | None, name: str) -> dict | None:
        return self.by_key.get(ObjectKey(kind, namespace, name))

    def writable(self, key: ObjectKey) -> dict:
        if key not in self.owned:
            self.by_key[key] = copy.deepcopy(self.by_key[key])
            self.owned.add(key)
        return self.by_key[key]

    def put(self, doc: dict) -> None:
        key = _key(doc)
        if key not in self.by_key:
            self.order.append(key)
        self.by_key[key] = doc
        self.owned.add(key)

    def remove(self, key: ObjectKey) -> None:
        self.by_key.pop(key, None)

    def of_kind(self, kind: str) -> list[ObjectKey]:
        return [k for k in self.order if k.kind == kind and k in self.by_key]

    def documents(self) -> list[dict]:
        return [self.by_key[k] for k in self.order if k in self.by_key]


def _scope(kind: str, namespace: str | None) -> str | None:
    """The namespace an object of ``kind`` is keyed under, as the loader keys it."""
    scoped = kinds.namespaced(kind)
    if scoped is None:
        return namespace  # vendor objects: scope as written
    return (namespace or "default") if scoped else None


def _key(doc: dict) -> ObjectKey:
    meta = doc.get("metadata") or {}
    kind = doc.get("kind", "")
    return ObjectKey(kind, _scope(kind, meta.get("namespace")), meta.get("name"))


def _split(ref: str, index: int, field_name: str) -> tuple[str, str]:
    namespace, _, name = str(ref).rpartition("/")
    if not name:
        raise ChangeError(index, field_name, f"{ref!r} is not namespace/name")
    return namespace or "default", name


def _unbind(docs: _Docs, key: ObjectKey) -> None:
    """Unbind a pod and drop the reservations its claims hold for it."""
    pod = docs.writable(key)
    (pod.get("spec") or {}).pop("nodeName", None)
    pod.pop("status", None)
    (pod.get("metadata") or {}).get("annotations", {}).pop(EXPLAIN_ANNOTATION, None)
    namespace, name = key.namespace, key.name
    for claim_key in docs.of_kind("ResourceClaim"):
        if claim_key.namespace != namespace:
            continue
        reserved = ((docs.by_key[claim_key].get("status") or {}).get("reservedFor")) or []
        if any(r.get("resource") == "pods" and r.get("name") == name for r in reserved):
            claim = docs.writable(claim_key)
            status = claim["status"]
            status["reservedFor"] = [r for r in reserved if not (
                r.get("resource") == "pods" and r.get("name") == name)]
            if not status["reservedFor"]:
                del status["reservedFor"]
                if _is_v1(claim):
                    _deallocate_v1(claim)


def _is_v1(doc: dict) -> bool:
    return doc.get("apiVersion") in kinds.RESOURCE_CLAIM_V1.api_versions


def _deallocate_v1(claim: dict) -> None:
    """A v1 claim no pod uses any more loses its allocation and finalizer, as the
    resourceclaim controller deallocates it (the seed's claim controller does the same for
    seed claims when it runs; docs/scenarios.md)."""
    (claim.get("status") or {}).pop("allocation", None)
    meta = claim.get("metadata") or {}
    meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != V1_CLAIM_FINALIZER]
    if not meta["finalizers"]:
        del meta["finalizers"]


def _pod_key(docs: _Docs, change: dict, index: int) -> ObjectKey:
    namespace, name = _split(change["pod"], index, "pod")
    key = ObjectKey("Pod", namespace, name)
    if key not in docs.by_key:
        raise ChangeError(index, "pod", f"pod {namespace}/{name} not found")
    return key


def _set_pin(pod: dict, node: str | None) -> None:
    spec = pod.setdefault("spec", {})
    affinity = spec.get("affinity") or {}
    node_affinity = affinity.get("nodeAffinity") or {}
    if node is None:
        node_affinity.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
    else:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    if node_affinity:
        affinity["nodeAffinity"] = node_affinity
    else:
        affinity.pop("nodeAffinity", None)
    if affinity:
        spec["affinity"] = affinity
    else:
        spec.pop("affinity", None)


def pinned_node(pod: dict) -> str | None:
    """The node a ``pin-pod`` change pinned ``pod`` to, if any."""
    required = ((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for field_ in term.get("matchFields") or ():
            if field_.get("key") == "metadata.name" and field_.get("operator") == "In" and \
                    len(field_.get("values") or ()) == 1:
                return field_["values"][0]
    return None


def _add_nodes(docs: _Docs, change: dict, index: int, applied: Applied) -> None:
    group_name = change["group"]
    if ObjectKey("NodeGroup", None, group_name) not in docs.by_key:
        raise ChangeError(index, "group", f"node group {group_name!r} not found")
    # The autoscaler's own blueprint makes the nodes, so a what-if node is exactly the node
    # a scale-up would add; it needs only the nodes, their resources and the groups.
    kinds = ("Node", "NodeResourceSlice", "NodeResourceCapacity", "NodeGroup")
    infrastructure = [docs.by_key[k] for kind in kinds for k in docs.of_kind(kind)]
    state = ClusterState.build(load_documents((("scenario", d) for d in infrastructure),
                                              trusted=lambda d: True))
    blueprint = next(b for b in blueprints(state) if b.name == group_name)
    if blueprint.problem:
        raise ChangeError(index, "group", f"node group {group_name}: {blueprint.problem}")
    # No maxSize check: the what-if question is "what if we had more of these nodes"; the
    # page shows the group's size against its maxSize, and the autoscaler keeps its limit.
    for name in free_names(state, group_name, change["count"]):
        node, slices, capacities = blueprint.make(name)
        for obj in (node, *slices, *capacities):
            docs.put(obj.to_manifest())
        applied.added_nodes.append(name)


def _remove_node(docs: _Docs, change: dict, index: int, applied: Applied) -> None:
    node = change["node"]
    if ObjectKey("Node", None, node) not in docs.by_key:
        raise ChangeError(index, "node", f"node {node!r} not found")
    docs.remove(ObjectKey("Node", None, node))
    for kind in ("NodeResourceSlice", "NodeResourceCapacity", "ResourceSlice"):
        for key in docs.of_kind(kind):
            doc = docs.by_key[key]
            holder = doc if kind == "NodeResourceCapacity" else doc.get("spec", doc)
            if holder.get("nodeName") == node:  # network-attached v1 slices stay
                docs.remove(key)
    for key in docs.of_kind("Pod"):
        if (docs.by_key[key].get("spec") or {}).get("nodeName") == node:
            _unbind(docs, key)
    for key in docs.of_kind("ResourceClaim"):
        allocation = (docs.by_key[key].get("status") or {}).get("allocation") or {}
        if _is_v1(docs.by_key[key]):
            if allocated_node_name(allocation) == node:
                claim = docs.writable(key)
                claim["status"].pop("reservedFor", None)
                _deallocate_v1(claim)
            continue
        if any((h.get("structuredData") or {}).get("nodeName") == node
               for h in allocation.get("resourceHandles") or ()):
            claim = docs.writable(key)
            for name in ("allocation", "driverName", "reservedFor"):
                claim["status"].pop(name, None)
            meta = claim.get("metadata") or {}
            meta["finalizers"] = [f for f in meta.get("finalizers") or ()
                                  if not f.endswith(".dra.k8s.io/delete-protection")]
    applied.removed_nodes.append(node)


_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?")


def _edit_selector(docs: _Docs, change: dict, index: int) -> None:
    kind = change["kind"]
    namespace, _, name = str(change["object"]).rpartition("/")
    key = ObjectKey(kind, _scope(kind, namespace or None), name)
    if key not in docs.by_key:
        raise ChangeError(index, "object", f"{kind} {change['object']} not found")
    doc = docs.writable(key)
    target: Any = doc
    parts = str(change["path"]).split(".")
    for position, part in enumerate(parts):
        match = _PATH_PART.fullmatch(part)
        if match is None or not isinstance(target, dict):
            raise ChangeError(index, "path", f"{change['path']!r} is not a path in {kind}")
        last = position == len(parts) - 1
        if last and match.group(2) is None:
            if match.group(1) not in target:
                raise ChangeError(index, "path", f"{change['path']!r} is not a path in {kind}")
            target[match.group(1)] = change["expression"]
            return
        target = target.get(match.group(1))
        if match.group(2) is not None:
            if not isinstance(target, list) or int(match.group(2)) >= len(target):
                raise ChangeError(index, "path", f"{change['path']!r} is not a path in {kind}")
            target = target[int(match.group(2))]
    raise ChangeError(index, "path", f"{change['path']!r} is not a path in {kind}")


def apply_changes(documents: Sequence[dict], changes: Sequence[dict],
                  strategy: str = "first-fit") -> Applied:
    """The documents with ``changes`` applied in order; the input is never modified."""
    docs = _Docs(documents)
    applied = Applied([], strategy)
    for index, change in enumerate(changes):
        check_change(change, index)
        op = change["op"]
        if op == "pin-pod":
            if ObjectKey("Node", None, change["node"]) not in docs.by_key:
                raise ChangeError(index, "node", f"node {change['node']!r} not found")
            key = _pod_key(docs, change, index)
            _unbind(docs, key)
            _set_pin(docs.writable(key), change["node"])
        elif op == "unpin-pod":
            key = _pod_key(docs, change, index)
            _unbind(docs, key)
            _set_pin(docs.writable(key), None)
        elif op == "add-nodes":
            _add_nodes(docs, change, index, applied)
        elif op == "remove-node":
            _remove_node(docs, change, index, applied)
        elif op == "add-object":
            manifest = change["manifest"]
            if not isinstance(manifest.get("metadata"), dict) or not manifest["metadata"].get(
                    "name") or not manifest.get("kind"):
                raise ChangeError(index, "manifest", "needs kind and metadata.name")
            docs.put(copy.deepcopy(manifest))
        elif op == "remove-object":
            kind = change["kind"]
            key = ObjectKey(kind, _scope(kind, change.get("namespace")), change["name"])
            if key not in docs.by_key:
                raise ChangeError(index, "name", f"{kind} {change['name']} not found")
            if kind == "Node":
                _remove_node(docs, {"node": change["name"]}, index, applied)
            else:
                docs.remove(key)
        elif op == "edit-selector":
            _edit_selector(docs, change, index)
        elif op == "set-strategy":
            applied.strategy = change["strategy"]
    applied.documents = docs.documents()
    return applied
