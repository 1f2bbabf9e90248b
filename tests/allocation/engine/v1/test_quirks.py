"""Per-release quirks of upstream's allocator that the planner reproduces (docs/v1.md)."""

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


def _shared(name: str, value: str = "10") -> dict:
    return {"name": name, "allowMultipleAllocations": True, "capacity": {"bw": {"value": value}}}


def test_135_lets_one_shared_device_fill_two_slots_of_a_request():
    c = claim("c0", request(count=2, capacity={"requests": {"bw": "1"}}))
    assert not allocator([slice_("s", [_shared("nic")])]).allocate(node(), [c]).fits
    a = allocator([slice_("s", [_shared("nic")])], release="1.35",
                  gates="DRAConsumableCapacity=true")
    out = a.allocate(node(), [c])
    results = out.allocations[0]["devices"]["results"]
    assert [r["device"] for r in results] == ["nic", "nic"]
    assert results[0]["shareID"] != results[1]["shareID"]


def test_135_all_subrequest_continues_with_the_first_subrequests_data():
    # r/all is the second subrequest: after its first device the 1.35 search goes on with
    # subrequest 0 (ExactCount 1, already done), so only one device is allocated
    a135 = allocator([slice_("s", [device("d0"), device("d1")])], release="1.35")
    a136 = allocator([slice_("s", [device("d0"), device("d1")])])
    c = claim("c0", first_available(
        "r", request("none", "gpu", 1, "false"), request("all", mode="All")))
    assert picked(a135.allocate(node(), [c])) == [[("r/all", "d0")]]
    assert picked(a136.allocate(node(), [c])) == [[("r/all", "d0"), ("r/all", "d1")]]


def test_135_second_all_subrequest_lists_the_first_all_subrequests_devices():
    # upstream's preflight looks subrequest 1 up under subrequest 0's cache key: when both
    # are All, subrequest 1 lists subrequest 0's matches (d0), not its own (d1); d0 is taken
    # by the earlier claim, so 1.34/1.35 find nothing where 1.36 takes d1
    model = 'device.attributes["gpu.example.com"].model == "{}"'.format
    taken = claim("c0", request("x", "gpu", 1, model("a")))
    c = claim("c1", first_available("r", request("a", "gpu", 1, model("a"), mode="All"),
                                    request("b", "gpu", 1, model("b"), mode="All")))
    devices = [device("d0", model="a"), device("d1", model="b")]
    for release in ("1.34", "1.35"):
        assert not allocator([slice_("s", devices)], release=release).allocate(
            node(), [taken, c]).fits
    assert picked(allocator([slice_("s", devices)]).allocate(node(), [taken, c])) == [
        [("x", "d0")], [("r/b", "d1")]]


def test_counters_stay_consumed_after_a_taint_refusal_within_one_call():
    counters = slice_("counters", [], count=2, pool="node-1", sharedCounters=[
        {"name": "set", "counters": {"mem": {"value": "4"}}}])
    tainted = {"name": "a", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
               "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "4"}}}]}
    clean = {"name": "b", "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": "4"}}}]}
    a = allocator([counters, slice_("devices", [tainted, clean], count=2)])
    # b alone would fit; upstream leaks a's counters when the taint refuses it
    assert not a.allocate(node(), [claim("c0")]).fits
    a = allocator([counters, slice_("devices", [clean, tainted], count=2)])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "b")]]


def test_distinct_value_forgotten_on_backtrack():
    # r0 takes d0 (numa 0) and d1 (numa 1); r1's only device d3 repeats numa 1, so r0's
    # second slot backtracks, which forgets r0's stored value altogether: d2 (numa 0, like
    # d0) is then accepted
    model = f'device.attributes["{DRIVER}"].model == "%s"'
    devs = [device("d0", numa=0, model="a"), device("d1", numa=1, model="a"),
            device("d2", numa=0, model="a"), device("d3", numa=1, model="x")]
    a = allocator([slice_("s", devs)])
    c = claim("c0", request("r0", "gpu", 2, model % "a"), request("r1", "gpu", 1, model % "x"),
              constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    assert picked(a.allocate(node(), [c])) == [[("r0", "d0"), ("r0", "d2"), ("r1", "d3")]]


def test_binding_condition_pools_come_last_in_the_experimental_variant():
    bound = slice_("a", [{"name": "x", "bindingConditions": ["ready"],
                          "bindingFailureConditions": ["failed"]}], pool="a-pool")
    plain = slice_("b", [device("y")], pool="b-pool")
    a = allocator([bound, plain])
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "y")]]


