"""The autoscaler's what-if for pods with resource.k8s.io/v1 claims (docs/autoscaling.md).

Each simulation runs the scheduler's own v1 half (``scheduling/v1.py``) on its snapshot:
a ``V1Scheduling`` of its own, so an ``allocation.engine.v1.Allocator`` of its own over the
snapshot's slices (a would-be node's included) and classes, whose book is synchronised
from the snapshot's claims. The real cluster's allocator and book are never touched, and a
pod placed here is a pod the scheduler would place the same way.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.constants import CLAIMS_COMPONENT, V1_CLAIM_FINALIZER
from allocation.engine.scheduling.reasons import summary
from allocation.engine.scheduling.v1 import V1Scheduling, v1_claims
from allocation.engine.v1 import AllocationError, UnschedulableError

if TYPE_CHECKING:
    from allocation.engine.objects import Node, Pod, ResourceClaimV1
    from allocation.engine.state import ClusterState

__all__ = ["V1Pods"]


class V1Pods:
    """Binding, placing and evicting pods with v1 claims on one simulation's state."""

    def __init__(self) -> None:
        self.scheduling = V1Scheduling()

    @staticmethod
    def claims(state: ClusterState, pod: Pod) -> list[ResourceClaimV1 | None] | None:
        """The pod's claims when they are v1 claims (None for a missing one), else None."""
        return v1_claims(state, pod) if pod.claims else None

    def bind(self, state: ClusterState, pod: Pod, node: Node,
             claims: list[ResourceClaimV1 | None]) -> str | None:
        """Bind ``pod`` to ``node``, allocating its claims there; why not, or None."""
        missing = _missing(pod, claims)
        if missing:
            return missing
        self.scheduling.begin()
        try:
            return self.scheduling.try_node(state, pod, node, [c for c in claims if c])
        except (AllocationError, UnschedulableError) as error:
            return str(error)

    def place(self, state: ClusterState, pod: Pod, claims: list[ResourceClaimV1 | None]
              ) -> tuple[str | None, str | None]:
        """Bind ``pod`` to the first node in name order that takes it, as the scheduler
        does.

        Returns:
            ``(node name, None)``, or ``(None, why)`` in kube-scheduler's summary form.
        """
        total = len(state.node_order)
        missing = _missing(pod, claims)
        if missing:
            return None, f"0/{total} nodes are available: {missing}"
        found = [c for c in claims if c]
        self.scheduling.begin()
        counts: Counter[str] = Counter()
        for name in state.node_order:
            try:
                refusal = self.scheduling.try_node(state, pod, state.nodes[name], found)
            except (AllocationError, UnschedulableError) as error:
                return None, f"0/{total} nodes are available: {error}"
            if refusal is None:
                return name, None
            counts[refusal] += 1
        return None, summary(counts, total, end="")

    @staticmethod
    def evict(state: ClusterState, pod: Pod, claims: list[ResourceClaimV1 | None]
              ) -> list[str]:
        """Drop the pod's reservations; a claim no other pod reserves is deallocated (its
        allocation and delete-protection finalizer go, docs/v1.md section 4).

        Returns:
            the references of the claims deallocated.
        """
        released = []
        for claim in claims:
            if claim is None or pod.meta.uid not in claim.reserved_pod_uids:
                continue
            claim = state.writable(claim)
            claim.reserved_for = [r for r in claim.reserved_for if r.get("uid") != pod.meta.uid]
            if claim.reserved_for or claim.allocation is None:
                continue
            claim.allocation = None
            claim.meta.finalizers = [f for f in claim.meta.finalizers
                                     if f != V1_CLAIM_FINALIZER]
            state.events.record(claim, "Normal", "Deallocated",
                                f"pod {pod.ref} evicted in simulation",
                                component=CLAIMS_COMPONENT)
            released.append(claim.ref)
        return released


def _missing(pod: Pod, claims: list) -> str | None:
    for entry, claim in zip(pod.claims, claims, strict=True):
        if claim is None:
            return f"resourceclaim \"{pod.namespace}/{pod.claim_name(entry)}\" not found"
    return None
