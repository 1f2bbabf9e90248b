"""``convert.devices`` and ``convert.slices``, spec section 5 rows 1-2: named resources and
partition trees as v1 ResourceSlices, with exact documents and warnings."""

from __future__ import annotations

import yaml

NAMED = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: node-1-cards}
spec:
  nodeName: node-1
  driverName: cards.example.com
  namedResourcesWithAttributes:
  - name: gpu.0
    attributes:
    - {name: memory, quantity: 16Gi}
    - {name: runtimeVersion, version: v12.1}
    - {name: models, stringSlice: [a, b]}
    - {name: a_very_long_attribute_name_over_32, int: 7}
    - {name: mig, bool: true}
  - name: gpu-1
    attributes:
    - {name: memory, quantity: 32Gi}
"""

NAMED_V1 = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-cards}
spec:
  driver: cards.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      runtimeVersion: {version: 12.1.0}
      models: {string: "a,b"}
      a_very_long_attribute_n_f431d761: {int: 7}
      mig: {bool: true}
    capacity:
      memory: {value: 16Gi}
  - name: gpu-1
    capacity:
      memory: {value: 32Gi}
"""


def test_named_resources_become_one_slice_per_node_pool(convert):
    items, warnings, result = convert(NAMED)
    assert items == [yaml.safe_load(NAMED_V1)]
    where = "in.yaml:1 (NodeResourceSlice node-1-cards): spec.namedResourcesWithAttributes"
    # One warning per item: memory on both devices is one item.
    assert warnings == [
        f"{where}[0].attributes[0]: quantity attribute 'memory' becomes capacity 'memory': "
        "matchAttribute cannot use it",
        f"{where}[0].attributes[2]: stringSlice 'models' has no v1 type (1.35): written as "
        "a comma-joined string; selectors split it",
        f"{where}[0].attributes[3]: attribute name 'a_very_long_attribute_name_over_32' is "
        "not a v1 id (a C identifier of at most 32 characters): renamed to "
        "'a_very_long_attribute_n_f431d761'",
        f"{where}[0].name: device 'gpu.0' is named 'gpu-0' (a DNS label) in v1",
    ]
    assert result.complete


LONG_STRING = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: s}
spec:
  nodeName: node-1
  driverName: cards.example.com
  namedResourcesWithAttributes:
  - name: gpu-0
    attributes: [{name: serial, string: "%s"}]
""" % ("x" * 70)


def test_a_string_over_64_characters_is_impossible_and_cut_with_lossy(convert):
    items, warnings, result = convert(LONG_STRING)
    assert items == [] and not result.complete
    message = ("in.yaml:1 (NodeResourceSlice s): spec.namedResourcesWithAttributes[0]"
               ".attributes[0]: cannot convert: string value is 70 characters, more than "
               "v1's 64: cut to 64")
    assert warnings == [message]
    items, warnings, _ = convert(LONG_STRING, lossy=True)
    assert items[0]["spec"]["devices"][0]["attributes"] == {"serial": {"string": "x" * 64}}
    assert warnings == [message + " (written as an approximation: --lossy)"]


PARTITIONS = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: node-1-parts}
spec:
  nodeName: node-1
  driverName: cards.example.com
  partitionable:
    commonAttributes:
    - name: base
      attributes: [{name: product, string: A4}]
    resourceInstances:
    - name: gpu-2
      commonAttributesRefs: [base]
      partitions:
      - name: halves
        resourceInstances:
        - {name: half-0, attributes: [{name: memory, quantity: 8Gi}]}
        - {name: half-1, attributes: [{name: memory, quantity: 8Gi}]}
      - name: quarters
        resourceInstances:
        - {name: quarter-0}
        - {name: quarter-1}
        - {name: quarter-2}
        - {name: quarter-3}
    - name: gpu-3
      attributes: [{name: product, string: T1}]
"""


def _leaf(name: str, units: int, memory: str | None = None) -> dict:
    device = {"name": name, "attributes": {"product": {"string": "A4"}},
              "consumesCounters": [{"counterSet": "gpu-2",
                                    "counters": {"units": {"value": str(units)}}}]}
    if memory:
        device["capacity"] = {"memory": {"value": memory}}
    return device


def test_partition_trees_become_a_counter_set_per_root_and_leaf_devices(convert):
    items, warnings, result = convert(PARTITIONS)
    pool = {"name": "node-1", "generation": 1, "resourceSliceCount": 2}
    assert items == [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "node-1-parts-counters-gpu-2"},
         "spec": {"driver": "cards.example.com", "nodeName": "node-1", "pool": pool,
                  "sharedCounters": [{"name": "gpu-2",
                                      "counters": {"units": {"value": "4"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "node-1-parts"},
         "spec": {"driver": "cards.example.com", "nodeName": "node-1", "pool": pool,
                  "devices": [
                      _leaf("gpu-2-halves-half-0", 2, "8Gi"),
                      _leaf("gpu-2-halves-half-1", 2, "8Gi"),
                      *(_leaf(f"gpu-2-quarters-quarter-{i}", 1) for i in range(4)),
                      {"name": "gpu-3", "attributes": {"product": {"string": "T1"}}}]}},
    ]
    where = "in.yaml:1 (NodeResourceSlice node-1-parts): spec.partitionable.resourceInstances"
    assert warnings == [
        f"{where}[0]: partition tree 'gpu-2' becomes counter set 'gpu-2' (4 units): leaves "
        "of different partition groups can now be mixed (the seed locks one scheme at a "
        "time); needs DRAPartitionableDevices",
        f"{where}[0].partitions[0].resourceInstances[0].attributes: quantity attribute "
        "'memory' becomes capacity 'memory': matchAttribute cannot use it",
    ]
    assert result.complete


def test_a_slice_of_more_than_64_counter_devices_is_split(convert):
    leaves = ", ".join(f"{{name: p-{i}}}" for i in range(70))
    text = f"""
    apiVersion: resource.k8s.io/v1alpha2
    kind: NodeResourceSlice
    metadata: {{name: big}}
    spec:
      nodeName: node-1
      driverName: cards.example.com
      partitionable:
        resourceInstances:
        - name: gpu-0
          partitions:
          - name: tiny
            resourceInstances: [{leaves}]
    """
    items, warnings, _ = convert(text)
    assert [(i["metadata"]["name"], len(i["spec"].get("devices", ()))) for i in items] == [
        ("big-counters-gpu-0", 0), ("big-0", 64), ("big-1", 6)]
    assert {i["spec"]["pool"]["resourceSliceCount"] for i in items} == {3}
    assert warnings[-1] == ("in.yaml:1 (NodeResourceSlice big): spec: 70 devices are split "
                            "over 2 slices (v1 holds at most 64 per slice)")
