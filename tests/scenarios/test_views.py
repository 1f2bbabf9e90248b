from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from scenarios import services
from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(client):
    user = get_user_model().objects.create_user("alice", password="pw")
    client.force_login(user)
    return user


def test_login_is_required(client):
    assert client.get("/scenarios/").status_code == 302


def test_create_then_the_planner_shows_nodes_queue_and_outcome(client, alice):
    store()
    answer = client.post("/scenarios/new/", {"name": "plan"})
    assert answer.status_code == 302
    page = client.get(answer["Location"]).content.decode()
    assert 'data-drop="node" data-node="worker-1"' in page
    assert 'data-drag="pod" data-pod="default/p2"' in page  # pending, in the queue
    assert "Outcome vs baseline" in page
    assert "0/2 nodes are available" in page  # the pending pod's reason


def test_a_drop_posts_a_change_and_gets_the_new_body_or_the_refusal(client, alice):
    store()
    scenario = services.create(alice, "plan")
    url = f"/scenarios/{scenario.pk}/changes/"
    refused = client.post(url, {"op": "pin-pod", "pod": "default/p2", "node": "worker-1"},
                          HTTP_HX_REQUEST="true")
    assert refused["HX-Retarget"] == "#scenario-message"
    assert "Refused: default/p2 cannot run on worker-1" in refused.content.decode()
    done = client.post(url, {"op": "remove-node", "node": "worker-2"}, HTTP_HX_REQUEST="true")
    body = done.content.decode()
    assert 'id="scenario-body"' in body and "− worker-2" in body


def test_try_request_builds_a_provisioning_request(client, alice):
    from scenarios.views import change_from_form

    store()
    scenario = services.create(alice, "pr")
    change = change_from_form({"op": "try-request", "template": "default/trainer",
                               "count": "3", "pr_class": "check-capacity.kubernetes.io"},
                              scenario)
    manifest = change["manifest"]
    assert manifest["kind"] == "ProvisioningRequest"
    assert manifest["spec"]["podSets"] == [{"podTemplateRef": {"name": "trainer"}, "count": 3}]
    assert manifest["metadata"] == {"name": "what-if-trainer-1", "namespace": "default"}


def test_others_get_404_and_a_shared_link_is_read_only(client, alice):
    store()
    scenario = services.create(alice, "private")
    bob = get_user_model().objects.create_user("bob", password="pw")
    client.force_login(bob)
    assert client.get(f"/scenarios/{scenario.pk}/").status_code == 404
    services.set_shared(alice, scenario, True)
    page = client.get(f"/scenarios/{scenario.pk}/?token={scenario.share_token}")
    assert page.status_code == 200
    assert 'data-editable="false"' in page.content.decode()
    assert client.post(f"/scenarios/{scenario.pk}/changes/?token={scenario.share_token}",
                       {"op": "set-strategy", "strategy": "best-fit"}).status_code == 403


def test_export_downloads(client, alice):
    store()
    scenario = services.create(alice, "export")
    answer = client.get(f"/scenarios/{scenario.pk}/export/?what=cluster")
    assert answer["Content-Disposition"].endswith('-cluster.yaml"')
    assert b"kind: List" in answer.content
    assert client.get(f"/scenarios/{scenario.pk}/export/?what=bogus").status_code == 400


def test_a_refusal_is_swapped_into_the_message_area(client, alice):
    store()
    scenario = services.create(alice, "plan")
    refused = client.post(f"/scenarios/{scenario.pk}/changes/",
                          {"op": "pin-pod", "pod": "default/p2", "node": "worker-1"},
                          HTTP_HX_REQUEST="true")
    assert (refused["HX-Retarget"], refused["HX-Reswap"]) == ("#scenario-message", "innerHTML")


def test_deleting_sends_htmx_to_the_list_and_others_by_a_redirect(client, alice):
    store()
    first, second = services.create(alice, "one"), services.create(alice, "two")
    by_htmx = client.post(f"/scenarios/{first.pk}/delete/", HTTP_HX_REQUEST="true")
    assert by_htmx.status_code == 200 and by_htmx["HX-Redirect"] == "/scenarios/"
    plain = client.post(f"/scenarios/{second.pk}/delete/")
    assert plain.status_code == 302 and plain["Location"] == "/scenarios/"


def test_the_planner_draws_v1_devices_and_device_class_selectors(client, alice):
    from tests import v1_cluster as v1

    store(v1.cluster())
    answer = client.post("/scenarios/new/", {"name": "v1"})
    page = client.get(answer["Location"]).content.decode()
    assert 'data-id="n1/gpu-0-a">gpu-0-a · default/c1</span>' in page
    assert 'class="device free"' in page and 'data-id="n1/gpu-0-b"' in page
    assert 'aria-label="gpu-0-counters/memory: 40Gi of 80Gi used"' in page
    assert "spec.selectors[0].cel.expression" in page  # DeviceClass selectors are editable


