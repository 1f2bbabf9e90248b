"""The REST API: endpoints, filters, YAML/JSON, validation, permissions."""

import json

import pytest
import yaml
from rest_framework.test import APIClient

from allocation import models
from allocation.api.views import VIEWSETS
from allocation.engine.writer import dump
from tests import factories as f

pytestmark = pytest.mark.django_db


def _names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [i["metadata"]["name"] for i in response.json()["items"]]


def test_login_is_required(stored):
    assert APIClient().get("/api/resourceclaims/").status_code == 403
    assert APIClient().get("/api/").status_code == 403


def test_router_root_lists_every_endpoint(user_client):
    root = user_client.get("/api/").json()
    assert set(VIEWSETS) <= set(root)  # other apps may register more
    assert len(VIEWSETS) == 20 and root["resourceclaims"].endswith("/api/resourceclaims/")


def test_schema_requires_login_like_the_rest():
    assert APIClient().get("/api/schema/").status_code == 403
    assert APIClient().get("/api/schema/", {"format": "json"}).status_code == 403


def test_schema_describes_the_api(user_client):
    response = user_client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    assert "/api/resourceclaims/" in paths and "/api/nodes/{ref}/" in paths


def test_a_browser_is_shown_the_schema_and_scripts_get_the_openapi_type(user_client):
    shown = user_client.get("/api/schema/", HTTP_ACCEPT="text/html,application/xhtml+xml,"
                            "application/xml;q=0.9,*/*;q=0.8")
    assert shown.status_code == 200
    assert shown["Content-Type"] == "text/plain; charset=utf-8"
    assert yaml.safe_load(shown.content)["openapi"].startswith("3.")
    script = user_client.get("/api/schema/", HTTP_ACCEPT="*/*")
    assert script["Content-Type"].startswith("application/vnd.oai.openapi")
    assert script.content == shown.content
    as_json = user_client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert json.loads(as_json.content)["openapi"].startswith("3.")


def test_list_and_retrieve_return_manifests(user_client, stored):
    listing = user_client.get("/api/resourceclaims/").json()
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert user_client.get("/api/resourceclaims/team/c2/").json()["spec"] == {
        "resourceClassName": "other"}
    assert user_client.get("/api/resourceclaims/c1/").json()["metadata"]["name"] == "c1"
    assert user_client.get("/api/nodes/n1/").json()["kind"] == "Node"
    assert user_client.get("/api/nodes/nope/").status_code == 404
    assert user_client.get("/api/nodes/x/y/").status_code == 404


@pytest.mark.parametrize(("url", "query", "expected"), [
    ("/api/noderesourceslices/", {"node": "n2"}, ["n2-other"]),
    ("/api/noderesourceslices/", {"driver": f.DRIVER}, ["n1-cards"]),
    ("/api/resourceclaims/", {"class": "other"}, ["c2"]),
    ("/api/resourceclaims/", {"namespace": "default"}, ["c1"]),
    ("/api/resourceclaims/", {"status": "Pending"}, ["c1", "c2"]),
    ("/api/resourceclasses/", {"driver": "other.example.com"}, ["other"]),
    ("/api/pods/", {"status": "Pending"}, ["p1"]),
    ("/api/nodes/", {"node": "n1"}, ["n1"]),
])
def test_filters(user_client, stored, url, query, expected):
    assert _names(user_client.get(url, query)) == expected


def test_a_filter_the_kind_lacks_is_an_error(user_client, stored):
    # Nodes filter by driver since they share the node list's FilterSet; not by class.
    response = user_client.get("/api/nodes/", {"class": "x"})
    assert response.status_code == 400
    assert "cannot be filtered by class" in response.json()["class"]
    response = user_client.get("/api/resourceclasses/", {"node": "x"})
    assert "cannot be filtered by node" in response.json()["node"]


