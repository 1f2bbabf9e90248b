"""An allocated claim's availability on a node, and kube-scheduler's DRA PostFilter for a
v1 pod no node took (docs/v1.md, "Simulating v1").

Filter finds an allocated claim of the pod unavailable on a node when the allocation's node
selector excludes the node, or (with the binding gates) when its binding failed or timed
out (``v1_prebind.unavailable``); that node is then refused with ``resourceclaim not
available on the node`` (``unavailable_on``: the scheduler's Filter and the pod page's
checks). When every node refused the pod, PostFilter deallocates one such
claim that no other pod holds (reserved for nobody, or for this pod alone), so that a later
attempt allocates it anew: a claim allocated for a node that is gone, or whose device
failed to attach, does not keep its pod pending for ever.

Upstream picks the claim by Go map order (at random); the planner takes the first in the
pod's order. Its extended-resource claim is left to ``v1_extended`` (upstream deletes a
real one here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.claims_v1 import deallocate_v1
from allocation.engine.scheduling import v1_prebind
from allocation.engine.v1 import allocated_claim_fits

if TYPE_CHECKING:
    from allocation.engine.objects import Pod, ResourceClaimV1
    from allocation.engine.scheduling.v1 import V1Scheduling
    from allocation.engine.state import ClusterState

__all__ = ["binding_unready", "deallocate_one", "unavailable_on"]


def unavailable_on(state: ClusterState, pod: Pod, claim: ResourceClaimV1, node: dict,
                   binding: bool) -> bool:
    """Filter's check of one allocated ``claim`` of ``pod`` on ``node`` (a node document):
    unavailable when its allocation's node selector excludes the node, or when its binding
    is unready (``binding_unready``: on every node alike)."""
    if not allocated_claim_fits({"status": {"allocation": claim.allocation}}, node):
        return True
    return binding_unready(state, pod, claim, binding)


def binding_unready(state: ClusterState, pod: Pod, claim: ResourceClaimV1,
                    binding: bool) -> bool:
    """Whether Filter finds the allocated ``claim`` of ``pod`` unavailable on any node for
    its binding: with the binding gates (``binding``), one that failed or timed out
    (``v1_prebind.unavailable``). A claim the pod holds while it waits on its node is
    PreBind's to judge (``v1_place._prebind``): upstream does not filter a pod in its
    binding cycle."""
    if not binding or (pod.nominated_node_name and pod.meta.uid in claim.reserved_pod_uids):
        return False
    return v1_prebind.unavailable(state, claim)


def deallocate_one(scheduling: V1Scheduling, state: ClusterState, pod: Pod,
                   claims: list[ResourceClaimV1], refused_here: list[dict],
                   binding: bool) -> ResourceClaimV1 | None:
    """PostFilter: deallocate the first of ``claims`` that was unavailable on a node of
    ``refused_here`` (node documents refused with ``resourceclaim not available on the
    node``) and that no other pod holds. ``binding``: the binding gates are on.

    Returns:
        The claim deallocated, or None (upstream: ``still not schedulable``).
    """
    if not refused_here:
        return None
    uid = pod.meta.uid
    for claim in claims:
        if not claim.allocated:
            continue
        reserved = claim.reserved_for  # any consumer, not only pods, as upstream
        if reserved and not (len(reserved) == 1 and reserved[0].get("uid") == uid):
            continue
        if not any(unavailable_on(state, pod, claim, node, binding) for node in refused_here):
            continue
        claim = state.writable(claim)
        claim.reserved_for = []
        deallocate_v1(state, claim)
        scheduling.forget_placements()  # its devices are free again
        scheduling.source.release(claim.ref)
        return claim
    return None
