"""allocation.services.reconcile: no single object stops a pass (docs/console.md,
"Failures"): a controller's failure, an object that cannot be written, a row that cannot
be loaded or that the engine refuses."""

import sys

import pytest

from allocation import models
from allocation.engine import faults
from allocation.engine.objects import Pod
from allocation.engine.scheduler import Scheduler
from allocation.models import canonical_json
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def _pod(name: str) -> models.Pod:
    return models.Pod.objects.get(name=name)


def _reports(name: str) -> list[str]:
    return list(models.Event.objects.filter(name__startswith=f"{name}.").filter(
        document__contains=f'"reason":"{faults.EVENT_REASON}"').values_list("document",
                                                                             flat=True))


def _others_were_reconciled() -> None:
    assert _pod("p1").node_name == _pod("p3").node_name == "n1"
    assert models.ResourceClaim.objects.get(name="c3").status == "Reserved"


def test_a_controller_failure_on_one_pod_is_saved_on_it_and_the_pass_goes_on(three_pods,
                                                                             monkeypatch):
    import_texts([("a.yaml", f.to_yaml(three_pods))])
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


def test_an_object_that_cannot_be_written_keeps_its_document_and_is_left_alone(three_pods,
                                                                              monkeypatch):
    import_texts([("a.yaml", f.to_yaml(three_pods))])
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


def test_a_pod_too_deep_to_copy_does_not_stop_the_worker_and_its_page_renders(three_pods,
                                                                             admin_client):
    # Deep enough for the engine's copy (two frames a level) to overflow the stack, not
    # the JSON decoder and encoder (one each).
    import_texts([("a.yaml", f.to_yaml(three_pods))])
    _store_nested("p2", sys.getrecursionlimit() * 6 // 10)
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    p2 = _pod("p2")
    assert p2.node_name == "" and faults.ERROR_ANNOTATION in p2.document
    page = admin_client.get("/pods/default/p2/")
    assert page.status_code == 200
    assert b"maximum recursion depth exceeded" in page.content


def test_a_row_that_cannot_be_loaded_is_left_out_reported_and_kept(three_pods, admin_client):
    import_texts([("a.yaml", f.to_yaml(three_pods))])
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


def test_a_row_the_engine_refuses_is_left_out_and_the_others_are_reconciled(three_pods):
    import_texts([("a.yaml", f.to_yaml(three_pods))])
    # Stored by an older version, say: p2 bound to a node that does not exist.
    models.Pod.objects.filter(name="p2").update(document=canonical_json(
        f.pod("p2", claims={"gpu": "c2"}, node_name="gone")))
    result = passes.reconcile()
    assert result.outcome == passes.SAVED
    _others_were_reconciled()
    [report] = _reports("p2")
    assert "spec.nodeName: node 'gone' not found" in report
