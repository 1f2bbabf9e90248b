"""Issue 6's benchmark: the console's pages, the worker pass and the live-update latency.

Each part runs in a fresh interpreter with its own throw-away SQLite database (no worker
thread, the in-memory channel layer), on :func:`bench.generate.named_gpu_cluster` clusters
(8 named GPUs per node, two pods per node with one template claim each, reconciled once):

* **pages**: server time and bytes of the dashboard (read model only: the overview picture,
  pending pods grouped by reason), a node page, the pod list's page 1, a filtered search
  (pods by name and status), and the API's node list (first cursor page), through Django's
  test client as a signed-in user, with the number of SQL queries each page runs. Measured
  at 100 nodes (200 pods) and at the **single** size (1,000 nodes, 8,000 pods); with
  ``BENCH_LARGE=1`` also at the **large** size (5,000 nodes, 40,000 pods; slow to import).
  A count that grows with the nodes is an N+1. "cold" drops the cached baseline state
  first (the node page still builds one; the dashboard and the lists do not).
* **worker**: passes on the state the worker kept from its last pass, each after one new pod
  (caught up from the change log, ``services/incremental.py``), at 500 nodes and at the
  **single** size; and one full pass (``services.reconcile.reconcile`` without a kept
  state, as after a restart) after one new pod with a template claim was imported into a
  500-node cluster, its read and state-build phases timed separately.
* **API write to channel message**: wall time from just before ``POST /api/pods/`` to the
  ``cluster.changed`` message arriving on a channel subscribed to group ``cluster``.
* **API write on the single workload**: ``POST /api/pods/`` of one pod on the **single**
  cluster (1,000 nodes x 8 GPUs, 8,000 pods, settled once), its server time and SQL
  queries: a write validates the objects it touches (docs/console.md, "Services"), so
  neither should grow with the cluster.

Figures only; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

SINGLE = (1000, 8000)  # the single workload: nodes, pods
PAGE_SIZES = ((100, 200), SINGLE)  # (nodes, pods)
LARGE = (5000, 40000)
WORKER_NODES = 500
API_WRITES = 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _setup(nodes: int, pods: int | None = None):
    """Migrate, store and settle a cluster of ``nodes`` nodes (``pods`` pods, default two
    per node); a signed-in test client."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from allocation.engine.writer import dump
    from allocation.services.manifests import import_texts
    from allocation.services.reconcile import reconcile
    from bench.generate import named_gpu_cluster

    setup_test_environment()  # "testserver" becomes an allowed host
    call_command("migrate", verbosity=0)
    docs = named_gpu_cluster(nodes, 2 * nodes if pods is None else pods, devices=8)
    t0 = time.perf_counter()
    # One YAML document per object: one List of the single workload is over the loader's
    # per-document limit.
    import_texts([("bench.yaml", "---\n".join(dump(d) for d in docs))], replace=True)
    imported = time.perf_counter() - t0
    t0 = time.perf_counter()
    _KEPT[:] = [reconcile().kept]  # the worker keeps the settled state for its next pass
    settled = time.perf_counter() - t0
    user = get_user_model().objects.create_user("bench", password="bench", is_staff=True)
    client = Client()
    client.force_login(user)
    return client, {"import_s": imported, "settle_s": settled}


def _get(client, url: str, cold: bool) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from allocation.services import cluster

    if cold:
        cluster.clear_cache()
    # The import filled Django's query log to its limit (9,000): a full log would make every
    # count below 0.
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as queries:
        t0 = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - t0
    return {"s": elapsed, "queries": len(queries), "status": response.status_code,
            "kb": len(response.content) / 1024}


def measure_pages(nodes: int, pods: int) -> dict:
    client, result = _setup(nodes, pods)
    node = "node-" + "0" * len(str(nodes))
    pages = [("dashboard cold", "/dashboard/", True), ("dashboard warm", "/dashboard/", False),
             ("node page cold", f"/nodes/{node}/", True),
             ("node page warm", f"/nodes/{node}/", False),
             ("pod list page 1", "/pods/", False),
             ("filtered search", "/pods/?q=pod-001&status=Scheduled&sort=-name", False),
             ("API node list", "/api/nodes/", False),
             ("API pods search", "/api/pods/?q=pod-001&status=Scheduled", False)]
    result["pages"] = {}
    for label, url, cold in pages:
        runs = [_get(client, url, cold) for _ in range(3)]
        result["pages"][label] = {**runs[-1], "s": [r["s"] for r in runs]}
    return result


def _new_pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "example/app", "resources": {
                "requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "source": {
                    "resourceClaimTemplateName": "gpu-32gi"}}]}}


_KEPT: list = [None]  # the state the last pass settled (services/incremental.py)


def _kept_passes(writes: int = 3) -> list[dict]:
    """Worker passes on the kept state after one new pod each: wall and CPU time, and
    whether the pod was placed."""
    from allocation.engine.writer import dump
    from allocation.models import Pod
    from allocation.services.manifests import import_texts
    from allocation.services.reconcile import reconcile

    out = []
    for i in range(writes):
        import_texts([(f"kept{i}.yaml", dump(_new_pod(f"kept-{i}")))])
        wall, cpu = time.perf_counter(), time.process_time()
        result = reconcile(kept=_KEPT[0])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        _KEPT[0] = result.kept
        out.append({"s": wall, "cpu": cpu, "incremental": result.kept is not None,
                    "placed": bool(Pod.objects.get(name=f"kept-{i}").node_name)})
    return out


