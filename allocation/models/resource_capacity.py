"""Stored NodeResourceCapacities (``resource.k8s.io/v1alpha2``, numeric parameters)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["NodeResourceCapacity"]


class NodeResourceCapacity(StoredObject):
    """Numeric capacity instances one driver publishes on one node."""

    KIND_SPEC = kinds.NODE_RESOURCE_CAPACITY
    FILTERS = {"node": ("node_name", "exact"), "driver": ("driver_name", "exact")}

    node_name = models.CharField(max_length=253, db_index=True)
    driver_name = models.CharField(max_length=253, db_index=True)

    class Meta(StoredObject.Meta):
        verbose_name_plural = "node resource capacities"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"node_name": obj.node_name, "driver_name": obj.driver_name}
