"""allocation.services.node_rows: the node and device-usage rows of the read model, for
every node or for the nodes a pass's touched pods and claims concern."""

from __future__ import annotations

import pytest

from allocation.engine.objects import ObjectKey
from allocation.services import node_rows
from allocation.services.cluster import baseline_state, clear_cache
from allocation.services.manifests import import_texts
from tests import factories as f
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, request, slice_doc
from tests.settled import settle

pytestmark = pytest.mark.django_db

SEL = 'device.driver == "gpu.example.com"'


def _v1_node(name: str) -> list[dict]:
    return [f.node(name), slice_doc([{"name": f"d{i}"} for i in range(2)], name=f"{name}-s",
                                    nodeName=name, pool={"name": name,
                                                         "resourceSliceCount": 1})]


@pytest.fixture
def state():
    """Two seed nodes and two v1 nodes, a seed and a v1 pod with a claim each, settled."""
    import_texts([("c.yaml", f.to_yaml([
        f.resource_class("seed-gpu"), class_doc(selectors=[{"cel": {"expression": SEL}}]),
        f.node("n1"), f.named_slice("n1", [f.device("d0")]),
        f.node("n2"), f.named_slice("n2", [f.device("d1")]), *_v1_node("m1"), *_v1_node("m2"),
        f.claim_parameters("one", "true"),
        f.claim("c1", class_name="seed-gpu", params="one"), f.pod("p1", claims={"gpu": "c1"}),
        claim_doc([request()], name="v1"), f.pod("q1", claims={"gpu": "v1"})]))])
    settle()
    clear_cache()
    return baseline_state()


def _node_of(state, kind: str, name: str) -> str:
    spans = node_rows.spans_of(state, node_rows.pool_nodes(state))
    if kind == "Pod":
        return state.objects[ObjectKey("Pod", "default", name)].node_name
    [node] = spans[("default", name)]
    return node


def test_the_rows_of_some_nodes_are_those_of_every_node_restricted_to_them(state):
    nodes, usage = node_rows.node_rows(state)
    assert {n for (n, *_rest) in usage} == {"n1", "n2", "m1", "m2"}  # both dialects counted
    assert any(row["used"] for row in usage.values())
    for only in ({"n1"}, {"m1"}, {"n2", "m2"}, {"n1", "m1", "gone"}, set()):
        some_nodes, some_usage = node_rows.node_rows(state, only)
        assert some_nodes == {k: v for k, v in nodes.items() if k[0] in only}
        assert some_usage == {k: v for k, v in usage.items() if k[0] in only}


def test_a_claim_counts_on_the_node_of_what_it_holds(state):
    pools = node_rows.pool_nodes(state)
    spans = node_rows.spans_of(state, pools)
    seed = state.objects[ObjectKey("Pod", "default", "p1")].node_name
    v1 = state.objects[ObjectKey("Pod", "default", "q1")].node_name
    assert spans[("default", "c1")] == {seed} and seed in ("n1", "n2")
    assert spans[("default", "v1")] == {v1} and v1 in ("m1", "m2")


def test_touched_pods_and_claims_concern_their_nodes_then_and_now(state):
    pools = node_rows.pool_nodes(state)
    spans = node_rows.spans_of(state, pools)
    seed_node = _node_of(state, "ResourceClaim", "c1")
    claim = state.objects[ObjectKey("ResourceClaim", "default", "c1")]
    claim.allocation = None  # deallocated since the last sync: its old node still counts
    pod_rows = {("default", "p1"): {"node": "n9"}}  # where the last sync saw the pod

    touched = [ObjectKey("ResourceClaim", "default", "c1"), ObjectKey("Pod", "default", "p1")]
    nodes = node_rows.affected(state, touched, pod_rows, spans, pools)

    assert nodes == {seed_node, "n9", _node_of(state, "Pod", "p1")}
    assert spans[("default", "c1")] == frozenset()  # what the next pass starts from


def test_a_deleted_claim_is_forgotten(state):
    pools = node_rows.pool_nodes(state)
    spans = node_rows.spans_of(state, pools)
    held_on = _node_of(state, "ResourceClaim", "v1")
    state.remove(state.objects[ObjectKey("ResourceClaim", "default", "v1")])

    nodes = node_rows.affected(state, [ObjectKey("ResourceClaim", "default", "v1")], {},
                               spans, pools)

    assert nodes == {held_on}
    assert ("default", "v1") not in spans


@pytest.mark.parametrize("touched", [ObjectKey("Node", None, "n1"),
                                     ObjectKey("ResourceSlice", None, "m1-s"),
                                     ObjectKey("DeviceClass", None, "gpu")])
def test_anything_else_touched_makes_every_row_again(state, touched):
    pools = node_rows.pool_nodes(state)
    spans = node_rows.spans_of(state, pools)
    keys = [touched, ObjectKey("Pod", "default", "p1")]

    assert node_rows.affected(state, keys, {}, spans, pools) is None


def test_a_claim_whose_nodes_cannot_be_told_makes_every_row_again(state):
    pools = node_rows.pool_nodes(state)
    spans = node_rows.spans_of(state, pools)
    spans[("default", "c1")] = None  # held on nodes nobody could name
    key = ObjectKey("ResourceClaim", "default", "c1")

    assert node_rows.affected(state, [key], {}, spans, pools) is None
    assert spans[("default", "c1")] is not None  # known again from now on


def test_the_rows_of_some_nodes_read_only_the_claims_holding_devices_there(state):
    spans = node_rows.spans_of(state, node_rows.pool_nodes(state))
    v1_node = _node_of(state, "ResourceClaim", "v1")
    other = ({"m1", "m2"} - {v1_node}).pop()
    held = [c.name for c in node_rows.holding(state, spans, {v1_node, "n1", "n2"})]
    assert "v1" in held and node_rows.holding(state, spans, {other}) == []
    for only in ({v1_node}, {other}, {"n1", v1_node}, set()):
        assert node_rows.node_rows(state, only, spans) == node_rows.node_rows(state, only)
    assert node_rows.node_rows(state, {v1_node}, spans)[0][(v1_node,)]["devices_used"] == 1
