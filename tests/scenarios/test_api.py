from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


def _client(name: str, staff: bool = False) -> APIClient:
    user = get_user_model().objects.create_user(name, password="pw", is_staff=staff)
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_scenarios_are_listed_in_the_api_root_and_work_end_to_end():
    store()
    alice = _client("alice")
    assert "scenarios" in alice.get("/api/").json()
    created = alice.post("/api/scenarios/", {"name": "what if"}, format="json")
    assert created.status_code == 201, created.content
    url = f"/api/scenarios/{created.json()['id']}/"
    answer = alice.post(url + "changes/", {"op": "remove-node", "node": "worker-1"},
                        format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["outcome"]["diff"]["nodes_removed"] == ["worker-1"]
    refused = alice.post(url + "changes/", {"op": "pin-pod", "pod": "default/p2",
                                            "node": "worker-1"}, format="json")
    assert refused.status_code == 409
    assert "node 'worker-1' not found" in refused.json()["refused"]
    assert alice.post(url + "undo/").json()["position"] == 0
    assert alice.post(url + "redo/").json()["position"] == 1
    exported = alice.get(url + "export/?what=changes")
    assert exported.status_code == 200 and b"remove-node" in exported.content
    assert alice.post(url + "promote/").status_code == 403


def test_other_users_cannot_see_or_change_a_scenario_without_its_link():
    store()
    alice, bob = _client("alice"), _client("bob")
    scenario = alice.post("/api/scenarios/", {"name": "private"}, format="json").json()
    url = f"/api/scenarios/{scenario['id']}/"
    assert bob.get(url).status_code == 404
    assert bob.get("/api/scenarios/").json()["results"] == [] if isinstance(
        bob.get("/api/scenarios/").json(), dict) else bob.get("/api/scenarios/").json() == []
    assert bob.post(url + "changes/", {"op": "set-strategy", "strategy": "best-fit"},
                    format="json").status_code == 404


def test_an_expensive_selector_edit_is_refused_with_400_naming_the_field():
    store()
    alice = _client("alice")  # a plain user, the owner of the scenario
    scenario = alice.post("/api/scenarios/", {"name": "bomb"}, format="json").json()
    bomb = "['" + "a" * 1000 + "']"
    for level in range(7):
        bomb += f".map(v{level}, {'+'.join([f'v{level}'] * 8)})"
    path = "requests[0].namedResourcesWithAttributes.required[0].selector"
    answer = alice.post(f"/api/scenarios/{scenario['id']}/changes/", {
        "op": "edit-selector", "kind": "ResourceClaimParameters", "object": "default/big",
        "path": path, "expression": bomb + ".all(z, size(z) > 0)"}, format="json")
    assert answer.status_code == 400
    where, _, problem = answer.json()["refused"].partition(" ")
    assert where.startswith("scenario:")  # the scenario's documents, as the engine loads them
    assert problem == (
        f"(ResourceClaimParameters default/big): {path}: CEL expression too "
        "expensive: estimated cost 1,048,575,734 exceeds the limit of 1,000,000")
    assert alice.get(f"/api/scenarios/{scenario['id']}/").json()["position"] == 0


@pytest.mark.parametrize(("body", "kind", "refused"), [
    ("5", "application/json", "changes[0].op: a change must be an object with an op"),
    ('["set-strategy"]', "application/json",
     "changes[0].op: a change must be an object with an op"),
    ('{"op": ["pin-pod"]}', "application/json",
     "changes[0].op: unknown operation ['pin-pod']; one of pin-pod, unpin-pod, add-nodes, "
     "remove-node, add-object, remove-object, edit-selector, set-strategy"),
    ('{"op": "remove-node", "node": ["worker-1"]}', "application/json",
     "changes[0].node: must be a string, not a list"),
    ('{"op": "add-object", "manifest": {"kind": "Node", "metadata": {"name": {"a": 1}}}}',
     "application/json", "changes[0].manifest: metadata.name: must be a string, not an object"),
    ("op=add-nodes&group=g&count=2", "application/x-www-form-urlencoded",
     "changes[0].count: must be an integer, not a string"),
])
def test_a_change_of_the_wrong_shape_is_a_400_naming_the_field(body, kind, refused):
    store()
    alice = _client("alice")
    scenario = alice.post("/api/scenarios/", {"name": "shapes"}, format="json").json()
    answer = alice.generic("POST", f"/api/scenarios/{scenario['id']}/changes/", body,
                           content_type=kind)
    assert answer.status_code == 400, answer.content
    assert answer.json() == {"refused": refused}
    assert alice.get(f"/api/scenarios/{scenario['id']}/").json()["changes"] == []


def test_a_change_may_come_as_form_fields():
    store()
    alice = _client("alice")
    scenario = alice.post("/api/scenarios/", {"name": "form"}, format="json").json()
    answer = alice.post(f"/api/scenarios/{scenario['id']}/changes/",
                        {"op": "remove-node", "node": "worker-1"})  # multipart
    assert answer.status_code == 200, answer.content
    assert answer.json()["changes"] == [{"op": "remove-node", "node": "worker-1"}]
