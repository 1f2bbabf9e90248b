"""The book of what is allocated, kept incrementally (docs/v1.md, allocated state).

``commit`` adds one claim's allocation, ``release`` takes it away again; nothing is ever
recomputed from every claim. Admin-access results are not recorded (they block nobody),
results with a ``shareID`` add their consumed capacity to the device's sum (with
DRAConsumableCapacity on), every other result makes its device dedicated.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from allocation.engine.v1.devices import quantity_value

__all__ = ["AllocationBook", "DeviceKey"]

DeviceKey = tuple[str, str, str]  # (driver, pool, device)


class AllocationBook:
    """Dedicated devices, shared consumed capacity and per-pool versions."""

    def __init__(self, consumable_capacity: bool = True) -> None:
        # with DRAConsumableCapacity off a result's shareID is ignored: the device is
        # dedicated (the scheduler's GatherAllocatedState checks the gate)
        self.consumable_capacity = consumable_capacity
        self.dedicated: dict[DeviceKey, str] = {}
        # consumed capacity of shared results (only those that carry consumedCapacity)
        self.shared: dict[DeviceKey, dict[str, Fraction]] = {}
        # the claims holding shared results of a device (upstream's shared device IDs)
        self.shared_owners: dict[DeviceKey, set[str]] = defaultdict(set)
        self.pool_dedicated: dict[tuple[str, str], int] = defaultdict(int)
        self.pool_version: dict[tuple[str, str], int] = defaultdict(int)
        self._claims: dict[str, list[dict]] = {}
        # further claims holding a dedicated device after its first (inconsistent input,
        # or one claim naming a device twice), in commit order
        self._more_holders: dict[DeviceKey, list[str]] = {}
        # called with the (driver, pool) keys a release freed devices in
        self.release_listeners: list = []

    def copy(self) -> AllocationBook:
        """A book holding what this one holds, changed apart from it from now on (a
        scenario fork's: copying the entries costs far less than committing every claim
        again). The results lists are shared: a book never changes one. No listeners."""
        twin = AllocationBook(self.consumable_capacity)
        twin.dedicated = dict(self.dedicated)
        twin.shared = {key: dict(sums) for key, sums in self.shared.items()}
        twin.shared_owners = defaultdict(set, {key: set(owners) for key, owners
                                               in self.shared_owners.items()})
        twin.pool_dedicated = defaultdict(int, self.pool_dedicated)
        twin.pool_version = defaultdict(int, self.pool_version)
        twin._claims = dict(self._claims)
        twin._more_holders = {key: list(more) for key, more in self._more_holders.items()}
        return twin

    def __contains__(self, claim_key: str) -> bool:
        return claim_key in self._claims

    def commit(self, claim_key: str, allocation: dict) -> None:
        """Record ``allocation`` (a v1 AllocationResult dict) of claim ``claim_key``.

        A dedicated device another claim holds already stays allocated while either holds
        it: upstream's allocated state is the set of every allocated claim's devices, so
        such input (two claims naming one device) is accepted, not refused.

        Raises ValueError when the claim is already recorded.
        """
        if claim_key in self._claims:
            raise ValueError(f"claim {claim_key} is already allocated")
        results = list((allocation.get("devices") or {}).get("results") or ())
        for r in results:
            key = (r["driver"], r["pool"], r["device"])
            if r.get("adminAccess"):
                continue
            pool = key[:2]  # one slice, not one per use: asked for every result booked
            self.pool_version[pool] += 1
            if self._shared(r):
                # upstream's AggregatedCapacity only has devices whose shared results carry
                # consumedCapacity; every shared result counts as allocated (its share ID)
                consumed = r.get("consumedCapacity")
                if consumed:
                    sums = self.shared.setdefault(key, {})
                    for name, value in consumed.items():
                        sums[name] = sums.get(name, Fraction(0)) + quantity_value(value)
                self.shared_owners[key].add(claim_key)
            elif key not in self.dedicated:
                self.dedicated[key] = claim_key
                self.pool_dedicated[pool] += 1
            else:
                self._more_holders.setdefault(key, []).append(claim_key)
        self._claims[claim_key] = results

    def release(self, claim_key: str) -> None:
        """Forget claim ``claim_key``'s allocation (no-op when it has none)."""
        results = self._claims.pop(claim_key, None)
        if results is None:
            return
        for listener in self.release_listeners:
            listener({(r["driver"], r["pool"]) for r in results})
        for r in results:
            key = (r["driver"], r["pool"], r["device"])
            if r.get("adminAccess"):
                continue
            self.pool_version[key[:2]] += 1
            if self._shared(r):
                sums = self.shared.get(key)
                if sums is not None:
                    for name, value in (r.get("consumedCapacity") or {}).items():
                        sums[name] = sums.get(name, Fraction(0)) - quantity_value(value)
                owners = self.shared_owners.get(key, set())
                owners.discard(claim_key)
                if not owners:
                    self.shared.pop(key, None)
                    self.shared_owners.pop(key, None)
            else:
                self._drop_holder(key, claim_key)

    def _drop_holder(self, key: DeviceKey, claim_key: str) -> None:
        more = self._more_holders.get(key)
        if more and claim_key in more:
            more.remove(claim_key)
        elif self.dedicated.get(key) == claim_key:
            if more:  # the next claim naming the device holds it now
                self.dedicated[key] = more.pop(0)
            else:
                del self.dedicated[key]
                self.pool_dedicated[key[:2]] -= 1
        if not more:
            self._more_holders.pop(key, None)

    def _shared(self, result: dict) -> bool:
        return bool(result.get("shareID")) and self.consumable_capacity

    def owner(self, key: DeviceKey) -> str | None:
        """The claim a device is dedicated to, if any."""
        return self.dedicated.get(key)
