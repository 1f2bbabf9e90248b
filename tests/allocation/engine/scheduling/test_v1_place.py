"""One v1 pod tried on one node (``scheduling/v1_place.py``): what a fit writes (the
allocation, the delete-protection finalizer, the reservation, the bind)."""

from __future__ import annotations

from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
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


def test_the_pod_scheduled_condition_is_true_after_binding():
    output = simulate(load(_cluster())).output()
    condition = _items(output, "Pod")["pod-a"]["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("PodScheduled", "True")


def test_a_bound_pod_with_its_claims_allocated_and_reserved_changes_nothing():
    first = simulate(load(_cluster()))
    again = simulate(load(first.output()["items"]))
    assert again.output()["items"] == first.output()["items"]
