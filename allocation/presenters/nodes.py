"""One node as the node page draws it: partition trees as nested boxes, counters as bars.

Partition trees are rebuilt from the node's partitionable NodeResourceSlices (the engine's
inventory keeps only leaves and locks), with IDs built exactly as the engine builds them
(``gpu-0/halves/half-1``), so the inventory's holders and active schemes apply to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.models.counter import CounterInventory
from allocation.engine.models.named import NamedInventory, attribute_set
from allocation.engine.models.partitionable import PartitionableInventory
from allocation.engine.objects import NodeResourceSlice, ResourceClaimV1
from allocation.engine.quantity import Quantity
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name
from allocation.presenters.common import bytes_text, cpu_text, object_url, percent
from allocation.presenters.v1_devices import V1Pool, node_pools, nodes_pools

__all__ = ["Box", "BoxStatus", "PartitionTree", "CounterBar", "NamedDevice", "CapacityRow",
           "NodeView", "NodeDevices", "node_view", "node_devices", "claim_link"]


def claim_link(owner: str) -> str | None:
    """The page of the claim an inventory holder names (``namespace/name``)."""
    namespace, _, name = owner.rpartition("/")
    return object_url("ResourceClaim", namespace or "default", name) if name else None


class BoxStatus(StrEnum):
    """The status of a :class:`Box`; the templates compare and show the values."""

    FREE = "free"
    ALLOCATED = "allocated"
    """``claim`` holds the instance."""
    BLOCKED = "blocked"
    """A sibling scheme is locked; ``note`` says by whom."""
    PARTITIONED = "partitioned"
    """The instance has groups."""
    ACTIVE = "active"
    """The group's scheme is locked in."""
    LOCKED_OUT = "locked-out"
    AVAILABLE = "available"


@dataclass(slots=True)
class Box:
    """An instance (free, allocated, blocked, partitioned) or partition group (active,
    locked-out, available) of a tree."""

    id: str
    name: str
    kind: str
    status: BoxStatus
    claim: str | None = None
    claim_url: str | None = None
    note: str = ""
    children: list[Box] = field(default_factory=list)
    attributes: list[tuple[str, str]] = field(default_factory=list)
    """What this level gives its leaves (name, value as text): an instance's own
    ``commonAttributesRefs`` and ``attributes``, a group's ``commonAttributesRefs``; a leaf
    has these and its ancestors' (docs/console-pages.md, "Node")."""


@dataclass(slots=True)
class PartitionTree:
    driver: str
    roots: list[Box]
    total: int
    allocated: int


@dataclass(slots=True)
class CounterBar:
    driver: str
    id: str
    labels: dict[str, str]
    total: int
    used: int
    holders: list[tuple[str, int, str | None]]

    @property
    def left(self) -> int:
        return self.total - self.used

    @property
    def percent(self) -> int:
        return percent(self.used, self.total)


@dataclass(slots=True)
class NamedDevice:
    driver: str
    name: str
    claim: str | None
    claim_url: str | None
    attributes: list[tuple[str, str]] = field(default_factory=list)  # name, value as text


def _attributes(data) -> list[tuple[str, str]]:
    """A named device's attributes (an engine AttributeSet) as name/text pairs, by name."""
    pairs = []
    for attribute in data or ():
        value = attribute.value
        text = (", ".join(str(v) for v in value) if isinstance(value, tuple)
                else str(value).lower() if isinstance(value, bool) else str(value))
        pairs.append((attribute.name, text))
    return sorted(pairs)


@dataclass(slots=True)
class CapacityRow:
    resource: str
    used: str
    allocatable: str
    percent: int


@dataclass(slots=True)
class NodeView:
    name: str
    labels: dict[str, str]
    unschedulable: bool
    capacity: list[CapacityRow]
    trees: list[PartitionTree]
    counters: list[CounterBar]
    named: list[NamedDevice]
    pods: list[tuple[str, str, str | None]]
    claims: list[tuple[str, str | None]]
    node_group: str | None = None
    v1_pools: list[V1Pool] = field(default_factory=list)
    """The resource.k8s.io/v1 pools the node sees (``presenters/v1_devices.py``)."""


