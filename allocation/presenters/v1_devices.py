"""resource.k8s.io/v1 devices as the pages show them: a node's visible pools, ResourceSlices,
DeviceClasses (docs/v1.md, docs/console-pages.md).

The pools a node sees are the engine's own (the state's kept ``SliceIndex``,
``engine/v1_pools.py``, as the scheduler gathers them: slices on the node, network-attached
slices selecting it, shared counters), so the page shows what the allocator would use. What
is held comes from the v1 claims' written allocations: a result without a ``shareID`` holds
its device, one with a ``shareID`` consumes capacity of a multi-allocatable device,
adminAccess results block nobody (they are listed, not counted). A device allocated by any
result that is not adminAccess draws its ``consumesCounters`` from its pool's shared
counters once, as in 1.36 (``Profile.counters_count_shared``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from fractions import Fraction

from allocation.engine.objects import DeviceClass, ResourceClaimV1, ResourceSlice
from allocation.engine.quantity import Quantity
from allocation.engine.state import ClusterState
from allocation.engine.v1.pools import Device, Pool, quantity_value
from allocation.engine.v1_pools import slice_index, state_profile
from allocation.presenters.common import object_url, percent

__all__ = ["DeviceHolder", "CapacityView", "V1Device", "V1CounterBar", "V1Pool",
           "DeviceClassRow", "DeviceClassView", "SliceRow", "SliceView", "holders_by_device",
           "config_text", "nodes_pools",
           "node_pools", "device_class_list", "device_class_view", "slice_list", "slice_view"]

DeviceKey = tuple[str, str, str]
"""(driver, pool, device), as a result names a device."""


@dataclass(frozen=True, slots=True)
class DeviceHolder:
    """One allocation result naming a device."""

    claim: str
    url: str | None
    request: str
    share_id: str | None
    consumed: tuple[tuple[str, str], ...]
    admin_access: bool


@dataclass(frozen=True, slots=True)
class CapacityView:
    """One capacity of a device; ``used`` is the consumable capacity in use (shared
    results' ``consumedCapacity``), None when the device is not multi-allocatable."""

    name: str
    value: str
    used: str | None = None
    percent: int = 0


@dataclass(slots=True)
class V1Device:
    name: str
    slice: str
    slice_url: str | None
    attributes: list[tuple[str, str]]
    capacity: list[CapacityView]
    consumes: list[str]
    multi: bool
    holders: list[DeviceHolder]

    @property
    def state(self) -> str:
        """``allocated`` (dedicated), ``shared`` (multi-allocatable, in use) or ``free``."""
        counted = [h for h in self.holders if not h.admin_access]
        if any(h.share_id is None for h in counted):
            return "allocated"
        return "shared" if counted else "free"


@dataclass(frozen=True, slots=True)
class V1CounterBar:
    """One shared counter: used and total, with the claims whose devices draw on it."""

    counter_set: str
    counter: str
    used: str
    total: str
    percent: int
    holders: tuple[tuple[str, str | None], ...]


@dataclass(slots=True)
class V1Pool:
    driver: str
    name: str
    problem: str
    """Empty, or why the allocator does not use the pool (incomplete, invalid)."""
    slices: list[tuple[str, str | None]]
    devices: list[V1Device]
    counters: list[V1CounterBar] = field(default_factory=list)
    node_local: bool = True


def _text(value: Fraction) -> str:
    return str(Quantity(value))


def _attribute_text(value: dict) -> str:
    """An attribute's value as the page shows it: ``a100``, ``true``, a list-type one's items
    in brackets (``[0, 1]``)."""
    if not isinstance(value, dict):
        return str(value)
    item = next(iter(value.values()), "")
    if isinstance(item, list):
        return "[" + ", ".join(_item_text(x) for x in item) + "]"
    return _item_text(item)


def _item_text(item: object) -> str:
    return ("true" if item else "false") if isinstance(item, bool) else str(item)


def holders_by_device(state: ClusterState, pools: Collection[tuple[str, str]] | None = None
                      ) -> dict[DeviceKey, list[DeviceHolder]]:
    """Every v1 claim's allocation results, by the device they name (claims in name order);
    given ``pools`` (``(driver, pool)``), only the results naming a device of one of them:
    a page drawing a few nodes of thousands links the claims of those alone."""
    found: dict[DeviceKey, list[DeviceHolder]] = defaultdict(list)
    held = [(claim, results) for claim in state.of_kind(ResourceClaimV1)
            if (results := [r for r in claim.results
                            if pools is None or (r["driver"], r["pool"]) in pools])]
    held.sort(key=lambda item: item[0].ref)
    for claim, results in held:
        url = object_url("ResourceClaim", claim.namespace, claim.name)
        for r in results:
            consumed = tuple(sorted((k, str(v)) for k, v in
                                    (r.get("consumedCapacity") or {}).items()))
            found[(r["driver"], r["pool"], r["device"])].append(DeviceHolder(
                claim.ref, url, r.get("request", ""), r.get("shareID"), consumed,
                bool(r.get("adminAccess"))))
    return found


def _device(dev: Device | dict, slice_name: str, driver: str, pool: str,
            holders: dict[DeviceKey, list[DeviceHolder]]) -> V1Device:
    raw = dev.raw if isinstance(dev, Device) else dev
    held = holders.get((driver, pool, raw["name"]), [])
    multi = bool(raw.get("allowMultipleAllocations"))
    capacity = []
    for name, cap in sorted((raw.get("capacity") or {}).items()):
        if not multi:
            capacity.append(CapacityView(name, str(cap["value"])))
            continue
        used = sum((quantity_value(v) for h in held if h.share_id and not h.admin_access
                    for k, v in h.consumed if k == name), Fraction(0))
        total = quantity_value(cap["value"])
        capacity.append(CapacityView(name, str(cap["value"]), _text(used),
                                     percent(used, total)))
    consumes = [f"{c['counterSet']}: " + ", ".join(f"{n} {v['value']}" for n, v in
                                                   sorted((c.get("counters") or {}).items()))
                for c in raw.get("consumesCounters") or ()]
    return V1Device(raw["name"], slice_name, object_url("ResourceSlice", None, slice_name),
                    sorted((k, _attribute_text(v)) for k, v in
                           (raw.get("attributes") or {}).items()),
                    capacity, consumes, multi, held)


def _counters(counter_sets: dict[str, dict[str, Fraction]], devices: list[dict],
              holders: dict[DeviceKey, list[DeviceHolder]], driver: str,
              pool: str) -> list[V1CounterBar]:
    used: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
    users: dict[tuple[str, str], set[tuple[str, str | None]]] = defaultdict(set)
    for raw in devices:
        counted = [h for h in holders.get((driver, pool, raw["name"]), ())
                   if not h.admin_access]
        if not counted:
            continue
        for entry in raw.get("consumesCounters") or ():
            for counter, value in (entry.get("counters") or {}).items():
                key = (entry["counterSet"], counter)
                used[key] += quantity_value(value["value"])
                users[key] |= {(h.claim, h.url) for h in counted}
    bars = []
    for set_name, counters in sorted(counter_sets.items()):
        for counter, total in sorted(counters.items()):
            key = (set_name, counter)
            bars.append(V1CounterBar(set_name, counter, _text(used[key]), _text(total),
                                     percent(used[key], total),
                                     tuple(sorted(users[key]))))
    return bars


def _pool_counter_sets(pool: Pool, pieces: list[ResourceSlice]) -> dict[str, dict[str, Fraction]]:
    """The pool's shared counters: the allocator's, or (for a pool it does not use, which
    has none) those its slices declare."""
    if pool.counter_sets:
        return pool.counter_sets
    return {entry["name"]: {n: quantity_value(v["value"])
                            for n, v in (entry.get("counters") or {}).items()}
            for piece in pieces for entry in piece.shared_counters}


def node_pools(state: ClusterState, name: str) -> list[V1Pool]:
    """The v1 pools node ``name`` sees (its own slices and network-attached ones), in the
    allocator's order, with every device on the node and the pool's shared counters.

    The allocator also gathers every counter slice on every node (a pool's counters are
    needed wherever its devices are); another node's pool that has no device here is not
    one this node sees, and is left out."""
    return nodes_pools(state, [name])[name]


def nodes_pools(state: ClusterState, names: list[str]) -> dict[str, list[V1Pool]]:
    """:func:`node_pools` of several nodes, indexing the slices and claims once."""
    pieces = sorted(state.of_kind(ResourceSlice), key=lambda s: s.name)
    found: dict[str, list[V1Pool]] = {name: [] for name in names}
    if not pieces:
        return found
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
    for piece in pieces:
        by_pool[piece.pool_key].append(piece)
    # the state's kept index (the scheduler's own; a fork shares it), not one made per page
    index = slice_index(state, state_profile(state))
    seen = {name: index.pools_for({"metadata": {"name": name, "labels": dict(node.labels)}})
            for name in names if (node := state.nodes.get(name)) is not None}
    holders = holders_by_device(state, {pool.key for pools in seen.values() for pool in pools})
    for name, pools in seen.items():
        drawn = [_pool(pool, name, by_pool[pool.key], holders) for pool in pools]
        found[name] = [p for p in drawn if p.devices or p.node_local]
    return found


def _pool(pool: Pool, node: str, pieces: list[ResourceSlice],
          holders: dict[DeviceKey, list[DeviceHolder]]) -> V1Pool:
    devices = [_device(dev, view.name, pool.driver, pool.name, holders)
               for view in pool.slices for dev in view.devices
               if view.node_ok is None or dev.name in view.node_ok]
    # Counters are the pool's: every device draws on them, on this node or not.
    raws = [dev.raw for view in [*pool.slices, *pool.other_slices] for dev in view.devices]
    problem = ("incomplete: not every slice of the pool is published" if pool.incomplete
               else f"invalid: {pool.invalid_reason}" if pool.invalid else "")
    return V1Pool(pool.driver, pool.name, problem,
                  [(p.name, object_url("ResourceSlice", None, p.name)) for p in pieces],
                  devices, _counters(_pool_counter_sets(pool, pieces), raws, holders,
                                     pool.driver, pool.name),
                  any(p.node_name == node for p in pieces))


@dataclass(frozen=True, slots=True)
class DeviceClassRow:
    name: str
    url: str | None
    selectors: tuple[str, ...]
    extended_resource_name: str | None
    claims: int


@dataclass(slots=True)
class DeviceClassView:
    name: str
    selectors: list[str]
    config: list[str]
    extended_resource_names: list[str]
    claims: list[tuple[str, str | None]]


def _claims_of_class(state: ClusterState, name: str) -> list[tuple[str, str | None]]:
    return sorted((c.ref, object_url("ResourceClaim", c.namespace, c.name))
                  for c in state.of_kind(ResourceClaimV1) if name in c.class_names)


def device_class_list(state: ClusterState) -> list[DeviceClassRow]:
    """Every DeviceClass, by name, with how many v1 claims name it."""
    counts: dict[str, int] = defaultdict(int)
    for claim in state.of_kind(ResourceClaimV1):
        for name in claim.class_names:
            counts[name] += 1
    return [DeviceClassRow(c.name, object_url("DeviceClass", None, c.name), tuple(c.selectors),
                           c.extended_resource_name, counts[c.name])
            for c in sorted(state.of_kind(DeviceClass), key=lambda c: c.name)]


def config_text(entry: dict) -> str:
    """One config entry (a class's, a claim's or an allocation's) in one line."""
    opaque = entry.get("opaque") or {}
    where = f" for {', '.join(entry['requests'])}" if entry.get("requests") else ""
    source = f"{entry['source']} " if entry.get("source") else ""
    return (f"{source}{opaque.get('driver', '')}{where}: "
            f"{json.dumps(opaque.get('parameters'), sort_keys=True)}")


def device_class_view(state: ClusterState, name: str) -> DeviceClassView | None:
    """One DeviceClass: selectors, config, extended resource names, the claims naming it."""
    found = state.get("DeviceClass", None, name)
    if not isinstance(found, DeviceClass):
        return None
    return DeviceClassView(found.name, list(found.selectors),
                           [config_text(c) for c in found.config],
                           list(found.extended_resource_names), _claims_of_class(state, name))


@dataclass(frozen=True, slots=True)
class SliceRow:
    name: str
    url: str | None
    driver: str
    pool: str
    node: str | None
    node_url: str | None
    where: str
    devices: int
    counter_sets: int


@dataclass(slots=True)
class SliceView:
    row: SliceRow
    generation: int
    slice_count: int
    devices: list[V1Device]
    counters: list[tuple[str, str]]


def _where(piece: ResourceSlice) -> str:
    if piece.node_name:
        return "node-local"
    if piece.all_nodes:
        return "all nodes"
    if piece.per_device_node_selection:
        return "per device"
    return "node selector" if piece.node_selector else "no nodes (counters only)"


def _slice_row(piece: ResourceSlice) -> SliceRow:
    node = piece.node_name
    return SliceRow(piece.name, object_url("ResourceSlice", None, piece.name), piece.driver,
                    piece.pool_name, node, object_url("Node", None, node) if node else None,
                    _where(piece), len(piece.devices), len(piece.shared_counters))


def slice_list(state: ClusterState) -> list[SliceRow]:
    """Every ResourceSlice, by driver, pool and name."""
    return [_slice_row(s) for s in sorted(state.of_kind(ResourceSlice),
                                          key=lambda s: (s.driver, s.pool_name, s.name))]


def slice_view(state: ClusterState, name: str) -> SliceView | None:
    """One ResourceSlice: its pool, devices (with holders) and shared counters."""
    piece = state.get("ResourceSlice", None, name)
    if not isinstance(piece, ResourceSlice):
        return None
    holders = holders_by_device(state, {piece.pool_key})
    devices = [_device(d, piece.name, piece.driver, piece.pool_name, holders)
               for d in piece.devices]
    counters = [(entry["name"], ", ".join(f"{n} {v['value']}" for n, v in
                                          sorted((entry.get("counters") or {}).items())))
                for entry in piece.shared_counters]
    return SliceView(_slice_row(piece), piece.pool_generation, piece.resource_slice_count,
                     devices, counters)