def test_shared_allocations_consume_counters_from_136():
    counters = slice_("counters", [], count=2, pool="node-1", sharedCounters=[
        {"name": "set", "counters": {"mem": {"value": "4"}}}])
    multi = {"name": "m", "allowMultipleAllocations": True,
             "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "4"}}}]}
    other = {"name": "o", "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": "4"}}}]}
    slices = [counters, slice_("devices", [multi, other], count=2)]
    shared = {"devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "node-1",
                                       "device": "m", "shareID": "x"}]}}
    dedicated = claim("c0", request("req", "gpu", 1, "!device.allowMultipleAllocations"))
    a = allocator(slices)
    a.book.commit("default/s", shared)
    assert not a.allocate(node(), [dedicated]).fits
    a = allocator(slices, release="1.35", gates="DRAConsumableCapacity=true,"
                                                "DRAPartitionableDevices=true")
    a.book.commit("default/s", shared)
    assert picked(a.allocate(node(), [dedicated])) == [[("req", "o")]]


def _both(name: str, memory: str, *devs) -> dict:
    return slice_(name, list(devs), count=2, nodeName="node-1", sharedCounters=[
        {"name": "set", "counters": {"mem": {"value": memory}}}])


def _eats(name: str, memory: str) -> dict:
    return {"name": name, "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": memory}}}]}


def test_134_counters_are_local_to_their_slice():
    slices = [_both("a", "4", _eats("a0", "4"), _eats("a1", "4")),
              _both("b", "4", _eats("b0", "4"))]
    a = allocator(slices, release="1.34", gates="DRAPartitionableDevices=true")
    out = a.allocate(node(), [claim("c0", request(count=2))])
    assert picked(out) == [[("req", "a0"), ("req", "b0")]]


def test_134_invalid_pool_is_fatal_only_when_the_search_reaches_it():
    good = slice_("g", [device("ok")], pool="a-pool")
    dup = [slice_("x", [device("d")], pool="b-pool", count=2),
           slice_("y", [device("d")], pool="b-pool", count=2)]
    a = allocator([good, *dup], release="1.34")
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "ok")]]
    with pytest.raises(AllocationError, match="pool b-pool is invalid: duplicate device"):
        a.allocate(node(), [claim("c0", request(count=2))])


def test_135_binding_slices_come_last_within_their_pool():
    bound = slice_("a", [{"name": "x", "bindingConditions": ["ready"],
                          "bindingFailureConditions": ["failed"]}], count=2)
    plain = slice_("b", [device("y")], count=2)
    gates = "DRADeviceBindingConditions=true"
    assert picked(allocator([bound, plain], release="1.35", gates=gates).allocate(
        node(), [claim("c0")])) == [[("req", "y")]]
    assert picked(allocator([bound, plain]).allocate(node(), [claim("c0")])) == [
        [("req", "x")]]


def _named_pool(driver: str, set_name: str, value: str, *devs) -> list[dict]:
    return [slice_(f"{driver}-counters", [], driver=driver, pool="node-1", count=2,
                   sharedCounters=[{"name": set_name, "counters": {
                       "mem": {"value": value}}}]),
            slice_(f"{driver}-devices", list(devs), driver=driver, pool="node-1", count=2)]


def _eats_from(name: str, set_name: str, value: str) -> dict:
    return {"name": name, "consumesCounters": [
        {"counterSet": set_name, "counters": {"mem": {"value": value}}}]}


