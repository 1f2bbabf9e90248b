"""Mirrored objects are read-only in the console and the API (the check clusters/services.py
adds to allocation/services/permissions.py); scenarios may still change them."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from allocation.engine.writer import dump
from allocation.models import Pod
from clusters.kube.client import connect
from clusters.mirror import import_cluster
from tests.clusters.objects import node, pod

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(kubeconfig):
    import_cluster(connect(str(kubeconfig)))
    user = get_user_model().objects.create_user("ops", password="pw", is_staff=True)
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_refuses_edits_with_a_clear_message(staff):
    answer = staff.put("/api/pods/default/waiting/", dump(pod("waiting", cpu="4"), "yaml"),
                       content_type="application/yaml")
    assert answer.status_code == 403
    detail = answer.json()["detail"]
    assert detail.startswith("Pod default/waiting: read-only (context prod-eu)")
    assert "what-if scenario" in detail
    assert staff.delete("/api/nodes/node-a/").status_code == 403
    created = staff.post("/api/nodes/", dump(node("node-a"), "yaml"),
                         content_type="application/yaml")
    assert created.status_code in (403, 409)
    assert json.loads(Pod.objects.get(name="waiting").document)["spec"]["containers"][0][
        "resources"]["requests"]["cpu"] == "1"


def test_objects_of_ones_own_stay_writable(staff):
    answer = staff.post("/api/pods/", dump(pod("mine"), "yaml"),
                        content_type="application/yaml")
    assert answer.status_code == 201, answer.content


def test_the_upload_page_says_why(staff, client):
    client.force_login(get_user_model().objects.get(username="ops"))
    answer = client.post("/upload/", {"text": dump(pod("waiting", cpu="4"), "yaml")})
    assert answer.status_code == 400
    assert b"read-only (context prod-eu)" in answer.content


def test_a_scenario_may_change_them(staff):
    scenario = staff.post("/api/scenarios/", {"name": "bigger"}, format="json").json()
    url = f"/api/scenarios/{scenario['id']}/"
    answer = staff.post(url + "changes/", {"op": "add-object",
                                           "manifest": pod("waiting", cpu="2")}, format="json")
    assert answer.status_code == 200, answer.content
    # promoting it onto the mirrored baseline is refused: the cluster is the truth
    promoted = staff.post(url + "promote/")
    assert promoted.status_code == 403 and "read-only" in promoted.json()["detail"]
