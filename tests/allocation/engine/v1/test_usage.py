"""allocation.engine.v1.usage: devices in use per driver (docs/v1.md, "The console")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.v1.usage import DeviceUsage, devices_in_use, driver_usage


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


_DEVICES = st.sampled_from(["a", "b", "c", "d"])
_CLAIMS = st.lists(st.lists(st.tuples(_DEVICES, st.booleans()), max_size=3).map(
    lambda picks: _claim(*[_result(d, adminAccess=True) if admin else _result(d)
                           for d, admin in picks])), max_size=6)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(_CLAIMS, _CLAIMS, st.data())
def test_a_forks_usage_counted_from_the_settled_one_equals_a_count_afresh(before, added, data):
    """Claims replaced (some of ``before`` removed, ``added`` new): shared devices, admin
    results, a device listed by two slices, one listed by none ("d")."""
    slices = [_slice("a", "b", "c"), _slice("a", "b"), _slice(driver="e.example.com")]
    removed = data.draw(st.lists(st.sampled_from(before), unique_by=id) if before
                        else st.just([]))
    after = [c for c in before if not any(c is r for r in removed)] + added
    usage = DeviceUsage(slices, before)
    assert usage.changed(removed, added) == driver_usage(slices, after)
    assert usage.totals == driver_usage(slices, before)  # the settled count is kept as it was
