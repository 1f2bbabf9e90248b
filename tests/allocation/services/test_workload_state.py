"""allocation.services.workload_state: a pod's or a claim's state from the rows that concern
it shows what the whole baseline shows on its page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from allocation.engine.writer import dump
from allocation.presenters.manifest import manifest_view
from allocation.presenters.v1_claims import v1_claim_view
from allocation.presenters.workloads import claim_view, pod_view
from allocation.services import cluster
from allocation.services.workload_state import claim_rows, claim_state, pod_rows, pod_state
from bench.generate import named_gpu_cluster, named_gpu_cluster_v1
from tests import factories as f
from tests import v1_cluster as v1
from tests.allocation.presenters.docs import cluster_docs
from tests.settled import store_settled

pytestmark = pytest.mark.django_db

EXAMPLES = Path(settings.BASE_DIR) / "examples"


def _same_as_the_baseline() -> tuple[int, int]:
    """Every pod's and claim's page context equals the whole baseline's; returns how many
    pods and claims were built from their own rows."""
    whole = cluster.baseline_state()
    own = [0, 0]
    for pod in whole.pods():
        namespace, name = pod.namespace, pod.name
        state, revision = pod_state(namespace, name) or (whole, cluster.revision())
        own[0] += state is not whole
        assert revision == cluster.revision()
        assert pod_view(state, namespace, name) == pod_view(whole, namespace, name), name
        assert manifest_view(state, "Pod", namespace, name) == manifest_view(
            whole, "Pod", namespace, name)
    for claim in [o for o in whole.all_objects() if o.kind == "ResourceClaim"]:
        namespace, name = claim.namespace, claim.name
        state, revision = claim_state(namespace, name) or (whole, cluster.revision())
        own[1] += state is not whole
        assert revision == cluster.revision()
        assert claim_view(state, namespace, name) == claim_view(whole, namespace, name), name
        assert v1_claim_view(state, namespace, name) == v1_claim_view(whole, namespace, name)
        assert manifest_view(state, "ResourceClaim", namespace, name) == manifest_view(
            whole, "ResourceClaim", namespace, name)
    return own[0], own[1]


@pytest.mark.parametrize("text", [
    pytest.param(lambda: (EXAMPLES / "demo.yaml").read_text(), id="demo"),
    pytest.param(lambda: (EXAMPLES / "quickstart.yaml").read_text(), id="quickstart"),
    pytest.param(lambda: (EXAMPLES / "v1-gpus.yaml").read_text(), id="v1-gpus"),
    pytest.param(lambda: f.to_yaml(cluster_docs()), id="trees-counters-named"),
    pytest.param(lambda: f.to_yaml(v1.cluster()), id="v1"),
    pytest.param(lambda: "---\n".join(dump(d) for d in named_gpu_cluster(6, 30)),
                 id="generated"),
    pytest.param(lambda: "---\n".join(dump(d) for d in named_gpu_cluster_v1(6, 20)),
                 id="v1-generated"),
])
def test_every_pod_and_claim_page_is_the_whole_baselines(text):
    store_settled(text())

    pods, claims = _same_as_the_baseline()
    assert pods and claims  # the own-rows path is really taken


def test_a_bound_pod_reads_its_node_not_the_cluster():
    store_settled("---\n".join(dump(d) for d in named_gpu_cluster(8, 40)))
    whole = cluster.baseline_state()
    pod = next(p for p in whole.pods() if p.node_name)
    rows, _events = pod_rows(pod.namespace, pod.name)
    assert {r.name for r in rows if r.KIND == "Node"} == {pod.node_name}
    assert len(rows) < len(list(whole.all_objects())) / 4


def test_a_pending_pod_and_an_unknown_object_need_the_whole_baseline():
    store_settled(f.to_yaml([f.node("n1"), f.pod("p1", node_selector={"zone": "nowhere"})]))
    assert pod_rows("default", "p1") is None  # its page diagnoses every node
    assert pod_rows("default", "nope") is None
    assert claim_rows("default", "nope") is None
    assert pod_state("default", "nope") is None
    _same_as_the_baseline()


def test_a_claim_page_lists_the_pods_waiting_for_it():
    # one card: p1 takes the shared claim; p2 waits for it, w for its template claim w-x
    docs = [f.node("n1"), f.named_slice("n1", [f.device("gpu-0")]), f.resource_class("gpu"),
            f.claim("shared"), f.claim_template("own"),
            f.pod("p1", claims={"gpu": "shared"}),
            f.pod("p2", claims={"gpu": "shared"}, node_selector={"zone": "nowhere"}),
            f.pod("w", templates={"x": "own"}, node_selector={"zone": "nowhere"})]
    store_settled(f.to_yaml(docs))
    whole = cluster.baseline_state()
    assert claim_view(whole, "default", "shared").waiting_pods == [("p2", "/pods/default/p2/")]
    assert claim_view(whole, "default", "w-x").waiting_pods == [("w", "/pods/default/w/")]
    assert claim_rows("default", "w-x") is not None
    _same_as_the_baseline()
