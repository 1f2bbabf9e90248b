"""allocation.engine.v1.usage: devices in use per driver (docs/v1.md, "The console")."""

from __future__ import annotations

from allocation.engine.v1.usage import devices_in_use, driver_usage


def _claim(*results: dict) -> dict:
    return {"status": {"allocation": {"devices": {"results": list(results)}}}}


def _result(device: str, **extra) -> dict:
    return {"request": "r", "driver": "d.example.com", "pool": "p", "device": device, **extra}


def _slice(*names: str, driver: str = "d.example.com", pool: str = "p") -> dict:
    return {"spec": {"driver": driver, "pool": {"name": pool},
                     "devices": [{"name": n} for n in names]}}


def test_admin_access_results_block_nobody_and_a_shared_device_counts_once():
    claims = [_claim(_result("a")), _claim(_result("b", adminAccess=True)),
              _claim(_result("c", shareID="x")), _claim(_result("c", shareID="y")), {}]
    assert devices_in_use(claims) == {("d.example.com", "p", "a"), ("d.example.com", "p", "c")}
    slices = [_slice("a", "b", "c"), _slice("a", pool="other"), _slice(driver="e.example.com")]
    assert driver_usage(slices, claims) == {"d.example.com": (2, 4), "e.example.com": (0, 0)}
