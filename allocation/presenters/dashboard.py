"""The dashboard, from the read model: the cluster overview, pending pods grouped by reason,
device usage per driver and class, node groups, provisioning and the latest Events.

Every number is a database query over the rows the worker keeps
(``allocation/models/read_model.py``): the dashboard never builds a cluster state, and its
queries do not grow with the cluster (docs/console-pages.md, "Dashboard"). resource.k8s.io/v1
devices count per driver as model ``resource.k8s.io/v1`` (``engine/v1/usage.py``),
DeviceClasses as classes of mode ``resource.k8s.io/v1``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.db.models import Count, F, Q, Sum, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from allocation import models as m
from allocation.engine.manifests import build_object
from allocation.presenters.common import (
    ConditionView,
    EventRow,
    condition_views,
    event_rows,
    object_url,
    percent,
)
from allocation.services.read_model import V1_MODEL

__all__ = ["Dashboard", "UsageRow", "ClassRow", "ReasonGroup", "ProvisioningRow",
           "NodeGroupRow", "OverviewGroup", "OverviewCell", "dashboard", "provisioning_rows",
           "RECENT_EVENTS", "PODS_PER_REASON", "REASON_GROUPS", "USE_STEPS", "OVERVIEW_CELLS"]

RECENT_EVENTS = 15
PODS_PER_REASON = 20
"""Pods listed inside one reason's group; the rest are a link to the filtered pod list."""
REASON_GROUPS = 20
"""Reasons shown; further ones are counted together with a link to the pod list."""
USE_STEPS = 5
"""Colour steps of an overview cell: u0 (nothing in use) .. u5 (all in use)."""
OVERVIEW_CELLS = 2000
"""Nodes the overview draws one cell each; a larger cluster's groups are summarised (how
many nodes at each step, and a link to the group's nodes, the most used first)."""


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
class ReasonGroup:
    """Pending pods sharing one reason: how many, the first few, the filtered list's URL."""

    reason: str
    count: int
    pods: list[tuple[str, str | None]]  # (namespace/name, url)
    url: str


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
    nodes: int
    url: str


@dataclass(slots=True)
class OverviewCell:
    name: str
    url: str
    step: int
    percent: int
    cordoned: bool


