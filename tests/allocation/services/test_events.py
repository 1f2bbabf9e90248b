"""allocation.services.events: Event series, the TTL, and passes that change nothing."""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from allocation import models
from allocation.engine import faults
from allocation.models.event import series_hash
from allocation.services import reconcile as passes
from allocation.services.cluster import revision
from allocation.services.events import event_ttl, fold_pass, plan_events
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "examples" / "demo.yaml"


def _warning(name: str, message: str, stamp: str) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "Broken",
            "message": message, "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "metadata": {"name": f"{name}.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": name, "namespace": "default"},
            "source": {"component": "test"}}


def _event_rows() -> list[tuple]:
    return list(models.Event.objects.order_by("position").values_list(
        "name", "count", "document", "updated_at", "position"))


def test_repeats_within_a_pass_are_one_event_with_a_count():
    items = [_warning("p1", "first", "2026-01-01T00:00:00Z"),
             _warning("p2", "other", "2026-01-01T00:00:01Z"),
             _warning("p1", "second", "2026-01-01T00:00:02Z")]
    folded = list(fold_pass(items).values())
    assert [e["involvedObject"]["name"] for e in folded] == ["p2", "p1"]  # last seen last
    series = folded[1]
    assert (series["count"], series["message"]) == (2, "second")
    assert (series["firstTimestamp"], series["lastTimestamp"]) == (
        "2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z")


def test_the_demo_settles_and_a_second_pass_writes_nothing():
    import_texts([("demo.yaml", DEMO.read_text())])
    first = passes.reconcile()
    assert first.outcome == passes.SAVED
    events, settled = _event_rows(), revision()
    # The autoscaler tells these again in every pass (its memory is the pass's own).
    assert {"NotTriggerScaleUp", "CapacityIsNotFound"} <= set(
        models.Event.objects.values_list("reason", flat=True))
    # The next pass runs when a timer falls due (the atomic request's retry).
    assert first.next_wakeup is not None
    second = passes.reconcile(now=max(first.next_wakeup, timezone.now()))
    assert (second.outcome, second.revision, revision()) == (passes.UNCHANGED, settled,
                                                             settled)
    assert _event_rows() == events  # no Event row written, not even a count


def _series(reason: str) -> models.Event:
    return models.Event.objects.get(reason=reason)


def _fail_p1_every_pass(monkeypatch) -> None:
    """Every pass's settle reports the same failure on pod p1 (one Event series)."""

    def failing_settle(simulation):
        state = simulation.state
        faults.report(state, state.get("Pod", "default", "p1"), "scheduler",
                      RuntimeError("boom"))
        return 1

    monkeypatch.setattr(passes.Simulation, "settle", failing_settle)


def test_a_repeat_is_counted_on_the_stored_event_when_the_pass_saves(monkeypatch):
    start = timezone.now()
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), f.pod("p1")]))])
    _fail_p1_every_pass(monkeypatch)
    first = passes.reconcile(now=start)
    assert first.outcome == passes.SAVED
    stored = _series(faults.EVENT_REASON)
    assert stored.count == 1
    # The same error again, nothing else changes: not news, no revision, no row written.
    again = passes.reconcile(now=start + timedelta(minutes=1))
    assert again.outcome == passes.UNCHANGED and revision() == first.revision
    assert _series(faults.EVENT_REASON).document == stored.document
    # A write to the cluster: the next pass saves, and the repeat is counted on the one row.
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    later = start + timedelta(minutes=2)
    saved = passes.reconcile(now=later)
    assert saved.outcome == passes.SAVED
    series = models.Event.objects.filter(reason=faults.EVENT_REASON)
    assert series.count() == 1
    event = series.get().manifest
    assert event["count"] == 2 and series.get().count == 2
    assert event["metadata"]["name"] == stored.name
    assert event["firstTimestamp"] == stored.manifest["firstTimestamp"]
    assert event["lastTimestamp"] == later.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert series.get().position > stored.position  # last seen: at the end of the order


