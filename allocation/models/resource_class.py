"""Stored ResourceClasses (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["ResourceClass"]


class ResourceClass(StoredObject):
    """A class of devices; ``mode`` is structured, numeric or controller."""

    KIND_SPEC = kinds.RESOURCE_CLASS
    FILTERS = {"driver": ("driver_name", "exact"), "class": ("name", "exact")}

    driver_name = models.CharField(max_length=253, db_index=True)
    mode = models.CharField(max_length=20, blank=True)

    class Meta(StoredObject.Meta):
        verbose_name_plural = "resource classes"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"driver_name": obj.driver_name, "mode": obj.mode}
