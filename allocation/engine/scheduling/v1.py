"""Scheduling pods whose claims are resource.k8s.io/v1 ResourceClaims (docs/v1.md).

A pod's claims (named, or made from templates by ``claims_v1.py``) are resolved by
``v1_claims.py``, which also gives PreFilter's refusals (claim not created yet, missing,
being deleted, not the pod's; a claim with 256 consumers is "resourceclaim in use"). Nodes
are tried in name order (``v1_place.try_node`` on each): the node's own checks
(``fit.node_refusal``) come first, then ``allocation.engine.v1.Allocator.allocate(node,
claims)`` for the pod's unallocated claims, as kube-scheduler's DRA plugin does (KEP-4381).
A fit writes ``status.allocation``, the delete-protection finalizer and
``status.reservedFor``, then binds the pod (``binding.bind``). A fatal allocator error ends
the attempt with ``SchedulerError``, as kube-scheduler's failed Filter does. Extended
resources served through DRA add the pod's extended-resource claim (``v1_extended.py``);
devices with binding conditions make the pod wait before binding (``v1_prebind.py``).

The allocator lives as long as the state's slices and classes (one per settle in
practice) and uses the state's Kubernetes profile (``ClusterState.profile``); its book
follows the claims' allocations incrementally: each pass commits allocations it has not
seen and releases those that are gone. Claims and nodes are handed to the allocator as
light views (metadata and spec, shared, never copied): converting every claim and node
per node per pod would dominate the time.
"""

from __future__ import annotations

import weakref
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

