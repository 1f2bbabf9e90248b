"""clusters/kube/watching.py: resume, bookmarks, 410 Gone, dropped connections, back-off."""

from __future__ import annotations

import threading
import time

import pytest

from clusters.kube.client import SourceError
from clusters.kube.listing import list_all
from clusters.kube.resources import by_kind
from clusters.kube.watching import Backoff, Watcher
from tests.clusters.objects import pod


class _Run:
    """A Watcher of pods on a thread, collecting what it delivers."""

    def __init__(self, connection, fake, **kwargs) -> None:
        resource = by_kind("Pod")
        self.snapshot = list_all(connection, resource)
        self.changes, self.errors = [], []
        self.stop = threading.Event()
        self.watcher = Watcher(connection, resource, self.snapshot.resource_version,
                               self.changes.append, self.stop,
                               failed=lambda r, m: self.errors.append(m),
                               backoff=Backoff(0.05, 0.2), watch_seconds=2, **kwargs)
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)
        self.thread.start()

    def wait_for(self, condition, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out; got {self.changes}"
            time.sleep(0.02)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def run(connection, fake):
    runs = []

    def start(**kwargs):
        runs.append(_Run(connection, fake, **kwargs))
        return runs[-1]

    yield start
    for r in runs:
        r.close()


def _names(changes):
    return [(c.type, c.object["metadata"]["name"]) for c in changes if c.object]


def test_follows_creates_updates_deletes(fake, run):
    watch = run()
    fake.put(pod("new"))
    fake.put(pod("new", cpu="2"))
    fake.delete("Pod", "new", "default")
    watch.wait_for(lambda: len(watch.changes) == 3)
    assert _names(watch.changes) == [("ADDED", "new"), ("MODIFIED", "new"), ("DELETED", "new")]
    assert watch.changes[0].object["kind"] == "Pod"
    assert watch.watcher.resource_version == str(fake.version)
    query = next(r.query for r in fake.requests if r.query.get("watch") == "true")
    assert query["allowWatchBookmarks"] == "true"
    assert query["resourceVersion"] == watch.snapshot.resource_version


def test_bookmarks_move_the_version_without_a_change(fake, run):
    watch = run()
    fake.put(pod("elsewhere"))  # a pod event the watch sees
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    watch.wait_for(lambda: watch.watcher.resource_version == str(fake.version))
    assert _names(watch.changes) == [("ADDED", "elsewhere")]


def test_a_dropped_watch_resumes_without_loss_or_repeat(fake, run):
    fake.drop_watch_after["pods"] = 2
    watch = run()
    for i in range(5):
        fake.put(pod(f"p{i}"))
    watch.wait_for(lambda: len(watch.changes) >= 5)
    time.sleep(0.3)  # a repeat would arrive now
    assert _names(watch.changes) == [("ADDED", f"p{i}") for i in range(5)]
    assert watch.errors and "connection lost" in watch.errors[0]
    assert watch.watcher.requests >= 2


def test_410_gone_lists_again(fake, run):
    watch = run()
    fake.put(pod("before"))
    watch.wait_for(lambda: len(watch.changes) == 1)
    fake.gone_next_watch.add("pods")
    fake.compact()
    fake.put(pod("after"))
    # The running watch ends at its timeout; the next one is answered 410 and relists.
    watch.wait_for(lambda: any(c.type == "RELIST" for c in watch.changes))
    relist = next(c for c in watch.changes if c.type == "RELIST")
    names = {i["metadata"]["name"] for i in relist.snapshot.items}
    assert {"before", "after", "runner", "waiting"} <= names


def test_errors_back_off_and_recover(fake, run):
    w = run()
    fake.forbidden.add("/api/v1/pods")  # the next watch request is refused
    w.wait_for(lambda: len(w.errors) >= 3)
    assert all("watch pods: forbidden" in e for e in w.errors)
    assert w.watcher.backoff.current == 0.2  # 0.05, 0.1, 0.2: doubled up to the ceiling
    fake.forbidden.clear()
    fake.put(pod("later"))
    w.wait_for(lambda: ("ADDED", "later") in _names(w.changes))
    assert w.watcher.backoff.current == 0.05


def test_backoff_doubles_to_a_ceiling():
    backoff = Backoff(0.5, 4)
    assert [backoff.next() for _ in range(6)] == [0.5, 1, 2, 4, 4, 4]
    backoff.reset()
    assert backoff.next() == 0.5


@pytest.mark.parametrize("line", [
    b'{"type": "ADDED", "object": null}',
    b'{"type": "MODIFIED", "object": [1]}',
    b'{"type": "DELETED", "object": {"metadata": ["x"]}}',
    b'{"type": "BOOKMARK", "object": "x"}',
])
def test_an_event_without_an_object_is_a_source_error_not_a_dead_thread(line):
    # run() pauses and reconnects on a SourceError (said to ``failed``); any other
    # exception ended the kind's watch thread silently
    delivered = []
    watcher = Watcher(None, by_kind("Pod"), "1", delivered.append, threading.Event())
    with pytest.raises(SourceError, match=r"^watch pods: \w+ event whose object is not an "
                                          r"object with metadata: "):
        watcher._handle(line)
    assert delivered == [] and watcher.resource_version == "1"
    watcher._handle(b'{"type": "ADDED", "object": {"metadata": {"name": "p", '
                    b'"resourceVersion": "7"}}}')
    assert [c.object["metadata"]["name"] for c in delivered] == ["p"]
    assert watcher.resource_version == "7"
