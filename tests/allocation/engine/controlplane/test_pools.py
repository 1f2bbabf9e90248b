"""A simulated driver's pools: reach, free counts, attributing input allocations."""

from __future__ import annotations

from allocation.engine.controlplane.pools import PoolBook, available_on, node_selector_of
from allocation.engine.objects import DriverSimulation, Node, ResourceClaim
from tests.allocation.engine.controlplane.cp_factories import cp_claim, driver_sim
from tests.factories import node

NODES = {n["metadata"]["name"]: Node(n) for n in (
    node("n1", {"rack": "a"}), node("n2", {"rack": "b"}), node("n3", {"rack": "b"}))}


def _book(pools) -> PoolBook:
    return PoolBook.build(DriverSimulation(driver_sim("d.example.com", pools)), NODES)


def test_label_selector_becomes_the_equivalent_node_selector():
    assert node_selector_of(None) is None
    assert node_selector_of({}) is None
    selector = node_selector_of({"matchLabels": {"rack": "b"}, "matchExpressions": [
        {"key": "zone", "operator": "Exists"}]})
    assert selector == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["b"]},
        {"key": "zone", "operator": "Exists"}]}]}


def test_pools_reach_the_nodes_their_selector_matches_and_count_what_is_held():
    book = _book([("pa", 1, {"rack": "a"}), ("pb", 3, {"rack": "b"}), ("all", 1, None)])
    assert book.pool("pb").nodes == {"n2", "n3"}
    assert book.pool("all").nodes == {"n1", "n2", "n3"}
    assert book.pool("all").available_on_nodes is None
    assert book.for_node("n1", 1).name == "pa"
    assert book.for_node("n1", 2) is None
    book.take("default/x", book.pool("pa"), 1)
    assert book.for_node("n1", 1).name == "all"
    assert book.summary() == "pa 0/1 free, pb 3/3 free, all 1/1 free"
    book.release("default/x")
    assert book.for_node("n1", 1).name == "pa"


def test_immediate_pool_must_reach_a_node_the_class_finds_suitable():
    book = _book([("pa", 1, {"rack": "a"}), ("pb", 1, {"rack": "b"})])
    suitable = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["b"]}]}]}
    assert book.for_immediate(1, None, NODES).name == "pa"
    assert book.for_immediate(1, suitable, NODES).name == "pb"
    assert book.for_immediate(2, None, NODES) is None


def test_input_allocation_is_attributed_to_the_pool_it_names():
    book = _book([("pa", 1, {"rack": "a"}), ("pb", 1, {"rack": "b"})])
    status = {"allocation": {"resourceHandles": [{"driverName": "d.example.com"}],
                             "availableOnNodes": node_selector_of({"matchLabels": {"rack": "b"}})}}
    claim = ResourceClaim(cp_claim("c", "acc", status=status))
    assert book.attribute(claim, 1, NODES).name == "pb"
    assert available_on(claim, NODES["n2"]) and not available_on(claim, NODES["n1"])
    by_name = {"allocation": {"resourceHandles": [], "availableOnNodes": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    assert book.attribute(ResourceClaim(cp_claim("d", "acc", status=by_name)), 1,
                          NODES).name == "pa"
