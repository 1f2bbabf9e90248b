"""The scheduler with resource.k8s.io/v1 claims (``scheduling/v1.py``): pods naming v1
claims are placed by the v1 allocator, nodes in name order."""

from __future__ import annotations

from datetime import timedelta
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.events import parse_time
from allocation.engine.objects import stable_uid
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.simulation import simulate
from allocation.engine.v1.templates import extended_claim_name
from allocation.engine.writer import dump
from tests.allocation.engine.autoscaler.builders import node_group
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    request,
    slice_doc,
)
from tests.factories import node, pod


def _cluster() -> list[dict]:
    docs = [node("node-1"), node("node-2"), class_doc()]
    for name in ("node-1", "node-2"):
        docs.append(slice_doc([device("gpu-0")], name=f"{name}-gpus", nodeName=name,
                              pool={"name": name, "resourceSliceCount": 1}))
    for name in ("a", "b", "c"):
        docs.append(claim_doc(name=f"claim-{name}"))
        docs.append(pod(f"pod-{name}", claims={"gpu": f"claim-{name}"}))
    return docs


def _items(output: dict, kind: str) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == kind}


def test_two_pods_fit_one_per_node_and_the_third_is_pending():
    output = simulate(load(_cluster())).output()
    pods = _items(output, "Pod")
    assert [pods[p]["spec"].get("nodeName") for p in ("pod-a", "pod-b", "pod-c")] == [
        "node-1", "node-2", None]
    condition = pods["pod-c"]["status"]["conditions"][0]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False", "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_scheduled_events_are_recorded_for_the_bound_pods():
    output = simulate(load(_cluster())).output()
    events = [(e["reason"], e["involvedObject"]["name"], e["message"])
              for e in output["items"] if e["kind"] == "Event"]
    assert ("Scheduled", "pod-a", "Successfully assigned default/pod-a to node-1") in events
    assert ("Scheduled", "pod-b", "Successfully assigned default/pod-b to node-2") in events
    assert ("FailedScheduling", "pod-c",
            "0/2 nodes are available: 2 cannot allocate all claims.") in events


def test_the_output_is_deterministic():
    assert dump(simulate(load(_cluster())).output(), "yaml") == dump(
        simulate(load(_cluster())).output(), "yaml")


def test_an_input_allocation_is_booked_so_its_device_is_not_given_again():
    taken = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}
    docs = [*_cluster()[:5], claim_doc(name="held", status=taken)]
    docs += [claim_doc(name="claim-a"), pod("pod-a", claims={"gpu": "claim-a"})]
    pods = _items(simulate(load(docs)).output(), "Pod")
    assert pods["pod-a"]["spec"]["nodeName"] == "node-2"


