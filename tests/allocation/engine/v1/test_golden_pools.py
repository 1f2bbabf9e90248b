"""Golden tests of spec section 3.2 (visible pools) and 3.10 (the allocation's
nodeSelector), written from the spec text: small clusters, exact results."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import INVALID_POOLS, AllocationError
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    node,
    picked,
    request,
    slice_,
)


def _eats(name: str, value: str = "4") -> dict:
    return {"name": name, "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": value}}}]}


def _counter_slice(value: str = "4", **spec) -> dict:
    return slice_("counters", [], pool="shared", count=2, node=None, **spec,
                  sharedCounters=[{"name": "set", "counters": {"mem": {"value": value}}}])


def test_counter_slice_with_a_node_name_is_kept_on_every_node():
    # 3.2 step 2: "any sharedCounters slice" is kept, whatever node it names
    # (1.36: NewAllocator files it under slicesShared; 1.35 reads every slice)
    devices = slice_("devices", [_eats("p0")], pool="shared", count=2, node=None,
                     allNodes=True)
    a = allocator([_counter_slice(nodeName="node-1"), devices])
    assert picked(a.allocate(node("node-2"), [claim("c0")])) == [[("req", "p0")]]


def test_invalid_pool_with_binding_conditions_is_not_moved_last():
    # upstream's invalid pools carry no slices, so only usable pools with
    # binding-condition devices go last; the All preflight names the first bad pool
    bound = {"name": "x", "bindingConditions": ["ready"],
             "bindingFailureConditions": ["failed"]}
    first = slice_("a", [bound, dict(bound)], pool="a-pool")
    second = slice_("b", [device("y"), device("y")], pool="b-pool")
    a = allocator([first, second])
    with pytest.raises(AllocationError, match=f"resource pool {DRIVER}/a-pool is currently "
                                              "invalid"):
        a.allocate(node(), [claim("c0", request(mode="All"))])
    assert a.allocate(node(), [claim("c1")]).reason == INVALID_POOLS


def test_partitionable_gate_off_drops_per_device_and_counter_slices():
    # 3.2 step 1
    per_device = slice_("per-device", [{"name": "p0", "nodeName": "node-1"}], node=None,
                        pool="pd", perDeviceNodeSelection=True)
    plain = slice_("plain", [device("d0")], pool="plain")
    a = allocator([per_device, plain], release="1.35")
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "d0")]]
    a = allocator([per_device, plain])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "p0")]]


def test_pool_spread_over_nodes_is_complete_when_all_its_slices_exist():
    # 3.2 step 4: the kept slices (1) differ from resourceSliceCount (2), so all cluster
    # slices of the pool are counted: 2, complete
    mine = slice_("a", [device("d0")], node="node-1", pool="p", count=2)
    other = slice_("b", [device("d1")], node="node-2", pool="p", count=2)
    a = allocator([mine, other])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "d0")]]
    a = allocator([mine])
    out = a.allocate(node(), [claim("c0")])
    assert (out.fits, out.reason) == (False, "cannot allocate all claims")


def test_higher_generation_elsewhere_drops_the_pool():
    # 3.2 step 4: "a higher generation drops the pool"
    mine = slice_("a", [device("d0")], node="node-1", pool="p", count=2, generation=1)
    newer = slice_("b", [device("d1")], node="node-2", pool="p", count=1, generation=2)
    a = allocator([mine, newer])
    out = a.allocate(node(), [claim("c0")])
    assert (out.fits, out.reason) == (False, "cannot allocate all claims")
    # the obsolete pool is not even incomplete: an All request finds no device, no error
    assert not a.allocate(node(), [claim("c1", request(mode="All"))]).fits


def test_duplicate_counter_set_name_makes_the_pool_invalid():
    # 3.2 step 5
    sets = [{"name": "set", "counters": {"mem": {"value": "4"}}}]
    slices = [slice_("c1", [], node=None, pool="node-1", count=3, sharedCounters=sets),
              slice_("c2", [], node=None, pool="node-1", count=3, sharedCounters=sets),
              slice_("devices", [_eats("p0")], count=3)]
    out = allocator(slices).allocate(node(), [claim("c0")])
    assert (out.fits, out.reason) == (False, INVALID_POOLS)


def test_device_of_a_slice_on_another_node_with_an_unknown_counter_invalidates_the_pool():
    # 3.2 step 5: "checked on non-targeting slices too"
    bad = {"name": "x", "consumesCounters": [
        {"counterSet": "set", "counters": {"nope": {"value": "1"}}}]}
    slices = [_counter_slice(), slice_("a", [_eats("p0")], node="node-1", pool="shared",
                                       count=3),
              slice_("b", [bad], node="node-2", pool="shared", count=3)]
    slices[0]["spec"]["pool"]["resourceSliceCount"] = 3
    out = allocator(slices).allocate(node(), [claim("c0")])
    assert (out.fits, out.reason) == (False, INVALID_POOLS)


def test_all_nodes_slice_gives_no_node_selector():
    # 3.10: allNodes only -> no selector
    a = allocator([slice_("s", [device("d0")], node=None, pool="fabric", allNodes=True)])
    out = a.allocate(node(), [claim("c0")])
    assert "nodeSelector" not in out.allocations[0]


def test_binds_to_node_forces_the_node_name_selector():
    # 3.10 / 3.8: bindsToNode -> matchFields metadata.name In [node]
    dev = {"name": "d0", "bindsToNode": True, "bindingConditions": ["ready"],
           "bindingFailureConditions": ["failed"]}
    a = allocator([slice_("s", [dev], node=None, pool="fabric", allNodes=True)])
    allocation = a.allocate(node("node-7"), [claim("c0")]).allocations[0]
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-7"]}]}]}
    assert allocation["devices"]["results"][0]["bindingConditions"] == ["ready"]


def test_selector_terms_of_slice_and_device_merge_without_duplicates():
    # 3.10: the single terms merge into one, requirements de-duplicated by key, operator
    # and value set
    rack = {"key": "rack", "operator": "In", "values": ["r1", "r2"]}
    same = {"key": "rack", "operator": "In", "values": ["r2", "r1"]}
    zone = {"key": "zone", "operator": "Exists"}
    s1 = slice_("s1", [device("d0")], node=None, pool="p1", nodeSelector={
        "nodeSelectorTerms": [{"matchExpressions": [rack]}]})
    s2 = slice_("s2", [{"name": "d1", "nodeSelector": {"nodeSelectorTerms": [
        {"matchExpressions": [same, zone]}]}}], node=None, pool="p2",
        perDeviceNodeSelection=True)
    a = allocator([s1, s2])
    out = a.allocate(node(rack="r1", zone="z"), [claim("c0", request(count=2))])
    assert out.allocations[0]["nodeSelector"] == {"nodeSelectorTerms": [
        {"matchExpressions": [rack, zone]}]}
