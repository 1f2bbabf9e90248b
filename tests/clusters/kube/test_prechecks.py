"""clusters/kube/prechecks.py: pages checked in a second process; only what the loader takes
without a problem is trusted, everything else is left to the store."""

from __future__ import annotations

import json
import multiprocessing

from allocation.engine.v1 import make_profile
from clusters.kube.listing import items_of
from clusters.kube.prechecks import Prechecker
from clusters.kube.resources import by_kind
from tests.clusters.objects import pod


def _page(*documents: dict) -> tuple[bytes, list[dict]]:
    body = json.dumps(
        {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "7"},
            "items": [
                {k: v for k, v in d.items() if k not in ("apiVersion", "kind")} for d in documents
            ],
        }
    ).encode()
    return body, items_of(json.loads(body), by_kind("Pod"))


def _bad(name: str) -> dict:
    document = pod(name)
    document["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    return document


def test_valid_items_are_trusted_and_an_invalid_one_is_not():
    pods = by_kind("Pod")
    first, first_items = _page(pod("a"), _bad("b"), pod("c"))
    second, second_items = _page(pod("d"))
    with Prechecker(make_profile(), start_after=0) as checker:
        checker.page(pods, first, first_items)
        checker.page(pods, second, second_items)
        assert [checker.valid(i) for i in first_items] == [True, False, True]
        assert [checker.valid(i) for i in second_items] == [True]
        # only the very items given are known: an equal copy is not
        assert not checker.valid(json.loads(json.dumps(first_items[0])))
        assert not checker.valid(None)


def test_leaving_lets_go_of_the_pages():
    """An import drops every item it read before the collector resumes
    (clusters/mirror.py): the checker keeps none past its ``with`` block."""
    body, items = _page(pod("a"))
    with Prechecker(make_profile(), start_after=0) as checker:
        checker.page(by_kind("Pod"), body, items)
        assert checker.valid(items[0])
    assert not checker.valid(items[0])


def test_a_problem_between_items_names_the_item_the_loader_blames():
    twin = pod("twin")
    body, items = _page(twin, twin)  # the same object twice: the second is the duplicate
    with Prechecker(make_profile(), start_after=0) as checker:
        checker.page(by_kind("Pod"), body, items)
        assert [checker.valid(i) for i in items] == [True, False]


def test_the_first_objects_are_left_to_the_store():
    body, items = _page(pod("a"), pod("b"))
    later, later_items = _page(pod("c"))
    with Prechecker(make_profile(), start_after=2) as checker:
        checker.page(by_kind("Pod"), body, items)
        checker.page(by_kind("Pod"), later, later_items)
        assert not any(checker.valid(i) for i in items)
        assert checker.valid(later_items[0])


def test_closing_drops_the_pages_not_checked():
    pages = [_page(pod(f"p{i}")) for i in range(20)]
    checker = Prechecker(make_profile(), start_after=0)
    for body, items in pages:
        checker.page(by_kind("Pod"), body, items)
    checker.close()  # returns without checking every page; nothing is left running
    checker.close()


def test_the_worker_takes_the_newest_page_and_the_store_the_oldest():
    pages = [_page(pod(f"p{i}")) for i in range(6)]
    with Prechecker(make_profile(), start_after=0) as checker:
        for body, items in pages:
            checker.page(by_kind("Pod"), body, items)
        # the first page went to the worker at once (it was the newest then): waited for
        assert checker.valid(pages[0][1][0])
        # then the worker has the two newest pages, and the store takes back the oldest
        assert not checker.valid(pages[2][1][0])
        assert checker.valid(pages[5][1][0])


def test_a_dead_worker_leaves_its_pages_to_the_store():
    pages = [_page(pod(f"p{i}")) for i in range(4)]
    before = set(multiprocessing.active_children())
    with Prechecker(make_profile(), start_after=0) as checker:
        checker.page(by_kind("Pod"), *pages[0])
        assert checker.valid(pages[0][1][0])
        for child in set(multiprocessing.active_children()) - before:
            child.kill()
            child.join()
        for body, items in pages[1:]:
            checker.page(by_kind("Pod"), body, items)
        assert not any(checker.valid(items[0]) for _body, items in pages[1:])
