"""Stored Pods (``v1``)."""

from __future__ import annotations

from django.db import models

from allocation.engine import kinds
from allocation.engine.scheduling.gates import GATED_REASON
from allocation.models.base import StoredObject, list_column

__all__ = ["Pod"]


def pod_status(pod) -> str:
    """``Succeeded``/``Failed``/``Terminating``, ``Scheduled``, ``SchedulingGated`` (as
    ``kubectl get pods`` says of a pod waiting for its gates), ``Unschedulable`` or
    ``Pending``."""
    if pod.phase in ("Succeeded", "Failed"):
        return pod.phase
    if pod.meta.deletion_timestamp:
        return "Terminating"
    if pod.node_name:
        return "Scheduled"
    condition = pod.condition("PodScheduled")
    if condition is not None and condition.get("status") == "False":
        return GATED_REASON if condition.get("reason") == GATED_REASON else "Unschedulable"
    return "Pending"


class Pod(StoredObject):
    """A pod; ``node_name`` is where it runs, ``claims`` the claims its entries name."""

    KIND_SPEC = kinds.POD
    FILTERS = {"node": ("node_name", "exact"), "namespace": ("namespace", "exact"),
               "status": ("status", "exact")}

    node_name = models.CharField(max_length=253, blank=True, db_index=True)
    claims = models.TextField(blank=True, help_text="Claim names as ,a,b,")

    class Meta(StoredObject.Meta):
        pass

    @classmethod
    def columns_for(cls, obj) -> dict:
        names = [obj.claim_name(c) for c in obj.claims]
        return {"node_name": obj.node_name or "", "status": pod_status(obj),
                "claims": list_column(names)}
