"""The REST API for the resource.k8s.io/v1 kinds: endpoints, round trips, errors, the one
identity shared with the seed kinds of the same names (docs/v1.md, "The console")."""

import json

import pytest

from allocation import models
from allocation.engine.writer import dump
from allocation.services.manifests import import_texts
from tests import factories as f
from tests import v1_cluster as v1

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_v1(db, sync_read_model):
    import_texts([("v1.yaml", f.to_yaml(v1.cluster()))])
    sync_read_model()


def _names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [i["metadata"]["name"] for i in response.json()["items"]]


def _yaml(client, method, url, doc):
    return getattr(client, method)(url, dump(doc, "yaml"), content_type="application/yaml")


def test_the_v1_endpoints_list_and_filter(user_client, stored_v1):
    assert _names(user_client.get("/api/deviceclasses/")) == ["gpu", "nic"]
    assert _names(user_client.get("/api/resourceslices/", {"node": "n1"})) == [
        "n1-gpus", "n1-counters"]
    assert _names(user_client.get("/api/resourceclaims-v1/", {"class": "nic"})) == ["net"]
    assert _names(user_client.get("/api/resourceclaims-v1/", {"status": "Pending"})) == [
        "c1", "net"]
    assert _names(user_client.get("/api/resourceclaimtemplates-v1/")) == []
    assert _names(user_client.get("/api/resourceclaims/")) == []  # the seed claims
    detail = user_client.get("/api/resourceclaims-v1/default/c1/").json()
    assert (detail["apiVersion"], detail["kind"]) == ("resource.k8s.io/v1", "ResourceClaim")
    assert user_client.get("/api/deviceclasses/gpu/").json()["spec"]["selectors"]


def test_a_v1_claim_round_trips_create_update_delete(user_client, stored_v1):
    claim = v1.claim("mine")
    created = user_client.post("/api/resourceclaims-v1/", json.dumps(claim),
                               content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    replaced = _yaml(user_client, "put", "/api/resourceclaims-v1/mine/", claim)
    assert replaced.status_code == 200, replaced.content
    got = user_client.get("/api/resourceclaims-v1/default/mine/").json()
    assert got == replaced.json() and got["spec"]["devices"]["requests"][0]["exactly"][
        "count"] == 2
    assert user_client.delete("/api/resourceclaims-v1/mine/").status_code == 204
    assert not models.ResourceClaimV1.objects.filter(name="mine").exists()


def test_staff_round_trip_a_device_class_and_a_slice(staff_client, stored_v1):
    extra = v1.device_class("extra")
    assert _yaml(staff_client, "post", "/api/deviceclasses/", extra).status_code == 201
    extra["spec"]["extendedResourceName"] = "example.com/gpu"
    assert _yaml(staff_client, "put", "/api/deviceclasses/extra/", extra).status_code == 200
    assert models.DeviceClass.objects.get(name="extra").extended_resource_name == (
        "example.com/gpu")
    assert staff_client.delete("/api/deviceclasses/extra/").status_code == 204
    assert staff_client.get("/api/resourceslices/n1-gpus/?format=yaml").content.startswith(
        b"apiVersion: resource.k8s.io/v1\n")


def test_errors_are_400s_naming_object_and_field(staff_client, stored_v1):
    bad = v1.device_class("bad", 'device.capacity["gpu.example.com"].memory >= "8Gi"')
    response = _yaml(staff_client, "post", "/api/deviceclasses/", bad)
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert problem.startswith("request.yaml:1 (DeviceClass bad): "
                              "spec.selectors[0].cel.expression: ")
    claim = v1.claim("typo")
    claim["spec"]["devices"]["requests"][0]["exactly"]["cont"] = 1
    response = _yaml(staff_client, "post", "/api/resourceclaims-v1/", claim)
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "request.yaml:1 (ResourceClaim default/typo): spec.devices.requests[0].exactly.cont: "
        "unknown field (did you mean count?)"]
    assert not models.DeviceClass.objects.filter(name="bad").exists()


def test_the_seed_and_v1_shapes_of_a_kind_have_their_own_endpoint(user_client, stored_v1):
    response = _yaml(user_client, "post", "/api/resourceclaims/", v1.claim("x"))
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "request.yaml:1 (ResourceClaim default/x): kind: this endpoint takes ResourceClaim of "
        "resource.k8s.io/v1alpha2, not resource.k8s.io/v1 ResourceClaim"]


def test_one_name_holds_one_claim_of_either_version(user_client, stored_v1):
    import_texts([("seed.yaml", f.to_yaml([f.resource_class(), f.claim("seed")]))])
    response = _yaml(user_client, "post", "/api/resourceclaims-v1/", v1.claim("seed"))
    assert response.status_code == 409
    assert _yaml(user_client, "post", "/api/resourceclaims/", f.claim("c1")).status_code == 409
    assert models.ResourceClaim.objects.filter(name="seed").exists()


def test_only_staff_write_device_classes_and_slices(user_client, stored_v1):
    assert _yaml(user_client, "post", "/api/deviceclasses/",
                 v1.device_class("mine")).status_code == 403
    assert user_client.delete("/api/resourceslices/n1-gpus/").status_code == 403
    # Users may write templates (whether the engine simulates v1 templates yet is another
    # matter: docs/v1.md).
    assert _yaml(user_client, "post", "/api/resourceclaimtemplates-v1/",
                 v1.template()).status_code != 403
