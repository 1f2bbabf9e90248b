"""Stored Nodes (``v1``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.models.base import StoredObject

__all__ = ["Node"]


class Node(StoredObject):
    """A cluster node; ``status`` is ``Schedulable`` or ``Unschedulable``."""

    KIND_SPEC = kinds.NODE
    FILTERS = {"node": ("name", "exact"), "status": ("status", "exact")}

    node_group = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"status": "Unschedulable" if obj.unschedulable else "Schedulable",
                "node_group": obj.meta.labels.get(NODE_GROUP_LABEL, "")}
