"""allocation/engine/scenarios/manifest.py: kubectl-ready documents, no server fields."""

from __future__ import annotations

from allocation.engine.scenarios.manifest import SERVER_METADATA, applyable

META = {"name": "train", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
        "creationTimestamp": "2025-01-01T00:00:00Z", "generation": 3,
        "managedFields": [{"manager": "kubectl"}],
        "ownerReferences": [{"kind": "Pod", "name": "x", "uid": "u-0"}],
        "labels": {"team": "ml"},
        "annotations": {"draplanner.io/explain": "0/2 nodes are available",
                        "kubectl.kubernetes.io/last-applied-configuration": "{}",
                        "team.example.com/owner": "ana"}}


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": dict(META),
            "spec": {"containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Pending"}}


def test_status_and_server_metadata_are_dropped():
    [doc] = applyable([_pod()])
    assert "status" not in doc
    assert not set(SERVER_METADATA) & set(doc["metadata"])
    assert doc["metadata"]["labels"] == {"team": "ml"}
    assert doc["metadata"]["annotations"] == {"team.example.com/owner": "ana"}
    assert doc["spec"] == {"containers": [{"name": "c", "image": "x"}]}


def test_the_input_is_not_changed():
    pod = _pod()
    applyable([pod])
    assert pod["metadata"]["uid"] == "u-1" and "status" in pod


def test_only_user_kinds_in_order():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
              "metadata": {"name": "s"}, "spec": {}}
    seed = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
            "metadata": {"name": "old", "namespace": "default"}, "spec": {}}
    vendor = {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig",
              "metadata": {"name": "v"}}
    klass = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
             "metadata": {"name": "gpu", "uid": "u"}, "spec": {"selectors": []}}
    pr = {"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "ProvisioningRequest",
          "metadata": {"name": "pr", "namespace": "default"},
          "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                   "podSets": []}, "status": {"conditions": []}}
    out = applyable([node, klass, slice_, seed, vendor, _pod(), pr])
    assert [d["kind"] for d in out] == ["DeviceClass", "Pod", "ProvisioningRequest"]
    assert out[2]["apiVersion"] == "autoscaling.x-k8s.io/v1" and "status" not in out[2]


def test_older_dra_versions_are_written_as_v1():
    beta = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default", "resourceVersion": "7"},
            "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu"}]}}}
    [doc] = applyable([beta])
    assert doc["apiVersion"] == "resource.k8s.io/v1"
    assert doc["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
    assert "resourceVersion" not in doc["metadata"]


def test_generate_name_goes_when_the_name_is_known():
    pod = _pod()
    pod["metadata"]["generateName"] = "train-"
    assert "generateName" not in applyable([pod])[0]["metadata"]
