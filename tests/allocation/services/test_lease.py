"""allocation.services.lease: one holder at a time, expiry, renewal, release, confirm."""

from datetime import timedelta

import pytest
from django.utils import timezone

from allocation.services import lease

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


def test_confirm_renews_only_the_holders_lease_even_when_expired():
    now = timezone.now()
    assert lease.acquire("a", TTL, now=now - 2 * TTL)  # expired, but nobody took it
    assert not lease.confirm("b", TTL)
    assert lease.confirm("a", TTL)
    assert lease.holds("a")
