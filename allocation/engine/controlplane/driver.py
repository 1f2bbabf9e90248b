"""Simulated control-plane controllers: every DriverSimulation acts as its driver's controller.

Each pass, for every DriverSimulation (the first by name when two name one controller):

1. contexts whose pod is gone or finished are deleted (the garbage collector's job);
2. claims whose last consumer went away are marked ``deallocationRequested`` (as
   kube-controller-manager does) and every claim so marked is deallocated;
3. the claims of its classes are checked (vendor parameters, ``requestCount``); a failure is
   the claim's pending reason, with a Warning Event;
4. ``Immediate`` claims are allocated at once, with no pod;
5. for each PodSchedulingContext: pending claims are allocated for ``selectedNode`` and
   reserved for the pod, and ``unsuitableNodes`` are answered for the claims still pending,
   over ``potentialNodes``, the selected node and the earlier unsuitable nodes.

Answers are computed from the pools as they stand after this pass's allocations, so a driver
refreshes them whenever allocations change (the seed's "Implementing a plugin for node
resources"); several claims of one pod are considered together.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, NamedTuple

from allocation.engine.constants import CLAIMS_COMPONENT, NODE_LIST_MAX
from allocation.engine.controlplane.common import (
    ALLOCATED,
    ALLOCATION_FAILED,
    CONTROLLER_MISSING,
    DEALLOCATED,
    DEALLOCATION_REQUESTED,
    UNSUITABLE_NODES,
    controlled_claims,
    driver_finalizer,
    pod_claims,
    short_list,
)
from allocation.engine.controlplane.pools import Pool, PoolBook
from allocation.engine.controlplane.requests import (
    render_handle_data,
    request_count,
    vendor_parameters,
)
from allocation.engine.faults import each, report
from allocation.engine.objects import (
    Allocation,
    DriverSimulation,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
)
from allocation.engine.scheduling.binding import reserve_for
from allocation.engine.scheduling.reasons import missing_controller

if TYPE_CHECKING:
    from allocation.engine.state import ClusterState

__all__ = ["DriverController"]

class _Entry(NamedTuple):
    """A pod's claim pending with this driver, and what it asks."""

    pod_claim: str
    claim: ResourceClaim
    resource_class: ResourceClass
    params: Any
    count: int


class _Held(NamedTuple):
    """What an allocated claim holds of a driver's pools."""

    pool: str
    count: int


def _set_reason(state: ClusterState, claim: ResourceClaim, reason: str | None, event_reason: str,
                component: str) -> bool:
    if claim.pending_reason == reason:
        return False
    claim = state.writable(claim)
    claim.pending_reason = reason
    if reason:
        state.events.record(claim, "Warning", event_reason, reason, component=component)
    return True


def _shareable(state: ClusterState, claim: ResourceClaim) -> bool:
    ref = claim.parameters_ref or {}
    if ref.get("kind") != "ResourceClaimParameters":
        return False
    params = state.get("ResourceClaimParameters", claim.namespace, ref["name"])
    return isinstance(params, ResourceClaimParameters) and params.shareable