class _TreeBuilder:
    def __init__(self, inventory: PartitionableInventory | None) -> None:
        self.holder = inventory.holder if inventory else {}
        self.active = inventory.active if inventory else {}
        self.seen: set[str] = set()
        self.common: dict[str, object] = {}  # the slice's commonAttributes, by name

    def attributes(self, raw: dict, own: bool = True) -> list[tuple[str, str]]:
        """The attributes ``raw`` (an instance or a group) names, later ones winning."""
        merged: dict[str, str] = {}
        for ref in raw.get("commonAttributesRefs") or ():
            merged.update(_attributes(self.common.get(ref)))
        if own and raw.get("attributes"):
            merged.update(_attributes(attribute_set(raw["attributes"])))
        return sorted(merged.items())

    def _lock_note(self, ident: str, group: str) -> str:
        prefix = f"{ident}/{group}/"
        claims = sorted({o for i, o in self.holder.items() if i.startswith(prefix)})
        return f"{ident} is locked to scheme {group} by claim(s) {', '.join(claims)}"

    def instance(self, raw: dict, prefix: str, blocked: str) -> Box | None:
        ident = f"{prefix}{raw['name']}"
        partitions = raw.get("partitions") or ()
        attributes = self.attributes(raw)
        if not partitions:
            if ident in self.seen:  # the engine ignores a second leaf with the same ID
                return None
            self.seen.add(ident)
            owner = self.holder.get(ident)
            if owner is not None:
                return Box(ident, raw["name"], "instance", BoxStatus.ALLOCATED, owner,
                           claim_link(owner), attributes=attributes)
            if blocked:
                return Box(ident, raw["name"], "instance", BoxStatus.BLOCKED, note=blocked,
                           attributes=attributes)
            return Box(ident, raw["name"], "instance", BoxStatus.FREE, attributes=attributes)
        scheme = self.active.get(ident)
        current = scheme.group if scheme else None
        box = Box(ident, raw["name"], "instance", BoxStatus.PARTITIONED,
                  note=f"scheme {current} in use" if current else "no scheme chosen",
                  attributes=attributes)
        for group in partitions:
            if current is None:
                status, why = BoxStatus.AVAILABLE, blocked
            elif current == group["name"]:
                status, why = BoxStatus.ACTIVE, blocked
            else:
                status, why = BoxStatus.LOCKED_OUT, blocked or self._lock_note(ident, current)
            group_box = Box(f"{ident}/{group['name']}", group["name"], "group", status,
                            note=why if status == BoxStatus.LOCKED_OUT else "",
                            attributes=self.attributes(group, own=False))
            for child in group.get("resourceInstances") or ():
                child_box = self.instance(child, f"{group_box.id}/", why)
                if child_box is not None:
                    group_box.children.append(child_box)
            box.children.append(group_box)
        return box


def _partitionable_slices(state: ClusterState) -> dict[str, list[NodeResourceSlice]]:
    """Partitionable slices by node, in document order (one pass over the state)."""
    found: dict[str, list[NodeResourceSlice]] = {}
    for piece in state.of_kind(NodeResourceSlice):
        if piece.model_name == "partitionable":
            found.setdefault(piece.node_name, []).append(piece)
    return found


def _trees(state: ClusterState, node: str,
           slices: list[NodeResourceSlice] | None = None) -> list[PartitionTree]:
    by_driver: dict[str, list[NodeResourceSlice]] = {}
    pieces = _partitionable_slices(state).get(node, []) if slices is None else slices
    for piece in pieces:
        by_driver.setdefault(piece.driver_name, []).append(piece)
    trees = []
    for driver, pieces in sorted(by_driver.items()):
        inventory = state.inventory_index.get((node, driver, "partitionable"))
        builder = _TreeBuilder(inventory if isinstance(inventory, PartitionableInventory)
                               else None)
        roots = []
        for piece in pieces:
            value = piece.model_value or {}
            builder.common = {g["name"]: attribute_set(g.get("attributes"))
                              for g in value.get("commonAttributes") or () if "name" in g}
            roots += [box for raw in value.get("resourceInstances") or ()
                      if (box := builder.instance(raw, "", "")) is not None]
        usage = inventory.usage() if inventory else {"total": 0, "allocated": 0}
        trees.append(PartitionTree(driver, roots, usage["total"], usage["allocated"]))
    return trees


