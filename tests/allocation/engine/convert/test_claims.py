"""``convert.claims``, spec section 5 rows 6-8: ResourceClaimParameters ``required[]`` as
requests, claim vendor parameters as config; shareable, Immediate and the seed status
dropped with warnings; templates and pods."""

from __future__ import annotations

import pytest

from allocation.engine.convert.claims import flat_pod_claims, label_selector_expression

CLAIMS = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: n1}
spec:
  nodeName: node-1
  driverName: gpu.example.com
  partitionable:
    resourceInstances:
    - name: gpu-0
      attributes: [{name: memory, quantity: 16Gi}, {name: ids, intSlice: [1, 2]}]
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata: {name: gpu}
driverName: gpu.example.com
structuredParameters: true
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimParameters
metadata: {name: p, namespace: team}
shareable: %s
vendorParameters: {apiVersion: v, kind: K, spec: {a: 1}}
requests:
- driverName: gpu.example.com
  partitionable:
    required:
    - {name: big.one, selector: 'attributes.memory >= "8Gi" && 1 in intSlices.ids'}
    - {name: small, selector: 'true'}
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {name: c, namespace: team}
spec:
  resourceClassName: gpu
  parametersRef: {kind: ResourceClaimParameters, name: p}
  allocationMode: Immediate
status:
  driverName: gpu.example.com
  allocation:
    resourceHandles:
    - driverName: gpu.example.com
      structuredData: {nodeName: node-1, partitionable: {instances: [{id: gpu-0}]}}
  reservedFor: [{resource: pods, name: x, uid: "1"}]
  deallocationRequested: true
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {name: t, namespace: team}
spec:
  metadata: {labels: {a: b}}
  spec:
    resourceClassName: gpu
---
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {name: nope, namespace: team}
spec:
  resourceClassName: missing
"""

SELECTOR = ('"memory" in device.capacity["gpu.example.com"] && '
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("8Gi")) >= 0 && '
            '"ids" in device.attributes["gpu.example.com"] && '
            '1 in device.attributes["gpu.example.com"].ids.split(",").map(v, int(v))')


def test_claim_parameters_become_one_request_per_required_entry(convert):
    items, warnings, result = convert(CLAIMS % "true")
    claim, template = items[2:]
    assert claim == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "team"},
        "spec": {"devices": {
            "requests": [
                {"name": "big-one", "exactly": {
                    "deviceClassName": "gpu", "selectors": [{"cel": {"expression": SELECTOR}}]}},
                {"name": "small", "exactly": {"deviceClassName": "gpu"}}],
            "config": [{"opaque": {"driver": "gpu.example.com",
                                   "parameters": {"apiVersion": "v", "kind": "K",
                                                  "spec": {"a": 1}}}}]}}}
    # A claim without parameters asks for nothing (docs/manifests.md), in v1 too.
    assert template == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "team"},
        "spec": {"metadata": {"labels": {"a": "b"}}, "spec": {}}}
    assert warnings[2:] == [
        "in.yaml:4 (ResourceClaim team/c): status: the seed allocation and reservations are "
        "dropped: the planner allocates the v1 claim again",
        "in.yaml:4 (ResourceClaim team/c): status.deallocationRequested: no v1 form (a "
        "control-plane controller's deallocation): dropped",
        "in.yaml:4 (ResourceClaim team/c): spec.allocationMode: Immediate has no v1 form: the "
        "claim is allocated with its first pod",
        "in.yaml:4 (ResourceClaim team/c): spec.parametersRef: requests[0].required[0] "
        "(big.one) selector: intSlice attribute 'ids' is read from its comma-joined string "
        "(an empty list reads as [\"\"])",
        "in.yaml:6 (ResourceClaim team/nope): spec.resourceClassName: cannot convert: "
        "resourceclass 'missing' not found",
    ]
    assert [obj.name for obj in result.report.failed] == ["nope"]


def test_not_shareable_is_dropped_with_a_warning(convert):
    _, warnings, _ = convert(CLAIMS % "false")
    assert ("in.yaml:4 (ResourceClaim team/c): spec.parametersRef: not shareable has no v1 "
            "form: every v1 claim can be shared by up to 256 pods") in warnings


def test_a_selector_without_a_v1_form_makes_the_claim_impossible(convert):
    text = (CLAIMS % "true").replace("selector: 'true'", "selector: 'attributes.exists(k, true)'")
    items, warnings, result = convert(text)
    assert [obj.name for obj in result.report.failed] == ["c", "nope"]
    assert ("in.yaml:4 (ResourceClaim team/c): spec.parametersRef: cannot convert: "
            "requests[0].required[1] (small) selector: 'attributes' is used as a whole map; "
            "only attributes.x, attributes[\"x\"] and \"x\" in attributes have a v1 form"
            ) in warnings
    assert [i["metadata"]["name"] for i in items] == ["n1", "gpu", "t"]


@pytest.mark.parametrize(("selector", "expression"), [
    (None, None),
    ({}, None),
    ({"matchLabels": {"a": "x"}},
     '("a" in device.attributes["d"] && device.attributes["d"].a == "x")'),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x", "y"]}]},
     '!("a" in device.attributes["d"] && device.attributes["d"].a in ["x", "y"])'),
    ({"matchExpressions": [{"key": "p.io/a-b", "operator": "Exists"},
                           {"key": "c", "operator": "DoesNotExist"}]},
     '"a_b" in device.attributes["p.io"] && !("c" in device.attributes["d"])'),
])
def test_label_selectors_as_cel_guard_missing_labels(selector, expression):
    assert label_selector_expression(selector, "d") == expression


def test_pod_claims_are_written_in_the_flat_form():
    spec = {"containers": [{"name": "c"}], "resourceClaims": [
        {"name": "a", "source": {"resourceClaimName": "x"}},
        {"name": "b", "resourceClaimTemplateName": "t"}]}
    assert flat_pod_claims(spec) == {"containers": [{"name": "c"}], "resourceClaims": [
        {"name": "a", "resourceClaimName": "x"}, {"name": "b", "resourceClaimTemplateName": "t"}]}
    assert flat_pod_claims({"containers": []}) == {"containers": []}
