"""allocation.worker.lease: the Keeper renews the lease at checkpoints, stops a lost pass."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from allocation.models import WorkerLease
from allocation.worker import lease

pytestmark = pytest.mark.django_db
TTL = timedelta(seconds=30)


class _Clock:
    """Monotonic seconds that only move when a test moves them."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _expiry():
    return WorkerLease.objects.get(name=lease.BASELINE).expires_at


def test_the_keeper_renews_at_checkpoints_once_a_third_of_the_lease_has_passed():
    clock = _Clock()
    keeper = lease.Keeper("a", TTL, clock=clock)
    assert keeper.take()
    first = _expiry()
    clock.now = 9.0  # less than a third of 30 s: no write
    keeper.checkpoint()
    assert _expiry() == first
    clock.now = 10.0
    keeper.checkpoint()
    assert _expiry() > first and lease.holds("a")


def test_a_keeper_whose_lease_was_taken_stops_the_pass():
    clock = _Clock()
    keeper = lease.Keeper("a", TTL, clock=clock)
    assert keeper.take()
    later = timezone.now() + TTL + timedelta(seconds=1)  # "a" missed its renewals
    assert lease.acquire("b", TTL, now=later)
    clock.now = 31.0
    with pytest.raises(lease.LeaseLost):
        keeper.checkpoint()
    with transaction.atomic():
        assert not keeper.confirm()
    assert lease.holds("b", now=later)
