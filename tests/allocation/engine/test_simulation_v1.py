"""Simulating resource.k8s.io/v1: template claims and the claim lifecycle (spec section 4,
docs/v1.md "Simulating v1"), and what ``simulation.refuse_unsimulated_v1`` refuses.

Golden tests: small clusters, exact results.
"""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests
from allocation.engine.objects import stable_uid
from allocation.engine.simulation import simulate
from allocation.engine.v1.templates import name_suffix
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    request,
    slice_doc,
)
from tests.factories import node, pod

FINALIZER = "resource.kubernetes.io/delete-protection"


def _template_doc(name: str = "t", labels: dict | None = None) -> dict:
    spec: dict = {"spec": {"devices": {"requests": [request()]}}}
    if labels:
        spec["metadata"] = {"labels": labels}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _cluster(devices: int = 1) -> list[dict]:
    return [node("node-1"), class_doc(),
            slice_doc([device(f"gpu-{i}") for i in range(devices)])]


def _v1_pod(name: str, templates: dict | None = None, claims: dict | None = None,
            **fields) -> dict:
    doc = pod(name, **fields)
    entries = [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    entries += [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    doc["spec"]["resourceClaims"] = entries
    return doc


def _items(output: dict, kind: str) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == kind}


def _generated(pod_name: str, pod_claim: str) -> str:
    return f"{pod_name}-{pod_claim}-" + name_suffix(stable_uid("Pod", "default", pod_name),
                                                    pod_claim)


def _result(device_name: str = "gpu-0") -> dict:
    return {"request": "r", "driver": "gpu.example.com", "pool": "node-1",
            "device": device_name}


# -- template claims -------------------------------------------------------------------
def test_a_template_pod_gets_its_generated_claim_allocated_and_is_bound():
    output = simulate(load([*_cluster(), _template_doc(labels={"app": "x"}),
                            _v1_pod("p", templates={"gpu": "t"})])).output()
    name = _generated("p", "gpu")
    pod_uid = stable_uid("Pod", "default", "p")
    claim = _items(output, "ResourceClaim")[name]
    assert claim["apiVersion"] == "resource.k8s.io/v1"
    assert claim["metadata"] == {
        "name": name, "generateName": "p-gpu-", "namespace": "default",
        "uid": stable_uid("ResourceClaim", "default", name), "labels": {"app": "x"},
        "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod_uid,
                             "controller": True}],
        "finalizers": [FINALIZER]}
    # 1.36 turns the binding gates on: bindClaim stamps every claim it reserves
    assert claim["status"] == {
        "allocation": {"allocationTimestamp": "2025-01-01T00:00:00Z",
                       "devices": {"results": [_result()]},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In",
                            "values": ["node-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": pod_uid}]}
    placed = _items(output, "Pod")["p"]
    assert placed["spec"]["nodeName"] == "node-1"
    assert placed["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": name}]


def test_a_134_claim_blocks_its_pods_deletion_and_has_no_allocation_timestamp():
    output = simulate(load([*_cluster(), _template_doc(), _v1_pod("p", templates={"gpu": "t"})],
                           release="1.34")).output()
    claim = _items(output, "ResourceClaim")[_generated("p", "gpu")]
    assert claim["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True
    assert "allocationTimestamp" not in claim["status"]["allocation"]


def test_two_pods_of_one_template_get_their_own_claims():
    output = simulate(load([*_cluster(devices=2), _template_doc(),
                            _v1_pod("a", templates={"gpu": "t"}),
                            _v1_pod("b", templates={"gpu": "t"})])).output()
    claims = _items(output, "ResourceClaim")
    assert sorted(claims) == sorted([_generated("a", "gpu"), _generated("b", "gpu")])
    assert sorted(c["status"]["allocation"]["devices"]["results"][0]["device"]
                  for c in claims.values()) == ["gpu-0", "gpu-1"]


def test_a_pod_with_a_missing_v1_template_waits_for_its_claim():
    output = simulate(load([*_cluster(), _template_doc(),
                            _v1_pod("p", templates={"gpu": "t", "more": "absent"})])).output()
    condition = _items(output, "Pod")["p"]["status"]["conditions"][0]
    assert condition["message"] == (
        '0/1 nodes are available: pod "default/p": ResourceClaim not created yet.')


def test_a_recorded_claim_the_pod_does_not_own_is_refused():
    foreign = claim_doc(name="p-gpu-zzzzz")
    bad = _v1_pod("p", templates={"gpu": "t"})
    bad["status"] = {"resourceClaimStatuses": [{"name": "gpu",
                                                "resourceClaimName": "p-gpu-zzzzz"}]}
    output = simulate(load([*_cluster(), _template_doc(), foreign, bad])).output()
    placed = _items(output, "Pod")["p"]
    # the controller makes the pod its own claim, as upstream does
    assert placed["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": _generated("p", "gpu")}]
    assert placed["spec"]["nodeName"] == "node-1"


