"""Stored ResourceClassParameters (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject, list_column

__all__ = ["ResourceClassParameters"]


class ResourceClassParameters(StoredObject):
    """Class filters (CEL selectors) and vendor parameters; ``drivers`` as ``,a,b,``."""

    KIND_SPEC = kinds.RESOURCE_CLASS_PARAMETERS
    FILTERS = {"driver": ("drivers", "contains")}

    drivers = models.TextField(blank=True)

    class Meta(StoredObject.Meta):
        verbose_name_plural = "resource class parameters"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"drivers": list_column(f.get("driverName") for f in obj.filters)}
