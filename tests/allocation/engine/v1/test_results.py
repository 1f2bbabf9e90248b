"""The written-back allocation (docs/v1.md, written back): config merge with its
duplication quirk, node selectors, result fields."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import AllocationError
from tests.allocation.engine.v1.builders import (
    allocator,
    claim,
    device,
    device_class,
    first_available,
    node,
    request,
    slice_,
)

OPAQUE = {"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}
OPAQUE2 = {"opaque": {"driver": "gpu.example.com", "parameters": {"b": 2}}}


def _alloc(*claims, classes=None, devices=4):
    a = allocator([slice_("s1", [device(f"d{i}") for i in range(devices)])], classes)
    out = a.allocate(node(), list(claims))
    assert out.fits, out.reason
    return out.allocations


def test_class_config_once_per_class_with_requests_appended():
    cls = device_class("gpu", config=[OPAQUE, OPAQUE2])
    [alloc] = _alloc(claim("c0", request("r0"), request("r1")), classes=[cls])
    assert alloc["devices"]["config"] == [
        {"source": "FromClass", "requests": ["r0", "r1"], **OPAQUE},
        {"source": "FromClass", "requests": ["r0", "r1"], **OPAQUE2}]


def test_claim_config_naming_two_requests_is_duplicated():
    c = claim("c0", request("r0"), request("r1"), config=[
        {"requests": ["r0", "r1"], **OPAQUE}, {**OPAQUE2}])
    [alloc] = _alloc(c)
    assert alloc["devices"]["config"] == [
        {"source": "FromClaim", "requests": ["r0", "r1"], **OPAQUE},
        {"source": "FromClaim", "requests": ["r0", "r1"], **OPAQUE},
        {"source": "FromClaim", **OPAQUE2}]


def test_subrequest_config_only_when_chosen():
    c = claim("c0", first_available("r", request("big", count=9), request("one")), config=[
        {"requests": ["r/big"], **OPAQUE}, {"requests": ["r/one"], **OPAQUE2}])
    cls = device_class("gpu", config=[OPAQUE])
    [alloc] = _alloc(c, classes=[cls])
    assert alloc["devices"]["config"] == [
        {"source": "FromClass", "requests": ["r/one"], **OPAQUE},
        {"source": "FromClaim", "requests": ["r/one"], **OPAQUE2}]
    assert alloc["devices"]["results"][0]["request"] == "r/one"


def test_result_fields_only_when_set():
    [alloc] = _alloc(claim("c0"))
    assert alloc["devices"]["results"] == [
        {"request": "req", "driver": "gpu.example.com", "pool": "node-1", "device": "d0"}]
    assert "config" not in alloc["devices"]


def test_tolerations_not_copied_in_134():
    tol = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    a = allocator([slice_("s1", [device("d0")])], release="1.34")
    out = a.allocate(node(), [claim("c0", request(tolerations=tol))])
    assert "tolerations" not in out.allocations[0]["devices"]["results"][0]


def test_per_device_node_name_gives_the_node_name_selector():
    devs = [{"name": "a", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}},
        {"name": "b", "nodeName": "node-1"}]
    a = allocator([slice_("s", devs, node=None, pool="p", perDeviceNodeSelection=True)])
    out = a.allocate(node(zone="a"), [claim("c0", request(count=2))])
    assert out.allocations[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0][
        "values"] == ["node-1"]
    out = a.allocate(node(zone="a"), [claim("c0")])
    assert out.allocations[0]["nodeSelector"] == devs[0]["nodeSelector"]


def test_node_local_selector_is_the_nodes_one_shared_selector():
    # one dict per node, shared by every allocation on it (objects/resource.py's
    # node_selector_for, the seed's): equal to the written form, never made per claim
    from allocation.engine.objects.resource import node_selector_for

    a = allocator([slice_("s1", [device("d0"), device("d1")])])
    first = a.allocate(node(), [claim("c0")]).allocations[0]
    a.commit(claim("c0"), first)
    second = a.allocate(node(), [claim("c1")]).allocations[0]
    assert first["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}
    assert first["nodeSelector"] is second["nodeSelector"] is node_selector_for("node-1")


def test_selector_with_two_terms_is_fatal():
    term = {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}
    sel = {"nodeSelectorTerms": [term, term]}
    a = allocator([slice_("s1", [device("d0")], node=None, pool="p", nodeSelector=sel)])
    with pytest.raises(AllocationError, match="create NodeSelector for claim c0: unsupported"):
        a.allocate(node(zone="a"), [claim("c0")])


def test_allocated_node_name_reads_the_node_local_selector_only():
    from allocation.engine.v1.results import allocated_node_name

    def selector(*terms):
        return {"nodeSelector": {"nodeSelectorTerms": list(terms)}}

    local = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert allocated_node_name(selector(local)) == "n1"
    assert allocated_node_name(None) is None and allocated_node_name({}) is None
    rack = {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
    assert allocated_node_name(selector(rack)) is None
    assert allocated_node_name(selector({**local, **rack})) is None
    assert allocated_node_name(selector(local, local)) is None


def test_a_claim_of_no_request_is_allocated_with_no_device():
    # ``spec: {}``: the API server writes the Go struct ``devices: {}``; the allocator
    # gives it an allocation of no result (``results`` is omitempty), and its pod runs
    from tests.factories import node, run

    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "empty", "namespace": "default"}, "spec": {}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "main", "resources": {"claims": [{"name": "c"}]}}],
                    "resourceClaims": [{"name": "c", "resourceClaimName": "empty"}]}}
    state = run([node("n1"), claim, pod]).state
    assert state.get("Pod", "default", "p").node_name == "n1"
    written = state.get("ResourceClaim", "default", "empty").to_manifest()
    assert written["spec"] == {"devices": {}}
    assert written["status"]["allocation"]["devices"] == {}
