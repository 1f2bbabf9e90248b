"""clusters/services.py: storing what a cluster holds; bad objects left out; read-only."""

from __future__ import annotations

import json

import pytest

from allocation.models import Node, Pod, ResourceClaimV1
from allocation.services import objects as object_services
from allocation.services.manifests import import_texts
from allocation.services.permissions import ReadOnly
from clusters import services
from clusters.kube.listing import Snapshot
from clusters.kube.resources import by_kind
from clusters.kube.watching import Change
from clusters.models import ClusterSource, MirroredObject
from tests.clusters.objects import node, pod, small_cluster

pytestmark = pytest.mark.django_db


def _snapshots(documents):
    kinds: dict[str, list] = {}
    for document in documents:
        kinds.setdefault(document["kind"], []).append(document)
    from dataclasses import replace

    out = []
    for kind, items in kinds.items():
        resource = by_kind(kind)
        if not resource.version:
            resource = replace(resource, version=items[0]["apiVersion"].split("/")[-1])
        out.append(Snapshot(resource, items, "1"))
    return out


def _change(kind, change_type, document):
    from dataclasses import replace

    resource = by_kind(kind)
    if not resource.version:
        resource = replace(resource, version="v1")
    return Change(resource, change_type, document)


def test_a_snapshot_is_stored_and_remembered():
    report = services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    assert report.counts["Pod"] == 2 and report.counts["Node"] == 2
    assert not report.rejected
    assert MirroredObject.objects.count() == len(small_cluster())
    row = ClusterSource.objects.get()
    assert row.context == "prod-eu" and row.objects_count == len(small_cluster())


def test_an_invalid_object_is_reported_and_the_rest_stored():
    documents = small_cluster()
    bad = pod("broken")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    documents.append(bad)
    report = services.store_snapshots("prod-eu", _snapshots(documents))
    assert len(report.rejected) == 1
    text = str(report.rejected[0])
    assert text.startswith("prod-eu:Pod:3 (Pod default/broken): spec.containers[0]")
    assert Pod.objects.filter(name="broken").count() == 0
    assert Pod.objects.count() == 2
    assert ClusterSource.objects.get().rejected == [text]


def test_an_object_the_whole_cluster_refuses_is_left_out():
    documents = [*small_cluster(), pod("lost", node_name="no-such-node")]
    report = services.store_snapshots("prod-eu", _snapshots(documents))
    assert [p.name for p in report.rejected] == ["lost"]
    assert not Pod.objects.filter(name="lost").exists()
    assert Pod.objects.count() == 2


def test_an_object_without_usable_metadata_is_left_out_not_the_whole_store():
    documents = [*small_cluster(), {"apiVersion": "v1", "kind": "Node", "metadata": "broken"}]
    report = services.store_snapshots("prod-eu", _snapshots(documents))
    assert [str(p).split(" ", 1)[1] for p in report.rejected] == [
        "(Node <unnamed>): metadata: must be an object, not string"]
    assert Pod.objects.count() == 2


def test_a_pod_listed_without_a_namespace_is_keyed_as_the_loader_keys_it():
    # under ``default``: the whole-cluster refusal (a uid two pods share) then finds its
    # document to offer again (a KeyError dropped the whole batch of changes)
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    runner = Pod.objects.get(name="runner").manifest["metadata"]["uid"]
    twin = pod("twin", uid=runner)
    del twin["metadata"]["namespace"]
    report = services.apply_changes("prod-eu", [_change("Pod", "ADDED", twin)])
    assert [(p.namespace, p.name) for p in report.rejected] == [("default", "twin")]
    assert "duplicate uid" in report.rejected[0].message
    assert list(report.deferred) == [("", "Pod", "default", "twin")]
    alone = pod("alone")
    del alone["metadata"]["namespace"]
    services.apply_changes("prod-eu", [_change("Pod", "ADDED", alone)])
    assert MirroredObject.objects.filter(kind="Pod", namespace="default", name="alone").exists()
    # a relist of the same pods keeps it: the listed identity is the mirrored one
    listed = [d for d in small_cluster() if d["kind"] == "Pod"] + [alone]
    from dataclasses import replace
    relist = Change(replace(by_kind("Pod"), version="v1"), "RELIST",
                    snapshot=Snapshot(replace(by_kind("Pod"), version="v1"), listed, "9"))
    assert services.apply_changes("prod-eu", [relist]).rejected == []
    assert Pod.objects.filter(name="alone").exists()


