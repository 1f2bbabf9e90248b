"""``convert.slices``, spec section 5 rows 3 and 5: counter instances (units or consumable
capacity) with their claims, and the DriverSimulation approximation."""

from __future__ import annotations

import pytest

COUNTERS = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceCapacity
metadata: {name: node-1-vfs}
nodeName: node-1
driverName: nic.example.com
instances:
- id: ens1f0
  apiVersion: counter.dra.config.k8s.io/v1beta1
  kind: Capacity
  data: {metadata: {labels: {link: 200g, example.com/rack-id: r1}}, count: 2}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: vf}
driverName: nic.example.com
numericParameters:
- apiVersion: nic.example.com/v1alpha1
  kind: VfParameters
  shareable: true
  celTemplate: |
    required: {{ object.spec.count }}
    selector:
      matchLabels: {link: "200g"}
      matchExpressions: [{key: example.com/rack-id, operator: In, values: [r1, r2]}]
---
apiVersion: nic.example.com/v1alpha1
kind: VfParameters
metadata: {name: two, namespace: default}
spec: {count: %d}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {name: two-vfs, namespace: default}
spec:
  resourceClassName: vf
  parametersRef: {apiGroup: nic.example.com, kind: VfParameters, name: two}
"""

V1 = "resource.k8s.io/v1"
POOL = {"name": "node-1", "generation": 1, "resourceSliceCount": 1}
LABELS = {"example.com/rack_id": {"string": "r1"}, "instance": {"string": "ens1f0"},
          "link": {"string": "200g"}}
SELECTOR = ('("link" in device.attributes["nic.example.com"] && '
            'device.attributes["nic.example.com"].link == "200g") && '
            '("rack_id" in device.attributes["example.com"] && '
            'device.attributes["example.com"].rack_id in ["r1", "r2"])')
CONFIG = [{"opaque": {"driver": "nic.example.com", "parameters": {
    "apiVersion": "nic.example.com/v1alpha1", "kind": "VfParameters",
    "metadata": {"name": "two", "namespace": "default"}, "spec": {"count": 2}}}}]
CLASS = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "vf"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}}
VENDOR = {"apiVersion": "nic.example.com/v1alpha1", "kind": "VfParameters",
          "metadata": {"name": "two", "namespace": "default"}, "spec": {"count": 2}}
LABEL_WARNING = ("in.yaml:1 (NodeResourceCapacity node-1-vfs): instances[0].data.metadata."
                 "labels.example.com/rack-id: label 'example.com/rack-id' becomes attribute "
                 "'example.com/rack_id'")


def test_counter_units_are_unit_devices_matched_on_their_instance(convert):
    items, warnings, result = convert(COUNTERS % 2)
    assert items == [
        {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "node-1-vfs"},
         "spec": {"driver": "nic.example.com", "nodeName": "node-1", "pool": POOL,
                  "devices": [{"name": "ens1f0-0", "attributes": LABELS},
                              {"name": "ens1f0-1", "attributes": LABELS}]}},
        CLASS, VENDOR,
        {"apiVersion": V1, "kind": "ResourceClaim",
         "metadata": {"name": "two-vfs", "namespace": "default"},
         "spec": {"devices": {
             "requests": [{"name": "req-0", "exactly": {
                 "deviceClassName": "vf", "count": 2,
                 "selectors": [{"cel": {"expression": SELECTOR}}]}}],
             "constraints": [{"requests": ["req-0"],
                              "matchAttribute": "nic.example.com/instance"}],
             "config": CONFIG}}},
    ]
    assert warnings == [LABEL_WARNING]
    assert result.complete


def test_counter_instances_as_consumable_capacity(convert):
    items, warnings, _ = convert(COUNTERS % 2, counters="consumable")
    assert items[0]["spec"]["devices"] == [
        {"name": "ens1f0", "attributes": LABELS, "capacity": {"count": {"value": "2"}},
         "allowMultipleAllocations": True}]
    assert items[3]["spec"]["devices"] == {
        "requests": [{"name": "req-0", "exactly": {
            "deviceClassName": "vf", "capacity": {"requests": {"count": "2"}},
            "selectors": [{"cel": {"expression": SELECTOR}}]}}],
        "config": CONFIG}
    assert warnings == [
        LABEL_WARNING,
        "in.yaml:1 (NodeResourceCapacity node-1-vfs): instances: counter instances become "
        "devices with allowMultipleAllocations and capacity 'count': needs "
        "DRAConsumableCapacity (alpha before 1.36)"]


def test_more_than_32_units_per_claim_is_impossible_as_unit_devices(convert):
    items, warnings, result = convert(COUNTERS % 33)
    assert [i["kind"] for i in items] == ["ResourceSlice", "DeviceClass", "VfParameters"]
    assert warnings[-1] == (
        "in.yaml:4 (ResourceClaim default/two-vfs): spec.parametersRef: cannot convert: 33 "
        "units are more than the 32 devices of one v1 claim (use --counters consumable)")
    assert not result.complete
    _, warnings, result = convert(COUNTERS % 33, counters="consumable")
    assert result.complete


def test_an_unknown_counters_mode_is_refused(convert):
    with pytest.raises(ValueError, match="unknown counters mode 'bits'"):
        convert(COUNTERS % 2, counters="bits")


SIMULATION = """
apiVersion: draplanner.io/v1alpha1
kind: DriverSimulation
metadata: {name: fpga}
spec:
  controllerName: fpga.example.com
  requestCount: object.spec.count
  pools:
  - name: rack-r1-fpgas
    count: 2
    nodeSelector:
      matchLabels: {rack: r1}
      matchExpressions: [{key: zone, operator: Exists}]
"""


def test_a_driver_simulation_is_impossible_and_approximated_with_lossy(convert):
    items, warnings, result = convert(SIMULATION)
    assert items == [] and [obj.name for obj in result.report.failed] == ["fpga"]
    items, warnings, _ = convert(SIMULATION, lossy=True)
    assert items == [{
        "apiVersion": V1, "kind": "ResourceSlice",
        "metadata": {"name": "fpga-rack-r1-fpgas"},
        "spec": {"driver": "fpga.example.com",
                 "pool": {"name": "rack-r1-fpgas", "generation": 1, "resourceSliceCount": 1},
                 "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "rack", "operator": "In", "values": ["r1"]},
                     {"key": "zone", "operator": "Exists"}]}]},
                 "devices": [{"name": "rack-r1-fpgas-0"}, {"name": "rack-r1-fpgas-1"}]}}]
    assert warnings == [
        "in.yaml:1 (DriverSimulation fpga): <document>: cannot convert: DriverSimulation "
        "stands in for a control-plane controller, removed in v1 (1.32): approximated by "
        "nodeSelector ResourceSlices of 'count' devices (written as an approximation: "
        "--lossy)",
        "in.yaml:1 (DriverSimulation fpga): spec.requestCount: cannot convert: a per-claim "
        "device count computed from the vendor parameters has no v1 form (claims take one "
        "device) (written as an approximation: --lossy)"]


def test_a_driver_simulation_pool_of_more_than_128_devices_is_split(convert):
    items, _, _ = convert(SIMULATION.replace("count: 2", "count: 130"), lossy=True)
    assert [(i["metadata"]["name"], len(i["spec"]["devices"])) for i in items] == [
        ("fpga-rack-r1-fpgas-0", 128), ("fpga-rack-r1-fpgas-1", 2)]
    assert {i["spec"]["pool"]["resourceSliceCount"] for i in items} == {2}
