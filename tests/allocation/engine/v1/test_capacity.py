"""Consumable capacity (KEP-5075) in the v1 allocator, with cases of upstream's table."""

from __future__ import annotations

from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    node,
    picked,
    request,
    slice_,
)


def _shared(name: str, value: str = "10", policy: dict | None = None, **attrs) -> dict:
    cap: dict = {"value": value}
    if policy:
        cap["requestPolicy"] = policy
    return {"name": name, "allowMultipleAllocations": True,
            "capacity": {"bw": cap}, **attrs}


def _cap(name: str = "req", amount: str = "4", **kw) -> dict:
    return request(name, capacity={"requests": {"bw": amount}}, **kw)


def test_shared_device_serves_several_claims_with_share_ids():
    a = allocator([slice_("s1", [_shared("nic")])])
    out = a.allocate(node(), [claim("c0", _cap()), claim("c1", _cap())])
    r0 = out.allocations[0]["devices"]["results"][0]
    r1 = out.allocations[1]["devices"]["results"][0]
    assert r0["device"] == r1["device"] == "nic"
    assert r0["consumedCapacity"] == {"bw": "4"}
    assert r0["shareID"] != r1["shareID"]
    assert not a.allocate(node(), [claim("c0", _cap()), claim("c1", _cap()),
                                   claim("c2", _cap())]).fits


def test_share_ids_are_deterministic():
    a = allocator([slice_("s1", [_shared("nic")])])
    first = a.allocate(node(), [claim("c0", _cap())])
    again = a.allocate(node(), [claim("c0", _cap())])
    assert first.allocations == again.allocations


def test_recorded_shared_consumption_counts():
    a = allocator([slice_("s1", [_shared("nic")])])
    a.commit(claim("c0"), a.allocate(node(), [claim("c0", _cap(amount="8"))]).allocations[0])
    assert not a.allocate(node(), [claim("c1", _cap())]).fits
    assert a.allocate(node(), [claim("c1", _cap(amount="2"))]).fits


def test_no_request_consumes_the_default_or_everything():
    a = allocator([slice_("s1", [_shared("nic")])])
    out = a.allocate(node(), [claim("c0")])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "10"}
    policy = {"default": "2", "validRange": {"min": "2", "step": "2"}}
    a = allocator([slice_("s1", [_shared("nic", policy=policy)])])
    out = a.allocate(node(), [claim("c0")])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "2"}


def test_range_policy_rounds_up_to_the_step():
    policy = {"default": "2", "validRange": {"min": "2", "max": "8", "step": "2"}}
    a = allocator([slice_("s1", [_shared("nic", policy=policy)])])
    out = a.allocate(node(), [claim("c0", _cap(amount="3"))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "4"}
    assert not a.allocate(node(), [claim("c0", _cap(amount="9"))]).fits


def test_valid_values_round_up():
    policy = {"default": "1", "validValues": ["1", "5", "10"]}
    a = allocator([slice_("s1", [_shared("nic", policy=policy)])])
    out = a.allocate(node(), [claim("c0", _cap(amount="2"))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "5"}
    # a request equal to a valid value takes that value, not the next one
    out = allocator([slice_("s1", [_shared("nic", policy=policy)])]).allocate(
        node(), [claim("c1", _cap(amount="5"))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "5"}


def test_unknown_capacity_request_skips_the_device():
    a = allocator([slice_("s1", [_shared("nic")])])
    c = claim("c0", request(capacity={"requests": {"other": "1"}}))
    assert not a.allocate(node(), [c]).fits


def test_one_request_cannot_fill_two_slots_of_one_shared_device_in_136():
    a = allocator([slice_("s1", [_shared("nic")])])
    assert not a.allocate(node(), [claim("c0", _cap(count=2))]).fits


def test_capacity_is_a_filter_on_dedicated_devices():
    dev = {"name": "d", "capacity": {"bw": {"value": "10"}}}
    a = allocator([slice_("s1", [dev])])
    out = a.allocate(node(), [claim("c0", _cap(amount="4"))])
    assert "shareID" not in out.allocations[0]["devices"]["results"][0]
    assert not a.allocate(node(), [claim("c0", _cap(amount="11"))]).fits


def test_multi_allocatable_backtrack():
    # upstream "consumable-capacity-with-multi-allocatable-device-backtrack"
    small = _shared("dev-2", "2", attributes={"s": {"string": "v1"}})
    large = _shared("dev-1", "4", attributes={"s": {"string": "v2"}})
    a = allocator([slice_("s1", [small, large])])
    c0 = claim("c0", _cap("r0", "2"), _cap("r1", "2"),
               constraints=[{"matchAttribute": f"{DRIVER}/s"}])
    out = a.allocate(node(), [c0, claim("c1", _cap("r0", "2"))])
    assert picked(out) == [[("r0", "dev-1"), ("r1", "dev-1")], [("r0", "dev-2")]]


def test_zero_default_policy_consumes_zero():
    # upstream "consumable-capacity-multi-allocatable-device-with-zero-request-policy"
    dev = _shared("nic", "1", policy={"default": "0", "validValues": ["0"]})
    a = allocator([slice_("s1", [dev])])
    out = a.allocate(node(), [claim("c0"), claim("c1")])
    for alloc in out.allocations:
        assert alloc["devices"]["results"][0]["consumedCapacity"] == {"bw": "0"}
    # "...-violates-zero-request-policy": asking 1 is no valid value
    assert not a.allocate(node(), [claim("c0", _cap(amount="1"))]).fits


def test_all_mode_filters_out_devices_without_the_capacity():
    # upstream "...-allocation-mode-all-filter-out-no-capacity"
    with_cap = _shared("d1", "2")
    without = {"name": "d2", "allowMultipleAllocations": True}
    a = allocator([slice_("s1", [with_cap, without])])
    out = a.allocate(node(), [claim("c0", _cap(amount="2", mode="All"))])
    assert picked(out) == [[("req", "d1")]]


def test_allocated_capacity_leaves_the_remainder():
    # upstream "...-with-allocated-capacity-use-remaining"
    policy = {"default": "2", "validRange": {"min": "2", "max": "4", "step": "2"}}
    a = allocator([slice_("s1", [_shared("nic", "4", policy=policy)])])
    a.book.commit("default/x", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "nic", "shareID": "s",
         "consumedCapacity": {"bw": "2"}}]}})
    out = a.allocate(node(), [claim("c0", _cap(amount="2"))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "2"}
    assert not a.allocate(node(), [claim("c0", _cap(amount="3"))]).fits