def test_a_template_entry_recorded_as_needing_no_claim_is_skipped():
    skipped = _v1_pod("p", templates={"gpu": "t"})
    skipped["status"] = {"resourceClaimStatuses": [{"name": "gpu"}]}
    output = simulate(load([*_cluster(), _template_doc(), skipped])).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}
    assert _items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"


# -- the claim lifecycle ---------------------------------------------------------------
def _held(name: str, pod_name: str, uid: str | None = None, **meta) -> dict:
    doc = claim_doc(name=name, status={
        "allocation": {"devices": {"results": [_result()]}},
        "reservedFor": [{"resource": "pods", "name": pod_name,
                         "uid": uid or stable_uid("Pod", "default", pod_name)}]})
    doc["metadata"].update(finalizers=[FINALIZER], **meta)
    return doc


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_releases_and_deallocates_its_claim(phase):
    docs = [*_cluster(), _held("c", "done"),
            _v1_pod("done", claims={"gpu": "c"}, node_name="node-1", phase=phase)]
    claim = _items(simulate(load(docs)).output(), "ResourceClaim")["c"]
    assert "finalizers" not in claim["metadata"]
    assert claim.get("status", {}) == {}


def test_the_freed_device_goes_to_a_pending_pod():
    docs = [*_cluster(), _held("c", "done"), claim_doc(name="next"),
            _v1_pod("done", claims={"gpu": "c"}, node_name="node-1", phase="Succeeded"),
            _v1_pod("waiting", claims={"gpu": "next"})]
    output = simulate(load(docs)).output()
    assert _items(output, "Pod")["waiting"]["spec"]["nodeName"] == "node-1"
    assert _items(output, "ResourceClaim")["next"]["status"]["allocation"]["devices"][
        "results"] == [_result()]


def test_a_replaced_pod_loses_the_reservation_and_schedules_again():
    docs = [*_cluster(), _held("c", "p", uid="old-uid"), _v1_pod("p", claims={"gpu": "c"})]
    output = simulate(load(docs)).output()
    claim = _items(output, "ResourceClaim")["c"]
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": stable_uid("Pod", "default", "p")}]
    assert _items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"


def test_a_gone_pod_loses_the_reservation():
    claim = _items(simulate(load([*_cluster(), _held("c", "gone")])).output(),
                   "ResourceClaim")["c"]
    assert claim.get("status", {}) == {} and "finalizers" not in claim["metadata"]


def test_a_deleted_pod_that_was_never_scheduled_is_done_a_scheduled_one_is_not():
    unscheduled = _v1_pod("a", claims={"gpu": "c"})
    running = _v1_pod("b", claims={"gpu": "d"}, node_name="node-1")
    for doc in (unscheduled, running):
        doc["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    docs = [*_cluster(devices=2), _held("c", "a"), _held("d", "b"), unscheduled, running]
    docs[-3]["status"]["allocation"]["devices"]["results"] = [_result("gpu-1")]
    claims = _items(simulate(load(docs)).output(), "ResourceClaim")
    assert claims["c"].get("status", {}) == {}
    assert claims["d"]["status"]["reservedFor"][0]["name"] == "b"


def test_an_allocated_claim_without_reservations_stays_allocated():
    docs = [*_cluster(), claim_doc(name="c", status={
        "allocation": {"devices": {"results": [_result()]}}})]
    claim = _items(simulate(load(docs)).output(), "ResourceClaim")["c"]
    assert claim["status"] == {"allocation": {"devices": {"results": [_result()]}}}


def test_the_template_claim_of_a_finished_pod_is_deleted():
    done = _v1_pod("p", templates={"gpu": "t"}, node_name="node-1", phase="Succeeded")
    name = _generated("p", "gpu")
    done["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": name}]
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "p",
             "uid": stable_uid("Pod", "default", "p"), "controller": True}
    docs = [*_cluster(), _template_doc(), _held(name, "p", ownerReferences=[owner]), done]
    output = simulate(load(docs)).output()
    assert "ResourceClaim" not in {i["kind"] for i in output["items"]}
    assert _items(output, "Pod")["p"]["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": name}]


