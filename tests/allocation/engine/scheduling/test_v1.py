"""The scheduler with resource.k8s.io/v1 claims (``scheduling/v1.py``): pods naming v1
claims are placed by the v1 allocator, nodes in name order.

Binding conditions are in test_v1_prebind.py, pods alike sharing the placement cache in
test_cache.py.
"""

from __future__ import annotations

import json
import random

from allocation.engine.changes import apply_changes
from allocation.engine.objects import ObjectKey, ResourceClaimV1
from allocation.engine.scheduler import Scheduler
from allocation.engine.scheduling import v1_views
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.simulation import simulate
from allocation.engine.state import ClusterState
from allocation.engine.writer import dump
from tests.allocation.engine.autoscaler.builders import node_group
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_outputs import (
    extended_pod,
    items,
    pod_condition,
    two_gpu_nodes_three_pods,
)
from tests.factories import node, pod


def test_two_pods_fit_one_per_node_and_the_third_is_pending():
    output = simulate(load(two_gpu_nodes_three_pods())).output()
    pods = items(output, "Pod")
    assert [pods[p]["spec"].get("nodeName") for p in ("pod-a", "pod-b", "pod-c")] == [
        "node-1", "node-2", None]
    condition = pods["pod-c"]["status"]["conditions"][0]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False", "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_scheduled_events_are_recorded_for_the_bound_pods():
    output = simulate(load(two_gpu_nodes_three_pods())).output()
    events = [(e["reason"], e["involvedObject"]["name"], e["message"])
              for e in output["items"] if e["kind"] == "Event"]
    assert ("Scheduled", "pod-a", "Successfully assigned default/pod-a to node-1") in events
    assert ("Scheduled", "pod-b", "Successfully assigned default/pod-b to node-2") in events
    assert ("FailedScheduling", "pod-c",
            "0/2 nodes are available: 2 cannot allocate all claims.") in events


def test_the_output_is_deterministic():
    assert dump(simulate(load(two_gpu_nodes_three_pods())).output(), "yaml") == dump(
        simulate(load(two_gpu_nodes_three_pods())).output(), "yaml")


def test_an_input_allocation_is_booked_so_its_device_is_not_given_again():
    taken = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}
    docs = [*two_gpu_nodes_three_pods()[:5], claim_doc(name="held", status=taken)]
    docs += [claim_doc(name="claim-a"), pod("pod-a", claims={"gpu": "claim-a"})]
    pods = items(simulate(load(docs)).output(), "Pod")
    assert pods["pod-a"]["spec"]["nodeName"] == "node-2"


