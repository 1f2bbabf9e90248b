"""This tree against an earlier commit on the **single** workload, in one run window.

A shared machine's speed changes from hour to hour and from machine to machine, so a goal
stated as "N times faster than when it was set" is only measured honestly against the old
code on the same machine at the same time. This benchmark checks the old commit out into
a temporary git worktree, and runs ``simulate single.yaml -o json`` phase by phase (as
``bench_phases``: parse+validate, build state, settle, write; CPU seconds) in a fresh
interpreter for each tree, alternating old and new, then prints each run and the ratio of
the minima.

``BENCH_VERSUS_REV`` names the old commit (default ``f575113``: the tree of 2026-11-23
before JSON output through orjson, the first of the end-to-end speed work that
docs/architecture.md "Speed" describes); ``BENCH_VERSUS_RUNS`` the runs per tree
(default 2); ``BENCH_VERSUS_DIALECT`` ``seed`` (default) or ``v1``. Outside a git checkout,
or when the commit is unknown, it says so and measures nothing. Figures are printed, never
asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_named import WORKLOADS
from bench.bench_phases import PHASES
from bench.generate import named_gpu_cluster, named_gpu_cluster_v1, write

ROOT = Path(__file__).resolve().parent.parent

# Runs in a fresh interpreter with one tree first on sys.path; it uses only what both the
# old and the new tree have (an old tree has no gcpause: its command did not pause the
# collector, so neither does its run here).
_RUN = """
import json, os, sys, time
spawned_cpu = time.process_time()
from allocation.engine.manifests import load_files
from allocation.engine.simulation import Simulation, refuse_unsimulated_v1
from allocation.engine import writer
try:
    from allocation.engine.gcpause import paused_gc
except ImportError:
    from contextlib import nullcontext as paused_gc
times = {"start": time.process_time()}
mark = [time.process_time()]
def lap(name):
    now = time.process_time(); times[name] = now - mark[0]; mark[0] = now
with paused_gc():
    loaded = load_files([sys.argv[1]]); lap("parse+validate")
    refuse_unsimulated_v1(loaded)
    sim = Simulation.from_loaded(loaded); del loaded; lap("build state")
    sim.settle(); lap("settle")
    with open(os.devnull, "w", encoding="utf-8") as sink:
        if hasattr(writer, "dump_list_to"):
            writer.dump_list_to(sink.write, sim.output_items(shared=True), "json")
        else:
            sink.write(writer.dump(sim.output(), "json"))
    lap("write")
print(json.dumps(times))
"""


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def _measure(tree: str, path: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", _RUN, path], check=True, capture_output=True,
                         text=True, cwd=tree, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(label: str, times: dict[str, float], pods: int) -> str:
    total = sum(times[p] for p in PHASES)
    phases = " | ".join(f"{p} {times[p]:.2f}" for p in PHASES)
    return (f"  {label:6s} {phases} | end to end {total:.2f} CPU-s: {pods / total:,.0f} pods "
            f"per CPU-s, allocation only {pods / times['settle']:,.0f}")


def main() -> None:
    rev = os.environ.get("BENCH_VERSUS_REV", "f575113")
    runs = int(os.environ.get("BENCH_VERSUS_RUNS", "2"))
    dialect = os.environ.get("BENCH_VERSUS_DIALECT", "seed")
    try:
        commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except (OSError, subprocess.CalledProcessError):
        print(f"not measured: {rev} is not a commit of a git checkout at {ROOT}")
        return
    nodes, pods = WORKLOADS["single"]
    print(f"single ({dialect}, YAML): {commit[:12]} ('before') against this tree ('after'), "
          f"alternated, {runs} runs each; CPU seconds per phase, a fresh interpreter per run")
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "before")
        _git("worktree", "add", "--detach", old, commit)
        try:
            # compiled once, as `make bytecode` leaves this tree (the start is not a compile)
            subprocess.run([sys.executable, "-m", "compileall", "-q", "allocation"], cwd=old,
                           check=True, capture_output=True)
            docs = (named_gpu_cluster(nodes, pods) if dialect == "seed"
                    else named_gpu_cluster_v1(nodes, pods))
            path = os.path.join(tmp, "single.yaml")
            write(docs, path)
            best: dict[str, dict[str, float]] = {}
            for _ in range(runs):
                for label, tree in (("before", old), ("after", str(ROOT))):
                    try:
                        times = _measure(tree, path)
                    except subprocess.CalledProcessError as error:  # e.g. an old tree that
                        # does not simulate this dialect yet
                        last = (error.stderr or "").strip().splitlines()[-1:] or ["?"]
                        print(f"  {label}: not measured: {last[0]}")
                        return
                    print(_line(label, times, pods), flush=True)
                    mins = best.setdefault(label, dict(times))
                    for phase, value in times.items():
                        mins[phase] = min(mins[phase], value)
        finally:
            _git("worktree", "remove", "--force", old)
    before, after = best["before"], best["after"]
    ratios = " | ".join(f"{p} {before[p] / after[p]:.1f}x" for p in PHASES if after[p] > 0)
    end = sum(before[p] for p in PHASES) / sum(after[p] for p in PHASES)
    print(f"  minima, before / after: {ratios} | end to end {end:.1f}x")
