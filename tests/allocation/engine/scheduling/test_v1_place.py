"""One v1 pod tried on one node (``scheduling/v1_place.py``): what a fit writes (the
allocation, the delete-protection finalizer, the reservation, the bind)."""

from __future__ import annotations

from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_outputs import items, two_gpu_nodes_three_pods
from tests.factories import node, pod


def test_an_allocated_claim_has_the_allocation_finalizer_and_reservation():
    output = simulate(load(two_gpu_nodes_three_pods())).output()
    claims = {k: v for k, v in items(output, "ResourceClaim").items()}
    uid = items(output, "Pod")["pod-b"]["metadata"]["uid"]
    claim = claims["claim-b"]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "pod-b",
                                               "uid": uid}]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": "gpu.example.com", "pool": "node-2", "device": "gpu-0"}]
    assert "status" not in claims["claim-c"] or "allocation" not in claims["claim-c"]["status"]


def test_the_pod_scheduled_condition_is_true_after_binding():
    output = simulate(load(two_gpu_nodes_three_pods())).output()
    condition = items(output, "Pod")["pod-a"]["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("PodScheduled", "True")


def test_a_bound_pod_with_its_claims_allocated_and_reserved_changes_nothing():
    first = simulate(load(two_gpu_nodes_three_pods()))
    again = simulate(load(first.output()["items"]))
    assert again.output()["items"] == first.output()["items"]


def _one_node_two_gpus(*pods: dict) -> list[dict]:
    docs = [node("node-1"), class_doc(),
            slice_doc([device("gpu-0"), device("gpu-1")], name="node-1-gpus",
                      nodeName="node-1", pool={"name": "node-1", "resourceSliceCount": 1})]
    return [*docs, claim_doc(name="claim-a"), claim_doc(name="claim-d"), *pods]


def test_a_claim_allocated_now_is_made_writable_once_for_allocation_and_reservation():
    # allocated and reserved through one writable version: the claim's key is touched
    # once by the placement (the other touch is the state's build), not twice
    simulation = simulate(load(_one_node_two_gpus(pod("pod-a", claims={"gpu": "claim-a"}))))
    state = simulation.state
    key = state.get("ResourceClaim", "default", "claim-a").key
    assert state.touched.count(key) == 2
    claim = state.get("ResourceClaim", "default", "claim-a")
    assert claim.allocated and claim.reserved_pod_uids == [
        state.get("Pod", "default", "pod-a").meta.uid]


def test_a_pod_with_an_allocated_and_a_pending_claim_reserves_both():
    # pod-d shares claim-a, allocated for pod-a before, and asks claim-d: the claim
    # allocated now is reserved with its allocation, the other after (try_node)
    output = simulate(load(_one_node_two_gpus(
        pod("pod-a", claims={"gpu": "claim-a"}),
        pod("pod-d", claims={"gpu": "claim-a", "second": "claim-d"})))).output()
    uids = {name: p["metadata"]["uid"] for name, p in items(output, "Pod").items()}
    claims = items(output, "ResourceClaim")
    assert [r["name"] for r in claims["claim-a"]["status"]["reservedFor"]] == ["pod-a", "pod-d"]
    assert claims["claim-d"]["status"]["reservedFor"] == [
        {"resource": "pods", "name": "pod-d", "uid": uids["pod-d"]}]
    assert [r["device"] for c in ("claim-a", "claim-d")
            for r in claims[c]["status"]["allocation"]["devices"]["results"]] == ["gpu-0", "gpu-1"]
    assert items(output, "Pod")["pod-d"]["spec"]["nodeName"] == "node-1"