def test_two_input_claims_naming_one_device_are_accepted_and_the_device_is_taken():
    # upstream's allocated state is the set of the devices of every allocated claim
    # (kube-scheduler's GatherAllocatedState, 1.34-1.36): a device two claims name is simply
    # in use; the other pods are scheduled as usual
    taken = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}
    docs = [*two_gpu_nodes_three_pods()[:5], claim_doc(name="held-1", status=taken),
            claim_doc(name="held-2", status=taken)]
    docs += [claim_doc(name="claim-a"), pod("pod-a", claims={"gpu": "claim-a"}),
             claim_doc(name="claim-b"), pod("pod-b", claims={"gpu": "claim-b"})]
    simulation = simulate(load(docs))
    pods = items(simulation.output(), "Pod")
    assert simulation.failures == []
    assert pods["pod-a"]["spec"]["nodeName"] == "node-2"
    assert pod_condition(simulation.output(), "pod-b") == (
        "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_a_pod_bound_in_the_input_gets_its_claim_allocated_on_its_node():
    docs = [*two_gpu_nodes_three_pods()[:5], claim_doc(name="claim-a"),
            pod("pod-a", claims={"gpu": "claim-a"}, node_name="node-2")]
    claims = items(simulate(load(docs)).output(), "ResourceClaim")
    assert claims["claim-a"]["status"]["allocation"]["devices"]["results"][0]["pool"] == (
        "node-2")


def test_a_node_group_without_v1_slices_cannot_fit_a_v1_pod_and_nothing_fails():
    simulation = simulate(load([*two_gpu_nodes_three_pods(), node_group()]))
    events = [e["message"] for e in simulation.output()["items"]
              if e["kind"] == "Event" and e["reason"] == "NotTriggerScaleUp"]
    assert simulation.failures == []
    assert events == ["pod didn't trigger scale-up: node group gpu-pool cannot fit it: "
                      "cannot allocate all claims"]


def test_a_cel_runtime_error_fails_the_attempt_with_scheduler_error():
    broken = class_doc(selectors=[{"cel": {
        "expression": 'device.attributes["gpu.example.com"].model == "x"'}}])
    docs = [node("node-1"), broken, slice_doc([device("gpu-0")]), claim_doc(name="c"),
            pod("p", claims={"gpu": "c"})]
    output = simulate(load(docs)).output()
    reason, message = pod_condition(output, "p")
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
    reason, message = pod_condition(output, "p")
    assert reason == "SchedulerError"
    assert "CEL runtime error" in message and "gpu.example.com/node-1/gpu-0" in message


def test_a_node_that_cannot_allocate_says_so_before_the_allocated_claim_excludes_it():
    # the same Filter: "cannot allocate all claims" is returned before "resourceclaim not
    # available on the node"; node-2 fits
    output = simulate(load(_pinned_cluster(
        '"model" in device.attributes["gpu.example.com"]'))).output()
    assert items(output, "Pod")["p"]["spec"]["nodeName"] == "node-2"
    output = simulate(load(_pinned_cluster("false"))).output()
    assert pod_condition(output, "p") == (
        "Unschedulable", "0/2 nodes are available: 2 cannot allocate all claims.")


def test_a_claim_being_deleted_is_refused_before_any_node():
    deleting = claim_doc(name="c")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    deleting["metadata"]["finalizers"] = ["example.com/keep"]
    docs = [*two_gpu_nodes_three_pods()[:5], deleting, pod("p", claims={"gpu": "c"})]
    assert pod_condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", '0/2 nodes are available: resourceclaim "c" is being deleted.')


def test_a_missing_v1_claim_beside_a_present_one_is_named():
    docs = [*two_gpu_nodes_three_pods()[:5], claim_doc(name="c"),
            pod("p", claims={"gpu": "c", "more": "absent"})]
    assert pod_condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", '0/2 nodes are available: could not find ResourceClaim "default/absent".')


def test_the_node_view_kept_per_pass_is_the_nodes_own_view_after_a_change():
    """``V1Scheduling.node_doc`` (made once per pass and node object) equals
    ``v1_views.node_doc``; a node changed in the state (another object: a fork's copy with
    other labels) gets its own view, and the fork's parent keeps the first."""
    state = ClusterState.build(load([node("node-1", labels={"zone": "a"}), class_doc()]))
    scheduling = V1Scheduling()
    scheduling.begin()
    first = state.nodes["node-1"]
    view = scheduling.node_doc(first)
    assert view == v1_views.node_doc(first) and scheduling.node_doc(first) is view
    fork = state.fork()
    changed = fork.writable(fork.nodes["node-1"])
    changed.meta.labels["zone"] = "b"
    assert changed is not first and fork.nodes["node-1"] is changed
    other = scheduling.node_doc(changed)
    assert other == v1_views.node_doc(changed) and other["metadata"]["labels"] == {"zone": "b"}
    assert scheduling.node_doc(first) == v1_views.node_doc(first)
    assert scheduling.node_doc(first)["metadata"]["labels"] == {"zone": "a"}


def _v1_pod(name: str, *, template: str | None = None, claim: str | None = None,
            phase: str | None = None) -> dict:
    doc = extended_pod(name) if template is None and claim is None else pod(name, phase=phase)
    if template is not None:
        doc["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": template}]
    if claim is not None:
        doc["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": claim}]
    return doc


