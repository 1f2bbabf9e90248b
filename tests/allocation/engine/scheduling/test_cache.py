"""The placement cache (``allocation/engine/scheduling/cache.py``): its entries, then v1 pods
alike sharing a pass's cache in simulations, with the results a scan without it gives."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.engine.scheduling.cache import PlacementCache
from allocation.engine.simulation import simulate
from allocation.engine.writer import dump
from tests.allocation.engine.manifests.v1_docs import (
    class_doc,
    device,
    load,
    slice_doc,
)
from tests.allocation.engine.scheduling.v1_outputs import items, pod_condition, twins
from tests.factories import node, pod


def test_twins_resume_where_the_last_one_was_placed_until_the_epoch_changes():
    cache: PlacementCache[str] = PlacementCache()
    assert cache.start(("p",), 0) == 0
    cache.placed(("p",), 0, 3)
    assert cache.start(("p",), 0) == 3
    assert cache.start(("q",), 0) == 0
    assert cache.start(("p",), 1) == 0


def test_a_failure_is_remembered_for_its_epoch_and_ends_the_scan():
    cache: PlacementCache[str] = PlacementCache()
    cache.failed(("p",), 2, 10, "no node")
    assert cache.failure(("p",), 2) == "no node"
    assert cache.start(("p",), 2) == 10
    assert cache.failure(("p",), 3) is None
    assert cache.start(("p",), 3) == 0


# -- alike pods share a pass's placement cache; results stay exact ------------------------
def _template_pods(count: int) -> list[dict]:
    docs = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "t", "namespace": "default"},
             "spec": {"spec": {"devices": {"requests": [
                 {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}}]
    for i in range(count):
        doc = pod(f"p{i}")
        doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
        docs.append(doc)
    return docs


def test_alike_pods_fill_nodes_in_order_and_the_last_counts_every_node():
    docs = [node("node-0", unschedulable=True), node("node-1"), node("node-2"), class_doc()]
    for name in ("node-0", "node-1", "node-2"):
        docs.append(slice_doc([device("gpu-0")], name=f"{name}-gpus", nodeName=name,
                              pool={"name": name, "resourceSliceCount": 1}))
    output = simulate(load(docs + _template_pods(4))).output()
    pods = items(output, "Pod")
    assert [pods[f"p{i}"]["spec"].get("nodeName") for i in range(4)] == [
        "node-1", "node-2", None, None]
    for name in ("p2", "p3"):
        assert pod_condition(output, name) == (
            "Unschedulable", "0/3 nodes are available: 1 node(s) were unschedulable, "
            "2 cannot allocate all claims.")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 2)), max_size=12))
def test_alike_pods_get_what_a_scan_without_the_placement_cache_gives(shapes):
    docs = twins(shapes)
    cached = dump(simulate(load(docs)).output(), "yaml")
    with patch("allocation.engine.scheduling.v1_views.signature", return_value=None):
        assert dump(simulate(load(docs)).output(), "yaml") == cached
