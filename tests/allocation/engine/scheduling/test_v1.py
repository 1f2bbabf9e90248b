"""The scheduler with resource.k8s.io/v1 claims (``scheduling/v1.py``): pods naming v1
claims are placed by the v1 allocator, nodes in name order."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.scheduling.cache import PlacementCache
from allocation.engine.simulation import simulate
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


def test_an_allocated_claim_has_the_allocation_finalizer_and_reservation():
    output = simulate(load(_cluster())).output()
    claims = {k: v for k, v in _items(output, "ResourceClaim").items()}
    uid = _items(output, "Pod")["pod-b"]["metadata"]["uid"]
    claim = claims["claim-b"]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "pod-b",
                                               "uid": uid}]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-2", "device": "gpu-0"}]
    assert "status" not in claims["claim-c"] or "allocation" not in claims["claim-c"]["status"]


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


def test_a_pod_bound_in_the_input_gets_its_claim_allocated_on_its_node():
    docs = [*_cluster()[:5], claim_doc(name="claim-a"),
            pod("pod-a", claims={"gpu": "claim-a"}, node_name="node-2")]
    claims = _items(simulate(load(docs)).output(), "ResourceClaim")
    assert claims["claim-a"]["status"]["allocation"]["devices"]["results"][0]["pool"] == (
        "node-2")


def test_the_autoscaler_says_it_does_not_simulate_v1_claims_and_nothing_fails():
    simulation = simulate(load([*_cluster(), node_group()]))
    events = [e["message"] for e in simulation.output()["items"]
              if e["kind"] == "Event" and e["reason"] == "NotTriggerScaleUp"]
    assert simulation.failures == []
    assert events == ["pod didn't trigger scale-up: node group gpu-pool cannot fit it: "
                      "resourceclaim \"default/claim-c\" is a resource.k8s.io/v1 claim, which "
                      "only the scheduler simulates yet"]


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
        "Unschedulable", '0/2 nodes are available: resourceclaim "default/absent" not found.')


def test_the_pod_scheduled_condition_is_true_after_binding():
    output = simulate(load(_cluster())).output()
    condition = _items(output, "Pod")["pod-a"]["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("PodScheduled", "True")


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
def test_twins_resume_at_the_cursor_and_place_as_a_scan_from_the_first_node(shapes):
    docs = _twins(shapes)
    with_cache = dump(simulate(load(docs)).output(), "yaml")
    with patch.object(PlacementCache, "start", lambda self, key, epoch: 0), \
            patch.object(PlacementCache, "failure", lambda self, key, epoch: None):
        assert dump(simulate(load(docs)).output(), "yaml") == with_cache


def test_a_device_release_makes_every_cursor_stale():
    sim = simulate(load(_cluster()))
    v1 = next(c for c in sim.controllers if c.name == "scheduler").v1
    before = v1._releases
    v1.allocator.release({"metadata": {"namespace": "default", "name": "claim-a"}})
    assert v1._releases == before + 1


def test_a_twin_failure_is_not_reused_once_a_node_changed():
    # pod-0 and pod-1 fill both nodes' devices; pod-2 fails; "plain" takes 2 of node-0's 3
    # CPUs; pod-2's twin pod-3 must see node-0's new answer
    docs = _twins([(2, 1), (2, 1), (2, 1)], nodes=2)
    docs += [pod("plain", cpu="2"), claim_doc([request(count=2)], name="claim-3"),
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
