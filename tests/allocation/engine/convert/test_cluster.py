"""``convert.cluster``: the whole input in order, pass-through of non-DRA kinds, pods, node
groups, removed kinds, pool counts, and the quickstart converted and allocated in v1."""

from __future__ import annotations

from pathlib import Path

from allocation.engine.cel import compile_device_selector
from allocation.engine.convert import attribute_types, convert_loaded
from allocation.engine.manifests import load_files
from allocation.engine.v1 import Allocator, make_profile

ROOT = Path(__file__).resolve().parents[4]

OTHERS = """
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec:
  containers: [{name: c, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, source: {resourceClaimTemplateName: t}}]
---
apiVersion: v1
kind: PodTemplate
metadata: {name: pt, namespace: team}
template:
  spec:
    containers: [{name: c}]
    resourceClaims: [{name: gpu, source: {resourceClaimName: shared}}]
---
apiVersion: resource.k8s.io/v1alpha2
kind: PodSchedulingContext
metadata: {name: p, namespace: team}
spec: {selectedNode: node-1}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 3}
"""


def test_pods_go_flat_others_pass_through_and_scheduling_contexts_are_impossible(convert):
    items, warnings, result = convert(OTHERS)
    assert [i["kind"] for i in items] == ["Namespace", "Pod", "PodTemplate", "Widget"]
    assert items[1]["spec"]["resourceClaims"] == [{"name": "gpu",
                                                   "resourceClaimTemplateName": "t"}]
    assert items[2]["template"]["spec"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimName": "shared"}]
    assert items[3] == {"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"size": 3}}
    assert warnings == ["in.yaml:4 (PodSchedulingContext team/p): <document>: cannot "
                        "convert: PodSchedulingContext was removed in v1 (1.32); nothing "
                        "replaces it"]
    assert not result.complete
    lossy, _, _ = convert(OTHERS, lossy=True)
    assert lossy == items  # no approximation exists


NODE_GROUP = """
apiVersion: draplanner.io/v1alpha1
kind: NodeGroup
metadata: {name: t4-pool}
spec:
  minSize: 0
  maxSize: 3
  template:
    metadata: {labels: {gpu: t4}}
  resourceSlices:
  - driverName: gpu.example.com
    namedResourcesWithAttributes:
    - name: t4-0
      attributes: [{name: memory, quantity: 16Gi}]
  resourceCapacities:
  - driverName: nic.example.com
    instances:
    - id: port-0
      apiVersion: counter.dra.config.k8s.io/v1alpha1
      kind: Capacity
      data: {metadata: {labels: {}}, count: 1}
"""


def test_node_group_inline_slices_become_v1_slice_specs(convert):
    items, warnings, result = convert(NODE_GROUP)
    assert items[0]["spec"] == {
        "minSize": 0, "maxSize": 3, "template": {"metadata": {"labels": {"gpu": "t4"}}},
        "resourceSlices": [
            {"driver": "gpu.example.com", "pool": {"generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "t4-0", "capacity": {"memory": {"value": "16Gi"}}}]},
            {"driver": "nic.example.com", "pool": {"generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "port-0-0",
                          "attributes": {"instance": {"string": "port-0"}}}]}]}
    assert warnings == [
        "in.yaml:1 (NodeGroup t4-pool): spec.resourceSlices[0].namedResourcesWithAttributes[0]"
        ".attributes[0]: quantity attribute 'memory' becomes capacity 'memory': "
        "matchAttribute cannot use it",
        "in.yaml:1 (NodeGroup t4-pool): spec.resourceCapacities[0]: counter capacities "
        "become v1 slice specs in spec.resourceSlices"]
    assert result.complete


def test_a_node_group_capacity_of_another_numeric_model_has_no_v1_form(convert):
    text = NODE_GROUP.replace("kind: Capacity", "kind: Bandwidth").replace(
        "counter.dra.config.k8s.io/v1alpha1", "bandwidth.example.com/v1")
    items, warnings, result = convert(text)
    assert items == [] and not result.complete
    assert ("in.yaml:1 (NodeGroup t4-pool): spec.resourceCapacities[0].instances[0]: cannot "
            "convert: numeric model bandwidth.example.com/v1 Bandwidth has no v1 "
            "form") in warnings


def test_attribute_types_come_from_every_slice_and_node_group():
    loaded = load_files([ROOT / "examples" / "demo.yaml"])
    types = attribute_types(loaded.objects)
    assert types["gpu.example.com"]["memory"] == "quantity"
    assert types["gpu.example.com"]["driverVersion"] == "version"


def _quickstart():
    loaded = load_files([ROOT / "examples" / "quickstart.yaml"])
    return convert_loaded(loaded)


def test_the_quickstart_converts_with_compiling_cel_and_allocates_in_v1():
    result = _quickstart()
    assert result.complete
    expressions = [selector["cel"]["expression"] for item in result.items
                   for selector in _selectors(item)]
    assert len(expressions) == 2
    for expression in expressions:
        compile_device_selector(expression)
    by_kind: dict[str, list[dict]] = {}
    for item in result.items:
        by_kind.setdefault(item["kind"], []).append(item)
    assert sorted(by_kind) == ["CardParameters", "DeviceClass", "Node", "Pod",
                               "ResourceClaimTemplate", "ResourceSlice"]
    template = by_kind["ResourceClaimTemplate"][0]
    allocator = Allocator(make_profile("1.36", ""), slices=by_kind["ResourceSlice"],
                          classes=by_kind["DeviceClass"])
    picked = []
    for index, node in enumerate(by_kind["Node"]):
        claim = {"metadata": {"name": f"c{index}", "namespace": "default", "uid": str(index)},
                 "spec": template["spec"]["spec"]}
        outcome = allocator.allocate(node, [claim])
        assert outcome.fits
        picked.append([(r["pool"], r["device"])
                       for r in outcome.allocations[0]["devices"]["results"]])
    # As in the seed simulation: the 32Gi card with runtime 12.1.0 on worker-1 (gpu-0 is
    # 16Gi with runtime 11), the only card of worker-2.
    assert picked == [[("worker-1", "gpu-1")], [("worker-2", "gpu-0")]]


def _selectors(item: dict) -> list[dict]:
    if item["kind"] == "DeviceClass":
        return item["spec"]["selectors"]
    if item["kind"] == "ResourceClaimTemplate":
        return [s for r in item["spec"]["spec"]["devices"]["requests"]
                for s in r["exactly"].get("selectors", ())]
    return []


def test_conversion_is_deterministic():
    assert _quickstart().items == _quickstart().items


def test_pools_count_every_slice_of_a_node_and_driver(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {name: a}
    spec:
      nodeName: node-1
      driverName: d.example.com
      namedResourcesWithAttributes: [{name: x, attributes: []}]
    ---
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {name: b, labels: {team: x}}
    spec:
      nodeName: node-1
      driverName: d.example.com
      namedResourcesWithAttributes: [{name: y, attributes: []}]
    """
    items, _, _ = convert(text)
    assert [i["spec"]["pool"] for i in items] == [
        {"name": "node-1", "generation": 1, "resourceSliceCount": 2}] * 2
    assert [i["metadata"] for i in items] == [{"name": "a"},
                                              {"name": "b", "labels": {"team": "x"}}]


def test_a_device_name_twice_in_one_v1_pool_is_impossible(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {name: a}
    spec:
      nodeName: node-1
      driverName: d.example.com
      namedResourcesWithAttributes: [{name: x, attributes: []}]
    ---
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceCapacity
    metadata: {name: b}
    nodeName: node-1
    driverName: d.example.com
    instances:
    - {id: x, apiVersion: counter.dra.config.k8s.io/v1alpha1, kind: Capacity,
       data: {metadata: {labels: {}}, count: 1}}
    """
    items, warnings, result = convert(text, counters="consumable")
    assert [i["metadata"]["name"] for i in items] == ["a"]
    assert warnings[1] == ("in.yaml:2 (NodeResourceCapacity b): instances: cannot convert: "
                           "device 'x' is also in NodeResourceSlice a, in the same v1 pool "
                           "'node-1' of driver 'd.example.com'")
    assert not result.complete


def test_two_leaves_of_one_dns_label_are_impossible_and_lossy_keeps_the_first(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {name: s}
    spec:
      nodeName: n1
      driverName: gpu.example.com
      partitionable:
        resourceInstances:
        - {name: a, partitions: [{name: b-c, resourceInstances: [{name: d}]}]}
        - {name: a-b, partitions: [{name: c, resourceInstances: [{name: d}]}]}
    """
    items, warnings, result = convert(text)
    assert items == [] and not result.complete
    assert warnings[-1] == ("in.yaml:1 (NodeResourceSlice s): spec: cannot convert: two "
                            "devices become 'a-b-c-d' in the v1 pool 'n1': their seed names "
                            "differ only in characters a DNS label cannot hold (the first is "
                            "kept)")
    items, _warnings, _result = convert(text, lossy=True)
    names = [d["name"] for i in items for d in i["spec"].get("devices") or ()]
    assert names.count("a-b-c-d") == 1


def test_a_class_the_input_has_in_v1_already_is_not_written_twice(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: ResourceClass
    metadata: {name: gpu}
    driverName: gpu.example.com
    structuredParameters: true
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu}
    spec:
      selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
    """
    for lossy in (False, True):
        items, warnings, _result = convert(text, lossy=lossy)
        assert [(i["kind"], i["metadata"]["name"]) for i in items] == [("DeviceClass", "gpu")]
        assert items[0]["spec"]["selectors"][0]["cel"]["expression"] == \
            'device.driver == "gpu.example.com"'
        [warning] = warnings  # (with lossy, said to be written as an approximation)
        assert warning.startswith("in.yaml:1 (ResourceClass gpu): metadata.name: cannot "
                                  "convert: the input has a DeviceClass 'gpu' already: the "
                                  "class would be two objects of one name (the input's is "
                                  "kept)")


def test_a_count_past_the_unit_bound_is_impossible_not_millions_of_devices(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceCapacity
    metadata: {name: vfs}
    nodeName: n1
    driverName: nic.example.com
    instances:
    - {id: vf, apiVersion: counter.dra.config.k8s.io/v1beta1, kind: Capacity,
       data: {count: 100000000}}
    ---
    apiVersion: draplanner.io/v1alpha1
    kind: DriverSimulation
    metadata: {name: fpga}
    spec:
      controllerName: fpga.example.com
      pools: [{name: p, count: 100000000}, {name: q, count: 2}]
    """
    _items, warnings, _result = convert(text)
    assert "in.yaml:1 (NodeResourceCapacity vfs): instances[0].data.count: cannot convert: " \
        "100000000 units would be 100000000 devices; the conversion writes at most 4096 " \
        "per instance (--counters consumable makes one device of any count)" in warnings
    assert "in.yaml:2 (DriverSimulation fpga): spec.pools[0].count: cannot convert: " \
        "100000000 devices; the approximation writes at most 4096 per pool" in warnings
    items, _warnings, _result = convert(text, lossy=True)
    pools = {i["spec"]["pool"]["name"]: len(i["spec"].get("devices") or ())
             for i in items if i["kind"] == "ResourceSlice"}
    assert pools == {"n1": 0, "q": 2}


def test_converted_demo_claims_never_fail_scheduling_on_devices_lacking_an_attribute():
    # full-a100 selects on "profile", which only the A100 partitions have: without the
    # presence guards every T4 node would raise a fatal CEL error in v1.
    result = convert_loaded(load_files([ROOT / "examples" / "demo.yaml"]), lossy=True)
    by_kind: dict[str, list[dict]] = {}
    for item in result.items:
        by_kind.setdefault(item["kind"], []).append(item)
    allocator = Allocator(make_profile("1.36", ""), slices=by_kind["ResourceSlice"],
                          classes=by_kind["DeviceClass"])
    fits = {}
    for claim in by_kind["ResourceClaim"]:
        claim = {**claim, "metadata": {**claim["metadata"], "uid": claim["metadata"]["name"]}}
        fits[claim["metadata"]["name"]] = [
            node["metadata"]["name"] for node in by_kind["Node"]
            if allocator.allocate(node, [claim]).fits]
    assert fits == {"trainer-gpu": ["a100-1", "a100-2"], "full-a100": ["a100-1", "a100-2"],
                    "render-gpu": ["t4-1", "t4-2"], "three-t4s": [],
                    "fpga-accel": ["a100-1", "t4-1"]}  # the nodes of rack r1


def test_slices_from_different_seed_kinds_get_distinct_names(convert):
    text = """
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {name: node-1}
    spec:
      nodeName: node-1
      driverName: d.example.com
      namedResourcesWithAttributes: [{name: x, attributes: []}]
    ---
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceCapacity
    metadata: {name: node-1}
    nodeName: node-1
    driverName: e.example.com
    instances:
    - {id: y, apiVersion: counter.dra.config.k8s.io/v1alpha1, kind: Capacity,
       data: {metadata: {labels: {}}, count: 1}}
    """
    items, _, _ = convert(text)
    assert [i["metadata"]["name"] for i in items] == ["node-1", "node-1-2"]


def test_warnings_about_list_items_name_the_item():
    from allocation.engine.manifests import load_texts

    text = """{"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
      {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "PodSchedulingContext",
       "metadata": {"name": "p", "namespace": "team"}, "spec": {}}]}"""
    texts = [("in.json", text)]
    result = convert_loaded(load_texts(texts), texts=texts)
    assert [str(w) for w in result.report.warnings] == [
        "in.json:1 (PodSchedulingContext team/p): items[1]: cannot convert: "
        "PodSchedulingContext was removed in v1 (1.32); nothing replaces it"]
