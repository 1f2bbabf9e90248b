"""allocation.services.incremental: the worker's kept state, caught up from the change log,
gives the same passes as building the whole cluster again."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from allocation import models
from allocation.engine.events import VirtualClock, format_time
from allocation.services import changes, read_model
from allocation.services import reconcile as passes
from allocation.services.events import plan_events
from allocation.services.manifests import import_texts
from allocation.services.store import build_state, row_identity, stored_rows
from allocation.services.writes import write
from tests import factories as f
from tests.random_writes import BASE, RandomWrites, seed_node

pytestmark = pytest.mark.django_db

START = datetime(2026, 1, 1, tzinfo=UTC)


def _read_model() -> dict:
    """The stored read-model rows, as ``read_model.rows_of`` gives them."""
    out = {}
    for model in models.READ_MODELS:
        keys = read_model._KEYS[model]
        fields = [f.name for f in model._meta.concrete_fields if f.name != "id"]
        out[model] = {tuple(v[k] for k in keys): v for v in model.objects.values(*fields)}
    return out


def _stored() -> dict:
    return {row_identity(r): r.document for r in stored_rows()}


def _events_now(now: datetime) -> set:
    stamp = format_time(now)
    return {(e["involvedObject"]["name"], e["reason"], e["message"])
            for e in (r.manifest for r in models.Event.objects.all())
            if e.get("lastTimestamp") == stamp}


@pytest.mark.parametrize("seed", range(16))
def test_kept_passes_write_what_full_passes_would(seed, monkeypatch):
    import_texts([("base.yaml", f.to_yaml(BASE))])
    full_passes = []
    real = passes._compute
    monkeypatch.setattr(passes, "_compute", lambda *a: full_passes.append(1) or real(*a))
    ops, kept, now = RandomWrites(random.Random(seed)), None, START
    for step in range(12):
        ops.step()
        now += timedelta(seconds=10)
        before = _stored()
        expected = real(stored_rows(), "first-fit", now, lambda: None)  # a full pass, unsaved
        result = passes.reconcile(now=now, kept=kept)
        assert result.outcome in (passes.SAVED, passes.UNCHANGED)
        after = _stored()
        wanted = dict(before)
        for row in expected.plan.delete:
            wanted.pop(row_identity(row))
        for _row, obj, document in expected.plan.update:
            wanted[passes.identity_of(obj)] = document
        for obj, document in expected.plan.create:
            wanted[passes.identity_of(obj)] = document
        assert after == wanted, f"step {step}"
        if result.outcome == passes.SAVED:
            assert _events_now(now) == {(e["involvedObject"]["name"], e["reason"],
                                         e["message"]) for e in expected.events.values()}
        else:  # nothing but repeats of stored Events: the full pass saves nothing either
            assert not expected.plan and not plan_events(expected.events).news
        assert result.kept is not None
        kept = result.kept
        assert _read_model() == read_model.rows_of(kept.state), f"step {step}"
    assert len(full_passes) == 1  # only the first pass built the whole cluster


def test_a_pass_catches_up_only_the_rows_written_since(monkeypatch):
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0"),
                                        f.claim("c1"), f.pod("p1", claims={"g": "c1"})]))])
    kept = passes.reconcile(now=START).kept
    import_texts([("b.yaml", f.to_yaml([f.claim("c2"), f.pod("p2", claims={"g": "c2"})]))])
    monkeypatch.setattr(passes, "stored_rows", lambda: pytest.fail("read every row"))
    result = passes.reconcile(now=START + timedelta(seconds=1), kept=kept)
    assert result.outcome == passes.SAVED
    assert kept.caught_up == 2  # the new claim and pod, not the first pass's own writes
    assert models.Pod.objects.get(name="p2").node_name == "n0"


def test_a_kept_state_behind_the_pruned_log_rebuilds(monkeypatch):
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0")]))])
    kept = passes.reconcile(now=START).kept
    import_texts([("b.yaml", f.to_yaml([f.claim("c2"), f.pod("p2", claims={"g": "c2"})]))])
    models.Cluster.objects.update(changes_from=models.Cluster.objects.get().revision + 1)
    models.Change.objects.all().delete()
    full = []
    real = passes._compute
    monkeypatch.setattr(passes, "_compute", lambda *a: full.append(1) or real(*a))
    result = passes.reconcile(now=START + timedelta(seconds=1), kept=kept)
    assert full == [1] and result.kept is not None
    assert models.Pod.objects.get(name="p2").node_name == "n0"


def test_writes_are_logged_under_their_revision_and_pruned_after_keep(monkeypatch):
    import_texts([("a.yaml", f.to_yaml([*seed_node("n0")]))])
    revision = models.Cluster.objects.get().revision
    assert changes.since(revision - 1, revision, 1) == {
        ("", "Node", "", "n0"), ("", "NodeResourceSlice", "", "n0-cards")}
    monkeypatch.setattr(changes, "KEEP", 2)
    monkeypatch.setattr(changes, "_PRUNE_EVERY", 1)
    for i in range(4):
        import_texts([(f"{i}.yaml", f.to_yaml([f.node(f"x{i}")]))])
    cluster = models.Cluster.objects.get()
    assert changes.since(revision - 1, cluster.revision, cluster.changes_from) is None
    assert changes.since(cluster.revision - 1, cluster.revision, cluster.changes_from) == {
        ("", "Node", "", "x3")}


def test_a_kept_state_is_dropped_when_a_write_lands_during_the_pass():
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0"),
                                        f.claim("c1"), f.pod("p1", claims={"g": "c1"})]))])

    def meanwhile():
        if not meanwhile.done:
            meanwhile.done = True
            import_texts([("b.yaml", f.to_yaml([f.node("late")]))])
    meanwhile.done = False
    result = passes.reconcile(now=START, checkpoint=meanwhile)
    assert not result.complete and result.kept is None


def test_the_state_after_a_catch_up_is_the_state_a_rebuild_builds():
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *seed_node("n0"),
                                        *seed_node("n1"), f.claim("c1"),
                                        f.pod("p1", claims={"g": "c1"})]))])
    kept = passes.reconcile(now=START).kept
    doc = models.Pod.objects.get(name="p1").manifest
    doc["status"]["phase"] = "Succeeded"
    import_texts([("b.yaml", f.to_yaml([doc, *seed_node("n2")]))])
    write([], deletes=[("", "Node", "", "n1")])
    kept.catch_up(models.Cluster.objects.get(), START)
    rebuilt, _left = _rebuild()
    assert [o.key for o in kept.state.all_objects()] == [o.key for o in rebuilt.all_objects()]
    assert [o.to_manifest() for o in kept.state.all_objects()] == [
        o.to_manifest() for o in rebuilt.all_objects()]
    assert kept.state.node_order == rebuilt.node_order
    assert kept.state.usage == rebuilt.usage
    assert {k: i.usage() for k, i in kept.state.inventory_index.items()} == {
        k: i.usage() for k, i in rebuilt.inventory_index.items()}


def _rebuild():
    return build_state(stored_rows(), [], VirtualClock(START))
