"""One v1 pod tried on one node (docs/v1.md, "Simulating v1"): the node's own checks, the
allocator's answer for the pod's unallocated claims, then allocation, reservation, the wait
for binding conditions (``v1_prebind.py``) and the bind, as kube-scheduler's DRA plugin's
Filter, Reserve, PreBind and Bind do (KEP-4381). ``V1Scheduling`` (``v1.py``) picks the
nodes and remembers the answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.constants import V1_CLAIM_FINALIZER
from allocation.engine.scheduling import (
    binding,
    fit,
    v1_extended,
    v1_postfilter,
    v1_prebind,
    v1_views,
)
from allocation.engine.scheduling.needs import PodNeeds
from allocation.engine.scheduling.reasons import R_CLAIMS
from allocation.engine.scheduling.v1_claims import reserve
from allocation.engine.v1 import NOT_AVAILABLE

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaimV1
    from allocation.engine.scheduling.v1 import V1Scheduling
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Allocator

__all__ = ["WAITING", "PreBindFailed", "try_node"]

_NO_NEEDS = PodNeeds()
"""The needs ``fit.node_refusal`` is given for a v1 pod: none (it only reads them)."""


class PreBindFailed(Exception):
    """The wait for binding conditions ended in failure (the message says why)."""


WAITING = "waiting for binding conditions"
"""``try_node``'s answer when the pod waits on the node (compared by identity)."""


def try_node(scheduling: V1Scheduling, state: ClusterState, allocator: Allocator, pod: Pod,
         node: Node, attempt: v1_views.PodAttempt) -> str | None:
    """Place ``pod`` on ``node`` (allocate, reserve, wait for binding conditions, bind)
    or say why not; :data:`WAITING` when it waits there.

    Raises:
        PreBindFailed: the wait ended with a failure condition or the timeout; the pod's
            reservations were dropped (Unreserve).
    """
    refusal = fit.node_refusal(state, pod, node, _NO_NEEDS, attempt.check_capacity)
    if refusal:
        return refusal
    if attempt.search is not None and not attempt.extended and attempt.all_pending:
        # nothing allocated, no extended claim: the allocator's answer comes next, and
        # for a node with nothing free it is known without a view or a search
        refusal = attempt.search.known(node.name)
        if refusal is not None:
            return refusal
    node_doc = scheduling.node_doc(node)
    claims = attempt.claims
    # upstream's Filter runs the allocator before it refuses a node where an allocated
    # claim is unavailable (its node selector excludes the node, or its binding failed):
    # a fatal error or "cannot allocate" comes first
    unavailable = not attempt.all_pending and any(
        v1_postfilter.unavailable_on(state, pod, c, node_doc,
                                     allocator.profile.binding_and_status)
        for c in claims if c.allocated)
    docs, extended = attempt.docs, None
    if attempt.extended:
        # a resource served neither by a device plugin nor by DRA here was refused above
        # (NodeResourcesFit: fit.other_shortfalls), so this is never None
        requests = v1_extended.node_requests(pod, node_doc, scheduling.source.class_docs)
        if requests:
            extended = v1_extended.claim_view(state, pod, requests)
            docs = [*docs, extended]
    # nothing allocated (a view per claim): every claim is pending, as usual
    pending = claims if attempt.all_pending else attempt.pending
    if docs:
        if extended is None:
            if attempt.search is None:
                attempt.search = allocator.attempt(docs)
            outcome = attempt.search.allocate(node_doc)
        else:
            outcome = allocator.allocate(node_doc, docs)
        if outcome.allocations is None:
            return outcome.reason or R_CLAIMS
        if unavailable:
            return NOT_AVAILABLE
        allocations = outcome.allocations  # the allocator's new list, read only here
        if extended is not None:
            made = v1_extended.make_claim(state, pod, extended)
            pending = [*pending, made]  # not attempt.claims itself (``pending`` may be)
            claims = [*claims, made]
            state.writable(pod).extended_resource_claim_status = (
                v1_extended.claim_status(pod, made.name,
                                         extended["spec"]["devices"]["requests"]))
        binding = allocator.profile.binding_and_status  # once, not per claim
        conditions = False  # whether an allocation made now has binding conditions
        for claim, allocation in zip(pending, allocations, strict=True):
            conditions |= _allocate(scheduling, state, claim, allocation, binding, pod)
        # every claim allocated now, none with binding conditions: none waits (the usual
        # pod's, known without reading its claims' results again)
        none_wait = not conditions and len(pending) == len(claims)
        if len(pending) < len(claims):  # the claims allocated before are reserved too
            allocated_now = {id(c) for c in pending}
            for claim in claims:
                if id(claim) not in allocated_now:
                    _reserve_allocated(state, claim, pod, binding)
    elif unavailable:
        return NOT_AVAILABLE
    else:
        none_wait = False
        binding = allocator.profile.binding_and_status
        for claim in claims:
            _reserve_allocated(state, claim, pod, binding)
    return _prebind(scheduling, state, pod, node, claims, none_wait)

