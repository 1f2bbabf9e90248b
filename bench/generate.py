"""Synthetic cluster generators for the benchmarks (and for tests that need big inputs).

Each generator returns a list of manifest documents; :func:`write` stores them as YAML.
"""

from __future__ import annotations

import uuid

__all__ = ["named_gpu_cluster", "named_gpu_cluster_v1", "live_cluster", "write"]

DRIVER = "gpu.example.com"


def _node(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels or {"pool": "gpu"}},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}


def named_gpu_cluster(nodes: int, pods: int, devices: int = 8) -> list[dict]:
    """The **single** workload of issue 2.

    ``nodes`` nodes, each with one slice of ``devices`` named GPUs (``model`` string, ``index``
    int, ``memory`` 40Gi on even and 80Gi on odd indexes, a unique ``uuid``); ``pods`` pods,
    each with one claim from a template: every 4th asks for ``memory >= 80Gi``, the others
    for ``memory >= 32Gi``.
    """
    docs: list[dict] = []
    width = len(str(nodes))
    for n in range(nodes):
        name = f"node-{n:0{width}d}"
        docs.append(_node(name))
        docs.append({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "NodeResourceSlice",
                     "metadata": {"name": f"{name}-gpus"},
                     "spec": {"nodeName": name, "driverName": DRIVER,
                              "namedResourcesWithAttributes": [
                                  {"name": f"gpu-{i}", "attributes": [
                                      {"name": "model", "string": "A100"},
                                      {"name": "index", "int": i},
                                      {"name": "memory", "quantity": "80Gi" if i % 2 else "40Gi"},
                                      {"name": "uuid", "string": str(uuid.UUID(int=n * 64 + i))},
                                  ]} for i in range(devices)]}})
    docs.append({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
                 "metadata": {"name": "gpu"}, "driverName": DRIVER,
                 "structuredParameters": True})
    for size in ("32Gi", "80Gi"):
        docs.append({"apiVersion": "resource.k8s.io/v1alpha2",
                     "kind": "ResourceClaimParameters",
                     "metadata": {"name": f"gpu-{size.lower()}", "namespace": "default"},
                     "requests": [{"driverName": DRIVER, "namedResourcesWithAttributes": {
                         "required": [{"selector": f'quantities["memory"] >= "{size}"'}]}}]})
        docs.append({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": f"gpu-{size.lower()}", "namespace": "default"},
                     "spec": {"spec": {"resourceClassName": "gpu", "parametersRef": {
                         "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                         "name": f"gpu-{size.lower()}"}}}})
    for p in range(pods):
        template = "gpu-80gi" if p % 4 == 3 else "gpu-32gi"
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pod-{p:05d}", "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "example/app",
                                              "resources": {"requests": {"cpu": "1"},
                                                            "claims": [{"name": "gpu"}]}}],
                              "resourceClaims": [{"name": "gpu", "source": {
                                  "resourceClaimTemplateName": template}}]}})
    return docs


V1 = "resource.k8s.io/v1"


def _v1_selector(size: str) -> str:
    return f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{size}")) >= 0'


