"""Stored ResourceSlices (``resource.k8s.io/v1``; docs/v1.md)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["ResourceSlice"]


class ResourceSlice(StoredObject):
    """One slice of a driver's pool; ``node_name`` only for a node-local slice
    (``spec.nodeName``): network-attached slices select their nodes."""

    KIND_SPEC = kinds.RESOURCE_SLICE
    FILTERS = {"node": ("node_name", "exact"), "driver": ("driver_name", "exact")}

    node_name = models.CharField(max_length=253, blank=True, db_index=True)
    driver_name = models.CharField(max_length=253, db_index=True)
    pool_name = models.CharField(max_length=253, blank=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"node_name": obj.node_name or "", "driver_name": obj.driver,
                "pool_name": obj.pool_name}
