from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from allocation.engine.events import DEFAULT_START
from allocation.engine.manifests import InvalidManifests, load_documents
from allocation.engine.scenarios import evaluate, refusal
from allocation.engine.scenarios.documents import Documents
from allocation.engine.simulation import simulate
from tests.allocation.engine.scenarios.cluster import baseline_documents

ROOT = Path(__file__).resolve().parents[4]


def test_no_changes_no_difference():
    result = evaluate(baseline_documents(), [])
    assert result.diff.empty
    assert result.outcome.pods == {"default/p0": "worker-1", "default/p1": "worker-2",
                                   "default/p2": None}


def test_pinning_a_pending_pod_where_a_device_is_free():
    docs = baseline_documents()
    pin = {"op": "pin-pod", "pod": "default/p2", "node": "worker-2"}
    result = evaluate(docs, [{"op": "remove-object", "kind": "Pod", "name": "p1"}, pin])
    assert refusal(result, pin) is None
    assert result.outcome.pods["default/p2"] == "worker-2"
    assert result.diff.newly_scheduled == [{"pod": "default/p2", "node": "worker-2"}]
    assert [m["claim"] for m in result.diff.moved_claims] == ["default/p1-gpu",
                                                              "default/p2-gpu"]


def test_a_pod_back_in_the_queue_is_planned_again():
    result = evaluate(baseline_documents(), [{"op": "unpin-pod", "pod": "default/p1"}])
    # Document order: p1 comes before p2 and takes the free card again.
    assert result.outcome.pods["default/p1"] == "worker-2"
    assert result.diff.empty


def test_an_impossible_pin_is_explained_by_the_engine():
    pin = {"op": "pin-pod", "pod": "default/p2", "node": "worker-1"}
    result = evaluate(baseline_documents(), [pin])
    reason = refusal(result, pin)
    assert reason is not None
    assert reason.startswith("default/p2 cannot run on worker-1: cannot allocate all claims")
    assert "allocated to claim default/p0-gpu" in reason


def test_a_pin_to_a_node_with_too_few_devices_says_how_many_it_has():
    """The demo's wide-render pinned to t4-2: two of the three T4s it needs are free there."""
    docs = [d for d in yaml.safe_load_all((ROOT / "examples" / "demo.yaml").read_text()) if d]
    pin = {"op": "pin-pod", "pod": "default/wide-render", "node": "t4-2"}

    reason = refusal(evaluate(docs, [pin]), pin)

    assert reason == ("default/wide-render cannot run on t4-2: cannot allocate all claims - "
                      "needs 3 devices of class t4 on one node; 2 free ones match")


def test_removing_a_node_evicts_and_replans_its_pods():
    result = evaluate(baseline_documents(), [{"op": "remove-node", "node": "worker-1"}])
    assert result.diff.nodes_removed == ["worker-1"]
    assert result.outcome.pods["default/p0"] is None
    assert "default/p0" in {p["pod"] for p in result.diff.newly_pending}
    assert result.diff.drivers == [{"driver": "cards.dra.example.com", "before": [2, 2],
                                    "after": [1, 1]}]


def test_a_stricter_selector_leaves_pods_pending_and_strategy_switch_is_used():
    result = evaluate(baseline_documents(), [
        {"op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
         "path": "requests[0].namedResourcesWithAttributes.required[0].selector",
         "expression": 'attributes["memory"] >= "64Gi"'},
        {"op": "set-strategy", "strategy": "best-fit"}])
    # Allocated claims keep their devices (input status is honoured); p2 cannot start.
    assert result.applied.strategy == "best-fit"
    assert result.simulation.strategy == "best-fit"
    assert result.outcome.pods["default/p2"] is None


def test_a_broken_selector_is_an_input_problem_naming_object_and_field():
    with pytest.raises(InvalidManifests) as caught:
        evaluate(baseline_documents(), [
            {"op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
             "path": "requests[0].namedResourcesWithAttributes.required[0].selector",
             "expression": 'attributes["memory"] >='}])
    [problem] = caught.value.problems
    assert "(ResourceClaimParameters default/big): requests[0].namedResourcesWithAttributes" \
        ".required[0].selector: invalid CEL selector" in str(problem)


def test_adding_two_nodes_of_a_group_provisions_a_pending_atomic_request():
    from tests.allocation.engine.autoscaler.builders import (
        gpu_basics,
        node_group,
        pod_template,
        provreq,
    )
    from tests.factories import node, run

    docs = [node("worker-1"), *gpu_basics(), node_group("gpu-pool", max_size=0, devices=1),
            pod_template("worker"), provreq("req", pod_sets=[("worker", 2)])]
    stored = [o.to_manifest() for o in run(docs).state.all_objects()]
    result = evaluate(stored, [{"op": "add-nodes", "group": "gpu-pool", "count": 2}])
    [change] = result.diff.requests
    assert change["before"]["Provisioned"].startswith("False (CapacityIsNotFound)")
    assert change["after"]["Provisioned"].startswith("True")
    assert result.diff.nodes_added == ["gpu-pool-1", "gpu-pool-2"]


def test_an_evaluation_on_the_settled_baseline_never_lists_the_documents(monkeypatch):
    """The fork takes what changed from the edits' account: the list of every document
    after the changes is made only when asked for (``Applied.documents``), and then equals
    the edited documents."""
    docs = baseline_documents()
    settled = simulate(load_documents(("baseline", d) for d in docs), now=DEFAULT_START)
    listed = Documents.documents

    def refused(self):
        raise AssertionError("the documents were listed")

    monkeypatch.setattr(Documents, "documents", refused)
    pin = {"op": "pin-pod", "pod": "default/p2", "node": "worker-2"}
    changes = [{"op": "remove-object", "kind": "Pod", "name": "p1"}, pin]
    result = evaluate(docs, changes, settled=settled, now=DEFAULT_START)
    assert result.base is settled  # the fork was used
    assert result.outcome.pods["default/p2"] == "worker-2"
    monkeypatch.setattr(Documents, "documents", listed)
    assert result.applied.documents == evaluate(docs, changes).applied.documents
    assert [d["metadata"]["name"] for d in result.applied.documents
            if d["kind"] == "Pod"] == ["p0", "p2"]
