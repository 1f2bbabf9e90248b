"""allocation.services.writes: a worker pass through the bulk statements stores what
per-instance writes stored, and an update sets only the columns that changed."""

import contextlib
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def _orm_insert(model, rows: list[dict]) -> None:
    """What ``bulk.insert_rows`` stands for: Django's own bulk insert."""
    model.objects.bulk_create([model(**row) for row in rows])


def _orm_update(model, rows: list[tuple[int, dict]]) -> None:
    """What ``bulk.update_rows`` stands for: each changed instance saved."""
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



def test_a_pass_updates_only_the_columns_that_changed(cluster_docs):
    """The pod a pass binds gets its document, node and status; its name, namespace, uid
    and API version are not set again (every index on a set column is rewritten, even to
    the same value), and what is stored is the same (the test above)."""
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    with CaptureQueriesContext(connection) as queries:
        passes.reconcile(now=datetime(2026, 11, 27, 7, 0, tzinfo=UTC))
    updates = [q["sql"] for q in queries if 'UPDATE "allocation_pod" SET' in q["sql"]]
    assert len(updates) == 1
    assert '"document" = ' in updates[0] and '"node_name" = ' in updates[0]
    for column in ("name", "namespace", "uid", "api_version", "claims"):
        assert f'"{column}" = ' not in updates[0]
