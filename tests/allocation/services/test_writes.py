"""allocation.services.writes: the rows an insert makes are those ``bulk_create`` makes, and a
worker pass through the bulk statements stores what per-instance writes stored."""

import contextlib
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import transaction

from allocation.engine.manifests import load_texts
from allocation.models import Event, canonical_json
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from allocation.services.profile import console_profile
from allocation.services.store import model_for
from allocation.services.writes import insert_rows, row_values
from tests import factories as f

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _objects(cluster_docs):
    texts = [(p.name, p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))]
    vendor = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1.5}}
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "e1", "namespace": "default"}, "reason": "Scheduled",
             "type": "Normal", "count": 3, "message": "é\u0000",
             "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p1"}}
    loaded = load_texts([*texts, ("c.yaml", f.to_yaml([*cluster_docs, vendor, event]))],
                        profile=console_profile())
    return [*loaded.objects, *loaded.events]


def _stored(model) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in ("id", "updated_at")}
            for row in model.objects.order_by("position").values()]


def test_insert_rows_stores_what_bulk_create_stores(cluster_docs):
    by_model: dict[type, list[dict]] = {}
    for position, obj in enumerate(_objects(cluster_docs), start=1):
        values = {"position": position, **row_values(obj, canonical_json(obj.raw))}
        by_model.setdefault(model_for(obj), []).append(values)
    assert len(by_model) >= 6 and Event in by_model
    for model, rows in by_model.items():
        model.objects.bulk_create([model(**row) for row in rows])
        expected = _stored(model)
        stamps = set(model.objects.values_list("updated_at", flat=True))
        model.objects.all().delete()
        insert_rows(model, rows)
        assert _stored(model) == expected, model.__name__
        assert None not in set(model.objects.values_list("updated_at", flat=True)) | stamps


def test_insert_rows_of_other_columns_or_values_stores_what_bulk_create_stores(cluster_docs):
    """Rows that all give the same columns of strings and integers are taken whole; a row
    with a value to prepare, and rows giving different columns, cell by cell: all store
    what ``bulk_create`` stores."""
    events = [o for o in _objects(cluster_docs) if model_for(o) is Event]
    row = {"position": 1, **row_values(events[0], canonical_json(events[0].raw))}
    odd = {**row, "position": 2.5, "name": "odd"}  # prepared: int(2.5)
    fewer = {k: v for k, v in row.items() if k != "count"} | {"position": 3, "name": "few"}
    for rows in ([row, odd], [row, fewer], [fewer]):
        Event.objects.bulk_create([Event(**r) for r in rows])
        expected = _stored(Event)
        Event.objects.all().delete()
        insert_rows(Event, rows)
        assert _stored(Event) == expected
        Event.objects.all().delete()


def _orm_insert(model, rows: list[dict]) -> None:
    """What ``writes.insert_rows`` stands for: Django's own bulk insert."""
    model.objects.bulk_create([model(**row) for row in rows])


def _orm_update(model, rows: list[tuple[int, dict]]) -> None:
    """What ``writes.update_rows`` stands for: each changed instance saved."""
    for pk, values in rows:
        row = model.objects.get(pk=pk)
        for name, value in values.items():
            setattr(row, name, value)
        row.save()


def _stored_tables() -> dict[str, list[dict]]:
    """Every row of every table the worker writes, in insertion order, without what differs
    between two runs of the same pass anyway (ids, write times, random tokens)."""
    from django.apps import apps

    skip = {"id", "updated_at", "token", "read_model_token"}
    return {model.__name__: [{k: v for k, v in row.items() if k not in skip}
                             for row in model.objects.order_by("pk").values()]
            for model in apps.get_app_config("allocation").get_models()}


def _two_passes(docs: list[dict], now) -> dict[str, list[dict]]:
    """A first pass on ``docs``, a new pod, a pass on the kept state: the tables then."""
    passes._stable.clear()  # each run serialises as a fresh worker would
    import_texts([("a.yaml", f.to_yaml(docs))])
    kept = passes.reconcile(now=now).kept
    import_texts([("b.yaml", f.to_yaml([f.claim("late"), f.pod("late", claims={"g": "late"})]))])
    passes.reconcile(now=now + timedelta(seconds=5), kept=kept)
    return _stored_tables()


class _Undo(Exception):
    pass


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_pass_stores_what_writing_through_the_orm_row_by_row_would(seed, monkeypatch):
    """The bulk statements (``insert_rows``, ``update_rows``) leave every row, change-log
    entry, Event and read-model row as Django's per-instance writes did, on a small random
    cluster of either dialect with pods that do not all fit."""
    from allocation.services import events, read_model, writes
    from bench.generate import named_gpu_cluster, named_gpu_cluster_v1

    rng = random.Random(seed)
    make = rng.choice([named_gpu_cluster, named_gpu_cluster_v1])
    nodes, devices = rng.randint(2, 6), rng.randint(1, 4)
    docs = [*make(nodes, nodes * devices + rng.randint(1, 4), devices=devices),
            f.resource_class("spare")]
    now = datetime(2026, 11, 27, 7, 0, tzinfo=UTC)
    slow = [(writes, "insert_rows", _orm_insert), (writes, "update_rows", _orm_update),
            (events, "insert_rows", _orm_insert), (read_model, "insert_rows", _orm_insert),
            (read_model, "update_rows", _orm_update)]
    with monkeypatch.context() as patched:
        for module, name, reference in slow:
            patched.setattr(module, name, reference)
        with contextlib.suppress(_Undo), transaction.atomic():
            expected = _two_passes(docs, now)
            raise _Undo  # back to the empty database for the bulk run
    found = _two_passes(docs, now)
    assert found == expected
    assert any(row["node_name"] for row in found["Pod"])  # the pass placed pods ...
    assert any(row["reason"] for row in found["PodSummary"])  # ... and left some pending

