"""Stored Events (``v1``): imported ones and those the worker records."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["Event"]


class Event(StoredObject):
    """One Event; ``position`` orders Events among themselves (after every object)."""

    KIND_SPEC = kinds.EVENT
    FILTERS = {"namespace": ("namespace", "exact"), "kind": ("involved_kind", "exact"),
               "name": ("involved_name", "exact"), "status": ("type", "exact")}

    involved_kind = models.CharField(max_length=253, blank=True, db_index=True)
    involved_namespace = models.CharField(max_length=253, blank=True)
    involved_name = models.CharField(max_length=253, blank=True, db_index=True)
    type = models.CharField(max_length=32, blank=True)
    reason = models.CharField(max_length=128, blank=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        raw = obj.raw
        involved = raw.get("involvedObject") or raw.get("regarding") or {}
        if not isinstance(involved, dict):
            involved = {}

        def text(value) -> str:
            return value[:253] if isinstance(value, str) else ""

        return {"involved_kind": text(involved.get("kind")),
                "involved_namespace": text(involved.get("namespace")),
                "involved_name": text(involved.get("name")),
                "type": text(raw.get("type"))[:32], "reason": text(raw.get("reason"))[:128]}
