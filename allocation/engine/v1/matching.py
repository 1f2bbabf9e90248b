"""Whether the requests of one Allocate call could get their device counts at all
(docs/v1.md, "A search that cannot succeed").

Before it says that a pod's claims do not fit a node, upstream's search tries the picks of
a request in every order (1.34, 1.35) or every combination (1.36). A node a few devices
short of two claims' requests can take it minutes; kube-scheduler's Filter timeout cuts
it at 10 s. The search asks this module once it has run long (``search.CHECK_AT`` steps).

The question is a relaxation of the search: each normal ExactCount request of the call
needs ``count`` distinct devices that it may select (``Allocator.selectable``) and that no
allocated claim holds; a device that allows multiple allocations serves any number, and
admin-access requests, ``All`` requests and firstAvailable lists ask for nothing here.
Constraints, counters and capacities are left out: they only forbid more. So when even
this has no solution (a bipartite b-matching, found by augmenting paths), neither has the
search. The answer is then the search's own last one, ``cannot allocate all claims``,
provided nothing the search could still meet is fatal: an invalid pool under 1.34, an
``All`` request (whose picks must succeed), 1.34's slot-device capacity read, or a
selector that fails to evaluate on a device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.v1.constraints import lookup_attribute, value_set
from allocation.engine.v1.errors import AllocationError

if TYPE_CHECKING:
    from allocation.engine.v1.search import Search

__all__ = ["short_of_devices"]

_MAX_VALUES = 64  # values of a matchAttribute's attribute asked one by one


def short_of_devices(search: Search) -> bool:
    """Whether ``search`` cannot succeed because its requests cannot all get their counts
    of distinct devices, and would meet nothing fatal on its way to failing.

    A claim's matchAttribute constraint narrows its requests to the devices of one value
    of the attribute: the question is then asked once per value (up to ``_MAX_VALUES``),
    and fails when it fails for every value.

    Returns:
        True when the search's outcome is certain to be "does not fit" (no fatal error);
        False when it may succeed, or may still raise, so it must run on.
    """
    profile = search.profile
    if profile.invalid_pools_fatal and any(pool.invalid for pool in search.pools):
        return False
    if search.consumable and profile.capacity_reads_slot_device:
        return False
    demands: list[tuple[int, list]] = []
    owners: list[tuple[int, str]] = []  # per demand: (claim index, request name)
    for ci, claim in enumerate(search.claims):
        for rd in claim.data.values():
            if rd.all_mode:
                return False
            if rd.parent is not None or rd.admin:
                continue
            devices = _candidates(search, claim, rd)
            if devices is None:
                return False  # a selector fails on a device: the search may raise
            if devices is True:
                continue  # a device that allows multiple allocations may serve any count
            demands.append((rd.num_devices, devices))
            owners.append((ci, rd.name))
    if not _matched(demands):
        return True
    for ci, claim in enumerate(search.claims):
        for con in claim.constraints:
            if con.kind == "matchAttribute" and not _matched_by_value(demands, owners, ci,
                                                                       con):
                return True
    return False


def _candidates(search: Search, claim, rd) -> list | bool | None:
    """The devices ``rd`` may take; True when one of them allows multiple allocations;
    None when a selector fails to evaluate on one."""
    profile = search.profile
    selectable = search.alloc.selectable
    taken = search.book.dedicated
    out = []
    for pool in search.pools:
        if not pool.serves_exact_count(profile):
            continue
        for view in pool.slices:
            for dev in view.devices:
                if dev.key in taken:
                    continue
                try:
                    if not selectable(claim, rd, view, dev):
                        continue
                except AllocationError:
                    return None
                if search.consumable and dev.multi_raw:
                    return True
                out.append(dev)
    return out


def _matched_by_value(demands: list[tuple[int, list]], owners: list[tuple[int, str]],
                      ci: int, con) -> bool:
    """Whether some value of ``con``'s attribute lets every demand be met when claim
    ``ci``'s covered requests take only devices of that value. A device without the
    attribute serves no covered request (``MatchAttribute.add``)."""
    covered = [i for i, (owner, name) in enumerate(owners)
               if owner == ci and con.applies(name, "")]
    if not covered:
        return True  # it covers only requests the question leaves out
    values: list = []
    for i in covered:
        for dev in demands[i][1]:
            for value in _values(lookup_attribute(dev, con.attribute), con.sets):
                if value not in values:
                    values.append(value)
                    if len(values) > _MAX_VALUES:
                        return True  # too many to ask each: assume it can
    for value in values:
        narrowed = [(count, [dev for dev in devices
                             if value in _values(lookup_attribute(dev, con.attribute),
                                                 con.sets)])
                    if i in covered else (count, devices)
                    for i, (count, devices) in enumerate(demands)]
        if _matched(narrowed):
            return True
    return False


def _values(attr: tuple[str, object] | None, sets: bool) -> tuple:
    """The values one device's attribute offers a matchAttribute: itself; with list types
    (``sets``) each value of its set, typed, and none for an unknown type (a device every
    pick of the set reading refuses). Devices that share one of them fit together."""
    if attr is None:
        return ()
    if not sets:
        return (attr,)
    values = value_set(attr)
    return () if values is None else tuple((values[0], item) for item in values[1])


def _matched(demands: list[tuple[int, list]]) -> bool:
    """Whether every demand ``(count, candidate devices)`` gets ``count`` distinct devices
    of its own (Kuhn's augmenting paths, one unit at a time)."""
    if sum(count for count, _ in demands) > len({d.key for _, devs in demands for d in devs}):
        return False
    owner: dict = {}
    for start, (count, _) in enumerate(demands):
        for _ in range(count):
            if not _augment(start, demands, owner):
                return False
    return True


def _augment(start: int, demands: list[tuple[int, list]], owner: dict) -> bool:
    """Give demand ``start`` one more device, moving others' devices along a shortest path
    (breadth first, so no recursion however many devices there are)."""
    reached_by: dict = {}  # key -> the demand that reached it
    via: dict = {start: None}  # demand -> the key it was reached through
    queue = [start]
    for demand in queue:
        for dev in demands[demand][1]:
            key = dev.key
            if key in reached_by:
                continue
            reached_by[key] = demand
            holder = owner.get(key)
            if holder is None:
                while key is not None:  # flip the path back to ``start``
                    demand = reached_by[key]
                    owner[key] = demand
                    key = via[demand]
                return True
            if holder not in via:
                via[holder] = key
                queue.append(holder)
    return False
