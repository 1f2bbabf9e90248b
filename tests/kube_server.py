"""A small Kubernetes-compatible API server for tests and benchmarks (127.0.0.1, threads).

It serves what the planner reads from a cluster (docs/live-cluster.md), in the shape a
1.34/1.35 API server answers: API group discovery (``GET /apis/<group>``), lists with
``limit``/``continue`` (items without ``apiVersion``/``kind``, the list's
``metadata.resourceVersion``), and watches (``?watch=true``, chunked, one JSON event per
line) from a resourceVersion, with ``BOOKMARK`` events, ``ERROR`` 410 for a version older
than the compaction point. Objects get ``uid``, ``resourceVersion``, ``creationTimestamp``,
``generation`` and ``managedFields``. Every request is recorded (method, path, query).

Knobs for the failure tests: ``served`` (versions per group), ``forbidden`` (paths answered
403 as the API server would), ``delay`` (seconds before every answer: a slow server),
``drop_watch_after`` (the next watch of a path breaks its connection after N events),
``gone_next_watch`` (the next watch of a path answers an ERROR 410 event), and
:meth:`compact` (forget history: older versions get 410).
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeApiServer", "Request", "COLLECTIONS", "write_kubeconfig"]

# kind -> (group, plural, namespaced)
COLLECTIONS = {
    "Namespace": ("", "namespaces", False),
    "Node": ("", "nodes", False),
    "Pod": ("", "pods", True),
    "PodTemplate": ("", "podtemplates", True),
    "DeviceClass": ("resource.k8s.io", "deviceclasses", False),
    "ResourceSlice": ("resource.k8s.io", "resourceslices", False),
    "ResourceClaim": ("resource.k8s.io", "resourceclaims", True),
    "ResourceClaimTemplate": ("resource.k8s.io", "resourceclaimtemplates", True),
    "ProvisioningRequest": ("autoscaling.x-k8s.io", "provisioningrequests", True),
}
_BY_PLURAL = {plural: kind for kind, (_g, plural, _n) in COLLECTIONS.items()}
_STAMP = "2025-06-01T12:00:00Z"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict


class FakeApiServer:
    """The server and its objects; use as a context manager (``url`` once started)."""

    def __init__(self, served: dict[str, list[str]] | None = None,
                 bookmark_seconds: float = 0.2) -> None:
        self.served = served if served is not None else {
            "resource.k8s.io": ["v1", "v1beta2", "v1beta1"],
            "autoscaling.x-k8s.io": ["v1"]}
        self.bookmark_seconds = bookmark_seconds
        self.objects: dict[str, dict[tuple[str, str], dict]] = defaultdict(dict)
        self.history: list[tuple[int, str, str, dict]] = []  # (rv, plural, type, object)
        self.version = 1000
        self.compacted = 0
        self.requests: list[Request] = []
        self.forbidden: set[str] = set()
        self.delay = 0.0
        self.drop_watch_after: dict[str, int] = {}
        self.gone_next_watch: set[str] = set()
        self.lock = threading.Condition()
        self.closing = False
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # plural -> (version, its objects' list items as JSON, sorted by key): sorted and
        # serialised once per version, not once per page (a 40,000-pod list is 80 pages)
        self._listed: dict[str, tuple[int, list[str]]] = {}

    # -- objects -------------------------------------------------------------------------
    def _stamp(self, kind: str, obj: dict, old: dict | None) -> dict:
        group, plural, _namespaced = COLLECTIONS[kind]
        obj = copy.deepcopy(obj)
        version = self._api_version(group)
        obj["apiVersion"], obj["kind"] = version, kind
        meta = obj.setdefault("metadata", {})
        self.version += 1
        meta["resourceVersion"] = str(self.version)
        meta["uid"] = ((old or {}).get("metadata", {}).get("uid") or meta.get("uid")
                       or str(uuid.uuid4()))
        meta["creationTimestamp"] = (old or {}).get("metadata", {}).get(
            "creationTimestamp", _STAMP)
        if "spec" in obj:
            before = (old or {}).get("metadata", {}).get("generation", 0)
            meta["generation"] = before + (1 if (old or {}).get("spec") != obj["spec"] else 0)
        meta["managedFields"] = [{
            "manager": "kubectl-client-side-apply", "operation": "Update",
            "apiVersion": version, "time": _STAMP, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {}}}]
        return obj

    def _api_version(self, group: str) -> str:
        if not group:
            return "v1"
        return f"{group}/{self.served[group][0]}"

    @staticmethod
    def _key(obj: dict) -> tuple[str, str]:
        meta = obj.get("metadata", {})
        return meta.get("namespace", ""), meta["name"]

    def put(self, obj: dict) -> dict:
        """Create or replace ``obj`` (by its kind, namespace, name); a watch event follows."""
        kind = obj["kind"]
        plural = COLLECTIONS[kind][1]
        with self.lock:
            old = self.objects[plural].get(self._key(obj))
            stored = self._stamp(kind, obj, old)
            self.objects[plural][self._key(stored)] = stored
            self.history.append((self.version, plural, "MODIFIED" if old else "ADDED",
                                 stored))
            self.lock.notify_all()
            return stored

    def put_all(self, objects: list[dict]) -> None:
        """:meth:`put` each, without waking watches per object (a fast initial load), and
        make the lists' texts now: the first list of a kind is then served as fast as the
        next, as an API server serves lists from its watch cache, and a benchmark's list
        phase times the planner's reading, not this server's serialisation (3.7 s CPU for
        the 90,000 objects of ``bench_live``'s large cluster)."""
        with self.lock:
            for obj in objects:
                kind = obj["kind"]
                plural = COLLECTIONS[kind][1]
                stored = self._stamp(kind, obj, self.objects[plural].get(self._key(obj)))
                self.objects[plural][self._key(stored)] = stored
            self.compacted = self.version  # a fresh server: no history before its objects
            for plural in list(self.objects):
                self.listed_items(plural)

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        plural = COLLECTIONS[kind][1]
        with self.lock:
            old = self.objects[plural].pop((namespace, name))
            self.version += 1
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(self.version)
            self.history.append((self.version, plural, "DELETED", gone))
            self.lock.notify_all()

    def listed_items(self, plural: str) -> list[str]:
        """The objects of ``plural`` by (namespace, name), as now, each as the JSON of a list
        item (without ``apiVersion`` and ``kind``: the list carries them); call with ``lock``
        held. Objects are replaced whole, never changed in place, and every change bumps the
        version, so a version's texts stay true."""
        cached = self._listed.get(plural)
        if cached is None or cached[0] != self.version:
            cached = self._listed[plural] = (self.version, [
                json.dumps({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
                for _key, obj in sorted(self.objects[plural].items())])
        return cached[1]

    def compact(self) -> None:
        """Forget the history: a watch from an older version gets 410 Gone."""
        with self.lock:
            self.version += 1
            self.compacted = self.version
            self.history.clear()

    def verbs(self) -> set[str]:
        """Every HTTP method the clients used."""
        return {r.method for r in self.requests}

    # -- serving -------------------------------------------------------------------------
    def __enter__(self) -> FakeApiServer:
        server = self

        class Handler(_Handler):
            fake = server

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="fake-apiserver")
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        with self.lock:
            self.closing = True
            self.lock.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(10)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeApiServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def _record(self) -> tuple[str, dict]:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        self.fake.requests.append(Request(self.command, parts.path, query))
        return parts.path, query

    def _refuse_write(self) -> None:
        self._record()
        self._json(405, _status(405, "MethodNotAllowed", "the fixture server is read-only"))

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse_write

    def do_GET(self) -> None:
        path, query = self._record()
        if self.fake.delay:
            time.sleep(self.fake.delay)
        if path in self.fake.forbidden:
            plural = path.rstrip("/").split("/")[-1]
            verb = "watch" if query.get("watch") == "true" else "list"
            self._json(403, _status(403, "Forbidden",
                                    f'{plural} is forbidden: User "system:serviceaccount:'
                                    f'planner:draplanner" cannot {verb} resource "{plural}" '
                                    "at the cluster scope"))
            return
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["apis"] and len(parts) == 2:
            self._group(parts[1])
            return
        plural, group, version = None, "", ""
        if parts[:2] == ["api", "v1"] and len(parts) == 3:
            plural, version = parts[2], "v1"
        elif parts[:1] == ["apis"] and len(parts) == 4:
            group, version, plural = parts[1], parts[2], parts[3]
        kind = _BY_PLURAL.get(plural or "")
        if kind is None or COLLECTIONS[kind][0] != group or (
                group and version not in self.fake.served.get(group, [])):
            self._json(404, _status(404, "NotFound", "the server could not find the "
                                    "requested resource"))
            return
        if query.get("watch") in ("true", "1"):
            self._watch(plural, kind, query)
        else:
            self._list(plural, kind, query)

    def _group(self, group: str) -> None:
        versions = self.fake.served.get(group)
        if not versions:
            self._json(404, _status(404, "NotFound", "the server could not find the "
                                    "requested resource"))
            return
        self._json(200, {"kind": "APIGroup", "apiVersion": "v1", "name": group,
                         "versions": [{"groupVersion": f"{group}/{v}", "version": v}
                                      for v in versions],
                         "preferredVersion": {"groupVersion": f"{group}/{versions[0]}",
                                              "version": versions[0]}})

    def _list(self, plural: str, kind: str, query: dict) -> None:
        limit = int(query.get("limit", 0) or 0)
        token = query.get("continue")
        with self.fake.lock:
            if token:
                state = json.loads(base64.b64decode(token))
                start, version = state["start"], state["rv"]
                if version < self.fake.compacted:
                    self._json(410, _status(410, "Expired", "The provided continue "
                                            "parameter is too old"))
                    return
            else:
                start, version = 0, self.fake.version
            everything = self.fake.listed_items(plural)
            chunk = everything[start:start + limit] if limit else everything[start:]
            meta: dict = {"resourceVersion": str(version)}
            if limit and start + limit < len(everything):
                meta["continue"] = base64.b64encode(json.dumps(
                    {"start": start + limit, "rv": version}).encode()).decode()
                meta["remainingItemCount"] = len(everything) - start - limit
            group = COLLECTIONS[kind][0]
            head = {"kind": f"{kind}List", "apiVersion": self.fake._api_version(group),
                    "metadata": meta}
        # The bytes json.dumps gives for the whole list, with "items" last, from the items'
        # texts made once (tests/test_kube_server.py holds them equal).
        self._send(200, (json.dumps(head)[:-1] + ', "items": [' + ", ".join(chunk)
                         + "]}").encode())

    def _watch(self, plural: str, kind: str, query: dict) -> None:
        fake = self.fake
        since = int(query.get("resourceVersion") or 0)
        bookmarks = query.get("allowWatchBookmarks") == "true"
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 1800)
        drop_after = fake.drop_watch_after.pop(plural, None)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if plural in fake.gone_next_watch or since < fake.compacted:
            fake.gone_next_watch.discard(plural)
            self._event({"type": "ERROR", "object": _status(
                410, "Expired", f"too old resource version: {since} ({fake.compacted})")})
            self._end()
            return
        sent = 0
        group = COLLECTIONS[kind][0]
        last_bookmark = time.monotonic()
        while True:
            with fake.lock:
                events = [(rv, t, o) for rv, p, t, o in fake.history
                          if p == plural and rv > since]
                if not events and not fake.closing:
                    fake.lock.wait(min(fake.bookmark_seconds, 0.2))
                    events = [(rv, t, o) for rv, p, t, o in fake.history
                              if p == plural and rv > since]
                current, closing = fake.version, fake.closing
            for rv, event_type, obj in events:
                if drop_after is not None and sent >= drop_after:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)  # mid-stream, without the last chunk
                    return
                if not self._event({"type": event_type, "object": obj}):
                    return
                since, sent = rv, sent + 1
            if closing or time.monotonic() > deadline:
                self._end()
                return
            if bookmarks and time.monotonic() - last_bookmark >= fake.bookmark_seconds:
                last_bookmark = time.monotonic()
                if not self._event({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": fake._api_version(group),
                        "metadata": {"resourceVersion": str(current),
                                     "annotations": {"k8s.io/initial-events-end": "true"}}}}):
                    return
                since = max(since, current)

    def _event(self, event: dict) -> bool:
        data = json.dumps(event).encode() + b"\n"
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            return True
        except OSError:
            return False

    def _end(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass

    def _json(self, code: int, body: dict) -> None:
        self._send(code, json.dumps(body).encode())

    def _send(self, code: int, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def write_kubeconfig(path: Path, server: str, context: str = "prod-eu") -> Path:
    """A kubeconfig for ``server`` with a bearer token, context ``context``."""
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "fixture", "cluster": {"server": server}}],
        "users": [{"name": "planner", "user": {"token": "fixture-token"}}],
        "contexts": [{"name": context, "context": {"cluster": "fixture",
                                                   "user": "planner"}}]}))
    return path