def test_two_input_claims_naming_one_device_are_accepted_and_the_device_is_taken():
    # upstream's allocated state is the set of the devices of every allocated claim
    # (kube-scheduler's GatherAllocatedState, 1.34-1.36): a device two claims name is simply
    # in use; the other pods are scheduled as usual
    taken = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}
    docs = [*_cluster()[:5], claim_doc(name="held-1", status=taken),
            claim_doc(name="held-2", status=taken)]
    docs += [claim_doc(name="claim-a"), pod("pod-a", claims={"gpu": "claim-a"}),
             claim_doc(name="claim-b"), pod("pod-b", claims={"gpu": "claim-b"})]
    simulation = simulate(load(docs))
    pods = _items(simulation.output(), "Pod")
    assert simulation.failures == []
    assert pods["pod-a"]["spec"]["nodeName"] == "node-2"
    assert _condition(simulation.output(), "pod-b") == (
        "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_a_pod_bound_in_the_input_gets_its_claim_allocated_on_its_node():
    docs = [*_cluster()[:5], claim_doc(name="claim-a"),
            pod("pod-a", claims={"gpu": "claim-a"}, node_name="node-2")]
    claims = _items(simulate(load(docs)).output(), "ResourceClaim")
    assert claims["claim-a"]["status"]["allocation"]["devices"]["results"][0]["pool"] == (
        "node-2")


def test_a_node_group_without_v1_slices_cannot_fit_a_v1_pod_and_nothing_fails():
    simulation = simulate(load([*_cluster(), node_group()]))
    events = [e["message"] for e in simulation.output()["items"]
              if e["kind"] == "Event" and e["reason"] == "NotTriggerScaleUp"]
    assert simulation.failures == []
    assert events == ["pod didn't trigger scale-up: node group gpu-pool cannot fit it: "
                      "cannot allocate all claims"]


def _condition(output: dict, name: str) -> tuple[str, str]:
    condition = _items(output, "Pod")[name]["status"]["conditions"][0]
    return condition["reason"], condition["message"]


def test_a_cel_runtime_error_fails_the_attempt_with_scheduler_error():
    broken = class_doc(selectors=[{"cel": {
        "expression": 'device.attributes["gpu.example.com"].model == "x"'}}])
    docs = [node("node-1"), broken, slice_doc([device("gpu-0")]), claim_doc(name="c"),
            pod("p", claims={"gpu": "c"})]
    output = simulate(load(docs)).output()
    reason, message = _condition(output, "p")
    assert reason == "SchedulerError"
    assert message.startswith('running "DynamicResources" filter plugin: ')
    assert "CEL runtime error" in message
    events = [(e["type"], e["reason"], e["message"]) for e in output["items"]
              if e["kind"] == "Event" and e["involvedObject"]["name"] == "p"]
    assert events == [("Warning", "FailedScheduling", message)]


def _pinned_cluster(selector: str) -> list[dict]:
    """node-1 has gpu-0 without attributes, node-2 has gpu-0 and gpu-1 with model "a";
    claim "held" is allocated node-2's gpu-1 (pinned there); pod p needs "held" and "c"."""
    gpu_class = class_doc(selectors=[{"cel": {"expression": selector}}])
    pinned = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]}
    held = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-2", "device": "gpu-1"}]},
        "nodeSelector": pinned}}
    model = {"model": {"string": "a"}}
    return [node("node-1"), node("node-2"), gpu_class,
            slice_doc([device("gpu-0")], name="node-1", nodeName="node-1",
                      pool={"name": "node-1", "resourceSliceCount": 1}),
            slice_doc([device("gpu-0", attributes=model), device("gpu-1", attributes=model)],
                      name="node-2", nodeName="node-2",
                      pool={"name": "node-2", "resourceSliceCount": 1}),
            claim_doc(name="held", status=held), claim_doc(name="c"),
            pod("p", claims={"a": "held", "b": "c"})]


def test_the_allocator_runs_on_a_node_an_allocated_claim_excludes():
    # kube-scheduler's DynamicResources.Filter (1.34-1.36) calls Allocate before it refuses
    # a node on which an allocated claim's nodeSelector does not match: the CEL runtime
    # error on node-1's gpu-0 aborts the attempt although node-2 would fit
    output = simulate(load(_pinned_cluster(
        'device.attributes["gpu.example.com"].model == "a"'))).output()
    reason, message = _condition(output, "p")
    assert reason == "SchedulerError"
    assert "CEL runtime error" in message and "gpu.example.com/node-1/gpu-0" in message


def test_a_node_that_cannot_allocate_says_so_before_the_allocated_claim_excludes_it():
    # the same Filter: "cannot allocate all claims" is returned before "resourceclaim not
    # available on the node"; node-2 fits
    output = simulate(load(_pinned_cluster(
        '"model" in device.attributes["gpu.example.com"]'))).output()
    assert _items(output, "Pod")["p"]["spec"]["nodeName"] == "node-2"
    output = simulate(load(_pinned_cluster("false"))).output()
    assert _condition(output, "p") == (
        "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_a_claim_being_deleted_is_refused_before_any_node():
    deleting = claim_doc(name="c")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    deleting["metadata"]["finalizers"] = ["example.com/keep"]
    docs = [*_cluster()[:5], deleting, pod("p", claims={"gpu": "c"})]
    assert _condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", '0/2 nodes are available: resourceclaim "c" is being deleted.')


def test_a_missing_v1_claim_beside_a_present_one_is_named():
    docs = [*_cluster()[:5], claim_doc(name="c"),
            pod("p", claims={"gpu": "c", "more": "absent"})]
    assert _condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", '0/2 nodes are available: could not find ResourceClaim "default/absent".')


# -- extended resources backed by DRA (scheduling/v1_extended.py) ------------------------
def _extended_pod(name: str = "p", count: str = "1") -> dict:
    doc = pod(name)
    doc["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": count,
                                                              "cpu": "1"}}
    return doc


def _extended_cluster(allocatable: dict | None = None) -> list[dict]:
    worker = node("node-1")
    worker["status"]["allocatable"].update(allocatable or {})
    return [worker, class_doc(extendedResourceName="example.com/gpu"),
            slice_doc([device("gpu-0"), device("gpu-1")])]


