"""clusters/mirror.py end to end against the fixture API server (tests/kube_server.py):
import, then follow creates, updates and deletes through dropped watches, 410 Gone and
refusals; only GET is ever sent."""

from __future__ import annotations

import gc
import json
import threading
import time

import pytest

from allocation.models import Node, Pod
from clusters.kube.watching import Backoff
from clusters.mirror import Mirror, import_cluster
from clusters.models import ClusterSource, MirroredObject
from tests.clusters.objects import node, pod, small_cluster


def _until(mirror: Mirror, condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the mirror did not get there in time"
        mirror.step(wait=0.1)


@pytest.fixture
def mirror(connection):
    mirror = Mirror(connection, batch_seconds=0.05, watch_seconds=1,
                    backoff=lambda: Backoff(0.05, 0.2))
    yield mirror
    mirror.close()
    assert not any(t.is_alive() for t in mirror.threads)


@pytest.mark.django_db
def test_import_reads_every_kind(connection, fake):
    lines = []
    imported = import_cluster(connection, lines.append, page_size=2)
    assert Pod.objects.count() == 2 and Node.objects.count() == 2
    assert MirroredObject.objects.count() == len(small_cluster())
    assert "pods: 2 listed" in lines
    assert {s.resource.kind for s in imported.snapshots} >= {"Pod", "ResourceSlice"}
    source = ClusterSource.objects.get()
    assert source.state == ClusterSource.IMPORTED and source.versions["ResourceClaim"] == \
        "resource.k8s.io/v1"
    assert fake.verbs() == {"GET"}


@pytest.mark.django_db
def test_import_pauses_the_collector_and_keeps_no_item(connection, fake):
    """The collector is paused over the whole import, lists and store, and resumes with
    nothing read left to walk: the snapshots keep their resourceVersions, not their items."""
    assert gc.isenabled()
    enabled = []
    imported = import_cluster(connection, lambda line: enabled.append(gc.isenabled()),
                              page_size=2)
    assert enabled and not any(enabled)
    assert gc.isenabled()
    assert all(s.items == [] and s.resource_version for s in imported.snapshots)
    assert MirroredObject.objects.count() == len(small_cluster())


@pytest.mark.django_db
def test_import_from_a_v1beta1_cluster(connection, fake):
    fake.served["resource.k8s.io"] = ["v1beta1"]
    old = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "beta", "namespace": "default"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                       "deviceClassName": "gpu"}]}}}}
    fake.put(old)
    import_cluster(connection)
    assert ClusterSource.objects.get().versions["ResourceClaim"] == "resource.k8s.io/v1beta1"
    from allocation.models import ResourceClaimTemplateV1

    assert ResourceClaimTemplateV1.objects.filter(name="beta").exists()


@pytest.mark.django_db
def test_mirror_follows_creates_updates_and_deletes(mirror, fake):
    mirror.start()
    assert ClusterSource.objects.get().state == ClusterSource.MIRRORING
    fake.put(node("node-c"))
    fake.put(pod("late", node_name="node-c"))
    _until(mirror, lambda: Pod.objects.filter(name="late").exists())
    assert Pod.objects.get(name="late").node_name == "node-c"
    fake.put({**pod("late", node_name="node-c"), "metadata": {
        "name": "late", "namespace": "default", "labels": {"tier": "batch"}}})
    _until(mirror, lambda: "batch" in Pod.objects.get(name="late").document)
    fake.delete("Pod", "late", "default")
    fake.delete("Pod", "waiting", "default")
    _until(mirror, lambda: not Pod.objects.filter(name__in=["late", "waiting"]).exists())
    assert not MirroredObject.objects.filter(name="late").exists()
    source = ClusterSource.objects.get()
    assert source.last_event_at is not None and source.error == ""
    assert fake.verbs() == {"GET"}  # the planner never writes to the cluster


@pytest.mark.django_db
def test_a_dropped_watch_loses_and_repeats_nothing(mirror, fake):
    fake.drop_watch_after["pods"] = 1  # the first watch of pods breaks after one event
    mirror.start()
    names = [f"burst-{i}" for i in range(6)]
    for name in names:
        fake.put(pod(name))
    _until(mirror, lambda: Pod.objects.filter(name__in=names).count() == 6)
    pods = mirror.watchers[[w.resource.kind for w in mirror.watchers].index("Pod")]
    assert pods.requests >= 2  # it did reconnect
    assert fake.verbs() == {"GET"}


