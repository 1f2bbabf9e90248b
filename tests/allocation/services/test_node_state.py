"""allocation.services.node_state: one node's state from the rows that concern it shows what
the whole baseline shows for that node, reading rows of that node only."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from allocation.engine.writer import dump
from allocation.presenters.manifest import manifest_view
from allocation.presenters.nodes import node_view
from allocation.services import cluster
from allocation.services.node_state import node_rows, node_state
from bench.generate import named_gpu_cluster, named_gpu_cluster_v1
from tests import factories as f
from tests import v1_cluster as v1
from tests.allocation.presenters.docs import cluster_docs
from tests.settled import store_settled

pytestmark = pytest.mark.django_db

DEMO = Path(settings.BASE_DIR) / "examples" / "demo.yaml"


def _same_as_the_baseline() -> None:
    whole = cluster.baseline_state()
    assert whole.nodes
    for name in whole.nodes:
        state, revision = node_state(name)
        assert revision == cluster.revision()
        assert node_view(state, name) == node_view(whole, name), name
        assert manifest_view(state, "Node", None, name) == manifest_view(
            whole, "Node", None, name)


@pytest.mark.parametrize("text", [
    pytest.param(lambda: DEMO.read_text(), id="demo"),
    pytest.param(lambda: f.to_yaml(cluster_docs()), id="trees-counters-named"),
    pytest.param(lambda: f.to_yaml(v1.cluster()), id="v1"),
    pytest.param(lambda: "---\n".join(dump(d) for d in named_gpu_cluster_v1(6, 20)),
                 id="v1-generated"),
])
def test_every_node_is_drawn_as_the_whole_baseline_draws_it(text):
    store_settled(text())

    _same_as_the_baseline()


def _fabric() -> list[dict]:
    """Nodes n1 and n2 with their own pools, a network-attached pool ``fabric`` of another
    driver that every node sees, claim ``both`` (a GPU half of its node and a port) and claim
    ``port`` (a port only), each named by a pod."""
    fabric = {"apiVersion": v1.V1, "kind": "ResourceSlice", "metadata": {"name": "fabric"},
              "spec": {"driver": "net.example.com", "allNodes": True,
                       "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": f"port-{i}"} for i in range(3)]}}
    both = v1.claim("both")
    both["spec"]["devices"]["requests"].append(
        {"name": "port", "exactly": {"deviceClassName": "port"}})
    return [f.node("n1"), f.node("n2"), v1.device_class(),
            v1.device_class("port", 'device.driver == "net.example.com"'),
            *v1.resource_slices("n1"), *v1.resource_slices("n2"), fabric,
            both, v1.claim("port", "port"),
            f.pod("p1", claims={"both": "both"}), f.pod("p2", claims={"port": "port"})]


def test_a_network_device_held_for_another_node_shows_its_holder():
    store_settled(f.to_yaml(_fabric()))
    whole = cluster.baseline_state()
    held = {r.get("device") for c in whole.of_kind(type(whole.get("ResourceClaim", "default",
                                                                    "both")))
            for r in c.results if r.get("pool") == "fabric"}
    assert len(held) == 2  # both claims hold a port, so some node sees another's holder

    _same_as_the_baseline()


def test_an_unknown_node_has_no_rows():
    store_settled(f.to_yaml(cluster_docs()))

    assert node_rows("nope") == []
    state, _revision = node_state("nope")
    assert node_view(state, "nope") is None


def test_only_the_nodes_own_pods_and_claims_are_read():
    store_settled("---\n".join(dump(d) for d in named_gpu_cluster(8, 40)))

    rows = node_rows("node-3")
    pods = [r for r in rows if r.KIND == "Pod"]
    assert pods and {r.node_name for r in pods} == {"node-3"}
    assert {r.name for r in rows if r.KIND == "Node"} == {"node-3"}
    assert all(getattr(r, "node_name", "node-3") == "node-3" for r in rows)


def _node_page_queries(client, name: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/nodes/{name}/")
    assert response.status_code == 200
    return len(captured)


def test_the_node_page_reads_a_fixed_number_of_queries_whatever_the_size(
        admin_client, monkeypatch, django_assert_max_num_queries):
    def refuse():
        raise AssertionError("the node page must not build the whole cluster")

    monkeypatch.setattr(cluster, "baseline_state", refuse)
    store_settled("---\n".join(dump(d) for d in named_gpu_cluster(4, 16)))
    small = _node_page_queries(admin_client, "node-1")
    store_settled("---\n".join(dump(d) for d in named_gpu_cluster(40, 160)))  # ten times as many

    with django_assert_max_num_queries(small):
        _node_page_queries(admin_client, "node-01")
    assert small <= 16
