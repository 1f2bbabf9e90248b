"""allocation.presenters.explain: the explain annotation in sentences."""

from __future__ import annotations

import json

from allocation.engine.scheduling import reasons
from allocation.presenters.explain import explain_pod, node_reason_text
from tests.allocation.presenters.docs import cluster_state

KEY = "draplanner.io/explain"


def test_explanation_of_a_pending_pod_node_by_node() -> None:
    pod = cluster_state().get("Pod", "default", "waiting")

    explanation = explain_pod(pod.meta.annotations)

    assert explanation.summary == "0/2 nodes are available: 2 cannot allocate all claims."
    card_node, gpu_node = explanation.nodes
    assert card_node.node_url == "/nodes/card-node/"
    assert card_node.sentence == "the pod's claims cannot all be allocated on this node"
    (request,) = card_node.requests
    assert request.claim_url == "/claims/default/huge-card/"
    assert request.sentence == "None of the node's 2 candidate(s) is free and matches."
    assert [(r.candidates, r.reason) for r in request.refused] == [
        (["card-0"], "allocated to claim default/card-a"),
        (["card-1"], 'request selector `quantities["memory"] >= "32Gi"` is false')]
    assert gpu_node.requests[0].sentence.startswith("Nothing to choose from: node publishes no")


def test_matching_candidates_that_do_not_fit_together() -> None:
    raw = json.dumps({"summary": "s", "omittedNodes": 3, "nodes": [{
        "node": "n", "reason": "cannot allocate all claims", "requests": [{
            "claim": "team/c", "request": "r", "driver": "d", "selectors": ["true"],
            "matching": ["a", "b"], "refused": []}]}]})

    explanation = explain_pod({KEY: raw})

    assert explanation.omitted_nodes == 3
    request = explanation.nodes[0].requests[0]
    assert request.claim_url == "/claims/team/c/"
    assert request.sentence == ("2 free candidate(s) match (a, b), but not together with the "
                                "pod's other requests.")


def test_no_annotation_and_unreadable_annotation() -> None:
    assert explain_pod({}) is None
    broken = explain_pod({KEY: "{not json"}, fallback="the condition's message")
    assert broken.readable is False
    assert broken.summary == "the condition's message"
    assert broken.raw == "{not json"


def test_reasons_in_plain_words_and_unknown_ones_as_they_are() -> None:
    assert node_reason_text("Insufficient cpu") == "not enough CPU is left on the node"
    assert node_reason_text("something new") == "something new"
    assert node_reason_text(None) == "no reason recorded"


def test_every_node_reason_of_the_scheduler_has_plain_words() -> None:
    node_reasons = [reasons.R_UNSCHEDULABLE, reasons.R_SELECTOR, reasons.R_CPU, reasons.R_MEMORY,
                    reasons.R_PODS, reasons.R_CLAIMS, reasons.R_ELSEWHERE, reasons.R_CLASS,
                    reasons.R_BUDGET, reasons.FITS_NOW]
    texts = [node_reason_text(reason) for reason in node_reasons]
    assert all(text != reason for text, reason in zip(texts, node_reasons, strict=True))
    assert len(set(texts)) == len(texts)