def named_gpu_cluster_v1(nodes: int, pods: int, devices: int = 8,
                         templates: bool = True) -> list[dict]:
    """The v1 twin of :func:`named_gpu_cluster` (same nodes, devices and pods).

    One DeviceClass ``gpu`` (``device.driver == "gpu.example.com"``), one ResourceSlice per
    node with ``devices`` devices (attributes ``model``, ``index``, ``uuid``; ``memory`` a
    capacity, 40Gi on even and 80Gi on odd indexes). Every 4th pod's claim selects
    ``memory >= 80Gi``, the others ``>= 32Gi``: from the ResourceClaimTemplates ``gpu-80gi``
    and ``gpu-32gi``, or with ``templates=False`` from one ResourceClaim per pod
    (``pod-NNNNN-gpu``, named by ``resourceClaimName``) with the same spec.
    """
    docs: list[dict] = []
    width = len(str(nodes))
    for n in range(nodes):
        name = f"node-{n:0{width}d}"
        docs.append(_node(name))
        docs.append({"apiVersion": V1, "kind": "ResourceSlice",
                     "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1,
                                       "resourceSliceCount": 1},
                              "devices": [
                                  {"name": f"gpu-{i}",
                                   "attributes": {
                                       "model": {"string": "A100"},
                                       "index": {"int": i},
                                       "uuid": {"string": str(uuid.UUID(int=n * 64 + i))}},
                                   "capacity": {
                                       "memory": {"value": "80Gi" if i % 2 else "40Gi"}}}
                                  for i in range(devices)]}})
    docs.append({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"selectors": [{"cel": {
                     "expression": f'device.driver == "{DRIVER}"'}}]}})
    specs = {size: {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu", "selectors": [{"cel": {"expression": _v1_selector(size)}}]}}]}}
        for size in ("32Gi", "80Gi")}
    if templates:
        for size, spec in specs.items():
            docs.append({"apiVersion": V1, "kind": "ResourceClaimTemplate",
                         "metadata": {"name": f"gpu-{size.lower()}", "namespace": "default"},
                         "spec": {"spec": spec}})
    for p in range(pods):
        size = "80Gi" if p % 4 == 3 else "32Gi"
        pod = f"pod-{p:05d}"
        if templates:
            ref = {"name": "gpu", "resourceClaimTemplateName": f"gpu-{size.lower()}"}
        else:
            ref = {"name": "gpu", "resourceClaimName": f"{pod}-gpu"}
            docs.append({"apiVersion": V1, "kind": "ResourceClaim",
                         "metadata": {"name": f"{pod}-gpu", "namespace": "default"},
                         "spec": specs[size]})
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": pod, "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "example/app",
                                              "resources": {"requests": {"cpu": "1"},
                                                            "claims": [{"name": "gpu"}]}}],
                              "resourceClaims": [ref]}})
    return docs


def live_cluster(nodes: int, pods_per_node: int = 8, pending: int = 100) -> list[dict]:
    """A running cluster as an API server holds it (the live-cluster benchmark).

    :func:`named_gpu_cluster_v1`'s nodes, slices and class, one Namespace and the
    templates; ``pods_per_node`` pods per node already **bound** by the cluster, each holding
    its own ResourceClaim **allocated** by the cluster to one device of its node and reserved
    for it (the planner must keep those), and ``pending`` more pods with template claims not
    scheduled yet (the planner explains or places them).
    """
    base = named_gpu_cluster_v1(nodes, 0, devices=pods_per_node)
    docs: list[dict] = [{"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": "default"}}, *base]
    width = len(str(nodes))
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}
    for n in range(nodes):
        node = f"node-{n:0{width}d}"
        for i in range(pods_per_node):
            pod = f"run-{n:0{width}d}-{i}"
            uid = str(uuid.UUID(int=(1 << 64) + n * 64 + i))
            docs.append({"apiVersion": V1, "kind": "ResourceClaim",
                         "metadata": {"name": f"{pod}-gpu", "namespace": "default"},
                         "spec": spec,
                         "status": {"allocation": {
                             "devices": {"results": [{"request": "gpu", "driver": DRIVER,
                                                      "pool": node, "device": f"gpu-{i}"}]},
                             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                                 "key": "metadata.name", "operator": "In",
                                 "values": [node]}]}]}},
                             "reservedFor": [{"resource": "pods", "name": pod,
                                              "uid": uid}]}})
            docs.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": pod, "namespace": "default", "uid": uid},
                         "spec": {"nodeName": node, "containers": [{
                             "name": "main", "image": "example/app",
                             "resources": {"requests": {"cpu": "1"},
                                           "claims": [{"name": "gpu"}]}}],
                             "resourceClaims": [{"name": "gpu",
                                                 "resourceClaimName": f"{pod}-gpu"}]},
                         "status": {"phase": "Running", "conditions": [
                             {"type": "PodScheduled", "status": "True"}]}})
    for p in range(pending):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"new-{p:05d}", "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "example/app",
                                              "resources": {"requests": {"cpu": "1"},
                                                            "claims": [{"name": "gpu"}]}}],
                              "resourceClaims": [{"name": "gpu",
                                                  "resourceClaimTemplateName": "gpu-32gi"}]},
                     "status": {"phase": "Pending"}})
    return docs


def write(docs: list[dict], path: str) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with open(path, "w", encoding="utf-8") as out:
        yaml.dump_all(docs, out, Dumper=dumper, sort_keys=False)
