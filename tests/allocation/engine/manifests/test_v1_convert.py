"""v1beta1/v1beta2 documents converted to v1, gated fields dropped with warnings, API-server
defaults (``manifests/v1_convert.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.manifests.v1_convert import source_path
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    device,
    load,
    problems,
    request,
    slice_doc,
)

BETA1 = "resource.k8s.io/v1beta1"


def test_v1beta1_slice_is_converted_and_defaulted():
    doc = {"apiVersion": BETA1, "kind": "ResourceSlice",
           "metadata": {"name": "s1", "creationTimestamp": "2025-01-02T03:04:05Z"},
           "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                    "pool": {"name": "node-1", "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0", "basic": {
                        "attributes": {"model": {"string": "a100"}},
                        "capacity": {"memory": {"value": "80Gi"}},
                        "taints": [{"key": "example.com/t", "effect": "NoSchedule"}]}}]}}
    [obj] = load([doc]).objects
    assert obj.to_manifest() == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "s1", "creationTimestamp": "2025-01-02T03:04:05Z"},
        "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                 "pool": {"name": "node-1", "resourceSliceCount": 1, "generation": 0},
                 "devices": [{"name": "gpu-0",
                              "attributes": {"model": {"string": "a100"}},
                              "capacity": {"memory": {"value": "80Gi"}},
                              "taints": [{"key": "example.com/t", "effect": "NoSchedule",
                                          "timeAdded": "2025-01-02T03:04:05Z"}]}]}}


def test_v1beta1_claim_is_converted_and_defaulted():
    doc = {"apiVersion": BETA1, "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "ns"},
           "spec": {"devices": {"requests": [
               {"name": "a", "deviceClassName": "gpu",
                "tolerations": [{"key": "k", "value": "v"}]},
               {"name": "b", "deviceClassName": "gpu", "allocationMode": "All"},
               {"name": "c", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}]}}}
    [obj] = load([doc]).objects
    assert obj.to_manifest() == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [
            {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [
                {"key": "k", "value": "v", "operator": "Equal"}],
                "allocationMode": "ExactCount", "count": 1}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "c", "firstAvailable": [
                {"name": "s", "deviceClassName": "gpu", "allocationMode": "ExactCount",
                 "count": 1}]}]}}}


def test_v1beta1_template_is_converted():
    doc = {"apiVersion": BETA1, "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t"},
           "spec": {"spec": {"devices": {"requests": [{"name": "a",
                                                       "deviceClassName": "gpu"}]}}}}
    [obj] = load([doc]).objects
    assert obj.to_manifest()["spec"] == {"spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                  "count": 1}}]}}}
    assert obj.api_version == "resource.k8s.io/v1"


def test_v1beta2_has_the_v1_shape():
    beta2 = slice_doc([device()])
    beta2["apiVersion"] = "resource.k8s.io/v1beta2"
    [from_beta2] = load([beta2]).objects
    [from_v1] = load([slice_doc([device()])]).objects
    assert from_beta2.to_manifest() == from_v1.to_manifest()
    assert from_beta2.to_manifest()["apiVersion"] == "resource.k8s.io/v1"


def test_v1beta1_problems_name_the_fields_as_written():
    doc = {"apiVersion": BETA1, "kind": "ResourceSlice", "metadata": {"name": "s1"},
           "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                    "pool": {"name": "node-1", "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0", "basic": {"atributes": {}}}]}}
    claim = {"apiVersion": BETA1, "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "a", "deviceClassName": "gpu",
                                                "count": -1}]}}}
    assert problems([doc, claim]) == [
        "spec.devices[0].basic.atributes: unknown field (did you mean attributes?)",
        "spec.devices.requests[0].count: must be greater than zero for allocationMode "
        "ExactCount, not -1"]


def test_source_path():
    assert source_path("spec.devices[3].taints[0].key", BETA1) == \
        "spec.devices[3].basic.taints[0].key"
    assert source_path("spec.devices[3].name", BETA1) == "spec.devices[3].name"
    assert source_path("spec.spec.devices.requests[1].exactly.count", BETA1) == \
        "spec.spec.devices.requests[1].count"
    assert source_path("spec.devices[3].taints", "resource.k8s.io/v1") == \
        "spec.devices[3].taints"


def test_fields_of_disabled_gates_are_dropped_with_a_warning():
    docs = [slice_doc([device(taints=[{"key": "k", "effect": "NoSchedule"}],
                              allowMultipleAllocations=True)]),
            claim_doc([request(adminAccess=True)]),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}}}]
    result = load(docs, "1.36", "DRADeviceTaints=false,DRAConsumableCapacity=false,"
                  "DRAAdminAccess=true")
    assert [str(w) for w in result.warnings] == [
        "v1.yaml:1 (ResourceSlice s1): spec.devices[0].taints: field dropped: feature gate "
        "DRADeviceTaints is off in Kubernetes 1.36",
        "v1.yaml:1 (ResourceSlice s1): spec.devices[0].allowMultipleAllocations: field "
        "dropped: feature gate DRAConsumableCapacity is off in Kubernetes 1.36"]
    assert "taints" not in result.objects[0].devices[0]
    assert load(docs[:1]).warnings == []


def test_a_field_dropped_from_every_device_is_warned_of_a_few_times_then_counted():
    # a driver's slices carry the field on every device: 80 lines would bury the rest
    taint = [{"key": "k", "effect": "NoSchedule"}]
    docs = [slice_doc([device(f"d{i}", taints=taint) for i in range(5)]),
            slice_doc([device("e", taints=taint)], name="s2", nodeName="node-2",
                      pool={"name": "node-2", "resourceSliceCount": 1})]
    warnings = [str(w) for w in load(docs, "1.36", "DRADeviceTaints=false").warnings]
    dropped = "field dropped: feature gate DRADeviceTaints is off in Kubernetes 1.36"
    assert warnings == [
        *(f"v1.yaml:1 (ResourceSlice s1): spec.devices[{i}].taints: {dropped}"
          for i in range(3)),
        f"v1.yaml:1 (ResourceSlice s1): spec.devices[3].taints: {dropped} (3 more such "
        "fields in 2 ResourceSlice objects: s1, s2)"]


def test_gate_off_warning_in_1_34_and_a_constraint_left_empty():
    claim = claim_doc(constraints=[{"distinctAttribute": "gpu.example.com/x"}])
    assert problems([claim], "1.34") == [
        "spec.devices.constraints[0]: exactly one of matchAttribute, distinctAttribute must "
        "be set"]


def test_v1beta1_warning_paths():
    doc = {"apiVersion": BETA1, "kind": "ResourceSlice", "metadata": {"name": "s1"},
           "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                    "pool": {"name": "node-1", "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0", "basic": {
                        "taints": [{"key": "k", "effect": "NoSchedule"}]}}]}}
    assert [w.path for w in load([doc], "1.34").warnings] == ["spec.devices[0].basic.taints"]


@pytest.mark.parametrize("release", ["1.34", "1.36"])
def test_metadata_and_status_are_shared_and_the_spec_is_a_copy(monkeypatch, release):
    import copy

    from allocation.engine.manifests import v1_convert
    from allocation.engine.objects.meta import json_copy
    from allocation.engine.v1 import make_profile

    managed = [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {}}}]
    claim = {"apiVersion": BETA1, "kind": "ResourceClaim",
             "metadata": {"name": "c1", "namespace": "default", "managedFields": managed,
                          "labels": {"team": "a"}},
             "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu",
                                                "adminAccess": True, "tolerations": [
                                                    {"key": "k", "effect": "NoSchedule"}]}]}},
             "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}}
    slice_ = {"apiVersion": BETA1, "kind": "ResourceSlice", "metadata": {"name": "s1"},
              "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                       "pool": {"name": "node-1", "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0", "basic": {
                           "taints": [{"key": "k", "effect": "NoSchedule"}],
                           "consumesCounters": []}}]}}
    profile = make_profile(release, "")
    for doc in (claim, slice_):
        before = copy.deepcopy(doc)
        prepared = v1_convert.prepare(doc, profile)
        assert doc == before  # the document read is not changed: its spec was copied
        assert prepared.data["metadata"] is doc["metadata"]
        assert prepared.data.get("status") is doc.get("status")
        monkeypatch.setattr(v1_convert, "_copy", json_copy)  # a copy of everything
        again = v1_convert.prepare(doc, profile)
        monkeypatch.undo()
        assert (again.data, again.dropped) == (prepared.data, prepared.dropped)
    assert prepared.data["metadata"]["name"] == "s1"
    requests = v1_convert.prepare(claim, profile).data["spec"]["devices"]["requests"]
    assert requests[0]["exactly"]["count"] == 1


_SHARED_BY_AN_ALIAS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: default
spec:
  devices:
    requests:
    - name: a
      exactly: &e
        deviceClassName: gpu
        tolerations:
        - key: k
          operator: Exists
    - name: b
      exactly: *e
"""


