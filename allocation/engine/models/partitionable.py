"""The ``partitionable`` model (KEP-4381 semantic parameters, spec sections 2 and 4).

A driver publishes resource instances that may be split into partitions: an instance with
``partitions`` offers several partition groups (schemes), each a list of instances that may
be partitioned again. Only leaves (instances without partitions) are allocated; a leaf's ID is
the path of names from its root instance, alternating instance and group
(``gpu-1/half-and-quarters/second-half/quarters/quarter-0``).

Attributes of a leaf, later winning: its ancestors' (the parent instance's, recursively), its
group's ``commonAttributesRefs``, its own ``commonAttributesRefs`` in order, its own
``attributes``.

The scheme lock: for every instance with partitions, at most one of its groups may hold
allocated leaves at a time; the instance stays locked to that group until all its leaves are
free again. Locks nest (a partitioned instance inside a group has a lock of its own).

Candidate order:

* ``first-fit``: leaves in document order, depth first (the seed's search).
* ``best-fit``: by ``(opened, share, order)``. ``opened`` counts what taking the leaf would
  put into use that is unused now: every partitioned instance on its path that has no
  allocated leaf (so no active scheme), or, for a root instance without partitions, the whole
  device. ``share`` is the leaf's share of its root instance, where every group divides its
  instance equally among the group's instances (``quarters/quarter-0`` is 1/4,
  ``half-and-quarters/second-half/quarters/quarter-0`` is 1/2 x 1/2). ``order`` is document
  order, the tie breaker. So best-fit fills schemes already chosen before locking new ones,
  and uses the smallest partition among equals.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from allocation.engine.attributes import AttributeSet
from allocation.engine.manifests.common import attribute_group, cel_str
from allocation.engine.manifests.common import attributes as attributes_schema
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import DNS_SUBDOMAIN, ListOf, Obj, Str, join, suggest
from allocation.engine.models.base import (
    HELD,
    Candidate,
    Inventory,
    Owner,
    Refusal,
    Request,
    Strategy,
    StructuredModel,
)
from allocation.engine.models.named import attribute_set
from allocation.engine.models.selection import refusal_for, required_requests, selectors_pass

__all__ = ["PartitionableModel", "PartitionableInventory", "Leaf", "LeafData", "Scheme"]

_refs = ListOf(Str(DNS_SUBDOMAIN))
_instance = Obj({"name": Str(DNS_SUBDOMAIN), "commonAttributesRefs": _refs,
                 "attributes": attributes_schema}, required=("name",))
_group = Obj({"name": Str(DNS_SUBDOMAIN), "commonAttributesRefs": _refs,
              "resourceInstances": ListOf(_instance, min_items=1, unique_key="name")},
             required=("name", "resourceInstances"))
_instance.fields["partitions"] = ListOf(_group, unique_key="name")


@dataclass(slots=True)
class Leaf:
    """A leaf's place in its tree: the ``(instance, group)`` locks it needs, its share."""

    locks: tuple[tuple[str, str], ...]
    share: float
    root: str


class LeafData(NamedTuple):
    """A leaf candidate's ``data``: its attributes (inherited ones merged) and its place."""

    attributes: AttributeSet
    leaf: Leaf


@dataclass(slots=True)
class Scheme:
    """The scheme (partition group) an instance is locked to, and its allocated leaves."""

    group: str
    leaves: int


@dataclass(slots=True)
class _Tree:
    """What the inventory knows besides leaves: partitioned instances and their groups."""

    leaves: list[Candidate] = field(default_factory=list)
    by_id: dict[str, Candidate] = field(default_factory=dict)
    inner: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)


def _walk(instance: dict, prefix: str, parent: AttributeSet, group_refs: Sequence[str],
          common: dict[str, AttributeSet], locks: tuple, share: float, root: str | None,
          tree: _Tree) -> None:
    ident = f"{prefix}{instance['name']}"
    root = root or ident
    attrs = parent
    for ref in [*group_refs, *(instance.get("commonAttributesRefs") or ())]:
        attrs = attrs.merged(common.get(ref, AttributeSet()))
    if instance.get("attributes"):
        attrs = attrs.merged(attribute_set(instance["attributes"]))
    partitions = instance.get("partitions") or ()
    if not partitions:
        if ident not in tree.by_id:  # a second slice reusing an ID cannot shadow the first
            leaf = Candidate(ident, len(tree.leaves), LeafData(attrs, Leaf(locks, share, root)))
            tree.leaves.append(leaf)
            tree.by_id[ident] = leaf
        return
    tree.inner.add(ident)
    for group in partitions:
        group_id = f"{ident}/{group['name']}"
        tree.groups.add(group_id)
        members = group.get("resourceInstances") or ()
        for child in members:
            _walk(child, f"{group_id}/", attrs, group.get("commonAttributesRefs") or (),
                  common, (*locks, (ident, group["name"])), share / max(len(members), 1),
                  root, tree)


