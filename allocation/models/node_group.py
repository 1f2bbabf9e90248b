"""Stored NodeGroups (``draplanner.io/v1alpha1``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["NodeGroup"]


class NodeGroup(StoredObject):
    """A Cluster Autoscaler node group; ``size`` is how many nodes it has added."""

    KIND_SPEC = kinds.NODE_GROUP
    FILTERS = {"node": ("nodes", "contains")}

    size = models.IntegerField(default=0)
    nodes = models.TextField(blank=True, help_text="Node names as ,a,b,")

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        from allocation.models.base import list_column

        return {"size": len(obj.nodes), "nodes": list_column(obj.nodes)}
