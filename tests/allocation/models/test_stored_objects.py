"""allocation.models: one model per kind, identity constraints, derived columns."""

import json

import pytest
from django.db import IntegrityError, transaction
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation import models
from allocation.engine import kinds
from allocation.engine.manifests import load_texts
from allocation.engine.objects import KIND_CLASSES
from allocation.models.claim import claim_status
from allocation.models.pod import pod_status
from allocation.models.provisioning_request import provisioning_status
from tests import factories as f
from tests import v1_cluster as v1


def _obj(doc):
    return load_texts([("t.yaml", f.to_yaml([doc]))]).objects[0]


def test_every_kind_of_the_contract_has_a_model():
    assert set(models.KIND_MODELS) == set(KIND_CLASSES)
    assert all(spec is m.KIND_SPEC for spec, m in models.KIND_MODELS.items())


def test_kind_and_scope_come_from_the_kind_registry():
    for spec, cls in KIND_CLASSES.items():
        model = models.KIND_MODELS[spec]
        assert (model.KIND, model.NAMESPACED) == (cls.kind, cls.namespaced) == (
            spec.name, spec.namespaced)
    assert models.Event.KIND_SPEC is kinds.EVENT and models.VendorObject.KIND == ""


def test_the_seed_and_v1_claim_models_share_one_kind():
    assert models.models_of_kind("ResourceClaim") == [models.ResourceClaim,
                                                      models.ResourceClaimV1]
    assert models.models_of_kind("DeviceClass") == [models.DeviceClass]


def test_canonical_json_is_one_text_per_document():
    assert models.canonical_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'
    assert models.list_column(["b", "a", "", "b"]) == ",a,b,"


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers(-(2**70), 2**70)
    | st.sampled_from([1e-05, 1.5e-07, 1e-4, 1e16, 1e22, -0.0, 5e-324, float("nan"),
                       float("inf"), 2**63, 2**64, -(2**63) - 1, "1e-05", "null", "x.0000"])
    | st.text(st.characters(codec=None, categories=None)),  # surrogates, controls too
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES)
def test_canonical_json_of_a_parsed_document_is_the_standard_librarys(document):
    """orjson writes a parsed document only where its text is the standard library's."""
    try:
        expected = json.dumps(document, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            models.canonical_json(document, parsed=True)
        return
    assert models.canonical_json(document, parsed=True) == expected
    assert models.canonical_json(document) == expected


def test_canonical_json_of_floats_orjson_writes_otherwise():
    """The floats orjson writes in other words (and NaN, infinities) go to the standard
    library; orjson writes the rest."""
    for value in (1e-05, 1.5e-07, 1e-10, float("nan"), float("inf"), 0.00012, 1e16, 1e-4):
        assert models.canonical_json({"v": [value]}, parsed=True) == json.dumps(
            {"v": [value]}, separators=(",", ":"))


def test_derived_columns():
    allocated = f.claim("c", status={"driverName": f.DRIVER, "allocation": {
        "resourceHandles": [{"driverName": f.DRIVER, "structuredData": {
            "nodeName": "n1", "namedResourcesWithAttributes": {"resources": [{"id": "d"}]}}}]}})
    assert models.ResourceClaim.columns_for(_obj(allocated)) == {
        "class_name": "gpu", "driver_name": f.DRIVER, "node_name": "n1", "status": "Allocated"}
    assert claim_status(_obj(f.claim("x"))) == "Pending"
    assert pod_status(_obj(f.pod("p", node_name="n1"))) == "Scheduled"
    assert pod_status(_obj(f.pod("p", phase="Failed"))) == "Failed"
    gated = f.pod("p")
    gated["status"] = {"conditions": [{"type": "PodScheduled", "status": "False",
                                       "reason": "SchedulingGated", "message": "gates"}]}
    assert pod_status(_obj(gated)) == "SchedulingGated"
    gated["status"]["conditions"][0]["reason"] = "Unschedulable"
    assert pod_status(_obj(gated)) == "Unschedulable"
    assert models.Pod.columns_for(_obj(f.pod("p", claims={"a": "c1"}, templates={"t": "tpl"})))[
        "claims"] == ",c1,p-t,"
    assert models.NodeResourceSlice.columns_for(_obj(f.named_slice("n1", []))) == {
        "node_name": "n1", "driver_name": f.DRIVER, "model": "namedResourcesWithAttributes"}
    request = _obj({"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
                    "metadata": {"name": "r"}, "spec": {
                        "provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                        "podSets": [{"podTemplateRef": {"name": "t"}, "count": 1}]},
                    "status": {"conditions": [{"type": "Provisioned", "status": "False",
                                               "reason": "CapacityIsNotFound",
                                               "message": "m", "lastTransitionTime":
                                               "2025-01-01T00:00:00Z"}]}})
    assert provisioning_status(request) == "NotProvisioned"


def test_derived_columns_of_the_v1_kinds():
    allocated = v1.claim("c1")
    allocated["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": v1.DRIVER, "pool": "n1", "device": "gpu-0-a"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    assert models.ResourceClaimV1.columns_for(_obj(allocated)) == {
        "classes": ",gpu,", "drivers": f",{v1.DRIVER},", "node_name": "n1",
        "status": "Allocated"}
    assert models.ResourceClaimV1.columns_for(_obj(v1.claim("c2")))["status"] == "Pending"
    assert models.ResourceSlice.columns_for(_obj(v1.resource_slices()[0])) == {
        "node_name": "n1", "driver_name": v1.DRIVER, "pool_name": "n1"}
    assert models.ResourceClaimTemplateV1.columns_for(_obj(v1.template())) == {
        "classes": ",gpu,"}
    assert models.DeviceClass.columns_for(_obj(v1.device_class())) == {
        "extended_resource_name": ""}


@pytest.mark.django_db
def test_identity_is_unique_per_kind():
    models.Node.objects.create(position=1, api_version="v1", name="n1", document="{}")
    models.Pod.objects.create(position=2, api_version="v1", namespace="a", name="n1",
                              document="{}")
    models.Pod.objects.create(position=3, api_version="v1", namespace="b", name="n1",
                              document="{}")
    with pytest.raises(IntegrityError), transaction.atomic():
        models.Node.objects.create(position=4, api_version="v1", name="n1", document="{}")
    models.VendorObject.objects.create(position=5, api_version="a.io/v1", api_group="a.io",
                                       kind="K", namespace="default", name="x", document="{}")
    models.VendorObject.objects.create(position=6, api_version="b.io/v1", api_group="b.io",
                                       kind="K", namespace="default", name="x", document="{}")
    assert models.VendorObject.objects.count() == 2
