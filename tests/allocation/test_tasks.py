"""allocation.tasks: the controllers' timers (a ProvisioningRequest's re-check) as tasks."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from allocation import models
from allocation.services import cluster
from allocation.services.manifests import import_texts
from allocation.worker.loop import Worker, WorkerSettings
from allocation.worker.tasks import run_pending
from tests.conftest import queued

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"
TIMERS = "allocation.tasks.timers_due"
FAST = WorkerSettings(poll=0.05, debounce=0.01, lease_ttl=30)


def test_a_pass_queues_the_provisioning_request_re_check_for_its_time(database_tasks):
    import_texts([("demo.yaml", DEMO.read_text())])  # an atomic request that does not fit
    worker = Worker(FAST, holder="w1")
    result = worker.run_once()
    assert models.Event.objects.filter(reason="CapacityIsNotFound").exists()
    assert result.next_wakeup is not None  # retried after a minute
    [timer] = queued(TIMERS)
    assert timer.run_after == result.next_wakeup
    assert timer.args_kwargs["args"] == [result.next_wakeup.isoformat()]
    assert run_pending() == 0  # not due yet

    assert worker.run_once() is None  # nothing new, and no task said a timer is due
    timer.run_after = timezone.now()  # its time has come
    timer.save(update_fields=["run_after"])
    assert run_pending() == 1
    assert models.Cluster.objects.get().timers_due_at == result.next_wakeup
    assert worker.run_once() is not None  # the lease holder re-checks
    assert worker.run_once() is None  # once


def test_the_same_timer_is_queued_once(database_tasks):
    import_texts([("demo.yaml", DEMO.read_text())])
    worker = Worker(FAST, holder="w1")
    worker.run_once()
    cluster.timers_due(timezone.now())  # a pass that finds the same timer
    worker.run_once()
    assert len(queued(TIMERS)) == 1
