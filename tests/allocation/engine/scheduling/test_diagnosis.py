"""``scheduling/diagnosis.py``: what each node lacks, the nearest nodes and the suggestions in
the explain annotation, on the demo's pending pods and on purpose-made clusters (seed and
resource.k8s.io/v1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.manifests import load_files
from allocation.engine.objects import Node, Pod
from allocation.engine.scheduling import diagnosis, fit
from allocation.engine.scheduling.needs import PodNeeds
from allocation.engine.scheduling.reasons import (
    R_CPU,
    R_MEMORY,
    R_PODS,
    R_SELECTOR,
    R_UNSCHEDULABLE,
)
from allocation.engine.simulation import simulate
from allocation.engine.state import ClusterState
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.manifests.v1_docs import request as v1_request
from tests.factories import (
    claim,
    claim_parameters,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)
from tests.factories import device as seed_device

ROOT = Path(__file__).resolve().parents[4]
V1_DRV = "gpu.example.com"


def _explain(output: dict, name: str) -> dict:
    found = next(i for i in output["items"]
                 if i["kind"] == "Pod" and i["metadata"]["name"] == name)
    return json.loads(found["metadata"]["annotations"]["draplanner.io/explain"])


@pytest.fixture(scope="module")
def demo() -> dict:
    return simulate(load_files([str(ROOT / "examples" / "demo.yaml")])).output()


def _diffs(annotation: dict) -> dict[str, list[dict]]:
    return {entry["node"]: entry.get("diff") for entry in annotation["nodes"]}


# -- the demo's pending pods ---------------------------------------------------------------
def test_h100_job_is_told_the_label_it_wants_and_the_one_each_node_has(demo):
    annotation = _explain(demo, "h100-job")

    assert _diffs(annotation) == {
        name: [{"check": "nodeSelector", "key": "gpu", "wants": "h100", "has": has}]
        for name, has in (("a100-1", "a100"), ("a100-2", "a100"), ("t4-1", "t4"),
                          ("t4-2", "t4"))}
    assert annotation["suggestions"] == [{"kind": "label", "key": "gpu", "wants": "h100",
                                          "values": ["a100", "t4"]}]
    # every node fails by one label: the nearest are the first in the scheduler's order
    assert annotation["nearest"] == [{"node": "a100-1"}, {"node": "a100-2"}, {"node": "t4-1"}]


def test_wide_render_needs_three_alike_devices_once_per_node_not_once_per_request(demo):
    annotation = _explain(demo, "wide-render")

    item = {"check": "devices", "class": "t4", "request": "requests[0]", "wants": 3}
    assert _diffs(annotation) == {"a100-1": [{**item, "free": 0}], "a100-2": [{**item, "free": 0}],
                                  "t4-1": [{**item, "free": 1}], "t4-2": [{**item, "free": 2}]}
    # t4-2 lacks one device, t4-1 two (renderer holds t4-0 there), the A100 nodes three
    assert annotation["nearest"] == [{"node": "t4-2"}, {"node": "t4-1"}, {"node": "a100-1"}]
    assert "suggestions" not in annotation  # two T4s match: no selector is to blame


def test_the_demo_annotations_name_no_claim_in_what_they_add(demo):
    """What the diagnosis adds suits every pod of a signature: it names no claim."""
    for name in ("h100-job", "wide-render"):
        annotation = _explain(demo, name)
        added = [annotation.get("nearest"), annotation.get("suggestions"),
                 [entry.get("diff") for entry in annotation["nodes"]]]
        assert "default/" not in json.dumps(added)


# -- node checks -----------------------------------------------------------------------------
def _affinity(pod_doc: dict, *terms: dict) -> dict:
    pod_doc["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}
    return pod_doc


def test_a_pod_pinned_by_node_affinity_is_told_the_affinity_not_a_node_selector():
    pinned = _affinity(pod("p"), {"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["elsewhere"]}]},
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]})
    annotation = _explain(run([node("n1", {"zone": "c"}), node("n2"), pinned]).output(), "p")

    assert _diffs(annotation)["n1"] == [
        {"check": "nodeAffinity", "term": 0, "key": "metadata.name", "operator": "In",
         "values": ["elsewhere"], "has": "n1"},
        {"check": "nodeAffinity", "term": 1, "key": "zone", "operator": "In",
         "values": ["a", "b"], "has": "c"}]
    assert _diffs(annotation)["n2"][1] == {"check": "nodeAffinity", "term": 1, "key": "zone",
                                           "operator": "In", "values": ["a", "b"]}
    assert annotation["suggestions"] == [{"kind": "nodeAffinity"}]


def test_every_failed_node_check_is_listed_with_what_is_asked_and_what_is_free():
    busy = pod("busy", cpu="6", memory="24Gi", node_name="n1")
    docs = [node("n1", {"gpu": "a100"}, cpu="8", memory="32Gi", pods="1", unschedulable=True),
            node("n2", {"gpu": "h100"}, cpu="16", memory="64Gi"), busy,
            pod("big", cpu="4", memory="16Gi", node_selector={"gpu": "h100", "zone": "z"})]

    diffs = _diffs(_explain(run(docs).output(), "big"))

    assert diffs["n1"] == [
        {"check": "cordoned"},
        {"check": "nodeSelector", "key": "gpu", "wants": "h100", "has": "a100"},
        {"check": "nodeSelector", "key": "zone", "wants": "z"},
        {"check": "pods", "max": 1},
        {"check": "cpu", "wants": "4", "free": "2"},
        {"check": "memory", "wants": "16Gi", "free": "8Gi"}]
    assert diffs["n2"] == [{"check": "nodeSelector", "key": "zone", "wants": "z"}]


_LABELS = st.dictionaries(st.sampled_from(["gpu", "zone"]), st.sampled_from(["a", "b"]),
                          max_size=2)


@settings(max_examples=200, deadline=None)
@given(labels=_LABELS, wanted=_LABELS, cordoned=st.booleans(),
       cpu=st.integers(0, 4), used_cpu=st.integers(0, 4), memory=st.integers(0, 4),
       pods=st.integers(0, 2), affinity=st.sampled_from([None, "a", "b"]))
def test_the_first_check_a_node_fails_is_the_schedulers_refusal(
        labels, wanted, cordoned, cpu, used_cpu, memory, pods, affinity):
    """``node_diff`` mirrors ``fit.node_refusal``: its first item is the refusal's check,
    and NodeResourcesFit's refusal names every resource the diff finds short."""
    doc = node("n", labels, cpu="4", memory="4Gi", pods="1", unschedulable=cordoned)
    state = ClusterState()
    state.add_node(Node(doc))
    spec = pod("p", cpu=str(cpu), memory=f"{memory}Gi", node_selector=wanted)
    if affinity:
        _affinity(spec, {"matchExpressions": [
            {"key": "zone", "operator": "In", "values": [affinity]}]})
    if pods:
        state.charge(Pod(pod("other", cpu=f"{used_cpu}")), "n", 1)
    the_pod = Pod(spec)

    refusal = fit.node_refusal(state, the_pod, state.nodes["n"], PodNeeds())
    diff = diagnosis.node_diff(state, the_pod, state.nodes["n"])

    first = {"cordoned": R_UNSCHEDULABLE, "nodeSelector": R_SELECTOR,
             "nodeAffinity": R_SELECTOR, "cpu": R_CPU, "memory": R_MEMORY, "pods": R_PODS}
    if diff and diff[0]["check"] in ("pods", "cpu", "memory"):
        assert refusal == "; ".join(first[i["check"]] for i in diff)
    else:
        assert (first[diff[0]["check"]] if diff else None) == refusal


