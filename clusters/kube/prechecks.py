"""Checking the pages of an import's lists in a second process while the lists go on.

The loader checks every document against the Kubernetes schema and the v1 rules before it
builds the engine objects; for a large cluster that check is about half of storing it
(docs/live-cluster.md, "Speed of an import"). A :class:`Prechecker` sends each page's bytes,
as they arrive, to one worker process, which parses them the same way
(``listing.items_of``) and loads them with the same loader and profile; the store then
skips the check of a document the worker loaded without a problem (``load_documents``'
``trusted``), and checks every other one itself, so every problem is still found, worded
and numbered by the store's own load. While the lists run the worker has a core to itself;
after them it works from the last page back while the store loads from the first, taking
back every page the worker has not had, so neither waits for the other but once.

Nothing else crosses the processes: the worker answers one flag per item. A worker that
fails or dies only leaves its pages to be checked by the store.
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.v1 import Profile
from clusters.kube.client import parse_json
from clusters.kube.listing import PAGE_SIZE, items_of
from clusters.kube.resources import Resource

__all__ = ["Prechecker"]

_PAGE_FILE = "page"
"""The source name of a page's documents in the worker (its problems are not reported)."""

_profile: Profile | None = None
"""The worker process's profile, set once when it starts."""


@dataclass
class _Page:
    resource: Resource
    body: bytes | None
    """The page as sent, until it goes to the worker."""
    items: list[dict]
    """The store's own items of the page (kept: their ``id`` names them while checking)."""
    future: Future | None = None
    """The worker's verdicts, once the page went to it."""


class Prechecker:
    """Checks list pages in a worker process (a context manager: the worker ends with it).

    The worker has two pages at a time, the newest ones waiting: while the lists run it keeps
    up with them, and after them it works from the last page back while the store's load
    goes from the first page on, so they meet once, near the middle, and neither checks a
    page the other has checked. ``start_after`` items must have been read before the worker
    starts (its start costs more than checking a small cluster); earlier pages are left to
    the store.
    """

    def __init__(self, profile: Profile, start_after: int = PAGE_SIZE) -> None:
        self.profile, self.start_after = profile, start_after
        self._seen = 0
        self._executor: ProcessPoolExecutor | None = None
        self._pages: list[_Page] = []
        self._waiting: list[int] = []  # pages not sent yet, the newest last
        self._sent: list[int] = []  # the pages the worker has (at most _IN_FLIGHT)
        self._where: dict[int, tuple[int, int]] = {}  # id(item) -> (page, index)
        self._verdicts: dict[int, list[bool] | None] = {}
        self._failed = False  # the worker died: the store checks everything left

    def __enter__(self) -> Prechecker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        # Let go of the pages' items with the worker: an import drops every item it read
        # before the collector resumes (clusters/mirror.py).
        self._pages, self._where, self._verdicts, self._waiting, self._sent = [], {}, {}, [], []

    def page(self, resource: Resource, body: bytes, items: list[dict]) -> None:
        """A page read (a ``listing.PageHook``): queue it for the worker."""
        self._seen += len(items)
        if self._seen <= self.start_after or not items or self._failed:
            return
        if self._executor is None:
            self._executor = _start(self.profile)
        number = len(self._pages)
        self._pages.append(_Page(resource, body, items))
        self._waiting.append(number)
        for index, item in enumerate(items):
            self._where[id(item)] = (number, index)
        self._feed()

    def valid(self, item: dict) -> bool:
        """Whether the worker loaded ``item`` (one of the items of a page given to
        :meth:`page`) without a problem. A page the worker has is waited for; one it has
        not had is taken back (False for all its items: the caller checks them itself)."""
        self._feed()
        where = self._where.get(id(item))
        if where is None:
            return False
        number, index = where
        if number not in self._verdicts:
            self._verdicts[number] = self._take(number)
        verdicts = self._verdicts[number]
        return verdicts is not None and verdicts[index]

    def close(self) -> None:
        """End the worker; pages not checked are left to the store."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _feed(self) -> None:
        """Keep the worker at ``_IN_FLIGHT`` pages, the newest waiting ones (asked on every
        page read and every verdict)."""
        self._sent = [n for n in self._sent if not self._pages[n].future.done()]
        while self._waiting and self._executor is not None and len(self._sent) < _IN_FLIGHT:
            number = self._waiting.pop()
            page = self._pages[number]
            try:
                page.future = self._executor.submit(_check, page.resource, page.body)
            except Exception:  # noqa: BLE001 - the worker died: the store checks the rest
                self._waiting.append(number)
                self._failed = True
                self.close()
                return
            page.body = None
            self._sent.append(number)

    def _take(self, number: int) -> list[bool] | None:
        if number in self._waiting:  # not begun: the store checks it
            self._waiting.remove(number)
            return None
        return _outcome(self._pages[number].future)


_IN_FLIGHT = 2
"""Pages the worker has at once: one it checks and the next, so it never waits to be fed;
the store waits for two pages at the most where the two meet."""

_WAIT_SECONDS = 60.0
"""How long the store waits for the page the worker has (one page takes well under a
second) before it checks the page itself."""


def _outcome(future: Future) -> list[bool] | None:
    try:
        return future.result(timeout=_WAIT_SECONDS)
    except Exception:  # noqa: BLE001 - a failed, dead or stuck worker: the store checks it
        return None


def _start(profile: Profile) -> ProcessPoolExecutor:
    # fork on Linux: the worker has the engine imported already and starts at once; it runs
    # only the loader (no database, no lock another thread may hold). Elsewhere: spawn.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context(method),
        initializer=_set_profile,
        initargs=(profile,),
    )


def _set_profile(profile: Profile) -> None:
    global _profile
    _profile = profile


def _check(resource: Resource, body: bytes) -> list[bool]:
    """In the worker: for each item of the page, whether the loader takes it (the same
    parse as the store's; a problem that names no item fails the whole page)."""
    items = items_of(parse_json(body, resource.path), resource)
    try:
        load_documents([(_PAGE_FILE, item) for item in items], profile=_profile)
    except InvalidManifests as error:
        blamed = set()
        for problem in error.problems:
            if problem.file != _PAGE_FILE or not isinstance(problem.doc, int):
                return [False] * len(items)
            blamed.add(problem.doc)
        return [number not in blamed for number in range(1, len(items) + 1)]
    return [True] * len(items)
