"""Extended resources backed by DRA in the scheduler (``scheduling/v1_extended.py``,
KEP-5004): a container's extended resource that a DeviceClass's ``extendedResourceName``
serves gets the pod's extended-resource claim, unless the node's allocatable serves it
through a device plugin."""

from __future__ import annotations

import json

from allocation.engine.objects import stable_uid
from allocation.engine.simulation import simulate
from allocation.engine.v1.templates import extended_claim_name
from tests.allocation.engine.manifests.v1_docs import class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_outputs import (
    extended_cluster,
    extended_pod,
    items,
    pod_condition,
)
from tests.factories import node, pod


def test_an_extended_resource_gets_its_claim_through_dra():
    output = simulate(load([*extended_cluster(), extended_pod(count="2")])).output()
    uid = stable_uid("Pod", "default", "p")
    name = extended_claim_name("p", uid)
    claim = items(output, "ResourceClaim")[name]
    assert name.startswith("p-extended-resources-") and len(name) == 26
    assert claim["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["metadata"]["generateName"] == "p-extended-resources-"
    # 1.35+ leave blockOwnerDeletion out (kubernetes PR #134956)
    assert claim["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid, "controller": True}]
    assert claim["spec"] == {"devices": {"requests": [{"name": "container-0-request-1",
                                                       "exactly": {
                                                           "deviceClassName": "gpu",
                                                           "allocationMode": "ExactCount",
                                                           "count": 2}}]}}
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == [
        "gpu-0", "gpu-1"]
    placed = items(output, "Pod")["p"]
    assert placed["spec"]["nodeName"] == "node-1"
    assert placed["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-1"}],
        "resourceClaimName": name}


def test_a_node_with_allocatable_serves_it_through_the_device_plugin():
    output = simulate(load([*extended_cluster({"example.com/gpu": "4"}),
                            extended_pod()])).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}
    assert items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"
    # an allocatable of 0 is no device plugin's: DRA serves it (1.35's rule)
    output = simulate(load([*extended_cluster({"example.com/gpu": "0"}),
                            extended_pod()])).output()
    assert "ResourceClaim" in {i["kind"] for i in output["items"]}


def test_an_extended_resource_nothing_serves_is_insufficient():
    docs = [node("node-1"), class_doc(extendedResourceName="example.com/other"),
            slice_doc([device("gpu-0")]), extended_pod()]
    assert pod_condition(simulate(load(docs)).output(), "p") == (
        "Unschedulable", "0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_more_extended_resources_than_devices_cannot_allocate():
    output = simulate(load([*extended_cluster(), extended_pod(count="3")])).output()
    assert pod_condition(output, "p") == (
        "Unschedulable", "0/1 nodes are available: 1 cannot allocate all claims.")
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}


def test_a_pending_pods_explanation_details_the_claim_its_extended_resources_would_get():
    # nothing names that claim yet: the annotation explains it as the scheduler tried it
    docs = [*extended_cluster(), extended_pod("taker", count="2"), extended_pod(count="1")]
    output = simulate(load(docs)).output()
    explain = json.loads(items(output, "Pod")["p"]["metadata"]["annotations"][
        "draplanner.io/explain"])
    [entry] = explain["nodes"][0]["requests"]
    assert (entry["claim"], entry["class"], entry["matching"]) == (
        "default/<extended-resources>", "gpu", [])
    [group] = entry["refused"]  # both GPUs, taken by taker's claim
    assert (group["code"], len(group["candidates"])) == ("in-use", 2)
    assert group["reason"].startswith("allocated to claim default/taker-extended-resources-")


def test_without_the_gate_extended_resources_are_not_dra_backed():
    output = simulate(load([*extended_cluster(), extended_pod()], release="1.35")).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}
    # NodeResourcesFit: the node has none of it through a device plugin either
    assert pod_condition(output, "p") == (
        "Unschedulable", "0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_device_plugin_resources_are_counted_against_the_nodes_allocatable():
    output = simulate(load([*extended_cluster({"example.com/gpu": "1"}),
                            extended_pod("a"), extended_pod("b")])).output()
    assert items(output, "Pod")["a"]["spec"]["nodeName"] == "node-1"
    assert pod_condition(output, "b") == (
        "Unschedulable", "0/1 nodes are available: 1 Insufficient example.com/gpu.")
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}


def test_a_limit_alone_is_requested_and_a_zero_request_asks_for_nothing():
    limited = pod("limited")
    limited["spec"]["containers"][0]["resources"] = {"limits": {"example.com/gpu": "1"}}
    zero = pod("zero")
    zero["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "0",
                                                               "example.com/other": "0"}}
    output = simulate(load([*extended_cluster(), limited, zero])).output()
    [claim] = [i for i in output["items"] if i["kind"] == "ResourceClaim"]
    assert claim["metadata"]["ownerReferences"][0]["name"] == "limited"
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    assert items(output, "Pod")["zero"]["spec"]["nodeName"] == "node-1"
    assert "extendedResourceClaimStatus" not in items(output, "Pod")["zero"]["status"]


def test_a_quantity_with_a_suffix_is_counted_in_devices_and_errors_name_the_memory_claim():
    # 1k devices: past the 32 results of a claim, a fatal error that names the claim as
    # kube-scheduler's Filter has it in memory
    output = simulate(load([*extended_cluster(), extended_pod(count="1k")])).output()
    assert pod_condition(output, "p") == (
        "SchedulerError", 'running "DynamicResources" filter plugin: claim '
        "default/<extended-resources>: number of requested devices 1000 exceeds the claim "
        "limit of 32")


def test_request_mappings_put_long_lived_containers_first():
    doc = pod("p")
    doc["spec"]["initContainers"] = [
        {"name": "setup", "image": "x", "resources": {"requests": {"example.com/gpu": "1"}}}]
    doc["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"}}
    output = simulate(load([*extended_cluster(), doc])).output()
    status = items(output, "Pod")["p"]["status"]["extendedResourceClaimStatus"]
    assert [(m["containerName"], m["requestName"]) for m in status["requestMappings"]] == [
        ("main", "container-1-request-0"), ("setup", "container-0-request-0")]


def test_the_extended_claim_is_deleted_when_its_pod_is_done():
    docs = [*extended_cluster(), extended_pod()]
    simulation = simulate(load(docs))
    placed = simulation.state.get("Pod", "default", "p")
    simulation.state.writable(placed).phase = "Succeeded"
    simulation.settle()
    assert "ResourceClaim" not in {i["kind"] for i in simulation.output()["items"]}