def test_a_second_snapshot_deletes_what_the_cluster_no_longer_has():
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    smaller = [d for d in small_cluster() if d["metadata"]["name"] != "waiting"]
    services.store_snapshots("prod-eu", _snapshots(smaller))
    assert not Pod.objects.filter(name="waiting").exists()
    assert not MirroredObject.objects.filter(name="waiting").exists()


def test_objects_not_from_the_cluster_are_kept():
    import_texts([("mine.yaml", json.dumps(node("my-node")))])
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    assert Node.objects.filter(name="my-node").exists()


def test_changes_create_update_delete_in_order():
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    new = pod("new")
    changed = pod("new", cpu="3")
    report = services.apply_changes("prod-eu", [
        _change("Pod", "ADDED", new), _change("Pod", "MODIFIED", changed),
        _change("Node", "ADDED", node("node-c"))])
    assert not report.rejected
    stored = json.loads(Pod.objects.get(name="new").document)
    assert stored["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "3"
    services.apply_changes("prod-eu", [_change("Pod", "DELETED", changed)])
    assert not Pod.objects.filter(name="new").exists()
    assert Node.objects.filter(name="node-c").exists()


def test_a_repeated_change_is_harmless():
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    change = _change("Pod", "ADDED", pod("twice"))
    first = services.apply_changes("prod-eu", [change])
    second = services.apply_changes("prod-eu", [change])
    assert first.result.changed and not second.result.changed
    assert Pod.objects.filter(name="twice").count() == 1


def test_a_change_that_arrives_too_early_waits():
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    early = pod("early", node_name="node-late")
    report = services.apply_changes("prod-eu", [_change("Pod", "ADDED", early)])
    assert list(report.deferred) == [("", "Pod", "default", "early")]
    assert not Pod.objects.filter(name="early").exists()
    report = services.apply_changes("prod-eu", [_change("Node", "ADDED", node("node-late"))],
                                    report.deferred)
    assert not report.deferred
    assert Pod.objects.get(name="early").node_name == "node-late"


def test_a_relist_replaces_the_kind():
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    relisted = _snapshots([pod("fresh")])[0]
    services.apply_changes("prod-eu", [Change(relisted.resource, "RELIST",
                                              snapshot=relisted)])
    # runner was bound and holds a claim; the cluster no longer lists it: gone too
    assert set(Pod.objects.values_list("name", flat=True)) == {"fresh"}


def test_mirrored_objects_are_read_only_for_people(admin_user):
    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    with pytest.raises(ReadOnly, match=r"Pod default/waiting: read-only \(context prod-eu\)"
                       r".*what-if scenario"):
        import_texts([("edit.yaml", json.dumps(pod("waiting", cpu="2")))], user=admin_user)
    row = Pod.objects.get(name="runner")
    with pytest.raises(ReadOnly):
        object_services.delete_object(row, user=admin_user)
    # objects of the user's own stay writable
    import_texts([("mine.yaml", json.dumps(pod("mine")))], user=admin_user)
    assert Pod.objects.filter(name="mine").exists()


def test_the_cluster_allocation_is_kept_by_the_worker():
    """The cluster is the truth (docs/live-cluster.md): the worker does not move the
    cluster's allocation (node-b's gpu-1, where first-fit would choose node-a's gpu-0)."""
    from allocation.services import reconcile as passes

    services.store_snapshots("prod-eu", _snapshots(small_cluster()))
    passes.reconcile()
    held = json.loads(ResourceClaimV1.objects.get(name="held").document)
    result = held["status"]["allocation"]["devices"]["results"]
    assert [(r["pool"], r["device"]) for r in result] == [("node-b", "gpu-1")]
    assert held["status"]["reservedFor"][0]["name"] == "runner"
    runner = Pod.objects.get(name="runner")
    assert runner.node_name == "node-b"
    # the pending pod is placed by the planner next to it, not on gpu-1
    waiting = Pod.objects.get(name="waiting")
    assert waiting.status == "Scheduled"
    claims = [json.loads(c.document) for c in ResourceClaimV1.objects.exclude(name="held")]
    devices = {(r["pool"], r["device"]) for c in claims
               for r in c["status"]["allocation"]["devices"]["results"]}
    assert ("node-b", "gpu-1") not in devices and len(devices) == 1
