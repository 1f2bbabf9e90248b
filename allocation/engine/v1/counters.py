"""Shared counters of partitionable devices (KEP-4815, docs/v1.md, counters).

What a pool's counter sets have left is computed from the book once per book version of
the pool; what one Allocate call takes is tracked in a ``CounterLedger``.
"""

from __future__ import annotations

from fractions import Fraction

from allocation.engine.v1.book import AllocationBook
from allocation.engine.v1.features import Profile
from allocation.engine.v1.pools import Pool

__all__ = ["CounterLedger"]


class CounterLedger:
    """Counters consumed during one Allocate call, checked against the pools' sets."""

    def __init__(self, book: AllocationBook, profile: Profile) -> None:
        self.book = book
        self.profile = profile
        self.consumed: dict = {}

    def available(self, pool: Pool) -> dict:
        """Counter values of the pool minus what allocated devices consume (cached per
        book version of the pool)."""
        version = self.book.pool_version.get(pool.key, 0)
        cached = pool.counter_cache
        if cached is not None and cached[0] == version:
            return cached[1]
        avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        shared = self.book.shared if self.profile.counters_count_shared else {}
        dedicated = self.book.dedicated
        for view in pool.slices + pool.other_slices:
            for dev in view.devices:
                if not dev.consumes or (dev.key not in dedicated and dev.key not in shared):
                    continue
                for set_name, counters in dev.consumes:
                    target = avail.get(set_name)
                    if target is None:
                        continue
                    for name, value in counters.items():
                        if name in target:
                            target[name] -= value
        pool.counter_cache = (version, avail)
        return avail

    def short(self, pool: Pool, dev, consume: bool) -> tuple | None:
        """``(set, counter, available, needed)`` of the first counter that would go
        negative when ``dev`` is added, or None (and the consumption is recorded when
        ``consume``)."""
        avail = self.available(pool)
        used = self.consumed.setdefault(pool.key, {})
        for set_name, counters in dev.consumes:
            target = used.setdefault(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, Fraction(0)) + value
        short = None
        for set_name, counters in avail.items():
            taken = used.get(set_name, {})
            for name, value in counters.items():
                if value < taken.get(name, 0):
                    short = (set_name, name, value, taken.get(name, Fraction(0)))
                    break
            if short:
                break
        if short or not consume:
            self.release(pool, dev)
        return short

    def release(self, pool: Pool, dev) -> None:
        used = self.consumed.get(pool.key, {})
        for set_name, counters in dev.consumes:
            target = used.get(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, Fraction(0)) - value
