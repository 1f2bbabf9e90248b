"""How many v1 devices each driver has and how many are in use (docs/v1.md, "The console").

A device is in use when a result that is not adminAccess names it (dedicated or shared:
a multi-allocatable device counts once however many claims share it); adminAccess results
block nobody. The dashboard and the what-if outcomes count with this one rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["DeviceUsage", "devices_in_use", "driver_usage", "named_devices"]


def named_devices(claim: dict) -> Iterator[tuple[str, str, str]]:
    """``(driver, pool, device)`` of each result of the v1 claim document ``claim`` that is
    not adminAccess (the results that put a device in use)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    for r in (allocation.get("devices") or {}).get("results") or ():
        if not r.get("adminAccess"):
            yield r["driver"], r["pool"], r["device"]


def devices_in_use(claims: Iterable[dict]) -> set[tuple[str, str, str]]:
    """``(driver, pool, device)`` of every device a result that is not adminAccess names, over
    the v1 claim documents ``claims``."""
    used = set()
    for claim in claims:
        used.update(named_devices(claim))
    return used


def driver_usage(slices: Iterable[dict], claims: Iterable[dict]) -> dict[str, tuple[int, int]]:
    """``driver -> (devices in use, devices)`` over the v1 ResourceSlice documents ``slices``
    (every slice counts; a pool's older generations are not told apart)."""
    return DeviceUsage(slices, claims).totals


class DeviceUsage:
    """``driver_usage`` of a settled state, kept so that the usage of a fork that changed a
    few claims and no slice is counted from it (docs/scenarios.md), not from every claim:
    how many results name each device, and how many slice entries list it."""

    __slots__ = ("holders", "listed", "totals")

    def __init__(self, slices: Iterable[dict], claims: Iterable[dict]) -> None:
        holders: Counter = Counter()
        for claim in claims:
            holders.update(named_devices(claim))
        listed: Counter = Counter()
        counts: dict[str, list[int]] = {}
        for piece in slices:
            spec = piece.get("spec") or {}
            driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
            row = counts.setdefault(driver, [0, 0])
            for device in spec.get("devices") or ():
                key = (driver, pool, device.get("name"))
                row[1] += 1
                listed[key] += 1
                if key in holders:
                    row[0] += 1
        self.holders, self.listed = holders, listed
        self.totals = {driver: (row[0], row[1]) for driver, row in counts.items()}

    def changed(self, removed: Iterable[dict], added: Iterable[dict]
                ) -> dict[str, tuple[int, int]]:
        """``driver_usage`` with the same slices and the claims' results of ``removed``
        (v1 claim documents counted here) replaced by those of ``added``."""
        delta: Counter = Counter()
        for claim in removed:
            delta.subtract(named_devices(claim))
        for claim in added:
            delta.update(named_devices(claim))
        totals = {driver: list(row) for driver, row in self.totals.items()}
        holders, listed = self.holders, self.listed
        for key, change in delta.items():
            if not change:
                continue
            before = holders.get(key, 0)
            if (before > 0) != (before + change > 0) and key in listed:
                totals[key[0]][0] += listed[key] if before == 0 else -listed[key]
        return {driver: (row[0], row[1]) for driver, row in totals.items()}
