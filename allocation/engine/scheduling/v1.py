"""Scheduling pods whose claims are resource.k8s.io/v1 ResourceClaims (docs/v1.md).

The supported subset (``simulation.refuse_unsimulated_v1`` refuses the rest): pods name v1 claims
directly (``resourceClaimName``; all of a pod's claims are v1). Nodes are tried in name
order; on each, the node's own checks (``fit.node_refusal``) come first, then
``allocation.engine.v1.Allocator.allocate(node, claims)`` for the pod's unallocated claims,
as kube-scheduler's DRA plugin does (KEP-4381). A fit writes ``status.allocation``, the
delete-protection finalizer and ``status.reservedFor``, then binds the pod
(``binding.bind``).

The allocator lives as long as the state's slices and classes (one per settle in
practice) and its book follows the claims' allocations incrementally: each pass commits
allocations it has not seen and releases those that are gone.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.constants import V1_CLAIM_FINALIZER
from allocation.engine.objects import DeviceClass, ResourceClaimV1, ResourceSlice
from allocation.engine.scheduling import binding, fit
from allocation.engine.scheduling.cache import PlacementCache, pod_signature
from allocation.engine.scheduling.needs import PodNeeds
from allocation.engine.scheduling.reasons import (
    MAX_DETAIL_NODES,
    R_CLAIMS,
    detail_of,
    summary,
)
from allocation.engine.v1 import (
    NOT_AVAILABLE,
    AllocationError,
    Allocator,
    Attempt,
    UnschedulableError,
    allocated_claim_fits,
    claim_key,
    make_profile,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod
    from allocation.engine.state import ClusterState

__all__ = ["V1Scheduling", "v1_claims"]


def v1_claims(state: ClusterState, pod: Pod) -> list[ResourceClaimV1 | None] | None:
    """The pod's claims when any of them is a v1 claim (None for a missing one), else None:
    the pod is then the seed scheduler's."""
    claims = [state.get("ResourceClaim", pod.namespace, pod.claim_name(c)) for c in pod.claims]
    if not any(isinstance(c, ResourceClaimV1) for c in claims):
        return None
    return [c if isinstance(c, ResourceClaimV1) else None for c in claims]


