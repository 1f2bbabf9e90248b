"""Golden tests of spec section 3.2 (visible pools) and 3.10 (the allocation's
nodeSelector), written from the spec text: small clusters, exact results."""

from __future__ import annotations

from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    node,
    picked,
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
