"""Pods kube-scheduler leaves alone (``allocation/engine/scheduling/gates.py``): scheduling
gates and other schedulers, in both dialects, and what the autoscaler does for them."""

from __future__ import annotations

from allocation.engine.simulation import simulate
from allocation.engine.writer import dump
from tests import factories as f
from tests.allocation.engine.autoscaler.builders import v1_node_group
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_outputs import items

_GATED = ("False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")


def _gated(doc: dict, *names: str) -> dict:
    doc["spec"]["schedulingGates"] = [{"name": n} for n in names or ("example.com/quota",)]
    return doc


def _condition(output: dict, name: str) -> tuple | None:
    found = [c for c in (items(output, "Pod")[name].get("status") or {}).get("conditions") or ()
             if c["type"] == "PodScheduled"]
    return (found[0]["status"], found[0]["reason"], found[0]["message"]) if found else None


def _events(output: dict) -> list[tuple[str, str]]:
    return [(e["reason"], e["involvedObject"]["name"]) for e in output["items"]
            if e["kind"] == "Event"]


def _one_gpu_v1(*pods: dict) -> list[dict]:
    return [f.node("node-1"), class_doc(), slice_doc([device("gpu-0")], nodeName="node-1"),
            *pods]


def test_a_gated_v1_pod_is_marked_as_the_api_server_does_and_takes_nothing():
    # the gated pod comes first; the one GPU goes to the pod after it
    docs = _one_gpu_v1(claim_doc(name="c-gated"), claim_doc(name="c-next"),
                       _gated(f.pod("gated", claims={"gpu": "c-gated"})),
                       f.pod("next", claims={"gpu": "c-next"}))
    output = simulate(load(docs)).output()
    pods, claims = items(output, "Pod"), items(output, "ResourceClaim")
    assert "nodeName" not in pods["gated"]["spec"]
    assert _condition(output, "gated") == _GATED
    assert "allocation" not in (claims["c-gated"].get("status") or {})
    assert pods["next"]["spec"]["nodeName"] == "node-1"
    assert _events(output) == [("Scheduled", "next")]  # kube-scheduler never saw it


def test_a_gated_pods_template_claim_is_made_but_not_allocated():
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one", "namespace": "default"},
                "spec": {"spec": claim_doc(name="x")["spec"]}}
    pod = _gated(f.pod("gated", templates={"gpu": "one"}))
    output = simulate(load(_one_gpu_v1(template, pod))).output()
    [claim] = items(output, "ResourceClaim").values()
    assert claim["metadata"]["ownerReferences"][0]["name"] == "gated"
    assert "allocation" not in (claim.get("status") or {})
    assert items(output, "Pod")["gated"]["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


def test_a_gated_pod_keeps_the_condition_it_was_stored_with():
    pod = _gated(f.pod("gated"))
    pod["status"] = {"conditions": [{"type": "PodScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": "earlier"}]}
    output = simulate(load([f.node("node-1"), pod])).output()
    assert _condition(output, "gated") == ("False", "Unschedulable", "earlier")
    assert "nodeName" not in items(output, "Pod")["gated"]["spec"]


def test_a_pod_for_another_scheduler_is_left_as_it_is():
    pod = f.pod("other", claims={"gpu": "c"})
    pod["spec"]["schedulerName"] = "volcano"
    output = simulate(load(_one_gpu_v1(claim_doc(name="c"), pod))).output()
    assert "nodeName" not in items(output, "Pod")["other"]["spec"]
    assert _condition(output, "other") is None
    assert _events(output) == []


def test_a_gated_seed_pod_is_not_scheduled_either():
    docs = [f.node("n1"), f.named_slice("n1", [f.device("d0")]), f.resource_class(),
            f.claim("c1"), _gated(f.pod("p1", claims={"gpu": "c1"}))]
    output = simulate(load(docs)).output()
    assert _condition(output, "p1") == _GATED
    assert not (items(output, "ResourceClaim")["c1"].get("status") or {}).get("allocation")


def test_the_autoscaler_adds_no_node_for_a_gated_pod():
    # as the cluster autoscaler, which lists only pods kube-scheduler found Unschedulable
    docs = [f.node("cpu-1"), class_doc(), v1_node_group(max_size=2), claim_doc(name="c"),
            _gated(f.pod("gated", claims={"gpu": "c"}))]
    output = simulate(load(docs)).output()
    assert list(items(output, "Node")) == ["cpu-1"]
    assert _condition(output, "gated") == _GATED


def test_without_its_gates_the_pod_is_scheduled():
    docs = _one_gpu_v1(claim_doc(name="c"), _gated(f.pod("p", claims={"gpu": "c"})))
    assert "nodeName" not in items(simulate(load(docs)).output(), "Pod")["p"]["spec"]
    docs[-1]["spec"]["schedulingGates"] = []
    output = simulate(load(docs)).output()
    assert items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"
    assert dump(output, "yaml") == dump(simulate(load(docs)).output(), "yaml")