def test_counters_of_two_drivers_with_one_pool_name_are_mixed_within_a_call():
    # upstream keys availableCounters/consumedCounters by PoolID.Pool (docs/v1.md)
    other = "nic.example.com"
    classes = [device_class("gpu"), device_class("nic", f'device.driver == "{other}"')]
    both = claim("c0", request("g", "gpu"), request("n", "nic"))
    # one set name: both drivers' consumption lands in one counter, 4 + 4 > 4
    a = allocator(_named_pool(DRIVER, "set", "4", _eats_from("g0", "set", "4"))
                  + _named_pool(other, "set", "4", _eats_from("n0", "set", "4")), classes)
    assert not a.allocate(node(), [both]).fits
    assert picked(a.allocate(node(), [claim("c1", request("n", "nic"))])) == [[("n", "n0")]]
    # two set names: the gpu pool's sets answer for both, so the nic set is never checked
    a = allocator(_named_pool(DRIVER, "g-set", "4", _eats_from("g0", "g-set", "4"))
                  + _named_pool(other, "n-set", "4", _eats_from("n0", "n-set", "100")),
                  classes)
    assert picked(a.allocate(node(), [both])) == [[("g", "g0"), ("n", "n0")]]
    assert not a.allocate(node(), [claim("c1", request("n", "nic"))]).fits


def _leaky_pools() -> list[dict]:
    """Pool "a": a0 (model c), a1 (b). Pool "b": counter set mem 8; b0 (b, consumes 4),
    b1 (c), and b2 (b) in a second slice."""
    def dev(name: str, model: str, consume: str | None = None) -> dict:
        d = device(name, model=model)
        if consume:
            d["consumesCounters"] = [{"counterSet": "set", "counters": {"mem": {"value": consume}}}]
        return d
    return [slice_("a", [dev("a0", "c"), dev("a1", "b")], pool="a"),
            slice_("b-counters", [], pool="b", count=3, sharedCounters=[
                {"name": "set", "counters": {"mem": {"value": "8"}}}]),
            slice_("b-s0", [dev("b0", "b", "4"), dev("b1", "c")], pool="b", count=3),
            slice_("b-s1", [dev("b2", "b")], pool="b", count=3)]


def test_136_stable_variant_searches_permutations_and_leaks_more_counters():
    # v0.36.2 structured/internal/stable supports admin access, prioritized list,
    # partitionable devices and taints, so with consumable capacity and binding conditions
    # off 1.36 runs it; its allocateOne starts every slot of a request from the first
    # device (no startLocation). A device refused by the matchAttribute constraint keeps
    # the counters it took (allocateDevice), and the permutation search refuses b0 often
    # enough that its counters run out: the claim does not fit, while the incubating
    # variant (combinations) finds a1, b0, b2.
    c = claim("c0", request(count=3), constraints=[{"matchAttribute": f"{DRIVER}/model"}])
    stable = allocator(_leaky_pools(), [device_class("gpu", "true")],
                       gates="DRAConsumableCapacity=false,DRADeviceBindingConditions=false")
    assert stable.profile.variant == "stable"
    assert not stable.allocate(node(), [c]).fits
    incubating = allocator(_leaky_pools(), [device_class("gpu", "true")])
    assert picked(incubating.allocate(node(), [c])) == [
        [("req", "a1"), ("req", "b0"), ("req", "b2")]]


def test_134_distinct_attribute_compares_pointers_so_equal_values_pass():
    # v0.34.9 structured/internal/experimental/constraint.go (distinctAttributeConstraint
    # .matchesAttribute) compares the *string/*int64 pointers of the two attribute values,
    # so two devices with the same value are not duplicates; v0.35.6 compares the values
    slices = [slice_("s", [device("d0", model="x"), device("d1", model="x"),
                           device("d2", model="y")])]
    c = claim("c0", request(count=2), constraints=[{"distinctAttribute": f"{DRIVER}/model"}])
    a134 = allocator(slices, release="1.34", gates="DRAConsumableCapacity=true")
    a135 = allocator(slices, release="1.35", gates="DRAConsumableCapacity=true")
    assert picked(a134.allocate(node(), [c])) == [[("req", "d0"), ("req", "d1")]]
    assert picked(a135.allocate(node(), [c])) == [[("req", "d0"), ("req", "d2")]]
    # a second call reuses the prepared claim: its constraint keeps the release's reading
    assert picked(a134.allocate(node(), [c])) == [[("req", "d0"), ("req", "d1")]]
    assert picked(a135.allocate(node(), [c])) == [[("req", "d0"), ("req", "d2")]]


