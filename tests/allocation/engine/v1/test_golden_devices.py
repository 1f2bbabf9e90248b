"""Golden tests of spec sections 3.4 (shared counters), 3.5 (consumable capacity), 3.6
(taints), 3.8 (binding conditions): small clusters, exact results."""

from __future__ import annotations

import pytest

from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    node,
    picked,
    request,
    slice_,
)


def _counters(value: str) -> dict:
    return slice_("counters", [], count=2, pool="node-1", sharedCounters=[
        {"name": "set", "counters": {"mem": {"value": value}}}])

def test_shared_device_without_capacities_is_checked_against_counters_again():
    # 3.4/3.5: the counter check is skipped only for a device whose capacity is already
    # consumed (upstream's AggregatedCapacity: shared results with consumedCapacity).
    # A multi-allocatable device without capacities gets no consumedCapacity, so a second
    # claim checks its counters again; from 1.36 its first allocation already counts
    multi = {"name": "m", "allowMultipleAllocations": True,
             "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "8"}}}]}
    slices = [_counters("8"), slice_("devices", [multi], count=2)]
    a = allocator(slices)
    first = a.allocate(node(), [claim("c0")])
    assert picked(first) == [[("req", "m")]]
    assert "consumedCapacity" not in first.allocations[0]["devices"]["results"][0]
    a.commit(claim("c0"), first.allocations[0])
    assert not a.allocate(node(), [claim("c1")]).fits
    a = allocator(slices, release="1.35", gates="AllAlpha=true")
    a.commit(claim("c0"), a.allocate(node(), [claim("c0")]).allocations[0])
    assert picked(a.allocate(node(), [claim("c1")])) == [[("req", "m")]]


def _eats(name: str, value: str = "4", **extra) -> dict:
    return {"name": name, "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": value}}}], **extra}


def _spread() -> list[dict]:
    """Pool ``shared``: a counter set of 4 and one 4-unit partition per node."""
    return [slice_("counters", [], node=None, pool="shared", count=3, sharedCounters=[
        {"name": "set", "counters": {"mem": {"value": "4"}}}]),
            slice_("a", [_eats("p1")], node="node-1", pool="shared", count=3),
            slice_("b", [_eats("p2")], node="node-2", pool="shared", count=3)]


def test_counters_are_pool_wide_across_nodes():
    # 3.4: a device allocated on another node consumes the pool's counters
    a = allocator(_spread())
    out = a.allocate(node("node-1"), [claim("c0")])
    assert picked(out) == [[("req", "p1")]]
    a.commit(claim("c0"), out.allocations[0])
    assert not a.allocate(node("node-2"), [claim("c1")]).fits
    a.release(claim("c0"))
    assert picked(a.allocate(node("node-2"), [claim("c1")])) == [[("req", "p2")]]


def test_admin_allocations_do_not_consume_counters():
    # 3.4: "admin and shared allocations not counted" (3.7: admin counts as unallocated)
    a = allocator(_spread())
    out = a.allocate(node("node-1"), [claim("c0", request(adminAccess=True))])
    a.commit(claim("c0"), out.allocations[0])
    assert picked(a.allocate(node("node-2"), [claim("c1")])) == [[("req", "p2")]]


def test_partly_consumed_multi_allocatable_device_skips_the_counter_check():
    # 3.4: "A multi-allocatable device already partly consumed skips the check"
    multi = _eats("m", "4", allowMultipleAllocations=True,
                  capacity={"bw": {"value": "10"}})
    over = _eats("x", "9")
    slices = [_counters("4"), slice_("devices", [multi, over], count=2)]
    a = allocator(slices)
    c0 = claim("c0", request(capacity={"requests": {"bw": "2"}}))
    first = a.allocate(node(), [c0])
    a.commit(c0, first.allocations[0])
    # x's 9 units over-commit nothing yet; make the pool over-committed through the book
    a.book.commit("default/over", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "x"}]}})
    c1 = claim("c1", request(capacity={"requests": {"bw": "2"}}))
    assert picked(a.allocate(node(), [c1])) == [[("req", "m")]]


def _policy_device(policy: dict, value: str = "10") -> dict:
    return {"name": "m", "allowMultipleAllocations": True,
            "capacity": {"bw": {"value": value, "requestPolicy": policy}}}


