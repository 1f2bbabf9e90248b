"""The database lease that lets one worker at a time reconcile the baseline.

A lease row names its holder and an expiry. :func:`acquire` takes it when it is free,
expired or already ours (renewing it) with one conditional UPDATE, so two workers racing
for it cannot both win; a worker that dies simply stops renewing and the lease expires.

A pass may last longer than the lease: :class:`Keeper` renews it at the pass's checkpoints
(between steps and before every controller runs, a third of the lease at most apart) and
stops the pass at once when it was lost; :meth:`Keeper.confirm` renews it once more inside
the save transaction, only if it is still ours (``docs/console.md``, "Lease").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from allocation.models import WorkerLease
from allocation.services.reconcile import PassAborted

__all__ = ["BASELINE", "acquire", "holds", "release", "confirm", "Keeper", "LeaseLost"]

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


class LeaseLost(PassAborted):
    """Another worker took the lease: the pass stops at once and saves nothing."""


class Keeper:
    """The lease of one worker: taken before a pass, renewed at the pass's checkpoints.

    ``clock`` (seconds, monotonic) decides when a renewal is due: a third of the lease
    after the last one, so a lease is renewed long before it expires while a pass with many
    checkpoints does not write the lease row at every one.
    """

    def __init__(self, holder: str, ttl: timedelta, name: str = BASELINE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.holder, self.ttl, self.name = holder, ttl, name
        self._clock = clock
        self._renewed: float | None = None

    def take(self) -> bool:
        """Take or renew the lease; False if another worker holds it."""
        taken = acquire(self.holder, self.ttl, self.name)
        self._renewed = self._clock() if taken else None
        return taken

    def checkpoint(self) -> None:
        """Renew the lease if a renewal is due.

        Raises:
            LeaseLost: the lease is no longer ours.
        """
        due = self._renewed is None or (
            self._clock() - self._renewed >= self.ttl.total_seconds() / 3)
        if due and not self.take():
            raise LeaseLost(f"worker {self.holder} lost the lease {self.name!r}")

    def confirm(self) -> bool:
        """Inside the save transaction: whether the lease is still ours (renewing it)."""
        confirmed = confirm(self.holder, self.ttl, self.name)
        if confirmed:
            self._renewed = self._clock()
        return confirmed
