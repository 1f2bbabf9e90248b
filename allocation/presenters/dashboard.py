"""The dashboard: nodes, device usage per driver and class, pending pods, provisioning, events.

resource.k8s.io/v1 devices count per driver as model ``resource.k8s.io/v1``
(``engine/v1/usage.py``: a device is in use when a result that is not adminAccess names
it), DeviceClasses as classes of mode ``resource.k8s.io/v1``."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from allocation.engine.autoscaler.nodegroups import group_nodes
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects import (
    DeviceClass,
    NodeGroup,
    ProvisioningRequest,
    ResourceClaimV1,
    ResourceClass,
    ResourceSlice,
)
from allocation.engine.state import ClusterState
from allocation.engine.v1.usage import driver_usage
from allocation.presenters.common import (
    ConditionView,
    EventRow,
    condition_views,
    cpu_text,
    event_rows,
    object_url,
    percent,
)

__all__ = ["Dashboard", "NodeRow", "UsageRow", "ClassRow", "PendingPod", "ProvisioningRow",
           "NodeGroupRow", "dashboard", "provisioning_rows", "pending_reason", "MODEL_UNITS",
           "RECENT_EVENTS", "V1_MODEL"]

RECENT_EVENTS = 15
MODEL_UNITS = {"namedResourcesWithAttributes": "devices", "partitionable": "partitions",
               "counter": "units"}


@dataclass(slots=True)
class NodeRow:
    name: str
    url: str | None
    unschedulable: bool
    pods: int
    cpu: str
    devices: str
    node_group: str | None


@dataclass(slots=True)
class UsageRow:
    driver: str
    model: str
    unit: str
    total: int
    allocated: int
    nodes: int

    @property
    def free(self) -> int:
        return self.total - self.allocated

    @property
    def percent(self) -> int:
        return percent(self.allocated, self.total)


@dataclass(slots=True)
class ClassRow:
    name: str
    driver: str
    mode: str
    allocated: int
    pending: int
    held: int


@dataclass(slots=True)
class PendingPod:
    namespace: str
    name: str
    url: str | None
    reason: str


@dataclass(slots=True)
class ProvisioningRow:
    namespace: str
    name: str
    url: str | None
    class_name: str
    pods: int
    conditions: list[ConditionView]


@dataclass(slots=True)
class NodeGroupRow:
    name: str
    min_size: int
    max_size: int
    nodes: list[str]


@dataclass(slots=True)
class Dashboard:
    nodes: list[NodeRow]
    usage: list[UsageRow]
    classes: list[ClassRow]
    pending: list[PendingPod]
    bound_pods: int
    provisioning: list[ProvisioningRow]
    node_groups: list[NodeGroupRow]
    events: list[EventRow]
    claims_total: int
    claims_allocated: int


def pending_reason(pod) -> str:
    """The PodScheduled=False message, or why there is none yet."""
    condition = pod.condition("PodScheduled")
    if condition and condition.get("status") == "False":
        return str(condition.get("message") or condition.get("reason") or "Unschedulable")
    return "not tried by the scheduler yet"


V1_MODEL = "resource.k8s.io/v1"
"""The model column of v1 devices (which have no structured model)."""


def _v1_documents(state: ClusterState) -> tuple[list[ResourceSlice], list[dict]]:
    """The v1 slices and the allocated v1 claims' documents."""
    claims = [c.as_v1() for c in state.of_kind(ResourceClaimV1) if c.allocation is not None]
    return list(state.of_kind(ResourceSlice)), claims


def _nodes(state: ClusterState) -> list[NodeRow]:
    rows = []
    slices, claims = _v1_documents(state)
    local: dict[str, list[dict]] = defaultdict(list)
    for piece in slices:
        if piece.node_name:
            local[piece.node_name].append(piece.raw)
    for name in state.node_order:
        node = state.nodes[name]
        used = state.usage_of(name)
        parts = []
        for inventory in state.inventories.get(name, ()):
            usage = inventory.usage()
            unit = MODEL_UNITS.get(inventory.model.name, "items")
            parts.append(f"{inventory.driver_name}: {usage['allocated']}/{usage['total']} {unit}")
        if local.get(name):
            parts += [f"{driver}: {used}/{total} devices (v1)" for driver, (used, total)
                      in sorted(driver_usage(local[name], claims).items())]
        rows.append(NodeRow(name, object_url("Node", None, name), node.unschedulable, used.pods,
                            f"{cpu_text(used.cpu_milli)} / {cpu_text(node.cpu_milli)}",
                            "; ".join(parts), node.labels.get(NODE_GROUP_LABEL)))
    return rows


