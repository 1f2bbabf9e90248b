"""Stored Events (``v1``): imported ones and those the worker records."""

from __future__ import annotations

import hashlib

from django.db import models

from allocation.engine import kinds
from allocation.engine.events import series_key
from allocation.models.base import StoredObject, canonical_json

__all__ = ["Event", "series_hash"]


def series_hash(event: dict) -> str:
    """The indexed form of an Event's series (``engine.events.series_key``): the SHA-256 of
    its canonical JSON text (strings only, so orjson writes it where it can: a pass hashes
    every Event it records)."""
    key = canonical_json(list(series_key(event)), parsed=True)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Event(StoredObject):
    """One Event series; ``position`` orders Events among themselves (after every object).

    A repeat moves the series to the end of the order and refreshes ``updated_at``, from
    which the TTL counts (``DRA_EVENT_TTL``, docs/console.md, "Events").
    """

    KIND_SPEC = kinds.EVENT
    FILTERS = {"namespace": ("namespace", "exact"), "kind": ("involved_kind", "exact"),
               "name": ("involved_name", "exact"), "status": ("type", "exact")}

    involved_kind = models.CharField(max_length=253, blank=True, db_index=True)
    involved_namespace = models.CharField(max_length=253, blank=True)
    involved_name = models.CharField(max_length=253, blank=True, db_index=True)
    type = models.CharField(max_length=32, blank=True)
    reason = models.CharField(max_length=128, blank=True)
    series = models.CharField(max_length=64, blank=True, db_index=True,
                              help_text="Hash of what makes repeats one Event (engine.events).")
    count = models.PositiveIntegerField(default=1)

    class Meta(StoredObject.Meta):
        indexes = [models.Index(fields=["updated_at"], name="allocation_event_updated")]

    @classmethod
    def columns_for(cls, obj, series: str | None = None) -> dict:
        """The indexed columns of ``obj``'s row; ``series``: its :func:`series_hash`, when
        the caller has it already (the worker hashes each Event it records once)."""
        raw = obj.raw
        involved = raw.get("involvedObject") or raw.get("regarding") or {}
        if not isinstance(involved, dict):
            involved = {}

        def text(value) -> str:
            return value[:253] if isinstance(value, str) else ""

        count = raw.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            count = 1
        return {"series": series_hash(raw) if series is None else series,
                "count": min(count, 2**31 - 1),
                "involved_kind": text(involved.get("kind")),
                "involved_namespace": text(involved.get("namespace")),
                "involved_name": text(involved.get("name")),
                "type": text(raw.get("type"))[:32], "reason": text(raw.get("reason"))[:128]}
