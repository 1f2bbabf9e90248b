"""allocation.worker.loop: when the worker reconciles, the lease, the in-process thread."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from allocation import models
from allocation.apps import serving
from allocation.services import incremental
from allocation.services import lease as lease_rows
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
def test_expired_events_are_deleted_without_a_pass(monkeypatch, settings):
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    worker = Worker(FAST, holder="w1")
    result = worker.run_once()
    assert models.Event.objects.exists()
    assert worker.next_prune == result.next_prune is not None
    assert worker.run_once() is None  # nothing due yet
    settings.DRA_EVENT_TTL = 1e-6  # every Event has expired now
    worker.next_prune = timezone.now()

    def no_pass(*args, **kwargs):
        raise AssertionError("pruning Events needs no worker pass")

    monkeypatch.setattr(passes, "reconcile", no_pass)
    assert worker.run_once() is None
    assert not models.Event.objects.exists() and worker.next_prune is None
    assert models.Cluster.objects.get().revision == result.revision  # not a change


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
        # its process's scenarios fork what it settled (docs/scenarios.md, "The baseline")
        revision = models.Cluster.objects.get().revision
        pause = threading.Event()  # never set: ``done`` is, so its wait would not pause
        for _ in range(400):  # kept once the pass has also warmed it, after its commit
            fork = incremental.fork_shared(revision)
            if fork is not None:
                break
            pause.wait(0.05)
        assert fork.state.get("Pod", "default", "p1").node_name == "n1"
    finally:
        worker.stop()
    assert runtime.current() is None
    assert incremental.fork_shared(revision) is None  # withdrawn with its worker


def test_serving_detects_server_processes():
    assert serving(["manage.py", "runserver"], {"RUN_MAIN": "true"})
    assert not serving(["manage.py", "runserver"], {})  # the autoreloader's parent
    assert serving(["manage.py", "runserver", "--noreload"], {})
    assert serving(["/usr/bin/daphne", "console.asgi:application"], {})
    assert not serving(["manage.py", "test"], {})
    assert not serving(["pytest"], {})


class _Time:
    """Wall-clock and monotonic time that move only when a test moves them."""

    def __init__(self) -> None:
        self.start = timezone.now()
        self.offset = 0.0

    def now(self):
        return self.start + timedelta(seconds=self.offset)

    def monotonic(self) -> float:
        return self.offset


class _Spy:
    name = "spy"

    def __init__(self, act=None, rounds: int = 1) -> None:
        self.calls, self.act, self.rounds = 0, act, rounds

    def reconcile(self, state) -> bool:
        self.calls += 1
        if self.act is not None:
            self.act(self.calls)
        return self.calls < self.rounds  # "changed": keeps the simulation going


@pytest.fixture
def fake_time(monkeypatch):
    clock = _Time()
    monkeypatch.setattr(lease_rows.timezone, "now", clock.now)
    return clock


def _with_controllers(monkeypatch, *controllers) -> None:
    from allocation.engine import simulation

    monkeypatch.setattr(simulation, "CONTROLLER_FACTORIES",
                        [*(lambda s, c=c: c for c in controllers),
                         *simulation.CONTROLLER_FACTORIES])


@pytest.mark.django_db
def test_a_pass_longer_than_the_lease_keeps_it_and_no_other_worker_overlaps(monkeypatch,
                                                                            fake_time):
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    first = Worker(FAST, holder="w1")
    first.keeper = lease.Keeper("w1", timedelta(seconds=30), clock=fake_time.monotonic)
    second = Worker(FAST, holder="w2")
    others = []

    def slow(round_):  # 12 rounds of 10 s: the pass lasts four times the lease
        fake_time.offset += 10
        others.append(second.run_once())

    _with_controllers(monkeypatch, _Spy(slow, rounds=12))
    result = first.run_once()
    assert result.outcome == passes.SAVED
    assert fake_time.offset >= 120 and len(others) >= 12
    assert others == [None] * len(others)  # the second worker never got the lease
    assert models.Pod.objects.get().node_name == "n1"


@pytest.mark.django_db
def test_a_worker_that_lost_its_lease_stops_at_once_and_saves_nothing(monkeypatch, fake_time):
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    worker = Worker(FAST, holder="w1")
    worker.keeper = lease.Keeper("w1", timedelta(seconds=30), clock=fake_time.monotonic)

    def expire_and_lose(round_):  # w1 stalls past its lease and w2 takes it
        fake_time.offset += 31
        assert lease.acquire("w2", timedelta(seconds=30))

    after = _Spy()
    _with_controllers(monkeypatch, _Spy(expire_and_lose), after)
    result = worker.run_once()
    assert result.outcome == passes.LOST_LEASE
    assert after.calls == 0  # stopped at the next checkpoint
    assert models.Cluster.objects.get().revision == 1
    assert models.Pod.objects.get().node_name == ""
    assert worker.last_revision is None  # not done: it runs again once it holds the lease


@pytest.mark.django_db
def test_a_timer_a_task_reports_due_makes_the_lease_holder_pass_once():
    from allocation.services.cluster import timers_due

    import_texts([("a.yaml", f.to_yaml(_docs()))])
    worker, other = Worker(FAST, holder="w1"), Worker(FAST, holder="w2")
    assert worker.run_once().outcome == passes.SAVED
    assert worker.run_once() is None
    timers_due(timezone.now())  # the task ran, in whichever process
    assert other.run_once() is None  # w1 holds the lease
    assert worker.run_once().outcome == passes.UNCHANGED
    assert worker.run_once() is None  # once per report


def test_a_wake_debounces_only_after_a_recent_pass():
    worker = Worker(WorkerSettings(poll=1.0, debounce=0.2, lease_ttl=30))
    assert not worker.debounces(100.0)  # no pass yet: at once
    worker.last_pass_end = 100.0
    assert worker.debounces(100.1)  # writes during or just after a pass: a burst
    assert not worker.debounces(100.2)  # an idle worker: at once


@pytest.mark.django_db
def test_only_several_writes_since_the_last_pass_are_a_burst():
    import_texts([("a.yaml", f.to_yaml(_docs()))])
    worker = Worker(FAST, holder="w1")
    assert worker.burst()  # no pass yet: nothing known
    worker.run_once()
    assert not worker.burst()  # its own announcement: nothing waits
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    assert not worker.burst()  # one write (a client that waited for the last one)
    import_texts([("c.yaml", f.to_yaml([f.node("n3")]))])
    assert worker.burst()  # two: gathered into one pass
    worker.last_revision = None  # writes came during the pass
    assert worker.burst()


def test_gathering_a_burst_ends_though_wakes_keep_coming():
    worker = Worker(WorkerSettings(poll=1.0, debounce=0.05, lease_ttl=30))
    done = threading.Event()

    def writes():  # a wake every few milliseconds, until the gathering ended
        while not done.wait(0.005):
            worker.wake()

    thread = threading.Thread(target=writes, daemon=True)
    gathering = threading.Thread(target=worker._gather, daemon=True)
    thread.start()
    gathering.start()
    try:
        # returns: a fixed window, not one restarted by every wake (which would still be
        # gathering long after the window; the generous bound only keeps a regression from
        # hanging the suite)
        gathering.join(timeout=30)
        assert not gathering.is_alive()
    finally:
        done.set()
        thread.join()
        gathering.join()
