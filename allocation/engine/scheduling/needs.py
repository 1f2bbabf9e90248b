"""What one pod needs right now: its claims by state, or why it cannot be scheduled at all.

Claims allocated already pin the pod to their nodes; pending structured claims are searched
on each node; claims of a control-plane controller (KEP-3063) are handed to whoever
negotiates (:class:`Blocker`). Pods that ask for the same things get the same
``signature``, which keys the placement cache (:mod:`.cache`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from allocation.engine.allocator import Want
from allocation.engine.objects import ResourceClaimV1
from allocation.engine.resolve import ClaimPlan, plan_claim
from allocation.engine.scheduling.cache import pod_signature
from allocation.engine.scheduling.reasons import missing_controller

if TYPE_CHECKING:
    from allocation.engine.objects import Pod, ResourceClaim
    from allocation.engine.state import ClusterState

__all__ = ["PodNeeds", "Controlled", "Blocker", "Plans", "pod_needs", "no_negotiation"]

Blocker = Callable[["ResourceClaim", ClaimPlan], "str | None"]
"""Why an unallocated claim of a control-plane controller cannot be negotiated, or None."""


class Controlled(NamedTuple):
    """A pod's claim that a control-plane controller must allocate."""

    pod_claim: str
    claim: ResourceClaim
    plan: ClaimPlan


@dataclass
class PodNeeds:
    """What one pod needs right now: claims by state, or why it cannot be scheduled at all."""

    allocated: list[ResourceClaim] = field(default_factory=list)
    pending: list[tuple[ResourceClaim, ClaimPlan]] = field(default_factory=list)
    controlled: list[Controlled] = field(default_factory=list)
    error: str | None = None
    signature: tuple = ()
    _wants: tuple[int, list[Want]] | None = field(default=None, init=False, repr=False,
                                                  compare=False)

    @property
    def wants(self) -> list[Want]:
        """One want per request of each pending claim, in order: made once per pending
        list (the search and the commit of a pod both read it; read it, never change it)."""
        made = self._wants
        if made is None or made[0] != len(self.pending):
            made = self._wants = (len(self.pending), [
                Want(claim.ref, request) for claim, plan in self.pending
                for request in plan.requests])
        return made[1]

    @property
    def pending_refs(self) -> list[str]:
        """The ``namespace/name`` of each pending claim: the names the explanation's request
        entries give (``renaming``)."""
        return [claim.ref for claim, _plan in self.pending]


class Plans:
    """Claim plans shared by claims with the same class and parameters, until ``clear``."""

    def __init__(self) -> None:
        self._plans: dict[tuple, ClaimPlan] = {}

    def clear(self) -> None:
        self._plans = {}

    def of(self, state: ClusterState, claim: ResourceClaim) -> ClaimPlan:
        """The claim's plan, computed once per class and parameters."""
        ref = claim.parameters_ref
        key = (claim.namespace, claim.class_name, tuple(sorted(ref.items())) if ref else None)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = plan_claim(state, claim)
        return plan


def no_negotiation(claim: ResourceClaim, plan: ClaimPlan) -> str:
    """The blocker when nothing negotiates: every controller-managed claim is blocked."""
    return missing_controller(claim, plan.resource_class.name, plan.controller)


def pod_needs(state: ClusterState, pod: Pod, plans: Plans, blocker: Blocker) -> PodNeeds:
    """What ``pod`` needs, with ``error`` set to the first reason it cannot be scheduled.

    Returns:
        the pod's needs; never raises for missing or conflicting objects.
    """
    needs = PodNeeds()
    signature = pod_signature(pod)
    namespace, pod_name = pod.meta.namespace, pod.meta.name  # read once: asked per pod
    for pod_claim in pod.claims:
        name = pod.claim_name(pod_claim)
        claim = state.get("ResourceClaim", namespace, name)
        if claim is None:
            if pod_claim.template_name and state.get(
                    "ResourceClaimTemplate", namespace, pod_claim.template_name) is None:
                needs.error = (f"resourceclaimtemplate \"{namespace}/"
                               f"{pod_claim.template_name}\" not found")
            else:
                needs.error = f"resourceclaim \"{namespace}/{name}\" not found"
            return needs
        if isinstance(claim, ResourceClaimV1):  # scheduling/v1.py and autoscaler/v1pods.py
            needs.error = (f"resourceclaim \"{claim.ref}\" is a resource.k8s.io/v1 claim, "
                           "which control-plane negotiation does not handle")
            return needs
        if pod_claim.template_name and claim.owner_pod != pod_name:
            needs.error = (f"resourceclaim \"{claim.ref}\" was not created for the pod "
                           "(it is not owned by it)")
            return needs
        if claim.pending_reason:
            needs.error = claim.pending_reason
            return needs
        if claim.allocation is not None:
            if claim.deallocation_requested:
                needs.error = f"resourceclaim \"{claim.ref}\" is being deallocated"
                return needs
            reserved = claim.reserved_pods()
            if not claim.allocation.shareable and reserved and pod_name not in reserved:
                needs.error = (f"resourceclaim \"{claim.ref}\" is in use by pod "
                               f"\"{reserved[0]}\" and is not shareable")
                return needs
            needs.allocated.append(claim)
            signature.append(("allocated", claim.ref, claim.allocation.node_name))
            continue
        plan = plans.of(state, claim)
        if plan.error:
            needs.error = f"resourceclaim \"{claim.ref}\": {plan.error}"
            return needs
        if plan.controller:
            needs.error = blocker(claim, plan)
            if needs.error:
                return needs
            needs.controlled.append(Controlled(pod_claim.name, claim, plan))
            signature.append(("controlled", claim.ref))
            continue
        needs.pending.append((claim, plan))
        # a template's claim passed the owner check above: it is the pod's
        owned = pod_claim.template_name or claim.owner_pod == pod_name
        signature.append(("template", plan.key) if owned else ("claim", claim.ref))
    needs.signature = tuple(signature)
    return needs