def _dicts(items: Any) -> list[dict]:
    return [item for _index, item in _indexed(items)]


def _indexed(items: Any) -> list[tuple[int, dict]]:
    """The mapping items of a list with their indexes (checks run on broken input too)."""
    if not isinstance(items, list):
        return []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


class PartitionableInventory(Inventory):
    """Partition trees of one driver on one node: held leaves and the active schemes."""

    def __init__(self, model: PartitionableModel, node_name: str, driver_name: str,
                 tree: _Tree) -> None:
        self.model = model
        self.node_name = node_name
        self.driver_name = driver_name
        self.leaves = tree.leaves
        self.by_id = tree.by_id
        self.inner = tree.inner
        self.groups = tree.groups
        self.holder: dict[str, Owner] = {}
        self.active: dict[str, Scheme] = {}  # instance ID -> its locked scheme
        self.in_use: dict[str, int] = {}  # root ID -> allocated leaves below it

    # -- state --------------------------------------------------------------------------
    def _blocker(self, leaf: Leaf) -> tuple[str, str] | None:
        active = self.active
        for instance, group in leaf.locks:
            current = active.get(instance)
            if current is not None and current.group != group:
                return instance, current.group
        return None

    def _opened(self, leaf: Leaf) -> int:
        if not leaf.locks:
            return 0 if self.in_use.get(leaf.root) else 1
        active = self.active
        return sum(1 for instance, _group in leaf.locks if instance not in active)

    def _lock_holders(self, instance: str, group: str) -> list[str]:
        prefix = f"{instance}/{group}/"
        return sorted({o for i, o in self.holder.items() if i.startswith(prefix)})

    def _reason(self, candidate: Candidate) -> str | None:
        owner = self.holder.get(candidate.id)
        if owner is not None:
            return HELD + owner
        blocked = self._blocker(candidate.data.leaf)
        if blocked is not None:
            instance, group = blocked
            return (f"blocked: instance {instance} is locked to scheme {group} by claim(s) "
                    + ", ".join(self._lock_holders(instance, group)))
        return None

    # -- the Inventory interface --------------------------------------------------------
    def candidates(self, request: Request, strategy: str,
                   refusals: list[Refusal] | None = None) -> Iterator[Candidate]:
        selectors = request.selectors
        if strategy != Strategy.BEST_FIT:
            for leaf in self.leaves:
                if self._usable(leaf, selectors, refusals):
                    yield leaf
            return
        ranked = []
        for leaf in self.leaves:
            if self._usable(leaf, selectors, refusals):
                info = leaf.data.leaf
                ranked.append((self._opened(info), info.share, leaf.order, leaf))
        ranked.sort(key=lambda item: item[:3])
        for *_key, leaf in ranked:
            if leaf.id not in self.holder and self._blocker(leaf.data.leaf) is None:
                yield leaf

    def _usable(self, leaf: Candidate, selectors: tuple,
                refusals: list[Refusal] | None) -> bool:
        if leaf.id in self.holder or self._blocker(leaf.data.leaf) is not None:
            if refusals is not None:
                refusals.append(Refusal(leaf.id, self._reason(leaf) or "unavailable"))
            return False
        if selectors_pass(selectors, leaf.data.attributes):
            return True
        if refusals is not None:
            refusals.append(Refusal(leaf.id, refusal_for(selectors, leaf.data.attributes)))
        return False

    def clone(self) -> PartitionableInventory:
        twin = copy.copy(self)
        twin.holder = dict(self.holder)
        twin.active = {instance: Scheme(s.group, s.leaves) for instance, s in self.active.items()}
        twin.in_use = dict(self.in_use)
        return twin

    def take(self, candidate: Candidate, owner: Owner) -> None:
        current = self.holder.get(candidate.id)
        if current == owner:
            return
        reason = self._reason(candidate)
        if reason is not None:
            raise ValueError(f"partition {candidate.id} is {reason}")
        self.holder[candidate.id] = owner
        info: Leaf = candidate.data.leaf
        for instance, group in info.locks:
            scheme = self.active.get(instance)
            if scheme is None:
                self.active[instance] = Scheme(group, 1)
            else:
                scheme.leaves += 1
        self.in_use[info.root] = self.in_use.get(info.root, 0) + 1

    def release(self, candidate: Candidate, owner: Owner) -> None:
        if self.holder.get(candidate.id) != owner:
            return
        del self.holder[candidate.id]
        info: Leaf = candidate.data.leaf
        for instance, _group in info.locks:
            scheme = self.active[instance]
            scheme.leaves -= 1
            if scheme.leaves == 0:
                del self.active[instance]
        left = self.in_use[info.root] - 1
        if left:
            self.in_use[info.root] = left
        else:
            del self.in_use[info.root]

    def resolve(self, item: dict) -> Candidate | str:
        ident = str(item.get("id"))
        leaf = self.by_id.get(ident)
        if leaf is not None:
            return leaf
        where = f"of driver {self.driver_name} on node {self.node_name}"
        if ident in self.inner:
            return (f"instance {ident!r} {where} has partitions; only leaves can be "
                    "allocated")
        if ident in self.groups:
            return (f"{ident!r} {where} is a partition group, not an instance; only leaves "
                    "can be allocated")
        return f"no partition leaf {ident!r} {where}{suggest(ident, self.by_id)}"

    def usage(self) -> dict[str, int]:
        return {"total": len(self.leaves), "allocated": len(self.holder),
                "lockedInstances": len(self.active)}

    def attributes_of(self, leaf_id: str) -> AttributeSet:
        """The effective attributes of one leaf (for tests and explanations)."""
        return self.by_id[leaf_id].data.attributes