# -- devices ---------------------------------------------------------------------------------
def _seed_cluster(free_per_node: list[int]) -> list[dict]:
    """Nodes n00.. with as many free cards as ``free_per_node`` says and a pod ``want3``
    asking for three cards of one claim."""
    docs = [resource_class("gpu"), claim_parameters("three", *(['true'] * 3)),
            claim("c", params="three"), pod("want3", claims={"gpu": "c"})]
    for index, free in enumerate(free_per_node):
        name = f"n{index:02}"
        docs += [node(name), named_slice(name, [seed_device(f"card-{i}") for i in range(free)])]
    return docs


def test_the_nearest_node_may_lie_past_the_detailed_ones_and_carries_its_own_diff():
    free = [1] * 10 + [2] + [1] * 5
    annotation = _explain(run(_seed_cluster(free)).output(), "want3")

    assert len(annotation["nodes"]) == 8 and annotation["omittedNodes"] == 8
    nearest = annotation["nearest"]
    assert nearest[0] == {"node": "n10", "diff": [
        {"check": "devices", "class": "gpu", "request": "requests[0]", "wants": 3, "free": 2}]}
    assert nearest[1:] == [{"node": "n00"}, {"node": "n01"}]


def test_nodes_past_the_diagnosed_ones_are_not_ranked():
    past = 8 + diagnosis.EXTRA_DIAGNOSED
    free = [1] * past + [2]
    annotation = _explain(run(_seed_cluster(free)).output(), "want3")

    assert [n["node"] for n in annotation["nearest"]] == ["n00", "n01", "n02"]


def _v1_docs(*devices: dict, requests: list | None = None) -> list[dict]:
    klass = class_doc(selectors=[{"cel": {"expression": f'device.driver == "{V1_DRV}"'}}])
    return [node("node-1"), klass, slice_doc(list(devices)), claim_doc(requests),
            pod("waiting", claims={"gpu": "c"})]


def _v1_explain(docs: list[dict]) -> dict:
    return _explain(simulate(load(docs)).output(), "waiting")


def _model(name: str, model: str) -> dict:
    return device(name, attributes={"model": {"string": model}})


