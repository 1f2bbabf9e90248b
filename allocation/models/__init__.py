"""The console's models: one per kind of the manifest contract, plus bookkeeping.

Every kind's model keeps the object's whole document (see :mod:`allocation.models.base`);
only services write them (``allocation.services``).
"""

from __future__ import annotations

from allocation.models.base import StoredObject, canonical_json, list_column
from allocation.models.claim import ResourceClaim
from allocation.models.claim_parameters import ResourceClaimParameters
from allocation.models.claim_template import ResourceClaimTemplate
from allocation.models.class_parameters import ResourceClassParameters
from allocation.models.cluster import Cluster, WorkerLease
from allocation.models.driver_simulation import DriverSimulation
from allocation.models.event import Event
from allocation.models.node import Node
from allocation.models.node_group import NodeGroup
from allocation.models.pod import Pod
from allocation.models.pod_template import PodTemplate
from allocation.models.provisioning_request import ProvisioningRequest
from allocation.models.resource_capacity import NodeResourceCapacity
from allocation.models.resource_class import ResourceClass
from allocation.models.resource_slice import NodeResourceSlice
from allocation.models.scheduling_context import PodSchedulingContext
from allocation.models.vendor import VendorObject

__all__ = [
    "StoredObject", "canonical_json", "list_column", "Cluster", "WorkerLease", "Node", "Pod",
    "PodTemplate", "NodeResourceSlice", "NodeResourceCapacity", "ResourceClass",
    "ResourceClassParameters", "ResourceClaimParameters", "ResourceClaim",
    "ResourceClaimTemplate", "PodSchedulingContext", "ProvisioningRequest", "NodeGroup",
    "DriverSimulation", "VendorObject", "Event", "KIND_MODELS", "OBJECT_MODELS",
]

KIND_MODELS: dict[str, type[StoredObject]] = {m.KIND: m for m in (
    Node, Pod, PodTemplate, NodeResourceSlice, NodeResourceCapacity, ResourceClass,
    ResourceClassParameters, ResourceClaimParameters, ResourceClaim, ResourceClaimTemplate,
    PodSchedulingContext, ProvisioningRequest, NodeGroup, DriverSimulation)}
"""The model of each kind the engine types; vendor objects and Events have their own."""

OBJECT_MODELS: tuple[type[StoredObject], ...] = (*KIND_MODELS.values(), VendorObject)
"""Every model holding cluster objects (Events aside)."""
