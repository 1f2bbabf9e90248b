"""The console's models: one per kind of the manifest contract, plus bookkeeping.

Every kind's model keeps the object's whole document (see :mod:`allocation.models.base`);
only services write them (``allocation.services``).
"""

from __future__ import annotations

from allocation.engine.kinds import KindSpec
from allocation.models.base import StoredObject, canonical_json, list_column
from allocation.models.change_log import Change
from allocation.models.claim import ResourceClaim
from allocation.models.claim_parameters import ResourceClaimParameters
from allocation.models.claim_template import ResourceClaimTemplate
from allocation.models.claim_template_v1 import ResourceClaimTemplateV1
from allocation.models.claim_v1 import ResourceClaimV1
from allocation.models.class_parameters import ResourceClassParameters
from allocation.models.cluster import Cluster, WorkerLease
from allocation.models.device_class import DeviceClass
from allocation.models.driver_simulation import DriverSimulation
from allocation.models.event import Event
from allocation.models.manifest_source import ManifestSource
from allocation.models.node import Node
from allocation.models.node_group import NodeGroup
from allocation.models.pod import Pod
from allocation.models.pod_template import PodTemplate
from allocation.models.provisioning_request import ProvisioningRequest
from allocation.models.read_model import (
    READ_MODELS,
    ClaimSummary,
    DeviceUsage,
    NodeSummary,
    PodSummary,
)
from allocation.models.resource_capacity import NodeResourceCapacity
from allocation.models.resource_class import ResourceClass
from allocation.models.resource_slice import NodeResourceSlice
from allocation.models.resource_slice_v1 import ResourceSlice
from allocation.models.scheduling_context import PodSchedulingContext
from allocation.models.vendor import VendorObject

__all__ = [
    "ManifestSource",
    "StoredObject", "canonical_json", "list_column", "Change", "Cluster", "WorkerLease", "Node",
    "Pod",
    "PodTemplate", "NodeResourceSlice", "NodeResourceCapacity", "ResourceClass",
    "ResourceClassParameters", "ResourceClaimParameters", "ResourceClaim",
    "ResourceClaimTemplate", "PodSchedulingContext", "ProvisioningRequest", "NodeGroup",
    "DriverSimulation", "VendorObject", "Event", "DeviceClass", "ResourceSlice",
    "ResourceClaimV1", "ResourceClaimTemplateV1", "KIND_MODELS", "OBJECT_MODELS",
    "models_of_kind", "NodeSummary", "DeviceUsage", "PodSummary", "ClaimSummary",
    "READ_MODELS",
]

KIND_MODELS: dict[KindSpec, type[StoredObject]] = {m.KIND_SPEC: m for m in (
    Node, Pod, PodTemplate, NodeResourceSlice, NodeResourceCapacity, ResourceClass,
    ResourceClassParameters, ResourceClaimParameters, ResourceClaim, ResourceClaimTemplate,
    PodSchedulingContext, ProvisioningRequest, NodeGroup, DriverSimulation,
    DeviceClass, ResourceSlice, ResourceClaimV1, ResourceClaimTemplateV1)}
"""The model of each kind spec the engine types (``allocation/engine/kinds.py``); vendor
objects and Events have their own. The seed and the v1 ResourceClaim (and template) have a
model each but one identity (kind, namespace, name): docs/v1.md, "The console"."""

OBJECT_MODELS: tuple[type[StoredObject], ...] = (*KIND_MODELS.values(), VendorObject)
"""Every model holding cluster objects (Events aside)."""


def models_of_kind(kind: str) -> list[type[StoredObject]]:
    """The models of every version of the kind called ``kind`` (two for ResourceClaim and
    ResourceClaimTemplate: seed and v1), which share one identity."""
    return [m for m in KIND_MODELS.values() if kind == m.KIND]