def _prebind(scheduling: V1Scheduling, state: ClusterState, pod: Pod, node: Node,
         claims: list[ResourceClaimV1], none_wait: bool = False) -> str | None:
    """Bind the pod, or wait for binding conditions (``v1_prebind.py``); ``none_wait``:
    the caller knows no claim has binding conditions."""
    objects = state.objects  # by key: a claim's key is its ResourceClaim key
    waiting = () if none_wait else [
        c for c in [objects.get(c.key) or c for c in claims] if v1_prebind.waits(c)]
    if waiting and scheduling.profile(state).binding_and_status:
        verdict, why = v1_prebind.verdict(state, waiting)
        if verdict == "failed":
            # Unreserve: the reservations go, the allocations stay (the next attempt's
            # PostFilter deallocates a claim no other pod holds: ``v1_postfilter.py``)
            for claim in claims:
                claim = objects.get(claim.key) or claim
                if pod.meta.uid in claim.reserved_pod_uids:
                    v1_prebind.unreserve(state, claim, pod)
            state.writable(pod).nominated_node_name = None
            raise PreBindFailed(why)
        if verdict == "waiting":
            if pod.nominated_node_name != node.name:
                state.writable(pod).nominated_node_name = node.name
                return None  # progress: the pod now waits there
            return WAITING
    if pod.nominated_node_name:
        state.writable(pod).nominated_node_name = None
    binding.bind(state, pod, node)
    return None

def _reserve_allocated(state: ClusterState, claim: ResourceClaimV1, pod: Pod,
                       binding: bool) -> None:
    """Reserve a claim allocated before for ``pod``; with the binding gates (``binding``)
    stamp it first if it has no ``allocationTimestamp``, as ``bindClaim`` does. A claim
    reserved for the pod already is left as it is: PreBind calls ``bindClaim`` only for a
    claim not yet reserved for the pod (``IsReservedForPod``)."""
    stamped = v1_prebind.stamp_reserved(state, claim) if (
        binding and pod.meta.uid not in claim.reserved_pod_uids) else None
    if stamped is not None:
        reserve(state, stamped, pod, writable=True)
    else:
        reserve(state, claim, pod)


def _allocate(scheduling: V1Scheduling, state: ClusterState, claim: ResourceClaimV1,
          allocation: dict, binding: bool, pod: Pod) -> bool:
    """Write ``allocation`` on the claim (stamped when ``binding``: the profile's binding
    gates, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus), book it and reserve it for
    ``pod`` (Reserve: the claim made writable once, as ``binding.commit`` does).

    Returns:
        Whether it has binding conditions (the claim waits for them).
    """
    claim = state.writable(claim)
    stamped = binding and v1_prebind.stamp(state, allocation)
    claim.allocation = allocation
    if V1_CLAIM_FINALIZER not in claim.meta.finalizers:
        claim.meta.finalizers.append(V1_CLAIM_FINALIZER)
    scheduling.source.commit(claim.ref, allocation)
    reserve(state, claim, pod, writable=True)
    return stamped