class V1Scheduling:
    """The scheduler's v1 half: an allocator over the state's slices and classes."""

    def __init__(self) -> None:
        self.allocator: Allocator | None = None
        self._source: tuple = ()
        self._committed: dict[str, dict] = {}
        self._synced = False
        # where twins (same pod signature, same pending claim specs) resume the node scan;
        # stale after any release of pod capacity (state.epoch) or of devices (_releases)
        self.cache: PlacementCache[None] = PlacementCache()
        self._releases = 0

    def begin(self) -> None:
        """A new scheduler pass: the slices and classes are checked and the book is
        synchronised again before the first v1 pod (a pass changes neither slices nor
        classes, so once per pass is enough)."""
        self._synced = False

    def pod(self, state: ClusterState, pod: Pod, claims: list[ResourceClaimV1 | None]) -> bool:
        """One scheduling attempt (or, for a bound pod, allocation on its node); whether
        anything changed.

        Returns:
            True when the pod was bound or its claims allocated or reserved.
        """
        allocator = self._ready(state)
        total = len(state.node_order)
        missing = [pod.claim_name(e) for e, c in zip(pod.claims, claims, strict=True)
                   if c is None]
        if missing:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: resourceclaim "
                f"\"{pod.namespace}/{missing[0]}\" not found.", {})
        found = [c for c in claims if c is not None]
        if pod.node_name:
            return self._bound(state, allocator, pod, found)
        pending = [c for c in found if not c.allocated]
        attempt = allocator.attempt([c.as_v1() for c in pending])
        key = _signature(pod, found)
        epoch = (state.epoch, self._releases)
        start = self.cache.start(key, epoch) if key is not None else 0
        try:
            placed, counts, details = self._scan(state, allocator, pod, found, attempt,
                                                 range(start, total))
            if placed is None and start:
                # Nothing fits: the summary counts every node, so the nodes before the cursor
                # are asked too (they refused a twin, so they refuse this pod).
                placed, counts, details = self._scan(state, allocator, pod, found, attempt,
                                                     range(total))
        except (AllocationError, UnschedulableError) as error:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {error}.", {})
        if placed is not None:
            if key is not None:
                self.cache.placed(key, epoch, placed)
            return True
        return binding.mark_unschedulable(state, pod, summary(counts, total),
                                          detail_of(details, total))

    def _scan(self, state: ClusterState, allocator: Allocator, pod: Pod,
              claims: list[ResourceClaimV1], attempt: Attempt, indexes: range
              ) -> tuple[int | None, Counter[str], list[dict]]:
        """Try the nodes at ``indexes`` of the node order until one takes the pod: its index
        (or None), and the refusals of the nodes tried before."""
        counts: Counter[str] = Counter()
        details = []
        order = state.node_order
        for index in indexes:
            refusal = self._try(state, allocator, pod, state.nodes[order[index]], claims, True,
                                attempt)
            if refusal is None:
                return index, counts, details
            counts[refusal] += 1
            if len(details) < MAX_DETAIL_NODES:
                details.append({"node": order[index], "reason": refusal})
        return None, counts, details

    def _bound(self, state: ClusterState, allocator: Allocator, pod: Pod,
               claims: list[ResourceClaimV1]) -> bool:
        if all(c.allocated and pod.meta.uid in c.reserved_pod_uids for c in claims):
            return False
        node = state.nodes.get(pod.node_name)
        if node is None:
            return binding.mark_unschedulable(state, pod, "node not found", {})
        try:
            refusal = self._try(state, allocator, pod, node, claims, False)
        except (AllocationError, UnschedulableError) as error:
            refusal = str(error)
        if refusal is None:
            return True
        return binding.mark_unschedulable(
            state, pod, f"pod is bound to {node.name}, where its claims cannot be "
            f"allocated: {refusal}", {"nodes": [{"node": node.name, "reason": refusal}]})

    def _try(self, state: ClusterState, allocator: Allocator, pod: Pod, node: Node,
             claims: list[ResourceClaimV1], check_capacity: bool,
             attempt: Attempt | None = None) -> str | None:
        """Place ``pod`` on ``node`` (allocate, reserve, bind) or say why not; ``attempt``
        is ``allocator.attempt`` of the pending claims when the caller tries many nodes."""
        refusal = fit.node_refusal(state, pod, node, PodNeeds(), check_capacity)
        if refusal:
            return refusal
        node_doc = node.to_manifest()
        if not all(allocated_claim_fits(c.as_v1(), node_doc) for c in claims if c.allocated):
            return NOT_AVAILABLE
        pending = [c for c in claims if not c.allocated]
        if pending:
            if attempt is None:
                attempt = allocator.attempt([c.as_v1() for c in pending])
            outcome = attempt.allocate(node_doc)
            if outcome.allocations is None:
                return outcome.reason or R_CLAIMS
            for claim, allocation in zip(pending, outcome.allocations, strict=True):
                self._allocate(state, allocator, claim, allocation)
        for claim in claims:
            _reserve(state, claim, pod)
        binding.bind(state, pod, node)
        return None

    def _allocate(self, state: ClusterState, allocator: Allocator, claim: ResourceClaimV1,
                  allocation: dict) -> None:
        claim = state.writable(claim)
        claim.allocation = allocation
        if V1_CLAIM_FINALIZER not in claim.meta.finalizers:
            claim.meta.finalizers.append(V1_CLAIM_FINALIZER)
        doc = claim.as_v1()
        allocator.commit(doc, allocation)
        self._committed[claim_key(doc)] = allocation

    def _ready(self, state: ClusterState) -> Allocator:
        """The allocator for the state's slices and classes, its book in step with the
        claims' allocations."""
        if self._synced:
            return self.allocator
        slices = list(state.of_kind(ResourceSlice))
        classes = list(state.of_kind(DeviceClass))
        source = (id(state), *(id(o) for o in slices), None, *(id(o) for o in classes))
        if self.allocator is None or source != self._source:
            self.allocator = Allocator(make_profile(), slices=[s.as_v1() for s in slices],
                                       classes=[c.as_v1() for c in classes])
            self.allocator.book.release_listeners.append(self._released)
            self._source, self._committed = source, {}
            self.cache = PlacementCache()
        self._sync(state, self.allocator)
        self._synced = True
        return self.allocator

    def _released(self, _pool_keys: set) -> None:
        self._releases += 1

    def _sync(self, state: ClusterState, allocator: Allocator) -> None:
        current = {}
        for claim in state.of_kind(ResourceClaimV1):
            if claim.allocation is not None:
                doc = claim.as_v1()
                current[claim_key(doc)] = (doc, claim.allocation)
        for key in [k for k, a in self._committed.items()
                    if _gone(current, k, a)]:
            allocator.release({"metadata": _meta_of(key)})
            del self._committed[key]
        for key, (doc, allocation) in current.items():
            if key not in self._committed:
                allocator.commit(doc, allocation)
                self._committed[key] = allocation


def _signature(pod: Pod, claims: list[ResourceClaimV1]) -> tuple | None:
    """The placement-cache key of a pod whose claims are all pending (None otherwise): what
    the node checks read of the pod and the claims' specs (twins from one template are equal,
    so a node that refused one refuses the next, until something is released)."""
    if any(c.allocated for c in claims):
        return None
    return (*pod_signature(pod), *(json.dumps(c.spec, sort_keys=True) for c in claims))


def _gone(current: dict, key: str, allocation: dict) -> bool:
    """Whether a committed allocation is no longer the claim's (released or replaced)."""
    found = current.get(key)
    return found is None or found[1] != allocation


def _meta_of(key: str) -> dict:
    namespace, _, name = key.partition("/")
    return {"namespace": namespace, "name": name}


def _reserve(state: ClusterState, claim: ResourceClaimV1, pod: Pod) -> None:
    if pod.meta.uid not in claim.reserved_pod_uids:
        state.writable(claim).reserved_for.append(
            {"resource": "pods", "name": pod.name, "uid": pod.meta.uid})
