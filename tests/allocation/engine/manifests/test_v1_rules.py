"""Cross-field rules of the v1 kinds (``manifests/v1_rules.py``), with limits at their bound
and one past it."""

from __future__ import annotations

import pytest

from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    problems,
    request,
    slice_doc,
)

_TAINT = {"key": "example.com/broken", "effect": "NoSchedule"}


def _counters(n: int) -> dict:
    return {f"c{i}": {"value": "1"} for i in range(n)}


def test_devices_with_taints_or_counters_are_limited_to_64():
    for extra in ({"taints": [_TAINT]}, {"consumesCounters": [
            {"counterSet": "s", "counters": {"c": {"value": "1"}}}]}):
        ok = [device("d0", **extra)] + [device(f"d{i}") for i in range(1, 64)]
        assert problems([slice_doc(ok)]) == []
        assert problems([slice_doc(ok + [device("d64")])]) == [
            "spec.devices: must have at most 64 items when a device has taints or "
            "consumesCounters, not 65"]


def test_counter_sets_hold_1_to_32_counters():
    def doc(n):
        return [slice_doc(sharedCounters=[{"name": "s", "counters": _counters(n)}],
                          nodeName=None, allNodes=True)]
    assert problems(doc(32)) == problems(doc(1)) == []
    assert problems(doc(33)) == ["spec.sharedCounters[0].counters: must have 1 to 32 "
                                 "counters, not 33"]
    assert problems(doc(0)) == ["spec.sharedCounters[0].counters: must have 1 to 32 "
                                "counters, not 0"]


def test_consumed_counters_per_set_are_limited_to_32():
    def doc(n):
        return [slice_doc([device(consumesCounters=[{"counterSet": "s",
                                                      "counters": _counters(n)}])])]
    assert problems(doc(32)) == []
    assert problems(doc(33)) == ["spec.devices[0].consumesCounters[0].counters: has 33 "
                                 "counters, more than the limit of 32"]
    assert problems(doc(0)) == ["spec.devices[0].consumesCounters[0].counters: must name at "
                                "least one counter"]


def test_qualified_names():
    ok = {"gpu.example.com/model": {"string": "a"}, "a" * 32: {"int": 1},
          "d" * 59 + ".com/x": {"int": 1}}
    assert problems([slice_doc([device(attributes=ok)])]) == []
    bad = {"a" * 33: {"int": 1}, "d" * 60 + ".com/x": {"int": 1}, "1abc": {"int": 1},
           "Bad_Domain/x": {"int": 1}}
    lines = problems([slice_doc([device(attributes=bad)])])
    assert len(lines) == 4
    assert "at most 32 characters" in lines[0]
    assert "at most 63 characters" in lines[1]


@pytest.mark.parametrize(("release", "bound"), [("1.36", 16), ("1.35", 16), ("1.34", 4)])
def test_taints_per_device(release, bound):
    gates = "DRADeviceTaints=true"
    taints = [{"key": f"example.com/t{i}", "effect": "NoSchedule"} for i in range(bound + 1)]
    assert problems([slice_doc([device(taints=taints[:bound])])], release, gates) == []
    assert problems([slice_doc([device(taints=taints)])], release, gates) == [
        f"spec.devices[0].taints: must have at most {bound} items, not {bound + 1} "
        f"(Kubernetes {release})"]


def test_taint_key_value_and_effect():
    lines = problems([slice_doc([device(taints=[
        {"key": "bad key", "value": "x" * 64, "effect": "NoSchedule"},
        {"key": "k", "effect": "Sometimes"}])])])
    assert lines[0].startswith("spec.devices[0].taints[1].effect: unsupported value "
                               "'Sometimes'")
    assert len(lines) == 1  # the schema problem stops the cross-field rules
    lines = problems([slice_doc([device(taints=[
        {"key": "bad key", "value": "x" * 64, "effect": "NoSchedule"}])])])
    assert [line.split(":")[0] for line in lines] == [
        "spec.devices[0].taints[0].key", "spec.devices[0].taints[0].value"]


