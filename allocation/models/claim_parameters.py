"""Stored ResourceClaimParameters (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject, list_column

__all__ = ["ResourceClaimParameters"]


class ResourceClaimParameters(StoredObject):
    """Per-claim requests (CEL selectors); ``drivers`` as ``,a,b,``."""

    KIND_SPEC = kinds.RESOURCE_CLAIM_PARAMETERS
    FILTERS = {"driver": ("drivers", "contains"), "namespace": ("namespace", "exact")}

    drivers = models.TextField(blank=True)

    class Meta(StoredObject.Meta):
        verbose_name_plural = "resource claim parameters"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"drivers": list_column(r.get("driverName") for r in obj.requests)}
