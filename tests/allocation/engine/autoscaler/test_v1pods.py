"""The autoscaler's what-if for pods with resource.k8s.io/v1 claims (``autoscaler/v1pods.py``):
scale-up from zero with a node group's v1 slices, and the simulation interface."""

from __future__ import annotations

from allocation.engine.autoscaler import AutoscalerSimulation
from allocation.engine.objects import stable_uid
from allocation.engine.simulation import simulate
from tests.allocation.engine.autoscaler.builders import V1_DRIVER, v1_devices, v1_node_group
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request, slice_doc
from tests.factories import node, pod


def _pods(names: str, **requests) -> list[dict]:
    docs = []
    for name in names:
        docs.append(claim_doc([request(**requests)], name=f"claim-{name}"))
        docs.append(pod(f"pod-{name}", claims={"gpu": f"claim-{name}"}))
    return docs


def _items(output: dict, kind: str) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == kind}


def test_pods_with_v1_claims_scale_a_group_up_from_zero():
    simulation = simulate(load([node("cpu-1"), class_doc(), v1_node_group(max_size=2),
                                *_pods("abcde")]))
    output = simulation.output()
    assert simulation.failures == []
    pods = _items(output, "Pod")
    assert {n: p["spec"].get("nodeName") for n, p in pods.items()} == {
        "pod-a": "gpu-pool-1", "pod-b": "gpu-pool-1", "pod-c": "gpu-pool-2",
        "pod-d": "gpu-pool-2", "pod-e": None}
    assert pods["pod-e"]["status"]["conditions"][0]["message"] == (
        "0/3 nodes are available: 3 cannot allocate all claims.")
    assert _items(output, "ResourceSlice")["gpu-pool-2-gpu.example.com-0"] == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "gpu-pool-2-gpu.example.com-0", "uid": stable_uid(
            "ResourceSlice", None, "gpu-pool-2-gpu.example.com-0")},
        "spec": {"driver": V1_DRIVER, "devices": v1_devices(2), "nodeName": "gpu-pool-2",
                 "pool": {"name": "gpu-pool-2", "generation": 0, "resourceSliceCount": 1}}}
    results = {n: c["status"]["allocation"]["devices"]["results"]
               for n, c in _items(output, "ResourceClaim").items() if n != "claim-e"}
    assert results["claim-d"] == [{"request": "r", "driver": V1_DRIVER, "pool": "gpu-pool-2",
                                   "device": "gpu-1"}]
    events = [(e["reason"], e["involvedObject"]["name"], e["message"])
              for e in output["items"] if e["kind"] == "Event"
              and e["reason"] in ("TriggeredScaleUp", "NotTriggerScaleUp", "ScaledUpGroup")]
    assert events == [
        ("TriggeredScaleUp", "pod-a", "pod triggered scale-up of node group gpu-pool"),
        ("TriggeredScaleUp", "pod-c", "pod triggered scale-up of node group gpu-pool"),
        ("NotTriggerScaleUp", "pod-e",
         "pod didn't trigger scale-up: node group gpu-pool is at maxSize 2"),
        ("ScaledUpGroup", "gpu-pool", "scale-up for unschedulable pods: gpu-pool 0 -> 2 "
         "(max: 2): gpu-pool-1, gpu-pool-2")]


def test_a_group_whose_slices_cannot_serve_the_claim_is_not_grown():
    group = v1_node_group(slices=[{"driver": V1_DRIVER, "devices": v1_devices(1)}])
    simulation = simulate(load([node("cpu-1"), class_doc(), group,
                                *_pods("a", allocationMode="ExactCount", count=2)]))
    output = simulation.output()
    assert list(_items(output, "Node")) == ["cpu-1"]
    assert [e["message"] for e in output["items"] if e["kind"] == "Event"
            and e["reason"] == "NotTriggerScaleUp"] == [
        "pod didn't trigger scale-up: node group gpu-pool cannot fit it: cannot allocate "
        "all claims"]


