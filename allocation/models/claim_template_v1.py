"""Stored ResourceClaimTemplates of ``resource.k8s.io/v1`` (docs/v1.md; one identity with
the seed's templates, as for claims: ``allocation/models/claim_v1.py``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject, list_column

__all__ = ["ResourceClaimTemplateV1"]


class ResourceClaimTemplateV1(StoredObject):
    """A v1 template pods make their own claims from."""

    KIND_SPEC = kinds.RESOURCE_CLAIM_TEMPLATE_V1
    FILTERS = {"class": ("classes", "contains"), "namespace": ("namespace", "exact")}

    classes = models.TextField(blank=True, help_text="DeviceClass names as ,a,b,")

    class Meta(StoredObject.Meta):
        verbose_name = "resource claim template (v1)"
        verbose_name_plural = "resource claim templates (v1)"

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"classes": list_column(obj.class_names)}
