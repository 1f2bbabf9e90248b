"""How many v1 devices each driver has and how many are in use (docs/v1.md, "The console").

A device is in use when a result that is not adminAccess names it (dedicated or shared:
a multi-allocatable device counts once however many claims share it); adminAccess results
block nobody. The dashboard and the what-if outcomes count with this one rule.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["devices_in_use", "driver_usage"]


def devices_in_use(claims: Iterable[dict]) -> set[tuple[str, str, str]]:
    """``(driver, pool, device)`` of every device a result that is not adminAccess names, over
    the v1 claim documents ``claims``."""
    used = set()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or ():
            if not r.get("adminAccess"):
                used.add((r["driver"], r["pool"], r["device"]))
    return used


def driver_usage(slices: Iterable[dict], claims: Iterable[dict]) -> dict[str, tuple[int, int]]:
    """``driver -> (devices in use, devices)`` over the v1 ResourceSlice documents ``slices``
    (every slice counts; a pool's older generations are not told apart)."""
    used = devices_in_use(claims)
    counts: dict[str, list[int]] = {}
    for piece in slices:
        spec = piece.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        row = counts.setdefault(driver, [0, 0])
        for device in spec.get("devices") or ():
            row[1] += 1
            if (driver, pool, device.get("name")) in used:
                row[0] += 1
    return {driver: (row[0], row[1]) for driver, row in counts.items()}