class PartitionableModel(StructuredModel):
    """Partition trees whose leaves are selected by CEL over their inherited attributes."""

    name = "partitionable"
    finalizer = "semantic.dra.k8s.io/delete-protection"
    source = "slice"
    slice_schema = Obj({"commonAttributes": ListOf(attribute_group, unique_key="name"),
                        "resourceInstances": ListOf(_instance, min_items=1, unique_key="name")},
                       required=("resourceInstances",))
    request_schema = Obj({"required": ListOf(Obj({"name": Str(DNS_SUBDOMAIN),
                                                  "selector": cel_str},
                                                 required=("name", "selector")),
                                             min_items=1, unique_key="name")},
                         required=("required",))
    filter_schema = Obj({"selector": cel_str}, required=("selector",))
    result_schema = Obj({"instances": ListOf(Obj({"id": Str(allow_empty=False)},
                                                 required=("id",)))}, required=("instances",))

    def check_slice(self, value: Any, path: str, problems: ProblemList) -> None:
        """Every ``commonAttributesRefs`` entry names a group of ``commonAttributes``."""
        if not isinstance(value, dict):
            return
        known = [g["name"] for g in _dicts(value.get("commonAttributes"))
                 if isinstance(g.get("name"), str)]
        for index, instance in _indexed(value.get("resourceInstances")):
            self._check_instance(instance, join(join(path, "resourceInstances"), index),
                                 known, problems)

    def _check_refs(self, owner: dict, path: str, known: list[str],
                    problems: ProblemList) -> None:
        refs = owner.get("commonAttributesRefs")
        for index, ref in enumerate(refs if isinstance(refs, list) else ()):
            if isinstance(ref, str) and ref not in known:
                problems.add(join(join(path, "commonAttributesRefs"), index),
                             f"unknown attribute group {ref!r}: commonAttributes defines "
                             f"{', '.join(known) or 'none'}{suggest(ref, known)}")

    def _check_instance(self, instance: dict, path: str, known: list[str],
                        problems: ProblemList) -> None:
        self._check_refs(instance, path, known, problems)
        for g_index, group in _indexed(instance.get("partitions")):
            group_path = join(join(path, "partitions"), g_index)
            self._check_refs(group, group_path, known, problems)
            for i_index, child in _indexed(group.get("resourceInstances")):
                self._check_instance(child, join(join(group_path, "resourceInstances"),
                                                 i_index), known, problems)

    def build_inventory(self, node_name: str, driver_name: str,
                        published: Sequence[Any]) -> PartitionableInventory:
        tree = _Tree()
        for value in published:
            common = {g["name"]: attribute_set(g.get("attributes"))
                      for g in value.get("commonAttributes") or ()}
            for instance in value.get("resourceInstances") or ():
                _walk(instance, "", AttributeSet(), (), common, (), 1.0, None, tree)
        return PartitionableInventory(self, node_name, driver_name, tree)

    def compile_requests(self, driver_name: str, value: Any, filters: Sequence[Any],
                         label: str) -> list[Request]:
        return required_requests(self, driver_name, value, filters, label, named=True)

    def encode_result(self, picks: Sequence[Candidate]) -> dict:
        return {"instances": [{"id": c.id} for c in picks]}
