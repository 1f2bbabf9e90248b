"""Simulated drivers: Immediate allocation, handle data, pending reasons, deallocation."""

from __future__ import annotations

import json

import pytest

from allocation.engine.manifests import InvalidManifests
from tests.allocation.engine.controlplane.cp_factories import (
    cp_claim,
    cp_class,
    driver_sim,
    events_of,
    reasons,
    vendor_params,
)
from tests.factories import node, pod, run

CTRL = "net.example.com"
RACKS = [node("n1", {"rack": "a"}), node("n2", {"rack": "b"})]
POOLS = [("pa", 2, {"rack": "a"}), ("pb", 2, {"rack": "b"})]


def _claim(sim, name):
    return sim.state.get("ResourceClaim", "default", name)


def test_immediate_claim_is_allocated_without_any_pod():
    sim = run([*RACKS, driver_sim(CTRL, POOLS, request_count="object.spec.count",
                                  handle_data='{"pool": "{{pool}}", "n": {{count}}}'),
               cp_class("acc", CTRL), vendor_params("two", 2),
               cp_claim("imm", "acc", "two", mode="Immediate")])
    status = _claim(sim, "imm").to_manifest()["status"]
    assert status["driverName"] == CTRL and status["controllerName"] == CTRL
    [handle] = status["allocation"]["resourceHandles"]
    assert json.loads(handle["data"]) == {"pool": "pa", "n": 2}
    assert status["allocation"]["availableOnNodes"] == {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]}
    assert "reservedFor" not in status
    assert f"{CTRL}/deletion-protection" in _claim(sim, "imm").meta.finalizers
    assert reasons(sim, "ResourceClaim", "imm") == ["Allocated"]


def test_immediate_claims_fill_pools_in_order_and_a_pod_follows_its_claim():
    sim = run([*RACKS, driver_sim(CTRL, POOLS, request_count="object.spec.count"),
               cp_class("acc", CTRL), vendor_params("two", 2),
               cp_claim("first", "acc", "two", mode="Immediate"),
               cp_claim("second", "acc", "two", mode="Immediate"),
               pod("p", claims={"acc": "second"})])
    assert _claim(sim, "second").allocation.available_on_nodes["nodeSelectorTerms"][0][
        "matchExpressions"][0]["values"] == ["b"]
    p = sim.state.get("Pod", "default", "p")
    assert p.node_name == "n2"
    assert _claim(sim, "second").reserved_pods() == ["p"]
    # An Immediate claim needs no negotiation: no context was ever made.
    assert events_of(sim, "PodSchedulingContext", "p") == []


def test_immediate_claim_without_room_stays_pending_with_the_reason():
    sim = run([*RACKS, driver_sim(CTRL, [("pa", 1, {"rack": "a"})],
                                  request_count="object.spec.count"),
               cp_class("acc", CTRL), vendor_params("two", 2),
               cp_claim("imm", "acc", "two", mode="Immediate"), pod("p", claims={"acc": "imm"})])
    assert _claim(sim, "imm").allocation is None
    [event] = events_of(sim, "ResourceClaim", "imm")
    assert event["reason"] == "AllocationFailed" and event["type"] == "Warning"
    assert "no pool of DriverSimulation net has 2 resource(s) free (pa 1/1 free)" in \
        event["message"]
    message = sim.state.get("Pod", "default", "p").condition("PodScheduled")["message"]
    assert "no pool of DriverSimulation net has 2 resource(s) free" in message


def test_failing_request_count_is_the_claims_pending_reason():
    sim = run([*RACKS, driver_sim(CTRL, POOLS, request_count="object.spec.missing + 1"),
               cp_class("acc", CTRL), vendor_params("one", 1),
               cp_claim("c", "acc", "one"), pod("p", claims={"acc": "c"})])
    c = _claim(sim, "c")
    assert c.allocation is None
    [event] = events_of(sim, "ResourceClaim", "c")
    assert event["reason"] == "AllocationFailed"
    assert event["message"].startswith(
        'resourceclaim "default/c": DriverSimulation net: spec.requestCount '
        "'object.spec.missing + 1' failed:")
    p = sim.state.get("Pod", "default", "p")
    assert p.node_name is None
    assert "spec.requestCount 'object.spec.missing + 1' failed" in \
        p.condition("PodScheduled")["message"]


def test_request_count_must_be_a_non_negative_integer():
    sim = run([*RACKS, driver_sim(CTRL, POOLS, request_count="object.spec.count"),
               cp_class("acc", CTRL), vendor_params("text", "three"),
               cp_claim("c", "acc", "text", mode="Immediate")])
    [event] = events_of(sim, "ResourceClaim", "c")
    assert "must give an integer, got str 'three'" in event["message"]


