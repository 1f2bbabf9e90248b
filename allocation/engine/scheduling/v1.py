"""Scheduling pods whose claims are resource.k8s.io/v1 ResourceClaims (docs/v1.md).

A pod's claims (named, or made from templates by ``claims_v1.py``) are resolved by
``v1_claims.py``, which also gives PreFilter's refusals (claim not created yet, missing,
being deleted, not the pod's; a claim with 256 consumers is "resourceclaim in use"). Nodes
are tried in name order; on each, the node's own checks (``fit.node_refusal``) come first,
then ``allocation.engine.v1.Allocator.allocate(node, claims)`` for the pod's unallocated
claims, as kube-scheduler's DRA plugin does (KEP-4381). Twins (pods with the same node
needs and pending claim specs, e.g. from one template) resume at the previous twin's node,
as the seed scheduler does (``scheduling/cache.py``), and nodes the allocator knows to have
nothing free are answered without a search (``Allocator.attempt``). A fit writes
``status.allocation``, the delete-protection finalizer and ``status.reservedFor``, then
binds the pod (``binding.bind``). A fatal allocator error ends the attempt with
``SchedulerError``, as kube-scheduler's failed Filter does.

The allocator lives as long as the state's slices and classes (one per settle in
practice) and uses the state's Kubernetes profile (``ClusterState.profile``); its book
follows the claims' allocations incrementally: each pass commits allocations it has not
seen and releases those that are gone. Claims and nodes are handed to the allocator as
light views (metadata and spec, shared, never copied): converting every claim and node
per node per pod would dominate the time.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.constants import V1_CLAIM_FINALIZER
from allocation.engine.faults import SCHEDULER_ERROR
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
from allocation.engine.scheduling.v1_claims import IN_USE, PodClaimsV1, in_use, v1_claims
from allocation.engine.v1 import (
    NOT_AVAILABLE,
    AllocationError,
    Allocator,
    Attempt,
    UnschedulableError,
    allocated_claim_fits,
    make_profile,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod
    from allocation.engine.state import ClusterState

__all__ = ["V1Scheduling", "v1_claims", "FILTER_ERROR"]

FILTER_ERROR = 'running "DynamicResources" filter plugin: '
"""How kube-scheduler prefixes a Filter plugin's error in the pod's SchedulerError
condition and FailedScheduling Event."""


class V1Scheduling:
    """The scheduler's v1 half: an allocator over the state's slices and classes."""

    def __init__(self) -> None:
        self.allocator: Allocator | None = None
        self._source: tuple = ()
        self._committed: dict[str, dict] = {}
        self._synced = False
        # where twins (same pod signature, same pending claim specs) resume the node scan,
        # stale after any release of pod capacity (state.epoch) or of devices (_releases);
        # and a twin's failure, reused while nothing changed (_unchanged)
        self.cache: PlacementCache[tuple[str, dict]] = PlacementCache()
        self._releases = 0

    def begin(self) -> None:
        """A new scheduler pass: the slices and classes are checked and the book is
        synchronised again before the first v1 pod (a pass changes neither slices nor
        classes, so once per pass is enough). Cursors and failures are forgotten: other
        controllers ran since."""
        self._synced = False
        self.cache = PlacementCache()

    def pod(self, state: ClusterState, pod: Pod, resolved: PodClaimsV1) -> bool:
        """One scheduling attempt (or, for a bound pod, allocation on its node); whether
        anything changed.

        Returns:
            True when the pod was bound or its claims allocated or reserved.
        """
        allocator = self._ready(state)
        total = len(state.node_order)
        if resolved.error is None and in_use(resolved.claims, pod) is not None:
            resolved = PodClaimsV1(error=IN_USE)
        if resolved.error is not None:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {resolved.error}.", {})
        found = resolved.claims
        if pod.node_name:
            return self._bound(state, allocator, pod, found)
        key = _signature(pod, found)
        if key is not None:
            failure = self.cache.failure(key, self._unchanged(state))
            if failure is not None:  # a twin failed and nothing changed since
                return self._failed(state, pod, key, *failure)
        attempt = allocator.attempt([_claim_doc(c) for c in found if not c.allocated])
        epoch = (state.epoch, self._releases)
        start = self.cache.start(key, epoch) if key is not None else 0
        try:
            placed, counts, details = self._scan(state, pod, found, attempt,
                                                 range(start, total))
            if placed is None and start:
                # Nothing fits: the summary counts every node, so the nodes before the cursor
                # are asked too (they refused a twin, so they refuse this pod).
                placed, counts, details = self._scan(state, pod, found, attempt, range(total))
        except AllocationError as error:
            return binding.mark_unschedulable(state, pod, f"{FILTER_ERROR}{error}", {},
                                              SCHEDULER_ERROR)
        except UnschedulableError as error:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {error}.", {})
        if placed is not None:
            if key is not None:
                self.cache.placed(key, epoch, placed)
            return True
        return self._failed(state, pod, key, summary(counts, total), detail_of(details, total))

    def _failed(self, state: ClusterState, pod: Pod, key: tuple | None, message: str,
                detail: dict) -> bool:
        """Mark ``pod`` unschedulable; its twins get the same answer while nothing changes."""
        binding.mark_unschedulable(state, pod, message, detail)
        if key is not None:
            self.cache.failed(key, self._unchanged(state), len(state.node_order),
                              (message, detail))
        return False

    def _unchanged(self, state: ClusterState) -> tuple:
        """What changes whenever a node's answer to a pod may change within a pass: the
        epoch (releases of pod capacity, nodes), device releases, the book's allocations,
        and the events (every bind records Scheduled)."""
        return (state.epoch, self._releases, len(self._committed), len(state.events.items))

    def _scan(self, state: ClusterState, pod: Pod, claims: list[ResourceClaimV1],
              attempt: Attempt, indexes: range) -> tuple[int | None, Counter[str], list[dict]]:
        """Try the nodes at ``indexes`` of the node order until one takes the pod: its index
        (or None), and the refusals of the nodes tried before."""
        counts: Counter[str] = Counter()
        details = []
        order = state.node_order
        for index in indexes:
            refusal = self._try(state, pod, state.nodes[order[index]], claims, attempt, True)
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
            refusal = self._try(state, pod, node, claims, allocator.attempt(
                [_claim_doc(c) for c in claims if not c.allocated]), False)
        except (AllocationError, UnschedulableError) as error:
            refusal = str(error)
        if refusal is None:
            return True
        return binding.mark_unschedulable(
            state, pod, f"pod is bound to {node.name}, where its claims cannot be "
            f"allocated: {refusal}", {"nodes": [{"node": node.name, "reason": refusal}]})

    def _try(self, state: ClusterState, pod: Pod, node: Node, claims: list[ResourceClaimV1],
             attempt: Attempt, check_capacity: bool) -> str | None:
        """Place ``pod`` on ``node`` (allocate, reserve, bind) or say why not; ``attempt``
        is the allocator's attempt of the unallocated claims' views (``_claim_doc``)."""
        refusal = fit.node_refusal(state, pod, node, PodNeeds(), check_capacity)
        if refusal:
            return refusal
        node_doc = _node_doc(node)
        if not all(allocated_claim_fits({"status": {"allocation": c.allocation}}, node_doc)
                   for c in claims if c.allocated):
            return NOT_AVAILABLE
        pending = [c for c in claims if not c.allocated]
        if pending:
            outcome = attempt.allocate(node_doc)
            if outcome.allocations is None:
                return outcome.reason or R_CLAIMS
            for claim, allocation in zip(pending, outcome.allocations, strict=True):
                self._allocate(state, self.allocator, claim, allocation)
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
        allocator.book.commit(claim.ref, allocation)
        self._committed[claim.ref] = allocation

    def _ready(self, state: ClusterState) -> Allocator:
        """The allocator for the state's slices and classes, its book in step with the
        claims' allocations."""
        if self._synced:
            return self.allocator
        slices = list(state.of_kind(ResourceSlice))
        classes = list(state.of_kind(DeviceClass))
        source = (id(state), id(state.profile), *(id(o) for o in slices), None,
                  *(id(o) for o in classes))
        if self.allocator is None or source != self._source:
            self.allocator = Allocator(state.profile or make_profile(),
                                       slices=[s.as_v1() for s in slices],
                                       classes=[c.as_v1() for c in classes])
            self.allocator.book.release_listeners.append(self._released)
            self._source, self._committed = source, {}
        self._sync(state, self.allocator)
        self._synced = True
        return self.allocator

    def _released(self, _pool_keys: set) -> None:
        self._releases += 1

    def _sync(self, state: ClusterState, allocator: Allocator) -> None:
        current = {claim.ref: claim.allocation for claim in state.of_kind(ResourceClaimV1)
                   if claim.allocation is not None}
        for key in [k for k, a in self._committed.items()
                    if current.get(k) is None or current[k] != a]:
            allocator.book.release(key)  # released or replaced
            del self._committed[key]
        for key, allocation in current.items():
            if key not in self._committed:
                allocator.book.commit(key, allocation)
                self._committed[key] = allocation


