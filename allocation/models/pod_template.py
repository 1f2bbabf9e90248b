"""Stored PodTemplates (``v1``)."""

from __future__ import annotations

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["PodTemplate"]


class PodTemplate(StoredObject):
    """A pod template, as ProvisioningRequests reference them."""

    KIND_SPEC = kinds.POD_TEMPLATE
    FILTERS = {"namespace": ("namespace", "exact")}

    class Meta(StoredObject.Meta):
        pass
