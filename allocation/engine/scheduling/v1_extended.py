"""Extended resources backed by DRA in v1 scheduling (KEP-5004; spec section 3.9;
docs/v1.md, "Simulating v1").

With DRAExtendedResource on, a container's extended resource (``example.com/gpu: 2``) on a
node without allocatable of it is served through a DeviceClass that maps it
(``v1/extended.py``): the scheduler allocates one claim per pod,
``<pod>-extended-resources-<suffix>``, with one request per (container, resource), owned by
the pod and annotated ``resource.kubernetes.io/extended-resource-claim: "true"``, and
records it in ``pod.status.extendedResourceClaimStatus``. A node whose allocatable has the
resource serves it through its device plugin (the planner does not count device-plugin
resources); a node that has neither gives ``Insufficient <resource>``, as NodeResourcesFit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from allocation.engine.objects import ResourceClaimV1, stable_uid
from allocation.engine.v1.extended import (
    extended_resource_names,
    extended_resource_requests,
    extended_resource_route,
)
from allocation.engine.v1.templates import (
    EXTENDED_CLAIM_ANNOTATION,
    extended_claim_name,
    pod_owner_reference,
)

if TYPE_CHECKING:
    from allocation.engine.objects import Pod
    from allocation.engine.state import ClusterState
    from allocation.engine.v1 import Profile

__all__ = ["wanted", "existing_claim", "node_requests", "claim_view", "make_claim",
           "claim_status"]


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


def node_requests(pod: Pod, names: list[str], node_doc: dict, classes: list[dict]
                  ) -> tuple[list[dict], str | None]:
    """The requests of the pod's extended-resource claim on this node (empty: nothing goes
    through DRA here), or the node's refusal ``Insufficient <resource>``."""
    for name in names:
        if extended_resource_route(name, node_doc, classes)[0] == "none":
            return [], f"Insufficient {name}"
    return extended_resource_requests(pod.raw, node_doc, classes) or [], None


def claim_view(state: ClusterState, pod: Pod, requests: list[dict]) -> dict:
    """The v1 claim document the pod's extended-resource claim will be (not added yet)."""
    name = extended_claim_name(pod.name, pod.meta.uid or "",
                               lambda n: state.get("ResourceClaim", pod.namespace, n)
                               is not None)
    pod_doc = {"metadata": {"name": pod.name, "uid": pod.meta.uid}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "generateName": f"{pod.name}-extended-resources-",
                         "namespace": pod.namespace,
                         "uid": stable_uid("ResourceClaim", pod.namespace, name),
                         "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
                         "ownerReferences": [pod_owner_reference(pod_doc)]},
            "spec": {"devices": {"requests": requests}}}


def make_claim(state: ClusterState, view: dict) -> ResourceClaimV1:
    """Add the claim of :func:`claim_view` to the state."""
    claim = ResourceClaimV1(view)
    state.add(claim)
    return claim


def claim_status(pod: Pod, claim_name: str, requests: list[dict]) -> dict:
    """``pod.status.extendedResourceClaimStatus``: the claim and, per request (sorted by
    request name, as upstream), its container and resource."""
    spec = pod.raw.get("spec") or {}
    containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
    mappings = []
    for request in requests:
        _, i, _, j = request["name"].split("-")
        container = containers[int(i)]
        resource = sorted((container.get("resources") or {}).get("requests") or {})[int(j)]
        mappings.append({"containerName": container["name"], "resourceName": resource,
                         "requestName": request["name"]})
    mappings.sort(key=lambda m: m["requestName"])
    return {"requestMappings": mappings, "resourceClaimName": claim_name}
