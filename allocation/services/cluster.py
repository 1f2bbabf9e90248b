"""The stored cluster as a whole: its revision and its engine state (the baseline).

:func:`baseline_state` builds the engine's :class:`ClusterState` from the stored documents
and caches it per revision (one build per revision per process). The clock of the baseline
is real time: the state is built with the wall-clock time of the build.
"""

from __future__ import annotations

import threading
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from allocation.engine.events import VirtualClock
from allocation.engine.state import ClusterState
from allocation.models import Cluster
from allocation.services.store import build_state, event_rows, stored_rows

__all__ = ["revision", "baseline_state", "locked_cluster", "cluster_row", "clear_cache",
           "timers_due"]

_lock = threading.Lock()
_cache: tuple[tuple[int, str], ClusterState] | None = None


def cluster_row() -> Cluster:
    """The bookkeeping row (created on first use)."""
    row, _ = Cluster.objects.get_or_create(pk=Cluster.SINGLETON_ID)
    return row


def locked_cluster() -> Cluster:
    """The bookkeeping row, locked until the surrounding transaction ends.

    Every write takes this lock first, so writes to the cluster are serialised (on SQLite
    the write itself serialises them).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("locked_cluster() must be called inside transaction.atomic()")
    cluster_row()
    return Cluster.objects.select_for_update().get(pk=Cluster.SINGLETON_ID)


def timers_due(due: datetime) -> bool:
    """Record that a controller timer fell due at ``due`` (a ProvisioningRequest re-check,
    a back-off, ``ValidUntilSeconds``), so the worker holding the lease, in whichever
    process, runs a pass (``allocation.tasks.timers_due``; docs/console.md, "Tasks").

    Bookkeeping like the lease, not a change of the cluster: no revision, no announcement.
    Only ever moves forward; whether it moved.
    """
    with transaction.atomic():
        cluster_row()
        return bool(Cluster.objects.filter(pk=Cluster.SINGLETON_ID).filter(
            Q(timers_due_at__isnull=True) | Q(timers_due_at__lt=due)).update(timers_due_at=due))


def revision() -> int:
    """The number of committed writes to the stored cluster so far."""
    return _version()[0]


def _version() -> tuple[int, str]:
    """(revision, token): what a cached baseline is valid for."""
    row = Cluster.objects.filter(pk=Cluster.SINGLETON_ID).values_list(
        "revision", "token").first()
    return (row[0], row[1]) if row else (0, "")


def _build(now: datetime) -> tuple[tuple[int, str], ClusterState]:
    # Read the revision and rows in one transaction so they belong together.
    with transaction.atomic():
        current = _version()
        rows, events = stored_rows(), event_rows()
    # Rows that cannot be loaded are left out (and listed in the state's problems), so one
    # broken row does not take every page down with it.
    state, _left_out = build_state(rows, events, VirtualClock(now))
    return current, state


def baseline_state() -> ClusterState:
    """The engine state of the stored cluster at the current revision.

    Shared between callers: treat it as read-only (copy or rebuild to simulate on it).
    """
    global _cache
    current = _version()
    cached = _cache
    if cached is not None and cached[0] == current:
        return cached[1]
    with _lock:
        cached = _cache
        if cached is not None and cached[0] == current:
            return cached[1]
        built_version, state = _build(timezone.now())
        _cache = (built_version, state)
        return state


def clear_cache() -> None:
    """Forget the cached baseline (tests, and after a database flush)."""
    global _cache
    with _lock:
        _cache = None
