"""A scenario's plan as a ``kubectl apply``-ready manifest (docs/live-cluster.md, "Plans
back to the cluster").

Of the documents a scenario adds or changes, the objects a cluster's users write themselves
(Pods, ResourceClaims, ResourceClaimTemplates, ProvisioningRequests, DeviceClasses) are
written at their newest API version (resource.k8s.io/v1, autoscaling.x-k8s.io/v1) without
what the API server or controllers set: ``status``, and the server-set metadata (``uid``,
``resourceVersion``, ``creationTimestamp``, ``managedFields``, ``generation``...), owner
references (they name objects by uid), and the planner's own annotations. What the scenario
deletes cannot be said by ``kubectl apply`` and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from allocation.engine import kinds
from allocation.engine.constants import PLANNER_GROUP, RESOURCE_GROUP
from allocation.engine.manifests.v1_convert import prepare
from allocation.engine.objects.meta import json_copy
from allocation.engine.v1 import make_profile

__all__ = ["APPLY_KINDS", "SERVER_METADATA", "applyable"]

APPLY_KINDS = frozenset({kinds.POD.name, kinds.RESOURCE_CLAIM_V1.name,
                         kinds.RESOURCE_CLAIM_TEMPLATE_V1.name,
                         kinds.PROVISIONING_REQUEST.name, kinds.DEVICE_CLASS.name})
"""The kinds a plan hands back to the cluster."""

SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields",
                   "generation", "selfLink", "deletionTimestamp",
                   "deletionGracePeriodSeconds", "ownerReferences")
"""Metadata the API server sets (or that names objects by uid): never in a manifest."""

_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_APPLIED_SPECS = {kinds.POD, kinds.PROVISIONING_REQUEST, *kinds.V1_KINDS}


def applyable(documents: Iterable[dict]) -> list[dict]:
    """The user objects among ``documents`` as ``kubectl apply`` takes them (copies, in
    order); other kinds, the seed (v1alpha2) DRA kinds and vendor objects are left out.

    Returns:
        The cleaned documents.
    """
    out = []
    for document in documents:
        spec = kinds.lookup(document.get("apiVersion", ""), document.get("kind", ""))
        if spec is None or spec.name not in APPLY_KINDS or spec not in _APPLIED_SPECS:
            continue
        out.append(_clean(document, spec))
    return out


def _clean(document: dict, spec: kinds.KindSpec) -> dict:
    if spec.group == RESOURCE_GROUP and document["apiVersion"] != spec.preferred_version:
        document = prepare(document, make_profile()).data
    doc = json_copy(document)
    doc["apiVersion"] = spec.preferred_version
    doc.pop("status", None)
    metadata = doc.get("metadata") or {}
    for name in SERVER_METADATA:
        metadata.pop(name, None)
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items()
                   if k not in _SERVER_ANNOTATIONS
                   and not k.split("/")[0].endswith(PLANNER_GROUP)}
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    if metadata.get("name"):
        metadata.pop("generateName", None)
    return doc
