"""Stored NodeResourceSlices (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["NodeResourceSlice"]


class NodeResourceSlice(StoredObject):
    """Devices one driver publishes on one node; ``model`` is the structured model's name."""

    KIND_SPEC = kinds.NODE_RESOURCE_SLICE
    FILTERS = {"node": ("node_name", "exact"), "driver": ("driver_name", "exact")}

    node_name = models.CharField(max_length=253, db_index=True)
    driver_name = models.CharField(max_length=253, db_index=True)
    model = models.CharField(max_length=100, blank=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"node_name": obj.node_name, "driver_name": obj.driver_name,
                "model": obj.model_name}
