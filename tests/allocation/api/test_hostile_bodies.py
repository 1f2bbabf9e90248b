"""Hostile request bodies get a 400 naming the object and field; nothing is stored."""

from __future__ import annotations

import json

import pytest

from allocation import models

pytestmark = pytest.mark.django_db

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
JSON_POD = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": %s}'


@pytest.mark.parametrize(("body", "content_type", "path", "message"), [
    (POD + "spec:\n  x: " + "[" * 100_000 + "]" * 100_000 + "\n", "application/yaml",
     "spec.x[0][0]", "nested more than 64 levels deep"),
    (POD + "spec:\n  x: " + "[" * 976 + "]" * 976 + "\n", "application/yaml",
     "spec.x[0][0]", "nested more than 64 levels deep"),
    (JSON_POD % ("[" * 100_000 + "]" * 100_000), "application/json",
     "<document>", "nested more than 64 levels deep"),
    (POD + "status: &a [*a]\n", "application/yaml", "status[0]", "recursive alias *a"),
    (POD + "a: &a '" + "x" * 60_000 + "'\nb: [" + ",".join(["*a"] * 100) + "]\n",
     "application/yaml", "b[", "4 MiB) limit once its aliases are expanded"),
    (POD + "spec:\n  nodeSelector: {5: x}\n", "application/yaml", "spec.nodeSelector.5",
     "is an integer (5), not a string"),
    (POD + "spec: {x: " + "9" * 5000 + "}\n", "application/yaml", "spec.x",
     "more than 4300 digits"),
    (JSON_POD % '{"x": 1, "x": 2}', "application/json", "spec.x", "duplicate key 'x'"),
])
def test_hostile_pod_bodies_are_a_400(user_client, body, content_type, path, message):
    response = user_client.post("/api/pods/", body, content_type=content_type)
    assert response.status_code == 400, response.content[:500]
    [problem] = response.json()["problems"]
    assert problem.startswith(f"request.{'json' if 'json' in content_type else 'yaml'}:1 "
                              f"(Pod default/p): {path}")
    assert message in problem
    assert not models.Pod.objects.exists()


def test_other_endpoints_read_json_within_the_same_bounds(user_client):
    deep = '{"name": "s", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = user_client.post("/api/scenarios/", deep, content_type="application/json")
    assert response.status_code == 400
    assert "nested more than 64 levels deep" in json.dumps(response.json())
    dup = '{"name": "a", "name": "b"}'
    response = user_client.post("/api/scenarios/", dup, content_type="application/json")
    assert response.status_code == 400
    assert "duplicate key 'name'" in json.dumps(response.json())
