"""Stored ResourceClaims of ``resource.k8s.io/v1`` (docs/v1.md).

A separate table from the seed's ``ResourceClaim`` (other columns, another schema), but one
identity: a kind, namespace and name hold one claim of either version, as in a cluster and
in the engine's state (``docs/v1.md``, "The console").
"""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.engine.v1.results import allocated_node_name
from allocation.models.base import StoredObject, list_column
from allocation.models.claim import claim_status

__all__ = ["ResourceClaimV1"]


class ResourceClaimV1(StoredObject):
    """A v1 claim; ``node_name`` is the node of a node-local allocation."""

    KIND_SPEC = kinds.RESOURCE_CLAIM_V1
    FILTERS = {"node": ("node_name", "exact"), "driver": ("drivers", "contains"),
               "class": ("classes", "contains"), "namespace": ("namespace", "exact"),
               "status": ("status", "exact")}

    classes = models.TextField(blank=True, help_text="DeviceClass names as ,a,b,")
    drivers = models.TextField(blank=True, help_text="Drivers of the allocation as ,a,b,")
    node_name = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        verbose_name = "resource claim (v1)"
        verbose_name_plural = "resource claims (v1)"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"classes": list_column(obj.class_names),
                "drivers": list_column(r.get("driver") for r in obj.results),
                "node_name": allocated_node_name(obj.allocation) or "",
                "status": claim_status(obj)}
