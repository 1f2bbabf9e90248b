"""Scheduling and allocation with named resources, including the seed's own examples."""

from __future__ import annotations

import json

from allocation.engine.constants import EXPLAIN_ANNOTATION
from tests.factories import (
    claim,
    claim_parameters,
    claim_template,
    class_parameters,
    device,
    named_slice,
    node,
    pod,
    resource_class,
    run,
)

# The structured-parameters seed's two cards on worker-1 (productName typo fixed).
SEED_CARDS = named_slice("worker-1", [
    device("gpu-0", UUID=("string", "GPU-ceea231c-4257-7af7-6726-efcb8fc2ace9"),
           driverVersion=("version", "1.2.3"), runtimeVersion=("version", "11.1.42"),
           memory=("quantity", "16Gi"), productName=("string", "ACME T1000 32GB")),
    device("gpu-1", UUID=("string", "GPU-6aa0af9e-a2be-88c8-d2b3-2240d25318d7"),
           driverVersion=("version", "1.2.3"), runtimeVersion=("version", "11.1.42"),
           memory=("quantity", "32Gi"), productName=("string", "ACME A4-PCIE-40GB")),
])
CARD_PARAMETERS = {"apiVersion": "dra.example.com/v1alpha1", "kind": "CardParameters",
                   "metadata": {"name": "my-parameters", "namespace": "user-namespace",
                                "uid": "foobar-uid"},
                   "spec": {"minimumRuntimeVersion": "v12.0.0", "minimumMemory": "32Gi",
                            "sharing": {"strategy": "TimeSliced"}}}


def _translated(selector: str) -> dict:
    """The seed's ResourceClaimParameters generated from CardParameters."""
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
            "metadata": {"name": "some-arbitrary-name", "namespace": "user-namespace"},
            "generatedFrom": {"name": "my-parameters", "kind": "CardParameters",
                              "apiGroup": "dra.example.com", "uid": "foobar-uid"},
            "vendorParameters": CARD_PARAMETERS,
            "requests": [{"driverName": "cards.dra.example.com", "namedResourcesWithAttributes": {
                "required": [{"selector": selector}]}}]}


def _seed_claim() -> dict:
    doc = claim("c", namespace="user-namespace")
    doc["spec"]["parametersRef"] = {"apiGroup": "dra.example.com", "kind": "CardParameters",
                                    "name": "my-parameters"}
    return doc


def _seed_docs(selector: str, extra: list | None = None) -> list[dict]:
    return [node("worker-1"), SEED_CARDS, resource_class("gpu"), CARD_PARAMETERS,
            _translated(selector), _seed_claim(), *(extra or []),
            pod("p", claims={"gpu": "c"}, namespace="user-namespace")]


def test_seed_example_as_written_matches_no_card():
    # Both seed cards run runtime 11.1.42, below the requested v12.0.0.
    sim = run(_seed_docs('attributes["runtimeVersion"] >= "v12.0.0" && '
                         'attributes["memory"] >= "32Gi"'))
    p = sim.state.get("Pod", "user-namespace", "p")
    assert p.node_name is None
    assert p.condition("PodScheduled")["message"] == \
        "0/1 nodes are available: 1 cannot allocate all claims."
    detail = json.loads(p.meta.annotations[EXPLAIN_ANNOTATION])
    [request] = detail["nodes"][0]["requests"]
    assert request["matching"] == []
    [refused] = request["refused"]
    assert refused["candidates"] == ["gpu-0", "gpu-1"] and "is false" in refused["reason"]


def test_seed_example_allocates_the_a4_card_with_the_vendor_snapshot():
    sim = run(_seed_docs('attributes["memory"] >= "32Gi"'))
    c = sim.state.get("ResourceClaim", "user-namespace", "c")
    [handle] = c.to_manifest()["status"]["allocation"]["resourceHandles"]
    assert handle["driverName"] == "cards.dra.example.com"
    data = handle["structuredData"]
    assert data["nodeName"] == "worker-1"
    assert data["namedResourcesWithAttributes"] == {"resources": [{"id": "gpu-1"}]}
    assert data["vendorClaimParameters"]["spec"]["sharing"] == {"strategy": "TimeSliced"}
    assert c.meta.finalizers == ["structured.dra.k8s.io/delete-protection"]
    assert c.reserved_pods() == ["p"]
    assert sim.state.get("Pod", "user-namespace", "p").node_name == "worker-1"