def test_134_an_incomplete_pool_with_binding_conditions_goes_last_too():
    # v0.34.9 structured/internal/experimental GatherPools: every pool keeps its slices
    # (incomplete ones too, which ExactCount still uses in 1.34) and a pool with a
    # binding-condition device goes after the others; from 1.35 an incomplete pool
    # carries no slices and never goes last
    slices = [slice_("a", [{"name": "a0", "bindingConditions": ["ready"],
                            "bindingFailureConditions": ["failed"]}], pool="a", count=2),
              slice_("b", [device("b0")], pool="b")]
    a = allocator(slices, release="1.34", gates="DRADeviceBindingConditions=true")
    assert a.profile.binding_slices_last
    assert picked(a.allocate(node(), [claim("c0")])) == [[("req", "b0")]]


def test_134_capacity_check_of_a_pick_reads_the_device_at_the_slots_index():
    # v0.34.9 structured/internal/experimental allocateDevice passes the request's device
    # index (r.deviceIndex) to CmpRequestOverCapacity, which indexes the candidate's slice
    # with it: the first slot is checked against d0 (8 < 16) although the candidate is d1.
    # A slot index past the slice's devices makes upstream panic: a fatal error here.
    capacity = {"requests": {"mem": "16"}}
    slices = [slice_("s", [{"name": "d0", "capacity": {"mem": {"value": "8"}}},
                           {"name": "d1", "capacity": {"mem": {"value": "32"}}}])]
    c = claim("c0", request(capacity=capacity))
    a134 = allocator(slices, release="1.34", gates="DRAConsumableCapacity=true")
    a135 = allocator(slices, release="1.35", gates="DRAConsumableCapacity=true")
    assert not a134.allocate(node(), [c]).fits
    assert picked(a135.allocate(node(), [c])) == [[("req", "d1")]]
    two = [slice_(n, [{"name": f"{n}0", "capacity": {"mem": {"value": "32"}}}], count=2)
           for n in ("a", "b")]
    c = claim("c1", request(count=2, capacity={"requests": {"mem": "1"}}))
    a134 = allocator(two, release="1.34", gates="DRAConsumableCapacity=true")
    with pytest.raises(AllocationError, match=r"reads device #1 of slice b, which has 1 "
                                              r"\(upstream v0\.34\.9 panics"):
        a134.allocate(node(), [c])


def test_134_a_shared_device_consumes_its_counters_on_every_pick():
    # v0.34.9 experimental allocateDevice checks (and consumes) the counters of every pick,
    # a multi-allocatable device's too; from 1.35 one with capacity already in use skips
    # the check (skipCounterCheck). Here the third pick runs out of counters on 1.34
    # before the capacity check could read slot 1 of a one-device slice (which would panic)
    shared = {"name": "nic", "allowMultipleAllocations": True, "consumesCounters": [
        {"counterSet": "set", "counters": {"mem": {"value": "4Gi"}}}]}
    counters = [{"name": "set", "counters": {"mem": {"value": "8Gi"}}}]
    claims = [claim("c0"), claim("c1", request(count=2))]
    gates = "DRAConsumableCapacity=true,DRAPartitionableDevices=true"
    # 1.34: a slice's counters are its own
    a134 = allocator([slice_("s", [shared], nodeName="node-1", sharedCounters=counters)],
                     release="1.34", gates=gates)
    assert not a134.profile.shared_skips_counter_check
    assert not a134.allocate(node(), claims).fits
    # 1.35: counters are pool-wide, in a slice of their own
    a135 = allocator([slice_("counters", [], count=2, pool="node-1", sharedCounters=counters),
                      slice_("devices", [shared], count=2)], release="1.35", gates=gates)
    assert picked(a135.allocate(node(), claims)) == [
        [("req", "nic")], [("req", "nic"), ("req", "nic")]]
