"""Every check of a pending pod on every node, on demand: the pod page's table of filters
passed and failed per node, in the manner of kube-scheduler-simulator's results view
(docs/console-pages.md, "Pod").

The scheduler stops at a node's first refusal and the explain annotation keeps what is
cheap to keep (``diagnosis.py``); this module runs every filter on every node (up to
:data:`MAX_CHECKED`) for one pod, when a page asks: the node's own checks
(``diagnosis.node_diff``) and DynamicResources (the claims' own checks and a search of
the node's devices, with the devices each request would find), both dialects. Nothing in
the state changes: seed searches release what they take, the v1 search runs on an
allocator of its own whose book is never committed to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from allocation.engine.scheduling import (
    diagnosis,
    diagnosis_devices,
    fit,
    v1_explain,
    v1_extended,
    v1_postfilter,
    v1_views,
)
from allocation.engine.scheduling.needs import Plans, pod_needs
from allocation.engine.scheduling.reasons import R_CLAIMS
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.scheduling.v1_book import AllocatorSource
from allocation.engine.v1 import (
    NOT_AVAILABLE,
    AllocationError,
    UnschedulableError,
    make_profile,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaimV1
    from allocation.engine.state import ClusterState

__all__ = ["PLUGINS", "MAX_CHECKED", "NodeChecks", "PodChecks", "pod_checks"]

PLUGINS = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit",
           "DynamicResources")
"""The filters, as kube-scheduler names its plugins, in the order they run."""
MAX_CHECKED = 200
"""Nodes checked for one page (in the scheduler's order); the rest are counted."""
_PLUGIN_OF = {"cordoned": "NodeUnschedulable", "taint": "TaintToleration",
              "nodeSelector": "NodeAffinity",
              "nodeAffinity": "NodeAffinity", "cpu": "NodeResourcesFit",
              "memory": "NodeResourcesFit", "resource": "NodeResourcesFit",
              "pods": "NodeResourcesFit"}


@dataclass
class NodeChecks:
    """One node: each filter's failed diff items (empty: passed) and DynamicResources'
    refusal, the whole diff and its rank (``diagnosis.rank``)."""

    node: str
    failed: dict[str, list[dict]]
    claims_reason: str | None
    diff: list[dict]
    devices: list[dict] = field(default_factory=list)
    """The ``devices`` items, failed or not (how many each request finds)."""

    @property
    def fits(self) -> bool:
        return not any(self.failed.values())

    @property
    def rank(self) -> tuple[int, int, int]:
        return diagnosis.rank(self.diff) if self.diff else (0, 0, 0)


@dataclass
class PodChecks:
    """The table: rows nearest first; ``error`` when no node is tried at all."""

    rows: list[NodeChecks] = field(default_factory=list)
    error: str | None = None
    omitted: int = 0


def pod_checks(state: ClusterState, pod: Pod, strategy: str = "first-fit",
               limit: int = MAX_CHECKED) -> PodChecks:
    """Run every filter of ``pod`` on the first ``limit`` nodes.

    Returns:
        The rows, ranked by ``diagnosis.rank`` (then node order), or ``error`` when the
        pod's claims refuse it before any node (a missing claim, class, template...).
    """
    names = state.node_order[:limit]
    out = PodChecks(omitted=max(len(state.node_order) - limit, 0))
    resolved = V1Scheduling().claims(state, pod)
    claims = (_v1_claims(state, pod, names, resolved) if resolved is not None
              else _seed_claims(state, pod, names, strategy))
    if isinstance(claims, str):
        out.error = claims
        return out
    for name in names:
        node = state.nodes[name]
        failed: dict[str, list[dict]] = {plugin: [] for plugin in PLUGINS}
        own = diagnosis.node_diff(state, pod, node)
        for item in own:
            failed[_PLUGIN_OF[item["check"]]].append(item)
        reason, entries, devices = claims[name]
        dra = diagnosis.claim_diff(reason, entries, devices) if reason else []
        failed["DynamicResources"] = dra
        if reason and not dra:  # a refusal without a diff of its own: say it as it is
            failed["DynamicResources"] = [{"check": "other", "reason": reason}]
        items = devices.items(entries) if entries else []
        out.rows.append(NodeChecks(name, failed, reason, own + dra, items))
    order = {name: index for index, name in enumerate(names)}
    out.rows.sort(key=lambda row: (row.rank, order[row.node]))
    return out


def _seed_claims(state: ClusterState, pod: Pod, names: list[str], strategy: str
                 ) -> dict[str, tuple] | str:
    """Per node: DynamicResources' refusal, the request entries and their reader. Claims
    of a control-plane controller are the negotiation's (its timeline on the page), not
    searched here."""
    needs = pod_needs(state, pod, Plans(), _negotiated)
    if needs.error is not None:
        return needs.error
    devices = diagnosis_devices.SeedDevices(state, needs, strategy)
    out = {}
    for name in names:
        node = state.nodes[name]
        reason = fit.node_refusal(state, pod, node, needs, check_capacity=False) \
            or fit.claims_fit(state, node, needs.wants, strategy)
        out[name] = (reason, devices.entries(name) if needs.wants else None, devices)
    return out


def _negotiated(claim, plan) -> None:
    """The blocker that leaves every control-plane claim to the negotiation."""
    return None


def _v1_claims(state: ClusterState, pod: Pod, names: list[str], resolved
               ) -> dict[str, tuple] | str:
    if resolved.error is not None:
        return resolved.error
    claims: list[ResourceClaimV1] = resolved.claims
    source = AllocatorSource()
    allocator = source.ready(state, state.profile or make_profile())
    docs = [v1_views.claim_doc(c) for c in claims if not c.allocated]
    # the claim the pod's extended resources would get on each node, tried with the rest
    # (made once per node, for the explanation and the search alike)
    extended = v1_extended.claims_by_node(state, pod, allocator.profile, source.class_docs)
    views = {name: extended(name) for name in names} if extended is not None else {}
    entries: dict[str, list[dict]] = {}
    if docs or views:
        body = v1_explain.detail(state, allocator, claims,
                                 [{"node": n, "reason": R_CLAIMS} for n in names], len(names),
                                 extended=views.get if views else None)
        entries = {entry["node"]: entry.get("requests") or [] for entry in body["nodes"]}
    devices = diagnosis_devices.V1Devices(state, pod, allocator, claims, None)
    out = {}
    for name in names:
        view = views.get(name)
        reason = _v1_refusal(state, pod, allocator, state.nodes[name], claims,
                             [*docs, view] if view else docs)
        out[name] = (reason, entries.get(name), devices)
    return out


def _v1_refusal(state: ClusterState, pod: Pod, allocator, node: Node,
                claims: list[ResourceClaimV1], docs: list[dict]) -> str | None:
    """DynamicResources' Filter on one node: allocated claims available there, then a
    search for the others (never committed)."""
    view = v1_views.node_doc(node)
    binding = allocator.profile.binding_and_status
    if any(v1_postfilter.unavailable_on(state, pod, c, view, binding)
           for c in claims if c.allocated):
        return NOT_AVAILABLE
    if not docs:
        return None
    try:
        outcome = allocator.allocate(view, docs)
    except (AllocationError, UnschedulableError) as error:
        return str(error)
    return None if outcome.allocations is not None else (outcome.reason or R_CLAIMS)
