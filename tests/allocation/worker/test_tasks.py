"""allocation.worker.tasks: the queued tasks run in a worker process's own thread."""

from __future__ import annotations

import os
import threading
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks.signals import task_finished

from allocation import models
from allocation.tasks import timers_due
from allocation.worker.tasks import TaskRunner, run_pending
from tests.conftest import queued

TIMERS = "allocation.tasks.timers_due"


@pytest.mark.django_db
def test_run_pending_runs_the_tasks_due_and_leaves_deferred_ones(database_tasks):
    now = timezone.now()
    timers_due.enqueue(now.isoformat())
    later = now + timedelta(hours=1)
    timers_due.using(run_after=later).enqueue(later.isoformat())

    assert run_pending() == 1
    assert models.Cluster.objects.get().timers_due_at == now
    assert len(queued(TIMERS)) == 1  # the deferred one waits for its time
    assert run_pending() == 0


@pytest.mark.django_db
def test_a_failing_task_is_recorded_failed_and_the_others_still_run(database_tasks):
    timers_due.enqueue("not a time")
    timers_due.enqueue(timezone.now().isoformat())
    assert run_pending() == 2
    failed = queued(TIMERS, "FAILED")
    assert len(failed) == 1 and "ValueError" in failed[0].exception_class_path
    assert models.Cluster.objects.get().timers_due_at is not None


@pytest.mark.django_db(transaction=True)
def test_the_runner_thread_runs_a_task_enqueued_in_its_process(database_tasks):
    finished = threading.Event()

    def on_finished(sender, task_result, **kwargs):
        finished.set()

    task_finished.connect(on_finished)
    runner = TaskRunner(interval=3600)  # only the enqueue can wake it
    runner.start()
    try:
        due = timezone.now()
        timers_due.enqueue(due.isoformat())
        assert finished.wait(60)
    finally:
        runner.stop()
        task_finished.disconnect(on_finished)
    assert len(queued(TIMERS, "SUCCESSFUL")) == 1
    assert models.Cluster.objects.get().timers_due_at == due


# The Redis backend on an in-memory Redis always, and on the real one when REDIS_URL is set
# (CI's second pass, .ci/run).
REDIS_SERVERS = ["fakeredis", *(["REDIS_URL"] if os.environ.get("REDIS_URL") else [])]


@pytest.fixture(params=REDIS_SERVERS)
def redis_tasks(request, settings, monkeypatch):
    """Queue tasks in Redis through django-tasks-rq, on an empty ``default`` queue."""
    import django_rq
    import django_rq.connection_utils
    import django_rq.settings
    from rq.registry import ScheduledJobRegistry

    if request.param == "fakeredis":
        import fakeredis

        server = fakeredis.FakeServer()
        monkeypatch.setattr(django_rq.connection_utils, "get_redis_connection",
                            lambda config, use_strict_redis=False:
                            fakeredis.FakeRedis(server=server))
        url = "redis://fakeredis:6379/0"
    else:
        url = os.environ["REDIS_URL"]
    queues = {"default": {"URL": url}}
    monkeypatch.setattr(django_rq.settings, "QUEUES", queues, raising=False)
    settings.RQ_QUEUES = queues
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend"}}
    queue = django_rq.get_queue("default")
    queue.empty()  # what earlier tests queued on a real server
    scheduled = ScheduledJobRegistry(queue=queue)
    for job_id in scheduled.get_job_ids():
        scheduled.remove(job_id, delete_job=True)
    return queue


# RQ (django-rq) enqueues when the transaction commits: no test-wide transaction here.
@pytest.mark.django_db(transaction=True)
def test_the_redis_backend_runs_due_tasks_and_keeps_deferred_ones(redis_tasks):
    now = timezone.now()
    done = timers_due.enqueue(now.isoformat())
    failing = timers_due.enqueue("not a time")
    later = now + timedelta(hours=1)
    deferred = timers_due.using(run_after=later).enqueue(later.isoformat())
    assert redis_tasks.count == 2  # the deferred one waits in RQ's scheduled registry

    assert run_pending() == 2
    backend = timers_due.get_backend()
    assert backend.get_result(done.id).status == "SUCCESSFUL"
    assert backend.get_result(failing.id).status == "FAILED"
    assert backend.get_result(deferred.id).status == "READY"
    assert models.Cluster.objects.get().timers_due_at == now
    assert run_pending() == 0
