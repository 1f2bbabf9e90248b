"""Engine objects of the v1 kinds (``objects/v1.py``)."""

from __future__ import annotations

import json

from allocation.engine.objects import (
    DeviceClass,
    ResourceClaimTemplateV1,
    ResourceClaimV1,
    ResourceSlice,
)
from allocation.engine.objects.v1 import implicit_extended_resource_name
from tests.allocation.engine.manifests.v1_docs import (
    claim_doc,
    class_doc,
    device,
    load,
    request,
    slice_doc,
)

_RESULT = {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}


def test_device_class_accessors():
    [cls] = load([class_doc(selectors=[{"cel": {"expression": "true"}}],
                            extendedResourceName="example.com/gpu")]).objects
    assert isinstance(cls, DeviceClass)
    assert cls.selectors == ["true"]
    assert cls.extended_resource_names == ("example.com/gpu",
                                           "deviceclass.resource.kubernetes.io/gpu")
    assert implicit_extended_resource_name("x") == "deviceclass.resource.kubernetes.io/x"
    assert cls.as_v1()["spec"]["selectors"] == [{"cel": {"expression": "true"}}]


def test_resource_slice_accessors():
    [sl] = load([slice_doc([device("a"), device("b")])]).objects
    assert isinstance(sl, ResourceSlice)
    assert (sl.driver, sl.pool_name, sl.pool_generation, sl.resource_slice_count) == (
        "gpu.example.com", "node-1", 0, 1)
    assert sl.pool_key == ("gpu.example.com", "node-1")
    assert sl.node_name == "node-1" and not sl.all_nodes and not sl.per_device_node_selection
    assert sl.device_names == ["a", "b"] and sl.device("b") == {"name": "b"}
    assert sl.device("c") is None and sl.shared_counters == []


def test_claim_accessors_and_status():
    sub = {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "big"},
                                           {"name": "t", "deviceClassName": "gpu"}]}
    status = {"allocation": {"devices": {"results": [_RESULT]}},
              "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    [obj] = load([claim_doc([request("r"), sub], status=status)]).objects
    assert isinstance(obj, ResourceClaimV1)
    assert obj.request_names == ["r", "p"]
    assert obj.class_names == ["gpu", "big"]
    assert obj.allocated and obj.results == [_RESULT] and obj.reserved_pod_uids == ["u1"]
    obj.allocation = None
    obj.reserved_for = []
    written = obj.to_manifest()
    assert "status" not in written
    obj.reserved_for = [{"resource": "pods", "name": "q", "uid": "u2"}]
    obj.allocation = {"devices": {"results": [_RESULT]}}
    assert list(obj.to_manifest()["status"]) == ["allocation", "reservedFor"]


def test_to_manifest_is_v1_and_deterministic():
    docs = [slice_doc([device()]), class_doc(), claim_doc()]
    first = [o.to_manifest() for o in load(docs).objects]
    second = [o.to_manifest() for o in load(docs).objects]
    assert json.dumps(first) == json.dumps(second)
    assert {m["apiVersion"] for m in first} == {"resource.k8s.io/v1"}


def test_template_accessors():
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t", "namespace": "ns"},
           "spec": {"metadata": {"annotations": {"a": "b"}},
                    "spec": {"devices": {"requests": [request()]}}}}
    [tpl] = load([doc]).objects
    assert isinstance(tpl, ResourceClaimTemplateV1)
    assert tpl.claim_annotations == {"a": "b"} and tpl.claim_labels == {}
    assert tpl.claim_spec["devices"]["requests"][0]["exactly"]["count"] == 1
    assert tpl.class_names == ["gpu"] and tpl.namespace == "ns"


def test_template_as_v1_is_the_manifest_identity_and_spec_without_a_copy():
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t", "namespace": "ns"},
           "spec": {"spec": {"devices": {"requests": [request()]}}}}
    [tpl] = load([doc]).objects
    view, manifest = tpl.as_v1(), tpl.to_manifest()
    assert view["spec"] == manifest["spec"] and view["spec"] is tpl.raw["spec"]
    assert (view["apiVersion"], view["kind"], view["metadata"]) == (
        manifest["apiVersion"], manifest["kind"], {"name": "t", "namespace": "ns"})


def _same_claim(made: ResourceClaimV1, read: ResourceClaimV1) -> None:
    """Every attribute of two claims equal (the parsed requests by their fields)."""
    def fields(claim):
        out = dict(vars(claim))
        out.pop("_spec_key", None)  # computed when asked (compared below)
        out["meta"] = repr(claim.meta)
        out["requests"] = [(r.name, r.exactly, r.first_available) for r in claim.requests]
        return out
    assert fields(made) == fields(read)
    assert made.spec_key == read.spec_key
    assert made.to_manifest() == read.to_manifest()


