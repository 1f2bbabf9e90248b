"""Shared counters of partitionable devices (KEP-4815) in the v1 allocator (docs/v1.md)."""

from __future__ import annotations

from allocation.engine.v1 import Allocator
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device_class,
    fake_compile,
    node,
    picked,
    request,
    slice_,
)


def _counters(value: str = "8Gi") -> dict:
    return slice_("counters", [], sharedCounters=[
        {"name": "gpu-0", "counters": {"memory": {"value": value}}}], count=2, pool="node-1")


def _part(name: str, memory: str, **extra) -> dict:
    return {"name": name, "consumesCounters": [
        {"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}], **extra}


def _devices(*devs) -> dict:
    return slice_("devices", list(devs), count=2)


def test_counters_limit_the_partitions():
    a = allocator([_counters(), _devices(_part("whole", "8Gi"), _part("half-0", "4Gi"),
                                         _part("half-1", "4Gi"))])
    out = a.allocate(node(), [claim("c0")])
    assert picked(out) == [[("req", "whole")]]
    a.commit(claim("c0"), out.allocations[0])
    assert not a.allocate(node(), [claim("c1")]).fits
    a.release(claim("c0"))
    assert picked(a.allocate(node(), [claim("c1", request(count=2))])) == [
        [("req", "half-0"), ("req", "half-1")]]


def test_counters_are_checked_within_one_call():
    a = allocator([_counters(), _devices(_part("whole", "8Gi"), _part("half-0", "4Gi"))])
    assert not a.allocate(node(), [claim("c0", request(count=2))]).fits


def test_overallocated_counter_blocks_every_consumer():
    # upstream "partitionable-devices-overallocated-capacity-pool"
    a = allocator([_counters("18Gi"), _devices(_part("small", "4Gi"), _part("big", "20Gi"))])
    a.book.commit("default/x", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "big"}]}})
    assert not a.allocate(node(), [claim("c0")]).fits


def test_an_overallocated_set_blocks_even_devices_that_consume_another():
    # spec 3.4: a device is refused when any counter of any set of the pool would go
    # negative, one it does not consume included (upstream's check walks every set)
    sets = slice_("counters", [], sharedCounters=[
        {"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}},
        {"name": "gpu-1", "counters": {"memory": {"value": "8Gi"}}}], count=2, pool="node-1")
    other = {"name": "other", "consumesCounters": [
        {"counterSet": "gpu-1", "counters": {"memory": {"value": "1Gi"}}}]}
    a = allocator([sets, _devices(_part("big", "20Gi"), other)])
    a.book.commit("default/x", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "big"}]}})
    assert not a.allocate(node(), [claim("c0")]).fits


def test_counters_need_the_partitionable_gate():
    a = allocator([_counters(), _devices(_part("whole", "8Gi"))], release="1.35")
    assert not a.allocate(node(), [claim("c0")]).fits


def test_unknown_counter_set_makes_the_pool_invalid():
    bad = {"name": "x", "consumesCounters": [{"counterSet": "nope", "counters": {
        "memory": {"value": "1"}}}]}
    a = allocator([_counters(), _devices(bad)])
    assert a.allocate(node(), [claim("c0")]).reason == "invalid resource pools were encountered"


def test_per_device_node_selection():
    devs = [{"name": "a", "nodeName": "node-2"}, {"name": "b", "nodeName": "node-1"}]
    a = allocator([slice_("s", devs, node=None, pool="p", perDeviceNodeSelection=True)])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "b")]]
    assert picked(a.allocate(node("node-2"), [claim("c0")])) == [[("req", "a")]]


def test_allocators_sharing_an_index_keep_their_own_counters():
    """Pools (and their counter cache) are shared by the allocators of a state and its forks
    (engine/v1_pools.py), each with its own book: one's allocations never count for another
    even at the same book version of the pool."""
    a = allocator([_counters(), _devices(_part("whole", "8Gi"), _part("half-0", "4Gi"),
                                         _part("half-1", "4Gi"))])
    b = Allocator(a.profile, fake_compile, classes=[device_class()], index=a.index)
    a.commit(claim("c0"), a.allocate(node(), [claim("c0")]).allocations[0])  # whole
    assert picked(b.allocate(node(), [claim("c1")])) == [[("req", "whole")]]
    b.book.commit("default/x", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "half-0"}]}})
    assert not a.allocate(node(), [claim("c2")]).fits  # a: whole taken, nothing left
    # b, at the same version of the pool as a: half-0 taken, 4Gi left for half-1
    assert picked(b.allocate(node(), [claim("c3")])) == [[("req", "half-1")]]
