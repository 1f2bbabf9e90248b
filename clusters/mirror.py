"""Importing a live cluster once, and mirroring it: the loop of ``manage.py mirror``.

:func:`import_cluster` discovers the versions to read, lists every kind in pages and stores
the snapshots in one transaction (``clusters.services``). :class:`Mirror` then watches every
kind from its list's resourceVersion, one thread per kind (``clusters.kube.watching``); the
watch threads only read and queue, and this loop's thread is the one writer: it applies the
queued changes in batches through the services, and records the source's status (the last
event, or the error and since when). The planner only ever sends get, list and watch
(docs/live-cluster.md).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from allocation.engine.gcpause import paused_gc
from allocation.services.profile import console_profile
from clusters import services
from clusters.kube.client import Connection
from clusters.kube.discovery import discover
from clusters.kube.listing import PAGE_SIZE, Snapshot, list_all
from clusters.kube.prechecks import Prechecker
from clusters.kube.resources import Resource
from clusters.kube.watching import WATCH_SECONDS, Backoff, Change, Watcher
from clusters.models import ClusterSource

__all__ = ["import_cluster", "Mirror", "Imported"]

log = logging.getLogger(__name__)

Say = Callable[[str], None]


@dataclass
class Imported:
    """An import's snapshots (one per kind, with the resourceVersion to watch from) and what
    storing them did. The snapshots' items are not kept (they are stored): held past the
    import, the collector's first pass after it would walk every one of them."""

    snapshots: list[Snapshot]
    report: services.SyncReport


def import_cluster(connection: Connection, say: Say = lambda line: None,
                   replace: bool = False, page_size: int = PAGE_SIZE,
                   state: str = ClusterSource.IMPORTED,
                   precheck_after: int = PAGE_SIZE) -> Imported:
    """Read every kind of the cluster and store it (one transaction); ``say`` hears the
    progress, one line per page and kind. Once more than ``precheck_after`` objects are
    read, the pages are checked in a second process (``Prechecker``).

    Raises:
        SourceError: the cluster could not be read (nothing is stored then).
        InvalidManifests: nothing read could be stored.
    """
    services.record_start(connection.context, connection.server, ClusterSource.SYNCING)
    try:
        # The lists and the store make millions of dicts, lists and strings and no cycles: a
        # collection between two kinds, or between the lists and the store, walks everything
        # read so far again (allocation/engine/gcpause.py; docs/live-cluster.md). Nothing
        # read is left when the collector resumes (_read_and_store keeps no item).
        with paused_gc():
            imported = _read_and_store(connection, say, replace, page_size, precheck_after)
    except Exception as exc:
        services.record_error(str(exc))
        raise
    services.record_state(state)
    return imported


def _read_and_store(connection: Connection, say: Say, replace: bool, page_size: int,
                    precheck_after: int) -> Imported:
    resources = discover(connection)
    snapshots = []
    # The pages are checked in a second process while the lists go on: the store then
    # checks only what that process has not (clusters/kube/prechecks.py).
    with Prechecker(console_profile(), start_after=precheck_after) as checker:
        for resource in resources:
            snapshots.append(list_all(connection, resource, page_size,
                                      progress=lambda r, n: say(f"{r.name}: {n} listed"),
                                      page_hook=checker.page))
        say(f"storing {sum(len(s.items) for s in snapshots)} objects")
        versions = {r.kind: r.api_version for r in resources}
        report = services.store_snapshots(connection.context, snapshots, replace, versions,
                                          checked=checker.valid)
    return Imported([Snapshot(s.resource, [], s.resource_version) for s in snapshots], report)


@dataclass(frozen=True)
class _Status:
    """A watch's health, queued for the writer: ``message`` is its error, or None."""

    resource: Resource
    message: str | None


class Mirror:
    """Keep the stored cluster in step with the cluster behind ``connection``."""

    def __init__(self, connection: Connection, say: Say = lambda line: None,
                 batch_seconds: float = 0.2, watch_seconds: int = WATCH_SECONDS,
                 backoff: Callable[[], Backoff] = Backoff,
                 page_size: int = PAGE_SIZE) -> None:
        self.connection, self.say = connection, say
        self.batch_seconds, self.watch_seconds = batch_seconds, watch_seconds
        self.backoff, self.page_size = backoff, page_size
        self.stop = threading.Event()
        self.queue: queue.Queue[Change | _Status] = queue.Queue()
        self.watchers: list[Watcher] = []
        self.threads: list[threading.Thread] = []
        self.failing: dict[str, str] = {}
        self.deferred: dict = {}
        self.applied = 0

    def run(self, replace: bool = False) -> None:
        """Import, then follow every watch until :meth:`close` (or ``stop``) is called."""
        self.start(replace)
        try:
            while not self.stop.is_set():
                self.step()
        finally:
            self.close()
            services.record_state(ClusterSource.STOPPED)

    def start(self, replace: bool = False) -> Imported:
        """Import, and start one watch thread per kind from its list's resourceVersion."""
        imported = import_cluster(self.connection, self.say, replace, self.page_size,
                                  state=ClusterSource.MIRRORING)
        self.say(f"imported: {_counts(imported.report.counts)}; watching")
        for snapshot in imported.snapshots:
            watcher = Watcher(self.connection, snapshot.resource, snapshot.resource_version,
                              self.queue.put, self.stop,
                              failed=lambda r, m: self.queue.put(_Status(r, m)),
                              healthy=self._healthy, backoff=self.backoff(),
                              watch_seconds=self.watch_seconds)
            thread = threading.Thread(target=watcher.run, daemon=True,
                                      name=f"watch-{snapshot.resource.plural}")
            self.watchers.append(watcher)
            self.threads.append(thread)
            thread.start()
        return imported

    def close(self, timeout: float = 10.0) -> None:
        """Stop the watches and wait for their threads (each ends at its next line or at
        the end of its watch request)."""
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout)

    def _healthy(self, resource: Resource) -> None:
        if resource.kind in self.failing:
            self.queue.put(_Status(resource, None))

    def step(self, wait: float = 0.5) -> None:
        """Apply what the watches queued (waiting up to ``wait`` seconds for a first change,
        then ``batch_seconds`` for more): the one writer's loop body."""
        try:
            first = self.queue.get(timeout=wait)
        except queue.Empty:
            if self.deferred:
                self._apply([])
            return
        batch = [first]
        deadline = time.monotonic() + self.batch_seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                batch.append(self.queue.get(timeout=left))
            except queue.Empty:
                break
        changes = [c for c in batch if isinstance(c, Change)]
        for status in (s for s in batch if isinstance(s, _Status)):
            self._status(status)
        if changes:
            self._apply(changes)

    def _apply(self, changes: list[Change]) -> None:
        try:
            report = services.apply_changes(self.connection.context, changes, self.deferred)
        except Exception as exc:  # nothing of this batch could be stored: say so, go on
            log.exception("mirror: could not store %d change(s)", len(changes))
            self.say(f"could not store {len(changes)} change(s): {exc}")
            self.deferred = {}
            return
        self.deferred = report.deferred
        self.applied += len(changes)
        for problem in report.rejected:
            self.say(f"left out: {problem}")
        if changes:
            self.say(f"applied: {_counts(report.counts)}")

    def _status(self, status: _Status) -> None:
        if status.message is None:
            self.failing.pop(status.resource.kind, None)
            if not self.failing:
                services.record_state(ClusterSource.MIRRORING)
                self.say(f"{status.resource.name}: watching again")
            return
        self.failing[status.resource.kind] = status.message
        services.record_error(status.message)
        self.say(f"{status.resource.name}: {status.message}; retrying")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing"