def test_seed_class_filter_limits_the_class_to_small_cards():
    filtered = resource_class("gpu", params="small")
    docs = _seed_docs('attributes["memory"] >= "8Gi"', [class_parameters(
        "small", 'attributes["memory"] <= "16Gi"')])
    docs[2] = filtered
    sim = run(docs)
    c = sim.state.get("ResourceClaim", "user-namespace", "c")
    assert c.allocation.handles[0]["structuredData"]["namedResourcesWithAttributes"] == {
        "resources": [{"id": "gpu-0"}]}


def _cluster(*devices_per_node: list[dict]) -> list[dict]:
    docs = [resource_class("gpu")]
    for index, devices in enumerate(devices_per_node):
        docs += [node(f"n{index}"), named_slice(f"n{index}", devices)]
    return docs


def test_backtracking_within_a_claim():
    # Request 1 accepts both devices, request 2 only the first: first-fit without
    # backtracking would take d0 for request 1 and fail.
    docs = _cluster([device("d0", size=("int", 2)), device("d1", size=("int", 1))]) + [
        claim_parameters("two", 'ints["size"] >= 1', 'ints["size"] >= 2'),
        claim("c", params="two"), pod("p", claims={"x": "c"})]
    sim = run(docs)
    ids = sim.state.get("ResourceClaim", "default", "c").allocation.handles[0][
        "structuredData"]["namedResourcesWithAttributes"]["resources"]
    assert ids == [{"id": "d1"}, {"id": "d0"}]


def test_backtracking_across_the_claims_of_a_pod():
    docs = _cluster([device("d0", size=("int", 2)), device("d1", size=("int", 1))]) + [
        claim_parameters("any", 'ints["size"] >= 1'), claim_parameters("big", 'ints["size"] >= 2'),
        claim("a", params="any"), claim("b", params="big"),
        pod("p", claims={"first": "a", "second": "b"})]
    sim = run(docs)
    assert sim.state.get("Pod", "default", "p").node_name == "n0"
    held = {c.name: c.allocation.picks[0][1].id for c in sim.state.claims()}
    assert held == {"a": "d1", "b": "d0"}


def test_nodes_in_name_order_and_reasons_counted_like_kube_scheduler():
    docs = [resource_class("gpu"), node("b-busy", cpu="1"), node("a-cordoned", unschedulable=True),
            node("c-other", labels={"zone": "x"}), node("d-gpu"),
            named_slice("d-gpu", [device("d0")]), claim_parameters("any", "true"),
            claim_template("t", params="any"),
            pod("first", templates={"gpu": "t"}, cpu="2", node_selector=None),
            pod("second", templates={"gpu": "t"}, cpu="2")]
    sim = run(docs)
    first = sim.state.get("Pod", "default", "first")
    second = sim.state.get("Pod", "default", "second")
    assert first.node_name == "c-other" or first.node_name == "d-gpu"
    assert first.node_name == "d-gpu"  # c-other has no devices
    assert sim.state.get("ResourceClaim", "default", "first-gpu").owner_pod == "first"
    assert second.condition("PodScheduled")["message"] == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable, "
        "2 cannot allocate all claims.")


def test_node_selector_and_resources():
    docs = [node("a", labels={"zone": "x"}, memory="1Gi", pods="1"),
            node("b", labels={"zone": "y"}),
            pod("one", memory="512Mi", node_selector={"zone": "x"}),
            pod("two", memory="512Mi", node_selector={"zone": "x"})]
    sim = run(docs)
    assert sim.state.get("Pod", "default", "one").node_name == "a"
    message = sim.state.get("Pod", "default", "two").condition("PodScheduled")["message"]
    assert message == ("0/2 nodes are available: 1 Too many pods, 1 node(s) didn't match "
                       "Pod's node affinity/selector.")


