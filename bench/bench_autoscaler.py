"""Issue 5's benchmark at Cluster Autoscaler's DRA benchmark scale.

5,000 nodes x 8 devices with 20,000 allocated claims (2,500 nodes full, reserved by running
pods); reports parse and state-building time, the cost of one ``ClusterState.fork()``, one
check-capacity evaluation of 64 pods x 8 devices, and the decision of an atomic request that
needs 40 new 8-device nodes from a node group.
"""

from __future__ import annotations

import json
import time

from bench.generate import named_gpu_cluster

NODES, DEVICES, CLAIMS = 5000, 8, 20000


def _cluster() -> list[dict]:
    docs = named_gpu_cluster(NODES, 0, DEVICES)
    width = len(str(NODES))
    eight = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
             "metadata": {"name": "eight", "namespace": "default"},
             "requests": [{"driverName": "gpu.example.com", "namedResourcesWithAttributes": {
                 "required": [{"selector": 'quantities["memory"] >= "32Gi"'}] * DEVICES}}]}
    docs += [eight, {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "eight", "namespace": "default"},
                     "spec": {"spec": {"resourceClassName": "gpu", "parametersRef": {
                         "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                         "name": "eight"}}}}]
    for c in range(CLAIMS):
        node, dev = divmod(c, DEVICES)
        name = f"node-{node:0{width}d}"
        docs.append({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
                     "metadata": {"name": f"held-{c}", "namespace": "default",
                                  "finalizers": ["structured.dra.k8s.io/delete-protection"]},
                     "spec": {"resourceClassName": "gpu"},
                     "status": {"driverName": "gpu.example.com", "allocation": {
                         "resourceHandles": [{"driverName": "gpu.example.com", "structuredData": {
                             "nodeName": name, "namedResourcesWithAttributes": {
                                 "resources": [{"id": f"gpu-{dev}"}]}}}]},
                         "reservedFor": [{"resource": "pods", "name": f"run-{c}"}]}})
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"run-{c}", "namespace": "default"},
                     "spec": {"nodeName": name, "containers": [{"name": "main"}],
                              "resourceClaims": [{"name": "g", "source": {
                                  "resourceClaimName": f"held-{c}"}}]}})
    template = {"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "eight", "namespace": "default"},
                "template": {"spec": {"containers": [{"name": "main"}], "resourceClaims": [
                    {"name": "g", "source": {"resourceClaimTemplateName": "eight"}}]}}}
    devices = [{"name": f"gpu-{i}", "attributes": [{"name": "memory", "quantity": "80Gi"}]}
               for i in range(DEVICES)]
    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "gpu-pool"}, "spec": {"maxSize": 64, "template": {
                 "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}},
                 "resourceSlices": [{"driverName": "gpu.example.com",
                                     "namedResourcesWithAttributes": devices}]}}
    return [*docs, template, group]


def main() -> None:
    from allocation.engine.autoscaler.nodegroups import blueprints
    from allocation.engine.autoscaler.plugin import AutoscalerSimulation
    from allocation.engine.autoscaler.scaleup import (
        PodSet,
        make_pods,
        place_pods,
        plan_atomic,
    )
    from allocation.engine.manifests import load_texts
    from allocation.engine.state import ClusterState

    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": _cluster()})
    t0 = time.perf_counter()
    loaded = load_texts([("bench.json", text)])
    t1 = time.perf_counter()
    state = ClusterState.build(loaded)
    t2 = time.perf_counter()
    print(f"cluster: {NODES} nodes x {DEVICES} devices, {CLAIMS} allocated claims "
          f"({len(state.objects)} objects)")
    print(f"  parse {t1 - t0:.2f} s | build state {t2 - t1:.2f} s")
    forks = [time.perf_counter()]
    for _ in range(5):
        state.fork()
        forks.append(time.perf_counter())
    fork_ms = min(b - a for a, b in zip(forks, forks[1:], strict=False)) * 1000
    print(f"  ClusterState.fork(): {fork_ms:.1f} ms (best of 5)")
    template = state.get("PodTemplate", "default", "eight")
    t3 = time.perf_counter()
    placement = place_pods(AutoscalerSimulation(state), make_pods("check", [PodSet(template,
                                                                                   64)]))
    t4 = time.perf_counter()
    print(f"  check-capacity 64 pods x 8 devices: {t4 - t3:.2f} s per evaluation "
          f"({placement.fit}/{placement.total} fit)")
    # Fill the free nodes so the atomic request needs 40 new nodes.
    full = ClusterState.build(loaded)
    sim = AutoscalerSimulation(full)
    place_pods(sim, make_pods("fill", [PodSet(template, NODES - CLAIMS // DEVICES)]))
    t5 = time.perf_counter()
    _placement, decision = plan_atomic(sim.state, "atomic", [PodSet(template, 40)],
                                       blueprints(sim.state))
    t6 = time.perf_counter()
    print(f"  atomic 40 pods x 8 devices on a full cluster: decided in {t6 - t5:.2f} s -> "
          f"{decision.count} node(s) of {decision.group.name if decision.group else None}")


if __name__ == "__main__":
    main()
