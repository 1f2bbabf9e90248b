"""Input status is validated: allocated devices exist and are held by one claim only."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.state import ClusterState
from tests.factories import claim, device, named_slice, node, pod, resource_class, to_yaml


def _status(device_id: str, node_name: str = "n0", reserved: int = 1) -> dict:
    return {"driverName": "cards.dra.example.com", "allocation": {"resourceHandles": [{
        "driverName": "cards.dra.example.com", "structuredData": {
            "nodeName": node_name,
            "namedResourcesWithAttributes": {"resources": [{"id": device_id}]}}}]},
        "reservedFor": [{"resource": "pods", "name": f"p{i}"} for i in range(reserved)]}


def _problems(docs) -> list[str]:
    loaded = load_texts([("in.yaml", to_yaml(docs))])
    with pytest.raises(InvalidManifests) as info:
        ClusterState.build(loaded)
    return [str(p) for p in info.value.problems]


BASE = [resource_class("gpu"), node("n0"), named_slice("n0", [device("d0"), device("d1")])]


def test_duplicate_allocation_in_input_status():
    lines = _problems(BASE + [claim("a", status=_status("d0")), claim("b", status=_status("d0"))])
    assert lines == ["in.yaml:5 (ResourceClaim default/b): status.allocation.resourceHandles[0]."
                     "structuredData.namedResourcesWithAttributes[0]: device d0 is already "
                     "allocated to claim default/a; a device may not be allocated to claim "
                     "default/b as well"]


def test_unknown_device_and_node():
    lines = _problems(BASE + [claim("a", status=_status("d9")),
                              claim("b", status=_status("d0", node_name="n7"))])
    assert "no device 'd9' of driver cards.dra.example.com on node n0" in lines[0]
    assert "node 'n7' publishes no namedResourcesWithAttributes resources" in lines[1]


def test_reservations_and_pod_nodes():
    lines = _problems(BASE + [claim("a", status=_status("d0", reserved=2)),
                              pod("p", node_name="ghost")])
    assert any("(Pod default/p): spec.nodeName: node 'ghost' not found" in x for x in lines)
    assert any("not shareable may be reserved for one pod, found 2" in x for x in lines)


def test_valid_status_is_taken_as_it_stands():
    loaded = load_texts([("in.yaml", to_yaml(BASE + [claim("a", status=_status("d1"))]))])
    state = ClusterState.build(loaded)
    [inventory] = state.inventories["n0"]
    assert inventory.holder == {"d1": "default/a"}
