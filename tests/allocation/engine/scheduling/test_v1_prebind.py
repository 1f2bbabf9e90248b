"""The wait for binding conditions (``scheduling/v1_prebind.py``): the verdict and deadline
on a claim, then pods waiting in simulations (bound when the conditions are true, retried on
a failure condition or the timeout)."""

from __future__ import annotations

from datetime import timedelta

from allocation.engine.events import VirtualClock, parse_time
from allocation.engine.objects import ResourceClaimV1, stable_uid
from allocation.engine.scheduling.v1_prebind import deadline, verdict
from allocation.engine.simulation import simulate
from allocation.engine.state import ClusterState
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_outputs import items
from tests.factories import node, pod

RESULT = {"request": "r", "driver": "d", "pool": "p", "device": "g",
          "bindingConditions": ["Ready"], "bindingFailureConditions": ["Broken"]}


def _claim(conditions: list[dict]) -> ResourceClaimV1:
    return ResourceClaimV1({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {}},
        "status": {"allocation": {"devices": {"results": [RESULT]},
                                  "allocationTimestamp": "2025-01-01T00:00:00Z"},
                   "devices": [{"driver": "d", "pool": "p", "device": "g",
                                "conditions": conditions}]}})


def _state(after: timedelta = timedelta(0)) -> ClusterState:
    return ClusterState(VirtualClock(parse_time("2025-01-01T00:00:00Z") + after))


def _true(type_: str) -> dict:
    return {"type": type_, "status": "True", "reason": "R", "message": "M"}


def test_waiting_until_every_condition_is_true():
    assert verdict(_state(), [_claim([])]) == ("waiting", None)
    assert verdict(_state(), [_claim([_true("Ready")])]) == ("ready", None)


def test_a_true_failure_condition_fails_first():
    assert verdict(_state(), [_claim([_true("Ready"), _true("Broken")])]) == (
        "failed", 'claim c binding failed: reason=R, message="M"')


def test_the_timeout_is_600_seconds_after_the_allocation():
    claim = _claim([])
    assert deadline(claim) == parse_time("2025-01-01T00:10:00Z")
    assert verdict(_state(timedelta(seconds=599)), [claim])[0] == "waiting"
    assert verdict(_state(timedelta(seconds=600)), [claim]) == (
        "failed", "claim c binding timeout")
    assert verdict(_state(timedelta(hours=1)), [_claim([_true("Ready")])])[0] == "ready"


# -- binding conditions (scheduling/v1_prebind.py) --------------------------------------
def _binding_cluster() -> list[dict]:
    gpu = device("gpu-0", bindsToNode=True, bindingConditions=["Attached"],
                 bindingFailureConditions=["AttachFailed"])
    return [node("node-1"), class_doc(), slice_doc([gpu]), claim_doc(name="c"),
            pod("p", claims={"gpu": "c"})]


