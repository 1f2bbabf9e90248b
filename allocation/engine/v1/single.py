"""The search's shortcut for one claim with one plain request (docs/v1.md, "Speed").

Most pods of a large cluster have one claim from a template asking ``count`` devices of
one class: no subrequests, no constraints, no admin access. When every device the scan
meets is plain as well (it consumes no counters, cannot be allocated several times, and
the capacity check does not read another slot's device), a device that fails a check for
one slot fails it for every slot of the request: the checks read the device, the request
and the book, never the devices picked in this call. The depth-first search then takes
the first ``count`` devices that pass, in scan order, with no backtracking: exactly what
``first_free`` takes, without the search's recursion, undo closures and marks.

``first_free`` decides only a fit. When the scan meets a device that is not plain, or
fewer devices pass than asked, it answers None and the search runs as before from the
start (its failure, its counts and its errors are the search's own). What it evaluates
before it answers (selectors, in scan order) the search evaluates in the same order, so a
CEL runtime error or an invalid pool in 1.34 is raised at the same device either way.

It reads the allocator, a node's pools and the request, not a ``Search``, and gives the
picks: a scheduler's ``Attempt`` with a plan asks it without making a search or preparing
the pod's claim (the plan's claim names the claim of a CEL runtime error, which the search
then raises again at the same device for the pod's own), and runs a search only when it
answers None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.v1.capacity import capacity_fits
from allocation.engine.v1.errors import invalid_pool
from allocation.engine.v1.requests import ClaimState, Pick, RequestData
from allocation.engine.v1.taints import untolerated_taint

if TYPE_CHECKING:
    from allocation.engine.v1.allocator import Allocator
    from allocation.engine.v1.pools import Pool

__all__ = ["first_free", "invocations"]


def invocations(picks: list[Pick]) -> int:
    """The search steps (upstream's numAllocateOneInvocations) of a descent that picks
    ``picks`` at once, as ``first_free`` does: one per slot, then the request, the claim
    and the end."""
    return len(picks) + 3


def first_free(alloc: Allocator, pools: list[Pool], claim: ClaimState,
               rd: RequestData) -> list[Pick] | None:
    """The first free devices of a claim's one request ``rd`` (a plan's ``single``) among
    ``pools`` (a node's), as a search of the claim alone there picks them at its start
    (nothing allocating yet). ``claim`` only names the claim in a CEL runtime error.

    Returns:
        The picks (``invocations`` counts them as the search would); None when the search
        must decide (a device that is not plain, too few devices).

    Raises:
        AllocationError: as the search would at the same device (a CEL runtime error; a
            1.34 invalid pool).
    """
    p = alloc.profile
    wanted = rd.num_devices
    consumable = p.consumable_capacity
    if wanted < 1 or (consumable and p.capacity_reads_slot_device):
        return None
    book = alloc.book
    dedicated = book.dedicated
    shared = book.shared
    selectable = alloc.selectable
    use_incomplete = p.incomplete_pools_for_exact_count
    taints = p.device_taints
    picks: list[Pick] = []
    taken: set = set()
    for pool in pools:
        if pool.invalid and p.invalid_pools_fatal:
            raise invalid_pool(pool)
        if pool.invalid or (pool.incomplete and not use_incomplete):
            continue
        for view in pool.slices:
            for dev in view.devices:
                key = dev.key
                if key in dedicated or key in taken:
                    continue
                if not selectable(claim, rd, view, dev):
                    continue
                if consumable:
                    if dev.multi_raw:
                        return None  # may fill several slots: the search decides
                    # the search's capacity check, with nothing allocating in this call
                    if capacity_fits(rd.capacity, dev, shared.get(key), None):
                        continue
                if dev.consumes:
                    if p.partitionable_devices:
                        return None  # counters depend on the picks: the search decides
                    continue  # never allocatable with the gate off (search._take)
                if (
                    taints
                    and dev.taints
                    and untolerated_taint(dev, rd.tolerations, p.every_taint_blocks)
                ):
                    continue
                picks.append(Pick(rd.result_name, dev, False, rd.tolerations, None))
                if len(picks) == wanted:
                    return picks
                taken.add(key)
    return None
