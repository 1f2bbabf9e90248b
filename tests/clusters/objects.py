"""A small live cluster as the fixture API server holds it (tests/kube_server.py).

Two nodes with two GPUs each; ``runner`` is bound to node-b and holds the claim ``held``,
allocated by the cluster to node-b's ``gpu-1`` (first-fit would have chosen node-a's
``gpu-0``: the planner must keep the cluster's choice); ``waiting`` is a pending pod with a
claim from a template.
"""

from __future__ import annotations

V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
RUNNER_UID = "0b6f6a7e-0000-4000-8000-000000000001"


def namespace(name: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, cpu: str = "8") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"podCIDR": "10.244.0.0/24"},
            "status": {"capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.34.1"}}}


def device_class(name: str = "gpu") -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def gpu_slice(node_name: str, devices: int = 2) -> dict:
    return {"apiVersion": V1, "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}",
                                  "attributes": {"index": {"int": i}}} for i in range(devices)]}}


def claim_spec() -> dict:
    return {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}


def claim_template(name: str = "gpu") -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": claim_spec()}}


def held_claim() -> dict:
    """Allocated by the cluster to node-b's gpu-1 and reserved for ``runner``."""
    return {"apiVersion": V1, "kind": "ResourceClaim",
            "metadata": {"name": "held", "namespace": "default",
                         "finalizers": ["resource.kubernetes.io/delete-protection"]},
            "spec": claim_spec(),
            "status": {"allocation": {
                "devices": {"results": [{"request": "gpu", "driver": DRIVER,
                                         "pool": "node-b", "device": "gpu-1"}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                    "key": "metadata.name", "operator": "In", "values": ["node-b"]}]}]}},
                "reservedFor": [{"resource": "pods", "name": "runner", "uid": RUNNER_UID}]}}


def pod(name: str, node_name: str | None = None, claim: dict | None = None,
        uid: str | None = None, cpu: str = "1") -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "example/app",
                                  "resources": {"requests": {"cpu": cpu}}}],
                  "restartPolicy": "Always", "schedulerName": "default-scheduler"}
    if claim is not None:
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", **claim}]
    status: dict = {"phase": "Pending", "qosClass": "Burstable"}
    if node_name:
        spec["nodeName"] = node_name
        status = {"phase": "Running", "qosClass": "Burstable",
                  "conditions": [{"type": "PodScheduled", "status": "True"}]}
    meta: dict = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": status}


def runner() -> dict:
    return pod("runner", "node-b", {"resourceClaimName": "held"}, uid=RUNNER_UID)


def small_cluster() -> list[dict]:
    return [namespace(), node("node-a"), node("node-b"), device_class(),
            gpu_slice("node-a"), gpu_slice("node-b"), claim_template(), held_claim(),
            runner(), pod("waiting", claim={"resourceClaimTemplateName": "gpu"})]
