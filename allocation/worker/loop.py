"""The worker loop: wait for a change, debounce, take the lease, reconcile, repeat.

A :class:`Worker` reconciles whenever the stored revision differs from the last one it
reconciled (it polls the revision, which is one cheap query, so it sees writes of other
processes too), when a service in its own process wakes it after a commit, and when a task
reports that an engine timer fell due (``Cluster.timers_due_at``: after each pass the
worker queues ``allocation.tasks.timers_due`` deferred to the controllers' next timer, so
the re-check of a ProvisioningRequest runs whichever process holds the lease then;
docs/console.md, "Tasks"); when a stored Event expires it deletes the expired ones without a
pass (``services.events.prune``). A change that wakes an idle worker (no pass ended within
``debounce``) is handled at once, and so is a single write after a pass (the next write of
a client that waited for the last one to be placed); several writes since the last pass (a
burst: some came during it) are gathered for ``debounce`` after the wake, then handled by
one pass. The wake a pass's own announcement causes finds nothing due and starts nothing.
Only the holder of the lease reconciles; the others keep polling.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from allocation import tasks
from allocation.services import events
from allocation.services import reconcile as passes
from allocation.services.cluster import cluster_row
from allocation.services.incremental import KeptSlot, share, unshare
from allocation.worker import lease, runtime

__all__ = ["Worker", "WorkerSettings"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerSettings:
    """Timing of the worker, from ``settings.DRA_WORKER`` (seconds)."""

    poll: float = 1.0
    debounce: float = 0.2
    lease_ttl: float = 30.0
    strategy: str = "first-fit"

    @classmethod
    def from_settings(cls) -> WorkerSettings:
        return cls(**getattr(settings, "DRA_WORKER", {}))


class Worker:
    """Reconciles the baseline until stopped; ``run_once`` does a single step (tests)."""

    def __init__(self, config: WorkerSettings | None = None, holder: str | None = None) -> None:
        self.config = config or WorkerSettings.from_settings()
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.keeper = lease.Keeper(self.holder, timedelta(seconds=self.config.lease_ttl))
        self.last_revision: int | None = None
        self.next_wakeup = None  # the controllers' next timer, queued as a task
        self.timers_seen = None  # Cluster.timers_due_at as the last pass began
        self._timers = None  # ... as the last ``due`` read it
        self.next_prune = None
        self.last_pass_end: float | None = None  # time.monotonic() when the last pass ended
        # the state the last pass settled, caught up by the next one (services/incremental)
        self.kept = KeptSlot()

    # -- control ------------------------------------------------------------------------
    @property
    def stopping(self) -> threading.Event:
        """Set once the worker is asked to stop (what runs beside it watches it)."""
        return self._stop

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> None:
        """Run in a daemon thread of this process (the in-process worker)."""
        runtime.register(self)
        share(self.kept)  # scenarios fork what it settled (docs/scenarios.md, "The baseline")
        self._thread = threading.Thread(target=self.run, name="dra-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        runtime.unregister(self)
        unshare(self.kept)

    # -- the loop -----------------------------------------------------------------------
    def due(self) -> bool:
        """Whether a pass is needed: a new revision, or a task reported a timer due."""
        row = cluster_row()
        self._timers = row.timers_due_at
        if self.last_revision is None or row.revision != self.last_revision:
            return True
        return row.timers_due_at is not None and row.timers_due_at != self.timers_seen

    def debounces(self, now: float) -> bool:
        """Whether a wake at ``now`` (``time.monotonic()``) waits for a burst of writes to
        finish: only when a pass ended within ``debounce`` (the writes that came during a
        pass, a burst); a write to an idle worker is handled at once."""
        return self.last_pass_end is not None and now - self.last_pass_end < self.config.debounce

    def burst(self) -> bool:
        """Whether more than one write waits for a pass (writes came during the last one,
        or several since): worth gathering (``debounce``) into one pass. One write, or
        none (the wake of the worker's own announcement), is not: each write commits one
        revision, the worker knows the one its pass ended at."""
        if self.last_revision is None:
            return True
        return cluster_row().revision - self.last_revision > 1

    def _gather(self) -> None:
        """Let a burst of writes finish: wait ``debounce`` after the wake, however many
        writes come meanwhile (a fixed window, so steady writes cannot hold a pass off)."""
        end = time.monotonic() + self.config.debounce
        while not self._stop.is_set():
            left = end - time.monotonic()
            if left <= 0 or not self._wake.wait(left):
                return
            self._wake.clear()

    def prune_due(self) -> bool:
        """Whether a stored Event has expired (docs/console.md, "Events")."""
        return self.next_prune is not None and timezone.now() >= self.next_prune

    def run_once(self) -> passes.PassResult | None:
        """One step: reconcile if due and the lease is ours; the pass's result or None.
        Expired Events are deleted without a pass (they are not state)."""
        if not self.due():
            if self.prune_due() and self.keeper.take():
                self.next_prune = events.prune()
            return None
        if not self.keeper.take():
            self.kept.drop()  # another worker reconciles: its writes are caught up, but
            return None       # what our controllers remember is not for its state
        timers = self._timers  # a timer reported due before the pass is handled by it
        result = self.kept.run_pass(lambda kept: passes.reconcile(
            self.keeper.confirm, strategy=self.config.strategy,
            checkpoint=self.keeper.checkpoint, kept=kept))
        if result.outcome in (passes.SAVED, passes.UNCHANGED):
            # After writes during the pass (not complete), the next pass must run anyway.
            self.last_revision = result.revision if result.complete else None
            self.timers_seen = timers
            self._queue_timer(result.next_wakeup)
            self.next_prune = result.next_prune
        log.info("worker pass: %s at revision %s (%s)%s", result.outcome, result.revision,
                 ", ".join(result.kinds) or "no changes",
                 f"; {len(result.conflicts)} conflict(s) left for the next pass"
                 if result.conflicts else "")
        return result

    def _queue_timer(self, due) -> None:
        """Queue the controllers' next timer as a task, once per timer (the pass has
        committed: ``reconcile`` returns after its transaction)."""
        if due is None or due == self.next_wakeup:
            self.next_wakeup = due
            return
        try:
            tasks.enqueue_timer(due)
            self.next_wakeup = due
        except Exception:  # the queue is down: the next pass queues it again
            log.exception("could not queue the timer due at %s", due)

    def run(self) -> None:
        log.info("worker %s started", self.holder)
        while not self._stop.is_set():
            self._wake.wait(self.config.poll)
            if self._stop.is_set():
                break
            if self._wake.is_set():
                self._wake.clear()
                if self.debounces(time.monotonic()) and self.burst():
                    self._gather()  # let a burst of writes finish first
            try:
                result = self.run_once()
                if result is not None:
                    self.last_pass_end = time.monotonic()
                if result is not None and result.again:
                    self._wake.set()
            except Exception:  # keep the worker alive; the next pass retries
                log.exception("worker pass failed")
                self._stop.wait(self.config.poll)
            finally:
                close_old_connections()
        try:
            lease.release(self.holder)
        finally:
            connections.close_all()  # this thread's connections; it ends here
        log.info("worker %s stopped", self.holder)
