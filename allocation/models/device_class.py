"""Stored DeviceClasses (``resource.k8s.io/v1``; docs/v1.md)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["DeviceClass"]


class DeviceClass(StoredObject):
    """A v1 class of devices: CEL selectors, config, an extended resource name."""

    KIND_SPEC = kinds.DEVICE_CLASS
    FILTERS = {"class": ("name", "exact")}

    extended_resource_name = models.CharField(max_length=253, blank=True)

    class Meta(StoredObject.Meta):
        verbose_name_plural = "device classes"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"extended_resource_name": obj.extended_resource_name or ""}
