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
