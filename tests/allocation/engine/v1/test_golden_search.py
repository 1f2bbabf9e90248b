"""Golden tests of spec section 3.3 (search), 3.7 (admin access) and 3.12 (differences
between releases), written from the spec text: small clusters, exact results."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError, UnschedulableError
from tests.allocation.engine.v1.builders import (
    DRIVER,
    allocator,
    claim,
    device,
    first_available,
    node,
    picked,
    request,
    slice_,
)


def _empty(name: str) -> dict:
    c = claim(name)
    c["spec"]["devices"]["requests"] = []
    return c


def test_claim_without_requests_fits_on_a_node_without_pools():
    # 3.3: the search walks claims -> requests; a claim with none is done at once
    a = allocator([slice_("s", [device("d0")], node="node-1")])
    out = a.allocate(node("node-2"), [_empty("c0")])
    # ``results`` is omitempty in Go's DeviceAllocationResult: written ``devices: {}``
    assert out.allocations == [{"devices": {}}]
    assert a.first_fit([node("node-2"), node("node-3")], [_empty("c1")])[0] == node("node-2")


def test_first_fit_order_is_pool_then_slice_name_then_device_array():
    # 3.2 step 6 / 3.3: pools by (driver, pool), slices by name, devices in array order
    slices = [slice_("z", [device("z0"), device("z1")], pool="b-pool"),
              slice_("y", [device("y1"), device("y0")], pool="a-pool", count=2),
              slice_("x", [device("x0")], pool="a-pool", count=2)]
    a = allocator(slices)
    assert picked(a.allocate(node(), [claim("c0", request(count=4))])) == [
        [("req", "x0"), ("req", "y1"), ("req", "y0"), ("req", "z0")]]


def test_empty_constraint_is_fatal_in_preflight():
    # 3.3 preflight: "an empty constraint"
    a = allocator([slice_("s", [device("d0")])])
    with pytest.raises(AllocationError, match=r"constraint #0: empty constraint"):
        a.allocate(node(), [claim("c0", constraints=[{"requests": ["req"]}])])


def test_capacity_request_with_its_gate_off_is_fatal_where_the_variant_knows_it():
    # 3.3 preflight: "capacity with its gate off" -- checked by the variants that know
    # consumable capacity (1.36 incubating); 1.35's incubating ignores the field
    c = claim("c0", request(capacity={"requests": {"mem": "1"}}))
    a = allocator([slice_("s", [device("d0")])], gates="DRAConsumableCapacity=false")
    with pytest.raises(AllocationError, match="DRAConsumableCapacity feature is disabled"):
        a.allocate(node(), [c])
    a = allocator([slice_("s", [device("d0")])], release="1.35")
    assert picked(a.allocate(node(), [c])) == [[("req", "d0")]]


def test_all_request_on_an_invalid_pool_is_fatal():
    # 3.3 preflight: an All request while a visible pool is invalid
    a = allocator([slice_("s", [device("d0"), device("d0")])])
    with pytest.raises(AllocationError, match="is currently invalid"):
        a.allocate(node(), [claim("c0", request(mode="All"))])


def test_class_selectors_run_before_request_selectors_and_stop_at_false():
    # 3.3 step 2 and section 2: lazy evaluation; the request selector would be a runtime
    # error on the other driver's device, but the class selector is false first
    other = slice_("o", [device("n0")], driver="nic.example.com", pool="a")
    mine = slice_("m", [device("d0", model="x")], pool="b")
    a = allocator([other, mine])
    c = claim("c0", request("req", "gpu", 1, f'device.attributes["{DRIVER}"].model == "x"'))
    assert picked(a.allocate(node(), [c])) == [[("req", "d0")]]


def test_constraint_naming_a_subrequest_covers_only_that_subrequest():
    # 3.3 constraints: "req/sub" covers that subrequest only
    devs = [device("d0", model="a"), device("d1", model="b")]
    a = allocator([slice_("s", devs)])
    only_b = f'device.attributes["{DRIVER}"].model == "b"'
    fa = first_available("r0", request("s0", "gpu", 1, only_b), request("s1"))
    c = claim("c0", request("r1"), fa, constraints=[
        {"requests": ["r1", "r0/s1"], "matchAttribute": f"{DRIVER}/model"}])
    # r1 takes d0 (model a); r0/s0 is not covered, so d1 (model b) is fine for it
    assert picked(a.allocate(node(), [c])) == [[("r1", "d0"), ("r0/s0", "d1")]]


def test_attribute_lookup_uses_the_bare_id_only_in_the_drivers_domain():
    # 3.3 constraints: full name, then the bare id if the domain is the device's driver
    devs = [{"name": "d0", "attributes": {"other.example.com/model": {"string": "a"}}},
            {"name": "d1", "attributes": {"model": {"string": "a"}}}]
    a = allocator([slice_("s", devs)])
    c = claim("c0", constraints=[{"matchAttribute": f"{DRIVER}/model"}])
    assert picked(a.allocate(node(), [c])) == [[("req", "d1")]]
    c = claim("c1", constraints=[{"matchAttribute": "other.example.com/model"}])
    assert picked(a.allocate(node(), [c])) == [[("req", "d0")]]
    # a bare id belongs to the driver's domain only: under another, d1 has no such attribute
    a = allocator([slice_("s", devs[1:])])
    assert a.allocate(node(), [c]).allocations is None


def test_match_attribute_needs_the_same_type():
    # 3.3: later devices need the same type and value (int 1 is not string "1")
    devs = [{"name": "d0", "attributes": {"v": {"int": 1}}},
            {"name": "d1", "attributes": {"v": {"string": "1"}}},
            {"name": "d2", "attributes": {"v": {"int": 1}}}]
    a = allocator([slice_("s", devs)])
    c = claim("c0", request(count=2), constraints=[{"matchAttribute": f"{DRIVER}/v"}])
    assert picked(a.allocate(node(), [c])) == [[("req", "d0"), ("req", "d2")]]
    # bool true is not int 1 either (equal values in Python)
    a = allocator([slice_("s", [devs[0], {"name": "d3", "attributes": {"v": {"bool": True}}}])])
    assert a.allocate(node(), [c]).allocations is None


def test_admin_request_may_take_a_device_an_earlier_normal_claim_took():
    # 3.7: within one call, an admin pick only needs the device not taken by its own claim
    a = allocator([slice_("s", [device("d0")])])
    out = a.allocate(node(), [claim("c0"), claim("c1", request(adminAccess=True))])
    assert picked(out) == [[("req", "d0")], [("req", "d0")]]
    assert out.allocations[1]["devices"]["results"][0]["adminAccess"] is True
    a.commit(claim("c1"), out.allocations[1])
    assert picked(a.allocate(node(), [claim("c2")])) == [[("req", "d0")]]


def test_all_request_fatal_on_every_node_not_only_here():
    # 3.12: an All request meeting an incomplete pool is fatal for the pod
    a = allocator([slice_("s", [device("d0")], node=None, pool="fabric", allNodes=True,
                          count=2)])
    for name in ("node-1", "node-2"):
        with pytest.raises(AllocationError, match="currently being updated"):
            a.allocate(node(name), [claim("c0", request(mode="All", cls="gpu"))])


def test_a_missing_class_of_a_later_claim_wins_over_an_earlier_claims_fatal_error():
    # kube-scheduler's DynamicResources.PreFilter (1.34-1.36) checks the classes of every
    # unallocated claim before the allocator runs: claim c0's All request on an invalid
    # pool would be fatal, but c1's missing class makes the pod unschedulable first
    a = allocator([slice_("s", [device("d0")], count=2),
                   slice_("t", [device("d0")], count=2)])
    c0 = claim("c0", request(mode="All"))
    c1 = claim("c1", first_available("r", request("s0"), request("s1", "nope")))
    with pytest.raises(UnschedulableError, match="^request r/s1: device class nope does "
                                                 "not exist$"):
        a.allocate(node(), [c0, c1])
    with pytest.raises(AllocationError, match="is currently invalid"):
        a.allocate(node(), [c0])