def test_a_v1_pod_known_quiet_once_placed_gives_what_a_second_visit_gives():
    """A v1 pod the scheduler places is known from the next pass
    (``V1Scheduling._remember_placed``) rather than visited again: in a kept state through
    pods added and finishing, claims shared and deleted, nodes added, and in forks, every
    object, condition and Event is as when each placed pod is visited again."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}}

    def gpus(name: str, count: int) -> list[dict]:
        return [node(name), slice_doc([device(f"gpu-{j}") for j in range(count)],
                                      name=f"{name}-gpus", nodeName=name,
                                      pool={"name": name, "resourceSliceCount": 1})]

    docs = [class_doc(extendedResourceName="example.com/gpu"), template,
            claim_doc(name="shared"), claim_doc(name="solo"),
            *gpus("n0", 2), *gpus("n1", 2), *gpus("n2", 1),
            _v1_pod("s0", claim="shared"), _v1_pod("s1", claim="shared"),
            _v1_pod("c0", claim="solo"), _v1_pod("e0"),
            *(_v1_pod(f"p{i}", template="t") for i in range(3))]

    def slow(sim):
        for controller in sim.controllers:
            if isinstance(controller, Scheduler):
                controller.v1._remember_placed = lambda *args: None
        return sim

    def out(sim) -> str:
        return json.dumps(sim.output(), sort_keys=True)

    fast, second = simulate(load(docs)), slow(simulate(load(docs)))
    assert out(fast) == out(second)
    quiet = next(c for c in fast.controllers if isinstance(c, Scheduler)).quiet
    assert quiet.known(fast.state.get("Pod", "default", "p0"))  # not visited twice
    def change(gone: list[ObjectKey], new: list[dict]) -> None:
        for sim in (fast, second):  # objects of its own each: a state changes them
            objects = load([class_doc(extendedResourceName="example.com/gpu"), template,
                            *new]).objects[2:] if new else []
            assert apply_changes(sim.state, gone, objects)
            sim.settle()

    rng = random.Random(11)
    for step in range(24):
        choice = rng.choice(["pod", "claim-pod", "done", "drop-claim", "unallocate", "node",
                             "fork"])
        # a claim some placed pod holds (its own, shared or extended-resource one)
        held = sorted(c.name for c in fast.state.of_kind(ResourceClaimV1) if c.reserved_for)
        placed = sorted(p.name for p in fast.state.pods()
                        if p.node_name and not p.terminated and p.name.startswith("p"))
        gone, new = [], []
        if choice == "pod":
            new = [_v1_pod(f"q{step}", template="t")]
        elif choice == "claim-pod":
            new = [claim_doc(name=f"c{step}"), _v1_pod(f"r{step}", claim=f"c{step}")]
        elif choice == "done" and placed:
            new = [_v1_pod(rng.choice(placed), template="t", phase="Succeeded")]
        elif choice == "drop-claim" and held:
            gone = [ObjectKey("ResourceClaim", "default", rng.choice(held))]
        elif choice == "unallocate" and held:  # its status cleared: no pod is touched
            doc = fast.state.get("ResourceClaim", "default", rng.choice(held)).to_manifest()
            del doc["status"]
            new = [doc]
        elif choice == "node":
            new = gpus(f"m{step}", 1)
        if choice == "fork":
            fast, second = fast.fork(), slow(second.fork())
            new = [_v1_pod(f"f{step}", template="t")]
        change(gone, new)
        assert out(fast) == out(second), f"step {step}: {choice}"
    # then every claim a placed pod holds loses its allocation, the extended one's too
    held = sorted(c.name for c in fast.state.of_kind(ResourceClaimV1) if c.reserved_for)
    assert any("-extended-resources-" in name for name in held)
    for name in held:
        doc = fast.state.get("ResourceClaim", "default", name).to_manifest()
        del doc["status"]
        change([], [doc])
        assert out(fast) == out(second), f"{name} unallocated"
