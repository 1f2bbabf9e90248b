"""The v1 claim controller's rules (``claims_v1.py``); whole simulations are in
``test_simulation_v1.py``."""

from __future__ import annotations

from allocation.engine.claims_v1 import owning_pod, pod_done
from allocation.engine.objects import Pod, ResourceClaimV1


def _pod(**status) -> Pod:
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    if "deleted" in status:
        raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if "node" in status:
        raw["spec"]["nodeName"] = status["node"]
    if "phase" in status:
        raw["status"] = {"phase": status["phase"]}
    return Pod(raw)


def test_pod_done_is_upstreams_is_pod_done():
    assert pod_done(_pod(phase="Succeeded")) and pod_done(_pod(phase="Failed"))
    assert pod_done(_pod(deleted=True))
    assert not pod_done(_pod(deleted=True, node="node-1"))  # still running there
    assert not pod_done(_pod(phase="Running"))


def test_owning_pod_is_the_controller_pod_reference():
    def claim(refs):
        return ResourceClaimV1({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {"name": "c", "ownerReferences": refs},
                                "spec": {"devices": {}}})
    pod_ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}
    assert owning_pod(claim([pod_ref])) == ("p", "u")
    assert owning_pod(claim([{**pod_ref, "controller": False}])) is None
    assert owning_pod(claim([{**pod_ref, "kind": "Job", "apiVersion": "batch/v1"}])) is None
