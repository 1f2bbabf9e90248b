"""allocation.services.reconcile: a worker pass on the stored cluster."""

import sys
from pathlib import Path

import pytest
import yaml

from allocation import models
from allocation.engine import faults
from allocation.engine.objects import Pod
from allocation.engine.scheduler import Scheduler
from allocation.models import canonical_json
from allocation.services import reconcile as passes
from allocation.services.cluster import revision
from allocation.services.manifests import export_text, import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def _claim_status() -> dict:
    return models.ResourceClaim.objects.get(name="c1").manifest.get("status", {})


def test_a_pass_reconciles_to_a_fixed_point_and_saves_once(cluster_docs,
                                                           django_capture_on_commit_callbacks):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = passes.reconcile()
    assert result.outcome == passes.SAVED and result.revision == 2
    # Node: the engine writes documents back normalised (empty labels dropped).
    assert result.kinds == ["Event", "Node", "Pod", "ResourceClaim"]
    assert len(callbacks) == 1
    assert _claim_status()["reservedFor"][0]["name"] == "p1"
    pod = models.Pod.objects.get(name="p1")
    assert (pod.node_name, pod.status) == ("n1", "Scheduled")
    assert models.ResourceClaim.objects.get().status == "Reserved"
    assert models.Cluster.objects.get().reconciled_revision == 2
    assert passes.reconcile().outcome == passes.UNCHANGED and revision() == 2


