from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied

from allocation.services import cluster
from allocation.services.manifests import import_texts
from scenarios import services
from tests.factories import node, to_yaml
from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password="pw")


@pytest.fixture
def bob():
    return get_user_model().objects.create_user("bob", password="pw")


@pytest.fixture
def staff():
    return get_user_model().objects.create_user("root", password="pw", is_staff=True)


def test_fork_stores_no_copy_and_a_pin_schedules_the_pod_there(alice):
    store()
    scenario = services.create(alice, "move p2")
    assert scenario.changes == [] and scenario.base_revision == cluster.revision()
    scenario = services.add_change(alice, scenario, {"op": "remove-object", "kind": "Pod",
                                                     "name": "p1"})
    scenario = services.add_change(alice, scenario, {"op": "pin-pod", "pod": "default/p2",
                                                     "node": "worker-2"})
    diff = scenario.outcome["diff"]
    assert diff["newly_scheduled"] == [{"pod": "default/p2", "node": "worker-2"}]
    assert scenario.position == 2


def test_an_impossible_pin_is_refused_with_the_engines_reason_and_nothing_saved(alice):
    store()
    scenario = services.create(alice, "impossible")
    with pytest.raises(services.Refused, match="cannot run on worker-1: cannot allocate all "
                       "claims.*allocated to claim default/p0-gpu"):
        services.add_change(alice, scenario, {"op": "pin-pod", "pod": "default/p2",
                                              "node": "worker-1"})
    scenario.refresh_from_db()
    assert scenario.changes == [] and scenario.position == 0


def test_undo_redo_and_a_new_change_drops_the_undone_tail(alice):
    store()
    scenario = services.create(alice, "history")
    scenario = services.add_change(alice, scenario, {"op": "remove-node", "node": "worker-1"})
    assert scenario.outcome["diff"]["nodes_removed"] == ["worker-1"]
    scenario = services.undo(alice, scenario)
    assert scenario.position == 0 and scenario.outcome["diff"]["nodes_removed"] == []
    scenario = services.redo(alice, scenario)
    assert scenario.outcome["diff"]["nodes_removed"] == ["worker-1"]
    scenario = services.undo(alice, scenario)
    scenario = services.add_change(alice, scenario, {"op": "set-strategy",
                                                     "strategy": "best-fit"})
    assert [c["op"] for c in scenario.changes] == ["set-strategy"]
    with pytest.raises(services.Refused, match="nothing to redo"):
        services.redo(alice, scenario)


def test_two_users_two_scenarios_never_see_each_others_changes(alice, bob):
    store()
    mine = services.create(alice, "alice's")
    theirs = services.create(bob, "bob's")
    mine = services.add_change(alice, mine, {"op": "remove-node", "node": "worker-1"})
    theirs = services.add_change(bob, theirs, {"op": "remove-node", "node": "worker-2"})
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.outcome["diff"]["nodes_removed"] == ["worker-1"]
    assert theirs.outcome["diff"]["nodes_removed"] == ["worker-2"]
    with pytest.raises(PermissionDenied):
        services.add_change(bob, mine, {"op": "set-strategy", "strategy": "best-fit"})
    assert not services.can_view(bob, mine)
    services.set_shared(alice, mine, True)
    mine.refresh_from_db()
    assert services.can_view(bob, mine, mine.share_token)
    assert not services.can_view(bob, mine, "guess")
    assert not services.can_edit(bob, mine)


def test_promote_is_staff_only_and_refused_when_the_baseline_moved(alice, staff):
    store()
    scenario = services.create(staff, "drain")
    scenario = services.add_change(staff, scenario, {"op": "remove-node", "node": "worker-2"})
    with pytest.raises(PermissionDenied):
        services.promote(alice, scenario)
    import_texts([("more.yaml", to_yaml([node("worker-3")]))])
    with pytest.raises(services.Conflict) as caught:
        services.promote(staff, scenario)
    assert {"kind": "Node", "object": "worker-3", "touched": False} in caught.value.changed
    scenario = services.rebase(staff, scenario)
    scenario = services.promote(staff, scenario)
    assert scenario.changes == [] and scenario.promoted_at is not None
    from allocation.services.manifests import export_documents
    from scenarios.evaluation import baseline
    assert baseline().outcome.nodes == ["worker-1", "worker-3"]
    assert any(d["kind"] == "Event" for d in export_documents())  # history kept


def test_export_cluster_and_changes(alice):
    store()
    scenario = services.create(alice, "export")
    scenario = services.add_change(alice, scenario, {"op": "remove-node", "node": "worker-1"})
    changes = services.export(scenario, "changes")
    assert "kind: Scenario" in changes and "op: remove-node" in changes
    text = services.export(scenario, "cluster")
    assert "name: worker-2" in text and "name: worker-1\n" not in text


def test_bad_changes_are_refused_naming_the_field(alice):
    store()
    scenario = services.create(alice, "bad")
    with pytest.raises(services.Refused, match=r"changes\[0\]\.count: must be an integer"):
        services.add_change(alice, scenario, {"op": "add-nodes", "group": "g", "count": "x"})
    with pytest.raises(services.Refused, match="invalid CEL selector"):
        services.add_change(alice, scenario, {
            "op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
            "path": "requests[0].namedResourcesWithAttributes.required[0].selector",
            "expression": "attributes["})
    with pytest.raises(services.Refused, match="name"):
        services.create(alice, "  ")