def test_partitionable_counters_in_a_group_travel_with_each_new_node():
    counters = {"driver": V1_DRIVER, "sharedCounters": [
        {"name": "card", "counters": {"memory": {"value": "40Gi"}}}]}
    halves = {"driver": V1_DRIVER, "devices": [
        {"name": f"half-{i}", "consumesCounters": [
            {"counterSet": "card", "counters": {"memory": {"value": "20Gi"}}}]}
        for i in range(3)]}
    simulation = simulate(load([node("cpu-1"), class_doc(),
                                v1_node_group(max_size=3, slices=[counters, halves]),
                                *_pods("abc")]))
    output = simulation.output()
    pods = _items(output, "Pod")
    assert [pods[f"pod-{n}"]["spec"].get("nodeName") for n in "abc"] == [
        "gpu-pool-1", "gpu-pool-1", "gpu-pool-2"]  # two halves of 40Gi per card
    slices = _items(output, "ResourceSlice")
    assert sorted(slices) == ["gpu-pool-1-gpu.example.com-0", "gpu-pool-1-gpu.example.com-1",
                              "gpu-pool-2-gpu.example.com-0", "gpu-pool-2-gpu.example.com-1"]
    assert slices["gpu-pool-2-gpu.example.com-1"]["spec"]["pool"] == {
        "name": "gpu-pool-2", "generation": 0, "resourceSliceCount": 2}


def _simulation():
    docs = [node("node-1"), class_doc(), *_pods("ab"),
            slice_doc(v1_devices(1), name="node-1-gpus"),
            pod("pod-m", claims={"gpu": "claim-b", "more": "claim-missing"})]
    state = simulate(load(docs)).state
    return state, AutoscalerSimulation(state)


def test_fits_takes_nothing_bind_allocates_and_evict_deallocates():
    state, sim = _simulation()
    assert state.get("Pod", "default", "pod-a").node_name == "node-1"
    assert not sim.fits("pod-b", "node-1").ok
    assert sim.fits("pod-b", "node-1").message == "cannot allocate all claims"
    assert sim.evict_pod("pod-a").message == (
        "evicted default/pod-a from node-1; deallocated default/claim-a")
    assert sim.state.get("ResourceClaim", "default", "claim-a").allocation is None
    assert sim.fits("pod-b", "node-1") == sim.fits("pod-b", "node-1")  # nothing taken
    assert sim.fits("pod-b", "node-1").message == "fits node node-1"
    assert sim.bind_pod("pod-b", "node-1").ok
    claim = sim.state.get("ResourceClaim", "default", "claim-b")
    assert [r["device"] for r in claim.results] == ["gpu-0"]
    assert claim.meta.finalizers == ["resource.kubernetes.io/delete-protection"]
    assert not sim.place("pod-a").ok
    # the cluster the simulation started from is unchanged
    assert state.get("ResourceClaim", "default", "claim-a").allocation is not None
    assert state.get("Pod", "default", "pod-b").node_name is None


def test_place_says_why_no_node_takes_the_pod():
    state, sim = _simulation()
    status = sim.place("pod-b")
    assert (status.ok, status.message) == (
        False, "0/1 nodes are available: 1 cannot allocate all claims")
    assert sim.place("pod-m").message == (
        "0/1 nodes are available: could not find ResourceClaim \"default/claim-missing\"")


def test_pods_with_v1_template_claims_scale_up_too():
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [request(count=2)]}}}}
    docs = [node("cpu-1"), class_doc(), template, v1_node_group(max_size=3)]
    docs += [pod(f"pod-{n}", templates={"gpu": "gpu"}) for n in "ab"]
    output = simulate(load(docs)).output()
    pods = _items(output, "Pod")
    assert [pods[p]["spec"].get("nodeName") for p in ("pod-a", "pod-b")] == [
        "gpu-pool-1", "gpu-pool-2"]
    claim = pods["pod-b"]["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    assert [r["pool"] for r in _items(output, "ResourceClaim")[claim]["status"]["allocation"]
            ["devices"]["results"]] == ["gpu-pool-2", "gpu-pool-2"]


def test_a_fatal_allocator_error_is_reported_as_the_scheduler_reports_it():
    broken = class_doc(selectors=[{"cel": {
        "expression": 'device.attributes["gpu.example.com"].model == "x"'}}])
    docs = [node("node-1"), broken, slice_doc(v1_devices(1), name="node-1-gpus"),
            *_pods("a")]
    state = simulate(load(docs)).state
    sim = AutoscalerSimulation(state)
    status = sim.place("pod-a")
    assert not status.ok
    assert status.message.startswith('running "DynamicResources" filter plugin: ')
    assert "CEL runtime error" in status.message
    assert sim.bind_pod("pod-a", "node-1").message == status.message


def test_a_missing_device_class_holds_for_every_node():
    docs = [node("node-1"), node("node-2"), class_doc(),
            claim_doc([request(deviceClassName="absent")], name="c"),
            pod("p", claims={"gpu": "c"})]
    sim = AutoscalerSimulation(simulate(load(docs)).state)
    placed, bound = sim.place("p"), sim.bind_pod("p", "node-2")
    assert bound.message.endswith("device class absent does not exist")
    assert placed.message == f"0/2 nodes are available: {bound.message}"
