"""The live-cluster benchmark (docs/live-cluster.md): import from a fixture API server, the
first settled worker pass, and a watch event until a second client sees it.

Each size runs in a fresh interpreter with its own throw-away SQLite database, against
``tests/kube_server.py`` serving :func:`bench.generate.live_cluster` (pods bound and claims
allocated by the cluster, 100 pods pending) through the real ``kubernetes`` client:

* **single**: 1,000 nodes, 8,000 pods; **large**: 5,000 nodes, 40,000 pods (with as many
  claims, and a slice per node).
* **import**: ``import_cluster`` as ``manage.py import`` runs it: discovery and paginated
  lists (pages of 500; the fixture server runs in the same process, so the list phase's CPU
  includes serving it, though not serialising its objects: it makes its lists' texts when
  loaded, as an API server serves from its watch cache), then storing (loader,
  whole-cluster checks, one transaction): wall and CPU of this process each; the CPU of
  the process that checks pages meanwhile (``clusters/kube/prechecks.py``) is given apart.
* **first pass**: one worker pass (``services.reconcile.reconcile``) on the imported
  cluster: the cluster's allocations are kept, the pending pods are explained.
* **watch event to a second client**: from the fixture server's change to the
  ``cluster.changed`` message arriving on a channel of group ``cluster`` (what a live page
  waits for), through the mirror's watch, batch (0.2 s) and store.

Figures only; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

SIZES = {"single": (1000, 8), "large": (5000, 8)}  # nodes, pods per node
WATCH_EVENTS = 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _clock():
    return time.perf_counter(), time.process_time()


def _since(start) -> dict:
    return _between(start, _clock())


def _between(start, end) -> dict:
    return {"wall_s": end[0] - start[0], "cpu_s": end[1] - start[1]}


def measure(size: str) -> dict:
    """Import, first pass and watch latency for ``size`` (run in a fresh interpreter)."""
    import asyncio
    import threading
    from pathlib import Path

    import django

    django.setup()
    from django.core.management import call_command

    from allocation.models import Pod
    from allocation.services.reconcile import reconcile
    from bench.generate import live_cluster
    from clusters.kube.client import connect
    from clusters.mirror import Mirror, import_cluster
    from tests.kube_server import FakeApiServer, write_kubeconfig

    call_command("migrate", verbosity=0)
    nodes, per_node = SIZES[size]
    docs = live_cluster(nodes, per_node)
    result: dict = {"nodes": nodes, "pods": sum(d["kind"] == "Pod" for d in docs),
                    "objects": len(docs)}
    with FakeApiServer() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.put_all(docs)
        connection = connect(str(write_kubeconfig(Path(tmp) / "kc", fake.url)))
        marks = []  # the clock when the lists end and the store begins

        def say(line: str) -> None:
            if line.startswith("storing "):
                marks.append(_clock())

        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = _clock()
        report = import_cluster(connection, say).report
        result["list"] = _between(start, marks[0])
        result["store"] = _since(marks[0])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result["checker_cpu_s"] = (after.ru_utime + after.ru_stime - children.ru_utime
                                   - children.ru_stime)
        result["rejected"] = len(report.rejected)
        result["requests"] = len(fake.requests)
        start = _clock()
        outcome = reconcile()
        result["pass"] = {**_since(start), "outcome": outcome.outcome}
        result["pending"] = Pod.objects.exclude(status="Scheduled").count()

        # Watch events: the mirror follows the server; a "page" waits on the channel layer.
        mirror = Mirror(connection, batch_seconds=0.2)
        mirror.start()
        writer = threading.Thread(target=lambda: [mirror.step() for _ in iter(
            lambda: mirror.stop.is_set(), True)], daemon=True)
        writer.start()
        result["watch"] = [asyncio.run(_watch_event(fake, f"watched-{i}"))
                           for i in range(WATCH_EVENTS)]
        mirror.close()
        writer.join(30)
        result["verbs"] = sorted(fake.verbs())
    return result


async def _watch_event(fake, name: str) -> dict:
    import asyncio

    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("cluster", channel)
    waiting = asyncio.create_task(layer.receive(channel))
    await asyncio.sleep(0.5)  # let the previous event's pass settle
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"containers": [{"name": "main", "image": "example/app",
                                    "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"phase": "Pending"}}
    t0 = time.perf_counter()
    fake.put(pod)
    message = await asyncio.wait_for(waiting, 120)
    seen = time.perf_counter() - t0
    await layer.group_discard("cluster", channel)
    return {"seen_s": seen, "kinds": message.get("kinds")}


def _run(size: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings",
               "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "REDIS_URL": "",
               "DRA_WORKER_IN_PROCESS": "0"}
        code = ("import json; from bench import bench_live as b; "
                f"print(json.dumps(b.measure({size!r})))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _phase(figures: dict) -> str:
    return f"{figures['wall_s']:.2f} s wall, {figures['cpu_s']:.2f} s CPU"


def main(sizes: tuple[str, ...] = tuple(SIZES)) -> None:
    for size in sizes:
        r = _run(size)
        print(f"{size}: {r['nodes']} nodes, {r['pods']} pods, {r['objects']} objects "
              f"({r['requests']} GET requests to list them)")
        print(f"  list (discovery, pages of 500)  {_phase(r['list'])}  (CPU includes the "
              "in-process fixture server)")
        print(f"  store (validate, one transaction) {_phase(r['store'])}; "
              f"{r['rejected']} left out")
        print(f"  page checks (second process)    {r['checker_cpu_s']:.2f} s CPU")
        total = r["list"]["wall_s"] + r["store"]["wall_s"]
        print(f"  import end to end               {total:.2f} s wall")
        print(f"  first worker pass               {_phase(r['pass'])} ({r['pass']['outcome']});"
              f" {r['pending']} pods not scheduled (explained)")
        for w in r["watch"]:
            print(f"  watch event to a second client  {w['seen_s'] * 1000:.0f} ms "
                  f"({', '.join(w['kinds'])})")
        print(f"  HTTP methods sent               {', '.join(r['verbs'])}")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or tuple(SIZES))
