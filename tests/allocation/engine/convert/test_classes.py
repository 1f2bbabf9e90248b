"""``convert.classes``, spec section 5 row 4 (and the controller row): ResourceClass plus
ResourceClassParameters as a DeviceClass."""

from __future__ import annotations

CLASSES = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: n1}
spec:
  nodeName: node-1
  driverName: gpu.example.com
  namedResourcesWithAttributes:
  - name: gpu-0
    attributes: [{name: memory, quantity: 16Gi}, {name: model, string: T4}]
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: t4, labels: {team: a}}
driverName: gpu.example.com
structuredParameters: true
parametersRef: {apiGroup: dra.example.com, kind: GpuClassParameters, name: t4-params}
suitableNodes:
  nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: Exists}]}]
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClassParameters
metadata: {name: t4-generated}
generatedFrom: {apiGroup: dra.example.com, kind: GpuClassParameters, name: t4-params}
vendorParameters: {apiVersion: dra.example.com/v1, kind: GpuClassParameters, mode: fast}
filters:
- driverName: gpu.example.com
  namedResourcesWithAttributes: {selector: 'quantities["memory"] >= "8Gi"'}
- driverName: other.example.com
  namedResourcesWithAttributes: {selector: 'true'}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: broken}
driverName: gpu.example.com
structuredParameters: true
parametersRef: {kind: ResourceClassParameters, name: missing}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: fpga}
driverName: fpga.example.com
controllerName: fpga.example.com
"""


def test_structured_class_with_filters_and_vendor_parameters(convert):
    items, warnings, result = convert(CLASSES)
    assert items[1] == {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "t4", "labels": {"team": "a"}},
        "spec": {
            "selectors": [
                {"cel": {"expression": 'device.driver == "gpu.example.com"'}},
                {"cel": {"expression": '"memory" in device.capacity["gpu.example.com"] && '
                                       'device.capacity["gpu.example.com"].memory.compareTo('
                                       'quantity("8Gi")) >= 0'}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {
                "apiVersion": "dra.example.com/v1", "kind": "GpuClassParameters",
                "mode": "fast"}}}]}}
    assert len(items) == 2  # the parameters fold into the class; broken and fpga fail
    assert warnings[1:] == [
        "in.yaml:2 (ResourceClass t4): suitableNodes: removed in v1 (1.32): dropped, the "
        "class matches devices on every node",
        "in.yaml:2 (ResourceClass t4): parametersRef: filters[1] is for driver "
        "'other.example.com', whose devices a v1 class of driver 'gpu.example.com' never "
        "selects: dropped",
        "in.yaml:4 (ResourceClass broken): parametersRef: cannot convert: "
        "resourceclassparameters 'missing' of class 'broken' not found",
        "in.yaml:5 (ResourceClass fpga): controllerName: cannot convert: control-plane "
        "controllers were removed in v1 (1.32); the class selects the devices of its "
        "DriverSimulation's approximation",
    ]
    assert [obj.name for obj in result.report.failed] == ["broken", "fpga"]


def test_lossy_writes_the_controller_class_as_a_driver_class(convert):
    items, _, _ = convert(CLASSES, lossy=True)
    assert items[-1] == {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fpga"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fpga.example.com"'}}]}}


def test_a_filter_without_a_v1_form_makes_the_class_impossible(convert):
    text = CLASSES.replace('quantities["memory"] >= "8Gi"', 'attributes[strings.k] == 1')
    _, warnings, result = convert(text)
    assert ("in.yaml:2 (ResourceClass t4): parametersRef: cannot convert: filters[0].selector: "
            "attributes[...] with a computed key has no v1 form (the attribute's type and v1 "
            "name are unknown)") in warnings
    assert "t4" in [obj.name for obj in result.report.failed]
