"""Small clusters for the presenter, view and consumer tests (manifest documents).

``cluster()`` is a node with a partitionable GPU (schemes ``whole`` and ``halves``), a node
with two named cards and a counter, pods that fit and one that stays pending.
"""

from __future__ import annotations

from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request, slice_doc
from tests.factories import (
    API,
    DRIVER,
    claim,
    claim_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)

GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"


def mig_slice(node_name: str) -> dict:
    """One GPU: the whole of it (``whole/full``) or two halves (``halves/half-0``, ``half-1``)."""
    return {"apiVersion": API, "kind": "NodeResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"nodeName": node_name, "driverName": GPU_DRIVER, "partitionable": {
                "commonAttributes": [
                    {"name": "half", "attributes": [{"name": "memory", "quantity": "40Gi"}]},
                    {"name": "full", "attributes": [{"name": "memory", "quantity": "80Gi"}]}],
                "resourceInstances": [{"name": "gpu-0", "partitions": [
                    {"name": "whole", "commonAttributesRefs": ["full"],
                     "resourceInstances": [{"name": "full"}]},
                    {"name": "halves", "commonAttributesRefs": ["half"],
                     "resourceInstances": [{"name": "half-0"}, {"name": "half-1"}]}]}]}}}


def mig_parameters(name: str, memory: str) -> dict:
    return {"apiVersion": API, "kind": "ResourceClaimParameters",
            "metadata": {"name": name, "namespace": "default"},
            "requests": [{"driverName": GPU_DRIVER, "partitionable": {"required": [
                {"name": "slice", "selector": f'quantities["memory"] == "{memory}"'}]}}]}


def counter_docs(node_name: str, count: int = 4) -> list[dict]:
    """A counter instance ``vf`` of ``count`` units and a class + vendor object asking for 3."""
    return [
        {"apiVersion": API, "kind": "NodeResourceCapacity",
         "metadata": {"name": f"{node_name}-vfs"}, "nodeName": node_name,
         "driverName": NIC_DRIVER,
         "instances": [{"id": "vf", "apiVersion": "counter.dra.config.k8s.io/v1beta1",
                        "kind": "Capacity", "data": {"metadata": {"labels": {"link": "fast"}},
                                                     "count": count}}]},
        {"apiVersion": API, "kind": "ResourceClass", "metadata": {"name": "vfs"},
         "driverName": NIC_DRIVER, "numericParameters": [{
             "apiVersion": "nic.example.com/v1", "kind": "Vfs",
             "celTemplate": "Required: {{ object.spec.count }}\n"}]},
        {"apiVersion": "nic.example.com/v1", "kind": "Vfs",
         "metadata": {"name": "three", "namespace": "default"}, "spec": {"count": 3}},
        {"apiVersion": API, "kind": "ResourceClaim",
         "metadata": {"name": "net", "namespace": "default"},
         "spec": {"resourceClassName": "vfs", "parametersRef": {
             "apiGroup": "nic.example.com", "kind": "Vfs", "name": "three"}}},
    ]


def cluster_docs() -> list[dict]:
    return [
        node("gpu-node"), mig_slice("gpu-node"),
        node("card-node"),
        named_slice("card-node", [device("card-0", memory=("quantity", "16Gi")),
                                  device("card-1", memory=("quantity", "16Gi"))]),
        *counter_docs("gpu-node"),
        resource_class("mig", driver=GPU_DRIVER), resource_class("cards"),
        mig_parameters("half", "40Gi"), mig_parameters("full", "80Gi"),
        claim_parameters("big-card", 'quantities["memory"] >= "32Gi"', driver=DRIVER),
        claim_parameters("any-card", 'quantities["memory"] >= "16Gi"', driver=DRIVER),
        claim("half-a", "mig", params="half"), claim("full-a", "mig", params="full"),
        claim("card-a", "cards", params="any-card"), claim("huge-card", "cards", params="big-card"),
        pod("half-user", claims={"gpu": "half-a"}),
        pod("full-user", claims={"gpu": "full-a"}),
        pod("card-user", claims={"card": "card-a"}),
        pod("net-user", claims={"vfs": "net"}),
        pod("waiting", claims={"card": "huge-card"}),
    ]


def cluster_state():
    """The simulated state of :func:`cluster_docs`."""
    return run(cluster_docs()).state


def v1_state(selector: str, request_name: str = "r"):
    """A resource.k8s.io/v1 cluster: ``node-1`` with GPUs ``gpu-0`` (model ``a``) and
    ``gpu-1`` (model ``b``), class ``gpu``, and the pod ``v1-waiting`` whose claim
    ``default/v1-claim`` asks for one GPU matching ``selector`` (a CEL expression)."""
    gpus = [{"name": f"gpu-{i}", "attributes": {"model": {"string": model}}}
            for i, model in enumerate("ab")]
    docs = [node("node-1"), class_doc(selectors=[{"cel": {
                "expression": f'device.driver == "{GPU_DRIVER}"'}}]),
            slice_doc(gpus),
            claim_doc([request(request_name, selectors=[{"cel": {"expression": selector}}])],
                      name="v1-claim"),
            pod("v1-waiting", claims={"gpu": "v1-claim"})]
    return simulate(load(docs)).state
