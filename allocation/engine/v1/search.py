"""One Allocate call of the v1 allocator: one pod's claims on one node (docs/v1.md).

``Search`` is the depth-first, first-fit search with full backtracking of upstream's
``structured/internal/*/allocator_*.go``: preflight, then claims -> requests -> device slots;
it returns the allocations or the reason nothing fits. Fatal errors raise
``AllocationError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from allocation.engine.cel import CelCompileError
from allocation.engine.constants import CANNOT_ALLOCATE
from allocation.engine.v1.capacity import (
    capacity_fits,
    consumed_capacity,
    consumed_texts,
    slot_device,
)
from allocation.engine.v1.constraints import DistinctAttribute, MatchAttribute
from allocation.engine.v1.counters import CounterLedger
from allocation.engine.v1.errors import AllocationError, CelRuntimeError, UnschedulableError
from allocation.engine.v1.requests import ClaimState, Pick, RequestData
from allocation.engine.v1.results import build_allocation
from allocation.engine.v1.taints import untolerated_taint

if TYPE_CHECKING:
    from allocation.engine.v1.allocator import Allocator

__all__ = ["CANNOT_ALLOCATE", "INVALID_POOLS", "MAX_RESULTS", "Outcome", "Search"]

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize
INVALID_POOLS = "invalid resource pools were encountered"
_EXCEEDED = "exceeded"  # the 32-results limit was hit below this point (not fatal)


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


class Search:
    """The state of one Allocate call (upstream's ``allocator`` struct)."""

    def __init__(self, alloc: Allocator, node: dict, claims: list[dict]) -> None:
        self.alloc = alloc
        self.profile = alloc.profile
        self.book = alloc.book
        self.node = node
        self.node_name = (node.get("metadata") or {}).get("name", "")
        self.claims = [ClaimState(c) for c in claims]
        self.pools = alloc.pools_for(node)
        self.allocating: dict = {}
        self.allocating_capacity: dict = {}
        self.counters = CounterLedger(self.book, self.profile)
        self.consumable = self.profile.consumable_capacity
        self.invocations = 0

    # -- preflight --
    def run(self) -> Outcome:
        p = self.profile
        for claim in self.claims:
            self._check_classes(claim)
        for ci, claim in enumerate(self.claims):
            self._prepare(ci, claim)
        if not self.claims:
            return Outcome([])
        if self._nothing_free():
            outcome = self._no_fit()
            self.alloc.note_full(self.node_name, self.pools, outcome.reason)
            return outcome
        done = self._one(0, 0, 0, 0, False, None)
        if done is not True:
            return self._no_fit()
        out = []
        for c in self.claims:
            classes = {}
            for ri in range(len(c.requests)):
                rd = c.data[(ri, c.chosen.get(ri, 0))]
                classes[ri] = rd.klass
            out.append(build_allocation(c.raw, c.picks, c.chosen, classes, self.node_name, p))
        return Outcome(out, invocations=self.invocations)

    def _no_fit(self) -> Outcome:
        if any(pool.invalid for pool in self.pools):
            return Outcome(None, INVALID_POOLS, self.invocations)
        return Outcome(None, CANNOT_ALLOCATE, self.invocations)

    def _nothing_free(self) -> bool:
        # A cheap exact shortcut: if only normal ExactCount requests are asked and no usable
        # pool has a free device, the search would evaluate nothing and fail. Claims without
        # requests need no device: they fit on any node, pools or not.
        if not any(c.data for c in self.claims):
            return False
        for c in self.claims:
            for rd in c.data.values():
                if rd.all_mode or rd.admin:
                    return False
        dedicated = self.book.pool_dedicated
        for pool in self.pools:
            if pool.invalid and self.profile.invalid_pools_fatal:
                return False
            if pool.invalid or (pool.incomplete
                                and not self.profile.incomplete_pools_for_exact_count):
                continue
            if not pool.fully_visible or pool.multi or pool.incomplete:
                return False
            if pool.device_count - dedicated.get(pool.key, 0) > 0:
                return False
            # the count may include allocations of devices no slice lists any more
            book = self.book.dedicated
            if any(d.key not in book for v in pool.slices for d in v.devices):
                return False
        return True

    def _check_classes(self, claim: ClaimState) -> None:
        # kube-scheduler's PreFilter checks every class of every claim before the allocator
        # runs, so a missing class wins over any preflight error of an earlier claim
        spec = claim.raw["spec"]
        known = self.alloc.prepared.get(id(spec))
        if known is not None and known[0] is spec:
            return  # prepared (_prepare): its classes existed, and set_classes drops that
        for req in claim.requests:
            subs = req.get("firstAvailable") or ()
            for body, name in ([(sub, f"{req['name']}/{sub['name']}") for sub in subs]
                               or [(req.get("exactly") or {}, req["name"])]):
                class_name = body.get("deviceClassName") or ""
                if class_name not in self.alloc.classes:
                    raise UnschedulableError(f"request {name}: device class {class_name} "
                                             "does not exist")

    def _prepare(self, ci: int, claim: ClaimState) -> None:
        spec = claim.raw["spec"]
        known = self.alloc.prepared.get(id(spec))
        if known is not None and known[0] is spec:
            # the same (immutable) spec passed this preflight: its requests, shared
            _spec, claim.data, claim.subs, constraints = known
            claim.constraints = [con.fresh() for con in constraints]
            return
        self._preflight(ci, claim)
        if not any(rd.all_mode for rd in claim.data.values()):  # All: per node
            # kept before any add(): fresh() copies their settings, not their state
            self.alloc.prepared[id(spec)] = (spec, claim.data, claim.subs,
                                             [c.fresh() for c in claim.constraints])

    def _preflight(self, ci: int, claim: ClaimState) -> None:
        p = self.profile
        minimum = 0
        for ri, req in enumerate(claim.requests):
            subs = req.get("firstAvailable") or []
            if subs and not p.prioritized_list:
                raise AllocationError(f"claim {claim.key}, request {req['name']}: has "
                                      "subrequests, but the DRAPrioritizedList feature is "
                                      "disabled")
            if not p.consumable_capacity and p.capacity_gate_checked:
                exactly = req.get("exactly") or {}
                if exactly.get("capacity") is not None:
                    raise AllocationError(
                        f"claim {claim.key}, request {req['name']}: has capacity requests, "
                        "but the DRAConsumableCapacity feature is disabled")
                for sub in subs:
                    if sub.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {claim.key}, subrequest {sub['name']}: has capacity "
                            "requests, but the DRAConsumableCapacity feature is disabled")
            if subs:
                claim.subs[ri] = len(subs)
                least = None
                for si, sub in enumerate(subs):
                    rd = self._validate(claim, ci, RequestData(sub, req["name"]), sub)
                    claim.data[(ri, si)] = rd
                    least = rd.num_devices if least is None else min(least, rd.num_devices)
                minimum += least or 0
            else:
                body = req.get("exactly") or {}
                body = {**body, "name": req["name"]}
                rd = self._validate(claim, ci, RequestData(body, None), body)
                claim.data[(ri, 0)] = rd
                minimum += rd.num_devices
        if minimum > MAX_RESULTS:
            raise AllocationError(f"claim {claim.key}: number of requested devices {minimum} "
                                  f"exceeds the claim limit of {MAX_RESULTS}")
        for i, con in enumerate(claim.raw["spec"]["devices"].get("constraints") or ()):
            if con.get("matchAttribute"):
                claim.constraints.append(MatchAttribute(con.get("requests") or [],
                                                        con["matchAttribute"]))
            elif con.get("distinctAttribute") and p.distinct_attribute:
                claim.constraints.append(DistinctAttribute(
                    con.get("requests") or [], con["distinctAttribute"], p.distinct_by_identity))
            else:
                raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint "
                                      "(unsupported constraint type?)")

    def _validate(self, claim: ClaimState, ci: int, rd: RequestData, body: dict) -> RequestData:
        for i, sel in enumerate(body.get("selectors") or ()):
            if not (sel.get("cel") or {}).get("expression"):
                raise AllocationError(f"claim {claim.key}, request {rd.name}, selector #{i}: "
                                      "CEL expression empty (unsupported selector type?)")
        if rd.admin and not self.profile.admin_access:
            raise AllocationError(f"claim {claim.key}, request {rd.name}: admin access is "
                                  "requested, but the feature is disabled")
        class_name = body.get("deviceClassName") or ""
        rd.klass = klass = self.alloc.classes[class_name]  # _check_classes: it exists
        rd.class_selectors = [self._compile(s, f"class {class_name}", i) for i, s in
                              enumerate((klass.get("spec") or {}).get("selectors") or ())]
        # (compiled, index): the owner is the claim's (``ClaimState.owner``), which a request
        # prepared once serves for every claim of the same spec (``_prepare``)
        rd.selectors = [self._compile(s, claim.owner, i)[::2] for i, s in
                        enumerate(body.get("selectors") or ())]
        if rd.all_mode:
            self._list_all(claim, ci, rd)
        return rd

    def _compile(self, selector: dict, owner: str, index: int):
        expression = (selector.get("cel") or {}).get("expression") or ""
        try:
            return (self.alloc.compiled(expression), owner, index)
        except CelCompileError as exc:
            raise AllocationError(f"{owner}: selector #{index}: CEL compile error: {exc}") \
                from exc

    def _list_all(self, claim: ClaimState, ci: int, rd: RequestData) -> None:
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(f"claim {claim.key}, request {rd.name}: asks for all "
                                      f"devices, but resource pool {pool.driver}/{pool.name} "
                                      "is currently being updated")
            if pool.invalid:
                raise AllocationError(f"claim {claim.key}, request {rd.name}: asks for all "
                                      f"devices, but resource pool {pool.driver}/{pool.name} "
                                      "is currently invalid")
            for view in pool.slices:
                for dev in view.devices:
                    if not self.selectable(claim, rd, view, dev):
                        continue
                    if self.consumable and self.capacity_reason(rd, dev):
                        continue
                    rd.all_devices.append((pool, view, dev))
        rd.num_devices = len(rd.all_devices)

    # -- per-device checks --
    def selectable(self, claim: ClaimState, rd: RequestData, view, dev) -> bool:
        """Binding conditions, class then request selectors (lazy), per-device nodes."""
        self.alloc.examined += 1
        if dev.binding_conditions and not self.profile.binding_and_status:
            return False
        result = self.alloc.selector_result
        try:
            for sel, owner, i in rd.class_selectors:
                if not result(dev, sel, owner, i):
                    return False
            for sel, i in rd.selectors:
                if not result(dev, sel, claim.owner, i):
                    return False
        except CelRuntimeError as exc:  # spec section 6: say which claim and request
            exc.place(claim.key, rd.result_name)
            raise
        return not (view.per_device and dev.name not in view.node_ok)

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

    def _scan(self, ci, claim, ri, si, di, in_sub, start, rd):
        pools = self.pools
        p0, s0, d0 = start or (0, 0, 0)
        combinations = self.profile.combinations
        use_incomplete = self.profile.incomplete_pools_for_exact_count
        book_dedicated = self.book.dedicated
        allocating = self.allocating
        admin = rd.admin
        for pi in range(p0, len(pools)):
            pool = pools[pi]
            if pool.invalid and self.profile.invalid_pools_fatal:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
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
                    if not self.selectable(claim, rd, view, dev):
                        continue
                    if self.consumable and self.capacity_reason(rd, dev):
                        continue
                    undo = self._take(ci, claim, rd, pool, dev, False, (view, di))
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

    def _take(self, ci, claim, rd, pool, dev, must, slot):
        """allocateDevice: the checks of steps 1 and 3-6; returns an undo or None. ``slot``
        is (the device's slice view, the index of the slot in its request)."""
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
            skip = multi and (key in self.book.shared or key in self.allocating_capacity)
            if not skip and self.counters.short(pool, dev, consume=True):
                return None
        if p.device_taints and untolerated_taint(dev, rd.tolerations, p.every_taint_blocks):
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
            if self.capacity_reason(rd, slot_device(p, dev, *slot)):
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
