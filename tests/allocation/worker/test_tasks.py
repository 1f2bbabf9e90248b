"""allocation.worker.tasks: the queued tasks run in a worker process's own thread."""

from __future__ import annotations

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