def test_an_extended_resource_gets_its_claim_through_dra():
    output = simulate(load([*_extended_cluster(), _extended_pod(count="2")])).output()
    uid = stable_uid("Pod", "default", "p")
    name = extended_claim_name("p", uid)
    claim = _items(output, "ResourceClaim")[name]
    assert name.startswith("p-extended-resources-") and len(name) == 26
    assert claim["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["metadata"]["generateName"] == "p-extended-resources-"
    assert claim["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid, "controller": True,
         "blockOwnerDeletion": True}]
    assert claim["spec"] == {"devices": {"requests": [{"name": "container-0-request-1",
                                                       "exactly": {
                                                           "deviceClassName": "gpu",
                                                           "allocationMode": "ExactCount",
                                                           "count": 2}}]}}
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == [
        "gpu-0", "gpu-1"]
    placed = _items(output, "Pod")["p"]
    assert placed["spec"]["nodeName"] == "node-1"
    assert placed["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-1"}],
        "resourceClaimName": name}


def test_a_node_with_allocatable_serves_it_through_the_device_plugin():
    output = simulate(load([*_extended_cluster({"example.com/gpu": "4"}),
                            _extended_pod()])).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}
    assert _items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"


def test_an_extended_resource_nothing_serves_is_insufficient():
    docs = [node("node-1"), class_doc(extendedResourceName="example.com/other"),
            slice_doc([device("gpu-0")]), _extended_pod()]
    assert _condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", "0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_more_extended_resources_than_devices_cannot_allocate():
    output = simulate(load([*_extended_cluster(), _extended_pod(count="3")])).output()
    assert _condition(output, "p") == (
        "Unschedulable", "0/1 nodes are available: 1 cannot allocate all claims.")
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}


def test_without_the_gate_extended_resources_are_not_dra_backed():
    output = simulate(load([*_extended_cluster(), _extended_pod()], release="1.35")).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}


def test_the_extended_claim_is_deleted_when_its_pod_is_done():
    docs = [*_extended_cluster(), _extended_pod()]
    simulation = simulate(load(docs))
    placed = simulation.state.get("Pod", "default", "p")
    simulation.state.writable(placed).phase = "Succeeded"
    simulation.settle()
    assert "ResourceClaim" not in {i["kind"] for i in simulation.output()["items"]}


# -- binding conditions (scheduling/v1_prebind.py) --------------------------------------
def _binding_cluster() -> list[dict]:
    gpu = device("gpu-0", bindsToNode=True, bindingConditions=["Attached"],
                 bindingFailureConditions=["AttachFailed"])
    return [node("node-1"), class_doc(), slice_doc([gpu]), claim_doc(name="c"),
            pod("p", claims={"gpu": "c"})]


def test_a_pod_waits_for_binding_conditions_then_times_out_and_retries():
    simulation = simulate(load(_binding_cluster()))
    claim = _items(simulation.output(), "ResourceClaim")["c"]
    waiting = _items(simulation.output(), "Pod")["p"]
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2025-01-01T00:00:00Z"
    assert claim["status"]["allocation"]["devices"]["results"][0]["bindingConditions"] == [
        "Attached"]
    assert claim["status"]["reservedFor"][0]["name"] == "p"
    assert "nodeName" not in waiting["spec"]
    assert waiting["status"]["nominatedNodeName"] == "node-1"
    assert simulation.next_wakeup() == parse_time("2025-01-01T00:10:00Z")
    simulation.advance(timedelta(minutes=10))
    output = simulation.output()
    retried = _items(output, "ResourceClaim")["c"]["status"]["allocation"]
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
    assert _items(simulate(load(docs)).output(), "Pod")["p"]["spec"]["nodeName"] == "node-1"


def test_a_failure_condition_deallocates_and_the_pod_is_retried():
    docs = [*_binding_cluster()[:3],
            _allocated_with([_condition_doc("AttachFailed", reason="NoLink")]),
            pod("p", claims={"gpu": "c"})]
    output = simulate(load(docs)).output()
    events = [e["message"] for e in output["items"]
              if e["kind"] == "Event" and e["reason"] == "FailedScheduling"]
    assert events == ['running PreBind plugin "DynamicResources": claim c binding failed: '
                      'reason=NoLink, message="m"']
    claim = _items(output, "ResourceClaim")["c"]
    assert "devices" not in claim["status"]  # the failed statuses went with the allocation
    assert claim["status"]["allocation"]["allocationTimestamp"] == "2025-01-01T00:00:00Z"
    assert _items(output, "Pod")["p"]["status"]["nominatedNodeName"] == "node-1"


