"""Which resource.k8s.io/v1 claims a pod uses, or why kube-scheduler's DRA PreFilter
refuses it before any node is tried (docs/v1.md, "Simulating v1"; spec section 4).

A pod is the v1 scheduler's when any ``spec.resourceClaims`` entry names a v1 claim or a
v1 ResourceClaimTemplate (``simulation.refuse_unsimulated_v1`` refuses pods mixing v1 and
seed entries). Template entries resolve through ``pod.status.resourceClaimStatuses``
(``v1/templates.resolve_claim_name``), as upstream's ``foreachPodResourceClaim``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from allocation.engine.manifests.v1_names import MAX_RESERVED_FOR
from allocation.engine.objects import ResourceClaimTemplateV1, ResourceClaimV1
from allocation.engine.v1.templates import ClaimNotCreated, not_for_pod, resolve_claim_name

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState

__all__ = ["PodClaimsV1", "IN_USE", "v1_claims", "in_use", "reserve"]

IN_USE = "resourceclaim in use"
"""PreFilter's refusal when an allocated claim already has ``MAX_RESERVED_FOR`` (256)
consumers and the pod is not one of them."""


_V1_CLAIM_KINDS = ResourceClaimV1 | ResourceClaimTemplateV1
"""What a pod's entry must name for the pod to be the v1 scheduler's."""


@dataclass
class PodClaimsV1:
    """A v1 pod's claims in ``spec.resourceClaims`` order (entries needing no claim left
    out), or ``error``: PreFilter's reason for the first entry that cannot be used."""

    claims: list[ResourceClaimV1] = field(default_factory=list)
    error: str | None = None


def _is_v1(state: ClusterState, pod: Pod) -> bool:
    namespace = pod.meta.namespace  # read per entry: once, not per use
    claims = pod.claims
    # A first entry from a v1 template (a v1 cluster's usual pod) answers at once; a seed
    # cluster's pod then meets the shortcut below (no v1 object at all), as before.
    first = claims[0].template_name if claims else None
    if first and isinstance(state.get("ResourceClaimTemplate", namespace, first),
                            ResourceClaimTemplateV1):
        return True
    if not state.has(_V1_CLAIM_KINDS):
        return False  # a seed cluster: no entry can name a v1 claim or template
    for entry in claims:
        if entry.template_name:
            found = state.get("ResourceClaimTemplate", namespace, entry.template_name)
            if isinstance(found, ResourceClaimTemplateV1):
                return True
        if isinstance(state.get("ResourceClaim", namespace, pod.claim_name(entry)),
                      ResourceClaimV1):
            return True
    return False


def v1_claims(state: ClusterState, pod: Pod) -> PodClaimsV1 | None:
    """The pod's v1 claims, or None when the pod is the seed scheduler's.

    Returns:
        The claims, or the first entry's refusal in upstream's words: a template claim not
        created yet, a missing claim, a claim being deleted, a template claim the pod does
        not own.
    """
    if not _is_v1(state, pod):
        return None
    out = PodClaimsV1()
    namespace = pod.meta.namespace
    pod_doc = None  # the view the helpers below read, made only for a refusal
    uid = pod.meta.uid
    for entry in pod.claims:
        name, check_owner = _resolved(pod, entry)
        if name is _UNRESOLVED:  # resolve_claim_name words the refusal
            pod_doc = pod_doc or _pod_doc(pod)
            try:
                name, check_owner = resolve_claim_name(pod_doc, _entry_doc(entry))
            except (ClaimNotCreated, ValueError) as error:
                out.error = str(error)
                return out
        if name is None:
            continue  # no claim needed for this entry
        claim = state.get("ResourceClaim", namespace, name)
        if not isinstance(claim, ResourceClaimV1):
            # The scheduler's claim cache (assumecache.NotFoundError) words it.
            out.error = f'could not find ResourceClaim "{namespace}/{name}"'
            return out
        if claim.meta.deletion_timestamp is not None:
            out.error = f'resourceclaim "{claim.name}" is being deleted'
            return out
        if check_owner and not _controlled_by(claim, uid):
            out.error = not_for_pod(pod_doc or _pod_doc(pod), {"metadata": {
                "name": claim.name, "namespace": claim.namespace,
                "ownerReferences": claim.meta.owner_references}})
            if out.error:
                return out
        out.claims.append(claim)
    return out


def _controlled_by(claim: ResourceClaimV1, uid: str | None) -> bool:
    """Whether an owner reference of ``claim`` with ``controller`` set has ``uid`` (a plain
    loop: asked for every template claim of every pod the v1 scheduler sees)."""
    for ref in claim.meta.owner_references:
        if ref.get("controller") and ref.get("uid") == uid:
            return True
    return False


_UNRESOLVED = object()
"""``_resolved``'s answer when ``resolve_claim_name`` must say why (a refusal)."""


def _resolved(pod: Pod, entry) -> tuple:
    """``resolve_claim_name``'s answer for an entry it resolves (per pod and pass, so
    without building its views), else ``(_UNRESOLVED, False)``."""
    if entry.claim_name is not None:
        return entry.claim_name, False
    if entry.template_name is not None:
        status = pod.claim_status(entry.name)
        if status is not None:
            return status.get("resourceClaimName"), True
    return _UNRESOLVED, False


def _pod_doc(pod: Pod) -> dict:
    return {"metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.meta.uid},
            "status": {"resourceClaimStatuses": pod.resource_claim_statuses}}


def _entry_doc(entry) -> dict:
    return {"name": entry.name, "resourceClaimName": entry.claim_name,
            "resourceClaimTemplateName": entry.template_name}


def in_use(claims: list[ResourceClaimV1], pod: Pod) -> ResourceClaimV1 | None:
    """The first allocated claim that cannot take the pod as another consumer (upstream's
    ``CanBeReserved``: fewer than 256 entries in ``reservedFor``), if any."""
    for claim in claims:
        if (claim.allocated and len(claim.reserved_for) >= MAX_RESERVED_FOR
                and pod.meta.uid not in claim.reserved_pod_uids):
            return claim
    return None


def reserve(state: ClusterState, claim: ResourceClaimV1, pod: Pod, *,
            writable: bool = False) -> None:
    """Add ``pod`` to the claim's ``status.reservedFor`` (once), as the scheduler's Reserve
    does. ``writable``: ``claim`` is this state's writable version already (a claim
    allocated just now), so it is not made writable, and touched, a second time."""
    if pod.meta.uid not in claim.reserved_pod_uids:
        (claim if writable else state.writable(claim)).reserved_for.append(
            {"resource": "pods", "name": pod.name, "uid": pod.meta.uid})
