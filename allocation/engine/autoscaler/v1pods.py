"""The autoscaler's what-if for pods with resource.k8s.io/v1 claims (docs/autoscaling.md).

Each simulation runs the scheduler's own v1 half (``scheduling/v1.py``) on its snapshot:
a ``V1Scheduling`` of its own, so an ``allocation.engine.v1.Allocator`` of its own over the
snapshot's slices (a would-be node's included) and classes, whose book is synchronised
from the snapshot's claims. The real cluster's allocator and book are never touched, and a
pod placed here is a pod the scheduler would place the same way.

A pod added to a simulation gets the claims of its v1 ResourceClaimTemplate entries as
upstream's resourceclaim controller makes them (``v1/templates.claim_from_template``),
recorded in ``status.resourceClaimStatuses``, so a ProvisioningRequest's pods are
evaluated with the claims they would get.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from allocation.engine.constants import CLAIMS_COMPONENT, V1_CLAIM_FINALIZER
from allocation.engine.objects import Pod, ResourceClaimTemplateV1, ResourceClaimV1
from allocation.engine.scheduling.reasons import summary
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.v1 import AllocationError, UnschedulableError
from allocation.engine.v1.templates import (
    ClaimNotCreated,
    claim_from_template,
    resolve_claim_name,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Node
    from allocation.engine.state import ClusterState

__all__ = ["V1Pods"]


class V1Pods:
    """Binding, placing and evicting pods with v1 claims on one simulation's state."""

    def __init__(self) -> None:
        self.scheduling = V1Scheduling()

    @staticmethod
    def claims(state: ClusterState, pod: Pod) -> list[ResourceClaimV1 | None] | None:
        """The pod's claims when any is a v1 claim or comes from a v1 template (None for
        one missing or not created), else None: the pod is then the seed paths'. A
        template entry is the claim ``status.resourceClaimStatuses`` records."""
        if not pod.claims:
            return None
        doc = pod.to_manifest()
        found: list[ResourceClaimV1 | None] = []
        v1 = False
        for entry, raw in zip(pod.claims, doc["spec"]["resourceClaims"], strict=True):
            if entry.template_name:
                template = state.get("ResourceClaimTemplate", pod.namespace,
                                     entry.template_name)
                v1 = v1 or isinstance(template, ResourceClaimTemplateV1)
            try:
                name, _owned = resolve_claim_name(doc, raw)
            except (ClaimNotCreated, ValueError):
                name = None
            claim = state.get("ResourceClaim", pod.namespace, name) if name else None
            v1 = v1 or isinstance(claim, ResourceClaimV1)
            found.append(claim if isinstance(claim, ResourceClaimV1) else None)
        return found if v1 else None

    @staticmethod
    def add_pod(state: ClusterState, pod: Pod) -> Pod:
        """Add ``pod`` with the claims of its v1 template entries, recorded in its
        ``status.resourceClaimStatuses`` (a missing template is reported when the pod is
        placed).

        Returns:
            the pod as added (a new object when it got claims).
        """
        state.add(pod)  # gives it its uid, from which the claim names are derived
        doc = pod.to_manifest()
        statuses = []
        for entry in pod.claims:
            template = state.get("ResourceClaimTemplate", pod.namespace,
                                 entry.template_name) if entry.template_name else None
            if not isinstance(template, ResourceClaimTemplateV1):
                continue
            claim = ResourceClaimV1(claim_from_template(
                doc, entry.name, template.to_manifest(),
                lambda n: state.get("ResourceClaim", pod.namespace, n) is not None))
            state.add(claim)
            statuses.append({"name": entry.name, "resourceClaimName": claim.name})
        if not statuses:
            return pod
        doc.setdefault("status", {})["resourceClaimStatuses"] = statuses
        state.remove(pod)
        made = Pod(doc, pod.source)
        state.add(made)
        return made

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
        if claim is not None:
            continue
        if entry.template_name:
            return (f"resourceclaimtemplate \"{pod.namespace}/{entry.template_name}\" not "
                    "found or its claim not created")
        return f"resourceclaim \"{pod.namespace}/{entry.claim_name}\" not found"
    return None
