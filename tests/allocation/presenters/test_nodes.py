"""allocation.presenters.nodes: partition trees as boxes, counters as bars, named devices."""

from __future__ import annotations

from allocation.presenters.nodes import node_view
from tests.allocation.presenters.docs import cluster_docs, cluster_state, mig_slice
from tests.factories import node, pod, run


def _boxes(box, out=None) -> dict:
    out = {} if out is None else out
    out[box.id] = box
    for child in box.children:
        _boxes(child, out)
    return out


def test_tree_shows_allocated_leaf_with_its_claim_and_the_locked_scheme() -> None:
    view = node_view(cluster_state(), "gpu-node")

    (tree,) = view.trees
    assert (tree.driver, tree.total, tree.allocated) == ("gpu.example.com", 3, 1)
    boxes = _boxes(tree.roots[0])
    assert boxes["gpu-0"].status == "partitioned"
    assert boxes["gpu-0"].note == "scheme halves in use"
    half = boxes["gpu-0/halves/half-0"]
    assert (half.status, half.claim, half.claim_url) == (
        "allocated", "default/half-a", "/claims/default/half-a/")
    assert boxes["gpu-0/halves/half-1"].status == "free"
    assert boxes["gpu-0/halves"].status == "active"
    assert boxes["gpu-0/whole"].status == "locked-out"
    full = boxes["gpu-0/whole/full"]
    assert full.status == "blocked"
    assert full.note == "gpu-0 is locked to scheme halves by claim(s) default/half-a"


def test_unused_tree_is_all_free_with_no_scheme_chosen() -> None:
    state = run([node("n"), mig_slice("n")]).state

    boxes = _boxes(node_view(state, "n").trees[0].roots[0])
    assert boxes["gpu-0"].note == "no scheme chosen"
    assert {b.status for i, b in boxes.items() if b.kind == "group"} == {"available"}
    assert [b.status for b in boxes.values() if b.kind == "instance" and not b.children] == [
        "free", "free", "free"]


def test_counters_are_bars_with_their_holders() -> None:
    (bar,) = node_view(cluster_state(), "gpu-node").counters

    assert (bar.id, bar.total, bar.used, bar.left, bar.percent) == ("vf", 4, 3, 1, 75)
    assert bar.labels == {"link": "fast"}
    assert bar.holders == [("default/net", 3, "/claims/default/net/")]


def test_named_devices_pods_claims_and_capacity() -> None:
    view = node_view(cluster_state(), "card-node")

    assert [(d.name, d.claim) for d in view.named] == [("card-0", "default/card-a"),
                                                        ("card-1", None)]
    assert view.pods == [("default", "card-user", "/pods/default/card-user/")]
    assert view.claims == [("default/card-a", "/claims/default/card-a/")]
    assert [(r.resource, r.allocatable) for r in view.capacity] == [
        ("cpu", "8"), ("memory", "32Gi"), ("pods", "110")]
    assert view.trees == [] and view.counters == []


def test_unknown_node_is_none() -> None:
    assert node_view(run(cluster_docs()[:1]).state, "nope") is None


def test_named_devices_show_their_attributes() -> None:
    view = node_view(cluster_state(), "card-node")
    assert [d.attributes for d in view.named] == [[("memory", "16Gi")], [("memory", "16Gi")]]


def test_partition_boxes_show_the_attributes_each_level_gives() -> None:
    """A scheme shows its commonAttributesRefs, an instance its own refs and attributes."""
    docs = mig_slice("n")
    spec = docs["spec"]["partitionable"]
    spec["commonAttributes"].append(
        {"name": "a100", "attributes": [{"name": "productName", "string": "A100"}]})
    gpu = spec["resourceInstances"][0]
    gpu["commonAttributesRefs"] = ["a100"]
    gpu["partitions"][1]["resourceInstances"][0]["attributes"] = [
        {"name": "slot", "int": 0}]

    boxes = _boxes(node_view(run([node("n"), docs]).state, "n").trees[0].roots[0])

    assert boxes["gpu-0"].attributes == [("productName", "A100")]
    assert boxes["gpu-0/whole"].attributes == [("memory", "80Gi")]
    assert boxes["gpu-0/halves"].attributes == [("memory", "40Gi")]
    assert boxes["gpu-0/halves/half-0"].attributes == [("slot", "0")]
    assert boxes["gpu-0/halves/half-1"].attributes == []


def test_capacity_lists_device_plugin_resources_with_what_pods_hold() -> None:
    worker = node("n")
    worker["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    user = pod("user")
    user["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "3"}}

    view = node_view(run([worker, user]).state, "n")

    gpu = view.capacity[-1]
    assert (gpu.resource, gpu.used, gpu.allocatable, gpu.percent) == ("nvidia.com/gpu", "3",
                                                                       "4", 75)
