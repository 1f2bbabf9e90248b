"""allocation.services.incremental: the worker's kept state, caught up from the change log,
gives the same passes as building the whole cluster again."""

from __future__ import annotations

import contextlib
import random
from datetime import UTC, datetime, timedelta

import pytest

from allocation import models
from allocation.engine.events import VirtualClock, format_time
from allocation.engine.manifests import InvalidManifests
from allocation.services import changes, read_model
from allocation.services import reconcile as passes
from allocation.services.events import plan_events
from allocation.services.manifests import import_texts
from allocation.services.store import build_state, row_identity, stored_rows
from allocation.services.writes import write
from tests import factories as f
from tests.allocation.engine.controlplane.cp_factories import cp_claim, cp_class, driver_sim
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, request, slice_doc

pytestmark = pytest.mark.django_db

START = datetime(2026, 1, 1, tzinfo=UTC)
SEL = 'device.driver == "gpu.example.com"'
CTRL = "net.example.com"
SEED_CLASS = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
SEED_CONSUME = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"


def _seed_node(name: str) -> list[dict]:
    return [f.node(name), f.named_slice(name, [{"name": f"{name}-g{i}"} for i in range(2)])]


def _v1_node(name: str) -> list[dict]:
    return [f.node(name), slice_doc([{"name": f"d{i}"} for i in range(2)], name=f"{name}-s",
                                    nodeName=name, pool={"name": name,
                                                         "resourceSliceCount": 1})]


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


class _Ops:
    """Random writes through the services: nodes, pods with claims of both dialects,
    pods with template claims alone (a catch-up of new pods only keeps the epoch, so the
    scans resume where the last pass left them), pods finishing (freed devices wake pods
    left pending), pods whose claims a simulated control-plane driver allocates (the first
    one brings the driver and its class: the drivers then walk the claims), pods and nodes
    deleted, pods' annotations changed (what the autoscaler checks on every pod that
    changed)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.n, self.driver = rng, 0, False

    def step(self) -> None:
        self.n += 1
        pods = list(models.Pod.objects.values_list("name", flat=True))
        nodes = list(models.Node.objects.values_list("name", flat=True))
        choice = self.rng.choice(["pod", "pod", "v1pod", "spod", "tpod", "vtpod", "cpod",
                                  "node", "v1node", "done", "delete", "delete-node",
                                  "annotate"])
        n = self.n
        if choice == "node":
            docs = _seed_node(f"n{n}")
        elif choice == "v1node":
            docs = _v1_node(f"m{n}")
        elif choice == "pod":
            docs = [f.claim(f"c{n}"), f.pod(f"p{n}", claims={"g": f"c{n}"})]
        elif choice == "spod":  # a claim of the seed's structured model (named devices)
            docs = [f.claim(f"s{n}", class_name="seed-gpu", params="one"),
                    f.pod(f"r{n}", claims={"g": f"s{n}"})]
        elif choice == "tpod":  # new pods only, their claims made from a template
            docs = [f.pod(f"t{n}-{i}", templates={"g": "tpl"})
                    for i in range(self.rng.randint(1, 2))]
        elif choice == "vtpod":  # a new pod alone, its v1 claim made from a v1 template
            doc = f.pod(f"w{n}")
            doc["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "vtpl"}]
            docs = [doc]
        elif choice == "cpod":  # a claim a control-plane driver allocates (KEP-3063)
            docs = [cp_claim(f"k{n}", "net"), f.pod(f"u{n}", claims={"g": f"k{n}"})]
            if not self.driver:
                self.driver = True
                docs = [driver_sim(CTRL, [("pool", 3, None)]), cp_class("net", CTRL), *docs]
        elif choice == "v1pod":
            docs = [claim_doc([request()], name=f"v{n}"), f.pod(f"q{n}", claims={"g": f"v{n}"})]
        elif choice == "done" and pods:
            doc = models.Pod.objects.get(name=self.rng.choice(pods)).manifest
            doc.setdefault("status", {})["phase"] = "Succeeded"
            docs = [doc]
        elif choice == "annotate" and pods:
            doc = models.Pod.objects.get(name=self.rng.choice(pods)).manifest
            notes = doc["metadata"].setdefault("annotations", {})
            notes[self.rng.choice([SEED_CLASS, SEED_CONSUME])] = "x"  # one of two: a warning
            docs = [doc]
        elif choice == "delete" and pods:
            write([], deletes=[("", "Pod", "default", self.rng.choice(pods))])
            return
        elif choice == "delete-node" and nodes:
            # a node still in use: the write is refused, nothing changes
            with contextlib.suppress(InvalidManifests):
                write([], deletes=[("", "Node", "", self.rng.choice(nodes))])
            return
        else:
            docs = _seed_node(f"n{n}")
        import_texts([(f"op{n}.yaml", f.to_yaml(docs))])


@pytest.mark.parametrize("seed", range(16))
def test_kept_passes_write_what_full_passes_would(seed, monkeypatch):
    import_texts([("base.yaml", f.to_yaml([
        f.resource_class(), class_doc(selectors=[{"cel": {"expression": SEL}}]),
        f.resource_class("seed-gpu"), f.claim_parameters("one", "true"),
        f.claim_template("tpl", class_name="seed-gpu", params="one"),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "vtpl", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [request()]}}}},
        *_seed_node("n0"), *_v1_node("m0")]))])
    full_passes = []
    real = passes._compute
    monkeypatch.setattr(passes, "_compute", lambda *a: full_passes.append(1) or real(*a))
    ops, kept, now = _Ops(random.Random(seed)), None, START
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
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *_seed_node("n0"),
                                        f.claim("c1"), f.pod("p1", claims={"g": "c1"})]))])
    kept = passes.reconcile(now=START).kept
    import_texts([("b.yaml", f.to_yaml([f.claim("c2"), f.pod("p2", claims={"g": "c2"})]))])
    monkeypatch.setattr(passes, "stored_rows", lambda: pytest.fail("read every row"))
    result = passes.reconcile(now=START + timedelta(seconds=1), kept=kept)
    assert result.outcome == passes.SAVED
    assert kept.caught_up == 2  # the new claim and pod, not the first pass's own writes
    assert models.Pod.objects.get(name="p2").node_name == "n0"


def test_a_kept_state_behind_the_pruned_log_rebuilds(monkeypatch):
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *_seed_node("n0")]))])
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
    import_texts([("a.yaml", f.to_yaml([*_seed_node("n0")]))])
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
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *_seed_node("n0"),
                                        f.claim("c1"), f.pod("p1", claims={"g": "c1"})]))])

    def meanwhile():
        if not meanwhile.done:
            meanwhile.done = True
            import_texts([("b.yaml", f.to_yaml([f.node("late")]))])
    meanwhile.done = False
    result = passes.reconcile(now=START, checkpoint=meanwhile)
    assert not result.complete and result.kept is None


def test_the_state_after_a_catch_up_is_the_state_a_rebuild_builds():
    import_texts([("a.yaml", f.to_yaml([f.resource_class(), *_seed_node("n0"),
                                        *_seed_node("n1"), f.claim("c1"),
                                        f.pod("p1", claims={"g": "c1"})]))])
    kept = passes.reconcile(now=START).kept
    doc = models.Pod.objects.get(name="p1").manifest
    doc["status"]["phase"] = "Succeeded"
    import_texts([("b.yaml", f.to_yaml([doc, *_seed_node("n2")]))])
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
