"""Node groups: the nodes a NodeGroup adds, with the DRA resources they bring.

A group's nodes are named ``<group>-<n>`` (the lowest free ``n`` from 1) and labelled
``draplanner.io/node-group: <group>``. Their slices and capacities are copies of
``capacityFromNode``'s (the numeric seed's ``autoscaling.k8s.io/node-resource-capacity``
annotation names that node on each copy) or built from the group's inline
``resourceSlices``/``resourceCapacities`` (scaling from zero). resource.k8s.io/v1 slices
are either kind too: a spec or a copy gets the new node's name as ``nodeName`` and pool
(``objects.planner.v1_node_slices``), so the v1 allocator sees each new node's own pool.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING

from allocation.engine import kinds
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects import (
    Node,
    NodeGroup,
    NodeResourceCapacity,
    NodeResourceSlice,
    ResourceSlice,
)
from allocation.engine.objects.planner import V1_NODE_FIELDS, v1_node_slices

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["CAPACITY_ANNOTATION", "Blueprint", "blueprints", "group_size", "group_nodes",
           "free_names", "iter_free_names", "grow"]

CAPACITY_ANNOTATION = "autoscaling.k8s.io/node-resource-capacity"


@dataclass
class Blueprint:
    """How to make one more node of ``group``; ``problem`` says why none can be made."""

    group: NodeGroup
    node: dict = field(default_factory=dict)
    slices: list[dict] = field(default_factory=list)
    capacities: list[dict] = field(default_factory=list)
    v1_slices: list[dict] = field(default_factory=list)
    """v1 ResourceSlice specs (copies of ``source``'s slices name its pools)."""
    source: str | None = None
    problem: str | None = None

    @property
    def name(self) -> str:
        return self.group.name

    def make(self, name: str) -> tuple[Node, list[NodeResourceSlice | ResourceSlice],
                                       list[NodeResourceCapacity]]:
        """The node ``name`` with its own copies of the group's slices (seed, then v1) and
        capacities."""
        raw = copy.deepcopy(self.node)
        raw["metadata"]["name"] = name
        slices = []
        for index, spec in enumerate(self.slices):
            slices.append(NodeResourceSlice({
                "apiVersion": kinds.NODE_RESOURCE_SLICE.preferred_version,
                "kind": "NodeResourceSlice",
                "metadata": {"name": f"{name}-slice-{index}"},
                "spec": {**copy.deepcopy(spec), "nodeName": name}}))
        slices.extend(ResourceSlice(doc) for doc in v1_node_slices(self.v1_slices, name,
                                                                   self.source))
        capacities = []
        for index, entry in enumerate(self.capacities):
            capacities.append(NodeResourceCapacity({
                "apiVersion": kinds.NODE_RESOURCE_CAPACITY.preferred_version,
                "kind": "NodeResourceCapacity",
                "metadata": {"name": f"{name}-capacity-{index}"}, "nodeName": name,
                "driverName": entry["driverName"],
                "instances": copy.deepcopy(entry.get("instances") or [])}))
        return Node(raw), slices, capacities


def _blueprint(state: ClusterState, group: NodeGroup, slices_by_node: dict, capacities_by_node: dict
               ) -> Blueprint:
    template = group.template
    meta = template.get("metadata") or {}
    labels = {**(meta.get("labels") or {}), NODE_GROUP_LABEL: group.name}
    node = {"apiVersion": kinds.NODE.preferred_version, "kind": "Node",
            "metadata": {"name": "", "labels": labels,
                         **({"annotations": dict(meta["annotations"])}
                            if meta.get("annotations") else {})},
            "spec": copy.deepcopy(template.get("spec") or {}),
            "status": copy.deepcopy(template.get("status") or {})}
    blueprint = Blueprint(group, node)
    source = group.capacity_from_node
    if source:
        original = state.nodes.get(source)
        if original is None:
            blueprint.problem = f"its capacityFromNode {source} is not a node of the cluster"
            return blueprint
        blueprint.source = source
        node["metadata"].setdefault("annotations", {})[CAPACITY_ANNOTATION] = source
        if not (node["status"].get("allocatable")):
            allocatable = (original.raw.get("status") or {}).get("allocatable") or {}
            node["status"]["allocatable"] = copy.deepcopy(allocatable)
        blueprint.slices = [{k: v for k, v in s.raw["spec"].items() if k != "nodeName"}
                            for s in slices_by_node.get(source, ())]
        blueprint.capacities = [{"driverName": c.driver_name, "instances": c.instances}
                                for c in capacities_by_node.get(source, ())]
        blueprint.v1_slices = _v1_copies(state, source)
    else:
        blueprint.slices = [dict(s) for s in group.resource_slices]
        blueprint.capacities = [dict(c) for c in group.resource_capacities]
        blueprint.v1_slices = [dict(s) for s in group.v1_resource_slices]
    return blueprint


def _v1_copies(state: ClusterState, source: str) -> list[dict]:
    """The specs of the v1 slices node ``source`` publishes, by name: its ``nodeName``
    slices and the pools' slices without a node (shared counters, Kubernetes 1.35), of
    each pool's newest generation only (docs/v1.md, visible pools)."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for piece in state.of_kind(ResourceSlice):
        if piece.node_name == source:
            pools.setdefault(piece.pool_key, [])
    for piece in state.of_kind(ResourceSlice):
        own = piece.node_name == source or not any(
            piece.spec.get(k) not in (None, False) for k in V1_NODE_FIELDS)
        if own and piece.pool_key in pools:
            pools[piece.pool_key].append(piece)
    specs = []
    for pieces in pools.values():
        newest = max(p.pool_generation for p in pieces)
        specs.extend(p for p in pieces if p.pool_generation == newest)
    return [copy.deepcopy(p.spec) for p in sorted(specs, key=lambda p: p.name)]


def blueprints(state: ClusterState) -> list[Blueprint]:
    """A blueprint per NodeGroup of ``state``, in name order."""
    groups = sorted(state.of_kind(NodeGroup), key=lambda g: g.name)
    if not groups:
        return []
    slices_by_node: dict[str, list] = {}
    capacities_by_node: dict[str, list] = {}
    sources = {g.capacity_from_node for g in groups if g.capacity_from_node}
    if sources:
        for piece in state.of_kind(NodeResourceSlice):
            if piece.node_name in sources:
                slices_by_node.setdefault(piece.node_name, []).append(piece)
        for piece in state.of_kind(NodeResourceCapacity):
            if piece.node_name in sources:
                capacities_by_node.setdefault(piece.node_name, []).append(piece)
    return [_blueprint(state, g, slices_by_node, capacities_by_node) for g in groups]


def group_nodes(state: ClusterState) -> dict[str, list[str]]:
    """Each group's nodes in name order: the nodes carrying its label, the same label every
    page's node-group badge shows (a group's ``status.nodes`` may lag behind or be absent).

    Returns:
        group name -> node names; a group without nodes is absent.
    """
    members: dict[str, list[str]] = {}
    for name in state.node_order:
        group = state.nodes[name].meta.labels.get(NODE_GROUP_LABEL)
        if group:
            members.setdefault(group, []).append(name)
    return members


def group_size(state: ClusterState, group: str) -> int:
    """How many nodes of ``state`` belong to ``group``."""
    return sum(1 for node in state.nodes.values()
               if node.meta.labels.get(NODE_GROUP_LABEL) == group)


def free_names(state: ClusterState, group: str, count: int) -> list[str]:
    """The first ``count`` names ``<group>-<n>`` (n from 1) that no node of ``state`` has,
    and under which no slice or capacity of ``state`` is named (``Blueprint.make`` names a
    new node's ``<node>-slice-<i>``, ``<node>-capacity-<i>``, ``<node>-<driver>-<i>``:
    one taken would replace another node's object)."""
    return list(islice(iter_free_names(state, group), count))


def iter_free_names(state: ClusterState, group: str) -> Iterator[str]:
    """The names :func:`free_names` gives, one at a time and without end: a caller adding
    each node as it takes its name gets the names ``free_names`` would give it one by one,
    without a scan of the names before it at each (quadratic for thousands of nodes)."""
    taken = _named_under(state)
    n = 0
    while True:
        n += 1
        name = f"{group}-{n}"
        if name not in state.nodes and name not in taken:
            yield name


def _named_under(state: ClusterState) -> set[str]:
    """Every ``x`` such that a slice or capacity of ``state`` is named ``x-...``."""
    stems: set[str] = set()
    for obj in state.of_kind(NodeResourceSlice | NodeResourceCapacity | ResourceSlice):
        name = obj.name
        dash = name.find("-")
        while dash >= 0:
            stems.add(name[:dash])
            dash = name.find("-", dash + 1)
    return stems


def grow(state: ClusterState, blueprint: Blueprint, count: int) -> list[str]:
    """Add ``count`` nodes of the blueprint's group to ``state``; their names."""
    names = free_names(state, blueprint.name, count)
    for name in names:
        node, slices, capacities = blueprint.make(name)
        state.add_node(node, slices, capacities)
    group = state.get("NodeGroup", None, blueprint.name)
    if group is not None:
        group = state.writable(group)
        group.nodes = sorted({*group.nodes, *names})
    return names
