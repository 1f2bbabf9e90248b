"""allocation.presenters.v1_claims: a v1 claim as the claim page shows it."""

from __future__ import annotations

from allocation.engine.manifests import load_texts
from allocation.engine.simulation import simulate
from allocation.presenters import v1_claims
from tests import factories as f
from tests import v1_cluster as v1


def _state(docs):
    return simulate(load_texts([("v1.yaml", f.to_yaml(docs))])).state


def test_an_allocated_claim_shows_its_results_selector_and_reservation():
    view = v1_claims.v1_claim_view(_state(v1.cluster()), "default", "net")
    assert (view.v1, view.state, view.node, view.node_url) == (
        True, "reserved", "n1", "/nodes/n1/")
    [request] = view.requests
    assert (request.name, request.device_class, request.class_url, request.mode,
            request.capacity) == ("gpu", "nic", "/deviceclasses/nic/", "ExactCount 1",
                                  (("bandwidth", "2G"),))
    [result] = view.results
    assert (result.request, result.driver, result.pool, result.device, result.admin_access,
            result.consumed) == ("gpu", v1.DRIVER, "n1", "nic-0", False,
                               (("bandwidth", "1953125Ki"),))  # upstream's rounded form
    assert result.share_id
    assert view.node_selector == "metadata.name In [n1]"
    assert view.reserved_for == [("p1", "/pods/default/p1/")]
    assert view.finalizers == ["resource.kubernetes.io/delete-protection"]


def test_a_pending_claim_names_its_waiting_pods():
    big = v1.claim("big", count=3)
    docs = [*v1.cluster()[:5], big, f.pod("p2", claims={"gpu": "big"})]
    state = _state(docs)
    view = v1_claims.v1_claim_view(state, "default", "big")
    assert (view.state, view.results, view.waiting_pods) == (
        "pending", [], [("p2", "/pods/default/p2/")])
    assert v1_claims.v1_claim_view(state, "default", "nope") is None


def test_the_allocation_config_of_the_class_is_listed():
    docs = v1.cluster()
    docs[1]["spec"]["config"] = [{"opaque": {"driver": v1.DRIVER, "parameters": {"a": 1}}}]
    view = v1_claims.v1_claim_view(_state(docs), "default", "c1")
    assert view.config == ['FromClass gpu.example.com for gpu: {"a": 1}']


def test_node_selector_text():
    selector = {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1", "r2"]}],
         "matchFields": [{"key": "metadata.name", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]}
    assert v1_claims.node_selector_text(selector) == (
        "rack In [r1, r2] and metadata.name Exists or zone DoesNotExist")
    assert v1_claims.node_selector_text(None) is None
