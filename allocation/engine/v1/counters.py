"""Shared counters of partitionable devices (KEP-4815, docs/v1.md, counters).

What a pool's counter sets have left is computed from the book once per book version of
the pool; what one Allocate call takes is tracked in a ``CounterLedger``.
"""

from __future__ import annotations

from fractions import Fraction

from allocation.engine.v1.book import AllocationBook
from allocation.engine.v1.devices import quantity_value
from allocation.engine.v1.features import Profile
from allocation.engine.v1.pools import Pool

__all__ = ["CounterLedger"]


class CounterLedger:
    """Counters consumed during one Allocate call, checked against the pools' sets."""

    def __init__(self, book: AllocationBook, profile: Profile) -> None:
        self.book = book
        self.profile = profile
        self.consumed: dict = {}
        self._slices: dict = {}
        # upstream keys its counter maps by pool name only (PoolID.Pool): the first pool of
        # a name that is checked in this call gives every pool of that name its counters
        self._by_name: dict[str, dict] = {}

    def available(self, pool: Pool, dev=None) -> dict:
        """Counter values of the pool minus what allocated devices consume (cached per
        book version of the pool); [1.34] of ``dev``'s own slice. As upstream, the first
        pool of a name asked in this call answers for every pool of that name."""
        if self.profile.legacy_pools:
            return self._slice_available(pool, dev)
        found = self._by_name.get(pool.name)
        if found is None:
            found = self._by_name[pool.name] = self._pool_available(pool)
        return found

    def _pool_available(self, pool: Pool) -> dict:
        version = self.book.pool_version.get(pool.key, 0)
        cached = pool.counter_cache
        # the book too: pools are shared by the allocators of a state and its forks
        # (``engine/v1_pools.py``), each with its own book
        if cached is not None and cached[0] is self.book and cached[1] == version:
            return cached[2]
        avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        # IsDeviceAllocated: dedicated, or held through any shared result
        shared = self.book.shared_owners if self.profile.counters_count_shared else {}
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
        pool.counter_cache = (self.book, version, avail)
        return avail

    def _slice_available(self, pool: Pool, dev) -> dict:
        slice_ = dev.slice
        key = ("slice", id(slice_), self.book.pool_version.get(pool.key, 0))
        found = self._slices.get(key)
        if found is not None:
            return found
        avail = {cs["name"]: {n: quantity_value(c["value"]) for n, c in
                              (cs.get("counters") or {}).items()}
                 for cs in slice_["spec"].get("sharedCounters") or ()}
        view = next(v for v in pool.slices if v.raw is slice_)
        for other in view.devices:
            if other.key not in self.book.dedicated:
                continue
            for set_name, counters in other.consumes:
                target = avail.get(set_name)
                for name, value in counters.items():
                    if target is not None and name in target:
                        target[name] -= value
        self._slices[key] = avail
        return avail

    def _ledger_key(self, pool: Pool, dev):
        # [1.34] counters are consumed per slice (upstream keys them by slice name)
        if self.profile.legacy_pools:
            return ("slice", dev.slice.get("metadata", {}).get("name", ""))
        return pool.name  # not (driver, pool): upstream's consumedCounters[PoolID.Pool]

    def short(self, pool: Pool, dev, consume: bool) -> tuple | None:
        """``(set, counter, available, needed)`` of the first counter that would go
        negative when ``dev`` is added, or None (and the consumption is recorded when
        ``consume``)."""
        avail = self.available(pool, dev)
        used = self.consumed.setdefault(self._ledger_key(pool, dev), {})
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
        """Give back what ``dev`` consumed in this call."""
        used = self.consumed.get(self._ledger_key(pool, dev), {})
        for set_name, counters in dev.consumes:
            target = used.get(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, Fraction(0)) - value
