"""Following one resource with a watch that never loses or repeats a change.

A :class:`Watcher` watches from the resourceVersion of its list, with bookmarks
(``allowWatchBookmarks``), so a reconnect resumes exactly after the last event delivered:
the version only moves once an event has been handed over, and a bookmark moves it without
an event. A ``410 Gone`` (the version is too old, as an ``ERROR`` event or an HTTP status)
lists the resource again and hands over the whole :class:`Snapshot` (the receiver replaces
what it holds of that kind). Connection errors wait with exponential back-off (0.5 s
doubling to 30 s; reset by the next event) and resume. See docs/live-cluster.md, "Mirror".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass

from clusters.kube.client import Connection, Gone, SourceError
from clusters.kube.listing import Snapshot, list_all
from clusters.kube.resources import Resource

__all__ = ["Change", "Backoff", "Watcher", "WATCH_SECONDS"]

WATCH_SECONDS = 300
"""``timeoutSeconds`` of each watch request: the server ends it then and it is resumed."""


@dataclass(frozen=True)
class Change:
    """One change of one resource: ``ADDED``, ``MODIFIED`` or ``DELETED`` with the object,
    or ``RELIST`` with a whole snapshot (after 410 Gone)."""

    resource: Resource
    type: str
    object: dict | None = None
    snapshot: Snapshot | None = None


class Backoff:
    """Exponential back-off: ``first`` seconds doubling up to ``ceiling``."""

    def __init__(self, first: float = 0.5, ceiling: float = 30.0) -> None:
        self.first, self.ceiling = first, ceiling
        self.current = first

    def next(self) -> float:
        """The delay to wait now; the one after is twice as long (up to the ceiling)."""
        delay = self.current
        self.current = min(self.current * 2, self.ceiling)
        return delay

    def reset(self) -> None:
        self.current = self.first


class Watcher:
    """Watch ``resource`` from ``resource_version`` until ``stop`` is set.

    ``deliver(change)`` receives every change in order; ``failed(resource, message)`` each
    error before its back-off, ``healthy(resource)`` once the watch works again.
    """

    def __init__(self, connection: Connection, resource: Resource, resource_version: str,
                 deliver: Callable[[Change], None], stop: threading.Event,
                 failed: Callable[[Resource, str], None] = lambda r, m: None,
                 healthy: Callable[[Resource], None] = lambda r: None,
                 backoff: Backoff | None = None, watch_seconds: int = WATCH_SECONDS) -> None:
        self.connection, self.resource = connection, resource
        self.resource_version = resource_version
        self.deliver, self.failed, self.healthy = deliver, failed, healthy
        self.stop = stop
        self.backoff = backoff or Backoff()
        self.watch_seconds = watch_seconds
        self.requests = 0

    def run(self) -> None:
        """Watch until ``stop`` is set (the thread's body)."""
        broken = False
        while not self.stop.is_set():
            try:
                if self._watch_once():
                    broken = False  # at least one line arrived: the watch works
            except Gone:
                try:
                    self._relist()
                except SourceError as exc:
                    broken = True
                    self._pause(str(exc))
                    continue
            except SourceError as exc:
                broken = True
                self._pause(str(exc))
                continue
            if not broken:
                self.healthy(self.resource)
                self.backoff.reset()

    def _watch_once(self) -> bool:
        """One watch request to its end; whether any line arrived."""
        query = {"watch": "true", "allowWatchBookmarks": "true",
                 "resourceVersion": self.resource_version,
                 "timeoutSeconds": self.watch_seconds}
        self.requests += 1
        seen = False
        lines = self.connection.stream_lines(self.resource.path, query,
                                             read_timeout=self.watch_seconds + 30)
        for line in lines:
            seen = True
            self._handle(line)
            if self.stop.is_set():
                lines.close()
                break
        return seen

    def _handle(self, line: bytes) -> None:
        try:
            event = json.loads(line)
            kind, obj = event["type"], event["object"]
        except (ValueError, KeyError, TypeError):
            raise SourceError(f"watch {self.resource.name}: unreadable event: "
                              f"{line[:200]!r}") from None
        if kind == "ERROR":
            code = obj.get("code") if isinstance(obj, dict) else None
            message = obj.get("message", "") if isinstance(obj, dict) else str(obj)
            if code == 410:
                raise Gone(f"watch {self.resource.name}: {message}")
            raise SourceError(f"watch {self.resource.name}: {code}: {message}")
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata") or {}, dict):
            # the same event comes again on the reconnect: said each time, never skipped
            raise SourceError(f"watch {self.resource.name}: {kind} event whose object is "
                              f"not an object with metadata: {line[:200]!r}")
        version = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        if kind == "BOOKMARK":
            self.resource_version = version or self.resource_version
            return
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        self.deliver(Change(self.resource, kind, obj))
        # Only now: a reconnect resumes after this event, never before or after another.
        self.resource_version = version or self.resource_version
        self.backoff.reset()
        self.healthy(self.resource)

    def _relist(self) -> None:
        snapshot = list_all(self.connection, self.resource)
        self.deliver(Change(self.resource, "RELIST", snapshot=snapshot))
        self.resource_version = snapshot.resource_version

    def _pause(self, message: str) -> None:
        self.failed(self.resource, message)
        self.stop.wait(self.backoff.next())
