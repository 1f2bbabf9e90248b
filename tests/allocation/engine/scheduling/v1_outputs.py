"""The v1 scheduler's tests' shared cluster and output readers (test_v1*.py, test_cache.py):
two nodes with one GPU each and three pods with a claim each; pods of a few shapes on nodes
of two devices (``twins``); a pod asking an extended resource that DRA serves, and its
cluster; a simulation's objects of one kind by name, and a pod's PodScheduled reason and
message."""

from __future__ import annotations

from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    request,
    slice_doc,
)
from tests.factories import node, pod


def two_gpu_nodes_three_pods() -> list[dict]:
    """node-1 and node-2 with one GPU each; pods a, b and c each name their own claim."""
    docs = [node("node-1"), node("node-2"), class_doc()]
    for name in ("node-1", "node-2"):
        docs.append(slice_doc([device("gpu-0")], name=f"{name}-gpus", nodeName=name,
                              pool={"name": name, "resourceSliceCount": 1}))
    for name in ("a", "b", "c"):
        docs.append(claim_doc(name=f"claim-{name}"))
        docs.append(pod(f"pod-{name}", claims={"gpu": f"claim-{name}"}))
    return docs


def extended_pod(name: str = "p", count: str = "1") -> dict:
    """A pod whose container requests ``count`` of the extended resource example.com/gpu."""
    doc = pod(name)
    doc["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": count,
                                                              "cpu": "1"}}
    return doc


def extended_cluster(allocatable: dict | None = None) -> list[dict]:
    """node-1 (with ``allocatable`` added), a class serving example.com/gpu, two GPUs."""
    worker = node("node-1")
    worker["status"]["allocatable"].update(allocatable or {})
    return [worker, class_doc(extendedResourceName="example.com/gpu"),
            slice_doc([device("gpu-0"), device("gpu-1")])]


def twins(shapes: list[tuple[int, int]], nodes: int = 3) -> list[dict]:
    """``nodes`` nodes of 3 CPUs with two devices each (one "big"); a pod per shape: its
    claim asks for 1 or 2 devices (``count``; 3 means one big device), its CPU is ``cpu``."""
    docs = [node(f"node-{n}", cpu="3") for n in range(nodes)] + [class_doc()]
    for n in range(nodes):
        docs.append(slice_doc([device("gpu-0", attributes={"big": {"bool": True}}),
                               device("gpu-1", attributes={"big": {"bool": False}})],
                              name=f"node-{n}-gpus", nodeName=f"node-{n}",
                              pool={"name": f"node-{n}", "resourceSliceCount": 1}))
    for i, (count, cpu) in enumerate(shapes):
        big = count > 2
        selectors = ([{"cel": {"expression": 'device.attributes["gpu.example.com"].big'}}]
                     if big else [])
        docs.append(claim_doc([request(count=1 if big else count, selectors=selectors)],
                              name=f"claim-{i}"))
        docs.append(pod(f"pod-{i}", claims={"gpu": f"claim-{i}"}, cpu=str(cpu)))
    return docs


def items(output: dict, kind: str) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == kind}


def pod_condition(output: dict, name: str) -> tuple[str, str]:
    condition = items(output, "Pod")[name]["status"]["conditions"][0]
    return condition["reason"], condition["message"]
