"""A small resource.k8s.io/v1 cluster for the console's tests (services, API, pages, browser):
one node with a pool whose two GPU halves carry a memory capacity and draw on one
shared counter set, a multi-allocatable NIC with consumable bandwidth, a DeviceClass per
kind of device, a claim for a GPU half and one for NIC bandwidth, and a pod naming both."""

from __future__ import annotations

from tests import factories as f

V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"


def device_class(name: str = "gpu", expression: str = f'device.driver == "{DRIVER}"') -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _half(name: str) -> dict:
    return {"name": name, "attributes": {"model": {"string": "a100"}},
            "capacity": {"memory": {"value": "40Gi"}},
            "consumesCounters": [{"counterSet": "gpu-0-counters",
                                  "counters": {"memory": {"value": "40Gi"}}}]}


def resource_slices(node_name: str = "n1") -> list[dict]:
    """The node's pool: a slice of devices and, as 1.35+ wants it, the shared counters in a
    slice of their own."""
    nic = {"name": "nic-0", "allowMultipleAllocations": True,
           "attributes": {"kind": {"string": "nic"}},
           "capacity": {"bandwidth": {"value": "10G", "requestPolicy": {
               "default": "1G", "validRange": {"min": "1G", "step": "1G"}}}}}
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}
    devices = {"apiVersion": V1, "kind": "ResourceSlice",
               "metadata": {"name": f"{node_name}-gpus"},
               "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool,
                        "devices": [_half("gpu-0-a"), _half("gpu-0-b"), nic]}}
    counters = {"apiVersion": V1, "kind": "ResourceSlice",
                "metadata": {"name": f"{node_name}-counters"},
                "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool,
                         "sharedCounters": [{"name": "gpu-0-counters",
                                             "counters": {"memory": {"value": "80Gi"}}}]}}
    return [devices, counters]


def claim(name: str = "c1", class_name: str = "gpu", namespace: str = "default",
          **exactly) -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": class_name, **exactly}}]}}}


def template(name: str = "t1", class_name: str = "gpu") -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": class_name}}]}}}}


def cluster() -> list[dict]:
    """Node n1, classes gpu and nic, the slice, claims c1 (a GPU half) and net (2G of NIC
    bandwidth), pod p1 naming both."""
    nic_class = device_class("nic", f'device.driver == "{DRIVER}" && '
                             '"kind" in device.attributes["gpu.example.com"]')
    gpu_class = device_class("gpu", f'device.driver == "{DRIVER}" && '
                             '"model" in device.attributes["gpu.example.com"]')
    net = claim("net", "nic", capacity={"requests": {"bandwidth": "2G"}})
    return [f.node("n1"), gpu_class, nic_class, *resource_slices(), claim(), net,
            f.pod("p1", claims={"gpu": "c1", "net": "net"})]
