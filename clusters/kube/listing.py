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
from clusters.kube.client import Connection, Gone, SourceError, parse_json, part_at
from clusters.kube.resources import Resource

__all__ = ["Snapshot", "list_all", "items_of", "PageHook", "PAGE_SIZE"]

PAGE_SIZE = 500
"""Objects per page (kubectl's default chunk size)."""

_RESTARTS = 3
"""How often an expired continue token may restart a list before it is an error."""


PageHook = Callable[[Resource, bytes, list[dict]], None]
"""Told of every page read: its resource, its body as sent and its items (``items_of``)."""


@dataclass
class Snapshot:
    """Every object of one resource at one resourceVersion."""

    resource: Resource
    items: list[dict]
    resource_version: str


def list_all(connection: Connection, resource: Resource, page_size: int = PAGE_SIZE,
             progress: Callable[[Resource, int], None] | None = None,
             page_hook: PageHook | None = None) -> Snapshot:
    """Every object of ``resource``; ``progress(resource, count so far)`` after each page,
    ``page_hook`` before it (a page of a list that starts over is told too).

    Raises:
        SourceError (AccessDenied, Gone...): the list failed.
    """
    # A list of a large cluster makes millions of dicts, lists and strings, and no cycles:
    # each full collection would walk all the pages read so far again, about half of a
    # 40,000-pod list's CPU time (allocation/engine/gcpause.py; docs/live-cluster.md).
    with paused_gc():
        for _attempt in range(_RESTARTS):
            try:
                return _pages(connection, resource, page_size, progress, page_hook)
            except Gone:
                continue  # the continue token expired: start over for one consistent list
    raise SourceError(f"list {resource.name}: the list kept expiring before its last page")


def items_of(page: dict, resource: Resource) -> list[dict]:
    """The objects of a list ``page`` of ``resource``, each with its ``apiVersion`` and
    ``kind`` (set in place); an item that is not an object is left out.

    Raises:
        SourceError: the page's ``items`` is not a list.
    """
    items = []
    for item in part_at(page, "items", resource.path, list):
        if isinstance(item, dict):
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
            items.append(item)
    return items


def _pages(connection: Connection, resource: Resource, page_size: int,
           progress: Callable[[Resource, int], None] | None,
           page_hook: PageHook | None) -> Snapshot:
    items: list[dict] = []
    token = ""
    while True:
        query = {"limit": page_size}
        if token:
            query["continue"] = token
        body = connection.get_body(resource.path, query, verb="list")
        page = parse_json(body, resource.path)
        listed = items_of(page, resource)
        if page_hook is not None:
            page_hook(resource, body, listed)
        items.extend(listed)
        if progress is not None:
            progress(resource, len(items))
        metadata = part_at(page, "metadata", resource.path, dict)
        token = metadata.get("continue") or ""
        if not token:
            return Snapshot(resource, items, str(metadata.get("resourceVersion", "")))