def test_non_shareable_claim_makes_the_second_pod_wait_and_shareable_does_not():
    docs = _cluster([device("d0")]) + [
        claim_parameters("solo", "true"), claim_parameters("shared", "true", shareable=True),
        claim("one", params="solo"), claim("many", params="shared"),
        pod("a", claims={"x": "one"}), pod("b", claims={"x": "one"})]
    sim = run(docs)
    waiting = sim.state.get("Pod", "default", "b").condition("PodScheduled")["message"]
    assert 'resourceclaim "default/one" is in use by pod "a"' in waiting
    docs = _cluster([device("d0")]) + [
        claim_parameters("shared", "true", shareable=True), claim("many", params="shared"),
        pod("a", claims={"x": "many"}), pod("b", claims={"x": "many"})]
    sim = run(docs)
    assert sim.state.get("ResourceClaim", "default", "many").reserved_pods() == ["a", "b"]
    assert {p.node_name for p in sim.state.pods()} == {"n0"}


def test_explanation_names_the_claim_holding_a_device():
    docs = _cluster([device("d0")]) + [claim_parameters("any", "true"),
                                       claim_template("t", params="any"),
                                       pod("a", templates={"g": "t"}),
                                       pod("b", templates={"g": "t"})]
    sim = run(docs)
    detail = json.loads(sim.state.get("Pod", "default", "b").meta.annotations[EXPLAIN_ANNOTATION])
    [request] = detail["nodes"][0]["requests"]
    assert request["refused"] == [{"reason": "allocated to claim default/a-g",
                                   "candidates": ["d0"]}]


def test_pending_twins_each_name_their_own_claim_as_if_explained_alone():
    """Pods of one template share one failure (the placement cache), but the annotation
    names each pod's own claim, byte for byte what explaining that pod alone writes."""
    def annotations(*names: str) -> dict[str, str]:
        docs = _cluster([device("d0")]) + [claim_parameters("any", "true"),
                                           claim_template("t", params="any")]
        sim = run(docs + [pod(name, templates={"g": "t"}) for name in names])
        return {p.meta.name: p.meta.annotations.get(EXPLAIN_ANNOTATION)
                for p in sim.state.pods()}

    together = annotations("a", "b", "c")
    for name in ("b", "c"):
        [request] = json.loads(together[name])["nodes"][0]["requests"]
        assert request["claim"] == f"default/{name}-g"
    assert together["c"] == annotations("a", "c")["c"]


def test_runtime_error_in_a_selector_is_no_match_and_explained():
    docs = _cluster([device("d0", size=("int", 1))]) + [
        claim_parameters("bad", 'quantities["missing"] >= "1Gi"'), claim("c", params="bad"),
        pod("p", claims={"x": "c"})]
    sim = run(docs)
    detail = json.loads(sim.state.get("Pod", "default", "p").meta.annotations[EXPLAIN_ANNOTATION])
    reason = detail["nodes"][0]["requests"][0]["refused"][0]["reason"]
    assert "failed" in reason and "missing" in reason


def test_missing_class_parameters_and_template_are_pending_reasons():
    docs = [node("n0"), claim("c", class_name="nope"), pod("p", claims={"x": "c"}),
            pod("q", templates={"x": "no-template"}), pod("r", claims={"x": "absent"})]
    sim = run(docs)

    def message(name):
        return sim.state.get("Pod", "default", name).condition("PodScheduled")["message"]

    assert message("p") == ('0/1 nodes are available: resourceclaim "default/c": '
                            "resourceclass 'nope' not found.")
    assert 'resourceclaimtemplate "default/no-template" not found' in message("q")
    assert 'resourceclaim "default/absent" not found' in message("r")


