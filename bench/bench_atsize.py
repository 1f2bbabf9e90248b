"""The console at real size, server and worker as separate processes (docs/console.md).

For each size (**single**: 1,000 nodes, 8,000 pods; with ``BENCH_LARGE=1`` also **large**:
5,000 nodes, 40,000 pods) and dialect (seed and resource.k8s.io/v1; ``BENCH_DIALECTS=seed``
for one), in a fresh SQLite database with a Redis of its own (``redis-server`` on a free
port: the channel layer that carries announcements between processes):

* **import**: ``manage.py import FILE`` (a child process: wall and CPU);
* **first pass**: ``manage.py worker`` started on the imported cluster until the read model
  shows every pod bound (wall, and the worker's CPU then); beside it ``draplanner simulate``
  of the same file (CPU), which the issue's goal compares with;
* **one API write** (a new pod, ``POST /api/pods/`` with a token) until the response, until
  a second client hears the ``cluster.changed`` message (a channel subscribed to the group
  every live page's socket listens to), and until the worker has placed it (its read-model
  row has a node), three times;
* **pages** through the running server as a signed-in user: dashboard, a node page, a pod
  page, a claim page, the pod list's page 1, a filtered search; wall time, the web
  process's CPU time and bytes;
* **fork** (``POST /scenarios/new/``), **its page** (the first reads the baseline; on a
  large cluster it answers at once with a placeholder that asks for the planner body: both
  requests, and when the placeholder came), and **a drop** (``POST`` of a pin-pod change
  until the re-rendered planner body is back: evaluated on a fork of the baseline), wall
  and the web process's CPU time; then one more API write, placed by the worker, and the
  scenario's page again (its baseline caught up from the change log);
* **peak RSS** of the web and the worker process (``VmHWM``).

The workload is the generator's named-GPU cluster with 10 devices per node instead of 8, so
that new pods can be placed. Figures only; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

SIZES = {"single": (1000, 8000), "large": (5000, 40000)}
DEVICES = 10
WRITES = 3
ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _proc(pid: int) -> dict:
    """CPU seconds and peak RSS (MB) of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    peak = 0.0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return {"cpu_s": cpu, "rss_mb": peak}


def _wait(condition, timeout: float = 3600, step: float = 0.05) -> float:
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("the condition did not hold in time")
        time.sleep(step)
    return time.perf_counter() - start


def _pod(name: str, dialect: str) -> dict:
    entry = ({"name": "gpu", "resourceClaimTemplateName": "gpu-32gi"} if dialect == "v1"
             else {"name": "gpu", "source": {"resourceClaimTemplateName": "gpu-32gi"}})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "example/app", "resources": {
                "requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}],
                "resourceClaims": [entry]}}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is the answer (a fork's is the new scenario's address), not followed."""

    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class _Http:
    """A signed-in browser's requests: session cookie, CSRF token for forms."""

    def __init__(self, base: str, session: str, token: str) -> None:
        self.base, self.token = base, token
        self.cookies = {"sessionid": session}

    def _send(self, request: urllib.request.Request,
              cookies: bool = True) -> tuple[float, bytes, int]:
        try:
            return self._open(request, cookies)
        except urllib.error.HTTPError as answer:  # a redirect, or a refusal: its status
            return 0.0, answer.read(), answer.code

    def _open(self, request: urllib.request.Request,
              cookies: bool) -> tuple[float, bytes, int]:
        if cookies:  # a script with a token sends none (a session would ask for CSRF)
            request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        start = time.perf_counter()
        with _OPENER.open(request, timeout=600) as answer:
            body = answer.read()
            for header in answer.headers.get_all("Set-Cookie") or ():
                name, _, rest = header.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
            return time.perf_counter() - start, body, answer.status

    def get(self, path: str) -> tuple[float, bytes, int]:
        return self._send(urllib.request.Request(self.base + path))

    def form(self, path: str, data: dict) -> tuple[float, bytes, int]:
        from urllib.parse import urlencode

        request = urllib.request.Request(self.base + path, urlencode(data).encode(),
                                         method="POST")
        request.add_header("X-CSRFToken", self.cookies.get("csrftoken", ""))
        request.add_header("HX-Request", "true")
        return self._send(request)

    def api_post(self, path: str, document: dict) -> tuple[float, bytes, int]:
        request = urllib.request.Request(self.base + path, json.dumps(document).encode(),
                                         method="POST")
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Content-Type", "application/json")
        return self._send(request, cookies=False)


