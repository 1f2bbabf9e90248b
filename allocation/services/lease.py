"""The worker lease row: one conditional UPDATE takes, renews, confirms or releases it.

A lease row names its holder and an expiry. :func:`acquire` takes it when it is free,
expired or already ours (renewing it) with one conditional UPDATE, so two workers racing
for it cannot both win; a worker that dies simply stops renewing and the lease expires.
These are the lease's only writes (services are the only writers); the worker's
``allocation.worker.lease.Keeper`` decides when to call them (docs/console.md, "Lease").
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from allocation.models import WorkerLease

__all__ = ["BASELINE", "acquire", "holds", "release", "confirm"]

BASELINE = "baseline"
_NEVER = datetime(2000, 1, 1, tzinfo=UTC)


def _ensure(name: str) -> None:
    if WorkerLease.objects.filter(name=name).exists():
        return
    try:
        with transaction.atomic():
            WorkerLease.objects.create(name=name, holder="", expires_at=_NEVER)
    except IntegrityError:  # another worker created it first
        pass


def acquire(holder: str, ttl: timedelta, name: str = BASELINE,
            now: datetime | None = None) -> bool:
    """Take or renew the lease for ``ttl``; False if someone else holds it."""
    now = now or timezone.now()
    _ensure(name)
    taken = WorkerLease.objects.filter(name=name).filter(
        Q(holder=holder) | Q(holder="") | Q(expires_at__lte=now)
    ).update(holder=holder, expires_at=now + ttl)
    return taken == 1


def holds(holder: str, name: str = BASELINE, now: datetime | None = None) -> bool:
    """Whether ``holder`` holds an unexpired lease (locks the row inside a transaction)."""
    now = now or timezone.now()
    query = WorkerLease.objects.filter(name=name, holder=holder, expires_at__gt=now)
    if transaction.get_connection().in_atomic_block:
        query = query.select_for_update()
    return query.exists()


def release(holder: str, name: str = BASELINE) -> None:
    """Give the lease up (if held) so another worker need not wait for it to expire."""
    WorkerLease.objects.filter(name=name, holder=holder).update(holder="", expires_at=_NEVER)


def confirm(holder: str, ttl: timedelta, name: str = BASELINE,
            now: datetime | None = None) -> bool:
    """Renew the lease only if ``holder`` still holds it (expired or not: nobody took it).

    Inside a transaction the UPDATE keeps the row locked until it ends, so no other worker
    can take the lease before a save that confirmed it has committed.
    """
    now = now or timezone.now()
    return WorkerLease.objects.filter(name=name, holder=holder).update(
        expires_at=now + ttl) == 1