def test_request_above_the_range_max_skips_the_device():
    # 3.5: "the rounded amount violates the policy (above max ...)"
    dev = _policy_device({"default": "2", "validRange": {"min": "2", "max": "4",
                                                           "step": "2"}})
    a = allocator([slice_("s", [dev])])
    assert not a.allocate(node(), [claim("c0", request(capacity={"requests": {"bw": "5"}}))]).fits
    out = a.allocate(node(), [claim("c1", request(capacity={"requests": {"bw": "3"}}))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "4"}


def test_request_above_every_valid_value_skips_the_device():
    # 3.5: validValues -> first value >= request; none -> the request itself, not valid
    dev = _policy_device({"default": "1", "validValues": ["1", "4"]})
    a = allocator([slice_("s", [dev])])
    assert not a.allocate(node(), [claim("c0", request(capacity={"requests": {"bw": "5"}}))]).fits
    out = a.allocate(node(), [claim("c1", request(capacity={"requests": {"bw": "2"}}))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": "4"}


def test_consumed_capacity_lists_every_capacity_zeros_included():
    # 3.5: "consumedCapacity for every capacity, zeros included"
    dev = {"name": "m", "allowMultipleAllocations": True, "capacity": {
        "bw": {"value": "10"},
        "slots": {"value": "4", "requestPolicy": {"default": "0",
                                                  "validValues": ["0", "1"]}}}}
    a = allocator([slice_("s", [dev])])
    out = a.allocate(node(), [claim("c0", request(capacity={"requests": {"bw": "3"}}))])
    result = out.allocations[0]["devices"]["results"][0]
    assert result["consumedCapacity"] == {"bw": "3", "slots": "0"}
    assert result["shareID"]


TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.mark.parametrize("toleration, tolerated", [
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Equal", "value": "w"}, False),
    ({"key": "k", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),  # empty key: every key
    ({"operator": "Exists", "effect": "NoExecute"}, False),  # another effect
    ({"key": "other", "operator": "Exists"}, False),
    ({"key": "k", "operator": "Equal", "value": "v", "effect": ""}, True),  # empty: any
])
def test_toleration_matching(toleration, tolerated):
    # 3.6: effect empty or equal, key empty or equal, operator Exists or value equal
    a = allocator([slice_("s", [{"name": "d0", "taints": [TAINT]}])])
    out = a.allocate(node(), [claim("c0", request(tolerations=[toleration]))])
    assert out.fits is tolerated


@pytest.mark.parametrize("effect, blocks", [("NoSchedule", True), ("NoExecute", True),
                                            ("None", False), ("Whatever", False)])
def test_only_no_schedule_and_no_execute_block(effect, blocks):
    # 3.6: None and unknown effects are ignored
    a = allocator([slice_("s", [{"name": "d0", "taints": [{**TAINT, "effect": effect}]}])])
    assert a.allocate(node(), [claim("c0")]).fits is not blocks


def test_binding_conditions_are_copied_into_the_result():
    # 3.8
    dev = {"name": "d0", "bindingConditions": ["ready"],
           "bindingFailureConditions": ["failed"]}
    a = allocator([slice_("s", [dev])])
    result = a.allocate(node(), [claim("c0")]).allocations[0]["devices"]["results"][0]
    assert (result["bindingConditions"], result["bindingFailureConditions"]) == (
        ["ready"], ["failed"])
    assert not allocator([slice_("s", [dev])], release="1.35").allocate(
        node(), [claim("c0")]).fits


@pytest.mark.parametrize("capacity, request_, consumed", [
    ({"value": "4096"}, None, "4096"),  # DecimalSI stays decimal (not 4Ki)
    ({"value": "8Gi"}, "1024", "1024"),  # the request's format
    ({"value": "8Gi"}, "1.5Gi", "1536Mi"),
    ({"value": "8Gi"}, "0.5Ki", "512"),  # BinarySI below 1024 is written as decimal
    ({"value": "10"}, "0.5", "500m"),
    ({"value": "8k"}, "12e2", "1200"),
    ({"value": "8k", "requestPolicy": {"default": "1e3", "validRange": {"min": "1e3"}}},
     None, "1e3"),  # the default's DecimalExponent
    ({"value": "8Gi", "requestPolicy": {"default": "1024", "validRange": {
        "min": "1024", "step": "1024"}}}, "1500", "2Ki"),  # a rounded step is BinarySI
    ({"value": "8Gi", "requestPolicy": {"default": "1024", "validRange": {
        "min": "1024", "step": "1024"}}}, "10", "1024"),  # below min: the min's format
    ({"value": "8k", "requestPolicy": {"default": "1k", "validValues": ["1k", "2k"]}},
     "1500", "2k"),  # the valid value's format
])
def test_consumed_capacity_is_written_in_upstreams_quantity_format(capacity, request_,
                                                                    consumed):
    # 3.5 / section 4: consumedCapacity holds Quantities; apimachinery writes each in the
    # canonical form of the format it was parsed with (or BinarySI for a rounded step)
    dev = {"name": "m", "allowMultipleAllocations": True, "capacity": {"bw": capacity}}
    a = allocator([slice_("s", [dev])])
    extra = {"capacity": {"requests": {"bw": request_}}} if request_ else {}
    out = a.allocate(node(), [claim("c0", request(**extra))])
    assert out.allocations[0]["devices"]["results"][0]["consumedCapacity"] == {"bw": consumed}
