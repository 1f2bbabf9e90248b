"""Extended resources backed by DRA in v1 scheduling (KEP-5004; spec section 3.9;
docs/v1.md, "Simulating v1").

With DRAExtendedResource on, a container's extended resource (``example.com/gpu: 2``) on a
node without allocatable of it is served through a DeviceClass that maps it
(``v1/extended.py``): the scheduler allocates one claim per pod,
``<pod>-extended-resources-<suffix>``, with one request per (container, resource), owned by
the pod and annotated ``resource.kubernetes.io/extended-resource-claim: "true"``, and
records it in ``pod.status.extendedResourceClaimStatus``. A node whose allocatable has the
resource serves it through its device plugin (counted against that allocatable by
``fit.node_refusal``, as NodeResourcesFit); a node that has neither gives
``Insufficient <resource>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from allocation.engine.objects import ResourceClaimV1, stable_uid
from allocation.engine.objects.requests import container_requests, is_sidecar
from allocation.engine.scheduling.v1_views import node_doc
from allocation.engine.v1.extended import (
    extended_resource_names,
    extended_resource_requests,
)
from allocation.engine.v1.templates import (
    EXTENDED_CLAIM_ANNOTATION,
    extended_claim_name,
    pod_owner_reference,
)
from allocation.engine.v1_pools import state_profile

IN_MEMORY_NAME = "<extended-resources>"
"""The name of the extended-resource claim while the scheduler allocates it (upstream's
``specialClaimInMemName``: not a valid name, so it is no real claim's)."""

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Profile

__all__ = ["IN_MEMORY_NAME", "wanted", "existing_claim", "node_requests", "claim_view",
           "claims_by_node", "make_claim", "claim_status"]


def wanted(profile: Profile, pod: Pod) -> list[str]:
    """The extended resources the pod requests, when DRAExtendedResource is on (none
    without a ``domain/name`` request: most pods, known from their reading)."""
    if not (profile.extended_resource and pod.domain_requests):
        return []
    return extended_resource_names(pod.raw)


def existing_claim(state: ClusterState, pod: Pod) -> ResourceClaimV1 | None:
    """The claim ``pod.status.extendedResourceClaimStatus`` names, if it exists."""
    status = pod.extended_resource_claim_status or {}
    name = status.get("resourceClaimName")
    found = state.get("ResourceClaim", pod.namespace, name) if name else None
    return found if isinstance(found, ResourceClaimV1) else None


def node_requests(pod: Pod, node_doc: dict, classes: list[dict]) -> list[dict]:
    """The requests of the pod's extended-resource claim on this node (empty: nothing goes
    through DRA here). A node that serves a resource neither way is NodeResourcesFit's to
    refuse (``fit.other_shortfalls``), before this is asked."""
    return extended_resource_requests(pod.raw, node_doc, classes) or []


def claim_view(state: ClusterState, pod: Pod, requests: list[dict]) -> dict:
    """The v1 claim document the pod's extended-resource claim will be (not added yet),
    named as upstream's Filter names it in memory (:data:`IN_MEMORY_NAME`, so an
    allocator error names that claim as kube-scheduler's does); its uid is already the
    one of the name it will get (``shareID`` derives from it)."""
    name = _final_name(state, pod)
    pod_doc = {"metadata": {"name": pod.name, "uid": pod.meta.uid}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": IN_MEMORY_NAME,
                         "generateName": f"{pod.name}-extended-resources-",
                         "namespace": pod.namespace,
                         "uid": stable_uid("ResourceClaim", pod.namespace, name),
                         "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
                         "ownerReferences": [pod_owner_reference(
                             pod_doc, state_profile(state).block_owner_deletion)]},
            "spec": {"devices": {"requests": requests}}}


def claims_by_node(state: ClusterState, pod: Pod, profile: Profile, classes: list[dict]
                   ) -> Callable[[str], dict | None] | None:
    """For explaining a pod that is not placed: per node name, the claim its extended
    resources served by DRA would get there (:func:`claim_view`; None: none there). None
    when the pod asks none, or has its claim already (then it is one of its claims)."""
    if existing_claim(state, pod) is not None or not wanted(profile, pod):
        return None

    def view(name: str) -> dict | None:
        requests = node_requests(pod, node_doc(state.nodes[name]), classes)
        return claim_view(state, pod, requests) if requests else None
    return view


def _final_name(state: ClusterState, pod: Pod) -> str:
    return extended_claim_name(pod.name, pod.meta.uid or "",
                               lambda n: state.get("ResourceClaim", pod.namespace, n)
                               is not None)


def make_claim(state: ClusterState, pod: Pod, view: dict) -> ResourceClaimV1:
    """Add the claim of :func:`claim_view` to the state under its generated name (PreBind
    creates it: ``<pod>-extended-resources-<suffix>``)."""
    claim = ResourceClaimV1({**view, "metadata": {**view["metadata"],
                                                  "name": _final_name(state, pod)}})
    state.add(claim)
    return claim


def claim_status(pod: Pod, claim_name: str, requests: list[dict]) -> dict:
    """``pod.status.extendedResourceClaimStatus``: the claim and, per request, its
    container and resource, in upstream's order (``createRequestsAndMappings``, 1.35+):
    by resource name, the long-lived containers (sidecars and regular ones) before the
    other init containers, each group in container order."""
    spec = pod.raw.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    containers = inits + list(spec.get("containers") or ())
    entries = []
    for request in requests:
        _, i, _, j = request["name"].split("-")
        index = int(i)
        container = containers[index]
        resource = sorted(container_requests(container))[int(j)]
        short_lived = index < len(inits) and not is_sidecar(container)
        entries.append(((resource, short_lived, index),
                        {"containerName": container["name"], "resourceName": resource,
                         "requestName": request["name"]}))
    entries.sort(key=lambda entry: entry[0])
    return {"requestMappings": [mapping for _, mapping in entries],
            "resourceClaimName": claim_name}
