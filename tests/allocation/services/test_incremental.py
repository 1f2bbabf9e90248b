"""allocation.services.incremental: the worker's kept state, caught up from the change log,
gives the same passes as building the whole cluster again."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from allocation import models
from allocation.engine import made_claims
from allocation.engine.claims_v1 import V1ClaimController
from allocation.engine.events import VirtualClock, format_time
from allocation.engine.made_claims import made_entry
from allocation.engine.objects import ResourceClaimV1
from allocation.engine.scheduling import v1_prebind
from allocation.engine.scheduling.v1 import V1Scheduling
from allocation.engine.scheduling.v1_book import AllocatorSource
from allocation.services import changes, read_model
from allocation.services import reconcile as passes
from allocation.services.events import plan_events
from allocation.services.manifests import import_texts
from allocation.services.store import build_state, row_identity, stored_rows
from allocation.services.writes import write
from tests import factories as f
from tests.random_writes import BASE, RandomWrites, seed_node, v1_node

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


def _indexes_and_walks(kept) -> list[tuple]:
    """Each index the controllers keep between passes beside what a walk of every claim
    of the kept state gives (what each replaced)."""
    state = kept.state
    halves = [getattr(c, "v1", None) for c in kept.simulation.controllers]
    claims = next(h for h in halves if isinstance(h, V1ClaimController))
    v1 = next(h for h in halves if isinstance(h, V1Scheduling))
    made = {e: c for c in state.of_kind(ResourceClaimV1) if (e := made_entry(c)) is not None}
    due = [v1_prebind.deadline(c) for c in state.of_kind(ResourceClaimV1)
           if c.allocation is not None and c.reserved_for]
    pairs = [(claims.made.claims(state), made),
             (v1.next_wakeup(state), min((d for d in due if d is not None), default=None))]
    if v1.source.allocator is not None:
        v1.source.begin()
        v1.source.ready(state, v1.profile(state))
        pairs.append((v1.source.committed, {c.ref: c.allocation for c in
                                            state.of_kind(ResourceClaimV1)
                                            if c.allocation is not None}))
    return pairs


@pytest.mark.parametrize("seed", range(8))
def test_the_indexes_kept_between_passes_are_the_walks_after_random_writes(seed):
    """The v1 claims made from templates, the binding-condition deadlines and the v1 book,
    each kept from the keys the passes touched, against walks of every claim; the read
    model's rows are checked by ``test_kept_passes_write_what_full_passes_would``."""
    import_texts([("base.yaml", f.to_yaml(BASE))])
    ops, kept, now = RandomWrites(random.Random(seed)), None, START
    for step in range(12):
        ops.step()
        now += timedelta(seconds=10)
        kept = passes.reconcile(now=now, kept=kept).kept
        for index, walk in _indexes_and_walks(kept):
            assert index == walk, f"step {step}"


def test_after_a_pass_that_allocated_the_next_looks_at_none_of_its_claims(monkeypatch):
    """A pass that made and allocated claims brings the made-claims index up to date once
    saved (``Simulation.warm``), so the pass of the next write reads only what that write
    touched, not every claim the pass before allocated."""
    import_texts([("base.yaml", f.to_yaml(BASE))])
    nodes = [doc for i in range(10) for doc in v1_node(f"m{i + 1}")]
    pods = [f.pod(f"v{i}", templates={"g": "vtpl"}) for i in range(20)]
    import_texts([("pods.yaml", f.to_yaml([*nodes, *pods]))])
    first = passes.reconcile(now=START)  # makes and allocates 20 claims
    assert first.outcome == passes.SAVED and first.kept is not None
    import_texts([("more.yaml", f.to_yaml([f.pod("w", templates={"g": "vtpl"})]))])
    entries = []
    monkeypatch.setattr(made_claims, "made_entry",
                        lambda c, real=made_claims.made_entry: entries.append(1) or real(c))
    result = passes.reconcile(now=START + timedelta(seconds=1), kept=first.kept)
    assert result.outcome == passes.SAVED
    assert len(entries) < 5  # the new claim's entries, not the 20 allocated before
    assert models.Pod.objects.get(name="w").node_name


def test_a_pass_whose_warm_up_fails_is_saved_and_keeps_no_state(monkeypatch):
    """Warming the kept state runs after the save: if it fails, what the pass saved stands
    and the next pass builds the whole cluster rather than trust a half-warmed state."""
    from allocation.engine.simulation import Simulation

    import_texts([("base.yaml", f.to_yaml(BASE))])
    import_texts([("pods.yaml", f.to_yaml([*v1_node("m1"), f.pod("v", templates={"g": "vtpl"})]))])

    def broken(self) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Simulation, "warm", broken)
    result = passes.reconcile(now=START)
    assert result.outcome == passes.SAVED and result.kept is None
    assert models.Pod.objects.get(name="v").node_name


def test_after_a_full_pass_the_first_kept_pass_walks_no_claim_for_its_indexes(monkeypatch):
    """A full pass on a settled cluster makes no claim from a template, yet the index of
    those made is built in its first round: the first write's pass after it walks every
    claim neither for that index nor for the v1 book."""
    import_texts([("base.yaml", f.to_yaml(BASE))])
    nodes = [doc for i in range(10) for doc in v1_node(f"m{i + 1}")]
    pods = [f.pod(f"v{i}", templates={"g": "vtpl"}) for i in range(20)]
    import_texts([("pods.yaml", f.to_yaml([*nodes, *pods]))])
    kept = passes.reconcile(now=START).kept
    kept = passes.reconcile(now=START, kept=kept).kept  # nothing to do: settled
    full = passes.reconcile(now=START)  # a full pass on the settled cluster
    import_texts([("more.yaml", f.to_yaml([f.pod("w", templates={"g": "vtpl"})]))])
    entries, syncs = [], []
    monkeypatch.setattr(made_claims, "made_entry",
                        lambda c, real=made_claims.made_entry: entries.append(1) or real(c))
    monkeypatch.setattr(AllocatorSource, "_sync", lambda *a: syncs.append(1))
    result = passes.reconcile(now=START + timedelta(seconds=1), kept=full.kept)
    assert result.outcome == passes.SAVED
    assert len(entries) < 5 and not syncs  # the new claim's entries, no walk of 20
    assert models.Pod.objects.get(name="w").node_name