def _devices(state: ClusterState, node: str) -> tuple[list[CounterBar], list[NamedDevice]]:
    counters, named = [], []
    for inventory in state.inventories.get(node, ()):
        if isinstance(inventory, CounterInventory):
            for instance in inventory.instances:
                held = inventory.held.get(instance.id) or {}
                counters.append(CounterBar(
                    inventory.driver_name, instance.id, dict(instance.labels), instance.count,
                    instance.count - inventory.left[instance.id],
                    [(owner, units, claim_link(owner)) for owner, units in sorted(held.items())]))
        elif isinstance(inventory, NamedInventory):
            for device in inventory.devices:
                owner = inventory.holder.get(device.id)
                named.append(NamedDevice(inventory.driver_name, device.id, owner,
                                         claim_link(owner) if owner else None,
                                         _attributes(device.data)))
    return counters, named


def _capacity(state: ClusterState, node) -> list[CapacityRow]:
    used = state.usage_of(node.name)
    cpu, memory, pods = used.cpu_milli, used.memory, used.pods
    rows = [CapacityRow("cpu", cpu_text(cpu), cpu_text(node.cpu_milli),
                        percent(cpu, node.cpu_milli or 0)),
            CapacityRow("memory", bytes_text(memory), bytes_text(node.memory),
                        percent(memory, node.memory or 0)),
            CapacityRow("pods", str(pods), str(node.max_pods), percent(pods, node.max_pods))]
    # what else the node states or its pods request (ephemeral-storage, hugepages,
    # device-plugin resources: NodeResourcesFit counts them too)
    for name in sorted(node.other_allocatable.keys() | used.other.keys()):
        total = node.other_allocatable.get(name)
        amount = used.other.get(name, 0)
        rows.append(CapacityRow(name, str(Quantity(amount)),
                                str(Quantity(total)) if total is not None else "-",
                                percent(amount, total or 0)))
    return rows


@dataclass
class NodeDevices:
    """A node's DRA resources only (what a many-node canvas draws)."""

    trees: list[PartitionTree]
    counters: list[CounterBar]
    named: list[NamedDevice]
    v1_pools: list[V1Pool] = field(default_factory=list)


def node_devices(state: ClusterState, names: list[str]) -> dict[str, NodeDevices]:
    """The devices of several nodes, reading the state once rather than once per node."""
    slices = _partitionable_slices(state)
    pools = nodes_pools(state, names)
    out = {}
    for name in names:
        counters, named = _devices(state, name)
        out[name] = NodeDevices(_trees(state, name, slices.get(name, [])), counters, named,
                                pools[name])
    return out


def node_view(state: ClusterState, name: str) -> NodeView | None:
    """Everything the node page shows about node ``name``; None if there is no such node."""
    node = state.nodes.get(name)
    if node is None:
        return None
    counters, named = _devices(state, name)
    pods = sorted((p.namespace or "default", p.name, object_url("Pod", p.namespace, p.name))
                  for p in state.pods() if p.node_name == name and not p.terminated)
    claims = sorted((c.ref, object_url("ResourceClaim", c.namespace, c.name))
                    for c in state.claims()
                    if c.allocation is not None and c.allocation.node_name == name)
    claims = sorted(claims + [(c.ref, object_url("ResourceClaim", c.namespace, c.name))
                              for c in state.of_kind(ResourceClaimV1)
                              if allocated_node_name(c.allocation) == name])
    return NodeView(name=name, labels=dict(node.labels), unschedulable=node.unschedulable,
                    capacity=_capacity(state, node), trees=_trees(state, name),
                    counters=counters, named=named, pods=pods, claims=claims,
                    node_group=node.labels.get(NODE_GROUP_LABEL),
                    v1_pools=node_pools(state, name))
