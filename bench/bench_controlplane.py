"""Issue 4's benchmark: control-plane controllers negotiating through PodSchedulingContexts.

300 nodes in 10 racks of 30; two simulated drivers whose pools of network-attached
resources each reach one rack (``fpga.example.com`` racks 5-9, ``nic.example.com`` racks
0-4, 100 resources per pool); 1,000 pods, each with one claim from a template, alternating
between the two drivers. Reports parse, simulation and write phases, pods per second and the
average number of negotiation rounds per pod (scheduler updates of the pod's context).
"""

from __future__ import annotations

import os
import tempfile
import time

from bench.generate import write

DRIVERS = {"fpga.example.com": range(5, 10), "nic.example.com": range(0, 5)}
RACK_SIZE = 30


def controlplane_cluster(nodes: int = 300, pods: int = 1000, per_pool: int = 100) -> list[dict]:
    """The workload above as manifest documents."""
    api, planner = "resource.k8s.io/v1alpha2", "draplanner.io/v1alpha1"
    docs: list[dict] = []
    for n in range(nodes):
        labels = {"rack": f"r{n // RACK_SIZE}"}
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"node-{n:03d}", "labels": labels},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
    for driver, racks in DRIVERS.items():
        short = driver.split(".")[0]
        docs.append({"apiVersion": planner, "kind": "DriverSimulation",
                     "metadata": {"name": short},
                     "spec": {"controllerName": driver, "requestCount": "object.spec.count",
                              "handleData": '{"pool": "{{ pool }}", "node": "{{ node }}"}',
                              "pools": [{"name": f"rack-{r}", "count": per_pool,
                                         "nodeSelector": {"matchLabels": {"rack": f"r{r}"}}}
                                        for r in racks]}})
        docs.append({"apiVersion": api, "kind": "ResourceClass", "metadata": {"name": short},
                     "driverName": driver, "controllerName": driver})
        docs.append({"apiVersion": "net.example.com/v1", "kind": "AcceleratorParameters",
                     "metadata": {"name": short, "namespace": "default"}, "spec": {"count": 1}})
        docs.append({"apiVersion": api, "kind": "ResourceClaimTemplate",
                     "metadata": {"name": short, "namespace": "default"},
                     "spec": {"spec": {"resourceClassName": short, "parametersRef": {
                         "apiGroup": "net.example.com", "kind": "AcceleratorParameters",
                         "name": short}}}})
    shorts = [d.split(".")[0] for d in DRIVERS]
    for p in range(pods):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pod-{p:05d}", "namespace": "default"},
                     "spec": {"containers": [{"name": "main", "image": "example/app",
                                              "resources": {"requests": {"cpu": "1"},
                                                            "claims": [{"name": "acc"}]}}],
                              "resourceClaims": [{"name": "acc", "source": {
                                  "resourceClaimTemplateName": shorts[p % 2]}}]}})
    return docs


def run(nodes: int = 300, pods: int = 1000) -> dict:
    from allocation.engine.manifests import load_files
    from allocation.engine.scheduler import Scheduler
    from allocation.engine.simulation import simulate
    from allocation.engine.writer import dump

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "controlplane.yaml")
        write(controlplane_cluster(nodes, pods), path)
        t0 = time.perf_counter()
        loaded = load_files([path])
        t1 = time.perf_counter()
        sim = simulate(loaded)
        t2 = time.perf_counter()
        text = dump(sim.output())
        t3 = time.perf_counter()
    scheduler = next(c for c in sim.controllers if isinstance(c, Scheduler))
    rounds = scheduler.negotiation.rounds
    placed = sum(1 for p in sim.state.pods() if p.node_name)
    reasons: dict[str, int] = {}
    for event in sim.state.events.items:
        reasons[event["reason"]] = reasons.get(event["reason"], 0) + 1
    return {"nodes": nodes, "pods": pods, "placed": placed, "parse_s": t1 - t0,
            "simulate_s": t2 - t1, "write_s": t3 - t2, "wall_s": t3 - t0,
            "pods_per_s": pods / (t2 - t1), "pods_per_s_e2e": pods / (t3 - t0),
            "rounds_per_pod": sum(rounds.values()) / max(1, len(rounds)),
            "max_rounds": max(rounds.values(), default=0), "passes": sim.rounds,
            "events": reasons, "output_mb": len(text) / 1e6}


def main() -> None:
    r = run()
    print(f"controlplane: {r['nodes']} nodes, {len(DRIVERS)} simulated drivers, {r['pods']} pods "
          "with one controller-managed claim each")
    print(f"  parse {r['parse_s']:.2f} s | simulate {r['simulate_s']:.2f} s | "
          f"write {r['write_s']:.2f} s | wall {r['wall_s']:.2f} s")
    print(f"  placed {r['placed']}/{r['pods']} | {r['pods_per_s']:.0f} pods/s simulating, "
          f"{r['pods_per_s_e2e']:.0f} pods/s end to end | {r['passes']} controller passes")
    print(f"  negotiation rounds per pod: {r['rounds_per_pod']:.2f} average, "
          f"{r['max_rounds']} at most")
    print("  events: " + ", ".join(f"{k} {v}" for k, v in sorted(r["events"].items())))


if __name__ == "__main__":
    main()
