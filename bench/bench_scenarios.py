"""Issue 7's benchmark: what-if scenarios on a 500-node cluster with 4,000 claims.

Reports, in a fresh interpreter with its own throw-away SQLite database:

* **fork**: creating a scenario (a row; no copy of the cluster is made);
* **first evaluation**: reading the stored baseline and simulating it once (cached after);
* **drop to updated view**: what happens on the server between a pod dropped on a node and
  the new page body: evaluate the change on the baseline (copy-on-write documents, one
  simulation), save it, render the body; the engine-only part is reported separately.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

NODES, PODS = 500, 4000


def _measure() -> dict:
    import time

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from allocation.engine.writer import as_list, dump
    from allocation.services.manifests import import_texts
    from allocation.services.reconcile import reconcile
    from bench.generate import named_gpu_cluster
    from scenarios import services
    from scenarios.evaluation import baseline, evaluate_changes
    from scenarios.views import render_body

    call_command("migrate", verbosity=0)
    docs = named_gpu_cluster(NODES, PODS, devices=10)  # room left to drop pods onto
    t0 = time.perf_counter()
    import_texts([("bench.yaml", dump(as_list(docs)))], replace=True)
    imported = time.perf_counter() - t0
    t0 = time.perf_counter()
    reconcile()  # what the worker does after the upload: the baseline is settled when stored
    reconciled = time.perf_counter() - t0
    user = get_user_model().objects.create_user("bench", password="bench")
    t0 = time.perf_counter()
    scenario = services.create(user, "bench")
    fork = time.perf_counter() - t0
    t0 = time.perf_counter()
    base = baseline()
    first = time.perf_counter() - t0
    placed = sum(1 for node in base.outcome.pods.values() if node)
    # Drop a pod of the first node onto the last node (which has free devices left).
    first_node, last_node = base.simulation.state.node_order[0], \
        base.simulation.state.node_order[-1]
    pod = next(p for p, n in base.outcome.pods.items() if n == first_node)
    drops = []
    engine_only = []
    for attempt in range(3):
        target = base.simulation.state.node_order[-1 - attempt]
        change = {"op": "pin-pod", "pod": pod, "node": target}
        t0 = time.perf_counter()
        evaluate_changes([*scenario.active_changes, change])
        engine_only.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        scenario = services.add_change(user, scenario, change)  # cached evaluation reused
        html = render_body(scenario, True)
        drops.append(engine_only[-1] + time.perf_counter() - t0)
    return {"import_s": imported, "reconcile_s": reconciled, "fork_s": fork,
            "first_s": first, "placed": placed,
            "claims": len(base.outcome.claims), "engine_s": engine_only, "drop_s": drops,
            "html_kb": len(html) / 1024, "from": first_node, "to": last_node}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings",
               "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "REDIS_URL": "",
               "DRA_WORKER_IN_PROCESS": "0"}
        code = "import json; from bench.bench_scenarios import _measure; " \
               "print(json.dumps(_measure()))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"what-if on {NODES} nodes x 10 devices, {PODS} pods ({r['claims']} claims "
          f"allocated, {r['placed']} pods placed)")
    print(f"  import {r['import_s']:.2f} s | worker pass {r['reconcile_s']:.2f} s | "
          f"fork {r['fork_s'] * 1000:.1f} ms | "
          f"first baseline evaluation {r['first_s']:.2f} s")
    print("  drop to updated view: " + ", ".join(f"{d:.2f} s" for d in r["drop_s"])
          + " (engine part: " + ", ".join(f"{e:.2f} s" for e in r["engine_s"])
          + f"); body {r['html_kb']:.0f} KiB")


if __name__ == "__main__":
    main()
