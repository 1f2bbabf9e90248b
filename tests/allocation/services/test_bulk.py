"""allocation.services.bulk: the rows an insert makes are those ``bulk_create`` makes."""

from pathlib import Path

import pytest

from allocation.engine.manifests import load_texts
from allocation.models import Event, canonical_json
from allocation.services.bulk import insert_rows
from allocation.services.profile import console_profile
from allocation.services.store import model_for
from allocation.services.writes import row_values
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
