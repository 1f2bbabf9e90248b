"""Node groups' blueprints (``autoscaler/nodegroups.py``): capacityFromNode copies a node's
resource.k8s.io/v1 slices, renamed after each new node."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from allocation.engine.autoscaler import blueprints
from allocation.engine.simulation import simulate
from tests.allocation.engine.autoscaler.builders import V1_DRIVER, v1_devices, v1_node_group
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, request, slice_doc
from tests.factories import node, pod, to_yaml

NIC = "nic.example.com"
ROOT = Path(__file__).resolve().parents[4]


def _source() -> list[dict]:
    """node-1: a GPU pool named after the node (a counters slice without a node and a
    devices slice), an older generation of it, and a NIC pool with another name."""
    counters = slice_doc(name="node-1-counters", nodeName=None, sharedCounters=[
        {"name": "card", "counters": {"memory": {"value": "40Gi"}}}],
        pool={"name": "node-1", "generation": 2, "resourceSliceCount": 2})
    del counters["spec"]["nodeName"]
    gpus = slice_doc([{"name": "gpu-0", "consumesCounters": [
        {"counterSet": "card", "counters": {"memory": {"value": "40Gi"}}}]}],
        name="node-1-gpus", pool={"name": "node-1", "generation": 2, "resourceSliceCount": 2})
    stale = slice_doc(v1_devices(4, "old"), name="node-1-gpus-old",
                      pool={"name": "node-1", "generation": 1, "resourceSliceCount": 1})
    nics = slice_doc(v1_devices(1, "nic"), name="node-1-nics", driver=NIC,
                     pool={"name": "rack-a-node-1", "resourceSliceCount": 1})
    other = slice_doc(v1_devices(1), name="node-2-gpus", nodeName="node-2",
                      pool={"name": "node-2", "resourceSliceCount": 1})
    gpu_only = class_doc(selectors=[{"cel": {"expression": f'device.driver == "{V1_DRIVER}"'}}])
    return [node("node-1"), node("node-2"), gpu_only, counters, gpus, stale, nics, other]


def test_capacity_from_node_copies_the_nodes_newest_v1_slices():
    state = simulate(load([*_source(), v1_node_group(capacity_from="node-1")])).state
    [blueprint] = blueprints(state)
    _node, slices, _capacities = blueprint.make("gpu-pool-7")
    assert [(s.name, s.pool_name, s.pool_generation, s.resource_slice_count, s.node_name,
             s.device_names) for s in slices] == [
        ("gpu-pool-7-gpu.example.com-0", "gpu-pool-7", 2, 2, "gpu-pool-7", []),
        ("gpu-pool-7-gpu.example.com-1", "gpu-pool-7", 2, 2, "gpu-pool-7", ["gpu-0"]),
        ("gpu-pool-7-nic.example.com-0", "rack-a-gpu-pool-7", 0, 1, "gpu-pool-7", ["nic-0"])]
    assert slices[0].shared_counters == [
        {"name": "card", "counters": {"memory": {"value": "40Gi"}}}]


def test_pods_scale_up_a_group_that_copies_a_node():
    docs = [*_source(), v1_node_group(capacity_from="node-1", max_size=1)]
    for name in "abc":
        docs += [claim_doc([request()], name=f"claim-{name}"),
                 pod(f"pod-{name}", claims={"gpu": f"claim-{name}"})]
    output = simulate(load(docs)).output()
    placed = {i["metadata"]["name"]: i["spec"].get("nodeName") for i in output["items"]
              if i["kind"] == "Pod"}
    assert placed == {"pod-a": "node-1", "pod-b": "node-2", "pod-c": "gpu-pool-1"}
    claim = next(i for i in output["items"] if i["kind"] == "ResourceClaim"
                 and i["metadata"]["name"] == "claim-c")
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": V1_DRIVER, "pool": "gpu-pool-1", "device": "gpu-0"}]
    new = next(i for i in output["items"] if i["kind"] == "Node"
               and i["metadata"]["name"] == "gpu-pool-1")
    assert new["metadata"]["annotations"] == {
        "autoscaling.k8s.io/node-resource-capacity": "node-1"}


def test_simulate_exits_2_naming_the_group_and_field_of_a_bad_v1_slice_spec(tmp_path):
    group = v1_node_group(slices=[{"driver": V1_DRIVER, "pool": {"name": "mine"},
                                   "devices": [{"name": "gpu-0"}, {"name": "gpu-0"}]}])
    path = tmp_path / "group.yaml"
    path.write_text(to_yaml([node("cpu-1"), group]))
    result = subprocess.run([sys.executable, "manage.py", "simulate", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{path}:2 (NodeGroup gpu-pool): spec.resourceSlices[0].pool.name: must not be set: "
        "the pool of each new node is named after the node",
        f"{path}:2 (NodeGroup gpu-pool): spec.resourceSlices[0].devices[1].name: duplicate "
        "name 'gpu-0' (also at spec.resourceSlices[0].devices[0])",
        "2 problem(s); nothing was simulated."]


def test_simulate_warns_of_a_gated_field_of_a_group_slice_and_grows_without_it(tmp_path):
    group = v1_node_group(slices=[{"driver": V1_DRIVER, "devices": [
        {"name": "gpu-0", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}])
    path = tmp_path / "group.yaml"
    path.write_text(to_yaml([node("cpu-1"), class_doc(), group, claim_doc(name="c"),
                             pod("p", claims={"gpu": "c"})]))
    result = subprocess.run([sys.executable, "manage.py", "simulate", str(path),
                             "--kubernetes-version", "1.34"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: {path}:3 (NodeGroup gpu-pool): spec.resourceSlices[0].devices[0].taints: "
        "field dropped: feature gate DRADeviceTaints is off in Kubernetes 1.34"]
    assert "nodeName: gpu-pool-1" in result.stdout  # the taint is gone: the pod fits there


def test_a_groups_template_taints_its_new_nodes_and_only_a_tolerating_pod_scales_it():
    group = {"apiVersion": "draplanner.io/v1alpha1", "kind": "NodeGroup",
             "metadata": {"name": "gpu-pool"}, "spec": {"minSize": 0, "maxSize": 2, "template": {
                 "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                 "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}}}
    plain, tolerant = pod("plain", cpu="1"), pod("tolerant", cpu="1")
    tolerant["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    state = simulate(load([group, plain, tolerant])).state
    assert state.get("Pod", "default", "tolerant").node_name == "gpu-pool-1"
    assert state.nodes["gpu-pool-1"].taints == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert state.get("Pod", "default", "plain").node_name is None
    assert list(state.nodes) == ["gpu-pool-1"]  # the plain pod grew nothing


def test_a_new_node_is_not_named_so_its_objects_would_replace_another_nodes():
    # n1's slices are named as nodes gpu-pool-1's and -3's would be: those names are passed
    from allocation.engine.autoscaler.nodegroups import free_names
    from allocation.engine.manifests import load_texts
    from allocation.engine.state import ClusterState
    from tests.factories import named_slice

    taken = named_slice("n1", [])
    taken["metadata"]["name"] = "gpu-pool-1-slice-0"
    v1 = slice_doc([], name="gpu-pool-3-gpu.example.com-0", nodeName="n1")
    state = ClusterState.build(load_texts([("c.yaml", to_yaml([node("n1"), taken, v1,
                                                               node("gpu-pool-2")]))]))
    assert free_names(state, "gpu-pool", 2) == ["gpu-pool-4", "gpu-pool-5"]
