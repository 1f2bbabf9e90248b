from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from allocation import models
from allocation.services import cluster
from allocation.services.manifests import export_documents, import_texts
from scenarios import services
from scenarios.models import Scenario
from tests.factories import node, pod, to_yaml
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


def test_promote_is_staff_only_and_an_unrelated_baseline_change_is_kept(alice, staff):
    store()
    scenario = services.create(staff, "drain")
    scenario = services.add_change(staff, scenario, {"op": "remove-node", "node": "worker-2"})
    with pytest.raises(PermissionDenied):
        services.promote(alice, scenario)
    import_texts([("more.yaml", to_yaml([node("worker-3")]))])  # after the fork, unrelated
    scenario = services.promote(staff, scenario)
    assert scenario.changes == [] and scenario.promoted_at is not None
    from allocation.services.manifests import export_documents
    from scenarios.evaluation import baseline
    assert baseline().outcome.nodes == ["worker-1", "worker-3"]
    assert any(d["kind"] == "Event" for d in export_documents())  # history kept


def test_promote_is_refused_when_an_object_it_changes_moved_in_the_baseline(staff):
    store()
    scenario = services.create(staff, "drain")
    scenario = services.add_change(staff, scenario, {"op": "remove-node", "node": "worker-2"})
    import_texts([("more.yaml", to_yaml([node("worker-3")]))])
    moved = node("worker-2")
    moved["metadata"]["labels"] = {"zone": "b"}
    import_texts([("moved.yaml", to_yaml([moved]))])
    before = (cluster.revision(), export_documents())

    with pytest.raises(services.Conflict) as caught:
        services.promote(staff, scenario)

    assert caught.value.changed[0] == {"kind": "Node", "object": "worker-2", "touched": True}
    assert {"kind": "Node", "object": "worker-3", "touched": False} in caught.value.changed
    assert (cluster.revision(), export_documents()) == before  # nothing written
    scenario = services.rebase(staff, scenario)
    scenario = services.promote(staff, scenario)
    assert [d["metadata"]["name"] for d in export_documents() if d["kind"] == "Node"] == [
        "worker-1", "worker-3"]


def test_promote_writes_only_what_the_scenario_changed(staff, monkeypatch):
    """A pod created after the fork survives; untouched rows are not rewritten."""
    from allocation.services import writes

    store()
    scenario = services.create(staff, "remove p0")
    scenario = services.add_change(staff, scenario, {"op": "remove-object", "kind": "Pod",
                                                     "name": "p0"})
    import_texts([("late.yaml", to_yaml([pod("late")]))])  # acknowledged after the fork
    untouched = {r.name: r.updated_at for r in models.Node.objects.all()}
    results = []
    real_write = writes.write
    monkeypatch.setattr(services, "write",
                        lambda *a, **k: results.append(real_write(*a, **k)) or results[-1])

    services.promote(staff, scenario)

    pods = {d["metadata"]["name"] for d in export_documents() if d["kind"] == "Pod"}
    assert pods == {"p1", "p2", "late"}
    assert [r[1:] for r in results[0].deleted] == [("Pod", "default", "p0")]
    assert results[0].created == [] and results[0].updated == []
    assert {r.name: r.updated_at for r in models.Node.objects.all()} == untouched


def test_promote_works_on_a_cluster_larger_than_one_manifest_may_be(staff):
    """More than 4 MiB of stored documents (the reader's limit on one document)."""
    from allocation.engine.manifests.reader import MAX_DOCUMENT_BYTES

    pods = []
    for i in range(1100):
        doc = pod(f"p{i}")
        doc["metadata"]["annotations"] = {"example.com/padding": "x" * 4000}
        pods.append(doc)
    texts = [(f"part{n}.yaml", to_yaml(pods[n:n + 200])) for n in range(0, len(pods), 200)]
    import_texts([("nodes.yaml", to_yaml([node("worker-1")])), *texts])
    assert sum(len(r.document) for r in models.Pod.objects.all()) > MAX_DOCUMENT_BYTES
    # Stored as the services would after an evaluation (which is not under test here).
    scenario = Scenario.objects.create(
        name="big", owner=staff, base_revision=cluster.revision(), forked_at=timezone.now(),
        changes=[{"op": "remove-object", "kind": "Pod", "name": "p7"}], position=1)

    services.promote(staff, scenario)

    assert models.Pod.objects.count() == 1099
    assert not models.Pod.objects.filter(name="p7").exists()


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


def test_promoting_a_stale_copy_applies_nothing_twice(staff):
    store()
    scenario = services.create(staff, "remove p0")
    scenario = services.add_change(staff, scenario, {"op": "remove-object", "kind": "Pod",
                                                     "name": "p0"})
    stale = Scenario.objects.get(pk=scenario.pk)  # a second request's copy
    services.promote(staff, scenario)
    revision = cluster.revision()

    promoted = services.promote(staff, stale)

    assert promoted.changes == [] and cluster.revision() == revision


REMOVE_P1 = {"op": "remove-object", "kind": "Pod", "name": "p1"}


def test_a_refresh_that_read_the_scenario_before_a_change_does_not_undo_it(alice):
    store()
    scenario = services.create(alice, "race")
    stale = Scenario.objects.get(pk=scenario.pk)  # what a worker read before the edit
    services.add_change(alice, scenario, REMOVE_P1)
    services.refresh(stale)
    stored = Scenario.objects.get(pk=scenario.pk)
    assert stored.changes == [REMOVE_P1] and stored.position == 1


def test_an_edit_on_a_stale_copy_is_refused_not_lost(alice):
    store()
    scenario = services.create(alice, "two tabs")
    other_tab = Scenario.objects.get(pk=scenario.pk)
    services.add_change(alice, scenario, REMOVE_P1)
    with pytest.raises(services.Refused, match="changed meanwhile"):
        services.add_change(alice, other_tab, {"op": "remove-object", "kind": "Pod",
                                               "name": "p2"})
    assert Scenario.objects.get(pk=scenario.pk).changes == [REMOVE_P1]


def test_a_scenario_on_a_v1_baseline_adds_a_pod_naming_a_v1_claim_and_promotes_it(alice,
                                                                                  staff):
    from tests import v1_cluster as v1

    store([*v1.cluster(), node("n2"), *v1.resource_slices("n2")])
    scenario = services.create(alice, "one more")
    for doc in (v1.claim("c2"), pod("p2", claims={"gpu": "c2"})):
        scenario = services.add_change(alice, scenario, {"op": "add-object", "manifest": doc})
    diff = scenario.outcome["diff"]
    assert diff["newly_scheduled"] == [{"pod": "default/p2", "node": "n1"}]
    assert diff["moved_claims"] == [{"claim": "default/c2", "before": [],
                                     "after": [f"n1/{v1.DRIVER}/n1/gpu-0-b"]}]
    pinned = services.add_change(alice, scenario, {"op": "pin-pod", "pod": "default/p2",
                                                   "node": "n2"})
    assert pinned.outcome["diff"]["newly_scheduled"] == [{"pod": "default/p2", "node": "n2"}]
    staff_copy = services.create(staff, "promote")
    for doc in (v1.claim("c2"), pod("p2", claims={"gpu": "c2"})):
        staff_copy = services.add_change(staff, staff_copy, {"op": "add-object",
                                                             "manifest": doc})
    services.promote(staff, staff_copy)
    assert models.ResourceClaimV1.objects.filter(name="c2").exists()
    assert models.Pod.objects.filter(name="p2").exists()
