"""What each list shows before filtering: its rows, in their default order, and its title.

Shared by the list pages (``allocation/views/lists.py``) and the REST API's filtered lists.
"""

from __future__ import annotations

from django.db.models import QuerySet

from allocation.models import ClaimSummary, Event, NodeSummary, PodSummary

__all__ = ["LIST_TITLES", "list_queryset"]

LIST_TITLES = {"nodes": "Nodes", "pods": "Pods", "claims": "Claims", "events": "Events"}


def list_queryset(kind: str) -> QuerySet:
    """The rows of list ``kind``: nodes, pods and claims in document order, Events newest
    first."""
    if kind == "events":
        return Event.objects.order_by("-position")
    model = {"nodes": NodeSummary, "pods": PodSummary, "claims": ClaimSummary}[kind]
    return model.objects.order_by("position")