from allocation.engine import v1_pools
from allocation.engine.faults import SCHEDULER_ERROR
from allocation.engine.objects import DeviceClass, Pod, ResourceClaimV1
from allocation.engine.quiet import Quiet
from allocation.engine.scheduling import (
    binding,
    v1_book,
    v1_explain,
    v1_extended,
    v1_failures,
    v1_place,
    v1_postfilter,
    v1_prebind,
    v1_views,
)
from allocation.engine.scheduling.reasons import (
    MAX_DETAIL_NODES,
    summary,
)
from allocation.engine.scheduling.v1_claims import (
    IN_USE,
    PodClaimsV1,
    in_use,
    v1_claims,
)
from allocation.engine.scheduling.v1_deadlines import Deadlines
from allocation.engine.v1 import (
    NOT_AVAILABLE,
    AllocationError,
    Allocator,
    UnschedulableError,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Node
    from allocation.engine.state import ClusterState

__all__ = ["V1Scheduling", "v1_claims"]

class V1Scheduling:
    """The scheduler's v1 half: an allocator over the state's slices and classes."""

    def __init__(self, quiet: Quiet | None = None) -> None:
        self.quiet = quiet if quiet is not None else Quiet()
        self.source = v1_book.AllocatorSource()
        self._deadlines = Deadlines()
        self._has_classes: bool | None = None
        # Per pass, by pod signature (v1_views.signature): where the last identical pod was placed
        # (the nodes before it refused it and only fill up during a pass), and the refusal
        # of one that fit nowhere. Like the seed's PlacementCache.
        self._placed: dict[tuple, int] = {}
        self._pool_keys: dict[str, tuple] = {}
        self._node_docs: dict[int, tuple] = {}
        # the memo calls back weakly: no cycle, so a scheduler nothing uses is freed by
        # reference counting (a console's baseline is frozen: docs/scenarios.md)
        node_state = weakref.WeakMethod(self._node_state)
        self._memo = v1_explain.RequestMemo(lambda *args: node_state()(*args),
                                            v1_views.same_node_state)
        self.failures = v1_failures.Failures(self.source, self._memo)

    def begin(self) -> None:
        """A new scheduler round: the book is synchronised again before the first v1 pod.

        The failures (``v1_failures``) are kept for one settle's rounds
        (:meth:`begin_settle`): between rounds other controllers change a node's answer only
        through what ``Failures.unchanged`` reads (released capacity and new nodes move the epoch,
        allocations the book's version; binds and scale-ups record Events), so the pending
        pods visited again are answered without a scan of every node or a rendering."""
        self.source.begin()
        self._has_classes = None
        self._placed = {}
        self._pool_keys: dict[str, tuple] = {}  # per round: node -> (node, its pools' keys)
        self._node_docs: dict[int, tuple] = {}  # per round: id(node) -> (node, its view)
        self._memo.entries = {}  # per round, as the answers it complements

    def begin_settle(self) -> None:
        """A new settle: the state may have been changed by anyone since the last round
        (a kept pass's writes, a caller's edits), so no failure is reused."""
        self.failures.begin_settle()

    def node_doc(self, node: Node) -> dict:
        """``v1_views.node_doc(node)``, made once per pass and node object (a changed node
        is another object; the view shares the node's labels and status, never copies)."""
        # by id, the node kept alive with its view (an id is its own): no name read per call
        known = self._node_docs.get(id(node))
        if known is None or known[0] is not node:
            known = self._node_docs[id(node)] = (node, v1_views.node_doc(node))
        return known[1]

    def claims(self, state: ClusterState, pod: Pod) -> PodClaimsV1 | None:
        """The pod's v1 claims (``v1_claims``), or None when the pod is the seed
        scheduler's. A pod without claims is the v1 scheduler's when DRA may serve its
        extended resources (the profile's DRAExtendedResource and a DeviceClass exist)."""
        if pod.claims:
            return v1_claims(state, pod)
        if self._has_classes is None:
            self._has_classes = next(state.of_kind(DeviceClass), None) is not None
        if self._has_classes and v1_extended.wanted(self.profile(state), pod):
            return PodClaimsV1()
        return None

    def next_wakeup(self, state: ClusterState) -> datetime | None:
        """When the first wait for binding conditions times out, if any."""
        # kept between passes: no walk of every claim (scheduling/v1_deadlines.py)
        return self._deadlines.earliest(state)

    def pod(self, state: ClusterState, pod: Pod, resolved: PodClaimsV1) -> bool:
        """One scheduling attempt (or, for a bound pod, allocation on its node); whether
        anything changed.

        Returns:
            True when the pod was bound or its claims allocated or reserved.
        """
        allocator = self._ready(state)
        total = len(state.node_order)
        # (a pod without the status has none: most pods, so no lookup)
        extended = v1_extended.existing_claim(state, pod) \
            if pod.extended_resource_claim_status else None
        found = [*resolved.claims] if extended is None else [*resolved.claims, extended]
        if resolved.error is None and in_use(found, pod) is not None:
            resolved = PodClaimsV1(error=IN_USE)
        if resolved.error is not None:
            return binding.mark_unschedulable(
                state, pod, f"0/{total} nodes are available: {resolved.error}.", {})
        if pod.node_name:  # bound in the input: no extended-resource claim is made for it
            if all(c.allocated and pod.meta.uid in c.reserved_pod_uids for c in found):
                # nothing to do (every bound pod, once a pass has placed it): no views
                self.quiet.remember(pod, [c.key for c in found])
                return False
            attempt = v1_views.PodAttempt.of(found)
            attempt.check_capacity = False
            return self._bound(state, allocator, pod, attempt)
        attempt = v1_views.PodAttempt.of(found)
        if extended is None:
            attempt.extended = v1_extended.wanted(allocator.profile, pod)
        key = v1_views.signature(pod, attempt)
        failed = self.failures.kept.get(key)  # (a key None is never kept)
        if failed is not None and failed.seen == self.failures.unchanged(state):
            # an identical pod found no node earlier in this pass, and nothing changed since
            return self.failures.fail_again(state, allocator, pod, found, key, failed.failure)
        # an identical pod failed since the last release (the epoch): this one fits nowhere
        # either, so one scan from the first node gives the counts (no shortened scan first)
        same_epoch = failed is not None and failed.seen[0] == state.epoch
        start = 0 if same_epoch else self._placed.get(key, 0)
        # that failure's answer per node, reused for a node whose state is the same
        prior = failed.answers if same_epoch else {}
        answers: dict | None = {} if key is not None else None
        counts: dict[str, int] = {}  # a plain dict: made for every pod, most fit at once
        details = []
        not_available: list[str] = []  # nodes where an allocated claim is unavailable
        # by index from ``start``: neither islice (it steps over the skipped names one by
        # one, and the skip grows with the nodes filled) nor a slice (a copy of the rest
        # of the node list per pod, though the first node tried usually takes it)
        order, first = state.node_order, start
        if pod.nominated_node_name in state.nodes:  # waiting there for binding conditions
            order = [pod.nominated_node_name, *(n for n in order[start:]
                                                 if n != pod.nominated_node_name)]
            first = 0
        offset = start - first  # ``index`` counts from ``start`` in either order
        try:
            for position in range(first, len(order)):
                name, index = order[position], position + offset
                # a refused node's state is taken once the scan fails (a refusal changes
                # nothing, so it is the same then), unless a prior answer needs it now
                before = prior.get(name)
                seen = None if before is None else self._node_state(state, allocator, name)
                if before is not None and v1_views.same_node_state(before[0], seen):
                    refusal = before[1]
                else:
                    refusal = v1_place.try_node(self, state, allocator, pod,
                                                state.nodes[name], attempt)
                if refusal is None:
                    if key is not None:
                        self._placed[key] = index
                    self._remember_placed(state, pod, found, bool(attempt.extended))
                    return True
                if refusal is v1_place.WAITING:
                    return False
                if answers is not None:  # (read only when the scan fails: Failures.fail)
                    answers[name] = (seen, refusal)
                if refusal == NOT_AVAILABLE:  # (read only when the scan fails: PostFilter)
                    not_available.append(name)
                counts[refusal] = counts.get(refusal, 0) + 1
                if len(details) < MAX_DETAIL_NODES:
                    details.append({"node": name, "reason": refusal})
        except (AllocationError, UnschedulableError) as error:
            return v1_explain.mark_failed(state, allocator, pod, found, error, name,
                                          details, total)
        except v1_place.PreBindFailed as failed:
            return binding.mark_unschedulable(state, pod, f"{v1_prebind.PREBIND_ERROR}"
                                              f"{failed}", {}, SCHEDULER_ERROR) or True
        if start:  # the nodes skipped must be counted too: scan them all once
            del self._placed[key]
            return self.pod(state, pod, resolved)
        if answers:
            answers = {name: (seen or self._node_state(state, allocator, name), refusal)
                       for name, (seen, refusal) in answers.items()}
        # the pod's own claims: its extended-resource claim is not PostFilter's here
        freed = not_available and v1_postfilter.deallocate_one(
            self, state, pod, resolved.claims,
            [self.node_doc(state.nodes[n]) for n in not_available],
            allocator.profile.binding_and_status)
        return self.failures.fail(state, allocator, pod, found, key, summary(counts, total),
                                  details, answers) or bool(freed)

    def _remember_placed(self, state: ClusterState, pod: Pod,
                         found: list[ResourceClaimV1], extended: bool) -> None:
        """What the next visit of ``pod``, placed just now, would find: bound, every claim
        (its extended-resource claim too, made by the placement when the attempt had
        ``extended`` resources) allocated and reserved for it, nothing to do (the bound
        branch of :meth:`pod`). It is known from the next pass unless the pod or a claim
        changes meanwhile (``Quiet.remember_after``), so a large cluster's bound pods are
        not visited a second time."""
        bound = state.objects.get(pod.key)
        if not isinstance(bound, Pod) or not bound.node_name:
            return
        keys = [c.key for c in found]
        if extended:  # else none was made (an existing one is in ``found``)
            claim = v1_extended.existing_claim(state, bound)
            if claim is not None and claim.key not in keys:
                keys.append(claim.key)
        uid, objects = bound.meta.uid, state.objects
        for key in keys:
            claim = objects.get(key)
            if (not isinstance(claim, ResourceClaimV1) or not claim.allocated
                    or uid not in claim.reserved_pod_uids):
                return  # the next visit has work (or a refusal) to do
        self.quiet.remember_after(state, bound, keys)

    def _node_state(self, state: ClusterState, allocator: Allocator, name: str) -> tuple:
        """What a node's answer to a pod (of one signature, nothing allocated) depends on
        within an epoch: the node object (replaced when changed), its usage (replaced by
        every charge), and the book's version of each pool it sees (counters and capacity
        are pool-wide)."""
        node = state.nodes[name]
        known = self._pool_keys.get(name)
        if known is None or known[0] is not node:
            known = (node, tuple(p.key for p in allocator.pools_for(self.node_doc(node))))
            self._pool_keys[name] = known
        versions = allocator.book.pool_version
        return (node, state.usage.get(name), tuple([versions.get(k, 0) for k in known[1]]))

    def try_nodes(self, state: ClusterState, pod: Pod, nodes: list[Node],
                  claims: list[ResourceClaimV1]) -> tuple[str | None, Counter[str]]:
        """Place ``pod`` on the first of ``nodes`` that takes it, as :meth:`pod` does
        (allocate, reserve, bind or wait for binding conditions there): for callers that
        choose the nodes (the autoscaler's what-if, docs/autoscaling.md). Call
        :meth:`begin` first when allocations may have changed.

        Returns:
            the node's name (None: no node) and how many nodes refused for each reason.

        Raises:
            AllocationError, UnschedulableError: fatal for the pod's scheduling attempt.
        """
        allocator = self._ready(state)
        extended = v1_extended.existing_claim(state, pod)
        found = [*claims, *([extended] if extended is not None else [])]
        attempt = v1_views.PodAttempt.of(found)
        if extended is None:
            attempt.extended = v1_extended.wanted(self.profile(state), pod)
        counts: Counter[str] = Counter()
        for node in nodes:
            try:
                refusal = v1_place.try_node(self, state, allocator, pod, node, attempt)
            except v1_place.PreBindFailed as failed:
                refusal = f"{v1_prebind.PREBIND_ERROR}{failed}"
            if refusal is None or refusal is v1_place.WAITING:
                return node.name, counts
            counts[refusal] += 1
        return None, counts

    def _bound(self, state: ClusterState, allocator: Allocator, pod: Pod,
               attempt: v1_views.PodAttempt) -> bool:
        claims = attempt.claims  # not all allocated and reserved for the pod (pod())
        node = state.nodes.get(pod.node_name)
        if node is None:
            return binding.mark_unschedulable(state, pod, "node not found", {})
        try:
            refusal = v1_place.try_node(self, state, allocator, pod, node, attempt)
        except (AllocationError, UnschedulableError, v1_place.PreBindFailed) as error:
            refusal = str(error)
        if refusal is None or refusal is v1_place.WAITING:
            return refusal is None
        return binding.mark_unschedulable(
            state, pod, f"pod is bound to {node.name}, where its claims cannot be "
            f"allocated: {refusal}", v1_explain.detail(
                state, allocator, claims, [{"node": node.name, "reason": refusal}], 1))

    def profile(self, state: ClusterState):
        """The state's Kubernetes profile (the newest release's without one)."""
        return v1_pools.state_profile(state)

    def forget_placements(self) -> None:
        """Devices were freed within the pass: no identical pod's node or failure holds."""
        self._placed = {}
        self.failures.forget()

    def _ready(self, state: ClusterState) -> Allocator:
        """The allocator (``AllocatorSource.ready``), built for the state's profile
        (``allocator.profile`` is :meth:`profile`'s answer): once synchronised in a pass,
        the same one without asking (per pod)."""
        allocator = self.source.synced
        if allocator is not None:
            return allocator
        return self.source.ready(state, self.profile(state))

    @property
    def allocator(self) -> Allocator | None:
        """The current allocator (None before the first v1 pod), whose counters benchmarks read."""
        return self.source.allocator

