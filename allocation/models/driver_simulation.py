"""Stored DriverSimulations (``draplanner.io/v1alpha1``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["DriverSimulation"]


class DriverSimulation(StoredObject):
    """A simulated control-plane driver; ``driver_name`` is its controllerName."""

    KIND_SPEC = kinds.DRIVER_SIMULATION
    FILTERS = {"driver": ("driver_name", "exact")}

    driver_name = models.CharField(max_length=253, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"driver_name": obj.controller_name}
