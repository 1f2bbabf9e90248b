"""Loading v1 documents beside the seed dialects (``manifests/loader.py`` with the v1
kinds): identities, cross-object rules, what is not a load error, Pods with v1 claims."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.objects import DeviceClass, OpaqueObject, Pod, ResourceClaimV1
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    problems,
    request,
    slice_doc,
)
from tests.factories import claim, to_yaml

_ADMIN = "resource.kubernetes.io/admin-access"


def _namespace(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels or {}}}


def test_a_seed_and_a_v1_object_of_one_name_are_duplicates():
    with pytest.raises(InvalidManifests) as exc:
        load_texts([("x.yaml", to_yaml([claim("c"), claim_doc(name="c")]))])
    assert [str(p) for p in exc.value.problems] == [
        "x.yaml:2 (ResourceClaim default/c): metadata.name: duplicate object: ResourceClaim "
        "default/c is also defined at x.yaml:1"]
    assert len(load([claim("c"), claim_doc(name="d")]).objects) == 2


def test_admin_access_needs_the_namespace_label():
    admin = claim_doc([request(adminAccess=True)], namespace="ops")
    message = ("spec.devices.requests[0].exactly.adminAccess: admin access to devices "
               f"requires the `{_ADMIN}: true` label on the namespace 'ops'")
    assert problems([admin]) == [message]
    assert problems([admin, _namespace("ops")]) == [message]
    assert problems([admin, _namespace("ops", {_ADMIN: "false"})]) == [message]
    result = load([admin, _namespace("ops", {_ADMIN: "true"})])
    namespace = result.objects[1]
    assert isinstance(namespace, OpaqueObject) and namespace.namespace is None
    assert result.objects[0].requests[0].admin_access


def test_a_missing_class_is_not_a_load_error():
    [obj] = load([claim_doc([request(deviceClassName="nowhere")])]).objects
    assert obj.class_names == ["nowhere"]


def test_an_unknown_attribute_domain_is_not_a_load_error():
    expression = 'device.attributes["unknown.example.com"].model == "x"'
    [obj] = load([class_doc(selectors=[{"cel": {"expression": expression}}])]).objects
    assert isinstance(obj, DeviceClass) and obj.selectors == [expression]


def test_duplicate_device_names_across_slices_of_a_pool_load():
    # Within one slice it is a problem (test_v1_schema); across slices of the pool it
    # makes the pool invalid when allocating (spec section 3.2), not the input.
    two = [slice_doc([device("gpu-0")], name="a",
                     pool={"name": "p", "resourceSliceCount": 2}),
           slice_doc([device("gpu-0")], name="b",
                     pool={"name": "p", "resourceSliceCount": 2})]
    assert len(load(two).objects) == 2


def test_every_problem_of_every_document_at_once():
    lines = problems([slice_doc([device("Bad")]), class_doc(selectors=[{"cel": {}}]),
                      claim_doc([request(count=-1)])])
    assert [line.split(":")[0] for line in lines] == [
        "spec.devices[0].name", "spec.selectors[0].cel.expression",
        "spec.devices.requests[0].exactly.count"]


def test_default_profile_is_the_newest_release():
    taints = [{"key": f"example.com/t{i}", "effect": "NoSchedule"} for i in range(16)]
    text = to_yaml([slice_doc([device(taints=taints)])])
    result = load_texts([("x.yaml", text)])
    assert result.warnings == []
    assert len(result.objects[0].devices[0]["taints"]) == 16


def test_a_pod_with_a_v1_claim_loads():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "main", "resources": {
                        "claims": [{"name": "gpu", "request": "r"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"},
                                       {"name": "t", "resourceClaimTemplateName": "tpl"}]},
           "status": {"resourceClaimStatuses": [{"name": "t", "resourceClaimName": "p-t-x"}],
                      "extendedResourceClaimStatus": {
                          "resourceClaimName": "p-extended-resources-x",
                          "requestMappings": [{"containerName": "main",
                                               "resourceName": "example.com/gpu",
                                               "requestName": "container-0-request-0"}]}}}
    tpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "tpl"}, "spec": {"metadata": {"labels": {"a": "b"}},
                                                  "spec": {"devices": {"requests": [
                                                      request()]}}}}
    result = load([claim_doc(), tpl, pod])
    claim_obj, tpl_obj, pod_obj = result.objects
    assert isinstance(claim_obj, ResourceClaimV1) and isinstance(pod_obj, Pod)
    assert [c.claim_name or c.template_name for c in pod_obj.claims] == ["c", "tpl"]
    assert tpl_obj.claim_labels == {"a": "b"} and tpl_obj.class_names == ["gpu"]
    written = pod_obj.to_manifest()["status"]
    assert {k: written[k] for k in pod["status"]} == pod["status"]


def test_pod_v1_fields_are_checked():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "main", "resources": {
               "claims": [{"name": "gpu", "request": "Bad_Name"}]}}],
               "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
           "status": {"resourceClaimStatuses": [{"resourceClaimName": "x"}]}}
    lines = problems([pod])
    assert lines[0].startswith("spec.containers[0].resources.claims[0].request: invalid name")
    assert lines[1] == "status.resourceClaimStatuses[0].name: required field is missing"


def test_a_mistyped_v1_kind_has_a_did_you_mean():
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClas", "metadata": {"name": "x"}}
    assert problems([doc]) == [
        "kind: unknown kind 'DeviceClas' in resource.k8s.io/v1 (did you mean DeviceClass?)"]


def test_v1_documents_in_a_list():
    listed = {"apiVersion": "v1", "kind": "List", "items": [
        slice_doc([device(taints=[{"key": "k", "effect": "NoSchedule"}])]),
        claim_doc([request(count=-1)])]}
    lines = problems([listed], "1.34")
    assert lines == ["items[1].spec.devices.requests[0].exactly.count: must be greater than "
                     "zero for allocationMode ExactCount, not -1"]
    result = load([{**listed, "items": listed["items"][:1]}], "1.34")
    assert [w.path for w in result.warnings] == ["items[0].spec.devices[0].taints"]
