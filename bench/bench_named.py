"""Issue 2's benchmarks: the **single** and **templates-500** workloads, seed and v1 side by side.

The seed rows use the named-resource (v1alpha2) manifests of ``generate.named_gpu_cluster``;
the v1 rows their resource.k8s.io/v1 twin ``generate.named_gpu_cluster_v1`` (same nodes,
devices and pods; ``memory`` a capacity; one DeviceClass; claims from ResourceClaimTemplates
when the simulation supports them, else one ResourceClaim per pod, as the output says).

Reports, per workload and dialect: load, simulate (scheduling and allocation: "allocation
only") and write times, wall and CPU; pods per second and per CPU-second, allocation only and
end to end (load + simulate + write); selector evaluations against devices examined; peak
memory. CPU seconds are printed beside wall time because the development machine is shared.
Each run has a fresh interpreter and reports its peak resident set size (``VmHWM``: Linux
keeps ``ru_maxrss`` across exec, so a child would report its parent's peak); tracemalloc
would measure only Python allocations and slow the run 2-3 times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from bench.generate import named_gpu_cluster, named_gpu_cluster_v1, write

WORKLOADS = {"single": (1000, 8000), "templates-500": (500, 5000)}
DIALECTS = ("seed", "v1")


def peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux ``VmHWM``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def v1_templates_simulated() -> bool:
    """Whether ``simulate`` takes v1 ResourceClaimTemplates (else the v1 rows use claims)."""
    from allocation.engine.manifests import InvalidManifests, load_texts
    from allocation.engine.simulation import refuse_unsimulated_v1
    from allocation.engine.writer import as_list, dump

    docs = [d for d in named_gpu_cluster_v1(1, 1) if d["kind"] == "ResourceClaimTemplate"]
    try:
        refuse_unsimulated_v1(load_texts([("probe.yaml", dump(as_list(docs)))]))
    except InvalidManifests:
        return False
    return True


def _scheduler(sim):
    return next(c for c in sim.controllers if getattr(c, "name", "") == "scheduler")


class _Clock:
    """Wall and CPU time since the last ``lap``."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        spent = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return spent


def run(name: str, nodes: int, pods: int, dialect: str = "seed",
        strategy: str = "first-fit") -> dict:
    """One workload in this process: times, throughput, selector counters, peak RSS."""
    from allocation.engine import cel
    from allocation.engine.manifests import load_files
    from allocation.engine.simulation import simulate
    from allocation.engine.writer import dump

    templates = dialect == "seed" or v1_templates_simulated()
    docs = (named_gpu_cluster(nodes, pods) if dialect == "seed"
            else named_gpu_cluster_v1(nodes, pods, templates=templates))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.yaml")
        write(docs, path)
        del docs
        size = os.path.getsize(path)
        cel.reset_stats()
        clock = _Clock()
        loaded = load_files([path])
        load = clock.lap()
        sim = simulate(loaded, strategy)
        sim_t = clock.lap()
        text = dump(sim.output())
        write_t = clock.lap()
        peak = peak_rss()
    stats = cel.stats()
    if dialect == "seed":
        evaluated, examined = stats.evaluations, stats.lookups
    else:
        allocator = _scheduler(sim).v1.allocator
        evaluated, examined = allocator.evaluated, allocator.examined
    placed = sum(1 for p in sim.state.pods() if p.node_name)
    wall, cpu = (load[0] + sim_t[0] + write_t[0], load[1] + sim_t[1] + write_t[1])
    return {"workload": name, "dialect": dialect, "templates": templates,
            "strategy": strategy, "nodes": nodes, "pods": pods, "input_mb": size / 1e6,
            "load": load, "simulate": sim_t, "write": write_t, "total": (wall, cpu),
            "placed": placed, "evaluated": evaluated, "examined": examined,
            "cel_evaluations": stats.evaluations, "peak_mb": peak / 1e6,
            "output_mb": len(text) / 1e6}


def in_subprocess(name: str, nodes: int, pods: int, dialect: str) -> dict:
    """``run`` in a fresh interpreter (its own peak RSS)."""
    code = (f"import json; from bench.bench_named import run; "
            f"print(json.dumps(run({name!r}, {nodes}, {pods}, {dialect!r})))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f}" if seconds > 0 else "-"


def report(r: dict) -> list[str]:
    """The lines printed for one run."""
    form = "" if r["dialect"] == "seed" else (
        " (claims from ResourceClaimTemplates)" if r["templates"] else
        " (one ResourceClaim per pod: v1 templates are not simulated yet)")
    (lw, lc), (sw, sc), (ww, wc), (tw, tc) = r["load"], r["simulate"], r["write"], r["total"]
    pods = r["pods"]
    return [
        f"  {r['dialect']:<4} input {r['input_mb']:.1f} MB{form}",
        f"       load {lw:.2f} s ({lc:.2f} CPU-s) | simulate {sw:.2f} s ({sc:.2f} CPU-s) | "
        f"write {ww:.2f} s ({wc:.2f} CPU-s) | end to end {tw:.2f} s ({tc:.2f} CPU-s)",
        f"       placed {r['placed']}/{pods} | allocation only {_rate(pods, sw)} pods/s, "
        f"{_rate(pods, sc)} per CPU-s | end to end {_rate(pods, tw)} pods/s, "
        f"{_rate(pods, tc)} per CPU-s",
        f"       selector evaluations {r['evaluated']:,} vs devices examined "
        f"{r['examined']:,} | peak RSS {r['peak_mb']:.0f} MB",
    ]


def main() -> None:
    print("allocation only = the simulate step (scheduling and allocation); end to end = "
          "load + simulate + write.\nseed: evaluations are CEL runs, devices examined are "
          "selector calls; v1: evaluations are per-device selector results computed, devices "
          "examined are devices that reached the selector step of a search.")
    for name, (nodes, pods) in WORKLOADS.items():
        print(f"{name}: {nodes} nodes x 8 devices, {pods} pods (first-fit)")
        for dialect in DIALECTS:
            for line in report(in_subprocess(name, nodes, pods, dialect)):
                print(line)


if __name__ == "__main__":
    main()
