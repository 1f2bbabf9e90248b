"""allocation.worker.loop: when the worker reconciles, the lease, the in-process thread."""

import threading
from datetime import timedelta

import pytest

from allocation import models
from allocation.apps import serving
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from allocation.worker import lease, runtime
from allocation.worker.loop import Worker, WorkerSettings
from tests import factories as f

FAST = WorkerSettings(poll=0.05, debounce=0.01, lease_ttl=30)


def _docs():
    return [f.node("n1"), f.named_slice("n1", [f.device("d0")]), f.resource_class(),
            f.claim("c1"), f.pod("p1", claims={"gpu": "c1"})]


@pytest.mark.django_db
def test_run_once_reconciles_only_when_the_revision_moved():
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    worker = Worker(FAST, holder="w1")
    assert worker.run_once().outcome == passes.SAVED
    assert worker.run_once() is None  # nothing new
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    assert worker.run_once().outcome in (passes.SAVED, passes.UNCHANGED)


@pytest.mark.django_db
def test_two_workers_never_reconcile_at_once():
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    first, second = Worker(FAST, holder="w1"), Worker(FAST, holder="w2")
    assert lease.acquire("w1", timedelta(seconds=30))
    assert second.run_once() is None  # w1 holds the lease
    assert models.Pod.objects.get().node_name == ""
    assert first.run_once().outcome == passes.SAVED


@pytest.mark.django_db(transaction=True)
def test_the_in_process_worker_reconciles_after_a_write():
    worker = Worker(FAST, holder="thread")
    worker.start()
    try:
        assert runtime.current() is worker
        done = threading.Event()
        import_texts([("a.yaml", f.to_yaml(_docs()))])  # wakes the worker after commit
        for _ in range(400):  # up to 20 s on a loaded machine; normally one poll
            if models.Cluster.objects.get().reconciled_revision >= 2:
                done.set()
                break
            done.wait(0.05)
        assert done.is_set()
        assert models.Pod.objects.get().node_name == "n1"
    finally:
        worker.stop()
    assert runtime.current() is None


def test_serving_detects_server_processes():
    assert serving(["manage.py", "runserver"], {"RUN_MAIN": "true"})
    assert not serving(["manage.py", "runserver"], {})  # the autoreloader's parent
    assert serving(["manage.py", "runserver", "--noreload"], {})
    assert serving(["/usr/bin/daphne", "console.asgi:application"], {})
    assert not serving(["manage.py", "test"], {})
    assert not serving(["pytest"], {})
