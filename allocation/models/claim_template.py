"""Stored ResourceClaimTemplates (``resource.k8s.io/v1alpha2``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["ResourceClaimTemplate"]


class ResourceClaimTemplate(StoredObject):
    """A template pods make their own claims from."""

    KIND_SPEC = kinds.RESOURCE_CLAIM_TEMPLATE
    FILTERS = {"class": ("class_name", "exact"), "namespace": ("namespace", "exact")}

    class_name = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"class_name": obj.claim_spec.get("resourceClassName", "")}
