"""One Allocate call of the v1 allocator: one pod's claims on one node (docs/v1.md).

``Search`` is the depth-first, first-fit search with full backtracking of upstream's
``structured/internal/*/allocator_*.go``: preflight (``preflight.py``, or the plan of an
earlier call for the same claims), then claims -> requests -> device slots; it returns the
allocations or the reason nothing fits. Fatal errors raise ``AllocationError``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from allocation.engine.constants import CANNOT_ALLOCATE
from allocation.engine.v1.capacity import (
    capacity_fits,
    consumed_capacity,
    consumed_texts,
    slot_device,
)
from allocation.engine.v1.counters import CounterLedger
from allocation.engine.v1.errors import AllocationError, invalid_pool
from allocation.engine.v1.matching import short_of_devices
from allocation.engine.v1.preflight import MAX_RESULTS, Plan, prepare
from allocation.engine.v1.requests import ClaimState, Pick, RequestData
from allocation.engine.v1.results import build_allocation
from allocation.engine.v1.single import first_free, invocations
from allocation.engine.v1.taints import untolerated_taint

if TYPE_CHECKING:
    from allocation.engine.v1.allocator import Allocator

__all__ = ["CANNOT_ALLOCATE", "CHECK_AT", "INVALID_POOLS", "MAX_RESULTS", "Outcome", "Search",
           "TIMED_OUT", "TIMEOUT_STEPS", "no_fit", "nothing_free"]

INVALID_POOLS = "invalid resource pools were encountered"
_EXCEEDED = "exceeded"  # the 32-results limit was hit below this point (not fatal)
TIMED_OUT = "timed out trying to allocate devices"
# steps after which a search asks whether it can succeed at all (``matching.py``): later
# than any search that is quick anyway, so that the question costs those nothing
CHECK_AT = 20_000
# kube-scheduler's Filter timeout (DRASchedulerFilterTimeout, 10 s) in steps, so that the
# outcome does not depend on the machine: upstream's allocator made about 365,000 a second
# on the machine measured (docs/v1.md "The Filter timeout")
TIMEOUT_STEPS = 3_650_000


class _Stop(Exception):
    """The search ends early with ``reason``: it cannot succeed (``matching.py``), or
    its steps reached the Filter timeout's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Outcome:
    """The result of one ``allocate`` call: one allocation per claim, or the reason."""

    allocations: list[dict] | None
    reason: str = ""
    # calls of the search step (upstream's numAllocateOneInvocations), for tests and stats
    invocations: int = 0

    @property
    def fits(self) -> bool:
        return self.allocations is not None


def no_fit(pools: list, invocations: int) -> Outcome:
    """The outcome of a call on a node where nothing fits: upstream names invalid pools
    when the node has one."""
    if any(pool.invalid for pool in pools):
        return Outcome(None, INVALID_POOLS, invocations)
    return Outcome(None, CANNOT_ALLOCATE, invocations)


def nothing_free(plan: Plan, pools: list, book, profile) -> bool:
    """Whether ``plan``'s claims cannot fit on a node of ``pools`` because no usable pool
    has a free device (the nodes the Allocator and ``Attempt`` skip after it).

    A cheap exact shortcut: if only normal ExactCount requests are asked and no usable
    pool has a free device, the search would evaluate nothing and fail. Claims without
    requests need no device: they fit on any node, pools or not.
    """
    if not plan.full_node_refuses:
        return False
    dedicated = book.pool_dedicated
    for pool in pools:
        if pool.invalid and profile.invalid_pools_fatal:
            return False
        if not pool.serves_exact_count(profile):
            continue
        if not pool.fully_visible or pool.multi or pool.incomplete:
            return False
        if pool.device_count - dedicated.get(pool.key, 0) > 0:
            return False
        # the count may include allocations of devices no slice lists any more
        taken = book.dedicated
        if any(d.key not in taken for v in pool.slices for d in v.devices):
            return False
    return True