@dataclass(slots=True)
class OverviewGroup:
    name: str
    cells: list[OverviewCell] = field(default_factory=list)
    """One per node, unless the overview is summarised (then empty)."""
    steps: list[int] = field(default_factory=lambda: [0] * (USE_STEPS + 1))
    """How many of the group's nodes are at each colour step (u0 .. u5)."""
    cordoned: int = 0
    url: str = ""
    """The node list of the group, the most used first."""

    @property
    def nodes(self) -> int:
        return sum(self.steps)

    @property
    def bands(self) -> list[tuple[int, int, int]]:
        """(step, nodes, percent of the group) of each step that has nodes."""
        total = self.nodes or 1
        return [(step, n, 100 * n // total) for step, n in enumerate(self.steps) if n]


@dataclass(slots=True)
class Dashboard:
    overview: list[OverviewGroup]
    overview_summarised: bool
    group_by: str
    nodes_total: int
    usage: list[UsageRow]
    classes: list[ClassRow]
    pending: list[ReasonGroup]
    pending_total: int
    pending_other: int
    bound_pods: int
    provisioning: list[ProvisioningRow]
    node_groups: list[NodeGroupRow]
    events: list[EventRow]
    claims_total: int
    claims_allocated: int


def _list_url(kind: str, **query: str) -> str:
    return f"{reverse(f'allocation:{kind}_list')}?{urlencode(query)}"


def _label_value(labels: str, key: str) -> str:
    prefix = f"{key}="
    return next((item[len(prefix):] for item in labels.split(",") if item.startswith(prefix)),
                "")


def _group_url(group_by: str, key: str) -> str:
    query = {"sort": "-in_use_percent"}
    if key:
        query.update({"label": f"{group_by}={key}"} if group_by else {"node_group": key})
    return _list_url("nodes", **query)


def _overview(group_by: str) -> tuple[list[OverviewGroup], bool]:
    """The nodes grouped by node group (or by the value of label ``group_by``), coloured by
    the share of their devices in use: one cell per node, or, above
    :data:`OVERVIEW_CELLS` nodes, counts per step (and whether it is summarised)."""
    summarised = m.NodeSummary.objects.count() > OVERVIEW_CELLS
    groups: dict[str, OverviewGroup] = {}
    base = reverse("allocation:node", args=["-"])[:-2]  # /nodes/ (one reverse, not 5,000)
    rows = m.NodeSummary.objects.order_by("position").values_list(
        "node_group", "labels" if group_by else "node_group", "in_use_percent",
        "unschedulable", "devices_total", *(() if summarised else ("name",)))
    for node_group, labels, used, cordoned, total, *name in rows:
        key = _label_value(labels, group_by) if group_by else node_group
        group = groups.get(key)
        if group is None:
            group = groups[key] = OverviewGroup(key, url=_group_url(group_by, key))
        step = 0 if not total or not used else max(1, -(-used * USE_STEPS // 100))
        group.steps[step] += 1
        group.cordoned += bool(cordoned)
        if not summarised:
            group.cells.append(OverviewCell(name[0], f"{base}{name[0]}/", step, used,
                                            cordoned))
    return [groups[k] for k in sorted(groups, key=lambda k: (k == "", k))], summarised


def _pending() -> tuple[list[ReasonGroup], int, int]:
    pending = m.PodSummary.objects.exclude(reason="")
    counted = list(pending.values("reason").annotate(n=Count("id")).order_by("-n", "reason"))
    shown = [row["reason"] for row in counted[:REASON_GROUPS]]
    # The first pods of every reason shown, in one query (not one per reason).
    first: dict[str, list[tuple[str, str | None]]] = {reason: [] for reason in shown}
    rows = pending.filter(reason__in=shown).annotate(rank=Window(
        RowNumber(), partition_by=[F("reason")], order_by=F("position").asc())).filter(
        rank__lte=PODS_PER_REASON).order_by("position").values_list("reason", "namespace",
                                                                    "name")
    for reason, ns, name in rows if shown else ():
        first[reason].append((f"{ns}/{name}", object_url("Pod", ns, name)))
    groups = [ReasonGroup(row["reason"], row["n"], first[row["reason"]],
                          _list_url("pods", reason=row["reason"]))
              for row in counted[:REASON_GROUPS]]
    total = sum(r["n"] for r in counted)
    return groups, total, sum(r["n"] for r in counted[REASON_GROUPS:])


def _usage() -> list[UsageRow]:
    rows = m.DeviceUsage.objects.values("driver", "model", "unit").annotate(
        total_sum=Sum("total"), used_sum=Sum("used"), nodes=Count("node")).order_by(
        "driver", "model")
    return [UsageRow(r["driver"], r["model"], r["unit"], r["total_sum"], r["used_sum"],
                     r["nodes"]) for r in rows]


def _classes() -> tuple[list[ClassRow], int, int]:
    """Claims per class, and every claim and the allocated ones counted from the same rows
    (one pass over the claims, not two)."""
    per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    counted = list(m.ClaimSummary.objects.values("classes").annotate(
        allocated=Count("id", filter=~Q(state="Pending")),
        pending=Count("id", filter=Q(state="Pending")), held_sum=Sum("held")))
    allocated = sum(row["allocated"] for row in counted)
    total = allocated + sum(row["pending"] for row in counted)
    for row in counted:
        for name in filter(None, row["classes"].split(",")):
            counts = per_class[name]
            counts[0] += row["allocated"]
            counts[1] += row["pending"]
            counts[2] += row["held_sum"] or 0
    rows = [ClassRow(c.name, c.driver_name, c.mode, *per_class.get(c.name, (0, 0, 0)))
            for c in m.ResourceClass.objects.order_by("name")]
    rows += [ClassRow(c.name, "", V1_MODEL, *per_class.get(c.name, (0, 0, 0)))
             for c in m.DeviceClass.objects.order_by("name")]
    return rows, total, allocated


def provisioning_rows(requests) -> list[ProvisioningRow]:
    """The rows of engine ProvisioningRequests ``requests``."""
    rows = []
    for request in sorted(requests, key=lambda r: r.key):
        rows.append(ProvisioningRow(
            request.namespace or "default", request.name,
            object_url("ProvisioningRequest", request.namespace, request.name),
            request.canonical_class,
            sum(int(s.get("count") or 0) for s in request.pod_sets),
            condition_views(request.conditions)))
    return rows


def _node_groups() -> list[NodeGroupRow]:
    """Each NodeGroup with the nodes carrying its label: the count ``group_nodes``
    (``engine/autoscaler/nodegroups.py``) gives and the nodes' group badges show, read from
    ``NodeSummary.node_group`` (a group's ``status.nodes`` may lag behind or be absent)."""
    sizes = dict(m.NodeSummary.objects.exclude(node_group="").values("node_group").annotate(
        n=Count("id")).values_list("node_group", "n"))
    out = []
    for row in m.NodeGroup.objects.order_by("name"):
        group = build_object(row.manifest)
        out.append(NodeGroupRow(group.name, group.min_size, group.max_size,
                                sizes.get(group.name, 0),
                                _list_url("nodes", node_group=group.name)))
    return out


def dashboard(recent: int = RECENT_EVENTS, group_by: str = "") -> Dashboard:
    """The dashboard's data, read from the read model and the stored rows.

    Args:
        recent: how many of the latest Events to show.
        group_by: a label key to group the overview by; empty groups by node group.
    """
    pods = m.PodSummary.objects.aggregate(
        bound=Count("id", filter=~Q(node="")),
        total=Count("id", filter=~Q(status__in=("Succeeded", "Failed"))))
    classes, claims_total, claims_allocated = _classes()
    pending, pending_total, pending_other = _pending()
    overview, summarised = _overview(group_by)
    requests = [build_object(r.manifest) for r in m.ProvisioningRequest.objects.all()]
    latest = [r.manifest for r in m.Event.objects.order_by("-position")[:recent]] if recent \
        else []
    return Dashboard(
        overview=overview, overview_summarised=summarised, group_by=group_by,
        nodes_total=sum(g.nodes for g in overview), usage=_usage(), classes=classes,
        pending=pending, pending_total=pending_total, pending_other=pending_other,
        bound_pods=pods["bound"], provisioning=provisioning_rows(requests),
        node_groups=_node_groups(), events=event_rows(latest),
        claims_total=claims_total, claims_allocated=claims_allocated)