def test_claim_made_from_its_template_is_the_claim_read_from_the_document():
    """``made_from`` (the template's parsed spec shared) gives the claim ``ResourceClaimV1``
    reads from the same document; a document whose spec is not the template's very spec is
    read as any claim."""
    spec = {"devices": {"requests": [request(), request("other")],
                        "constraints": [{"matchAttribute": "gpu.example.com/model"}],
                        "config": [{"opaque": {"driver": "gpu.example.com",
                                               "parameters": {"a": 1}}}]}}
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t", "namespace": "ns"},
           "spec": {"metadata": {"labels": {"l": "v"}}, "spec": spec}}
    [tpl] = load([doc]).objects
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "ns", "labels": {"l": "v"}},
           "spec": tpl.claim_spec}
    made = ResourceClaimV1.made_from(raw, tpl)
    _same_claim(made, ResourceClaimV1(raw))
    assert made.requests is not tpl.requests  # the claim's own list, shared entries
    copied = {**raw, "spec": json.loads(json.dumps(tpl.claim_spec))}
    other = ResourceClaimV1.made_from(copied, tpl)
    _same_claim(other, ResourceClaimV1(copied))
    assert other.requests[0] is not tpl.requests[0]  # read, not shared


def test_a_claim_made_from_a_prototypes_parts_is_the_claim_read_from_its_document():
    """``made_from`` given the metadata and owner ``ClaimPrototype.made`` made with the
    document (not read again) gives the claim ``ResourceClaimV1`` reads from it; given
    neither, it reads them. The owner is the controller pod's ``(name, uid)``."""
    from allocation.engine.v1.templates import ClaimPrototype

    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t", "namespace": "ns"},
           "spec": {"metadata": {"annotations": {"a": "b"}},
                    "spec": {"devices": {"requests": [request()]}}}}
    [tpl] = load([doc]).objects
    prototype = ClaimPrototype(tpl.as_v1())
    for uid in ("u", None):
        raw, meta = prototype.made("p", "ns", uid, "gpu")
        made = ResourceClaimV1.made_from(raw, tpl, meta, ("p", uid))
        _same_claim(made, ResourceClaimV1(raw))
        assert made.meta is meta and made.owner_pod == ("p", uid)
        _same_claim(ResourceClaimV1.made_from(raw, tpl), ResourceClaimV1(raw))


def test_a_claims_status_shares_only_what_is_never_changed_in_place_with_its_document():
    """The status parts the engine changes in place (the allocation's and its first
    parts' fields, the reservations and their entries, the device statuses and their
    fields) are the claim's own, so changing them leaves the document and a copy on write
    alone; deeper parts are the document's, as a copy on write shares them
    (``objects/clone.py``)."""
    from allocation.engine.objects.clone import clone

    selector = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}
    status = {"allocation": {"devices": {"results": [dict(_RESULT)]},
                             "nodeSelector": selector},
              "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
              "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                           "conditions": [{"type": "Ready", "status": "True"}]}]}
    [obj] = load([claim_doc(status=status)]).objects
    written = json.dumps(obj.raw)
    raw_status = obj.raw["status"]
    assert obj.allocation["devices"]["results"] is \
        raw_status["allocation"]["devices"]["results"]
    assert obj.allocation["nodeSelector"]["nodeSelectorTerms"] is \
        raw_status["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    twin = clone(obj)
    obj.allocation["allocationTimestamp"] = "now"
    obj.allocation["devices"]["config"] = []
    obj.allocation["nodeSelector"]["extra"] = 1
    obj.reserved_for.append({"resource": "pods", "name": "q", "uid": "u2"})
    obj.reserved_for[0]["name"] = "changed"
    obj.device_statuses[0]["conditions"] = []
    obj.device_statuses.append({})
    assert json.dumps(obj.raw) == written
    assert twin.to_manifest()["status"] == json.loads(written)["status"]


def test_a_claims_owner_pod_is_its_controller_pod_reference():
    def claim(refs):
        return ResourceClaimV1({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {"name": "c", "ownerReferences": refs},
                                "spec": {"devices": {}}})
    pod_ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}
    assert claim([pod_ref]).owner_pod == ("p", "u")
    assert claim([{**pod_ref, "controller": False}]).owner_pod is None
    assert claim([{**pod_ref, "kind": "Job", "apiVersion": "batch/v1"}]).owner_pod is None