def _signature(pod: Pod, claims: list[ResourceClaimV1]) -> tuple | None:
    """The placement-cache key of a pod whose claims are all pending (None otherwise): what
    the node checks read of the pod and the claims' specs (twins from one template are equal,
    so a node that refused one refuses the next, until something is released)."""
    if any(c.allocated for c in claims):
        return None
    # repr, not sorted JSON: claims from one template repeat its key order, and a spec
    # written in another order only misses the cursor (a full scan), never shares it
    return (*pod_signature(pod), *(repr(c.spec) for c in claims))


def _claim_doc(claim: ResourceClaimV1) -> dict:
    """The view of an unallocated claim the allocator reads: identity and spec (shared)."""
    return {"apiVersion": claim.api_version, "kind": "ResourceClaim",
            "metadata": {"name": claim.name, "namespace": claim.namespace,
                         "uid": claim.meta.uid},
            "spec": claim.spec}


def _node_doc(node: Node) -> dict:
    """The view of a node the allocator reads: name, labels and status (shared)."""
    return {"metadata": {"name": node.name, "labels": node.meta.labels},
            "status": node.raw.get("status") or {}}


def _reserve(state: ClusterState, claim: ResourceClaimV1, pod: Pod) -> None:
    if pod.meta.uid not in claim.reserved_pod_uids:
        state.writable(claim).reserved_for.append(
            {"resource": "pods", "name": pod.name, "uid": pod.meta.uid})
