"""Golden tests of spec sections 3.4 (shared counters), 3.5 (consumable capacity), 3.6
(taints), 3.8 (binding conditions): small clusters, exact results."""

from __future__ import annotations

from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    node,
    picked,
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
