"""The kinds of what-if change, one typed operation each: read, applied, described.

A stored change is a JSON mapping with an ``op`` (what pages, the API and the scenario
page's script send). :func:`read` turns it into its :class:`Operation`, checking every field
it needs; the operation applies itself to a scenario's :class:`~allocation.engine.scenarios.
documents.Documents` and says itself in one line for a person. The list of operations and
their semantics is docs/scenarios.md, "Changes".
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from allocation.engine import kinds
from allocation.engine.allocator import STRATEGIES
from allocation.engine.autoscaler.nodegroups import blueprints, free_names
from allocation.engine.manifests import load_documents
from allocation.engine.objects import ObjectKey
from allocation.engine.scenarios.change_fields import check_field_types, json_type
from allocation.engine.scenarios.documents import (
    Applied,
    ChangeError,
    Documents,
    deallocate_v1,
    is_v1_claim,
    unbind,
)
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name

__all__ = ["Op", "OPS", "Operation", "read", "OPERATIONS"]

Op = Literal["pin-pod", "unpin-pod", "add-nodes", "remove-node", "add-object",
             "remove-object", "edit-selector", "set-strategy"]


class Operation:
    """One change: its fields as the mapping gives them, applied and described."""

    op: ClassVar[str]
    required: ClassVar[tuple[str, ...]]
    index: int

    def check(self) -> None:
        """Raise :class:`ChangeError` for a field the operation cannot take."""

    def apply(self, docs: Documents, applied: Applied) -> None:
        """Change ``docs`` (and ``applied``'s strategy or node lists); raise ChangeError
        when the change does not apply to them (an object it names is missing)."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line for a person."""
        raise NotImplementedError

    def fail(self, field_name: str, message: str) -> ChangeError:
        return ChangeError(self.index, field_name, message)


def _pod_key(docs: Documents, operation: Operation, ref: str) -> ObjectKey:
    namespace, _, name = str(ref).rpartition("/")
    if not name:
        raise operation.fail("pod", f"{ref!r} is not namespace/name")
    key = ObjectKey("Pod", namespace or "default", name)
    if key not in docs.by_key:
        raise operation.fail("pod", f"pod {key.namespace}/{name} not found")
    return key


def _set_pin(pod: dict, node: str | None) -> None:
    """Give ``pod`` a required node affinity on ``metadata.name`` (as DaemonSets pin their
    pods), or take it away."""
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


@dataclass
class PinPod(Operation):
    op: ClassVar[str] = "pin-pod"
    required: ClassVar[tuple[str, ...]] = ("pod", "node")
    index: int
    pod: str
    node: str

    def apply(self, docs: Documents, applied: Applied) -> None:
        if ObjectKey("Node", None, self.node) not in docs.by_key:
            raise self.fail("node", f"node {self.node!r} not found")
        key = _pod_key(docs, self, self.pod)
        unbind(docs, key)
        _set_pin(docs.writable(key), self.node)

    def describe(self) -> str:
        return f"Pin {self.pod} to {self.node}"


@dataclass
class UnpinPod(Operation):
    op: ClassVar[str] = "unpin-pod"
    required: ClassVar[tuple[str, ...]] = ("pod",)
    index: int
    pod: str

    def apply(self, docs: Documents, applied: Applied) -> None:
        key = _pod_key(docs, self, self.pod)
        unbind(docs, key)
        _set_pin(docs.writable(key), None)

    def describe(self) -> str:
        return f"Return {self.pod} to the queue"


@dataclass
class AddNodes(Operation):
    op: ClassVar[str] = "add-nodes"
    required: ClassVar[tuple[str, ...]] = ("group", "count")
    index: int
    group: str
    count: int

    def check(self) -> None:
        if not isinstance(self.count, int) or isinstance(self.count, bool) or \
                not 1 <= self.count <= 100:
            raise self.fail("count", "must be an integer from 1 to 100")

    def apply(self, docs: Documents, applied: Applied) -> None:
        if ObjectKey("NodeGroup", None, self.group) not in docs.by_key:
            raise self.fail("group", f"node group {self.group!r} not found")
        # The autoscaler's own blueprint makes the nodes, so a what-if node is exactly the
        # node a scale-up would add; it needs only the nodes, their resources and the groups.
        needed = ("Node", "NodeResourceSlice", "NodeResourceCapacity", "NodeGroup")
        infrastructure = [docs.by_key[k] for kind in needed for k in docs.of_kind(kind)]
        state = ClusterState.build(load_documents((("scenario", d) for d in infrastructure),
                                                  trusted=lambda d: True))
        blueprint = next(b for b in blueprints(state) if b.name == self.group)
        if blueprint.problem:
            raise self.fail("group", f"node group {self.group}: {blueprint.problem}")
        # No maxSize check: the what-if question is "what if we had more of these nodes";
        # the page shows the group's size against its maxSize, the autoscaler keeps its limit.
        for name in free_names(state, self.group, self.count):
            node, slices, capacities = blueprint.make(name)
            for obj in (node, *slices, *capacities):
                docs.put(obj.to_manifest())
            applied.added_nodes.append(name)

    def describe(self) -> str:
        return f"Add {self.count} node(s) of group {self.group}"


@dataclass
class RemoveNode(Operation):
    op: ClassVar[str] = "remove-node"
    required: ClassVar[tuple[str, ...]] = ("node",)
    index: int
    node: str

    def apply(self, docs: Documents, applied: Applied) -> None:
        node = self.node
        if ObjectKey("Node", None, node) not in docs.by_key:
            raise self.fail("node", f"node {node!r} not found")
        docs.remove(ObjectKey("Node", None, node))
        # the documents on the node: the baseline's, found once per baseline, and those an
        # earlier change copied or added, each judged as it is now
        on_node = docs.index.grouped("remove-node", _nodes_of).get(node, [])
        for kind in ("NodeResourceSlice", "NodeResourceCapacity", "ResourceSlice", "Pod",
                     "ResourceClaim"):
            for key in _candidates(docs, on_node, kind):
                doc = docs.by_key.get(key)
                if doc is None or node not in _nodes_of(key, doc):
                    continue
                if kind == "Pod":
                    unbind(docs, key)
                elif kind == "ResourceClaim":
                    _release(docs, key)
                else:  # network-attached v1 slices name no node: they stay
                    docs.remove(key)
        applied.removed_nodes.append(node)

    def describe(self) -> str:
        return f"Remove node {self.node} (its pods are replanned)"


def _candidates(docs: Documents, on_node: list[ObjectKey], kind: str) -> list[ObjectKey]:
    """The keys of ``kind`` that may be on the node: the baseline's ``on_node`` and every
    key whose document a change copied or added (``Documents.owned``); the baseline's in
    document order, then the others (each is edited on its own: the order is moot)."""
    keys = dict.fromkeys(k for k in on_node if k.kind == kind)
    keys.update(dict.fromkeys(k for k in docs.owned if k.kind == kind))
    at, last = docs.index.at, len(docs.index.at)
    return sorted(keys, key=lambda k: at.get(k, last))


def _nodes_of(key: ObjectKey, doc: dict) -> tuple[str, ...]:
    """The nodes a document is on, as removing a node judges it: a slice's or capacity's
    ``nodeName``, a pod's ``spec.nodeName``, the nodes a claim's devices are allocated on
    (a seed claim's resource handles, a v1 claim's allocation)."""
    kind = key.kind
    if kind in ("NodeResourceSlice", "ResourceSlice"):
        name = (doc.get("spec", doc) or {}).get("nodeName")
    elif kind == "NodeResourceCapacity":
        name = doc.get("nodeName")
    elif kind == "Pod":
        name = (doc.get("spec") or {}).get("nodeName")
    elif kind == "ResourceClaim":
        allocation = (doc.get("status") or {}).get("allocation") or {}
        if is_v1_claim(doc):
            name = allocated_node_name(allocation)
        else:
            return tuple({(h.get("structuredData") or {}).get("nodeName")
                          for h in allocation.get("resourceHandles") or ()} - {None})
    else:
        return ()
    return (name,) if isinstance(name, str) else ()


def _release(docs: Documents, key: ObjectKey) -> None:
    """Deallocate the claim at ``key``, whose devices are on a node that is going."""
    claim = docs.writable(key)
    if is_v1_claim(claim):
        claim["status"].pop("reservedFor", None)
        deallocate_v1(claim)
        return
    for name in ("allocation", "driverName", "reservedFor"):
        claim["status"].pop(name, None)
    meta = claim.get("metadata") or {}
    meta["finalizers"] = [f for f in meta.get("finalizers") or ()
                          if not f.endswith(".dra.k8s.io/delete-protection")]


@dataclass
class AddObject(Operation):
    op: ClassVar[str] = "add-object"
    required: ClassVar[tuple[str, ...]] = ("manifest",)
    index: int
    manifest: dict

    def check(self) -> None:
        manifest = self.manifest
        meta = manifest.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name") or not manifest.get("kind"):
            raise self.fail("manifest", "needs kind and metadata.name")
        # the object's key is made of these before the loader sees the manifest: each a
        # string, or the loader's own message would never come (an unhashable key)
        for path, value in (("kind", manifest["kind"]), ("metadata.name", meta["name"]),
                            ("metadata.namespace", meta.get("namespace", ""))):
            if not isinstance(value, str):
                raise self.fail("manifest", f"{path}: must be a string, not "
                                f"{json_type(value)}")

    def apply(self, docs: Documents, applied: Applied) -> None:
        docs.put(copy.deepcopy(self.manifest))

    def describe(self) -> str:
        meta = self.manifest.get("metadata") or {}
        return f"Add {self.manifest.get('kind')} {meta.get('name')}"


@dataclass
class RemoveObject(Operation):
    op: ClassVar[str] = "remove-object"
    required: ClassVar[tuple[str, ...]] = ("kind", "name")
    index: int
    kind: str
    name: str
    namespace: str | None = None

    def apply(self, docs: Documents, applied: Applied) -> None:
        key = ObjectKey(self.kind, kinds.scope(self.kind, self.namespace), self.name)
        if key not in docs.by_key:
            raise self.fail("name", f"{self.kind} {self.name} not found")
        if self.kind == "Node":
            RemoveNode(self.index, self.name).apply(docs, applied)
        else:
            docs.remove(key)

    def describe(self) -> str:
        return f"Remove {self.kind} {self.name}"


_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?")


@dataclass
class EditSelector(Operation):
    op: ClassVar[str] = "edit-selector"
    required: ClassVar[tuple[str, ...]] = ("kind", "object", "path", "expression")
    index: int
    kind: str
    object: str
    path: str
    expression: str

    def check(self) -> None:
        if not str(self.path).endswith(("selector", "cel.expression")):
            raise self.fail("path", "must name a selector field")

    def apply(self, docs: Documents, applied: Applied) -> None:
        namespace, _, name = str(self.object).rpartition("/")
        key = ObjectKey(self.kind, kinds.scope(self.kind, namespace or None), name)
        if key not in docs.by_key:
            raise self.fail("object", f"{self.kind} {self.object} not found")
        target: Any = docs.writable(key)
        parts = str(self.path).split(".")
        wrong = self.fail("path", f"{self.path!r} is not a path in {self.kind}")
        for position, part in enumerate(parts):
            match = _PATH_PART.fullmatch(part)
            if match is None or not isinstance(target, dict):
                raise wrong
            if position == len(parts) - 1 and match.group(2) is None:
                if match.group(1) not in target:
                    raise wrong
                target[match.group(1)] = self.expression
                return
            target = target.get(match.group(1))
            if match.group(2) is not None:
                if not isinstance(target, list) or int(match.group(2)) >= len(target):
                    raise wrong
                target = target[int(match.group(2))]
        raise wrong

    def describe(self) -> str:
        return f"Set {self.object} {self.path} to {self.expression}"


@dataclass
class SetStrategy(Operation):
    op: ClassVar[str] = "set-strategy"
    required: ClassVar[tuple[str, ...]] = ("strategy",)
    index: int
    strategy: str

    def check(self) -> None:
        if self.strategy not in STRATEGIES:
            raise self.fail("strategy", f"must be one of {', '.join(STRATEGIES)}")

    def apply(self, docs: Documents, applied: Applied) -> None:
        applied.strategy = self.strategy

    def describe(self) -> str:
        return f"Search with {self.strategy}"


OPERATIONS: dict[str, type[Operation]] = {cls.op: cls for cls in (
    PinPod, UnpinPod, AddNodes, RemoveNode, AddObject, RemoveObject, EditSelector,
    SetStrategy)}
"""Every operation by its ``op``, in the order pages list them."""

OPS: tuple[str, ...] = tuple(OPERATIONS)

def read(change: Any, index: int = 0) -> Operation:
    """The operation ``change`` (a stored mapping) asks for.

    Raises:
        ChangeError: ``change`` is not a mapping, names no known operation, misses a
            required field or has one the operation cannot take (not whether it applies).
    """
    if not isinstance(change, dict):
        raise ChangeError(index, "op", "a change must be an object with an op")
    op = change.get("op")
    cls = OPERATIONS.get(op) if isinstance(op, str) else None
    if cls is None:
        raise ChangeError(index, "op", f"unknown operation {change.get('op')!r}; "
                          f"one of {', '.join(OPS)}")
    for name in cls.required:
        if change.get(name) in (None, ""):
            raise ChangeError(index, name, "required field is missing")
    optional = {f.name: change[f.name] for f in fields(cls)  # type: ignore[arg-type]
                if f.name not in (*cls.required, "index") and change.get(f.name) is not None}
    given = {**{name: change[name] for name in cls.required}, **optional}
    check_field_types(fields(cls), index, given)
    operation = cls(index, **given)
    operation.check()
    return operation
