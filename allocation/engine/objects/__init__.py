"""Typed engine objects for every kind the planner reads and writes."""

from __future__ import annotations

from allocation.engine.kinds import KindSpec
from allocation.engine.objects.core import Node, OpaqueObject, Pod, PodClaim, PodTemplate
from allocation.engine.objects.meta import (
    KObject,
    ObjectKey,
    ObjectMeta,
    Source,
    stable_uid,
    unique_derived_uids,
)
from allocation.engine.objects.planner import DriverSimulation, NodeGroup, ProvisioningRequest
from allocation.engine.objects.resource import (
    Allocation,
    ClassMode,
    NodeResourceCapacity,
    NodeResourceSlice,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClaimTemplate,
    ResourceClass,
    ResourceClassParameters,
)
from allocation.engine.objects.v1 import (
    DeviceClass,
    DeviceRequest,
    ResourceClaimTemplateV1,
    ResourceClaimV1,
    ResourceSlice,
)

__all__ = [
    "KObject", "ObjectKey", "ObjectMeta", "Source", "stable_uid", "unique_derived_uids",
    "Node", "Pod", "PodClaim",
    "PodTemplate", "OpaqueObject", "NodeResourceSlice", "NodeResourceCapacity",
    "ResourceClass", "ResourceClassParameters", "ResourceClaimParameters", "ResourceClaim",
    "ResourceClaimTemplate", "PodSchedulingContext", "Allocation", "ProvisioningRequest",
    "NodeGroup", "DriverSimulation", "KIND_CLASSES", "ClassMode", "DeviceClass",
    "ResourceSlice", "ResourceClaimV1", "ResourceClaimTemplateV1", "DeviceRequest",
]

KIND_CLASSES: dict[KindSpec, type[KObject]] = {cls.kind_spec: cls for cls in (
    Node, Pod, PodTemplate, NodeResourceSlice, NodeResourceCapacity, ResourceClass,
    ResourceClassParameters, ResourceClaimParameters, ResourceClaim, ResourceClaimTemplate,
    PodSchedulingContext, ProvisioningRequest, NodeGroup, DriverSimulation,
    DeviceClass, ResourceSlice, ResourceClaimV1, ResourceClaimTemplateV1)}
"""The engine class of each kind spec; kinds without one (Event, Namespace) load as
OpaqueObject."""
