"""Stored ResourceClaims (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["ResourceClaim", "claim_status"]


def claim_status(claim) -> str:
    """``DeallocationRequested``, ``Reserved``, ``Allocated`` or ``Pending`` (a v1 claim,
    which has no deallocation request, one of the last three)."""
    if getattr(claim, "deallocation_requested", False):
        return "DeallocationRequested"
    if claim.allocation is not None:
        return "Reserved" if claim.reserved_for else "Allocated"
    return "Pending"


class ResourceClaim(StoredObject):
    """A claim; ``node_name`` is the node of a node-local allocation."""

    KIND_SPEC = kinds.RESOURCE_CLAIM
    FILTERS = {"node": ("node_name", "exact"), "driver": ("driver_name", "exact"),
               "class": ("class_name", "exact"), "namespace": ("namespace", "exact"),
               "status": ("status", "exact")}

    class_name = models.CharField(max_length=253, db_index=True)
    driver_name = models.CharField(max_length=253, blank=True, db_index=True)
    node_name = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        node = obj.allocation.node_name if obj.allocation is not None else None
        return {"class_name": obj.class_name, "driver_name": obj.driver_name or "",
                "node_name": node or "", "status": claim_status(obj)}
