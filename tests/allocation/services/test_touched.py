"""allocation.services.touched: a write is checked on what it touches, through indexes.

The checks must find what the whole-cluster check finds (the same problems, in the same
words), read no more rows for a write into a larger cluster, and write nothing on a problem.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from allocation import models
from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.services import writes
from allocation.services.manifests import export_text, import_texts
from allocation.services.objects import ObjectExists, create_object, delete_object
from allocation.services.profile import console_profile
from allocation.services.store import event_rows, row_identity, stored_rows
from allocation.services.touched import neighbourhood, rows_of
from tests import factories as f
from tests import v1_cluster as v1

pytestmark = pytest.mark.django_db


def _allocated(name: str, node: str, device: str) -> dict:
    return f.claim(name, status={"allocation": {"resourceHandles": [{
        "driverName": f.DRIVER, "structuredData": {"nodeName": node,
                                                   "namedResourcesWithAttributes": {
                                                       "resources": [{"id": device}]}}}]}})


def _loaded(docs: list[dict]):
    loaded = load_texts([("w.yaml", f.to_yaml(docs))], console_profile())
    return loaded.objects


@pytest.fixture
def settled(cluster_docs):
    """The services' small cluster and n3, with pod p1 bound to n1 and claim "held" holding
    device d0 of n1 (stored so, not reconciled); pod "idle" is not bound."""
    docs = [*cluster_docs[:-2], f.node("n3"), _allocated("held", "n1", "d0"),
            f.pod("p1", node_name="n1"), f.pod("idle")]
    import_texts([("c.yaml", f.to_yaml(docs))])


def _problems(plan: writes.Plan, check) -> list[str]:
    with pytest.raises(InvalidManifests) as info:
        check(plan)
    return [str(p) for p in info.value.problems]


BAD_WRITES = {
    "a pod bound to a missing node": ([f.pod("p9", node_name="nowhere")], []),
    "a claim holding a device no node publishes": ([_allocated("c9", "n2", "nope")], []),
    "a claim holding a device another claim holds": ([_allocated("c9", "n1", "d0")], []),
    "a claim holding a device twice": ([_allocated("c9", "n2", "d1") | {"status": {
        "allocation": {"resourceHandles": [_allocated("c9", "n2", "d1")["status"][
            "allocation"]["resourceHandles"][0]] * 2}}}], []),
    "the node of a bound pod deleted": ([], [("", "Node", "", "n1")]),
    "the slice of an allocated device deleted": ([], [("", "NodeResourceSlice", "",
                                                        "n1-slice")]),
    "a pod moved to a missing node": ([f.pod("idle", node_name="gone")], []),
}


@pytest.mark.parametrize("case", BAD_WRITES)
def test_the_same_problems_as_the_whole_cluster_check(settled, case):
    docs, deletes = BAD_WRITES[case]
    if deletes == [("", "NodeResourceSlice", "", "n1-slice")]:
        slice_name = models.NodeResourceSlice.objects.get(node_name="n1").name
        deletes = [("", "NodeResourceSlice", "", slice_name)]
    assert models.ResourceClaim.objects.get(name="held").node_name == "n1"
    objects = _loaded(docs)
    rows, events = stored_rows(), event_rows()
    plan = writes.plan_changes(rows, [(o, models.canonical_json(o.raw)) for o in objects],
                               deletes=deletes)
    whole = _problems(plan, lambda p: writes._validate(rows, events, p))
    assert whole  # the case is a bad write indeed
    assert _problems(plan, writes._validate_touched) == whole
    before = export_text()
    with pytest.raises(InvalidManifests):
        writes.write(objects, deletes=deletes)
    assert export_text() == before  # nothing half-written


def test_a_dangling_node_reference_is_a_problem_in_the_usual_words(settled):
    with pytest.raises(InvalidManifests) as info:
        import_texts([("p.yaml", f.to_yaml([f.pod("p9", node_name="nowhere")]))])
    assert [str(p) for p in info.value.problems] == [
        "p.yaml:1 (Pod default/p9): spec.nodeName: node 'nowhere' not found"]
    position = models.Pod.objects.get(name="p1").position
    with pytest.raises(InvalidManifests) as info:
        delete_object(models.Node.objects.get(name="n1"))
    assert [str(p) for p in info.value.problems] == [
        f"stored:{position} (Pod default/p1): spec.nodeName: node 'n1' not found"]
    assert models.Node.objects.filter(name="n1").exists()


def test_duplicate_names_are_refused(settled):
    with pytest.raises(ObjectExists):
        create_object(f.to_yaml([f.pod("p1")]), models.Pod)
    with pytest.raises(InvalidManifests) as info:
        import_texts([("d.yaml", f.to_yaml([f.pod("twice"), f.pod("twice")]))])
    assert any("twice" in str(p) for p in info.value.problems)
    assert not models.Pod.objects.filter(name="twice").exists()


def test_the_v1_dialect_rule_reads_the_claims_a_pod_names(settled):
    import_texts([("v1.yaml", f.to_yaml([v1.device_class(), v1.claim("v")]))])
    with pytest.raises(InvalidManifests) as info:
        import_texts([("p.yaml", f.to_yaml([f.pod("mixed", claims={"a": "held", "b": "v"})]))])
    [problem] = info.value.problems
    assert str(problem).startswith("p.yaml:1 (Pod default/mixed): spec.resourceClaims: ")


def test_rows_of_finds_every_version_of_a_kind(settled):
    import_texts([("v1.yaml", f.to_yaml([v1.device_class(), v1.claim("v")]))])
    found = rows_of([("", "ResourceClaim", "default", "v"), ("", "ResourceClaim", "default",
                                                             "held"), ("", "Node", "", "n2")])
    assert sorted(row_identity(r) for r in found) == [
        ("", "Node", "", "n2"), ("", "ResourceClaim", "default", "held"),
        ("", "ResourceClaim", "default", "v")]
    assert {type(r) for r in found} == {models.Node, models.ResourceClaim,
                                        models.ResourceClaimV1}


def test_rows_of_many_names_reads_a_stored_table_and_skips_an_empty_one(settled):
    many = [("", "Node", "", f"absent-{i}") for i in range(600)]
    many += [("", "ResourceClaim", "default", f"absent-{i}") for i in range(600)]
    models.ResourceClaimV1.objects.all().delete()
    with CaptureQueriesContext(connection) as queries:
        found = rows_of([*many, ("", "Node", "", "n3"), ("", "ResourceClaim", "default",
                                                         "held")])
    assert sorted(row_identity(r) for r in found) == [
        ("", "Node", "", "n3"), ("", "ResourceClaim", "default", "held")]
    claims_v1 = models.ResourceClaimV1._meta.db_table
    assert sum(claims_v1 in q["sql"] for q in queries.captured_queries) == 1


def test_the_neighbourhood_is_the_nodes_a_write_names(settled):
    [pod] = _loaded([f.pod("p9", node_name="n1")])
    rows, _loaded_rows = neighbourhood([pod], [], writes.load_row)
    kinds = sorted((row_identity(r)[1], r.name) for r in rows)
    assert {("Node", "n1"), ("Pod", "p1"), ("ResourceClaim", "held")} <= set(kinds)
    assert not any(name in ("n2", "n3") for _kind, name in kinds)  # other nodes: not read


def _cluster(nodes: int) -> None:
    docs = [f.resource_class()]
    for i in range(nodes):
        docs += [f.node(f"n{i}"), f.named_slice(f"n{i}", [f.device(f"d{i}")]),
                 f.pod(f"p{i}", node_name=f"n{i}")]
    import_texts([("big.yaml", f.to_yaml(docs))])


def _write(name: str, node: str, monkeypatch) -> tuple[int, int]:
    """SQL queries and stored rows loaded by one API-style write of a pod bound to
    ``node``."""
    loaded = []
    real = writes.load_row

    def counting(row):
        loaded.append(row)
        return real(row)

    monkeypatch.setattr(writes, "load_row", counting)
    with CaptureQueriesContext(connection) as queries:
        create_object(f.to_yaml([f.pod(name, node_name=node)]), models.Pod)
    return len(queries), len(loaded)


def test_one_write_reads_no_more_with_a_larger_cluster(monkeypatch):
    _cluster(3)
    small = _write("w1", "n1", monkeypatch)
    _cluster(60)  # the first three again, and 57 more nodes with their pods
    assert models.Node.objects.count() == 60
    assert _write("w2", "n2", monkeypatch) == small
    assert small[1] == 3  # the node, its slice and its pod: the rows its checks need


def test_a_write_may_not_take_a_stored_objects_uid(settled):
    first = f.pod("first")
    first["metadata"]["uid"] = "u-1"
    import_texts([("a.yaml", f.to_yaml([first]))])
    second = f.pod("second")
    second["metadata"]["uid"] = "u-1"
    objects = _loaded([second])
    rows, events = stored_rows(), event_rows()
    plan = writes.plan_changes(rows, [(o, models.canonical_json(o.raw)) for o in objects])
    whole = _problems(plan, lambda p: writes._validate(rows, events, p))
    assert whole == [f"w.yaml:1 (Pod default/second): metadata.uid: duplicate uid 'u-1': "
                     f"Pod default/first at stored:{models.Pod.objects.get(name='first').position}"
                     " has it"]
    assert _problems(plan, writes._validate_touched) == whole
    with pytest.raises(InvalidManifests):
        import_texts([("b.yaml", f.to_yaml([second]))])
    assert not models.Pod.objects.filter(name="second").exists()
    first["spec"]["nodeSelector"] = {"zone": "a"}  # the object itself keeps its uid
    import_texts([("a.yaml", f.to_yaml([first]))])