def test_a_pod_waits_for_binding_conditions_then_times_out_and_retries():
    simulation = simulate(load(_binding_cluster()))
    claim = items(simulation.output(), "ResourceClaim")["c"]
    waiting = items(simulation.output(), "Pod")["p"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2025-01-01T00:00:00Z"
    assert claim["status"]["allocation"]["devices"]["results"][0]["bindingConditions"] == [
        "Attached"]
    assert claim["status"]["reservedFor"][0]["name"] == "p"
    assert "nodeName" not in waiting["spec"]
    assert waiting["status"]["nominatedNodeName"] == "node-1"
    assert simulation.next_wakeup() == parse_time("2025-01-01T00:10:00Z")
    simulation.advance(timedelta(minutes=10))
    output = simulation.output()
    retried = items(output, "ResourceClaim")["c"]["status"]["allocation"]
    assert retried["allocationTimestamp"] == "2025-01-01T00:10:00Z"
    assert ("FailedScheduling", 'running PreBind plugin "DynamicResources": claim c binding '
            "timeout") in [(e["reason"], e["message"]) for e in output["items"]
                                        if e["kind"] == "Event"]


def _allocated_with(conditions: list[dict]) -> dict:
    result = {"request": "r", "driver": "gpu.example.com", "pool": "node-1",
              "device": "gpu-0", "bindingConditions": ["Attached"],
              "bindingFailureConditions": ["AttachFailed"]}
    return claim_doc(name="c", status={
        "allocation": {"devices": {"results": [result]},
                       "allocationTimestamp": "2025-01-01T00:00:00Z"},
        "reservedFor": [{"resource": "pods", "name": "p",
                         "uid": stable_uid("Pod", "default", "p")}],
        "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                     "conditions": conditions}]})


def _condition_doc(type_: str, reason: str = "Done") -> dict:
    return {"type": type_, "status": "True", "reason": reason, "message": "m",
            "lastTransitionTime": "2025-01-01T00:00:00Z"}


def test_true_binding_conditions_bind_the_pod():
    docs = [*_binding_cluster()[:3], _allocated_with([_condition_doc("Attached")]),
            pod("p", claims={"gpu": "c"})]
    assert items(simulate(load(docs)).output(), "Pod")["p"]["spec"]["nodeName"] == "node-1"


def test_a_failure_condition_in_the_input_makes_the_claim_unavailable_until_deallocated():
    # Filter: the claim's binding failed, so it is unavailable on every node; PostFilter
    # deallocates it (reserved for this pod alone); the next attempt allocates it anew
    docs = [*_binding_cluster()[:3],
            _allocated_with([_condition_doc("AttachFailed", reason="NoLink")]),
            pod("p", claims={"gpu": "c"})]
    output = simulate(load(docs)).output()
    events = [e["message"] for e in output["items"]
              if e["kind"] == "Event" and e["reason"] == "FailedScheduling"]
    assert events == ["0/1 nodes are available: 1 resourceclaim not available on the node."]
    claim = items(output, "ResourceClaim")["c"]
    assert "devices" not in claim["status"]  # the failed statuses went with the allocation
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2025-01-01T00:00:00Z"
    assert items(output, "Pod")["p"]["status"]["nominatedNodeName"] == "node-1"


def test_a_failure_while_waiting_drops_the_reservation_and_the_next_attempt_deallocates():
    simulation = simulate(load(_binding_cluster()))
    simulation.advance(timedelta(minutes=10))
    events = [e["message"] for e in simulation.output()["items"]
              if e["kind"] == "Event" and e["reason"] == "FailedScheduling"]
    assert events == ['running PreBind plugin "DynamicResources": claim c binding timeout',
                      "0/1 nodes are available: 1 resourceclaim not available on the node."]


def test_the_first_result_not_ready_ends_the_reading_as_upstream():
    # isClaimReadyForBinding returns at the first result not ready: a failure condition of
    # a later result is not seen then
    second = {**RESULT, "device": "h"}
    claim = _claim([])
    claim.allocation = {**claim.allocation, "devices": {"results": [RESULT, second]}}
    claim.device_statuses = [{"driver": "d", "pool": "p", "device": "h",
                              "conditions": [_true("Broken")]}]
    assert verdict(_state(), [claim]) == ("waiting", None)
    claim.device_statuses.append({"driver": "d", "pool": "p", "device": "g",
                                  "conditions": [_true("Ready")]})
    assert verdict(_state(), [claim])[0] == "failed"


def test_a_device_status_is_found_without_its_share_id_as_upstream():
    # getAllocatedDeviceStatus compares driver, pool and device and takes the first entry
    claim = _claim([])
    claim.allocation = {**claim.allocation, "devices": {"results": [
        {**RESULT, "shareID": "b"}]}}
    claim.device_statuses = [{"driver": "d", "pool": "p", "device": "g", "shareID": "a",
                              "conditions": [_true("Ready")]},
                             {"driver": "d", "pool": "p", "device": "g", "shareID": "b",
                              "conditions": []}]
    assert verdict(_state(), [claim]) == ("ready", None)


def test_stamp_stamps_every_allocation_and_says_whether_it_waits_as_waits_would():
    """``stamp`` sets the timestamp on every new allocation (``bindClaim`` with the binding
    gates) and answers what ``waits`` of the claim would (the scheduler then reads no
    claim's results again for a pod none of whose new allocations has conditions)."""
    from allocation.engine.scheduling.v1_prebind import stamp, waits

    plain = {k: v for k, v in RESULT.items() if "Conditions" not in k}
    for results, expected in (([RESULT], True), ([plain], False), ([plain, RESULT], True),
                              ([], False)):
        allocation = {"devices": {"results": results}}
        assert stamp(_state(), allocation) is expected
        assert allocation["allocationTimestamp"] == "2025-01-01T00:00:00Z"
        claim = _claim([])
        claim.allocation = allocation
        assert waits(claim) is expected


def test_a_claim_allocated_in_the_input_without_a_timestamp_is_stamped_when_reserved():
    # bindClaim stamps every claim it reserves: the timeout of an input allocation that
    # lacks the timestamp runs from the reservation, so the pod does not wait for ever
    waiting = _allocated_with([])
    del waiting["status"]["allocation"]["allocationTimestamp"]
    waiting["status"]["reservedFor"] = []
    simulation = simulate(load([*_binding_cluster()[:3], waiting, pod("p", claims={"gpu": "c"})]))
    claim = items(simulation.output(), "ResourceClaim")["c"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2025-01-01T00:00:00Z"
    assert items(simulation.output(), "Pod")["p"]["status"]["nominatedNodeName"] == "node-1"
    simulation.advance(timedelta(minutes=10))
    assert ("FailedScheduling", 'running PreBind plugin "DynamicResources": claim c binding '
            "timeout") in [(e["reason"], e["message"]) for e in simulation.output()["items"]
                           if e["kind"] == "Event"]


def test_a_claim_already_reserved_for_the_pod_is_not_stamped():
    # PreBind calls bindClaim (which stamps) only for claims not reserved for the pod yet
    held = _allocated_with([])
    del held["status"]["allocation"]["allocationTimestamp"]
    simulation = simulate(load([*_binding_cluster()[:3], held, pod("p", claims={"gpu": "c"})]))
    claim = items(simulation.output(), "ResourceClaim")["c"]
    assert "allocationTimestamp" not in claim["status"]["allocation"]
