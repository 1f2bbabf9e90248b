"""One node's engine state, built from the stored rows that concern it (the node page).

The node page needs the node's inventories with what holds them (partition trees, counter
bars, named and v1 devices), its pods and its claims: not the whole cluster. A state of the
rows below gives exactly what the whole baseline gives for that node, in milliseconds
instead of a build of every stored object (docs/console-pages.md, "Node"):

* the Node; its seed slices and capacities (``node_name``), which make its inventories;
* the pods bound to it (``Pod.node_name``), which make its CPU, memory and pod use;
* seed claims allocated on it (``ResourceClaim.node_name``: the node their structured
  handles name, which is where ``take_result`` takes them);
* the resource.k8s.io/v1 slices of every pool the node sees: its own slices and the
  network-attached ones (no ``node_name``), each with every slice of its pool (a pool's
  completeness and shared counters need all of them);
* v1 claims allocated on it (``ResourceClaimV1.node_name``: the one node their allocation
  selects), and, when a network-attached pool is in view, every allocated v1 claim with a
  result of that pool's driver (any of them may hold one of its devices).

Read-only, like :func:`allocation.services.cluster.baseline_state`; nothing is cached (a
build reads a few dozen rows). A seed claim whose structured handles name several nodes
(hand-written input; the allocator never makes one) is found on the node its first handle
names, as its ``node_name`` column and the lists have it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.state import ClusterState
from allocation.models import (
    Node,
    NodeResourceCapacity,
    NodeResourceSlice,
    Pod,
    ResourceClaim,
    ResourceClaimV1,
    ResourceSlice,
    StoredObject,
)
from allocation.services import cluster
from allocation.services.store import build_state

__all__ = ["node_rows", "node_state"]


def _v1_slices(name: str) -> tuple[list[ResourceSlice], set[str]]:
    """The v1 slices of the pools node ``name`` may see, and the drivers of the
    network-attached ones among them."""
    seen = list(ResourceSlice.objects.filter(Q(node_name=name) | Q(node_name="")))
    pools = {(s.driver_name, s.pool_name) for s in seen}
    network = {s.driver_name for s in seen if not s.node_name}
    if not pools:
        return [], network
    same_pool = Q()
    for driver, pool in pools:
        same_pool |= Q(driver_name=driver, pool_name=pool)
    return list(ResourceSlice.objects.filter(same_pool)), network


def _v1_claims(name: str, network_drivers: set[str]) -> list[ResourceClaimV1]:
    wanted = Q(node_name=name)
    for driver in sorted(network_drivers):
        wanted |= Q(drivers__contains=f",{driver},") & ~Q(status="Pending")
    return list(ResourceClaimV1.objects.filter(wanted))


def node_rows(name: str) -> list[StoredObject]:
    """The stored rows node ``name``'s state is built from, in document order (none when
    there is no such node)."""
    rows: list[StoredObject] = list(Node.objects.filter(name=name))
    if not rows:
        return []
    rows += NodeResourceSlice.objects.filter(node_name=name)
    rows += NodeResourceCapacity.objects.filter(node_name=name)
    rows += Pod.objects.filter(node_name=name)
    rows += ResourceClaim.objects.filter(node_name=name)
    slices, network = _v1_slices(name)
    rows += slices
    rows += _v1_claims(name, network)
    rows.sort(key=lambda r: r.position)
    return rows


def node_state(name: str) -> tuple[ClusterState, int]:
    """The engine state of node ``name`` and what it needs (module docstring), and the
    revision the rows were read at; a state without the node if there is none."""
    with transaction.atomic():  # the rows and the revision belong together
        revision = cluster.revision()
        rows = node_rows(name)
    # As the baseline: rows that cannot be loaded are left out (docs/console.md, Failures).
    state, _left_out = build_state(rows, [], VirtualClock(timezone.now()))
    return state, revision