def test_a_v1_request_wants_its_count_and_counts_the_devices_that_match():
    docs = _v1_docs(_model("gpu-0", "a"), _model("gpu-1", "a"),
                    requests=[v1_request(count=3)])

    [entry] = _v1_explain(docs)["nodes"]

    assert entry["diff"] == [{"check": "devices", "class": "gpu", "request": "r", "wants": 3,
                              "free": 2}]


def test_a_v1_request_with_subrequests_is_the_one_short_by_the_least():
    sub = [{"name": "big", "deviceClassName": "gpu", "count": 4},
           {"name": "small", "deviceClassName": "gpu", "count": 3}]
    docs = _v1_docs(_model("gpu-0", "a"), requests=[{"name": "r", "firstAvailable": sub}])

    [entry] = _v1_explain(docs)["nodes"]

    assert entry["diff"] == [{"check": "devices", "class": "gpu", "request": "r/small",
                              "wants": 3, "free": 1}]


def test_enough_devices_for_each_request_but_not_together():
    expr = f'device.attributes["{V1_DRV}"].model'
    docs = _v1_docs(_model("gpu-0", "a"), requests=[
        v1_request("x", selectors=[{"cel": {"expression": f'{expr} in ["a", "b"]'}}]),
        v1_request("y", selectors=[{"cel": {"expression": f'{expr} == "a"'}}])])

    [entry] = _v1_explain(docs)["nodes"]

    assert [i["check"] for i in entry["diff"]] == ["devices", "devices", "together"]
    assert [(i["wants"], i["free"]) for i in entry["diff"][:2]] == [(1, 1), (1, 1)]


def test_a_selector_no_free_device_satisfies_is_suggested():
    sel = f'device.attributes["{V1_DRV}"].model == "h100"'
    docs = _v1_docs(_model("gpu-0", "a"), _model("gpu-1", "b"),
                    requests=[v1_request(selectors=[{"cel": {"expression": sel}}])])

    annotation = _v1_explain(docs)

    assert annotation["suggestions"] == [{"kind": "selector", "class": "gpu", "request": "r",
                                          "selector": sel, "nodes": 1}]


def _seed_memory_cluster(wanted: int, memory_per_node: dict[str, list[str]]) -> list[dict]:
    big = 'attributes["memory"] >= "64Gi"'
    docs = [resource_class("gpu"), claim_parameters("big", *([big] * wanted)),
            claim("c", params="big"), pod("p", claims={"gpu": "c"})]
    for name, sizes in memory_per_node.items():
        docs += [node(name), named_slice(name, [seed_device(f"card-{i}", memory=("quantity", m))
                                                for i, m in enumerate(sizes)])]
    return docs


def test_a_device_taint_no_request_tolerates_is_suggested():
    taint = {"key": "maintenance", "value": "bios", "effect": "NoSchedule"}
    docs = _v1_docs(device("gpu-0", taints=[taint]), device("gpu-1", taints=[taint]))

    annotation = _v1_explain(docs)

    assert annotation["suggestions"] == [{"kind": "toleration", "class": "gpu", "request": "r",
                                          "taint": "maintenance=bios:NoSchedule", "nodes": 1}]


def test_a_seed_selector_no_device_satisfies_is_suggested():
    docs = _seed_memory_cluster(1, {"n1": ["16Gi"], "n2": ["32Gi"]})

    annotation = _explain(run(docs).output(), "p")

    assert annotation["suggestions"] == [{
        "kind": "selector", "class": "gpu", "request": "requests[0]",
        "selector": 'attributes["memory"] >= "64Gi"', "nodes": 2}]


def test_no_selector_is_suggested_when_a_device_satisfies_it():
    docs = _seed_memory_cluster(2, {"n1": ["16Gi"], "n2": ["32Gi", "80Gi"]})

    annotation = _explain(run(docs).output(), "p")

    assert "suggestions" not in annotation
    assert _diffs(annotation)["n2"] == [{"check": "devices", "class": "gpu",
                                         "request": "requests[0]", "wants": 2, "free": 1}]


def test_pending_twins_are_diagnosed_once_per_pass(monkeypatch):
    """The diagnosis runs once per pod signature, not once per pending pod."""
    calls = []
    real = diagnosis.annotate
    monkeypatch.setattr(diagnosis, "annotate", lambda *a, **k: calls.append(1) or real(*a, **k))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": claim_doc(requests=[v1_request(count=2)])["spec"]}}
    docs = _v1_docs(_model("gpu-0", "a"))[:3] + [template] + [
        pod(f"twin-{i}", templates={"gpu": "t"}) for i in range(5)]

    output = simulate(load(docs)).output()

    texts = {json.dumps(_explain(output, f"twin-{i}").get("nearest")) for i in range(5)}
    assert len(texts) == 1
    assert 1 <= len(calls) <= 3  # once per scheduler pass that found them pending
