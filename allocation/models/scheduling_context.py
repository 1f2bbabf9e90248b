"""Stored PodSchedulingContexts (``resource.k8s.io/v1alpha2``, written by the planner)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.models.base import StoredObject

__all__ = ["PodSchedulingContext"]


class PodSchedulingContext(StoredObject):
    """The scheduler's side of a control-plane negotiation; ``node_name`` = selectedNode."""

    KIND_SPEC = kinds.POD_SCHEDULING_CONTEXT
    FILTERS = {"node": ("node_name", "exact"), "namespace": ("namespace", "exact")}

    node_name = models.CharField(max_length=253, blank=True, db_index=True)

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        return {"node_name": obj.selected_node or ""}
