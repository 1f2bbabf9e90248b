"""The preflight of one Allocate call and its plan (docs/v1.md, search): class checks,
fatal request and constraint errors, and claims prepared once per pod (``preflight.Plan``)."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError, UnschedulableError
from allocation.engine.v1.search import Search
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    device_class,
    first_available,
    node,
    picked,
    request,
    slice_,
)


def _devices(n: int, **attrs) -> list[dict]:
    return [device(f"dev-{i}", **attrs) for i in range(n)]


def test_unknown_class_is_unschedulable():
    a = allocator([slice_("s1", _devices(1))])
    with pytest.raises(UnschedulableError, match="request req: device class nope does not"):
        a.allocate(node(), [claim("c0", request(cls="nope"))])


def test_empty_selector_is_fatal():
    a = allocator([slice_("s1", _devices(1))])
    c = claim("c0", {"name": "req", "exactly": {"deviceClassName": "gpu", "count": 1,
                                                "selectors": [{}]}})
    with pytest.raises(AllocationError, match="CEL expression empty"):
        a.allocate(node(), [c])


def test_too_many_devices_is_fatal():
    a = allocator([slice_("s1", _devices(1))])
    with pytest.raises(AllocationError, match="number of requested devices 33 exceeds"):
        a.allocate(node(), [claim("c0", request(count=33))])


def test_admin_access_disabled_is_fatal():
    a = allocator([slice_("s1", _devices(1))], release="1.35", gates="DRAAdminAccess=false")
    with pytest.raises(AllocationError, match="admin access is requested"):
        a.allocate(node(), [claim("c0", request(adminAccess=True))])


def test_distinct_attribute_is_an_empty_constraint_outside_experimental():
    a = allocator([slice_("s1", _devices(1, numa=0))], release="1.35")
    c = claim("c0", constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    with pytest.raises(AllocationError, match="empty constraint"):
        a.allocate(node(), [c])


def test_prioritized_list_disabled_is_fatal():
    a = allocator([slice_("s1", _devices(1))], gates="DRAPrioritizedList=false")
    with pytest.raises(AllocationError, match="DRAPrioritizedList feature is disabled"):
        a.allocate(node(), [claim("c0", first_available("r", request("s")))])


def _two_nodes(release: str) -> object:
    # node-1 cannot fit two devices; node-2 can, by the release's distinctAttribute reading
    slices = [slice_("a", [device("a0", model="x")], node="node-1"),
              slice_("b", [device("b0", model="x"), device("b1", model="x"),
                           device("b2", model="y")], node="node-2")]
    return allocator(slices, release=release, gates="DRAConsumableCapacity=true")


@pytest.mark.parametrize(("release", "want"), [("1.34", [[("req", "b0"), ("req", "b1")]]),
                                               ("1.35", [[("req", "b0"), ("req", "b2")]])])
def test_an_attempts_second_node_searches_the_plan_like_a_first_call(release, want):
    c = claim("c0", request(count=2), constraints=[{"distinctAttribute": f"{DRIVER}/model"}])
    attempt = _two_nodes(release).attempt([c])
    assert not attempt.allocate(node("node-1")).fits
    # the claims prepared on node-1 (its constraint tried a0 there) start empty on node-2
    assert picked(attempt.allocate(node("node-2"))) == want
    assert picked(_two_nodes(release).allocate(node("node-2"), [c])) == want


def test_a_plan_is_searched_again_with_fresh_constraints():
    a = allocator([slice_("a", [device("a0", numa=0), device("a1", numa=1)], node="node-1"),
                   slice_("b", [device("b0", numa=1), device("b1", numa=1)], node="node-2")])
    c = claim("c0", request(count=2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    first = Search(a, node("node-1"), [c])
    assert not first.run().fits
    assert first.plan.reusable and first.plan.exact_only and first.plan.needs_devices
    second = Search(a, node("node-2"), [c], first.plan)
    assert picked(second.run()) == [[("req", "b0"), ("req", "b1")]]
    third = Search(a, node("node-2"), [c], first.plan)  # the plan is not used up
    assert picked(third.run()) == [[("req", "b0"), ("req", "b1")]]


def test_what_a_plan_knows_of_its_claims():
    a = allocator([slice_("s1", _devices(2))])

    def plan(*claims):
        search = Search(a, node(), list(claims))
        search.run()
        return search.plan

    every = plan(claim("c0", request(mode="All")))
    assert not every.reusable and not every.exact_only  # All lists the node's devices
    admin = plan(claim("c1", request(adminAccess=True)))
    assert admin.reusable and not admin.exact_only
    empty = plan({**claim("c2"), "spec": {"devices": {}}})
    assert empty.exact_only and not empty.needs_devices
    mixed = plan(claim("c3"), claim("c4", request(mode="All")))
    assert not mixed.reusable and mixed.needs_devices


def test_an_attempt_prepares_again_after_set_classes():
    a = allocator([slice_("s1", _devices(1), node="node-1"),
                   slice_("s2", _devices(1), node="node-2")])
    a.commit(claim("x"), a.allocate(node("node-1"), [claim("x")]).allocations[0])
    attempt = a.attempt([claim("c0")])
    assert not attempt.allocate(node("node-1")).fits
    a.set_classes([device_class("gpu", 'device.driver == "other.example.com"')])
    assert not attempt.allocate(node("node-2")).fits  # the new class selects nothing
    a.set_classes([])
    with pytest.raises(UnschedulableError, match="device class gpu does not exist"):
        attempt.allocate(node("node-2"))
