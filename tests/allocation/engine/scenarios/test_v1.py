"""What-if scenarios on a resource.k8s.io/v1 cluster (``scenarios/changes.py``,
``outcome.py``): adding a pod naming a v1 claim, pinning, removing a node, editing a
DeviceClass selector."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.scenarios import apply_changes, evaluate, refusal
from allocation.engine.simulation import simulate
from tests import factories as f
from tests import v1_cluster as v1


def _baseline() -> list[dict]:
    """Nodes n1 and n2 with a pool each; p1 and its claims settled on n1."""
    docs = [*v1.cluster(), f.node("n2"), *v1.resource_slices("n2")]
    output = simulate(load_texts([("v1.yaml", f.to_yaml(docs))])).output()
    return [d for d in output["items"] if d["kind"] != "Event"]


def _add(doc: dict) -> dict:
    return {"op": "add-object", "manifest": doc}


def test_the_baseline_outcome_holds_the_v1_claims_and_devices():
    outcome = evaluate(_baseline(), []).outcome
    assert outcome.pods["default/p1"] == "n1"
    assert outcome.claims["default/c1"] == [f"n1/{v1.DRIVER}/n1/gpu-0-a"]
    assert outcome.claims["default/net"] == [f"n1/{v1.DRIVER}/n1/nic-0"]
    assert outcome.classes == {"gpu": 1, "nic": 1}
    assert outcome.drivers == {v1.DRIVER: (2, 6)}


def test_adding_a_pod_naming_a_new_v1_claim_schedules_it():
    changes = [_add(v1.claim("c2")), _add(v1.claim("c3")),
               _add(f.pod("p2", claims={"gpu": "c2"})), _add(f.pod("p3", claims={"gpu": "c3"}))]
    result = evaluate(_baseline(), changes)
    # n1 has one GPU half left (gpu-0-b), n2 two: p2 takes n1's, p3 goes to n2.
    assert result.diff.newly_scheduled == [{"pod": "default/p2", "node": "n1"},
                                           {"pod": "default/p3", "node": "n2"}]
    assert result.diff.moved_claims == [
        {"claim": "default/c2", "before": [], "after": [f"n1/{v1.DRIVER}/n1/gpu-0-b"]},
        {"claim": "default/c3", "before": [], "after": [f"n2/{v1.DRIVER}/n2/gpu-0-a"]}]
    assert result.diff.classes == [{"class": "gpu", "before": 1, "after": 3},
                                   {"class": "nic", "before": 1, "after": 1}]


def test_pinning_a_v1_pod_elsewhere_moves_its_claims():
    pin = {"op": "pin-pod", "pod": "default/p1", "node": "n2"}
    result = evaluate(_baseline(), [pin])
    assert refusal(result, pin) is None
    assert result.diff.moved_pods == [{"pod": "default/p1", "from": "n1", "to": "n2"}]
    assert result.outcome.claims["default/c1"] == [f"n2/{v1.DRIVER}/n2/gpu-0-a"]


def test_unbinding_deallocates_a_v1_claim_no_pod_uses():
    applied = apply_changes(_baseline(), [{"op": "unpin-pod", "pod": "default/p1"}])
    claims = {d["metadata"]["name"]: d for d in applied.documents
              if d["kind"] == "ResourceClaim"}
    assert "status" not in claims["c1"] or "allocation" not in claims["c1"]["status"]
    assert "finalizers" not in claims["c1"]["metadata"]


def test_removing_a_node_removes_its_v1_slices_and_replans_its_pods():
    result = evaluate(_baseline(), [{"op": "remove-node", "node": "n1"}])
    names = {d["metadata"]["name"] for d in result.applied.documents}
    assert not names & {"n1-gpus", "n1-counters"} and "n2-gpus" in names
    assert result.outcome.pods["default/p1"] == "n2"
    assert result.diff.drivers == [{"driver": v1.DRIVER, "before": [2, 6], "after": [2, 3]}]


def test_a_device_class_selector_can_be_edited_and_is_checked():
    edit = {"op": "edit-selector", "kind": "DeviceClass", "object": "gpu",
            "path": "spec.selectors[0].cel.expression",
            "expression": 'device.driver == "other.example.com"'}
    result = evaluate(_baseline(), [edit, _add(v1.claim("c2")),
                                    _add(f.pod("p2", claims={"gpu": "c2"}))])
    assert result.outcome.pods["default/p2"] is None
    assert result.outcome.pods["default/p1"] == "n1"  # allocated claims keep their devices
    with pytest.raises(InvalidManifests) as info:
        evaluate(_baseline(), [{**edit, "expression": 'device.driver == '}])
    assert "(DeviceClass gpu): spec.selectors[0].cel.expression: " in str(info.value)
