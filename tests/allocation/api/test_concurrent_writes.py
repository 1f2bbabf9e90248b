"""Concurrent API writes against a real server: every acknowledged write is kept.

Fifty users' ``POST /api/pods/`` at once, and a staff user promoting a scenario at the same
moment, against daphne in a subprocess (``tests/server_process.py``) with its in-process
worker: on a file-backed SQLite database when the suite runs on SQLite (writes must wait
for each other, never fail with "database is locked": console/env.py), on PostgreSQL when it
runs there. Every write is acknowledged (201), every pod is stored afterwards, the promotion
applied its own change without losing any pod, and the worker converges: every pod is
scheduled or carries its explanation.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from allocation.engine.constants import EXPLAIN_ANNOTATION
from tests import server_process
from tests.factories import node, pod, to_yaml
from tests.scenarios import cluster as scenario_cluster

WRITERS = 50
PASSWORD = "concurrent-writes-1843"
CONVERGE_TIMEOUT = 300.0  # bounds a hang; never an assertion on speed


@pytest.fixture
def server(tmp_path, transactional_db):
    url, migrate = server_process.database_url(tmp_path)
    env = server_process.environment(url)
    if migrate:
        server_process.manage(env, "migrate", "--noinput")
    server_process.create_user(env, "alice", PASSWORD)
    server_process.create_user(env, "root", PASSWORD, staff=True)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(to_yaml(scenario_cluster.documents(pods=0)))  # two nodes, a GPU each
    server_process.manage(env, "import", str(cluster))
    running = server_process.start(env, tmp_path / "daphne.log")
    yield running
    running.stop()


def _settled(item: dict) -> bool:
    scheduled = bool(item.get("spec", {}).get("nodeName"))
    explained = EXPLAIN_ANNOTATION in (item["metadata"].get("annotations") or {})
    return scheduled or explained


def test_fifty_concurrent_writes_and_a_promotion_are_all_kept(server):
    alice = server_process.Session(server.url, "alice", PASSWORD)
    root = server_process.Session(server.url, "root", PASSWORD)
    status, body = root.request("POST", "/api/scenarios/", json.dumps({"name": "more"}).encode())
    assert status == 201, body
    scenario = json.loads(body)["id"]
    change = {"op": "add-object", "manifest": node("worker-3")}
    status, body = root.request("POST", f"/api/scenarios/{scenario}/changes/",
                                json.dumps(change).encode())
    assert status == 200, body

    start = threading.Barrier(WRITERS + 1)
    results: dict = {}

    def create(i: int) -> None:
        text = to_yaml([pod(f"p{i:02d}", templates={"gpu": "big-gpu"})]).encode()
        start.wait()
        results[i] = alice.request("POST", "/api/pods/", text, "application/yaml")

    def promote() -> None:
        start.wait()
        results["promote"] = root.request("POST", f"/api/scenarios/{scenario}/promote/")

    threads = [threading.Thread(target=create, args=(i,)) for i in range(WRITERS)]
    threads.append(threading.Thread(target=promote))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)

    refused = {k: v for k, v in results.items() if v[0] != (200 if k == "promote" else 201)}
    assert refused == {}, server.output()[-5000:]
    assert len(results) == WRITERS + 1
    stored = {i["metadata"]["name"] for i in alice.json("/api/pods/")["items"]}
    assert stored == {f"p{i:02d}" for i in range(WRITERS)}
    nodes = {i["metadata"]["name"] for i in alice.json("/api/nodes/")["items"]}
    assert nodes == {"worker-1", "worker-2", "worker-3"}

    deadline = time.monotonic() + CONVERGE_TIMEOUT
    while True:
        pods = alice.json("/api/pods/")["items"]
        waiting = sorted(i["metadata"]["name"] for i in pods if not _settled(i))
        if not waiting:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"the worker did not converge: {waiting}\n{server.output()[-5000:]}")
        time.sleep(0.5)
    assert len(pods) == WRITERS
    assert sum(1 for i in pods if i.get("spec", {}).get("nodeName")) == 2  # two GPUs
    log = server.output()
    assert "locked" not in log and "Traceback" not in log, log[-5000:]


def test_concurrent_creates_of_one_name_give_one_201_and_conflicts(server):
    alice = server_process.Session(server.url, "alice", PASSWORD)
    start = threading.Barrier(10)
    results: list = []

    def create(i: int) -> None:
        doc = pod("same", templates={"gpu": "big-gpu"})
        doc["metadata"]["labels"] = {"writer": str(i)}
        text = to_yaml([doc]).encode()
        start.wait()
        results.append((i, alice.request("POST", "/api/pods/", text, "application/yaml")))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    statuses = sorted(status for _, (status, _) in results)
    assert statuses == [201] + [409] * 9, server.output()[-3000:]
    [winner] = [i for i, (status, _) in results if status == 201]
    [stored] = alice.json("/api/pods/")["items"]
    assert stored["metadata"]["labels"] == {"writer": str(winner)}  # never overwritten