def test_binding_conditions_both_or_neither_and_no_overlap():
    assert problems([slice_doc([device(bindingConditions=["a"])])]) == [
        "spec.devices[0]: bindingConditions and bindingFailureConditions must be set "
        "together (both or neither)"]
    assert problems([slice_doc([device(bindingConditions=["a", "b"],
                                       bindingFailureConditions=["b"])])]) == [
        "spec.devices[0].bindingFailureConditions: 'b' is also a binding condition; the two "
        "lists must not overlap"]
    assert problems([slice_doc([device(bindingConditions=["no spaces"],
                                       bindingFailureConditions=["f"])])])[0].startswith(
        "spec.devices[0].bindingConditions[0]: invalid key 'no spaces'")
    assert problems([slice_doc([device(bindingConditions=["a", "a"],
                                       bindingFailureConditions=["f", "g", "f"])])]) == [
        "spec.devices[0].bindingConditions[1]: 'a' is listed twice (first at "
        "spec.devices[0].bindingConditions[0])",
        "spec.devices[0].bindingFailureConditions[2]: 'f' is listed twice (first at "
        "spec.devices[0].bindingFailureConditions[0])"]


def test_exactly_one_node_selection():
    assert problems([slice_doc([device()], nodeName=None)]) == [
        "spec: exactly one of nodeName, nodeSelector, allNodes: true, "
        "perDeviceNodeSelection: true must be set"]
    assert problems([slice_doc([device()], nodeName="node-1", allNodes=True)]) == [
        "spec: exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection may "
        "be set, found nodeName, allNodes"]
    two_terms = {"nodeSelectorTerms": [{"matchExpressions": []}, {"matchExpressions": []}]}
    assert problems([slice_doc([device()], nodeName=None, nodeSelector=two_terms)]) == [
        "spec.nodeSelector.nodeSelectorTerms: must have exactly 1 term, not 2"]
    assert problems([slice_doc([device()], nodeName=None, nodeSelector={
        "nodeSelectorTerms": []})]) == [
        "spec.nodeSelector.nodeSelectorTerms: must have exactly 1 term, not 0"]


def test_all_nodes_and_per_device_node_selection_false_are_refused():
    # The API server refuses false ("must be either unset or set to true"), even beside
    # another node field that would make the choice.
    assert problems([slice_doc([device()], nodeName="node-1", allNodes=False)]) == [
        "spec.allNodes: must be true or unset, not false"]
    assert problems([slice_doc([device()], nodeName="node-1",
                               perDeviceNodeSelection=False)]) == [
        "spec.perDeviceNodeSelection: must be true or unset, not false"]
    assert problems([slice_doc([device()], allNodes=False)]) == [
        "spec.allNodes: must be true or unset, not false",
        "spec: exactly one of nodeName, nodeSelector, allNodes: true, "
        "perDeviceNodeSelection: true must be set"]


def test_devices_and_shared_counters_in_one_slice():
    counters = [{"name": "s", "counters": {"c": {"value": "1"}}}]
    doc = slice_doc([device()], sharedCounters=counters)
    assert problems([doc]) == [
        "spec: at most one of devices and sharedCounters may be set (Kubernetes 1.35 and "
        "later)"]
    assert problems([doc], "1.34", "DRAPartitionableDevices=true") == []


def test_a_device_consumes_counters_of_its_own_slice_in_1_34():
    # 1.34's API server checks every reference against the slice's own sets (the 1.34
    # allocator relies on it); from 1.35 the sets live in slices of their own
    counters = [{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}]
    uses = [device("a", consumesCounters=[{"counterSet": "gpu-o", "counters": {
                "memory": {"value": "1Gi"}}}]),
            device("b", consumesCounters=[{"counterSet": "gpu-0", "counters": {
                "memroy": {"value": "1Gi"}, "memory": {"value": "1Gi"}}}]),
            device("c", consumesCounters=[{"counterSet": "gpu-0", "counters": {
                "memory": {"value": "1Gi"}}}])]
    doc = slice_doc(uses, sharedCounters=counters)
    assert problems([doc], "1.34", "DRAPartitionableDevices=true") == [
        "spec.devices[0].consumesCounters[0].counterSet: 'gpu-o' must reference a counterSet "
        "defined in the ResourceSlice sharedCounters (did you mean gpu-0?) (Kubernetes 1.34)",
        "spec.devices[1].consumesCounters[0].counters: 'memroy' must reference a counter "
        "defined in the ResourceSlice sharedCounters (set gpu-0) (did you mean memory?) "
        "(Kubernetes 1.34)"]
    # a set published in another slice of the pool (the 1.35 layout) is not this slice's
    assert problems([slice_doc(uses[2:])], "1.34", "DRAPartitionableDevices=true") == [
        "spec.devices[0].consumesCounters[0].counterSet: 'gpu-0' must reference a counterSet "
        "defined in the ResourceSlice sharedCounters (Kubernetes 1.34)"]
    assert problems([slice_doc(uses[2:])], "1.36") == []  # the pool's validity: v1/pools.py