def test_the_outcome_matches_simulate(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    passes.reconcile()
    simulated = f.run(cluster_docs).output()["items"]
    stored = yaml.safe_load(export_text())["items"]
    objects = [i for i in stored if i["kind"] != "Event"]
    expected = [i for i in simulated if i["kind"] != "Event"]
    for item in objects + expected:  # the baseline runs on real time
        for condition in item.get("status", {}).get("conditions", ()):
            condition.pop("lastTransitionTime", None)
    assert objects == expected


def test_events_are_numbered_on_across_passes(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    passes.reconcile()
    import_texts([("b.yaml", f.to_yaml([f.claim("c2"), f.pod("p2", claims={"g": "c2"})]))])
    passes.reconcile()
    names = list(models.Event.objects.order_by("position").values_list("name", flat=True))
    assert len(names) == len(set(names)) >= 4
    assert names[-1].endswith(f".{len(names):08d}")


def test_a_pass_killed_while_saving_leaves_the_state_as_it_was(cluster_docs, monkeypatch):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    before = export_text()
    real_save = passes.save_plan

    def crash(cluster, plan):
        real_save(cluster, plan)  # everything written, then the worker dies
        raise SystemExit("killed")

    monkeypatch.setattr(passes, "save_plan", crash)
    with pytest.raises(SystemExit):
        passes.reconcile()
    assert export_text() == before and revision() == 1
    monkeypatch.setattr(passes, "save_plan", real_save)
    assert passes.reconcile().outcome == passes.SAVED
    assert _claim_status()["allocation"]


def _during_the_pass(monkeypatch, write):
    """Run ``write()`` while the pass computes (between its snapshot and its save)."""
    real_settle = passes.Simulation.settle
    done = []

    def settle_while_someone_writes(self):
        if not done:
            done.append(write())
        return real_settle(self)

    monkeypatch.setattr(passes.Simulation, "settle", settle_while_someone_writes)


def test_a_pass_saves_its_results_although_an_unrelated_object_was_written(cluster_docs,
                                                                          monkeypatch):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    _during_the_pass(monkeypatch, lambda: import_texts([("b.yaml", f.to_yaml([f.node("n9")]))]))
    result = passes.reconcile()
    assert (result.outcome, result.revision, result.complete) == (passes.SAVED, 3, False)
    assert result.again and result.conflicts == []
    assert _claim_status()["allocation"]
    assert models.Pod.objects.get(name="p1").node_name == "n1"
    assert models.Node.objects.filter(name="n9").exists()
    # The pass did not see n9: it has not reconciled revision 2 or 3 completely.
    assert models.Cluster.objects.get().reconciled_revision < 2
    monkeypatch.undo()
    again = passes.reconcile()
    assert again.complete and not again.again
    assert models.Cluster.objects.get().reconciled_revision == revision()


def test_a_pass_does_not_overwrite_an_object_changed_during_it(monkeypatch):
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    changed = f.pod("p1", claims={"gpu": "c1"}, node_selector={"zone": "b"})
    _during_the_pass(monkeypatch, lambda: import_texts([("b.yaml", f.to_yaml([changed]))]))
    result = passes.reconcile()
    assert result.outcome == passes.SAVED and not result.complete
    # p1 changed; c1 was allocated and reserved for p1 by this pass: decided together.
    assert result.conflicts == [("", "Pod", "default", "p1"),
                                ("", "ResourceClaim", "default", "c1")]
    pod = _pod("p1")
    assert pod.manifest["spec"]["nodeSelector"] == {"zone": "b"} and pod.node_name == ""
    assert models.ResourceClaim.objects.get(name="c1").status == "Pending"
    assert not models.Event.objects.filter(name__regex=r"^(p1|c1)\.").exists()
    # What did not conflict is saved.
    assert _pod("p2").node_name == _pod("p3").node_name == "n1"
    assert models.Event.objects.filter(name__startswith="p2.").exists()
    monkeypatch.undo()
    passes.reconcile()
    pod = _pod("p1")
    assert pod.status == "Unschedulable"  # no node has the label: the next pass decided
    assert pod.manifest["spec"]["nodeSelector"] == {"zone": "b"}
    assert models.ResourceClaim.objects.get(name="c1").status == "Pending"


def test_a_pass_saves_nothing_when_what_it_would_save_no_longer_fits(cluster_docs,
                                                                      monkeypatch):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    # n1 goes while the pass binds p1 to it: saving p1 would leave it bound to no node.
    _during_the_pass(monkeypatch, lambda: import_texts(
        [("b.yaml", f.to_yaml([d for d in cluster_docs
                               if d["metadata"]["name"] not in ("n1", "n1-cards")]))],
        replace=True))
    result = passes.reconcile()
    assert (result.outcome, result.revision) == (passes.STALE, 2)
    assert result.again
    assert "allocation" not in _claim_status()
    assert models.Pod.objects.get(name="p1").node_name == ""
    monkeypatch.undo()
    assert passes.reconcile().outcome == passes.SAVED
    assert models.Pod.objects.get(name="p1").node_name == "n2"


def test_a_pass_stops_at_once_when_a_checkpoint_says_the_lease_is_lost(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    calls = []

    def checkpoint():
        calls.append(1)
        if len(calls) == 2:
            raise passes.PassAborted("lost")

    result = passes.reconcile(checkpoint=checkpoint)
    assert result.outcome == passes.LOST_LEASE and len(calls) == 2
    assert revision() == 1 and "allocation" not in _claim_status()


def test_a_pass_without_the_lease_writes_nothing(cluster_docs):
    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    assert passes.reconcile(holds_lease=lambda: False).outcome == passes.LOST_LEASE
    assert revision() == 1 and "allocation" not in _claim_status()


# -- no single object stops a pass ---------------------------------------------------------

def _three_pods() -> list[dict]:
    docs = [f.node("n1"), f.named_slice("n1", [f.device(f"d{i}") for i in range(3)]),
            f.resource_class()]
    for i in (1, 2, 3):
        docs += [f.claim(f"c{i}"), f.pod(f"p{i}", claims={"gpu": f"c{i}"})]
    return docs


def _pod(name: str) -> models.Pod:
    return models.Pod.objects.get(name=name)


def _reports(name: str) -> list[str]:
    return list(models.Event.objects.filter(name__startswith=f"{name}.").filter(
        document__contains=f'"reason":"{faults.EVENT_REASON}"').values_list("document",
                                                                             flat=True))


def _others_were_reconciled() -> None:
    assert _pod("p1").node_name == _pod("p3").node_name == "n1"
    assert models.ResourceClaim.objects.get(name="c3").status == "Reserved"


def test_a_controller_failure_on_one_pod_is_saved_on_it_and_the_pass_goes_on(monkeypatch):
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    real = Scheduler._schedule

    def flaky(self, state, pod):
        if pod.name == "p2":
            raise RuntimeError("injected")
        return real(self, state, pod)

    monkeypatch.setattr(Scheduler, "_schedule", flaky)
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    assert result.failures == ["scheduler: RuntimeError: injected"]
    _others_were_reconciled()
    p2 = _pod("p2").manifest
    assert p2["metadata"]["annotations"][faults.ERROR_ANNOTATION] == \
        "scheduler: RuntimeError: injected"
    assert p2["status"]["conditions"][0]["reason"] == faults.SCHEDULER_ERROR
    assert len(_reports("p2")) == 1
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    assert passes.reconcile().outcome in (passes.SAVED, passes.UNCHANGED)
    assert len(_reports("p2")) == 1  # the same failure is not reported again


def test_an_object_that_cannot_be_written_keeps_its_document_and_is_left_alone(monkeypatch):
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    real = Pod.to_manifest

    def unwritable(self, shared=False):
        if self.name == "p2":
            raise RecursionError("maximum recursion depth exceeded while calling a Python object")
        return real(self, shared)

    monkeypatch.setattr(Pod, "to_manifest", unwritable)
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    # The pass ran again with p2 left alone from the start: nothing was allocated for it.
    assert models.ResourceClaim.objects.get(name="c2").status == "Pending"
    p2 = _pod("p2")
    assert p2.node_name == ""
    assert p2.manifest["metadata"]["annotations"][faults.ERROR_ANNOTATION].startswith(
        "writer: RecursionError")
    assert len(_reports("p2")) == 1
    assert passes.reconcile().outcome == passes.UNCHANGED  # a fixed point, even so


def _nested(depth: int) -> str:
    return '{"a":' * depth + "{}" + "}" * depth


def _store_nested(name: str, depth: int) -> None:
    """Give a stored pod a field nested ``depth`` deep (as stored before the API had a
    depth limit), written as text: building it as a dict here would overflow the stack."""
    row = _pod(name)
    document = row.manifest
    document["spec"]["deep"] = "HERE"
    text = canonical_json(document).replace('"HERE"', _nested(depth))
    models.Pod.objects.filter(pk=row.pk).update(document=text)


def test_a_pod_too_deep_to_copy_does_not_stop_the_worker_and_its_page_renders(admin_client):
    # Deep enough for the engine's copy (two frames a level) to overflow the stack, not
    # the JSON decoder and encoder (one each).
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    _store_nested("p2", sys.getrecursionlimit() * 6 // 10)
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    p2 = _pod("p2")
    assert p2.node_name == "" and faults.ERROR_ANNOTATION in p2.document
    page = admin_client.get("/pods/default/p2/")
    assert page.status_code == 200
    assert b"maximum recursion depth exceeded" in page.content


def test_a_row_that_cannot_be_loaded_is_left_out_reported_and_kept(admin_client):
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    _store_nested("p2", sys.getrecursionlimit() * 2)  # not even the JSON decoder copes
    stored = _pod("p2").document
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    assert _pod("p2").document == stored  # not changed, not deleted
    [report] = _reports("p2")
    assert "loader: RecursionError" in report
    import_texts([("b.yaml", f.to_yaml([f.node("n2")]))])
    passes.reconcile()
    assert len(_reports("p2")) == 1
    page = admin_client.get("/pods/default/p2/")
    assert page.status_code == 200
    assert b"cannot be loaded" in page.content
    assert admin_client.get("/pods/default/p1/").status_code == 200


def test_a_row_the_engine_refuses_is_left_out_and_the_others_are_reconciled():
    import_texts([("a.yaml", f.to_yaml(_three_pods()))])
    # Stored by an older version, say: p2 bound to a node that does not exist.
    models.Pod.objects.filter(name="p2").update(document=canonical_json(
        f.pod("p2", claims={"gpu": "c2"}, node_name="gone")))
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    [report] = _reports("p2")
    assert "spec.nodeName: node 'gone' not found" in report


def test_a_pass_allocates_v1_claims_and_writes_them_back():
    from tests import v1_cluster as v1

    import_texts([("v1.yaml", f.to_yaml(v1.cluster()))])
    result = passes.reconcile()
    assert result.outcome == passes.SAVED, result
    assert result.kinds == ["DeviceClass", "Event", "Node", "Pod", "ResourceClaim",
                            "ResourceSlice"]  # v1 objects gain their derived uids
    claim = models.ResourceClaimV1.objects.get(name="c1")
    assert (claim.status, claim.node_name, claim.drivers) == ("Reserved", "n1",
                                                              f",{v1.DRIVER},")
    status = claim.manifest["status"]
    assert status["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": v1.DRIVER, "pool": "n1", "device": "gpu-0-a"}]
    assert status["reservedFor"][0]["name"] == "p1"
    net = models.ResourceClaimV1.objects.get(name="net").manifest["status"]["allocation"]
    # A validRange step rounding is written as upstream's new BinarySI quantity (docs/v1.md).
    assert net["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": "1953125Ki"}
    assert (_pod("p1").node_name, _pod("p1").status) == ("n1", "Scheduled")
    assert passes.reconcile().outcome == passes.UNCHANGED  # a fixed point across passes


def test_a_v1_claim_allocated_for_a_pod_changed_during_the_pass_waits_with_it(monkeypatch):
    from tests import v1_cluster as v1

    import_texts([("v1.yaml", f.to_yaml(v1.cluster()))])
    changed = f.pod("p1", claims={"gpu": "c1", "net": "net"}, node_selector={"zone": "b"})
    _during_the_pass(monkeypatch, lambda: import_texts([("b.yaml", f.to_yaml([changed]))]))
    result = passes.reconcile()
    assert result.conflicts == [("", "Pod", "default", "p1"),
                                ("", "ResourceClaim", "default", "c1"),
                                ("", "ResourceClaim", "default", "net")]
    assert models.ResourceClaimV1.objects.get(name="c1").status == "Pending"


def test_a_node_group_with_v1_slice_specs_grows_and_its_slices_are_stored():
    from tests import v1_cluster as v1

    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "g"}, "spec": {
                 "minSize": 0, "maxSize": 1,
                 "template": {"metadata": {"labels": {"pool": "g"}},
                              "status": {"allocatable": {"cpu": "8", "memory": "32Gi",
                                                         "pods": "110"}}},
                 "resourceSlices": [{"driver": v1.DRIVER,
                                     "devices": [{"name": "gpu-0"}]}]}}
    import_texts([("g.yaml", f.to_yaml([group, v1.device_class(), v1.claim("c1"),
                                        f.pod("p1", claims={"gpu": "c1"})]))])
    for _ in range(3):  # the group grows, then the pod is placed on the new node
        if passes.reconcile().outcome == passes.UNCHANGED:
            break
    [node] = models.Node.objects.all()
    [slice_row] = models.ResourceSlice.objects.all()
    assert slice_row.manifest["spec"]["nodeName"] == node.name
    assert _pod("p1").node_name == node.name
    claim = models.ResourceClaimV1.objects.get(name="c1").manifest["status"]["allocation"]
    assert claim["devices"]["results"][0]["device"] == "gpu-0"


EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_a_pass_writes_what_a_full_serialisation_would(example, monkeypatch):
    """Only changed objects are serialised (``state.changed`` and the stable digests kept
    from earlier passes); the plan must be exactly the one serialising every object gives."""
    real = passes._documents
    checked = []

    def both(simulation, rows, quarantined):
        state = simulation.state
        known = sum(1 for o in state.all_objects() if o.key not in state.changed
                    and (row := rows.get(passes.identity_of(o))) is not None
                    and passes._digest(row.document) in passes._stable)
        desired, failed = real(simulation, rows, quarantined)
        full = {obj.key: canonical_json(obj.to_manifest())
                for obj in state.all_objects() if obj.key not in failed}
        assert {o.key: d for o, d in desired if o.key not in failed} == full
        checked.append(known)  # objects taken as stored, without serialising them
        return desired, failed

    monkeypatch.setattr(passes, "_documents", both)
    import_texts([(example.name, example.read_text())])
    passes.reconcile()
    pods = list(models.Pod.objects.order_by("position")[:1])
    if pods:  # a change, then passes that find most objects as they left them
        doc = pods[0].manifest
        doc["metadata"] = {"name": "copy-of-" + pods[0].name,
                           "namespace": doc["metadata"].get("namespace", "default")}
        doc.pop("status", None)
        doc.get("spec", {}).pop("nodeName", None)
        import_texts([("more.yaml", yaml.safe_dump(doc))])
    passes.reconcile()
    passes.reconcile()
    assert len(checked) == 3 and checked[-1] > 0


def test_a_pass_runs_with_the_cyclic_collector_paused_and_resumes_it(cluster_docs,
                                                                      monkeypatch):
    import gc

    import_texts([("a.yaml", f.to_yaml(cluster_docs))])
    real_settle, seen = passes.Simulation.settle, []

    def settle(self):
        seen.append(gc.isenabled())
        return real_settle(self)

    monkeypatch.setattr(passes.Simulation, "settle", settle)
    assert gc.isenabled()
    assert passes.reconcile().outcome == passes.SAVED
    assert seen == [False] and gc.isenabled()