def test_yaml_out(user_client, stored):
    response = user_client.get("/api/resourceclaims/team/c2/", HTTP_ACCEPT="application/yaml")
    assert response["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(response.content)["metadata"]["namespace"] == "team"
    listing = user_client.get("/api/nodes/", {"format": "yaml"})
    assert listing.content.decode().startswith("apiVersion: v1\nitems:\n")


def test_users_create_claims_in_yaml_and_json(user_client, stored):
    response = user_client.post("/api/resourceclaims/", dump(f.claim("new"), "yaml"),
                                content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert response.json()["metadata"]["name"] == "new"
    pod = f.pod("p9", claims={"g": "new"})
    assert user_client.post("/api/pods/", json.dumps(pod),
                            content_type="application/json").status_code == 201
    assert models.ResourceClaim.objects.filter(name="new").exists()
    again = user_client.post("/api/resourceclaims/", dump(f.claim("new"), "yaml"),
                             content_type="application/yaml")
    assert again.status_code == 409


def test_invalid_manifest_is_a_400_with_every_problem(user_client, stored):
    bad = f.claim("bad", mode="Never")
    bad["spec"]["resourceClasName"] = "gpu"
    response = user_client.post("/api/resourceclaims/", dump(bad, "yaml"),
                                content_type="application/yaml")
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert len(problems) >= 2
    assert all(p.startswith("request.yaml:1 (ResourceClaim default/bad): spec.")
               for p in problems)
    assert any("did you mean resourceClassName?" in p for p in problems)
    assert not models.ResourceClaim.objects.filter(name="bad").exists()


def test_a_pod_field_typo_is_a_400_with_did_you_mean(user_client):
    pod = f.pod("p")
    pod["spec"]["nodeSelecter"] = {"zone": "a"}
    response = user_client.post("/api/pods/", dump(pod, "yaml"),
                                content_type="application/yaml")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "request.yaml:1 (Pod default/p): spec.nodeSelecter: unknown field (did you mean "
        "nodeSelector?)"]
    assert not models.Pod.objects.filter(name="p").exists()


def test_the_endpoint_kind_must_match(user_client):
    response = user_client.post("/api/resourceclaims/", dump(f.pod("p"), "yaml"),
                                content_type="application/yaml")
    assert response.status_code == 400
    assert "this endpoint takes ResourceClaim, not Pod" in response.json()["problems"][0]


def test_non_staff_cannot_edit_classes(user_client, stored):
    body = dump(f.resource_class("mine"), "yaml")
    assert user_client.post("/api/resourceclasses/", body,
                            content_type="application/yaml").status_code == 403
    assert user_client.delete("/api/resourceclasses/gpu/").status_code == 403
    assert user_client.put("/api/nodegroups/x/", "{}",
                           content_type="application/json").status_code == 403
    assert not models.ResourceClass.objects.filter(name="mine").exists()


def test_staff_replace_and_delete(staff_client, stored):
    changed = f.resource_class("other", driver="renamed.example.com")
    response = staff_client.put("/api/resourceclasses/other/", dump(changed, "yaml"),
                                content_type="application/yaml")
    assert response.status_code == 200, response.content
    assert models.ResourceClass.objects.get(name="other").driver_name == "renamed.example.com"
    wrong = staff_client.put("/api/resourceclasses/gpu/", dump(changed, "yaml"),
                             content_type="application/yaml")
    assert wrong.status_code == 400 and "not ResourceClass gpu" in wrong.json()["problems"][0]
    assert staff_client.delete("/api/resourceclaims/team/c2/").status_code == 204
    assert not models.ResourceClaim.objects.filter(name="c2").exists()


def test_a_delete_that_breaks_the_cluster_is_refused(staff_client, stored):
    pinned = f.pod("pinned", node_name="n2")
    staff_client.post("/api/pods/", dump(pinned, "yaml"), content_type="application/yaml")
    response = staff_client.delete("/api/nodes/n2/")
    assert response.status_code == 400
    assert "spec.nodeName: node 'n2' not found" in response.json()["problems"][0]
    assert models.Node.objects.filter(name="n2").exists()


def test_vendor_objects_and_events(staff_client, user_client):
    vendor = {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig",
              "metadata": {"name": "cfg", "namespace": "team"}, "sharing": "time-slicing"}
    assert user_client.post("/api/vendorobjects/", dump(vendor, "yaml"),
                            content_type="application/yaml").status_code == 403
    assert staff_client.post("/api/vendorobjects/", dump(vendor, "yaml"),
                             content_type="application/yaml").status_code == 201
    got = user_client.get("/api/vendorobjects/GpuConfig.gpu.example.com/team/cfg/")
    assert got.status_code == 200 and got.json()["sharing"] == "time-slicing"
    assert _names(user_client.get("/api/vendorobjects/", {"kind": "GpuConfig"})) == ["cfg"]
    assert user_client.get("/api/events/").json()["items"] == []
    assert staff_client.post("/api/events/", "{}", content_type="application/json"
                             ).status_code == 405


def test_body_must_be_yaml_or_json(user_client):
    response = user_client.post("/api/resourceclaims/", {"a": "b"}, format="multipart")
    assert response.status_code == 415


def test_a_body_over_the_limit_is_a_413_naming_it(user_client, settings, monkeypatch):
    """Answered before DRF parses (reads) the body."""
    from allocation.api import serializers

    settings.DRA_MAX_UPLOAD_BYTES = 1024
    monkeypatch.setattr(serializers._TextParser, "parse",
                        lambda *args, **kwargs: pytest.fail("body was read"))
    body = f.to_yaml([f.pod("p", node_selector={f"l{i}": "x" * 40 for i in range(40)})])
    assert len(body) > 1024

    response = user_client.post("/api/pods/", body, content_type="application/yaml")

    assert response.status_code == 413
    assert response.json() == {"detail": f"request body: {_size(len(body))}; the limit is "
                                         "1 KiB per request (DRA_MAX_UPLOAD_BYTES)"}
    assert user_client.get("/api/pods/").json()["items"] == []


def test_a_body_without_length_is_read_up_to_the_limit(settings):
    """What the parser reads when no Content-Length announced the size."""
    import io

    from allocation.api.serializers import BodyTooLarge, YAMLManifestParser

    settings.DRA_MAX_UPLOAD_BYTES = 10
    assert YAMLManifestParser().parse(io.BytesIO(b"0123456789")).text == "0123456789"
    with pytest.raises(BodyTooLarge, match=r"the limit is 10 bytes per request"):
        YAMLManifestParser().parse(io.BytesIO(b"0123456789a"))


def _size(count: int) -> str:
    return f"{count / 1024:.1f} KiB".replace(".0 KiB", " KiB")
