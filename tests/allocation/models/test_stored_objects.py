"""allocation.models: one model per kind, identity constraints, derived columns."""

import pytest
from django.db import IntegrityError, transaction

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


def test_derived_columns():
    allocated = f.claim("c", status={"driverName": f.DRIVER, "allocation": {
        "resourceHandles": [{"driverName": f.DRIVER, "structuredData": {
            "nodeName": "n1", "namedResourcesWithAttributes": {"resources": [{"id": "d"}]}}}]}})
    assert models.ResourceClaim.columns_for(_obj(allocated)) == {
        "class_name": "gpu", "driver_name": f.DRIVER, "node_name": "n1", "status": "Allocated"}
    assert claim_status(_obj(f.claim("x"))) == "Pending"
    assert pod_status(_obj(f.pod("p", node_name="n1"))) == "Scheduled"
    assert pod_status(_obj(f.pod("p", phase="Failed"))) == "Failed"
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
