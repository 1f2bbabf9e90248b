"""scenarios/services.py ``export(what="manifest")``: a scenario's plan for kubectl, from
the API and the scenario page."""

from __future__ import annotations

import pytest
import yaml
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


def _new_pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "planned", "namespace": "default", "uid": "abc",
                         "resourceVersion": "12", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "main", "image": "example/app",
                                     "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Pending"}}


@pytest.fixture
def alice():
    user = get_user_model().objects.create_user("alice", password="pw")
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_manifest_holds_only_the_new_or_changed_user_objects(alice):
    store()
    scenario = alice.post("/api/scenarios/", {"name": "plan"}, format="json").json()
    url = f"/api/scenarios/{scenario['id']}/"
    for change in ({"op": "add-object", "manifest": _new_pod()},
                   {"op": "add-object", "manifest": {
                       "apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra"},
                       "status": {"allocatable": {"cpu": "8", "pods": "110"}}}}):
        answer = alice.post(url + "changes/", change, format="json")
        assert answer.status_code == 200, answer.content
    exported = alice.get(url + "export/?what=manifest")
    assert exported.status_code == 200
    document = yaml.safe_load(exported.content)
    assert document["kind"] == "List"
    [pod] = document["items"]  # the added node is infrastructure: not handed back
    assert pod["metadata"] == {"name": "planned", "namespace": "default"}
    assert "status" not in pod
    as_json = alice.get(url + "export/?what=manifest&output=json")
    assert as_json.status_code == 200 and as_json.json()["items"] == [pod]


def test_the_scenario_page_links_the_manifest(client):
    store()
    user = get_user_model().objects.create_user("bob", password="pw")
    client.force_login(user)
    from scenarios import services

    scenario = services.create(user, "plan")
    services.add_change(user, scenario, {"op": "add-object", "manifest": _new_pod()})
    page = client.get(f"/scenarios/{scenario.pk}/")
    assert b"?what=manifest" in page.content
    download = client.get(f"/scenarios/{scenario.pk}/export/?what=manifest")
    assert download.status_code == 200
    assert download["Content-Disposition"].endswith('manifest.yaml"')
    assert b"name: planned" in download.content and b"uid:" not in download.content
