"""Issue 3's benchmarks: partition trees (first-fit vs best-fit) and numeric counters.

* **partitionable**: 500 nodes x 4 GPUs shaped like MIG trees built from the semantic seed's
  model (schemes ``full``, ``halves`` (2), ``sevenths`` (7) and ``half-and-sevenths``: one
  half plus a second half that is either whole or split into three sevenths, nested like the
  seed's ``half-and-quarters``), and 5,000 pods asking through ResourceClaimTemplates for a
  full GPU (``memory >= 40Gi``, 2 in 10), a half (``>= 20Gi``, 3 in 10) or a seventh
  (``>= 5Gi``, 5 in 10), interleaved. Reported per strategy: pods/s of ``simulate`` (parsing
  timed apart) and the share of pods placed: first-fit's fragmentation cost.
* **counter**: 500 nodes x 4 counter instances of 8 units and 5,000 pods whose claims ask,
  through a ``numericParameters`` template, for 1 to 4 units (half of them of one label).

Figures are printed, never asserted.
"""

from __future__ import annotations

import json
import time

__all__ = ["partitionable_cluster", "counter_cluster", "main"]

API = "resource.k8s.io/v1alpha2"
GPU_DRIVER = "gpu.example.com"
FROB_DRIVER = "frobs.example.com"
SIZES = {"full": "40Gi", "half": "20Gi", "seventh": "5Gi"}
PATTERN = ("full", "full", "half", "half", "half", *(("seventh",) * 5))


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "256", "memory": "2Ti", "pods": "110"}}}


def _pod(name: str, template: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "resources": {"claims": [
                {"name": "dev"}]}}],
                "resourceClaims": [{"name": "dev", "source": {
                    "resourceClaimTemplateName": template}}]}}


def _leaves(prefix: str, count: int) -> list[dict]:
    return [{"name": f"{prefix}-{i}"} for i in range(count)]


def _gpu(index: int, node: int) -> dict:
    return {"name": f"gpu-{index}", "commonAttributesRefs": ["drivers", "a100"],
            "attributes": [{"name": "uuid", "string": f"GPU-{node:05d}-{index}"}],
            "partitions": [
                {"name": "full", "resourceInstances": [{"name": "whole"}]},
                {"name": "halves", "commonAttributesRefs": ["half"],
                 "resourceInstances": _leaves("half", 2)},
                {"name": "sevenths", "commonAttributesRefs": ["seventh"],
                 "resourceInstances": _leaves("seventh", 7)},
                {"name": "half-and-sevenths", "resourceInstances": [
                    {"name": "first-half", "commonAttributesRefs": ["half"]},
                    {"name": "partitionable-second-half", "partitions": [
                        {"name": "half", "commonAttributesRefs": ["half"],
                         "resourceInstances": [{"name": "second-half"}]},
                        {"name": "sevenths", "commonAttributesRefs": ["seventh"],
                         "resourceInstances": _leaves("seventh", 3)}]}]},
            ]}


