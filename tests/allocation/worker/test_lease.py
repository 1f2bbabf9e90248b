"""allocation.worker.lease: one holder at a time, expiry, renewal, release."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from allocation.models import WorkerLease
from allocation.worker import lease

pytestmark = pytest.mark.django_db
TTL = timedelta(seconds=30)


def test_only_one_worker_holds_the_lease():
    assert lease.acquire("a", TTL)
    assert not lease.acquire("b", TTL)
    assert lease.holds("a") and not lease.holds("b")
    assert lease.acquire("a", TTL)  # renewing


def test_an_expired_lease_passes_to_another_worker():
    now = timezone.now()
    assert lease.acquire("a", TTL, now=now)
    later = now + TTL + timedelta(seconds=1)
    assert not lease.holds("a", now=later)
    assert lease.acquire("b", TTL, now=later)
    assert not lease.acquire("a", TTL, now=later)


def test_release_frees_the_lease_at_once():
    assert lease.acquire("a", TTL)
    lease.release("b")  # not the holder: no effect
    assert not lease.acquire("b", TTL)
    lease.release("a")
    assert lease.acquire("b", TTL)


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


def test_confirm_renews_only_the_holders_lease_even_when_expired():
    now = timezone.now()
    assert lease.acquire("a", TTL, now=now - 2 * TTL)  # expired, but nobody took it
    assert not lease.confirm("b", TTL)
    assert lease.confirm("a", TTL)
    assert lease.holds("a")