# -- alike pods share a pass's placement cache; results stay exact ------------------------
def _template_pods(count: int) -> list[dict]:
    docs = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "t", "namespace": "default"},
             "spec": {"spec": {"devices": {"requests": [
                 {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}}]
    for i in range(count):
        doc = pod(f"p{i}")
        doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
        docs.append(doc)
    return docs


def test_alike_pods_fill_nodes_in_order_and_the_last_counts_every_node():
    docs = [node("node-0", unschedulable=True), node("node-1"), node("node-2"), class_doc()]
    for name in ("node-0", "node-1", "node-2"):
        docs.append(slice_doc([device("gpu-0")], name=f"{name}-gpus", nodeName=name,
                              pool={"name": name, "resourceSliceCount": 1}))
    output = simulate(load(docs + _template_pods(4))).output()
    pods = _items(output, "Pod")
    assert [pods[f"p{i}"]["spec"].get("nodeName") for i in range(4)] == [
        "node-1", "node-2", None, None]
    for name in ("p2", "p3"):
        assert _condition(output, name) == (
            "Unschedulable", "0/3 nodes are available: 1 node(s) were unschedulable, "
            "2 cannot allocate all claims.")


def _twins(shapes: list[tuple[int, int]], nodes: int = 3) -> list[dict]:
    """``nodes`` nodes of 3 CPUs with two devices each (one "big"); a pod per shape: its
    claim asks for 1 or 2 devices (``count``; 3 means one big device), its CPU is ``cpu``."""
    docs = [node(f"node-{n}", cpu="3") for n in range(nodes)] + [class_doc()]
    for n in range(nodes):
        docs.append(slice_doc([device("gpu-0", attributes={"big": {"bool": True}}),
                               device("gpu-1", attributes={"big": {"bool": False}})],
                              name=f"node-{n}-gpus", nodeName=f"node-{n}",
                              pool={"name": f"node-{n}", "resourceSliceCount": 1}))
    for i, (count, cpu) in enumerate(shapes):
        big = count > 2
        selectors = ([{"cel": {"expression": 'device.attributes["gpu.example.com"].big'}}]
                     if big else [])
        docs.append(claim_doc([request(count=1 if big else count, selectors=selectors)],
                              name=f"claim-{i}"))
        docs.append(pod(f"pod-{i}", claims={"gpu": f"claim-{i}"}, cpu=str(cpu)))
    return docs


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 2)), max_size=12))
def test_alike_pods_get_what_a_scan_without_the_placement_cache_gives(shapes):
    docs = _twins(shapes)
    cached = dump(simulate(load(docs)).output(), "yaml")
    with patch("allocation.engine.scheduling.v1_views.signature", return_value=None):
        assert dump(simulate(load(docs)).output(), "yaml") == cached


def test_a_failure_is_not_reused_once_a_node_changed():
    # pod-0 and pod-1 fill both nodes' devices; pod-2 fails; "plain" takes 2 of node-0's 3
    # CPUs; pod-2's twin pod-3 must see node-0's new answer
    docs = _twins([(2, 1), (2, 1), (2, 1)], nodes=2)
    docs += [pod("plain", cpu="2"), claim_doc([request(count=2, selectors=[])], name="claim-3"),
             pod("pod-3", claims={"gpu": "claim-3"}, cpu="1")]
    output = simulate(load(docs)).output()
    first = {}  # each pod's first FailedScheduling message: the first pass's answer
    for e in output["items"]:
        if e["kind"] == "Event" and e["reason"] == "FailedScheduling":
            first.setdefault(e["involvedObject"]["name"], e["message"])
    assert first["pod-2"] == "0/2 nodes are available: 2 cannot allocate all claims."
    assert _items(output, "Pod")["plain"]["spec"]["nodeName"] == "node-0"
    assert first["pod-3"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all claims.")


def _node_walks(per_signature: int) -> int:
    """How often the v1 scheduler looks at a node's state for pending pods of two
    signatures (cpu 20 and 30 on nodes with 8) that alternate, ``per_signature`` each."""
    docs = [*(node(f"node-{i}") for i in range(3)), class_doc(), slice_doc([device("gpu-0")])]
    for i in range(per_signature):
        for cpu in ("20", "30"):
            docs += [claim_doc(name=f"c-{cpu}-{i}"),
                     pod(f"p-{cpu}-{i}", claims={"gpu": f"c-{cpu}-{i}"}, cpu=cpu)]
    calls = []
    real = V1Scheduling._node_state
    with patch.object(V1Scheduling, "_node_state",
                      lambda *args: calls.append(1) or real(*args)):
        output = simulate(load(docs)).output()
    assert not any(i["spec"].get("nodeName") for i in output["items"] if i["kind"] == "Pod")
    return len(calls)


def test_alternating_pending_pods_alike_reuse_the_failure_of_their_signature():
    # their own FailedScheduling events change no node's answer: one walk per signature
    assert _node_walks(3) == _node_walks(1) > 0
