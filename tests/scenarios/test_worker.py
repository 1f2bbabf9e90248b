from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from allocation.services.manifests import import_texts
from scenarios import services
from scenarios.models import Scenario
from scenarios.worker import refresh_stale
from tests.factories import device, named_slice, node, to_yaml
from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


def test_scenarios_follow_the_baseline_in_the_background():
    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    scenario = services.create(alice, "follow")
    scenario = services.add_change(alice, scenario, {"op": "remove-node", "node": "worker-1"})
    assert refresh_stale() == 0  # up to date
    assert scenario.outcome["pending"] == 2

    import_texts([("more.yaml", to_yaml([node("worker-3"), named_slice(
        "worker-3", [device("gpu-0", memory=("quantity", "32Gi"))])]))])
    assert refresh_stale() == 1
    scenario = Scenario.objects.get(pk=scenario.pk)
    assert scenario.outcome["pending"] == 1  # p2 fits on the new node
    assert scenario.evaluation_error == ""


def test_a_change_that_no_longer_applies_is_reported_not_lost():
    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    scenario = services.create(alice, "fragile")
    scenario = services.add_change(alice, scenario, {"op": "remove-node", "node": "worker-1"})
    import_texts([("smaller.yaml", to_yaml([node("worker-2")]))], replace=True)
    assert refresh_stale() == 1
    scenario = Scenario.objects.get(pk=scenario.pk)
    assert "node 'worker-1' not found" in scenario.evaluation_error
    assert scenario.changes == [{"op": "remove-node", "node": "worker-1"}]


def test_an_evaluation_holds_a_transaction_only_where_it_locks_one_row(monkeypatch):
    """On SQLite a transaction would hold the whole database's write lock while evaluating
    (every transaction begins IMMEDIATE): writes would wait for every re-evaluation."""
    from django.db import connection

    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    services.create(alice, "stale")  # never evaluated
    depth = len(connection.atomic_blocks)
    seen = []
    monkeypatch.setattr(services, "refresh",
                        lambda scenario: seen.append(len(connection.atomic_blocks) - depth))

    assert refresh_stale(limit=1) == 1

    row_locks = connection.features.has_select_for_update_skip_locked
    assert seen == [2 if row_locks else 0]  # the claim's transaction and a savepoint


# No test-wide transaction: the worker runs in autocommit, where only PostgreSQL's claim
# transaction (with a savepoint per scenario) can be broken by a failed query.
@pytest.mark.django_db(transaction=True)
def test_a_scenario_whose_refresh_breaks_the_transaction_does_not_stop_the_others(
        monkeypatch):
    from django.db import DatabaseError, transaction

    store()
    alice = get_user_model().objects.create_user("alice", password="pw")
    broken = services.create(alice, "broken")
    fine = services.create(alice, "fine")
    import_texts([("more.yaml", to_yaml([node("worker-3")]))])
    real = services.refresh

    def refresh(scenario):
        if scenario.pk == broken.pk:  # a failed query: the transaction must roll back
            with transaction.mark_for_rollback_on_error():
                raise DatabaseError("injected")
        return real(scenario)

    monkeypatch.setattr(services, "refresh", refresh)
    assert refresh_stale() == 2
    broken, fine = Scenario.objects.get(pk=broken.pk), Scenario.objects.get(pk=fine.pk)
    assert broken.evaluation_error.startswith("internal error")
    assert fine.evaluation_error == "" and fine.evaluated_revision == broken.evaluated_revision
