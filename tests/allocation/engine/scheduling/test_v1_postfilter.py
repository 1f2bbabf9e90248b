"""kube-scheduler's DRA PostFilter for v1 pods (``scheduling/v1_postfilter.py``): a claim
unavailable where the pod was refused is deallocated when no other pod holds it."""

from __future__ import annotations

from datetime import timedelta

from allocation.engine.objects import stable_uid
from allocation.engine.simulation import simulate
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, device, load, slice_doc
from tests.allocation.engine.scheduling.v1_binding_docs import held_cluster
from tests.allocation.engine.scheduling.v1_outputs import items, pod_condition
from tests.factories import node, pod

NOT_AVAILABLE = "0/1 nodes are available: 1 resourceclaim not available on the node."


def _allocated_for_gone_node(reserved_for: list[str] = ()) -> dict:
    """Claim ``c``, allocated on node-9 (gone) and reserved for ``reserved_for``."""
    result = {"request": "r", "driver": "gpu.example.com", "pool": "node-9",
              "device": "gpu-0"}
    selector = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-9"]}]}]}
    return claim_doc(name="c", status={
        "allocation": {"devices": {"results": [result]}, "nodeSelector": selector},
        "reservedFor": [{"resource": "pods", "name": n, "uid": stable_uid("Pod", "default", n)}
                        for n in reserved_for]})


def _cluster(*extra: dict) -> list[dict]:
    return [node("node-1"), class_doc(), slice_doc([device("gpu-0")]), *extra]


def test_a_claim_allocated_for_a_gone_node_is_deallocated_and_allocated_again():
    docs = _cluster(_allocated_for_gone_node(), pod("p", claims={"gpu": "c"}))

    output = simulate(load(docs)).output()

    events = [(e["reason"], e["message"]) for e in output["items"] if e["kind"] == "Event"]
    assert events[0] == ("FailedScheduling", NOT_AVAILABLE)
    assert items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"
    allocation = items(output, "ResourceClaim")["c"]["status"]["allocation"]
    assert allocation["devices"]["results"][0]["pool"] == "node-1"


def test_a_claim_reserved_for_the_pod_alone_is_deallocated_too():
    docs = _cluster(_allocated_for_gone_node(["p"]), pod("p", claims={"gpu": "c"}))

    output = simulate(load(docs)).output()

    assert items(output, "Pod")["p"]["spec"]["nodeName"] == "node-1"


def test_a_claim_another_pod_holds_stays_allocated_and_the_pod_pending():
    holder = pod("holder", claims={"gpu": "c"}, node_name="node-1")  # running there
    docs = _cluster(_allocated_for_gone_node(["holder"]), holder,
                    pod("p", claims={"gpu": "c"}))

    output = simulate(load(docs)).output()

    assert pod_condition(output, "p") == ("Unschedulable", NOT_AVAILABLE)
    claim = items(output, "ResourceClaim")["c"]["status"]
    assert claim["allocation"]["devices"]["results"][0]["pool"] == "node-9"
    assert [r["name"] for r in claim["reservedFor"]] == ["holder"]


def test_a_claim_that_fits_is_never_deallocated():
    # the pod is refused for its cpu, not for the claim: nothing is unavailable
    result = {"request": "r", "driver": "gpu.example.com", "pool": "node-1",
              "device": "gpu-0"}
    held = claim_doc(name="c", status={"allocation": {"devices": {"results": [result]}}})
    docs = _cluster(held, pod("p", claims={"gpu": "c"}, cpu="100"))

    output = simulate(load(docs)).output()

    assert pod_condition(output, "p")[0] == "Unschedulable"
    assert items(output, "ResourceClaim")["c"]["status"]["allocation"]["devices"][
        "results"] == [result]


def test_a_passed_binding_deadline_of_a_claim_another_pod_holds_ends_the_advance():
    # the claim stays allocated (its holder runs), its wait timed out before the
    # simulation starts: no wakeup is due any more, so advancing the clock ends
    docs = held_cluster("2024-12-31T00:00:00Z")

    simulation = simulate(load(docs))
    simulation.advance(timedelta(minutes=30))

    assert simulation.next_wakeup() is None
    assert pod_condition(simulation.output(), "p") == ("Unschedulable", NOT_AVAILABLE)