def test_a_new_message_is_news(monkeypatch):
    start = timezone.now()
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), f.pod("p1")]))])
    message = ["first error"]

    def failing_settle(simulation):
        state = simulation.state
        faults.report(state, state.get("Pod", "default", "p1"), "scheduler",
                      RuntimeError(message[0]))
        return 1

    monkeypatch.setattr(passes.Simulation, "settle", failing_settle)
    passes.reconcile(now=start)
    settled = revision()
    message[0] = "second error"
    result = passes.reconcile(now=start + timedelta(minutes=1))
    # The pod's annotation changes too; the Event series carries the new message on.
    assert result.outcome == passes.SAVED and revision() == settled + 1
    event = _series(faults.EVENT_REASON)
    assert event.count == 2 and "second error" in event.manifest["message"]


def test_events_older_than_the_ttl_are_pruned(settings):
    settings.DRA_EVENT_TTL = 3600.0
    assert event_ttl() == timedelta(hours=1)
    stamp = "2026-01-01T00:00:00Z"
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), _warning("old", "m", stamp)]))])
    written = models.Event.objects.get().updated_at
    kept = passes.reconcile(now=written + timedelta(minutes=59))
    assert models.Event.objects.filter(name="old.1").exists()
    assert kept.next_prune == written + timedelta(hours=1)
    passes.reconcile(now=written + timedelta(minutes=61))
    assert not models.Event.objects.filter(name="old.1").exists()


def test_the_ttl_is_a_setting(settings):
    settings.DRA_EVENT_TTL = 60.0
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), _warning("old", "m",
                                                               "2026-01-01T00:00:00Z")]))])
    written = models.Event.objects.get().updated_at
    before = revision()
    passes.reconcile(now=written + timedelta(minutes=2))
    assert not models.Event.objects.filter(name="old.1").exists()
    assert revision() == before + 1  # the node's document was normalised, not the prune


def test_a_repeat_restarts_the_ttl(monkeypatch, settings):
    settings.DRA_EVENT_TTL = 3600.0
    start = timezone.now()
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), f.pod("p1")]))])
    _fail_p1_every_pass(monkeypatch)
    passes.reconcile(now=start)
    name = _series(faults.EVENT_REASON).name
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    passes.reconcile(now=start + timedelta(minutes=50))  # saves: the repeat is written
    assert _series(faults.EVENT_REASON).count == 2
    passes.reconcile(now=start + timedelta(minutes=90))
    assert _series(faults.EVENT_REASON).count == 2  # 40 minutes after its last write: kept
    passes.reconcile(now=start + timedelta(minutes=151))
    # Pruned; the error, still happening, starts a new series.
    assert not models.Event.objects.filter(name=name).exists()
    assert _series(faults.EVENT_REASON).count == 1


def test_a_stored_series_is_the_hash_of_its_stored_document(monkeypatch):
    """The pass hashes each Event once (``fold_pass``) and stores that hash: it must be
    what the stored document hashes to, for new series and for repeats alike."""
    real = passes.Simulation.settle

    def settle_and_fail(simulation):
        faults.report(simulation.state, simulation.state.get("Pod", "default", "p1"),
                      "scheduler", RuntimeError("boom"))
        return real(simulation)

    monkeypatch.setattr(passes.Simulation, "settle", settle_and_fail)
    start = timezone.now()
    import_texts([("a.yaml", f.to_yaml([f.node("n1"), f.pod("p1"), f.pod("p2")]))])
    passes.reconcile(now=start)
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    passes.reconcile(now=start + timedelta(minutes=1))  # saves: the repeat is written
    rows = list(models.Event.objects.all())
    assert len(rows) >= 2 and any(row.count == 2 for row in rows)
    assert any(row.count == 1 for row in rows)
    for row in rows:
        document = json.loads(row.document)
        assert row.series == series_hash(document), row.name


def test_more_series_than_one_query_takes_are_matched_with_the_stored_ones():
    """A first pass records two Events per pod it places: its series are matched against
    the stored series read once, and only the rows of those found are fetched."""
    stamp = "2026-11-27T07:00:00Z"
    import_texts([("a.yaml", f.to_yaml([_warning(f"p{i}", "old", stamp) for i in (3, 550)]))])
    series = fold_pass([_warning(f"p{i}", "new", stamp) for i in range(1200)])

    with CaptureQueriesContext(connection) as queries:
        changes = plan_events(series)

    assert [row.involved_name for row, _event in changes.update] == ["p3", "p550"]
    assert [event["message"] for _row, event in changes.update] == ["new", "new"]
    assert len(changes.create) == 1198 and changes.news
    assert len(queries) == 2  # the stored series, then the two rows (not 3 chunks of 500)
