"""scenarios.tasks: a baseline move queues the scenarios' refresh, run as a task."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from allocation.services import broadcast
from allocation.services.manifests import import_texts
from allocation.worker.tasks import run_pending
from scenarios import services
from scenarios.models import Scenario
from scenarios.tasks import enqueue_refresh
from tests.conftest import queued
from tests.factories import device, named_slice, node, to_yaml
from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db

REFRESH = "scenarios.tasks.refresh_scenarios"


def _more_capacity() -> None:
    import_texts([("more.yaml", to_yaml([node("worker-3"), named_slice(
        "worker-3", [device("gpu-0", memory=("quantity", "32Gi"))])]))])


def test_a_task_queued_after_a_baseline_move_refreshes_the_scenario(
        database_tasks, django_capture_on_commit_callbacks):
    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    scenario = services.create(alice, "follow")
    scenario = services.add_change(alice, scenario, {"op": "remove-node", "node": "worker-1"})
    assert scenario.outcome["pending"] == 2
    assert queued(REFRESH) == []

    with django_capture_on_commit_callbacks(execute=True):
        _more_capacity()
    assert len(queued(REFRESH)) == 1  # after the commit, not before
    assert Scenario.objects.get(pk=scenario.pk).outcome["pending"] == 2  # not yet

    assert run_pending() == 1
    assert Scenario.objects.get(pk=scenario.pk).outcome["pending"] == 1  # p2 on worker-3
    assert len(queued(REFRESH, "SUCCESSFUL")) == 1 and queued(REFRESH) == []


def test_a_rolled_back_write_queues_nothing(database_tasks, django_capture_on_commit_callbacks):
    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    services.create(alice, "idle")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        _more_capacity()
    assert callbacks and queued(REFRESH) == []  # the hook waits for the commit


def test_no_scenario_behind_the_baseline_queues_nothing(
        database_tasks, django_capture_on_commit_callbacks):
    store()
    with django_capture_on_commit_callbacks(execute=True):
        _more_capacity()  # no scenario at all
    assert queued(REFRESH) == []


def test_every_process_queues_the_refresh_after_its_commits():
    assert enqueue_refresh in broadcast._hooks