def _usage(state: ClusterState) -> list[UsageRow]:
    totals: dict[tuple[str, str], UsageRow] = {}
    for inventories in state.inventories.values():
        for inventory in inventories:
            key = (inventory.driver_name, inventory.model.name)
            row = totals.get(key)
            if row is None:
                row = totals[key] = UsageRow(key[0], key[1], MODEL_UNITS.get(key[1], "items"),
                                             0, 0, 0)
            usage = inventory.usage()
            row.total += usage["total"]
            row.allocated += usage["allocated"]
            row.nodes += 1
    slices, claims = _v1_documents(state)
    for driver, (used, total) in driver_usage([s.raw for s in slices], claims).items():
        nodes = {s.node_name for s in slices if s.driver == driver and s.node_name}
        totals[(driver, V1_MODEL)] = UsageRow(driver, V1_MODEL, "devices", total, used,
                                              len(nodes))
    return [totals[k] for k in sorted(totals)]


def _held(claim) -> int:
    """Devices, partitions or units a claim's allocation holds."""
    if claim.allocation is None:
        return 0
    if claim.allocation.picks:
        return sum(candidate.amount for _inventory, candidate in claim.allocation.picks)
    return len(claim.allocation.handles)  # control-plane allocations: one per handle


def _classes(state: ClusterState) -> list[ClassRow]:
    claims_by_class = defaultdict(list)
    for claim in state.claims():
        claims_by_class[claim.class_name].append(claim)
    rows = []
    for rc in sorted(state.of_kind(ResourceClass), key=lambda c: c.name):
        claims = claims_by_class.get(rc.name, [])
        allocated = [c for c in claims if c.allocation is not None]
        rows.append(ClassRow(rc.name, rc.driver_name, rc.mode, len(allocated),
                             len(claims) - len(allocated), sum(_held(c) for c in allocated)))
    v1_claims = list(state.of_kind(ResourceClaimV1))
    for dc in sorted(state.of_kind(DeviceClass), key=lambda c: c.name):
        claims = [c for c in v1_claims if dc.name in c.class_names]
        allocated = [c for c in claims if c.allocation is not None]
        rows.append(ClassRow(dc.name, "", V1_MODEL, len(allocated), len(claims) - len(allocated),
                             sum(len(c.results) for c in allocated)))
    return rows


def provisioning_rows(state: ClusterState) -> list[ProvisioningRow]:
    rows = []
    for request in sorted(state.of_kind(ProvisioningRequest), key=lambda r: r.key):
        rows.append(ProvisioningRow(
            request.namespace or "default", request.name,
            object_url("ProvisioningRequest", request.namespace, request.name),
            request.canonical_class,
            sum(int(s.get("count") or 0) for s in request.pod_sets),
            condition_views(request.conditions)))
    return rows


def dashboard(state: ClusterState, recent: int = RECENT_EVENTS) -> Dashboard:
    """The dashboard's data for ``state``."""
    pods = [p for p in state.pods() if not p.terminated]
    pending = [PendingPod(p.namespace or "default", p.name,
                          object_url("Pod", p.namespace, p.name), pending_reason(p))
               for p in sorted(pods, key=lambda p: p.key) if not p.node_name]
    claims = [*state.claims(), *state.of_kind(ResourceClaimV1)]
    members = group_nodes(state)  # by label, as the nodes' group badges (not status.nodes)
    groups = [NodeGroupRow(g.name, g.min_size, g.max_size, members.get(g.name, []))
              for g in sorted(state.of_kind(NodeGroup), key=lambda g: g.name)]
    events = event_rows(list(reversed(state.events.items[-recent:])) if recent else [])
    return Dashboard(nodes=_nodes(state), usage=_usage(state), classes=_classes(state),
                     pending=pending, bound_pods=len(pods) - len(pending),
                     provisioning=provisioning_rows(state), node_groups=groups, events=events,
                     claims_total=len(claims),
                     claims_allocated=sum(1 for c in claims if c.allocation is not None))
