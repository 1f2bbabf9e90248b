"""The autoscaler's what-if for pods with resource.k8s.io/v1 claims (docs/autoscaling.md).

Each simulation runs the scheduler's own v1 half (``scheduling/v1.py``) on its snapshot:
a ``V1Scheduling`` of its own, so an ``allocation.engine.v1.Allocator`` of its own over the
snapshot's slices (a would-be node's included) and classes, whose book is synchronised
from the snapshot's claims. The real cluster's allocator and book are never touched, and a
pod placed here is a pod the scheduler would place the same way. A pod's claims are
resolved, and refused before any node, as the scheduler does (``scheduling/v1_claims.py``).

A pod added to a simulation gets the claims of its v1 ResourceClaimTemplate entries as
upstream's resourceclaim controller makes them (``v1/templates.claim_from_template``),
recorded in ``status.resourceClaimStatuses``, so a ProvisioningRequest's pods are
evaluated with the claims they would get.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.claims_v1 import deallocate_v1
from allocation.engine.constants import CLAIMS_COMPONENT
from allocation.engine.objects import ResourceClaimTemplateV1, ResourceClaimV1
from allocation.engine.scheduling.reasons import FILTER_ERROR, summary
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.scheduling.v1_claims import IN_USE, PodClaimsV1, in_use
from allocation.engine.v1 import AllocationError, UnschedulableError
from allocation.engine.v1.templates import claim_from_template
from allocation.engine.v1_pools import state_profile

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod
    from allocation.engine.state import ClusterState

__all__ = ["V1Pods"]


class V1Pods:
    """Binding, placing and evicting pods with v1 claims on one simulation's state."""

    def __init__(self) -> None:
        self.scheduling = V1Scheduling()

    def claims(self, state: ClusterState, pod: Pod) -> PodClaimsV1 | None:
        """The pod's v1 claims or PreFilter's refusal, as the scheduler resolves them
        (``V1Scheduling.claims``: a pod whose extended resources DRA may serve is v1's
        too); None when the pod is the seed paths'."""
        resolved = self.scheduling.claims(state, pod)
        if resolved is not None and resolved.error is None \
                and in_use(resolved.claims, pod) is not None:
            return PodClaimsV1(error=IN_USE)
        return resolved

    @staticmethod
    def add_pod(state: ClusterState, pod: Pod) -> None:
        """Add ``pod`` with the claims of its v1 template entries, recorded in its
        ``status.resourceClaimStatuses`` (a missing template is reported when the pod is
        placed)."""
        state.add(pod)  # gives it its uid, from which the claim names are derived
        namespace = pod.namespace
        doc = {"metadata": {"name": pod.name, "namespace": namespace, "uid": pod.meta.uid}}
        for entry in pod.claims:
            template = state.get("ResourceClaimTemplate", namespace,
                                 entry.template_name) if entry.template_name else None
            if not isinstance(template, ResourceClaimTemplateV1):
                continue
            claim = ResourceClaimV1(claim_from_template(
                doc, entry.name, template.to_manifest(),
                lambda n: state.get("ResourceClaim", namespace, n) is not None,
                state_profile(state).block_owner_deletion))
            state.add(claim)
            pod = state.writable(pod)
            pod.resource_claim_statuses.append({"name": entry.name,
                                                "resourceClaimName": claim.name})

    def bind(self, state: ClusterState, pod: Pod, node: Node, resolved: PodClaimsV1
             ) -> str | None:
        """Bind ``pod`` to ``node``, allocating its claims there; why not, or None."""
        if resolved.error is not None:
            return resolved.error
        placed, counts, fatal = self._attempt(state, pod, [node], resolved)
        if placed is not None:
            return None
        if isinstance(fatal, AllocationError):
            return f"{FILTER_ERROR}{fatal}"
        return str(fatal) if fatal else next(iter(counts))

    def place(self, state: ClusterState, pod: Pod, resolved: PodClaimsV1
              ) -> tuple[str | None, str | None]:
        """Bind ``pod`` to the first node in name order that takes it, as the scheduler
        does.

        Returns:
            ``(node name, None)``, or ``(None, why)`` in the scheduler's words.
        """
        total = len(state.node_order)
        if resolved.error is not None:
            return None, f"0/{total} nodes are available: {resolved.error}"
        nodes = [state.nodes[name] for name in state.node_order]
        placed, counts, fatal = self._attempt(state, pod, nodes, resolved)
        if placed is not None:
            return placed, None
        if isinstance(fatal, AllocationError):
            return None, f"{FILTER_ERROR}{fatal}"
        if fatal is not None:
            return None, f"0/{total} nodes are available: {fatal}"
        return None, summary(counts, total, end="")

    def _attempt(self, state: ClusterState, pod: Pod, nodes: list[Node],
                 resolved: PodClaimsV1) -> tuple[str | None, Counter[str], Exception | None]:
        """``(node taken, refusal counts, the error that ended the attempt)``: an
        AllocationError is kube-scheduler's SchedulerError, an UnschedulableError (a
        missing DeviceClass) holds for every node."""
        self.scheduling.begin()
        try:
            placed, counts = self.scheduling.try_nodes(state, pod, nodes, resolved.claims)
        except (AllocationError, UnschedulableError) as error:
            return None, Counter(), error
        return placed, counts, None

    @staticmethod
    def evict(state: ClusterState, pod: Pod, resolved: PodClaimsV1) -> list[str]:
        """Drop the pod's reservations; a claim no other pod reserves is deallocated
        (``claims_v1.deallocate_v1``, as the claim controller does).

        Returns:
            the references of the claims deallocated.
        """
        released = []
        for claim in resolved.claims:
            if pod.meta.uid not in claim.reserved_pod_uids:
                continue
            claim = state.writable(claim)
            claim.reserved_for = [r for r in claim.reserved_for if r.get("uid") != pod.meta.uid]
            if claim.reserved_for or claim.allocation is None:
                continue
            claim = deallocate_v1(state, claim)
            state.events.record(claim, "Normal", "Deallocated",
                                f"pod {pod.ref} evicted in simulation",
                                component=CLAIMS_COMPONENT)
            released.append(claim.ref)
        return released