class DriverController:
    """Runs every DriverSimulation; ``reconcile`` says whether anything changed."""

    name = "drivers"

    def next_wakeup(self, state: ClusterState) -> None:
        """Simulated drivers have no timers."""
        return None

    def __init__(self) -> None:
        self.held: dict[tuple[str, str], _Held] = {}  # (controller, claim) -> held
        self.reserved: dict[str, int] = {}  # reservations per claim at the end of last pass
        self.answered: dict[tuple, tuple] = {}  # what each context answer was computed from
        self.reported: set[tuple[str, str]] = set()  # (claim, node) failures already reported
        self.demand: dict[str, tuple[Any, int]] = {}
        # claim -> the reason its last allocation failed with (its handleData): the claim
        # check leaves it, or the check cleared it and the next allocation set it again,
        # each round, without end
        self.failed: dict[str, str] = {}

    def carry(self, other: DriverController, state: ClusterState) -> None:
        """Start from the reservations ``other`` (on the state ``state`` was forked from) saw
        at the end of its last round (``Simulation.fork``). A fork continues from its
        parent's settled state, whose claims may be reserved where their input documents
        (``raw``, what a new controller reads) are not: the parent's settle, or a worker's
        passes before the fork, reserved them (docs/scenarios.md, "The baseline"). Without
        this, a claim whose last reservation the fork takes away was not deallocated."""
        self.reserved = dict(other.reserved)
        self.failed = dict(other.failed)

    # -- the pass -----------------------------------------------------------------------
    def reconcile(self, state: ClusterState) -> bool:
        sims: dict[str, DriverSimulation] = {}
        for sim in sorted(state.of_kind(DriverSimulation), key=lambda s: s.name):
            sims.setdefault(sim.controller_name, sim)
        changed = self._collect_orphans(state)
        claims = controlled_claims(state)
        changed |= self._no_longer_used(state, claims)
        books, broken = {}, set()
        for controller, sim in list(sims.items()):
            mine = claims.get(controller, [])
            book = None
            if sim.key not in state.failures:
                try:
                    book = self._book(state, sim, mine)
                except Exception as error:  # noqa: BLE001 - confined to the DriverSimulation
                    report(state, sim, self.name, error)
            if book is None:  # its claims wait; they are not "without a controller"
                del sims[controller]
                broken.add(controller)
                continue
            books[controller] = book
            changed |= each(state, self.name, [c for c, _rc in mine],
                            lambda claim, sim=sim, book=book: claim.deallocation_requested
                            and self._deallocate(state, sim, book, claim))
        for controller, mine in sorted(claims.items()):
            if controller not in sims and controller not in broken:
                changed |= each(state, self.name, [c for c, _rc in mine if c.allocation is None],
                                lambda claim, controller=controller: _set_reason(
                                    state, claim, missing_controller(
                                        claim, claim.class_name, controller),
                                    CONTROLLER_MISSING, CLAIMS_COMPONENT))
        self.demand = {}
        for controller, sim in sims.items():
            changed |= self._check(state, sim, books[controller], claims.get(controller, []))

        def serve(context: PodSchedulingContext) -> bool:
            pod = state.get("Pod", context.namespace, context.name)
            served = False
            for controller, sim in sims.items():
                served |= self._serve(state, sim, books[controller], context, pod)
            return served

        changed |= each(state, self.name, list(state.of_kind(PodSchedulingContext)), serve)
        self.reserved = {c.ref: len(c.reserved_for) for mine in claims.values() for c, _ in mine}
        return changed

    def _collect_orphans(self, state: ClusterState) -> bool:
        """Contexts of pods that are gone or finished are deleted; drivers ignore them."""
        def collect(context: PodSchedulingContext) -> bool:
            pod = state.get("Pod", context.namespace, context.name)
            owners = [r.get("uid") for r in context.meta.owner_references
                      if r.get("kind") == "Pod" and r.get("uid")]
            if pod is None or pod.terminated or (owners and pod.meta.uid not in owners):
                state.remove(context)
                return True
            return False

        return each(state, self.name, list(state.of_kind(PodSchedulingContext)), collect)

    def _no_longer_used(self, state: ClusterState, claims: dict) -> bool:
        """A delayed-allocation claim whose last reservation went away gets deallocated."""
        def check(claim: ResourceClaim) -> bool:
            # Before the first pass, what the input said (the claim controller may have
            # dropped reservations of missing pods already).
            before = self.reserved.get(claim.ref, len(
                (claim.raw.get("status") or {}).get("reservedFor") or ()))
            if (claim.allocation is not None and not claim.immediate
                    and not claim.reserved_for and before > 0
                    and not claim.deallocation_requested):
                claim = state.writable(claim)
                claim.deallocation_requested = True
                state.events.record(claim, "Normal", DEALLOCATION_REQUESTED,
                                    "No pod uses the claim any more; requested deallocation",
                                    component=CLAIMS_COMPONENT)
                return True
            return False

        return each(state, self.name, [c for mine in claims.values() for c, _rc in mine], check)

    def _book(self, state: ClusterState, sim: DriverSimulation, mine: list) -> PoolBook:
        """The pools with what the allocated claims hold (input allocations attributed)."""
        book = PoolBook.build(sim, state.nodes)
        for claim, _rc in mine:
            key = (sim.controller_name, claim.ref)
            if claim.allocation is None:
                self.held.pop(key, None)
                continue
            entry = self.held.get(key)
            pool = book.pool(entry.pool) if entry else None
            if entry is None or pool is None:
                params, error = vendor_parameters(state, claim)
                count, error = request_count(sim, params) if error is None else (1, error)
                pool = book.attribute(claim, count if error is None else 1, state.nodes)
                if pool is None:
                    continue  # an allocation the pools cannot explain holds nothing
                entry = self.held[key] = _Held(pool.name, count if error is None else 1)
            book.take(claim.ref, pool, entry.count)
        return book

    # -- allocating ---------------------------------------------------------------------
    def _check(self, state: ClusterState, sim: DriverSimulation, book: PoolBook,
               mine: list) -> bool:
        """Pending reasons of unallocated claims; Immediate claims allocated at once."""
        classes = {c.key: rc for c, rc in mine}
        return each(state, self.name, [c for c, _rc in mine],
                    lambda listed: self._check_claim(state, sim, book, listed,
                                                     classes[listed.key]))

    def _check_claim(self, state: ClusterState, sim: DriverSimulation, book: PoolBook,
                     listed: ResourceClaim, rc: ResourceClass) -> bool:
        claim = state.objects.get(listed.key, listed)  # changed earlier in this pass?
        if claim.allocation is not None:
            return False
        params, error = vendor_parameters(state, claim)
        count = 0
        if error is None:
            count, error = request_count(sim, params)
        reason = f"resourceclaim \"{claim.ref}\": {error}" if error else None
        if error is None:
            self.demand[claim.ref] = (params, count)
        if error is not None or not claim.immediate or claim.deallocation_requested:
            if reason is None and claim.pending_reason is not None \
                    and claim.pending_reason == self.failed.get(claim.ref):
                return False  # the allocation's own failure stands until one succeeds
            return _set_reason(state, claim, reason, ALLOCATION_FAILED, sim.controller_name)
        pool = book.for_immediate(count, rc.suitable_nodes, state.nodes)
        if pool is None:
            return _set_reason(
                state, claim, f"resourceclaim \"{claim.ref}\": no pool of DriverSimulation "
                f"{sim.name} has {count} resource(s) free ({book.summary()})",
                ALLOCATION_FAILED, sim.controller_name)
        return self._allocate(state, sim, book, (claim.name, claim, rc, params, count),
                              pool, None, None)

    def _allocate(self, state: ClusterState, sim: DriverSimulation, book: PoolBook, entry: _Entry,
                  pool: Pool, node: str | None, pod: Pod | None) -> bool:
        _name, claim, rc, params, count = entry
        data, error = render_handle_data(sim, {
            "object": params, "claim": {"name": claim.name, "namespace": claim.namespace},
            "pool": pool.name, "count": count, "node": node or ""})
        if error:
            reason = self.failed[claim.ref] = f"resourceclaim \"{claim.ref}\": {error}"
            return _set_reason(state, claim, reason, ALLOCATION_FAILED, sim.controller_name)
        self.failed.pop(claim.ref, None)
        claim = state.writable(claim)
        handle: dict[str, Any] = {"driverName": rc.driver_name}
        if data is not None:
            handle["data"] = data
        claim.allocation = Allocation(handles=[handle], shareable=_shareable(state, claim),
                                      available_on_nodes=copy.deepcopy(pool.available_on_nodes))
        claim.driver_name = rc.driver_name
        claim.controller_name = sim.controller_name
        finalizer = driver_finalizer(sim.controller_name)
        if finalizer not in claim.meta.finalizers:
            claim.meta.finalizers.append(finalizer)
        book.take(claim.ref, pool, count)
        self.held[(sim.controller_name, claim.ref)] = _Held(pool.name, count)
        claim.pending_reason = None
        where = f"for node {node}" if node else "immediately"
        message = (f"Allocated {count} resource(s) from pool {pool.name} of "
                   f"{sim.controller_name} {where}; available on {len(pool.nodes)} node(s)")
        if pod is not None:
            reserve_for(claim, pod)
            message += f"; reserved for pod {pod.name}"
        state.events.record(claim, "Normal", ALLOCATED, message, component=sim.controller_name)
        return True

    def _deallocate(self, state: ClusterState, sim: DriverSimulation, book: PoolBook,
                    claim: ResourceClaim) -> bool:
        claim = state.writable(claim)
        held = book.held.get(claim.ref)
        book.release(claim.ref)
        self.held.pop((sim.controller_name, claim.ref), None)
        claim.deallocation_requested = False
        if claim.allocation is None:
            return True
        claim.allocation = None
        claim.driver_name = None
        claim.controller_name = None
        finalizer = driver_finalizer(sim.controller_name)
        claim.meta.finalizers = [f for f in claim.meta.finalizers if f != finalizer]
        state.epoch += 1  # resources came free: cached scheduling answers are stale
        what = f"{held.count} resource(s) of pool {held.pool.name}" if held else "its resources"
        state.events.record(claim, "Normal", DEALLOCATED, f"Deallocated: released {what}",
                            component=sim.controller_name)
        return True

    # -- the negotiation ----------------------------------------------------------------
    def _pending(self, state: ClusterState, sim: DriverSimulation, pod: Pod) -> list[_Entry]:
        out = []
        for name, claim in pod_claims(state, pod):
            if (claim is None or claim.allocation is not None or claim.immediate
                    or claim.deallocation_requested or claim.ref not in self.demand):
                continue
            rc = state.get("ResourceClass", None, claim.class_name)
            if isinstance(rc, ResourceClass) and rc.controller_name == sim.controller_name:
                out.append(_Entry(name, claim, rc, *self.demand[claim.ref]))
        return out

    def _serve(self, state: ClusterState, sim: DriverSimulation, book: PoolBook,
               context: PodSchedulingContext, pod: Pod | None) -> bool:
        if pod is None or pod.terminated:
            return False
        entries = self._pending(state, sim, pod)
        if not entries:
            return False
        changed = False
        selected = context.selected_node
        if selected:
            for entry in entries:
                pool = book.for_node(selected, entry.count) if selected in state.nodes else None
                if pool is not None:
                    changed |= self._allocate(state, sim, book, entry, pool, selected, pod)
                elif not context.potential_nodes and (entry.claim.ref, selected) not in \
                        self.reported:  # a bound pod: all a driver can do is retry
                    self.reported.add((entry.claim.ref, selected))
                    state.events.record(entry.claim, "Warning", ALLOCATION_FAILED,
                                        f"Cannot allocate {entry.count} resource(s) for node "
                                        f"{selected}, where pod {pod.name} is bound: no pool "
                                        f"reaching it has them free ({book.summary()})",
                                        component=sim.controller_name)
                    changed = True
        remaining = [e for e in entries if e.claim.ref not in book.held]
        if context.potential_nodes and remaining:
            changed |= self._answer(state, sim, book, context, remaining)
        return changed

    def _answer(self, state: ClusterState, sim: DriverSimulation, book: PoolBook,
                context: PodSchedulingContext, entries: list[_Entry]) -> bool:
        """Update ``unsuitableNodes`` of the pending claims, all claims considered together."""
        potential = list(context.potential_nodes)
        selected = context.selected_node
        prior = sorted({n for e in entries for n in context.claim_status.get(e.pod_claim, ())})
        basis = (tuple(potential), selected, tuple(prior), state.epoch,
                 tuple(p.used for p in book.pools), tuple(e.claim.ref for e in entries))
        key = (context.key, sim.controller_name)
        if self.answered.get(key) == basis and all(e.pod_claim in context.claim_status
                                                   for e in entries):
            return False
        self.answered[key] = basis
        check = list(dict.fromkeys([*potential, *([selected] if selected else []), *prior]))
        bad: dict[str, list[str]] = {e.pod_claim: [] for e in entries}
        for node in check:
            extra: dict[str, int] = {}
            for name, _claim, _rc, _params, count in entries:
                pool = next((p for p in book.by_node.get(node, ())
                             if p.free - extra.get(p.name, 0) >= count), None)
                if pool is None:
                    bad[name].append(node)
                else:
                    extra[pool.name] = extra.get(pool.name, 0) + count
        asked = {*potential, selected}
        changed = False
        for name, claim, _rc, _params, _count in entries:
            # Over the limit, keep what the scheduler asked about now; it remembers the rest.
            ordered = [n for n in bad[name] if n in asked] + [n for n in bad[name]
                                                              if n not in asked]
            answer = sorted(ordered[:NODE_LIST_MAX])
            if context.claim_status.get(name) == answer:
                continue
            context = state.writable(context)
            context.claim_status[name] = answer
            cut = f", {len(answer)} listed" if len(answer) < len(bad[name]) else ""
            changed = True
            state.events.record(context, "Normal", UNSUITABLE_NODES,
                                f"{sim.controller_name}: claim {name} ({claim.ref}): "
                                f"{len(bad[name])} of {len(check)} checked node(s) unsuitable"
                                f"{cut}: {short_list(answer)}", component=sim.controller_name)
        return changed
