"""clusters/kube/prechecks.py: pages checked in a second process; only what the loader takes
without a problem is trusted, everything else is left to the store."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import Future

from allocation.engine.v1 import make_profile
from clusters.kube import prechecks
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


class _HeldWorker:
    """A worker that checks a page (in this process) only when the test lets it: which pages
    it is given, and which the store takes back, no longer depend on how fast it is."""

    def __init__(self) -> None:
        self.given: list[tuple[Future, tuple]] = []

    def submit(self, check, *args) -> Future:
        future: Future = Future()
        self.given.append((future, (check, args)))
        return future

    def finish(self, count: int | None = None) -> None:
        """Check the first ``count`` pages given and not checked yet (all: None)."""
        waiting = [(f, call) for f, call in self.given if not f.done()]
        for future, (check, args) in waiting[:count]:
            future.set_result(check(*args))

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def test_the_worker_takes_the_newest_page_and_the_store_the_oldest(monkeypatch):
    worker = _HeldWorker()
    monkeypatch.setattr(prechecks, "_start", lambda profile: worker)
    pages = [_page(pod(f"p{i}")) for i in range(6)]
    with Prechecker(make_profile(), start_after=0) as checker:
        for body, items in pages:
            checker.page(by_kind("Pod"), body, items)
        # the first two pages went to the worker at once (the newest then), the rest wait
        assert [names(args) for _f, (_check, args) in worker.given] == [["p0"], ["p1"]]
        worker.finish(1)
        assert checker.valid(pages[0][1][0])
        # a page done: the worker is given the newest waiting page, and the store takes
        # back the oldest it has not had
        assert names(worker.given[-1][1][1]) == ["p5"]
        assert not checker.valid(pages[2][1][0])
        worker.finish()
        assert checker.valid(pages[5][1][0])


def names(args: tuple) -> list[str]:
    """The pod names of a page given to the worker (``_check``'s arguments)."""
    resource, body = args
    return [item["metadata"]["name"] for item in items_of(json.loads(body), resource)]


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
