"""Issue 2's benchmarks: the **single** and **templates-500** named-resource workloads.

Reports, per workload: parse time, allocation (simulation) time, end-to-end wall time of the
``simulate`` pipeline, pods per second, selector evaluations versus devices examined, and
peak memory. Each workload runs in a fresh interpreter and reports its peak resident set
size (``VmHWM``: Linux keeps ``ru_maxrss`` across exec, so a child would report its parent's
peak); tracemalloc would measure only Python allocations and slow the run 2-3 times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from bench.generate import named_gpu_cluster, write

WORKLOADS = {"single": (1000, 8000), "templates-500": (500, 5000)}


def _peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux ``VmHWM``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run(name: str, nodes: int, pods: int, strategy: str = "first-fit") -> dict:
    from allocation.engine import cel
    from allocation.engine.manifests import load_files
    from allocation.engine.simulation import simulate
    from allocation.engine.writer import dump

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.yaml")
        write(named_gpu_cluster(nodes, pods), path)
        size = os.path.getsize(path)
        cel.reset_stats()
        t0 = time.perf_counter()
        loaded = load_files([path])
        t1 = time.perf_counter()
        sim = simulate(loaded, strategy)
        t2 = time.perf_counter()
        text = dump(sim.output())
        t3 = time.perf_counter()
        peak = _peak_rss()
    stats = cel.stats()
    placed = sum(1 for p in sim.state.pods() if p.node_name)
    return {"workload": name, "strategy": strategy, "nodes": nodes, "pods": pods,
            "input_mb": size / 1e6, "parse_s": t1 - t0, "simulate_s": t2 - t1,
            "write_s": t3 - t2, "wall_s": t3 - t0, "placed": placed,
            "pods_per_s": pods / (t2 - t1), "pods_per_s_e2e": pods / (t3 - t0),
            "evaluations": stats.evaluations, "lookups": stats.lookups,
            "peak_mb": peak / 1e6, "output_mb": len(text) / 1e6}


def _in_subprocess(name: str, nodes: int, pods: int) -> dict:
    code = (f"import json; from bench.bench_named import run; "
            f"print(json.dumps(run({name!r}, {nodes}, {pods})))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    for name, (nodes, pods) in WORKLOADS.items():
        r = _in_subprocess(name, nodes, pods)
        print(f"{r['workload']}: {r['nodes']} nodes x 8 devices, {r['pods']} pods "
              f"({r['strategy']}, input {r['input_mb']:.1f} MB)")
        print(f"  parse {r['parse_s']:.2f} s | simulate {r['simulate_s']:.2f} s | "
              f"write {r['write_s']:.2f} s | wall {r['wall_s']:.2f} s")
        print(f"  placed {r['placed']}/{r['pods']} | {r['pods_per_s']:.0f} pods/s simulating, "
              f"{r['pods_per_s_e2e']:.0f} pods/s end to end")
        print(f"  selector evaluations {r['evaluations']} vs devices examined {r['lookups']} "
              f"| peak RSS {r['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
