"""Stored ProvisioningRequests (``autoscaling.x-k8s.io``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["ProvisioningRequest", "provisioning_status"]

# The first condition that is True names the status (upstream's order of finality).
_STATUS_ORDER = ("Failed", "Provisioned", "CapacityAvailable", "BookingExpired", "Accepted")


def provisioning_status(request) -> str:
    """The first True condition of ``_STATUS_ORDER``, ``NotProvisioned`` or ``Pending``."""
    true = {c.get("type") for c in request.conditions if c.get("status") == "True"}
    for type_ in _STATUS_ORDER:
        if type_ in true:
            return type_
    if any(c.get("type") == "Provisioned" and c.get("status") == "False"
           for c in request.conditions):
        return "NotProvisioned"
    return "Pending"


class ProvisioningRequest(StoredObject):
    """A request for capacity; ``class_name`` is its provisioning class as written."""

    KIND_SPEC = kinds.PROVISIONING_REQUEST
    FILTERS = {"class": ("class_name", "exact"), "namespace": ("namespace", "exact"),
               "status": ("status", "exact")}

    class_name = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"class_name": obj.class_name, "status": provisioning_status(obj)}
