"""clusters/kube/listing.py: every object, in pages, with apiVersion and kind set."""

from __future__ import annotations

import gc
import json

from clusters.kube.listing import items_of, list_all
from clusters.kube.resources import by_kind
from tests.clusters.objects import pod


def test_pages_with_continue(fake, connection):
    for i in range(7):
        fake.put(pod(f"extra-{i}"))
    seen = []
    snapshot = list_all(connection, by_kind("Pod"), page_size=3,
                        progress=lambda r, n: seen.append(n))
    names = [i["metadata"]["name"] for i in snapshot.items]
    assert len(names) == 9 and len(set(names)) == 9
    assert seen == [3, 6, 9]
    assert all(i["apiVersion"] == "v1" and i["kind"] == "Pod" for i in snapshot.items)
    assert snapshot.resource_version == str(fake.version)
    pages = [r for r in fake.requests if r.path == "/api/v1/pods"]
    assert [r.query.get("limit") for r in pages] == ["3", "3", "3"]
    assert "continue" not in pages[0].query and all("continue" in r.query for r in pages[1:])


def test_an_expired_continue_token_starts_over(fake, connection):
    for i in range(4):
        fake.put(pod(f"extra-{i}"))
    calls = []

    def progress(resource, count):
        calls.append(count)
        if len(calls) == 1:
            fake.compact()  # the first page's token is now too old: 410 on the next

    snapshot = list_all(connection, by_kind("Pod"), page_size=4, progress=progress)
    assert len(snapshot.items) == 6
    assert calls[:2] == [4, 4]  # the list began again


def test_the_collector_is_paused_while_listing(fake, connection):
    # a large list makes millions of objects and no cycles (allocation/engine/gcpause.py)
    enabled = []
    assert gc.isenabled()
    list_all(connection, by_kind("Pod"), page_size=1,
             progress=lambda r, n: enabled.append(gc.isenabled()))
    assert enabled and not any(enabled)
    assert gc.isenabled()


def test_the_page_hook_hears_every_page_as_sent(fake, connection):
    for i in range(3):
        fake.put(pod(f"extra-{i}"))
    heard = []
    snapshot = list_all(connection, by_kind("Pod"), page_size=2,
                        page_hook=lambda r, body, items: heard.append((r, body, items)))
    assert [len(items) for _r, _b, items in heard] == [2, 2, 1]
    assert [i for _r, _b, items in heard for i in items] == snapshot.items
    for resource, body, items in heard:
        assert resource.kind == "Pod"
        # the bytes parse to the same items, once apiVersion and kind are set as the list's
        assert items_of(json.loads(body), resource) == items
