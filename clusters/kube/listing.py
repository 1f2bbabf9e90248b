"""Listing every object of a kind, in pages (``limit``/``continue``).

List items come without ``apiVersion`` and ``kind`` (the list carries them); they are set
on each item so it reads as the document ``kubectl get -o yaml`` would print. A
``continue`` token that expired (410 Gone) starts the list over: a consistent snapshot
needs all its pages from one resourceVersion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from allocation.engine.gcpause import paused_gc
from clusters.kube.client import Connection, Gone, SourceError
from clusters.kube.resources import Resource

__all__ = ["Snapshot", "list_all", "PAGE_SIZE"]

PAGE_SIZE = 500
"""Objects per page (kubectl's default chunk size)."""

_RESTARTS = 3
"""How often an expired continue token may restart a list before it is an error."""


@dataclass
class Snapshot:
    """Every object of one resource at one resourceVersion."""

    resource: Resource
    items: list[dict]
    resource_version: str


def list_all(connection: Connection, resource: Resource, page_size: int = PAGE_SIZE,
             progress: Callable[[Resource, int], None] | None = None) -> Snapshot:
    """Every object of ``resource``; ``progress(resource, count so far)`` after each page.

    Raises:
        SourceError (AccessDenied, Gone...): the list failed.
    """
    # A list of a large cluster makes millions of dicts, lists and strings, and no cycles:
    # each full collection would walk all the pages read so far again, about half of a
    # 40,000-pod list's CPU time (allocation/engine/gcpause.py; docs/live-cluster.md).
    with paused_gc():
        for _attempt in range(_RESTARTS):
            try:
                return _pages(connection, resource, page_size, progress)
            except Gone:
                continue  # the continue token expired: start over for one consistent list
    raise SourceError(f"list {resource.name}: the list kept expiring before its last page")


def _pages(connection: Connection, resource: Resource, page_size: int,
           progress: Callable[[Resource, int], None] | None) -> Snapshot:
    items: list[dict] = []
    token = ""
    while True:
        query = {"limit": page_size}
        if token:
            query["continue"] = token
        page = connection.get_json(resource.path, query, verb="list")
        for item in page.get("items") or []:
            if isinstance(item, dict):
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
        if progress is not None:
            progress(resource, len(items))
        metadata = page.get("metadata") or {}
        token = metadata.get("continue") or ""
        if not token:
            return Snapshot(resource, items, str(metadata.get("resourceVersion", "")))