def measure(size: str, dialect: str) -> dict:
    """Every figure of one size and dialect (run in a fresh interpreter: it sets up
    Django on its own database)."""
    import asyncio

    import django

    from allocation.engine.writer import dump
    from bench.generate import named_gpu_cluster, named_gpu_cluster_v1

    nodes, pods = SIZES[size]
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    redis_port, web_port = _free_port(), _free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings",
           "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
           "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "DRA_WORKER_IN_PROCESS": "0"}
    os.environ.update(env)
    running: list[subprocess.Popen] = []
    try:
        running.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no",
             "--dir", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        make = named_gpu_cluster_v1 if dialect == "v1" else named_gpu_cluster
        path = tmp / "cluster.yaml"
        # one document each: an import refuses a single document over 4 MiB (a List here)
        path.write_text("---\n".join(dump(d) for d in make(nodes, pods, devices=DEVICES)))
        manage = [sys.executable, str(ROOT / "manage.py")]
        result: dict = {"size": size, "dialect": dialect, "nodes": nodes, "pods": pods}

        cpu, start = _children_cpu(), time.perf_counter()
        subprocess.run([*manage, "import", str(path)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        result["import"] = {"wall_s": time.perf_counter() - start,
                            "cpu_s": _children_cpu() - cpu}
        cpu = _children_cpu()
        subprocess.run([sys.executable, "-c", "import sys; from allocation.engine.cli import "
                        "main; sys.exit(main())", "simulate", str(path), "-o", "json"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        result["simulate_cpu_s"] = _children_cpu() - cpu

        from allocation.models import PodSummary

        worker = subprocess.Popen([*manage, "worker"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=open(tmp / "worker.log", "w"))  # noqa: SIM115
        running.append(worker)
        first = _wait(lambda: PodSummary.objects.exclude(node="").count() >= pods)
        result["first_pass"] = {"wall_s": first, "cpu_s": _proc(worker.pid)["cpu_s"]}

        web = subprocess.Popen([*manage, "runserver", "--noreload", f"127.0.0.1:{web_port}"],
                               env=env, stdout=subprocess.DEVNULL,
                               stderr=open(tmp / "web.log", "w"))  # noqa: SIM115
        running.append(web)
        http = _signed_in(f"http://127.0.0.1:{web_port}")
        _wait(lambda: _up(http), timeout=120, step=0.2)
        result["writes"] = asyncio.run(_writes(http, dialect))
        web_cpu = lambda: _proc(web.pid)["cpu_s"]  # noqa: E731
        result["pages"] = _pages(http, web_cpu)
        result["scenario"] = _scenario(http, web_cpu, nodes, dialect,
                                       lambda: _proc(web.pid)["rss_mb"])
        result["rss_mb"] = {"web": _proc(web.pid)["rss_mb"], "worker": _proc(worker.pid)["rss_mb"]}
        return result
    finally:
        _stop(running)


def _stop(running: list[subprocess.Popen]) -> None:
    """Stop the processes this measurement started; never raise (the figures are taken)."""
    for process in reversed(running):
        process.terminate()
    for process in reversed(running):
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _signed_in(base: str) -> _Http:
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.create_user("bench", password="bench", is_staff=True)
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return _Http(base, session.session_key, Token.objects.create(user=user).key)


def _up(http: _Http) -> bool:
    try:
        return http.get("/scenarios/")[2] == 200  # also sets the CSRF cookie
    except OSError:
        return False


async def _writes(http: _Http, dialect: str) -> list[dict]:
    import asyncio

    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    from allocation.models import PodSummary

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("cluster", channel)
    found = []
    for number in range(WRITES):
        name = f"bench-new-{number}"
        start = time.perf_counter()
        answered, _body, status = await sync_to_async(http.api_post)(
            "/api/pods/", _pod(name, dialect))
        await asyncio.wait_for(layer.receive(channel), 600)
        heard = time.perf_counter() - start

        def placed(name=name) -> bool:
            return PodSummary.objects.filter(name=name).exclude(node="").exists()

        await sync_to_async(_wait)(placed, 600, 0.01)
        found.append({"status": status, "answered_s": answered, "heard_s": heard,
                      "placed_s": time.perf_counter() - start})
    await layer.group_discard("cluster", channel)
    return found


def _pages(http: _Http, web_cpu) -> dict:
    """Each page three times: wall seconds and the web process's CPU seconds per request."""
    from allocation.models import ClaimSummary

    claim = ClaimSummary.objects.order_by("namespace", "name").first()
    pages = {"dashboard": "/dashboard/", "node page": "/nodes/node-0000/",
             "pod page": "/pods/default/pod-00001/",
             "claim page": f"/claims/{claim.namespace}/{claim.name}/",
             "pod list page 1": "/pods/",
             "filtered search": "/pods/?q=pod-001&status=Scheduled&sort=-name"}
    found = {}
    for label, url in pages.items():
        runs, cpu = [], []
        for _ in range(3):
            before = web_cpu()
            runs.append(http.get(url))
            cpu.append(web_cpu() - before)
        found[label] = {"s": [r[0] for r in runs], "cpu_s": cpu, "kb": len(runs[-1][1]) / 1024,
                        "status": runs[-1][2]}
    return found


def _scenario(http: _Http, web_cpu, nodes: int, dialect: str, web_peak) -> dict:
    from scenarios.models import Scenario

    start = time.perf_counter()
    http.form("/scenarios/new/", {"name": "bench"})  # answered by a redirect to its page
    fork = time.perf_counter() - start
    scenario = Scenario.objects.get(name="bench")
    before = web_cpu()
    # the page; at the large size it answers at once with a placeholder that then asks for
    # the planner body, which reads and settles the baseline (docs/scenarios.md)
    page_s, page, _status = http.get(f"/scenarios/{scenario.pk}/")
    body_s = 0.0
    if b"Preparing the baseline" in page:
        body_s = http.get(f"/scenarios/{scenario.pk}/body/")[0]
    first_view = page_s + body_s
    first_cpu = web_cpu() - before
    drops = []
    # the last nodes have devices free at both sizes (node-0999 is full at the large size,
    # where a drop on it was a refusal: evaluated, but nothing saved or drawn)
    for target in (f"node-{nodes - 1 - i:04d}" for i in range(3)):
        before = web_cpu()
        seconds, body, status = http.form(f"/scenarios/{scenario.pk}/changes/", {
            "op": "pin-pod", "pod": "default/pod-00000", "node": target})
        drops.append({"s": seconds, "cpu_s": web_cpu() - before, "status": status,
                      "refused": b'data-refused="true"' in body, "kb": len(body) / 1024})
    # a write moves the baseline on: the page's next view catches the baseline up from the
    # change log rather than building it again (docs/scenarios.md, "The baseline")
    from allocation.models import PodSummary

    peak_before = web_peak()
    http.api_post("/api/pods/", _pod("bench-after-fork", dialect))
    _wait(lambda: PodSummary.objects.filter(name="bench-after-fork").exclude(node="").exists(),
          600, 0.01)
    before = web_cpu()
    after_write = http.get(f"/scenarios/{scenario.pk}/")[0]
    return {"fork_s": fork, "first_view_s": first_view, "first_view_cpu_s": first_cpu,
            "first_view_page_s": page_s if body_s else None,
            "drops": drops, "after_write_s": after_write,
            "after_write_cpu_s": web_cpu() - before, "web_peak_before_write_mb": peak_before}


def main() -> None:
    sizes = ["single", *(["large"] if os.environ.get("BENCH_LARGE") == "1" else [])]
    dialects = os.environ.get("BENCH_DIALECTS", "seed,v1").split(",")
    for size in sizes:
        for dialect in dialects:
            code = ("import json; from bench.bench_atsize import measure; "
                    f"print(json.dumps(measure({size!r}, {dialect!r})))")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 cwd=ROOT)
            if out.returncode != 0:
                print(f"{size} {dialect}: failed\n{out.stderr[-3000:]}")
                continue
            _print(json.loads(out.stdout.strip().splitlines()[-1]))


def _print(r: dict) -> None:
    print(f"{r['size']} ({r['nodes']} nodes, {r['pods']} pods), {r['dialect']}")
    print(f"  import {r['import']['wall_s']:.1f} s wall, {r['import']['cpu_s']:.1f} CPU-s | "
          f"first pass {r['first_pass']['wall_s']:.1f} s wall, worker "
          f"{r['first_pass']['cpu_s']:.1f} CPU-s (simulate: {r['simulate_cpu_s']:.1f} CPU-s)")
    for w in r["writes"]:
        print(f"  API write: answered {w['answered_s'] * 1000:.0f} ms, other client "
              f"{w['heard_s'] * 1000:.0f} ms, placed {w['placed_s'] * 1000:.0f} ms "
              f"(HTTP {w['status']})")
    for label, page in r["pages"].items():
        times = ", ".join(f"{s * 1000:.0f} ({c * 1000:.0f})"
                          for s, c in zip(page["s"], page["cpu_s"], strict=True))
        print(f"  {label}: {times} ms (web CPU ms), {page['kb']:.0f} KB "
              f"(HTTP {page['status']})")
    scenario = r["scenario"]
    drops = ", ".join(f"{d['s'] * 1000:.0f} ({d['cpu_s'] * 1000:.0f}"
                      f"{', refused' if d.get('refused') else ''})" for d in scenario["drops"])
    placeholder = scenario.get("first_view_page_s")
    shown = "" if placeholder is None else f", placeholder shown after {placeholder:.2f} s"
    print(f"  fork {scenario['fork_s'] * 1000:.0f} ms | its page, first "
          f"{scenario['first_view_s']:.1f} s ({scenario['first_view_cpu_s']:.1f} CPU-s"
          f"{shown}) | "
          f"drop to updated view: {drops} ms (web CPU ms) | its page after a write "
          f"(baseline caught up) {scenario['after_write_s']:.2f} s "
          f"({scenario['after_write_cpu_s']:.2f} CPU-s)")
    print(f"  web peak RSS before that write {scenario['web_peak_before_write_mb']:.0f} MB")
    print(f"  peak RSS: web {r['rss_mb']['web']:.0f} MB, worker {r['rss_mb']['worker']:.0f} MB")


if __name__ == "__main__":
    main()