def test_a_claim_takes_256_pods_and_the_257th_waits():
    docs = [node("node-1", pods="300"), class_doc(), slice_doc([device("gpu-0")]),
            claim_doc(name="shared")]
    docs += [_v1_pod(f"p{i:03}", claims={"gpu": "shared"}) for i in range(257)]
    output = simulate(load(docs)).output()
    pods = _items(output, "Pod")
    assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 256
    condition = pods["p256"]["status"]["conditions"][0]
    assert (condition["reason"], condition["message"]) == (
        "Unschedulable", "0/1 nodes are available: resourceclaim in use.")
    assert len(_items(output, "ResourceClaim")["shared"]["status"]["reservedFor"]) == 256


# -- what is refused -------------------------------------------------------------------
def test_a_pod_mixing_v1_and_seed_claims_is_refused():
    loaded = load([node("node-1"), class_doc(), claim_doc(),
                   pod("p", claims={"gpu": "c"}, templates={"more": "seed-template"}),
                   {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": "seed-template", "namespace": "default"},
                    "spec": {"spec": {"resourceClassName": "gpu"}}}])
    with pytest.raises(InvalidManifests) as exc:
        simulate(loaded)
    assert [str(p) for p in exc.value.problems] == [
        "v1.yaml:4 (Pod default/p): spec.resourceClaims: a pod's claims and claim templates "
        "must be all resource.k8s.io/v1 or all seed (v1alpha2) ones to be simulated "
        "(docs/v1.md)"]


def test_a_pod_template_mixing_v1_and_seed_claims_is_refused():
    template = {"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "workers", "namespace": "default"},
                "template": {"spec": {"containers": [{"name": "c", "image": "x"}],
                                      "resourceClaims": [
                                          {"name": "a", "resourceClaimName": "c"},
                                          {"name": "b", "resourceClaimTemplateName": "seed"}]}}}
    loaded = load([node("node-1"), class_doc(), claim_doc(), template,
                   {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": "seed", "namespace": "default"},
                    "spec": {"spec": {"resourceClassName": "gpu"}}}])
    with pytest.raises(InvalidManifests) as exc:
        simulate(loaded)
    assert [str(p) for p in exc.value.problems] == [
        "v1.yaml:4 (PodTemplate default/workers): template.spec.resourceClaims: a pod's "
        "claims and claim templates must be all resource.k8s.io/v1 or all seed (v1alpha2) "
        "ones to be simulated (docs/v1.md)"]


def test_a_v1_template_alone_is_simulated():
    output = simulate(load([node("node-1"), class_doc(), _template_doc()])).output()
    assert [item["kind"] for item in output["items"]] == [
        "Node", "DeviceClass", "ResourceClaimTemplate"]


def test_a_device_class_alone_is_simulated():
    output = simulate(load([node("node-1"), class_doc()])).output()
    assert [item["kind"] for item in output["items"]] == ["Node", "DeviceClass"]


def test_a_namespace_is_simulated_as_before():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}}
    output = simulate(load([node("node-1"), namespace])).output()
    assert [item["kind"] for item in output["items"]] == ["Node", "Namespace"]


def test_a_v1_pod_keeps_off_a_tainted_node_unless_it_tolerates_the_taint():
    tainted = node("node-1")
    tainted["spec"] = {"taints": [{"key": "gpu", "effect": "NoExecute"}]}
    plain = _v1_pod("plain", templates={"gpu": "t"})
    tolerant = _v1_pod("tolerant", templates={"gpu": "t"})
    tolerant["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    output = simulate(load([tainted, class_doc(), slice_doc([device("gpu-0")]),
                            _template_doc(), plain, tolerant])).output()
    pods = _items(output, "Pod")
    assert "nodeName" not in pods["plain"]["spec"]
    assert pods["plain"]["status"]["conditions"][0]["message"] == \
        "0/1 nodes are available: 1 node(s) had untolerated taint {gpu: }."
    assert pods["tolerant"]["spec"]["nodeName"] == "node-1"