def test_class_vendor_parameters_without_generated_object_name_the_class():
    # A cluster-scoped vendor object referenced by a class is found (it has no namespace),
    # but without a ResourceClassParameters generated from it the claim waits and says so.
    vendor = {"apiVersion": "dra.example.com/v1alpha1", "kind": "CardClassParameters",
              "metadata": {"name": "fast"}, "spec": {}}
    rc = resource_class("gpu")
    rc["parametersRef"] = {"apiGroup": "dra.example.com", "kind": "CardClassParameters",
                           "name": "fast"}
    docs = [node("worker-1"), SEED_CARDS, rc, vendor, claim("c"), pod("p", claims={"gpu": "c"})]
    sim = run(docs)
    message = sim.state.get("Pod", "default", "p").condition("PodScheduled")["message"]
    assert "have no ResourceClassParameters generated from them yet" in message, message
    sim = run(docs[:3] + docs[4:])
    message = sim.state.get("Pod", "default", "p").condition("PodScheduled")["message"]
    assert "CardClassParameters 'fast' of class 'gpu' not found" in message, message


def test_required_node_affinity_pins_a_pod_by_node_name():
    pinned = pod("pinned")
    pinned["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}
    sim = run([node("a"), node("b"), pod("free"), pinned])
    assert sim.state.get("Pod", "default", "free").node_name == "a"
    assert sim.state.get("Pod", "default", "pinned").node_name == "b"


def test_node_affinity_is_validated():
    bad = pod("p")
    bad["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "Is"}]}]}}}
    from tests.factories import problems_of, to_yaml
    [problem] = problems_of(to_yaml([bad]))
    assert "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution." \
        "nodeSelectorTerms[0].matchFields[0].operator" in problem


def _tainted(doc: dict, *taints: dict) -> dict:
    doc.setdefault("spec", {})["taints"] = list(taints)
    return doc


def _tolerating(doc: dict, *tolerations: dict) -> dict:
    doc["spec"]["tolerations"] = list(tolerations)
    return doc


def test_node_taints_keep_pods_off_unless_tolerated_and_twins_do_not_share_a_failure():
    # kube-scheduler's TaintToleration filter: the control-plane and the GPU taint refuse
    # a pod that tolerates neither; its twin tolerating the GPU taint (the same placement
    # cache signature otherwise) is not told the first one's failure
    docs = [resource_class("gpu"), claim_parameters("any", "true"),
            claim_template("t", params="any"),
            _tainted(node("a-control"), {"key": "node-role.kubernetes.io/control-plane",
                                         "effect": "NoSchedule"}),
            _tainted(node("b-gpu"), {"key": "nvidia.com/gpu", "value": "present",
                                     "effect": "NoSchedule"},
                     {"key": "spot", "effect": "PreferNoSchedule"}),
            named_slice("a-control", [device("a0")]), named_slice("b-gpu", [device("b0")]),
            pod("plain", templates={"gpu": "t"}),
            _tolerating(pod("tolerant", templates={"gpu": "t"}),
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})]
    sim = run(docs)
    plain = sim.state.get("Pod", "default", "plain")
    assert plain.node_name is None
    assert plain.condition("PodScheduled")["message"] == (
        "0/2 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint "
        "{nvidia.com/gpu: present}.")
    explain = json.loads(plain.meta.annotations[EXPLAIN_ANNOTATION])
    assert explain["nodes"][1]["diff"] == [{"check": "taint",
                                            "taint": "nvidia.com/gpu=present:NoSchedule"}]
    assert {"kind": "nodeTaint", "taint": "nvidia.com/gpu=present:NoSchedule", "nodes": 1} \
        in explain["suggestions"]
    assert sim.state.get("Pod", "default", "tolerant").node_name == "b-gpu"


def test_a_pod_tolerating_the_cordon_may_land_on_a_cordoned_node():
    docs = [node("a-cordoned", unschedulable=True),
            pod("plain"),
            _tolerating(pod("daemon"), {"key": "node.kubernetes.io/unschedulable",
                                        "operator": "Exists", "effect": "NoSchedule"})]
    sim = run(docs)
    assert sim.state.get("Pod", "default", "plain").node_name is None
    assert sim.state.get("Pod", "default", "daemon").node_name == "a-cordoned"