def test_per_device_node_selection():
    per_device = {"nodeName": None, "perDeviceNodeSelection": True}
    assert problems([slice_doc([device(nodeName="node-1"), device("b", allNodes=True)],
                               **per_device)]) == []
    assert problems([slice_doc([device()], **per_device)]) == [
        "spec.devices[0]: exactly one of nodeName, nodeSelector, allNodes: true must be set "
        "when the slice uses perDeviceNodeSelection"]
    assert problems([slice_doc([device(nodeName="node-1")])]) == [
        "spec.devices[0]: nodeName may only be set when the slice sets "
        "perDeviceNodeSelection: true"]
    # false is still set: refused where the slice chooses per device, and where it does not
    assert problems([slice_doc([device(nodeName="node-1", allNodes=False)], **per_device)]) == [
        "spec.devices[0].allNodes: must be true or unset, not false"]
    assert problems([slice_doc([device(allNodes=False)])]) == [
        "spec.devices[0]: allNodes may only be set when the slice sets "
        "perDeviceNodeSelection: true"]


def test_opaque_parameters_at_most_10_kib():
    def config(n):  # '{"a":""}' is 8 bytes
        return [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": "x" * n}}}]
    assert problems([class_doc(config=config(10240 - 8)),
                     claim_doc(config=config(10240 - 8))]) == []
    assert problems([class_doc(config=config(10240 - 7)),
                     claim_doc(config=config(10240 - 7))]) == [
        "spec.config[0].opaque.parameters: is 10241 bytes of JSON, more than the limit of "
        "10240 bytes",
        "spec.devices.config[0].opaque.parameters: is 10241 bytes of JSON, more than the "
        "limit of 10240 bytes"]


def test_device_status_data_at_most_10_kib():
    def status(n):
        device = {"driver": "gpu.example.com", "pool": "p", "device": "d"}
        return {"allocation": {"devices": {"results": [{"request": "r", **device}]}},
                "devices": [{**device, "data": {"a": "x" * n}}]}
    assert problems([claim_doc(status=status(10240 - 8))]) == []
    assert problems([claim_doc(status=status(10240 - 7))]) == [
        "status.devices[0].data: is 10241 bytes of JSON, more than the limit of 10240 bytes"]


def test_extended_resource_name():
    assert problems([class_doc(extendedResourceName="example.com/gpu")]) == []
    for bad in ("gpu", "kubernetes.io/gpu", "example.com/bad name"):
        assert problems([class_doc(extendedResourceName=bad)]) == [
            f"spec.extendedResourceName: invalid extended resource name {bad!r}: must be "
            "<domain>/<name>, a qualified name outside kubernetes.io"]


def test_count_rules():
    assert problems([claim_doc([request(count=-1)])]) == [
        "spec.devices.requests[0].exactly.count: must be greater than zero for "
        "allocationMode ExactCount, not -1"]
    # ExactCount's count 0 is Go's zero value, which the API server defaults to 1
    [claim] = load([claim_doc([request(count=0)])]).objects
    assert claim.to_manifest()["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    assert problems([claim_doc([request(allocationMode="All", count=2)])]) == [
        "spec.devices.requests[0].exactly.count: must not be set for allocationMode All, "
        "not 2"]
    assert problems([claim_doc([request(allocationMode="All"),
                                request("big", count=10_000)])]) == []


def test_toleration_rules():
    tolerations = [
        {"key": "k", "operator": "Exists", "value": "x"},  # Exists has no value
        {"key": "bad key"},
        {"key": "k", "value": "not a label value!"},
    ]
    lines = problems([claim_doc([request(tolerations=tolerations)])])
    base = "spec.devices.requests[0].exactly.tolerations"
    assert lines[0] == f"{base}[0].value: must be empty when the operator is Exists"
    assert lines[1].startswith(f"{base}[1].key: invalid key 'bad key'")
    assert lines[2].startswith(f"{base}[2].value: invalid label value 'not a label value!'")
    assert len(lines) == 3


def test_tolerations_the_api_documents_but_does_not_check_are_accepted():
    # "if the key is empty, operator must be Exists" and "tolerationSeconds ... must be of
    # effect NoExecute, otherwise this field is ignored": the API server checks neither
    tolerations = [{"operator": "Equal", "value": "x"},
                   {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]
    assert problems([claim_doc([request(tolerations=tolerations)])]) == []


def test_constraint_and_config_references():
    subs = {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}
    ok = claim_doc([request("r"), subs], constraints=[
        {"requests": ["r", "p/s", "p"], "matchAttribute": "gpu.example.com/model"}],
        config=[{"requests": ["p/s"], "opaque": {"driver": "gpu.example.com",
                                                 "parameters": {}}}])
    assert problems([ok]) == []
    bad = claim_doc([request("r"), subs], constraints=[
        {"requests": ["x", "p/t"], "matchAttribute": "model"},
        {"distinctAttribute": "Bad.com/x"}],
        config=[{"requests": ["r/s"], "opaque": {"driver": "gpu.example.com",
                                                 "parameters": {}}}])
    assert problems([bad]) == [
        "spec.devices.constraints[0].requests[0]: 'x' names no request of this claim "
        "(requests: p, r; a subrequest is <request>/<subrequest>)",
        "spec.devices.constraints[0].requests[1]: 'p/t' names no request of this claim "
        "(requests: p, r; a subrequest is <request>/<subrequest>)",
        "spec.devices.constraints[0].matchAttribute: invalid name 'model': a fully qualified "
        "name must be <domain>/<id> (the domain is required)",
        "spec.devices.constraints[1].distinctAttribute: invalid name 'Bad.com/x': the "
        "domain 'Bad.com' must be a DNS subdomain of at most 63 characters",
        "spec.devices.config[0].requests[0]: 'r/s' names no request of this claim "
        "(requests: p, r; a subrequest is <request>/<subrequest>)"]


def test_a_request_is_named_once_per_constraint_and_config():
    config = {"driver": "gpu.example.com", "parameters": {}}
    doc = claim_doc([request("r"), request("q")], constraints=[
        {"requests": ["r", "q", "r"], "matchAttribute": "gpu.example.com/model"}],
        config=[{"requests": ["q", "q"], "opaque": config}])
    assert problems([doc]) == [
        "spec.devices.constraints[0].requests[2]: 'r' is listed twice (first at "
        "spec.devices.constraints[0].requests[0])",
        "spec.devices.config[0].requests[1]: 'q' is listed twice (first at "
        "spec.devices.config[0].requests[0])"]


def test_constraint_needs_exactly_one_attribute():
    assert problems([claim_doc(constraints=[{"requests": ["r"]}])]) == [
        "spec.devices.constraints[0]: exactly one of matchAttribute, distinctAttribute must "
        "be set"]


def test_a_repeated_invalid_attribute_value_is_reported_on_every_device():
    # verdicts are remembered per value: the second device's copy is still a problem
    bad = {"v": {"version": "1.0"}}
    assert problems([slice_doc([device("d0", attributes=bad), device("d1", attributes=bad),
                                device("d2", attributes={"v": {"version": "1.0.0"}})])]) == [
        "spec.devices[0].attributes.v.version: '1.0' is not a valid semantic version (strict "
        "semver 2.0.0, e.g. 1.2.3)",
        "spec.devices[1].attributes.v.version: '1.0' is not a valid semantic version (strict "
        "semver 2.0.0, e.g. 1.2.3)"]