def test_handle_data_template_over_16_kib_is_refused_at_validation():
    with pytest.raises(InvalidManifests) as caught:
        run([*RACKS, driver_sim(CTRL, POOLS, handle_data="x" * 16385)])
    [problem] = caught.value.problems
    assert str(problem).endswith("(DriverSimulation net): spec.handleData: is 16385 bytes, "
                                 "longer than the limit of 16384 bytes")


def test_handle_data_rendering_over_16_kib_is_refused():
    # Within the limit as written, but not once rendered: 4 copies of the claim reference.
    template = "x" * 16350 + "{{[claim, claim, claim, claim]}}"
    sim = run([*RACKS, driver_sim(CTRL, POOLS, handle_data=template),
               cp_class("acc", CTRL), cp_claim("c", "acc", mode="Immediate")])
    assert _claim(sim, "c").allocation is None
    [event] = events_of(sim, "ResourceClaim", "c")
    assert "; resourceHandles[].data holds at most 16384" in event["message"]


def test_class_naming_a_controller_without_driver_simulation_leaves_claim_pending():
    sim = run([*RACKS, cp_class("acc", "ghost.example.com"), cp_claim("c", "acc"),
               pod("p", claims={"acc": "c"})])
    assert _claim(sim, "c").allocation is None
    [event] = events_of(sim, "ResourceClaim", "c")
    assert event["reason"] == "ControllerMissing"
    expected = ('resourceclaim "default/c": class \'acc\' names control-plane controller '
                "ghost.example.com, which no DriverSimulation simulates")
    assert event["message"] == expected
    p = sim.state.get("Pod", "default", "p")
    assert p.condition("PodScheduled")["message"] == f"0/2 nodes are available: {expected}."
    assert sim.state.get("PodSchedulingContext", "default", "p") is None


def test_released_delayed_claim_is_deallocated_and_its_pool_freed():
    status = {"driverName": CTRL, "controllerName": CTRL,
              "allocation": {"resourceHandles": [{"driverName": CTRL}], "availableOnNodes": {
                  "nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "rack", "operator": "In", "values": ["a"]}]}]}},
              "reservedFor": [{"resource": "pods", "name": "done", "uid": "x"}]}
    sim = run([*RACKS, driver_sim(CTRL, [("pa", 1, {"rack": "a"})]), cp_class("acc", CTRL),
               cp_claim("old", "acc", status=status),
               cp_claim("imm", "acc", mode="Immediate")])
    old = _claim(sim, "old")
    assert old.allocation is None and not old.deallocation_requested
    assert reasons(sim, "ResourceClaim", "old") == ["Released", "DeallocationRequested",
                                                    "Deallocated"]
    # The pool's one resource came free, so the Immediate claim got it.
    assert _claim(sim, "imm").allocation is not None


def test_a_fork_deallocates_a_claim_its_parent_reserved_once_its_pod_is_gone():
    """``Simulation.fork`` carries the reservations the parent's driver saw: a claim the
    parent's settle allocated and reserved (its input document says neither) is
    deallocated when the fork removes its pod, as a simulation without the pod leaves it
    unallocated."""
    sim = run([*RACKS, driver_sim(CTRL, [("pa", 1, {"rack": "a"})]), cp_class("acc", CTRL),
               cp_claim("c", "acc"), pod("p", claims={"g": "c"})])
    assert _claim(sim, "c").allocation is not None and _claim(sim, "c").reserved_for
    fork = sim.fork()
    fork.state.remove(fork.state.get("Pod", "default", "p"))
    fork.settle()
    assert _claim(fork, "c").allocation is None
    assert reasons(fork, "ResourceClaim", "c")[-2:] == ["DeallocationRequested", "Deallocated"]
    assert _claim(sim, "c").allocation is not None  # the parent's own claim is untouched


def test_a_failing_handle_data_keeps_its_reason_and_the_run_settles():
    # the claim check cleared the allocation's failure and the next allocation set it
    # again, every round: "no fixed point after 10000 rounds"
    sim = run([*RACKS, driver_sim(CTRL, POOLS, handle_data="{{ object.spec.missing }}"),
               cp_class("acc", CTRL), vendor_params("one"), cp_claim("c", "acc", "one"),
               pod("p", claims={"acc": "c"})])
    assert _claim(sim, "c").allocation is None
    assert "spec.handleData: placeholder {{object.spec.missing}} failed" in \
        _claim(sim, "c").pending_reason
    message = sim.state.get("Pod", "default", "p").condition("PodScheduled")["message"]
    assert "spec.handleData: placeholder {{object.spec.missing}} failed" in message
