"""The read model's node and device-usage rows, all of them or only those a pass changed.

A node's row (pods, CPU and devices in use) and its device-usage rows change when a pod
bound to it changes or a claim holding its devices does; nothing else a kept pass usually
touches changes them. Making the rows of every node again costs a walk of every slice and
inventory, which at a thousand nodes is most of what a kept pass after one new pod spends
outside the engine; :func:`affected` says which nodes the touched pods and claims concern,
so only their rows are made (docs/console-pages.md, "The read model").

Which nodes a claim concerns is remembered per claim (:data:`Spans`): after the claim is
deallocated or deleted its old allocation is gone from the state, but the nodes it held
devices on still need their rows made again. Anything else touched (a node, a slice, any
other kind), or a claim whose nodes cannot be told, makes every row again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects import ObjectKey, ResourceClaim, ResourceClaimV1, ResourceSlice
from allocation.engine.state import ClusterState
from allocation.engine.v1.usage import devices_in_use
from allocation.models import list_column

__all__ = ["MODEL_UNITS", "V1_MODEL", "Pools", "Spans", "label_items", "node_rows", "pool_nodes",
           "claim_nodes", "spans_of", "affected", "holding"]

MODEL_UNITS = {"namedResourcesWithAttributes": "devices", "partitionable": "partitions",
               "counter": "units"}
"""What one unit of each structured model is called on pages."""

V1_MODEL = "resource.k8s.io/v1"
"""The model column of v1 devices (which have no structured model)."""

Key = tuple
Pools = dict[tuple[str, str], frozenset[str]]
Spans = dict[Key, frozenset[str] | None]
"""Per claim (namespace, name): the nodes whose device counts its allocation enters (empty:
none, or not allocated); None when they cannot be told (every row is made again)."""


def label_items(labels: dict[str, str]) -> str:
    """Labels as one filterable column, ``,key=value,...,`` (filtered with ``,k=v,``)."""
    return list_column(f"{k}={v}" for k, v in labels.items())


def _pool_of(piece: ResourceSlice) -> str:
    return (piece.raw.get("spec", {}).get("pool") or {}).get("name", "")


def pool_nodes(state: ClusterState) -> Pools:
    """The nodes of each v1 pool ``(driver, pool)`` with node-local slices."""
    pools: dict[tuple[str, str], set[str]] = defaultdict(set)
    for piece in state.of_kind(ResourceSlice):
        if piece.node_name:
            pools[(piece.driver, _pool_of(piece))].add(piece.node_name)
    return {key: frozenset(nodes) for key, nodes in pools.items()}


def claim_nodes(claim, pools: Pools) -> frozenset[str] | None:
    """The nodes whose rows count what ``claim`` holds (see :data:`Spans`).

    A v1 claim counts on the nodes of the pools its results name (``devices_in_use``
    leaves admin access out); a seed claim on the nodes of the inventories it holds and
    those its structured handles name; a seed allocation with neither (made by a control
    plane) cannot be placed: None.
    """
    allocation = claim.allocation
    if allocation is None:
        return frozenset()
    if isinstance(claim, ResourceClaimV1):
        nodes: set[str] = set()
        for result in (allocation.get("devices") or {}).get("results") or ():
            if not result.get("adminAccess"):
                nodes |= pools.get((result.get("driver"), result.get("pool")), frozenset())
        return frozenset(nodes)
    nodes = {inventory.node_name for inventory, _candidate in allocation.picks}
    nodes |= {h["structuredData"].get("nodeName") for h in allocation.handles
              if h.get("structuredData")}
    nodes.discard(None)
    return frozenset(nodes) or None


def spans_of(state: ClusterState, pools: Pools) -> Spans:
    """:func:`claim_nodes` of every claim of ``state``."""
    return {(c.namespace or "default", c.name): claim_nodes(c, pools)
            for c in [*state.claims(), *state.of_kind(ResourceClaimV1)]}


def affected(state: ClusterState, touched: Iterable, pod_nodes: dict[Key, dict],
             spans: Spans, pools: Pools) -> set[str] | None:
    """The nodes whose rows the objects at ``touched`` keys may have changed, or None when
    every row must be made again; ``spans`` is brought up to date for the touched claims.

    ``pod_nodes`` are the pod rows as the last sync wrote them (a pod's node then).
    """
    nodes: set[str] = set()
    every = False
    for key in set(touched):
        ident = (key.namespace or "default", key.name)
        obj = state.objects.get(key)
        if key.kind == "Pod":
            old = pod_nodes.get(ident)
            nodes.add(old["node"] if old is not None else "")
            if obj is not None:
                nodes.add(obj.node_name or "")
        elif key.kind == "ResourceClaim":
            new = claim_nodes(obj, pools) \
                if isinstance(obj, ResourceClaim | ResourceClaimV1) else frozenset()
            old = spans.get(ident, frozenset())
            if obj is None:
                spans.pop(ident, None)
            else:
                spans[ident] = new
            if old is None or new is None:
                every = True
            else:
                nodes |= old | new
        elif key.kind != "Event":
            every = True
    nodes.discard("")
    return None if every else nodes


def holding(state: ClusterState, spans: Spans, only: set[str]) -> list:
    """The claims whose allocations count on a node in ``only``, by ``spans`` (up to date
    for every claim, with the pools as they are now): the only claims whose devices the
    rows of those nodes count. A kept pass rebuilds the rows of a few nodes; walking all
    40,000 claims for their devices cost 0.1 CPU-s at 5,000 nodes."""
    objects = state.objects
    return [claim for (namespace, name), nodes in spans.items()
            if nodes and not nodes.isdisjoint(only)
            and (claim := objects.get(ObjectKey("ResourceClaim", namespace, name)))
            is not None]


def node_rows(state: ClusterState, only: set[str] | None = None, spans: Spans | None = None
              ) -> tuple[dict[Key, dict], dict[Key, dict]]:
    """The node rows and device-usage rows of every node, or of the nodes in ``only``
    (with ``spans``, up to date: only the claims :func:`holding` devices there are read)."""
    nodes, usage = {}, {}
    slices = [piece for piece in state.of_kind(ResourceSlice) if piece.node_name
              and (only is None or piece.node_name in only)]
    claims = state.of_kind(ResourceClaimV1) if only is None or spans is None else \
        holding(state, spans, only)
    in_use = devices_in_use({"status": {"allocation": c.allocation}} for c in claims
                            if isinstance(c, ResourceClaimV1) and c.allocation is not None) \
        if slices else set()
    v1: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for piece in slices:
        pool = _pool_of(piece)
        counts = v1[(piece.node_name, piece.driver)]
        for device in piece.raw.get("spec", {}).get("devices") or ():
            counts[1] += 1
            counts[0] += (piece.driver, pool, device.get("name")) in in_use
    for driver_node, (used, total) in v1.items():
        node, driver = driver_node
        usage[(node, driver, V1_MODEL)] = {"node": node, "driver": driver, "model": V1_MODEL,
                                           "unit": "devices", "used": used, "total": total}
    inventories = state.inventories.items() if only is None else \
        [(name, state.inventories.get(name, ())) for name in only]
    for inventory_node, held in inventories:
        for inventory in held:
            counted = inventory.usage()
            key = (inventory_node, inventory.driver_name, inventory.model.name)
            row = usage.setdefault(key, {
                "node": key[0], "driver": key[1], "model": key[2],
                "unit": MODEL_UNITS.get(key[2], "items"), "used": 0, "total": 0})
            row["used"] += counted["allocated"]
            row["total"] += counted["total"]
    per_node: dict[str, list[dict]] = defaultdict(list)
    for row in usage.values():
        per_node[row["node"]].append(row)
    for position, name in enumerate(state.node_order):
        if only is not None and name not in only:
            continue
        node = state.nodes[name]
        used = state.usage_of(name)
        mine = per_node.get(name, [])
        devices_used = sum(r["used"] for r in mine)
        devices_total = sum(r["total"] for r in mine)
        nodes[(name,)] = {
            "position": position, "name": name,
            "node_group": node.labels.get(NODE_GROUP_LABEL, ""),
            "labels": label_items(node.labels), "unschedulable": bool(node.unschedulable),
            "pods": used.pods, "cpu_used_milli": used.cpu_milli,
            "cpu_total_milli": node.cpu_milli, "devices_used": devices_used,
            "devices_total": devices_total,
            "in_use_percent": (100 * devices_used // devices_total) if devices_total else 0,
            "drivers": list_column(r["driver"] for r in mine if r["total"])}
    return nodes, {k: v for k, v in usage.items() if (k[0],) in nodes}
