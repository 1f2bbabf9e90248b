"""A pod's or a claim's engine state, built from the stored rows that concern it (their
pages), as :mod:`allocation.services.node_state` does for a node.

A pod page shows the pod, its claims, its Events, its negotiation timeline and its
manifest; a claim page the claim, its class, the pods waiting for it, its Events and its
manifest: not the whole cluster. Each state holds the rows below, which the whole
baseline's checks also need (a bound pod's node with its inventories, an allocated claim's
devices), so the page shows what the whole baseline shows, in milliseconds
(docs/console-pages.md, "Pod", "Claim"):

* **pod**: the pod's node and what :func:`~allocation.services.node_state.node_rows`
  takes for it; the pod; the claims it names (seed and v1); its PodSchedulingContext; the
  Events about the pod and about that context;
* **claim**: the claim; its node's rows when it is allocated on one; its class (seed); the
  pods it names (its owner, those it is reserved for) and the unbound pods that may wait
  for it (those whose name it extends, ``<pod>-<claim>``, or whose document names it); the
  Events about the claim.

What only the whole cluster can show is left to the whole baseline (the functions return
None; the pages then read :func:`allocation.services.cluster.baseline_state`): a pending
pod (its page diagnoses every node), a claim allocated on no single node (a
network-attached device), an object that is not stored or whose row cannot be loaded (the
page says so, as before), a bound pod or claim whose node is not stored. Read-only;
nothing is cached.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.objects import KObject
from allocation.engine.objects import ResourceClaim as SeedClaim
from allocation.engine.objects.v1 import ResourceClaimV1 as V1Claim
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name
from allocation.models import (
    Event,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimV1,
    ResourceClass,
    StoredObject,
)
from allocation.services import cluster
from allocation.services.node_state import node_rows
from allocation.services.store import LeftOut, build_state, load_row

__all__ = ["pod_state", "claim_state", "pod_rows", "claim_rows"]

_WHOLE = None  # what a row selection returns when only the whole baseline will do


def _loaded(row: StoredObject | None) -> KObject | None:
    if row is None:
        return None
    obj = load_row(row)
    return None if isinstance(obj, LeftOut) else obj


def _claims(namespace: str, names: set[str]) -> list[StoredObject]:
    if not names:
        return []
    return [*ResourceClaim.objects.filter(namespace=namespace, name__in=names),
            *ResourceClaimV1.objects.filter(namespace=namespace, name__in=names)]


def _unique(rows: list[StoredObject]) -> list[StoredObject]:
    """Each row once, in document order."""
    seen: dict[tuple[type, int], StoredObject] = {}
    for row in rows:
        seen.setdefault((type(row), row.pk), row)
    return sorted(seen.values(), key=lambda r: r.position)


def pod_rows(namespace: str, name: str) -> tuple[list[StoredObject], list[Event]] | None:
    """The rows and Events pod ``namespace/name``'s state is built from, or None when its
    page needs the whole baseline (module docstring)."""
    row = Pod.objects.filter(namespace=namespace, name=name).first()
    pod = _loaded(row)
    if pod is None or not pod.node_name or pod.terminated:
        return _WHOLE
    node = node_rows(pod.node_name)
    if not node:
        return _WHOLE
    claims = {claim for claim in (pod.claim_name(pc) for pc in pod.claims) if claim}
    rows = [*node, row, *_claims(namespace, claims),
            *PodSchedulingContext.objects.filter(namespace=namespace, name=name)]
    events = Event.objects.filter(
        Q(involved_kind="Pod") | Q(involved_kind="PodSchedulingContext"),
        involved_namespace=namespace, involved_name=name).order_by("position")
    return _unique(rows), list(events)


def claim_rows(namespace: str, name: str) -> tuple[list[StoredObject], list[Event]] | None:
    """The rows and Events claim ``namespace/name``'s state is built from, or None when its
    page needs the whole baseline (module docstring)."""
    row = (ResourceClaim.objects.filter(namespace=namespace, name=name).first()
           or ResourceClaimV1.objects.filter(namespace=namespace, name=name).first())
    claim = _loaded(row)
    if isinstance(claim, SeedClaim):
        node = claim.allocation.node_name if claim.allocation else None
        allocated = claim.allocation is not None
        extra = list(ResourceClass.objects.filter(name=claim.class_name))
        named = {*claim.reserved_pods(), *([claim.owner_pod] if claim.owner_pod else [])}
    elif isinstance(claim, V1Claim):
        node = allocated_node_name(claim.allocation) if claim.allocation else None
        allocated = bool(claim.allocation)
        extra = []
        named = {r.get("name", "") for r in claim.reserved_for if r.get("resource") == "pods"}
    else:
        return _WHOLE
    rows = [row, *extra]
    if allocated:
        on_node = node_rows(node) if node else []
        if not on_node:
            return _WHOLE
        rows += on_node
    # <pod>-<claim> names a pod's claim from a template; any other pod names it itself
    prefixes = {name[:i] for i, c in enumerate(name) if c == "-"}
    waiting = Pod.objects.filter(Q(name__in=prefixes) | Q(document__contains=name),
                                 namespace=namespace, node_name="")
    rows += [*waiting, *Pod.objects.filter(namespace=namespace, name__in=named)]
    events = Event.objects.filter(involved_kind="ResourceClaim", involved_namespace=namespace,
                                  involved_name=name).order_by("position")
    return _unique(rows), list(events)


def _state(selected: tuple[list[StoredObject], list[Event]] | None,
           revision: int) -> tuple[ClusterState, int] | None:
    if selected is None:
        return None
    rows, events = selected
    state, left_out = build_state(rows, events, VirtualClock(timezone.now()))
    if left_out:  # the whole baseline says which rows, and why, as it always did
        return None
    return state, revision


def pod_state(namespace: str, name: str) -> tuple[ClusterState, int] | None:
    """The engine state pod ``namespace/name``'s page is built from and its revision, or
    None when the page needs the whole baseline."""
    with transaction.atomic():  # the rows and the revision belong together
        revision = cluster.revision()
        selected = pod_rows(namespace, name)
    return _state(selected, revision)


def claim_state(namespace: str, name: str) -> tuple[ClusterState, int] | None:
    """As :func:`pod_state`, for claim ``namespace/name``'s page."""
    with transaction.atomic():
        revision = cluster.revision()
        selected = claim_rows(namespace, name)
    return _state(selected, revision)