def _many(nodes: int, pending: int) -> list[dict]:
    """A cluster with more nodes than the canvas draws and pods pending for two reasons."""
    from tests.factories import node, pod
    from tests.scenarios.cluster import documents

    docs = documents(pods=2)
    docs += [node(f"spare-{i:03}", labels={"draplanner.io/node-group": "spare"} if i % 2 else None)
             for i in range(nodes)]
    docs += [pod(f"wants-gpu-{i:03}", templates={"gpu": "big-gpu"}) for i in range(pending)]
    docs += [pod("wants-zone-z", node_selector={"zone": "z"})]
    return docs


def test_a_large_queue_is_grouped_by_reason_and_nodes_are_found_by_name_or_group(client, alice):
    store(_many(nodes=70, pending=40))
    url = client.post("/scenarios/new/", {"name": "big"})["Location"]
    page = client.get(url).content.decode()
    assert page.count('class="queue-group"') == 2
    assert "<strong>40 pods</strong>" in page and "<strong>1 pod</strong>" in page
    assert "and 15 more: move them with the Move form." in page
    assert page.count('data-drag="pod" data-pod="default/wants-') == 25 + 1
    assert page.count('<article class="node-card') == 60
    assert "12 more node(s) not drawn" in page

    found = client.get(url, {"nodes": "spare-00"}).content.decode()
    assert found.count('<article class="node-card') == 10
    assert 'value="spare-00"' in found  # the search box keeps what was asked
    grouped = client.get(url, {"group": "spare"}).content.decode()
    assert grouped.count('<article class="node-card') == 35
    assert 'data-node="spare-001"' in grouped and 'data-node="spare-000"' not in grouped


def test_a_change_names_the_page_that_asked_so_its_socket_skips_it(client, alice,
                                                                   monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(services, "publish", sent.append)
    store()
    scenario = services.create(alice, "origin")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/scenarios/{scenario.pk}/changes/", {"op": "remove-node",
                                                           "node": "worker-2"},
                    HTTP_HX_REQUEST="true", HTTP_X_SCENARIO_PAGE="page-1")
        client.post(f"/scenarios/{scenario.pk}/undo/", HTTP_HX_REQUEST="true",
                    HTTP_X_SCENARIO_PAGE="page-2")
        client.post(f"/scenarios/{scenario.pk}/redo/", HTTP_HX_REQUEST="true")
    assert [(p.event["position"], p.event["origin"]) for p in sent] == [
        (1, "page-1"), (0, "page-2"), (1, "")]


def test_a_large_clusters_first_view_answers_at_once_and_its_body_comes_after(
        client, alice, monkeypatch):
    from scenarios import evaluation

    store()
    scenario = services.create(alice, "plan")
    monkeypatch.setattr(evaluation, "PREPARE_FROM", 1)  # as if large
    evaluation.clear_caches()  # a server process that has made no baseline yet
    page = client.get(f"/scenarios/{scenario.pk}/?nodes=worker").content.decode()
    assert "Preparing the baseline" in page
    assert f'hx-get="/scenarios/{scenario.pk}/body/?nodes=worker"' in page
    assert 'data-drop="node"' not in page  # no baseline was built for this answer
    assert evaluation.first_build_ahead()
    body = client.get(f"/scenarios/{scenario.pk}/body/?nodes=worker",
                      HTTP_HX_REQUEST="true").content.decode()
    assert 'id="scenario-body"' in body
    assert 'data-drop="node" data-node="worker-1"' in body
    # the baseline is made now: the next view draws the planner at once
    assert not evaluation.first_build_ahead()
    assert 'data-drop="node" data-node="worker-1"' in client.get(
        f"/scenarios/{scenario.pk}/").content.decode()


def test_a_small_clusters_first_view_draws_the_planner(client, alice):
    from allocation.services.store import stored_count
    from scenarios import evaluation

    store()
    scenario = services.create(alice, "plan")
    evaluation.clear_caches()
    assert 0 < stored_count() < evaluation.PREPARE_FROM
    page = client.get(f"/scenarios/{scenario.pk}/").content.decode()
    assert "Preparing the baseline" not in page and 'data-drop="node"' in page


def test_a_field_the_profile_drops_from_an_added_object_is_said_on_the_page(client, alice):
    from django.test import override_settings

    from tests import v1_cluster as v1

    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "tolerant", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                 "deviceClassName": "gpu", "tolerations": [{"operator": "Exists"}]}}]}}}
    with override_settings(DRA_KUBERNETES_VERSION="1.35"):
        store(v1.cluster())
        scenario = services.add_change(alice, services.create(alice, "plan"),
                                       {"op": "add-object", "manifest": claim})
        page = client.get(f"/scenarios/{scenario.pk}/").content.decode()
    assert scenario.outcome["warnings"] == [
        "(ResourceClaim default/tolerant): spec.devices.requests[0].exactly.tolerations: "
        "field dropped: feature gate DRADeviceTaints is off in Kubernetes 1.35"]
    assert ('<li class="warning">(ResourceClaim default/tolerant): spec.devices.requests[0].'
            'exactly.tolerations: field dropped: feature gate DRADeviceTaints is off in '
            'Kubernetes 1.35</li>') in page
