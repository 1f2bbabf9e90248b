"""The REST API's lists: cursor pagination and the lists' FilterSets (shared with pages)."""

from __future__ import annotations

import base64

import pytest

from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.services import reconcile as passes
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


def _names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [i["metadata"]["name"] for i in response.json()["items"]]


@pytest.fixture
def settled(db):
    docs = [f.node("n1", labels={NODE_GROUP_LABEL: "big", "zone": "a"}),
            f.node("n2", labels={"zone": "b"}),
            f.named_slice("n1", [f.device("d0")]), f.resource_class(),
            f.claim("c1"), f.pod("p1", claims={"gpu": "c1"}),
            *(f.pod(f"w{i}", node_selector={"no": "where"}) for i in range(5))]
    import_texts([("a.yaml", f.to_yaml(docs))])
    passes.reconcile()


def test_a_list_is_paged_by_cursor(user_client, settled):
    first = user_client.get("/api/pods/", {"limit": 4}).json()

    assert (first["apiVersion"], first["kind"]) == ("v1", "List")
    assert [i["metadata"]["name"] for i in first["items"]] == ["p1", "w0", "w1", "w2"]
    cursor = first["metadata"]["continue"]
    assert f"cursor={cursor}" in first["metadata"]["next"]

    rest = user_client.get("/api/pods/", {"limit": 4, "cursor": cursor}).json()

    assert [i["metadata"]["name"] for i in rest["items"]] == ["w3", "w4"]
    assert "continue" not in rest["metadata"] and "previous" in rest["metadata"]


@pytest.mark.parametrize("cursor", [b"p=abc", b"o=1&p=1.5", b"p="])
def test_a_cursor_edited_by_hand_is_refused_as_invalid(user_client, settled, cursor):
    # the position is compared with an integer column: a 404 as DRF's own bad cursor
    answer = user_client.get("/api/pods/", {"cursor": base64.b64encode(cursor).decode()})
    assert answer.status_code == 404 and answer.json() == {"detail": "Invalid cursor"}


def test_the_whole_list_fits_one_page_by_default(user_client, settled):
    listing = user_client.get("/api/pods/").json()

    assert len(listing["items"]) == 6 and listing["metadata"] == {}


def test_pods_filter_as_the_pod_list_page_does(user_client, settled):
    reason = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    assert _names(user_client.get("/api/pods/", {"status": "Scheduled"})) == ["p1"]
    assert _names(user_client.get("/api/pods/", {"node_group": "big"})) == ["p1"]
    assert _names(user_client.get("/api/pods/", {"q": "w", "limit": 2})) == ["w0", "w1"]
    assert len(_names(user_client.get("/api/pods/", {"reason": reason}))) == 5


def test_nodes_and_claims_filter_by_label_group_driver_and_class(user_client, settled):
    assert _names(user_client.get("/api/nodes/", {"label": "zone=b"})) == ["n2"]
    assert _names(user_client.get("/api/nodes/", {"label": "zone"})) == ["n1", "n2"]
    assert _names(user_client.get("/api/nodes/", {"node_group": "big"})) == ["n1"]
    assert _names(user_client.get("/api/nodes/", {"driver": f.DRIVER})) == ["n1"]
    assert _names(user_client.get("/api/resourceclaims/", {"class": "gpu",
                                                            "node": "n1"})) == ["c1"]


def test_events_filter_by_kind_type_and_reason(user_client, settled):
    warnings = user_client.get("/api/events/", {"kind": "Pod", "status": "Warning"}).json()

    assert {i["reason"] for i in warnings["items"]} == {"FailedScheduling"}
    assert len(warnings["items"]) == 5


def test_a_value_a_filter_does_not_take_is_a_400_naming_it(user_client, settled):
    response = user_client.get("/api/pods/", {"status": "Sleeping"})

    assert response.status_code == 400
    assert "Sleeping is not one of the available choices" in response.json()["status"]