def _worker_pass() -> dict:
    from allocation.engine.simulation import Simulation
    from allocation.engine.writer import dump
    from allocation.services.manifests import import_texts
    from allocation.services.reconcile import reconcile
    from allocation.services.store import event_rows, loaded_from_rows, stored_rows

    t0 = time.perf_counter()
    import_texts([("new.yaml", dump(_new_pod("bench-new")))])
    imported = time.perf_counter() - t0
    t0 = time.perf_counter()  # the phases a pass starts with, timed on their own
    rows, events = stored_rows(), event_rows()
    read = time.perf_counter() - t0
    t0 = time.perf_counter()
    Simulation.from_loaded(loaded_from_rows(rows, events))
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    outcome = reconcile()
    passed = time.perf_counter() - t0
    t0 = time.perf_counter()
    idle = reconcile()
    idle_s = time.perf_counter() - t0
    return {"import_s": imported, "read_s": read, "build_s": build, "pass_s": passed,
            "outcome": outcome.outcome, "kinds": outcome.kinds, "idle_s": idle_s,
            "idle_outcome": idle.outcome, "rows": len(rows)}


async def _api_write(client, name: str) -> dict:
    import asyncio

    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("cluster", channel)

    async def arrival() -> tuple[dict, float]:
        message = await layer.receive(channel)
        return message, time.perf_counter()

    waiting = asyncio.create_task(arrival())
    body = json.dumps(_new_pod(name))
    t0 = time.perf_counter()
    # The POST runs in a worker thread; its after-commit group_send hops back onto this loop.
    response = await sync_to_async(client.post)("/api/pods/", body,
                                                content_type="application/json")
    answered = time.perf_counter() - t0
    message, received = await asyncio.wait_for(waiting, 60)
    await layer.group_discard("cluster", channel)
    return {"status": response.status_code, "answered_s": answered,
            "message_s": received - t0, "type": message.get("type"),
            "kinds": message.get("kinds")}


def measure_worker_and_api() -> dict:
    import asyncio

    client, result = _setup(WORKER_NODES)
    result["kept"] = _kept_passes()
    result["worker"] = _worker_pass()
    result["api"] = [asyncio.run(_api_write(client, f"api-{i}")) for i in range(API_WRITES)]
    return result


def measure_single_write(writes: int = API_WRITES) -> dict:
    """``POST /api/pods/`` of one new pod on the settled **single** cluster: server time
    and SQL queries of each write (no worker runs in between)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client, result = _setup(*SINGLE)
    result["writes"] = []
    for i in range(writes):
        body = json.dumps(_new_pod(f"single-{i}"))
        with CaptureQueriesContext(connection) as queries:
            t0 = time.perf_counter()
            response = client.post("/api/pods/", body, content_type="application/json")
            elapsed = time.perf_counter() - t0
        result["writes"].append({"status": response.status_code, "s": elapsed,
                                 "queries": len(queries)})
    result["kept"] = _kept_passes()
    return result


def _run(call: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings",
               "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "REDIS_URL": "",
               "DRA_WORKER_IN_PROCESS": "0"}
        code = f"import json; from bench import bench_console as b; print(json.dumps(b.{call}))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(values) -> str:
    values = values if isinstance(values, list) else [values]
    return ", ".join(f"{v * 1000:.0f}" for v in values) + " ms"


def main() -> None:
    sizes = [*PAGE_SIZES, LARGE] if os.environ.get("BENCH_LARGE") == "1" else PAGE_SIZES
    for nodes, pods in sizes:
        r = _run(f"measure_pages({nodes}, {pods})")
        print(f"pages with {nodes} nodes, {pods} pods (import {r['import_s']:.2f} s, "
              f"first worker pass {r['settle_s']:.2f} s); 3 requests each:")
        for label, page in r["pages"].items():
            print(f"  {label:<15} {_ms(page['s']):<22} {page['queries']:>3} SQL queries  "
                  f"HTTP {page['status']}  {page['kb']:.0f} KiB")
    r = _run("measure_worker_and_api()")
    w = r["worker"]
    print(f"worker on {WORKER_NODES} nodes, {2 * WORKER_NODES} pods ({w['rows']} stored rows):")
    print(f"  import one pod with a template claim {_ms(w['import_s'])}")
    print(f"  pass after it: {_ms(w['pass_s'])} ({w['outcome']}: {', '.join(w['kinds'])}); "
          f"of which read rows ~{_ms(w['read_s'])}, build state ~{_ms(w['build_s'])}")
    print(f"  pass with nothing new: {_ms(w['idle_s'])} ({w['idle_outcome']})")
    _print_kept(r["kept"])
    print(f"API write to channel message on {WORKER_NODES} nodes (POST /api/pods/):")
    for a in r["api"]:
        print(f"  HTTP {a['status']} answered {_ms(a['answered_s'])}, {a['type']} "
              f"{a['kinds']} received {_ms(a['message_s'])}")
    r = _run("measure_single_write()")
    print(f"API write on the single workload ({SINGLE[0]} nodes, {SINGLE[1]} pods; import "
          f"{r['import_s']:.2f} s, first worker pass {r['settle_s']:.2f} s), POST /api/pods/:")
    for w in r["writes"]:
        print(f"  HTTP {w['status']} {_ms(w['s'])}, {w['queries']} SQL queries")
    _print_kept(r["kept"])


def _print_kept(passes: list[dict]) -> None:
    print("  worker passes on the kept state, one new pod before each (wall, CPU):")
    for k in passes:
        print(f"    {_ms(k['s'])} ({k['cpu'] * 1000:.0f} ms CPU), "
              f"{'incremental' if k['incremental'] else 'FULL'}, "
              f"pod {'placed' if k['placed'] else 'NOT placed'}")


if __name__ == "__main__":
    main()
