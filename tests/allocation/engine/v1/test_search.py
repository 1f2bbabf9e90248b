"""Golden tests of the v1 search (docs/v1.md), mirroring upstream's allocator test table
(structured/internal/allocatortesting) where a case exists there."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError
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

CLASS_B = device_class("b", 'device.driver == "other.example.com"')


def _devices(n: int, **attrs) -> list[dict]:
    return [device(f"dev-{i}", **attrs) for i in range(n)]


def test_simple_takes_the_first_device_and_selects_the_node():
    a = allocator([slice_("s1", _devices(2))])
    out = a.allocate(node(), [claim("c0")])
    assert picked(out) == [[("req", "dev-0")]]
    assert out.allocations[0]["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


def test_other_node_sees_nothing():
    a = allocator([slice_("s1", _devices(2))])
    assert a.allocate(node("node-2"), [claim("c0")]).reason == "cannot allocate all claims"


def test_empty_claim_list_fits():
    assert allocator([]).allocate(node(), []).allocations == []


def test_small_and_large_backtracks_across_requests():
    # upstream "small-and-large-backtrack-requests"
    small = device("small", size=1)
    large = device("large", size=2)
    a = allocator([slice_("s1", [small, large])])
    c = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 1'),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 2'))
    assert picked(a.allocate(node(), [c])) == [[("r0", "small"), ("r1", "large")]]
    c = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 1'),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 1'))
    # large listed first: r0 takes it, r1 finds nothing, r0 backtracks to small
    c = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 1'),
              request("r1", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 2'))
    a2 = allocator([slice_("s1", [large, small])])
    assert picked(a2.allocate(node(), [c])) == [[("r0", "small"), ("r1", "large")]]


def test_backtracking_across_claims():
    # upstream "small-and-large-backtrack-claims"
    a = allocator([slice_("s1", [device("large", size=2), device("small", size=1)])])
    c0 = claim("c0", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 1'))
    c1 = claim("c1", request("r0", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 2'))
    assert picked(a.allocate(node(), [c0, c1])) == [[("r0", "small")], [("r0", "large")]]


def test_obsolete_generation_is_ignored():
    a = allocator([slice_("old", [device("old-dev")], generation=1),
                   slice_("new", [device("new-dev")], generation=2)])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "new-dev")]]


def test_devices_split_across_slices_in_name_order():
    a = allocator([slice_("b", [device("from-b")], count=2),
                   slice_("a", [device("from-a")], count=2)])
    assert picked(a.allocate(node(), [claim("c0", request(count=2))])) == [
        [("req", "from-a"), ("req", "from-b")]]


def test_incomplete_pool_is_not_used():
    a = allocator([slice_("a", [device("d")], count=2)])
    assert not a.allocate(node(), [claim("c0")]).fits


def test_incomplete_pool_was_used_by_exact_count_in_134():
    a = allocator([slice_("a", [device("d")], count=2)], release="1.34")
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "d")]]


def test_duplicate_device_name_makes_the_pool_invalid():
    a = allocator([slice_("a", [device("d")], count=2), slice_("b", [device("d")], count=2)])
    assert a.allocate(node(), [claim("c0")]).reason == "invalid resource pools were encountered"
    with pytest.raises(AllocationError):
        allocator([slice_("a", [device("d")], count=2), slice_("b", [device("d")], count=2)],
                  release="1.34").allocate(node(), [claim("c0")])


def test_pools_sorted_by_driver_then_name():
    fabric = slice_("fabric", [device("net")], node=None, pool="fabric", allNodes=True)
    local = slice_("local", [device("gpu")], pool="node-1")
    a = allocator([local, fabric])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "net")]]
    out = a.allocate(node(), [claim("c0")])
    assert "nodeSelector" not in out.allocations[0]  # allNodes only


def test_cel_runtime_error_is_fatal_only_when_reached():
    a = allocator([slice_("s1", [device("d0", size=1), device("d1")])])
    sel = f'device.attributes["{DRIVER}"].size >= 1'
    assert picked(a.allocate(node(), [claim("c0", request("r", "gpu", 1, sel))])) == [
        [("r", "d0")]]
    with pytest.raises(AllocationError, match=r"claim default/c0: selector #0: CEL runtime"):
        a.allocate(node(), [claim("c0", request("r", "gpu", 2, sel))])


def test_all_mode_takes_every_matching_device():
    a = allocator([slice_("s1", _devices(3))])
    out = a.allocate(node(), [claim("c0", request(mode="All"))])
    assert picked(out) == [[("req", "dev-0"), ("req", "dev-1"), ("req", "dev-2")]]


def test_all_mode_with_one_in_use_fails():
    a = allocator([slice_("s1", _devices(2))])
    a.commit(claim("x"), a.allocate(node(), [claim("x")]).allocations[0])
    assert not a.allocate(node(), [claim("c0", request(mode="All"))]).fits


def test_all_mode_with_no_device_fails():
    assert not allocator([]).allocate(node(), [claim("c0", request(mode="All"))]).fits


def test_all_mode_on_an_incomplete_pool_is_fatal():
    a = allocator([slice_("a", [device("d")], count=2)])
    with pytest.raises(AllocationError, match="currently being updated"):
        a.allocate(node(), [claim("c0", request(mode="All"))])


def test_all_devices_plus_another_reversed():
    # upstream "all-devices-plus-another-reversed"
    other = slice_("s2", [device("dev-1")], driver="other.example.com")
    a = allocator([slice_("s1", [device("dev-1")]), other], [device_class(), CLASS_B])
    out = a.allocate(node(), [claim("c1", request(cls="b")),
                              claim("c0", request(mode="All"))])
    assert picked(out) == [[("req", "dev-1")], [("req", "dev-1")]]
    assert out.allocations[0]["devices"]["results"][0]["driver"] == "other.example.com"


def test_already_allocated_devices_are_skipped():
    a = allocator([slice_("s1", _devices(2))])
    a.commit(claim("x"), a.allocate(node(), [claim("x")]).allocations[0])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "dev-1")]]
    a.release(claim("x"))
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "dev-0")]]


def test_admin_access_uses_allocated_devices():
    a = allocator([slice_("s1", _devices(1))])
    a.commit(claim("x"), a.allocate(node(), [claim("x")]).allocations[0])
    out = a.allocate(node(), [claim("c0", request(adminAccess=True))])
    assert out.allocations[0]["devices"]["results"][0]["adminAccess"] is True


def test_admin_pick_blocks_a_later_normal_claim_not_an_earlier_one():
    a = allocator([slice_("s1", _devices(1))])
    admin = claim("admin", request(adminAccess=True))
    assert not a.allocate(node(), [admin, claim("c1")]).fits
    assert a.allocate(node(), [claim("c1"), admin]).fits


def test_match_attribute_backtracks():
    # upstream "with-constraint-for-request-retry" (versions compared as strings)
    devs = [{"name": f"d{i}", "attributes": {"driverVersion": {"version": v},
                                              "s": {"string": s}}}
            for i, (v, s) in enumerate([("1.0.0", "a"), ("2.0.0", "b"), ("3.0.0", "b")])]
    a = allocator([slice_("s1", devs)])
    c = claim("c0", request("r0"), request("r1"), constraints=[
        {"requests": ["r0"], "matchAttribute": f"{DRIVER}/driverVersion"},
        {"matchAttribute": f"{DRIVER}/s"}])
    assert picked(a.allocate(node(), [c])) == [[("r0", "d1"), ("r1", "d2")]]


def test_match_attribute_missing_attribute_rejects():
    a = allocator([slice_("s1", [device("d0"), device("d1", model="x")])])
    c = claim("c0", request(count=1), constraints=[{"matchAttribute": f"{DRIVER}/model"}])
    assert picked(a.allocate(node(), [c])) == [[("req", "d1")]]


def test_match_attribute_failing_in_all_mode_is_fatal():
    a = allocator([slice_("s1", [device("d0", model="a"), device("d1", model="b")])])
    c = claim("c0", request(mode="All"), constraints=[{"matchAttribute": f"{DRIVER}/model"}])
    with pytest.raises(AllocationError, match="claim constraint would not be satisfied"):
        a.allocate(node(), [c])


def test_distinct_attribute_remembers_one_value_per_request():
    # d0 and d2 share a value; the third device of one request is compared with the second
    # only (docs/v1.md: the quirk)
    devs = [device("d0", numa=0), device("d1", numa=1), device("d2", numa=0)]
    a = allocator([slice_("s1", devs)])
    c = claim("c0", request(count=3), constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    assert picked(a.allocate(node(), [c])) == [[("req", "d0"), ("req", "d1"),
                                                 ("req", "d2")]]


def test_first_available_falls_back_to_the_next_subrequest():
    a = allocator([slice_("s1", _devices(1, size=1))])
    big = request("big", "gpu", 1, f'device.attributes["{DRIVER}"].size >= 2')
    small = request("small", "gpu", 1)
    out = a.allocate(node(), [claim("c0", first_available("r", big, small))])
    assert picked(out) == [[("r/small", "dev-0")]]


def test_first_available_with_backtracking_into_later_requests():
    # upstream "prioritized-list-with-backtracking": the first subrequest fits alone but
    # leaves nothing for the next request
    a = allocator([slice_("s1", _devices(2))])
    c = claim("c0", first_available("r0", request("two", count=2), request("one")),
              request("r1"))
    assert picked(a.allocate(node(), [c])) == [[("r0/one", "dev-0"), ("r1", "dev-1")]]


def test_first_available_too_many_in_first_subrequest():
    a = allocator([slice_("s1", _devices(2))])
    c = claim("c0", first_available("r0", request("many", count=33), request("one")))
    assert picked(a.allocate(node(), [c])) == [[("r0/one", "dev-0")]]


def test_binding_conditions_are_copied_and_excluded_with_gate_off():
    dev = {"name": "d0", "bindingConditions": ["ready"], "bindingFailureConditions": ["bad"],
           "bindsToNode": True}
    a = allocator([slice_("s1", [dev], node=None, pool="p", allNodes=True)])
    res = a.allocate(node(), [claim("c0")]).allocations[0]
    assert res["devices"]["results"][0]["bindingConditions"] == ["ready"]
    assert res["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "node-1"]
    off = allocator([slice_("s1", [dev], node=None, pool="p", allNodes=True)],
                    release="1.35")
    assert not off.allocate(node(), [claim("c0")]).fits


def test_node_selector_slices_merge_into_one_term():
    sel = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
    a = allocator([slice_("s1", _devices(2), node=None, pool="p", nodeSelector=sel)])
    out = a.allocate(node(zone="a"), [claim("c0", request(count=2))])
    assert out.allocations[0]["nodeSelector"] == sel
    assert not a.allocate(node(zone="b"), [claim("c0")]).fits


def test_results_limit_prunes_a_branch():
    a = allocator([slice_("s1", _devices(40))])
    c = claim("c0", request("r0", count=31), first_available(
        "r1", request("two", count=2), request("one")))
    out = a.allocate(node(), [c])
    assert [r for r, _ in picked(out)[0]].count("r1/one") == 1


def test_prioritized_list_max_allocation_limit_request():
    # upstream "prioritized-list-max-allocation-limit-request", with its invocation count
    a = allocator([slice_("s1", _devices(64))])
    c = claim("c0", first_available("r0", request("s0", count=32), request("s1", count=16)),
              first_available("r1", request("s0", count=32), request("s1", count=16)))
    out = a.allocate(node(), [c])
    got = picked(out)[0]
    assert got == [("r0/s1", f"dev-{i}") for i in range(16)] + [
        ("r1/s1", f"dev-{i}") for i in range(16, 32)]
    assert out.invocations == 75


def test_admin_pick_then_all_admin_request_of_the_same_claim_fails():
    # upstream "all-devices-some-allocating-admin-access"
    a = allocator([slice_("s1", _devices(2))])
    c = claim("c0", request("r0", adminAccess=True),
              request("r1", mode="All", adminAccess=True))
    assert not a.allocate(node(), [c]).fits


def test_network_attached_device_keeps_the_label_selector():
    sel = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["r1"]}]}]}
    a = allocator([slice_("s1", _devices(1), node=None, pool="p", nodeSelector=sel)])
    out = a.allocate(node(region="r1"), [claim("c0")])
    assert out.allocations[0]["nodeSelector"] == sel


def test_prioritized_list_max_allocation_allocation_mode_all():
    # upstream "prioritized-list-max-allocation-allocation-mode-all"
    b_slice = slice_("s2", _devices(2), driver="other.example.com", pool="pool-2")
    a = allocator([slice_("s1", _devices(31), pool="pool-1"), b_slice],
                  [device_class(), CLASS_B])
    c = claim("c0", first_available("r0", request("s0", mode="All"), request("s1", count=2)),
              request("r1", "b", 2))
    out = a.allocate(node(), [c])
    assert picked(out) == [[("r0/s1", "dev-0"), ("r0/s1", "dev-1"), ("r1", "dev-0"),
                            ("r1", "dev-1")]]
    assert out.invocations == 42


@pytest.mark.parametrize("release, invocations", [("1.36", 16), ("1.35", 65)])
def test_combinations_within_a_single_request(release, invocations):
    # upstream "check-combinations-within-single-request-single-pool-single-slice"; the
    # permutation search of earlier releases needs 65 steps (upstream's stable channel)
    a = allocator([slice_("s1", _devices(4))], release=release)
    out = a.allocate(node(), [claim("c0", request(count=5))])
    assert not out.fits
    assert out.invocations == invocations


def test_subrequest_constraint_naming_the_parent_request():
    # upstream "prioritized-list-subrequests-with-constraints-ref-parent-request"
    def dev(name, memory, version):
        return {"name": name, "capacity": {"memory": {"value": memory}},
                "attributes": {"driverVersion": {"version": version}}}

    mem = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("%s")) >= 0'
    a = allocator([slice_("s1", [dev("device-1", "8Gi", "1.0.0")], pool="pool-1"),
                   slice_("s2", [dev("device-2", "2Gi", "2.0.0"),
                                 dev("device-3", "1Gi", "1.0.0")], pool="pool-2")])
    c = claim("c0", request("r0", "gpu", 1, mem % "8Gi"),
              first_available("r1", request("s0", "gpu", 1, mem % "2Gi"),
                              request("s1", "gpu", 1, mem % "1Gi")),
              constraints=[{"requests": ["r0", "r1"],
                            "matchAttribute": f"{DRIVER}/driverVersion"}])
    assert picked(a.allocate(node(), [c])) == [[("r0", "device-1"), ("r1/s1", "device-3")]]


def test_binding_conditions_with_and_without():
    # upstream "binding-conditions-with-and-without"
    bound = {"name": "device-2", "bindingConditions": ["IsPrepare"],
             "bindingFailureConditions": ["BindingFailed"]}
    a = allocator([slice_("s1", [device("device-1"), bound])])
    out = a.allocate(node(), [claim("c0", request("r0"), request("r1"))])
    assert out.allocations[0]["devices"]["results"] == [
        {"request": "r0", "driver": DRIVER, "pool": "node-1", "device": "device-1"},
        {"request": "r1", "driver": DRIVER, "pool": "node-1", "device": "device-2",
         "bindingConditions": ["IsPrepare"], "bindingFailureConditions": ["BindingFailed"]}]


def test_all_subrequest_fails_on_an_allocated_device_and_the_next_is_used():
    # upstream "prioritized-list-subrequests-with-allocation-mode-all"
    a = allocator([slice_("s1", [device("device-1"), device("device-2")])])
    a.book.commit("default/x", {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": "device-1"}]}})
    c = claim("c0", first_available("r0", request("s0", mode="All"), request("s1")))
    assert picked(a.allocate(node(), [c])) == [[("r0/s1", "device-2")]]


def test_max_number_of_devices_and_one_more():
    # upstream "max-number-devices" and "too-many-devices-total"
    a = allocator([slice_("s1", _devices(33))])
    out = a.allocate(node(), [claim("c0", request(count=32))])
    assert len(picked(out)[0]) == 32
    with pytest.raises(AllocationError, match="exceeds the claim limit of 32"):
        a.allocate(node(), [claim("c0", request("r0", count=32), request("r1"))])
