"""allocation.services.task_results: finished results of the database queue are pruned."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from allocation.services import task_results
from allocation.tasks import timers_due
from allocation.worker.tasks import TaskRunner, run_pending
from tests.conftest import queued

pytestmark = pytest.mark.django_db

TIMERS = "allocation.tasks.timers_due"


def test_results_finished_longer_ago_than_a_day_are_pruned(database_tasks):
    timers_due.enqueue(timezone.now().isoformat())
    timers_due.enqueue("not a time")
    assert run_pending() == 2
    waiting = timers_due.using(run_after=timezone.now() + timedelta(days=3)).enqueue(
        timezone.now().isoformat())
    assert task_results.prune() == 0  # just finished

    later = timezone.now() + task_results.KEEP + timedelta(minutes=1)
    assert task_results.prune(now=later) == 2  # the successful and the failed one
    assert [str(t.id) for t in queued(TIMERS)] == [str(waiting.id)]  # never a queued one


def test_the_runner_prunes_at_most_every_so_often(database_tasks, monkeypatch):
    calls = []
    monkeypatch.setattr(task_results, "prune", lambda: calls.append(1) or 0)
    runner = TaskRunner()
    assert runner.prune() == 0
    assert runner.prune() is None  # not again so soon
    runner._pruned_at -= TaskRunner.PRUNE_EVERY
    assert runner.prune() == 0
    assert len(calls) == 2
