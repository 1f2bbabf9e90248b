"""allocation.services.read_model: the rows pages and lists read, written by the worker."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from allocation import models
from allocation.services import node_rows, read_model
from allocation.services import reconcile as passes
from allocation.services.cluster import baseline_state, clear_cache, revision
from allocation.services.manifests import import_texts
from tests import factories as f
from tests.settled import settle

pytestmark = pytest.mark.django_db

DEMO = Path(settings.BASE_DIR) / "examples" / "demo.yaml"
_TABLES = [m._meta.db_table for m in models.READ_MODELS]


def _stored(model) -> dict[tuple, dict]:
    keys = read_model._KEYS[model]
    out = {}
    for values in model.objects.values():
        values.pop("id")
        out[tuple(values[k] for k in keys)] = values
    return out


def _writes(queries) -> list[str]:
    """The statements that wrote read-model rows (an ``executemany`` is logged as ``N
    times: SQL``)."""
    found = [q["sql"].split(" times: ", 1)[-1] for q in queries]
    return [sql for sql in found if sql.split()[0] in ("INSERT", "UPDATE", "DELETE")
            and any(t in sql for t in _TABLES)]


@pytest.fixture
def demo():
    import_texts([("demo.yaml", DEMO.read_text())])
    settle()
    clear_cache()


def test_after_a_pass_on_the_demo_the_read_model_is_what_the_engine_state_says(demo):
    state = baseline_state()  # rebuilt from the stored documents the pass saved

    wanted = read_model.rows_of(state)
    for model in models.READ_MODELS:
        assert _stored(model) == wanted[model], model.__name__
    # ... and agrees with the stored objects' own columns.
    for pod in models.Pod.objects.all():
        row = models.PodSummary.objects.get(namespace=pod.namespace or "default", name=pod.name)
        assert (row.status, row.node) == (pod.status, pod.node_name), pod.name
        if row.status == "Unschedulable":
            condition = next(c for c in pod.manifest["status"]["conditions"]
                             if c["type"] == "PodScheduled")
            assert row.reason == condition["message"]
    claims = [*models.ResourceClaim.objects.all(), *models.ResourceClaimV1.objects.all()]
    assert {(c.namespace or "default", c.name): c.status for c in claims} == {
        (s.namespace, s.name): s.state for s in models.ClaimSummary.objects.all()}
    assert models.NodeSummary.objects.count() == models.Node.objects.count()
    assert models.PodSummary.objects.exclude(reason="").exists()  # the demo has pending pods
    assert models.DeviceUsage.objects.filter(used__gt=0).exists()


def test_a_pass_that_settles_nothing_new_writes_no_row(demo):
    # (The demo's autoscaler may still record Events in every pass; the read model has
    # nothing to say about them.)
    with CaptureQueriesContext(connection) as queries:
        passes.reconcile()

    assert _writes(queries.captured_queries) == []


def test_only_the_rows_that_changed_are_written(demo):
    import_texts([("more.yaml", f.to_yaml([f.pod("extra", node_selector={"no": "where"})]))])
    clear_cache()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        written, _known = read_model.sync(baseline_state())

    assert written == 1  # the new pod's row; nothing else changed
    [insert] = _writes(queries.captured_queries)
    assert insert.startswith("INSERT") and "podsummary" in insert


def test_an_import_the_engine_adds_nothing_to_still_reaches_the_pages(
        django_capture_on_commit_callbacks):
    import_texts([("a.yaml", f.to_yaml([f.node("n1", labels={"zone": "a"})]))])
    passes.reconcile()
    import_texts([("b.yaml", f.to_yaml([f.node("n2", labels={"zone": "a"})]))])
    before = revision()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = passes.reconcile()

    assert result.outcome == passes.UNCHANGED  # no object changed ...
    assert result.revision == revision() == before + 1  # ... but the pages' rows did
    assert len(callbacks) == 1  # announced, so open pages re-read them
    assert list(models.NodeSummary.objects.values_list("name", flat=True)) == ["n1", "n2"]
    assert passes.reconcile().revision == before + 1  # and then nothing more


def test_a_deleted_object_loses_its_row(demo):
    from allocation.services.objects import delete_object

    pod = models.Pod.objects.filter(node_name="").first()  # a pending pod
    delete_object(pod, _staff())
    settle()

    assert not models.PodSummary.objects.filter(name=pod.name).exists()


def _staff():
    from django.contrib.auth.models import User

    return User.objects.create_user("admin", is_staff=True)


def test_the_ids_it_keeps_are_those_of_the_rows_it_inserted(demo):
    """The rows a sync inserts are read back by id, above the highest id before it (ids
    left by deleted rows are not handed out again): what it keeps is what is stored."""
    import_texts([("more.yaml", f.to_yaml([f.pod(f"extra-{i}", node_selector={"no": "where"})
                                           for i in range(3)]))])
    last = models.PodSummary.objects.order_by("-id")[:2].values_list("id", flat=True)
    models.PodSummary.objects.filter(id__in=list(last)).delete()  # the last ids free
    clear_cache()
    with transaction.atomic():
        written, known = read_model.sync(baseline_state())

    assert written == 5  # the two rows deleted, the three new pods
    for model in models.READ_MODELS:
        stored = {tuple(v[k] for k in read_model._KEYS[model]): v
                  for v in model.objects.values()}
        assert known.rows[model] == stored, model.__name__


def test_after_a_node_is_touched_the_spans_kept_are_made_again(demo):
    """A changed node or slice may move a pool to other nodes: every claim's nodes are told
    again from the pools as they are now (a later pass reads only the claims they name)."""
    state = baseline_state()
    with transaction.atomic():
        _written, known = read_model.sync(state)
    fresh = dict(known.spans)
    stale = {ident: frozenset({"elsewhere"}) for ident in known.spans}
    touched = [state.nodes[state.node_order[0]].key]
    with transaction.atomic():
        _written, known = read_model.sync(state, known._replace(spans=stale), touched)
    assert known.spans == fresh


def test_the_pools_kept_serve_while_no_slice_is_touched(demo):
    """A pass that touched pods and claims only tells their nodes from the pools the last
    sync kept; one that touched a node or slice makes the pools again."""
    state = baseline_state()
    with transaction.atomic():
        _written, known = read_model.sync(state)
    assert known.pools == node_rows.pool_nodes(state)
    marked = known._replace(pools={("marked", "pool"): frozenset()})
    pod = next(o.key for o in state.all_objects() if o.kind_name == "Pod")
    with transaction.atomic():
        _written, after_pod = read_model.sync(state, marked, [pod])
    assert after_pod.pools is marked.pools
    with transaction.atomic():
        _written, after_node = read_model.sync(state, after_pod,
                                               [state.nodes[state.node_order[0]].key])
    assert after_node.pools == node_rows.pool_nodes(state)