class Search:
    """The state of one Allocate call (upstream's ``allocator`` struct)."""

    def __init__(self, alloc: Allocator, node: dict, claims: list[dict],
                 plan: Plan | None = None) -> None:
        """``plan``: the same claims, or claims of the same spec objects
        (``Plan.same_specs``), prepared by an earlier call (``Plan.reusable``, made under
        the allocator's current classes); the preflight is not run again."""
        self.alloc = alloc
        self.profile = alloc.profile
        self.book = alloc.book
        self.node = node
        self.node_name = (node.get("metadata") or {}).get("name", "")
        self.plan = plan
        self.claims = [ClaimState(c) for c in claims] if plan is None else plan.fresh(claims)
        self.pools = alloc.pools_for(node)
        self.allocating: dict = {}
        self.allocating_capacity: dict = {}
        self.consumable = self.profile.consumable_capacity
        self.invocations = 0
        self._next_stop = CHECK_AT  # when ``_one`` next calls ``_checkpoint``

    @cached_property
    def counters(self) -> CounterLedger:
        """The counters this call consumes (made when a device with counters is met)."""
        return CounterLedger(self.book, self.profile)

    def run(self, shortcut: bool = True) -> Outcome:
        """The call: preflight (unless planned), then the search; the plan is kept in
        ``plan``. ``shortcut``: False when ``single.first_free`` was just asked on this
        node and could not decide (``Attempt``: not asked again). Raises AllocationError
        and UnschedulableError (see ``preflight``)."""
        p = self.profile
        if self.plan is None:
            self.plan = prepare(self)
        if not self.claims:
            return Outcome([])
        if nothing_free(self.plan, self.pools, self.book, p):
            outcome = no_fit(self.pools, self.invocations)
            self.alloc.note_full(self.node_name, self.pools, outcome.reason)
            return outcome
        # one claim of one plain request: its first free devices, unless that shortcut
        # cannot decide (``single.py``); then, or when nothing fits, the search itself
        done = None
        if shortcut and self.plan.single is not None:
            claim = self.claims[0]
            picks = first_free(self.alloc, self.pools, claim, self.plan.single)
            if picks is not None:
                claim.picks = picks
                self.invocations += invocations(picks)
                done = True
        if done is None:
            try:
                done = self._one(0, 0, 0, 0, False, None)
            except _Stop as stop:  # the half-made picks are this call's own, dropped too
                if stop.reason == TIMED_OUT:
                    return Outcome(None, TIMED_OUT, self.invocations)
                done = False
        if done is not True:
            return no_fit(self.pools, self.invocations)
        out = []
        for c in self.claims:
            classes = {}
            for ri in range(len(c.requests)):
                rd = c.data[(ri, c.chosen.get(ri, 0))]
                classes[ri] = rd.klass
            out.append(build_allocation(c.raw, c.picks, c.chosen, classes, self.node_name, p))
        return Outcome(out, invocations=self.invocations)

    # -- per-device checks (``Allocator.selectable``: binding conditions, selectors) --
    def capacity_reason(self, rd: RequestData, dev) -> str:
        """Why ``dev`` cannot give ``rd`` its capacity now ("" when it can)."""
        return capacity_fits(rd.capacity, dev, self.book.shared.get(dev.key),
                             self.allocating_capacity.get(dev.key))

    def in_use(self, ci: int, rd: RequestData, key) -> bool:
        """Step 1 of a slot: the device is taken (docs/v1.md, search)."""
        if rd.admin:
            return ci in self.allocating.get(key, ())
        return key in self.book.dedicated or bool(self.allocating.get(key))

    # -- the search (allocateOne) --
    def _one(self, ci, ri, si, di, in_sub, start):
        self.invocations += 1
        if self.invocations >= self._next_stop:
            self._checkpoint()
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            res = self._one(ci + 1, 0, 0, 0, False, None)
            return False if res is _EXCEEDED else res
        rd = claim.data[(ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            for sj in range(claim.subs[ri]):
                res = self._one(ci, ri, sj, 0, True, None)
                if res is _EXCEEDED:
                    continue
                all_exceeded = False
                if res is True:
                    claim.chosen[ri] = sj
                    return True
            return _EXCEEDED if all_exceeded else False
        if rd.all_mode and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, None)
        if len(claim.picks) + rd.num_devices - di > MAX_RESULTS:
            return _EXCEEDED
        if rd.all_mode:
            pool, view, dev = rd.all_devices[di]
            undo = self._take(ci, claim, rd, pool, dev, True, (view, di))
            if undo is None:
                return False
            nsi = 0 if self.profile.all_subrequest_bug else si
            res = self._one(ci, ri, nsi, di + 1, in_sub, None)
            if res is not True:
                undo()
            return res
        return self._scan(ci, claim, ri, si, di, in_sub, start, rd)

    def _checkpoint(self) -> None:
        """A long search: end it when it cannot succeed, or at the Filter timeout.
        Raises _Stop."""
        if self.invocations >= TIMEOUT_STEPS:
            raise _Stop(TIMED_OUT)
        if short_of_devices(self):
            raise _Stop(CANNOT_ALLOCATE)
        self._next_stop = TIMEOUT_STEPS if self.profile.filter_timeout else sys.maxsize

    def _scan(self, ci, claim, ri, si, di, in_sub, start, rd):
        pools = self.pools
        p0, s0, d0 = start or (0, 0, 0)
        combinations = self.profile.combinations
        selectable = self.alloc.selectable
        use_incomplete = self.profile.incomplete_pools_for_exact_count
        book_dedicated = self.book.dedicated
        allocating = self.allocating
        admin = rd.admin
        for pi in range(p0, len(pools)):
            pool = pools[pi]
            if pool.invalid and self.profile.invalid_pools_fatal:
                raise invalid_pool(pool)
            if pool.invalid or (pool.incomplete and not use_incomplete):
                continue
            views = pool.slices
            for vi in range(s0 if pi == p0 else 0, len(views)):
                view = views[vi]
                devs = view.devices
                for dj in range(d0 if (pi == p0 and vi == s0) else 0, len(devs)):
                    dev = devs[dj]
                    key = dev.key
                    if admin:
                        if ci in allocating.get(key, ()):
                            continue
                    elif key in book_dedicated or allocating.get(key):
                        continue
                    if not selectable(claim, rd, view, dev):
                        continue
                    if self.consumable and self.capacity_reason(rd, dev):
                        continue
                    undo = self._take(ci, claim, rd, pool, dev, False, (view, di), True)
                    if undo is None:
                        continue
                    nxt = (pi, vi, dj + 1) if combinations else None
                    res = self._one(ci, ri, si, di + 1, in_sub, nxt)
                    if res is True:
                        return True
                    undo()
                    if res is not False:
                        return res
        return False

    def _take(self, ci, claim, rd, pool, dev, must, slot, capacity_checked=False):
        """allocateDevice: the checks of steps 1 and 3-6; returns an undo or None. ``slot``
        is (the device's slice view, the index of the slot in its request);
        ``capacity_checked``: ``_scan`` found ``dev``'s capacity sufficient just before
        (nothing below changes what that check reads before the last one here)."""
        p = self.profile
        key = dev.key
        multi = self.consumable and dev.multi_raw
        if not multi and rd.admin and ci in self.allocating.get(key, ()):
            return None
        if not rd.admin and (key in self.book.dedicated or self.allocating.get(key)):
            return None
        if dev.consumes:
            if not p.partitionable_devices:
                return None
            skip = multi and p.shared_skips_counter_check and (
                key in self.book.shared or key in self.allocating_capacity)
            if not skip and self.counters.short(pool, dev, consume=True):
                return None
        if p.device_taints and dev.taints and untolerated_taint(dev, rd.tolerations,
                                                                 p.every_taint_blocks):
            return None  # counters stay consumed: upstream does not release them here
        base, sub = (rd.parent, rd.name) if rd.parent else (rd.name, "")
        constraints = claim.constraints
        for i, con in enumerate(constraints):
            if not con.add(base, sub, dev):
                if must:
                    raise AllocationError(
                        f"claim {claim.key}, request {rd.name}: cannot add device "
                        f"{'/'.join(key)} because a claim constraint would not be satisfied")
                for e in range(i):
                    constraints[e].remove(base, sub, dev)
                return None
        holders = self.allocating.setdefault(key, set())
        if not multi:
            holders.add(ci)
        consumed = texts = None
        if self.consumable:
            target = slot_device(p, dev, *slot)
            if not (capacity_checked and target is dev) and self.capacity_reason(rd, target):
                return None  # as upstream: constraints and marks are not rolled back
            if multi:
                consumed = consumed_capacity(rd.capacity, dev)
                texts = consumed_texts(rd.capacity, rd.capacity_formats, dev)
                sums = self.allocating_capacity.setdefault(key, {})
                for name, value in consumed.items():
                    sums[name] = sums.get(name, Fraction(0)) + value
        tolerations = rd.tolerations
        claim.picks.append(Pick(rd.result_name, dev, rd.admin, tolerations, consumed, texts))
        count = len(claim.picks) - 1

        def undo():
            for con in constraints:
                con.remove(base, sub, dev)
            holders.discard(ci)
            if multi:
                if consumed:
                    sums = self.allocating_capacity[key]
                    for name, value in consumed.items():
                        sums[name] -= value
                    if not any(sums.values()):
                        del self.allocating_capacity[key]
            elif p.partitionable_devices and dev.consumes:
                self.counters.release(pool, dev)
            del claim.picks[count:]

        return undo

    # -- counters (KEP-4815) --
