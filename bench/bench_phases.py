"""Where ``simulate`` spends its time, phase by phase, for YAML and JSON input.

The **single** and **templates-500** workloads (``bench_named``), seed and v1, each run in a
fresh interpreter the way ``draplanner simulate FILE -o json`` runs them (no Django):

- start: from spawning the interpreter to the engine imported (wall; CPU of the process);
- parse+validate: ``load_files``; build state: ``Simulation.from_loaded``;
- settle: scheduling and allocation (``allocation only``); write: ``output_items(shared=True)``
  through ``dump_list_to`` to a null device in JSON, as ``simulate_to`` writes to stdout;
  YAML output is timed apart (``yaml``);
- pods per CPU-second allocation only (settle) and end to end (every phase), peak RSS.

The cyclic garbage collector is paused over the phases, as ``simulate_files`` pauses it.

CPU seconds beside wall seconds (the machine is shared); figures are printed, never asserted.

Two environment variables narrow and repeat a run (``python -m bench phases``):
``BENCH_PHASES_ONLY`` keeps the inputs whose label (``single seed yaml``, ``templates-500 v1
json``) contains one of its comma-separated words, e.g. ``single seed yaml,single v1 yaml``;
``BENCH_PHASES_RUNS`` (default 1) runs each input that many times, each in a fresh
interpreter, and prints every run, so a shared machine's noise can be seen.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from bench.bench_named import DIALECTS, WORKLOADS, peak_rss
from bench.generate import named_gpu_cluster, named_gpu_cluster_v1, write

PHASES = ("start", "parse+validate", "build state", "settle", "write")


def run(path: str, spawned: float) -> dict:
    """One simulation of ``path`` in this (fresh) process; ``spawned`` is when the parent
    started it (``time.time()``)."""
    from allocation.engine.gcpause import paused_gc
    from allocation.engine.manifests import load_files
    from allocation.engine.simulation import Simulation, refuse_unsimulated_v1
    from allocation.engine.writer import dump_list_to

    times = {"start": (time.time() - spawned, time.process_time())}
    marks = [time.perf_counter(), time.process_time()]

    def lap(name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        times[name] = (wall - marks[0], cpu - marks[1])
        marks[:] = [wall, cpu]

    with paused_gc():  # as simulate_files
        loaded = load_files([path])
        lap("parse+validate")
        refuse_unsimulated_v1(loaded)
        sim = Simulation.from_loaded(loaded)
        del loaded
        lap("build state")
        sim.settle()
        lap("settle")
        with open(os.devnull, "w", encoding="utf-8") as sink:  # as the command writes it
            written = [0]

            def write(piece: str) -> None:
                written[0] += len(piece)
                sink.write(piece)

            dump_list_to(write, sim.output_items(shared=True), "json")
            lap("write")
            peak = peak_rss()
            output_mb = written[0] / 1e6
            wall, cpu = time.perf_counter(), time.process_time()
            dump_list_to(sink.write, sim.output_items(shared=True), "yaml")
        yaml_times = (time.perf_counter() - wall, time.process_time() - cpu)
    pods = sum(1 for _ in sim.state.pods())
    return {"times": times, "pods": pods, "peak_mb": peak / 1e6, "output_mb": output_mb,
            "yaml": yaml_times}


def _measure(path: str) -> dict:
    code = ("import json, sys; from bench.bench_phases import run; "
            "print(json.dumps(run(sys.argv[1], float(sys.argv[2]))))")
    out = subprocess.run([sys.executable, "-c", code, path, repr(time.time())], check=True,
                         capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(label: str, r: dict) -> list[str]:
    """The lines printed for one run."""
    times = r["times"]
    wall = sum(t[0] for t in times.values())
    cpu = sum(t[1] for t in times.values())
    settle_cpu = times["settle"][1]
    phases = " | ".join(f"{name} {times[name][0]:.2f} s ({times[name][1]:.2f} CPU-s)"
                        for name in PHASES)
    return [f"  {label}", f"       {phases}",
            f"       end to end {wall:.2f} s ({cpu:.2f} CPU-s) | pods per CPU-s: allocation "
            f"only {r['pods'] / settle_cpu:,.0f}, end to end {r['pods'] / cpu:,.0f} | "
            f"peak RSS {r['peak_mb']:.0f} MB | output {r['output_mb']:.1f} MB",
            f"       write as YAML instead: {r['yaml'][0]:.2f} s ({r['yaml'][1]:.2f} CPU-s)"]


def _selected(label: str) -> bool:
    """Whether ``BENCH_PHASES_ONLY`` (unset: everything) keeps the input ``label``."""
    only = os.environ.get("BENCH_PHASES_ONLY", "")
    return not only or any(word.strip() in label for word in only.split(",") if word.strip())


def main() -> None:
    from allocation.engine.writer import as_list, dump

    runs = int(os.environ.get("BENCH_PHASES_RUNS", "1"))
    print("simulate FILE -o json, phase by phase (wall s, CPU s), in a fresh interpreter")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (nodes, pods) in WORKLOADS.items():
            print(f"{name}: {nodes} nodes x 8 devices, {pods} pods (first-fit)")
            for dialect in DIALECTS:
                forms = [f for f in ("yaml", "json") if _selected(f"{name} {dialect} {f}")]
                if not forms:
                    continue
                docs = (named_gpu_cluster(nodes, pods) if dialect == "seed"
                        else named_gpu_cluster_v1(nodes, pods))
                for form in forms:
                    path = os.path.join(tmp, f"{name}-{dialect}.{form}")
                    if form == "yaml":  # one document per object, as users write them
                        write(docs, path)
                    else:  # one List (a JSON file holds one document)
                        with open(path, "w", encoding="utf-8") as out:
                            out.write(dump(as_list(docs), form))
                    size = os.path.getsize(path) / 1e6
                    for _ in range(runs):
                        for line in report(f"{dialect} {form} ({size:.1f} MB)",
                                           _measure(path)):
                            print(line, flush=True)


if __name__ == "__main__":
    main()
