"""tests/kube_server.py: a list page is the exact bytes of the list document, served from
item texts made once per resourceVersion."""

from __future__ import annotations

import base64
import json
import urllib.request

from tests.clusters.objects import pod, small_cluster
from tests.kube_server import FakeApiServer


def _expected(fake: FakeApiServer, plural: str, kind: str, start: int, limit: int) -> bytes:
    """The page as the server built it before: json.dumps of the whole list document."""
    everything = sorted(fake.objects[plural].items())
    items = [
        {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        for _key, obj in everything[start : start + limit]
    ]
    meta: dict = {"resourceVersion": str(fake.version)}
    if start + limit < len(everything):
        meta["continue"] = base64.b64encode(
            json.dumps({"start": start + limit, "rv": fake.version}).encode()
        ).decode()
        meta["remainingItemCount"] = len(everything) - start - limit
    return json.dumps(
        {"kind": f"{kind}List", "apiVersion": "v1", "metadata": meta, "items": items}
    ).encode()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read()


def test_list_pages_are_the_bytes_of_the_whole_document():
    with FakeApiServer() as fake:
        fake.put_all([*small_cluster(), *(pod(f"extra-{i}", node_name="node-a") for i in range(4))])
        pages = []
        token = ""
        while True:
            body = _get(f"{fake.url}/api/v1/pods?limit=2" + (f"&continue={token}" if token else ""))
            pages.append(body)
            token = json.loads(body)["metadata"].get("continue", "")
            if not token:
                break
        assert len(pages) == 3
        assert pages == [_expected(fake, "pods", "Pod", start, 2) for start in (0, 2, 4)]
        # a change is served at once: the texts are made again for the new version
        fake.put(pod("late", node_name="node-a"))
        assert _get(f"{fake.url}/api/v1/pods?limit=10") == _expected(fake, "pods", "Pod", 0, 10)
        assert json.loads(_get(f"{fake.url}/api/v1/podtemplates?limit=10"))["items"] == []