def partitionable_cluster(nodes: int = 500, gpus: int = 4, pods: int = 5000) -> list[dict]:
    """Nodes with MIG-like partition trees and pods of mixed sizes (see the module doc)."""
    common = [
        {"name": "drivers", "attributes": [{"name": "driverVersion", "version": "535.104.5"}]},
        {"name": "a100", "attributes": [{"name": "memory", "quantity": "40Gi"},
                                        {"name": "product", "string": "A100-PCIE-40GB"}]},
        {"name": "half", "attributes": [{"name": "memory", "quantity": "20Gi"}]},
        {"name": "seventh", "attributes": [{"name": "memory", "quantity": "5Gi"}]},
    ]
    docs: list[dict] = []
    for n in range(nodes):
        name = f"node-{n:04d}"
        docs.append(_node(name))
        docs.append({"apiVersion": API, "kind": "NodeResourceSlice",
                     "metadata": {"name": f"{name}-gpus"},
                     "spec": {"nodeName": name, "driverName": GPU_DRIVER, "partitionable": {
                         "commonAttributes": common,
                         "resourceInstances": [_gpu(g, n) for g in range(gpus)]}}})
    docs.append({"apiVersion": API, "kind": "ResourceClass", "metadata": {"name": "mig"},
                 "driverName": GPU_DRIVER, "structuredParameters": True})
    for size, memory in SIZES.items():
        docs.append({"apiVersion": API, "kind": "ResourceClaimParameters",
                     "metadata": {"name": size, "namespace": "default"},
                     "requests": [{"driverName": GPU_DRIVER, "partitionable": {"required": [
                         {"name": size, "selector": f'quantities["memory"] >= "{memory}"'}]}}]})
        docs.append({"apiVersion": API, "kind": "ResourceClaimTemplate",
                     "metadata": {"name": size, "namespace": "default"},
                     "spec": {"spec": {"resourceClassName": "mig", "parametersRef": {
                         "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                         "name": size}}}})
    docs.extend(_pod(f"pod-{p:05d}", PATTERN[p % len(PATTERN)]) for p in range(pods))
    return docs


def counter_cluster(nodes: int = 500, instances: int = 4, pods: int = 5000) -> list[dict]:
    """Nodes with counter capacities and pods whose claims ask for 1-4 units via a template."""
    docs: list[dict] = []
    for n in range(nodes):
        name = f"node-{n:04d}"
        docs.append(_node(name))
        docs.append({"apiVersion": API, "kind": "NodeResourceCapacity",
                     "metadata": {"name": f"{name}-frobs"}, "nodeName": name,
                     "driverName": FROB_DRIVER, "instances": [
                         {"id": f"frob-{i}", "apiVersion": "counter.dra.config.k8s.io/v1beta1",
                          "kind": "Capacity", "data": {"metadata": {"labels": {
                              "model": "big" if i % 2 else "small"}}, "count": 8}}
                         for i in range(instances)]})
    docs.append({"apiVersion": API, "kind": "ResourceClass", "metadata": {"name": "frobs"},
                 "driverName": FROB_DRIVER, "numericParameters": [{
                     "apiVersion": "dra.e2e.example.com/v1alpha1", "kind": "ClaimParameters",
                     "celTemplate": "kind: Parameters\n"
                                    "apiVersion: counter.dra.config.k8s.io/v1alpha1\n"
                                    "Required: {{object.spec.numberOfFrobnicators}}\n"
                                    "Selector: {{object.spec.selector}}\n"}]})
    templates = []
    for units in range(1, 5):
        for model in ("any", "big"):
            name = f"frobs-{units}-{model}"
            templates.append(name)
            selector = {"matchLabels": {"model": "big"}} if model == "big" else {}
            docs.append({"apiVersion": "dra.e2e.example.com/v1alpha1", "kind": "ClaimParameters",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"numberOfFrobnicators": units, "selector": selector}})
            docs.append({"apiVersion": API, "kind": "ResourceClaimTemplate",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"spec": {"resourceClassName": "frobs", "parametersRef": {
                             "apiGroup": "dra.e2e.example.com", "kind": "ClaimParameters",
                             "name": name}}}})
    docs.extend(_pod(f"pod-{p:05d}", templates[(p * 3) % len(templates)]) for p in range(pods))
    return docs


def run(docs: list[dict], strategy: str) -> dict:
    """Parse and simulate ``docs``; timings and the number of pods placed."""
    from allocation.engine.manifests import load_texts
    from allocation.engine.simulation import simulate

    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    t0 = time.perf_counter()
    loaded = load_texts([("bench.json", text)])
    t1 = time.perf_counter()
    sim = simulate(loaded, strategy)
    t2 = time.perf_counter()
    pods = [o for o in sim.state.pods()]
    placed = sum(1 for p in pods if p.node_name)
    return {"strategy": strategy, "pods": len(pods), "placed": placed,
            "parse_s": t1 - t0, "simulate_s": t2 - t1, "pods_per_s": len(pods) / (t2 - t1)}


def _report(title: str, r: dict) -> None:
    print(f"{title} [{r['strategy']}]: parse {r['parse_s']:.2f} s | simulate "
          f"{r['simulate_s']:.2f} s | {r['pods_per_s']:.0f} pods/s | placed {r['placed']}/"
          f"{r['pods']} ({100 * r['placed'] / r['pods']:.1f}%)", flush=True)


def main() -> None:
    docs = partitionable_cluster()
    for strategy in ("first-fit", "best-fit"):
        _report("partitionable 500 nodes x 4 MIG-like GPUs, 5000 pods", run(docs, strategy))
    docs = counter_cluster()
    for strategy in ("first-fit", "best-fit"):
        _report("counter 500 nodes x 4 instances, 5000 pods", run(docs, strategy))


if __name__ == "__main__":
    main()