def _tolerations() -> list[dict]:
    return [{"key": "k", "operator": "Exists"}]  # a new list each: to_yaml writes no alias


def test_a_document_read_from_text_is_converted_in_place_unless_an_alias_shares_a_part(
        monkeypatch):
    from allocation.engine.manifests import load_documents, load_texts, v1_convert
    from allocation.engine.v1 import make_profile

    copied: list[dict] = []
    copy = v1_convert._copy
    monkeypatch.setattr(v1_convert, "_copy", lambda data: copied.append(data) or copy(data))
    gates = "DRADeviceTaints=false"
    docs = [claim_doc([request("a", tolerations=_tolerations()),
                       request("b", tolerations=_tolerations())])]
    plain = load(docs, "1.36", gates)  # read from YAML without an alias: nothing copied
    assert copied == []
    expected = ["v1.yaml:1 (ResourceClaim default/c): spec.devices.requests[0].exactly."
                "tolerations: field dropped: feature gate DRADeviceTaints is off in "
                "Kubernetes 1.36",
                "v1.yaml:1 (ResourceClaim default/c): spec.devices.requests[1].exactly."
                "tolerations: field dropped: feature gate DRADeviceTaints is off in "
                "Kubernetes 1.36"]
    assert [str(w) for w in plain.warnings] == expected
    # Both requests hold one mapping: changed in place, the second would lose its warning.
    shared = load_texts([("v1.yaml", _SHARED_BY_AN_ALIAS)], make_profile("1.36", gates))
    assert len(copied) == 1 and [str(w) for w in shared.warnings] == expected
    # Documents handed over (a stored baseline) are the caller's: copied, left unchanged.
    given = claim_doc([request("a", tolerations=_tolerations())])
    load_documents([("v1.yaml", given)], profile=make_profile("1.36", gates))
    assert len(copied) == 2 and given == claim_doc([request("a", tolerations=_tolerations())])
