"""One v1 pod tried on one node (``scheduling/v1_place.py``): what a fit writes (the
allocation, the delete-protection finalizer, the reservation, the bind)."""

from __future__ import annotations

from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import load
from tests.allocation.engine.scheduling.v1_outputs import items, two_gpu_nodes_three_pods


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