@pytest.mark.django_db
def test_410_gone_relists_and_deletes_what_went_missing(mirror, fake):
    mirror.start()
    fake.compact()
    fake.gone_next_watch.add("pods")
    fake.delete("Pod", "waiting", "default")
    fake.compact()  # the delete's event is forgotten too: only a relist can see it
    fake.put(pod("new-after-gone"))
    fake.compact()
    _until(mirror, lambda: Pod.objects.filter(name="new-after-gone").exists()
           and not Pod.objects.filter(name="waiting").exists())
    relists = [r for r in fake.requests if r.path == "/api/v1/pods" and "watch" not in r.query]
    assert len(relists) >= 2


@pytest.mark.django_db
def test_a_refused_watch_shows_the_error_and_recovers(mirror, fake):
    mirror.start()
    fake.forbidden.add("/api/v1/nodes")
    _until(mirror, lambda: ClusterSource.objects.get().state == ClusterSource.FAILING)
    source = ClusterSource.objects.get()
    assert source.error.startswith("watch nodes: forbidden")
    assert source.error_since is not None
    fake.forbidden.clear()
    fake.put(node("node-d"))
    _until(mirror, lambda: Node.objects.filter(name="node-d").exists()
           and ClusterSource.objects.get().state == ClusterSource.MIRRORING)
    assert ClusterSource.objects.get().error == ""


@pytest.mark.django_db
def test_an_invalid_change_is_reported_the_rest_applied(mirror, fake):
    lines = []
    mirror.say = lines.append
    mirror.start()
    bad = pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    fake.put(bad)
    fake.put(pod("good"))
    _until(mirror, lambda: Pod.objects.filter(name="good").exists())
    assert not Pod.objects.filter(name="bad").exists()
    assert any("(Pod default/bad)" in line for line in lines)
    assert any("(Pod default/bad)" in p for p in ClusterSource.objects.get().rejected)


@pytest.mark.django_db(transaction=True)
def test_run_stops_when_asked(connection, fake):
    mirror = Mirror(connection, batch_seconds=0.05, watch_seconds=1)
    thread = threading.Thread(target=mirror.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (ClusterSource.objects.filter(state=ClusterSource.MIRRORING).exists()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    fake.put(pod("seen"))
    while not Pod.objects.filter(name="seen").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    mirror.stop.set()
    thread.join(20)
    assert not thread.is_alive()
    assert ClusterSource.objects.get().state == ClusterSource.STOPPED
    assert json.loads(Pod.objects.get(name="seen").document)["metadata"]["uid"]


def _stored() -> dict:
    """Every stored row an import writes, without ids and times."""
    from django.forms.models import model_to_dict

    from allocation.models import OBJECT_MODELS, Change, Cluster, Event

    def rows(model, order):
        return [{k: v for k, v in model_to_dict(row).items()
                 if k not in ("id", "updated_at", "created_at")}
                for row in model.objects.order_by(*order)]

    stored = {model.__name__: rows(model, ["position"]) for model in (*OBJECT_MODELS, Event)}
    stored["changes"] = rows(Change, ["revision", "group", "kind", "namespace", "name"])
    stored["mirrored"] = rows(MirroredObject, ["group", "kind", "namespace", "name"])
    # the revision and next position, without the token (random for every write)
    stored["cluster"] = [{k: v for k, v in row.items() if k != "token"}
                         for row in rows(Cluster, ["pk"])]
    stored["source"] = [{k: v for k, v in row.items() if not k.endswith(("_at", "_since"))}
                        for row in rows(ClusterSource, ["pk"])]
    return stored


@pytest.mark.django_db
@pytest.mark.parametrize("served", ["v1", "v1beta1"])
def test_prechecked_pages_store_exactly_what_the_store_checks_itself(connection, fake,
                                                                     monkeypatch, served):
    from django.db import transaction

    from clusters.kube.prechecks import Prechecker

    fake.served["resource.k8s.io"] = [served]
    broken = pod("broken")
    broken["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    for document in (broken, pod("lost", node_name="no-such-node"),
                     *(pod(f"more-{i}", node_name="node-a") for i in range(5))):
        fake.put(document)
    verdicts: list[bool] = []
    valid = Prechecker.valid

    def counted(self, item):
        verdicts.append(valid(self, item))
        return verdicts[-1]

    monkeypatch.setattr(Prechecker, "valid", counted)

    def imported(precheck_after: int):
        with transaction.atomic():
            report = import_cluster(connection, page_size=2,
                                    precheck_after=precheck_after).report
            outcome = ([str(p) for p in report.rejected], report.counts, _stored())
            transaction.set_rollback(True)
        return outcome

    itself = imported(10**9)
    assert verdicts and not any(verdicts)  # no page went to the second process
    verdicts.clear()
    prechecked = imported(0)
    assert True in verdicts and False in verdicts  # trusted pages, and the broken pod not
    assert prechecked == itself
    rejected = itself[0]
    assert any("Pod default/broken" in r for r in rejected)
    assert any("Pod default/lost" in r for r in rejected)
    assert itself[2]["Pod"]
